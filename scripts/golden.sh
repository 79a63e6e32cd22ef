#!/usr/bin/env bash
# Golden outputs of the simulator: every summary JSON and CSV time series of
# `tcran demo`, `tcran run` on every file of scenarios/ and `tcran
# reproduce`, reduced to one checksum per file (wall-clock fields removed).
#
#   scripts/golden.sh record   writes the checksums to $target/golden/expected.txt
#   scripts/golden.sh check    recomputes them and diffs against that file
#   scripts/golden.sh show     prints the current checksums
#
# A refactor of the simulator or the RAN node must leave `check` silent; a
# change of behaviour says in its commit message which outputs move and why.
# $target is Cargo's target directory: $CARGO_TARGET_DIR, or target/;
# TCRAN=path uses that binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-check}
target=${CARGO_TARGET_DIR:-target}
# TCRAN names a binary already built (e.g. by `cargo build --workspace
# --all-targets`, whose feature set differs from `-p tcran-cli`'s, so
# that building here would rebuild half the workspace).
bin=${TCRAN:-$target/release/tcran}
if [ -z "${TCRAN:-}" ]; then
	cargo build --release -q -p tcran-cli
fi
work=$target/golden/run
rm -rf "$work"
mkdir -p "$work"
"$bin" demo --out "$work/demo" --json >/dev/null
for f in scenarios/*.toml; do
	"$bin" run "$f" --out "$work/$(basename "$f" .toml)" --json >/dev/null
done
"$bin" reproduce --out "$work/reproduce" >/dev/null
# wall_s is the one non-deterministic value of a summary.
sums=$(cd "$work" && find . -name '*.json' -o -name '*.csv' | LC_ALL=C sort | while read -r f; do
	if [[ $f == *.json ]]; then
		sed -E 's/"wall_s": ?[0-9.e+-]+/"wall_s":0/g' "$f" | sha256sum | sed "s|-|$f|"
	else
		sha256sum "$f"
	fi
done)
case $mode in
record)
	printf '%s\n' "$sums" >"$target/golden/expected.txt"
	echo "golden: recorded $(wc -l <"$target/golden/expected.txt") files in $target/golden/expected.txt"
	;;
check)
	if diff <(cat "$target/golden/expected.txt") <(printf '%s\n' "$sums"); then
		echo "golden: $(wc -l <"$target/golden/expected.txt") files identical"
	else
		echo "golden: outputs differ (above: < expected, > now); the files are in $work" >&2
		exit 1
	fi
	;;
show) printf '%s\n' "$sums" ;;
*)
	echo "usage: $0 record|check|show" >&2
	exit 2
	;;
esac
