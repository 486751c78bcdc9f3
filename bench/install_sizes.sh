#!/usr/bin/env bash
# Install time and size of MemeGauge's core and of each extra, each in a fresh venv (removed after).
# Usage: bash bench/install_sizes.sh [EXTRA ...]   (default: core embedded erase build pandas train all)
# `train` installs torch first (the build pip resolves here; see README "Install"), as the README says.
# Prints one line per install: extra, seconds, venv size (du), and pip's exit status.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
extras=("$@"); [ ${#extras[@]} -gt 0 ] || extras=(core embedded erase build pandas train all)
printf '%-10s %8s %8s %s\n' extra seconds size pip_rc
for extra in "${extras[@]}"; do
  venv=$(mktemp -d /tmp/memegauge-install-XXXX)
  trap 'rm -rf "$venv"' EXIT
  "$PY" -m venv "$venv"
  spec=.; [ "$extra" = core ] || spec=".[$extra]"
  start=$(date +%s.%N)
  {
    if [ "$extra" = train ]; then "$venv/bin/pip" install -q --no-cache-dir torch; fi
    "$venv/bin/pip" install -q --no-cache-dir "$spec"
  } >"$venv.log" 2>&1
  rc=$?
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  size=$(du -sh "$venv" | cut -f1)
  printf '%-10s %8.0f %8s %s\n' "$extra" "$seconds" "$size" "$rc"
  [ $rc = 0 ] || tail -5 "$venv.log"
  rm -rf "$venv" "$venv.log"
done
