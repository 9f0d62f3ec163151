#!/usr/bin/env bash
# The README's demo model as a new user makes it: scripts/make-demo-model.sh OUT_DIR with no
# --tokenizer (GPT-2's files from the tokenizer references the test set-up fetched), then the
# folder opens as a model and tokenizes with GPT-2's vocabulary ("hello world" → 31373, 995).
#   demo_model.sh ATTNLAB SOURCE_DIR
set -euo pipefail
attnlab=$1
root=$2
# The demo model's script writes its weights with NumPy and PyTorch (python3-numpy,
# python3-torch); without them the test is skipped (ctest's SKIP_RETURN_CODE 77), not failed.
if ! /usr/bin/python3 -c "import numpy, torch" 2>/dev/null; then
    echo "demo_model: skipped: python3-numpy and python3-torch are not installed"
    exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bash "$root/scripts/make-demo-model.sh" "$out/demo" >/dev/null
for f in config.json model.safetensors vocab.json merges.txt; do
    [[ -f "$out/demo/$f" ]] || { echo "demo_model: $f missing from $out/demo" >&2; exit 1; }
done
ids=$("$attnlab" tokenize --model "$out/demo" --text "hello world" --format json)
[[ "$ids" == *31373* && "$ids" == *995* ]] || {
    echo "demo_model: 'hello world' did not give GPT-2's ids 31373, 995: $ids" >&2
    exit 1
}
"$attnlab" model --model "$out/demo" --text "hello world" --top-k 3 >/dev/null
