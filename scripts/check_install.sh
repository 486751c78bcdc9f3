#!/usr/bin/env bash
# Check that MemeGauge installs from its pyproject ranges (not the lock files) into a clean venv, and
# that the documented Python example runs there. Usage: bash scripts/check_install.sh [VENV_DIR]
#   1. `pip install .` (the core): `memegauge --help` works, and the embedded model's absence is one
#      message naming `pip install 'memegauge[embedded]'` (exit 2);
#   2. `pip install .[all,train,test]` (+ torch==2.13.0: this workplace's CPU wheel; an unpinned torch
#      would pull the CUDA build; `all` leaves `train` out for that reason): `import memegauge` and
#      docs/api.md's example, run by its test.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
say() { printf '[check-install] %s\n' "$*" >&2; }
if [ -n "${1:-}" ]; then
  VENV=$1
else
  # A throwaway venv holds ~3 GB once torch is in; it goes when the check ends, pass or fail, so
  # repeated checks do not fill the disk (a CI run once failed with ENOSPC here).
  work=$(mktemp -d); VENV=$work/venv
  trap 'rm -rf "$work"' EXIT
fi
need_kb=$((4 * 1024 * 1024))
free_kb=$(df -Pk "$(dirname "$VENV")" | awk 'NR==2 {print $4}')
if [ "$free_kb" -lt "$need_kb" ]; then
  say "only $((free_kb / 1024)) MiB free under $(dirname "$VENV"); a full install needs ~4 GiB. Free space (or pass a VENV_DIR on a larger disk) and run again."
  exit 1
fi
# pip's own exit status decides (a failed install must stop here, not surface later as a missing module).
pip_install() {
  local log; log=$(mktemp)
  if ! "$VENV/bin/pip" install --disable-pip-version-check -q "$@" >"$log" 2>&1; then
    grep -v "^WARNING: Location" "$log" >&2; rm -f "$log"
    say "pip install $* failed (above)"; exit 1
  fi
  grep -v "^WARNING: Location" "$log" >&2 || true; rm -f "$log"
}

rm -rf "$VENV"
"$PY" -m venv "$VENV"
start=$(date +%s)
pip_install .
say "core installed in $(( $(date +%s) - start )) s: $(du -sh "$VENV" | cut -f1)"
"$VENV/bin/memegauge" --help >/dev/null
set +e
demo_dir=$(mktemp -d)
out=$(cd "$demo_dir" && "$VENV/bin/memegauge" demo 2>&1); code=$?
rm -rf "$demo_dir"
set -e
if [ "$code" != 2 ] || ! grep -q "pip install 'memegauge\[embedded\]'" <<<"$out"; then
  say "the core's demo should stop with exit 2 naming the embedded extra; got exit $code:"; echo "$out" >&2; exit 1
fi
say "core: demo stops with one message naming the extra (exit 2)"

start=$(date +%s)
pip_install ".[all,train,test]" "torch==2.13.0"
say "all extras installed in $(( $(date +%s) - start )) s: $(du -sh "$VENV" | cut -f1)"
"$VENV/bin/python" -c "import memegauge; print('memegauge', memegauge.__version__)"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/test_api.py
say "ok"
