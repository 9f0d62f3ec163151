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
refs="$root/build/release/tests/tokenizer-refs/models/gpt2-hf"
if [[ " $* " != *" --tokenizer "* && ! -f "$refs/vocab.json" && -d "$root/build/release" ]]; then
    ctest --test-dir "$root/build/release" -R '^tokenizer_refs$' >/dev/null
fi
exec /usr/bin/python3 "$root/tests/reference/make_demo_model.py" "$@"
