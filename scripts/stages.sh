#!/usr/bin/env bash
# Runs make targets one after another (the stages of `make test`), timing
# each, and prints a table of the stage times at the end, also when a
# stage fails. Stops at the first failing stage and exits with its exit code.
#
# Usage: scripts/stages.sh STAGE...   (MAKE names the make to call; the
# Makefile passes its own, so -j and the jobserver carry over)
set -uo pipefail

make_cmd="${MAKE:-make}"
stages=("$@")
declare -a secs=() results=()
t_all=$EPOCHREALTIME

# Seconds since $1 (an $EPOCHREALTIME value), one decimal.
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

summary() {
  local total
  total=$(since "$t_all")
  echo
  echo "make test: time per stage"
  printf '  %-16s %10s  %s\n' stage seconds result
  for i in "${!stages[@]}"; do
    printf '  %-16s %10s  %s\n' "${stages[$i]}" "${secs[$i]:--}" "${results[$i]:-not run}"
  done
  printf '  %-16s %10s\n' total "$total"
}

for i in "${!stages[@]}"; do
  s="${stages[$i]}"
  echo "==> stage $s"
  t0=$EPOCHREALTIME
  $make_cmd --no-print-directory "$s"
  code=$?
  secs[i]=$(since "$t0")
  if [[ $code -ne 0 ]]; then
    results[i]="FAILED (exit $code)"
    summary
    exit "$code"
  fi
  results[i]=ok
done
summary
