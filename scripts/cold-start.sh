#!/usr/bin/env bash
# Runs the README's test command (`npm ci && npm test`) in its steps and times each one, to
# check and cost a cold start: see docs/cold-start.md. Run it from a clean clone with HOME
# pointed at an empty folder. Exits with the first failing step's status.
set -uo pipefail
cd "$(dirname "$0")/.."
steps=()
step() {
  local name=$1; shift
  local t0=$SECONDS
  echo "cold-start: ${name}: $*" >&2
  "$@"
  local rc=$?
  steps+=("$(printf '%-32s %4d min %02d s  (exit %d)' "$name" $(((SECONDS - t0) / 60)) $(((SECONDS - t0) % 60)) "$rc")")
  if [ "$rc" -ne 0 ]; then summary; exit "$rc"; fi
}
summary() {
  echo
  echo "cold-start: HOME=$HOME, $(nproc) cores, node $(node --version)"
  printf '%s\n' "${steps[@]}"
}
step 'npm ci' npm ci --no-audit --no-fund
step 'Debian packages and PostgreSQL' node scripts/setup.mjs --packages-only
# Each builder's standard output must be its JSON alone, also while it builds: setup parses it.
json_only() { node scripts/"$1" --json | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => { try { JSON.parse(s); } catch (e) { console.error(`cold-start: '"$1"' printed more than its JSON: ${e.message}`); process.exit(1); } });'; }
step 'peers' json_only peers.mjs
step 'sink servers' json_only sinks.mjs
step 'npm test' npm test
summary
