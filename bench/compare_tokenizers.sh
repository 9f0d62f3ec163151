#!/usr/bin/env bash
# Encode speed of core/text's tokenizers beside their JavaScript references on 1 MB of English
# (the first 60 lines of tests/reference/tokenizers/corpus.txt, repeated), GPT-2, Llama 3 and
# Qwen3. Needs the release build with benchmarks (attn_bench_tokenizers) and the references that
# `ctest -R tokenizer_refs` installs into build/release/tests/tokenizer-refs.
#   bench/compare_tokenizers.sh [REPEAT]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build/release"
REFS="$BUILD/tests/tokenizer-refs"
REPEAT="${1:-5}"
TEXT="$(mktemp --suffix=.txt)"
trap 'rm -f "$TEXT"' EXIT
head -n 60 "$ROOT/tests/reference/tokenizers/corpus.txt" >"$TEXT.unit"
while (($(stat -c %s "$TEXT") < 1000000)); do
    cat "$TEXT.unit" >>"$TEXT"
done
rm -f "$TEXT.unit"
for model in gpt2-openai llama3 qwen3; do
    "$BUILD/bench/attn_bench_tokenizers" "$REFS/models/$model" "$TEXT" --repeat "$REPEAT"
done
node "$ROOT/bench/bench_tokenizers.mjs" "$REFS" "$TEXT" "$REPEAT"
