#!/usr/bin/env bash
# Fuzz smoke test: builds every cargo-fuzz target and runs each for a bounded
# time (default 15 s), failing on the first crash, timeout or OOM.
#
# Works on stable Rust: cargo-fuzz passes nightly-only rustc flags
# (-Zsanitizer, sanitizer-coverage passes), which RUSTC_BOOTSTRAP=1 unlocks on
# a stable toolchain (harmless on nightly). cargo-fuzz is installed from
# crates.io if missing.
#
# Environment:
#   FUZZ_SECONDS    seconds per target (default 15)
#   E2_FUZZ_SECONDS seconds per e2_* and xapp_* target (default 5)
#   FUZZ_TARGETS    space-separated targets (default: all in fuzz_targets/)
#   FUZZ_SANITIZER  none | address (default none: tcran has no `unsafe`, and
#                   without AddressSanitizer the ten targets build in 2.7
#                   instead of 5 min and run about twice as many inputs)
# Longer campaigns: see fuzz/README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

seconds="${FUZZ_SECONDS:-15}"
sanitizer="${FUZZ_SANITIZER:-none}"
if [[ -n "${FUZZ_TARGETS:-}" ]]; then
  read -r -a targets <<<"$FUZZ_TARGETS"
else
  targets=()
  for f in fuzz_targets/*.rs; do
    targets+=("$(basename "$f" .rs)")
  done
fi

start=$(date +%s)
log() { echo "fuzz-smoke [$(($(date +%s) - start))s]: $*"; }

if ! cargo fuzz --version >/dev/null 2>&1; then
  log "installing cargo-fuzz (cargo install cargo-fuzz --locked)"
  cargo install cargo-fuzz --locked
fi

export RUSTC_BOOTSTRAP=1
# -O: optimised; -a: keep debug assertions and overflow checks, so an
# arithmetic overflow is a crash too.
flags=(-O -a -s "$sanitizer" --codegen-units 16)

log "building ${targets[*]} (sanitizer: $sanitizer)"
cargo fuzz build "${flags[@]}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for t in "${targets[@]}"; do
  corpus="$work/$t"
  mkdir -p "$corpus"
  # The E2 decoders are cheap and many: a few seconds each is enough for
  # a smoke run (longer campaigns: README.md).
  t_seconds="$seconds"
  if [[ "$t" == e2_* || "$t" == xapp_* ]]; then
    t_seconds="${E2_FUZZ_SECONDS:-5}"
  fi
  args=(
    "-max_total_time=$t_seconds"
    "-timeout=10"
    "-rss_limit_mb=2048"
    "-max_len=4096"
    "-print_final_stats=1"
  )
  if [[ -f "dicts/$t.dict" ]]; then
    args+=("-dict=dicts/$t.dict")
  fi
  seeds=()
  if [[ -d "seeds/$t" ]]; then
    seeds+=("seeds/$t")
  fi
  if [[ "$t" == scenario_config ]]; then
    # Every shipped scenario is a seed too.
    seeds+=("../scenarios" "../scenarios/reproduction")
  fi
  log "running $t for ${t_seconds}s"
  # New inputs go to the temporary corpus; the committed seeds are read only.
  if ! cargo fuzz run "${flags[@]}" "$t" "$corpus" "${seeds[@]}" -- "${args[@]}" \
    >"$work/$t.log" 2>&1; then
    tail -n 60 "$work/$t.log"
    log "FAILED: $t (crash input saved under fuzz/artifacts/$t/;" \
      "reproduce: RUSTC_BOOTSTRAP=1 cargo fuzz run $t <artifact>)"
    exit 1
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE" "$work/$t.log" | sed "s/^/  $t: /" || true
  log "$t ok ($(find "$corpus" -type f | wc -l) new corpus inputs)"
done
log "all ${#targets[@]} targets ok"
