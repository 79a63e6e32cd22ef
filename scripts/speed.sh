#!/usr/bin/env bash
# Speed of the simulator on the reference scenario (scenarios/reference.toml,
# docs/performance.md "Simulator speed"), in the engine alone and through
# `tcran run`, runs of the two alternated so both see the same load:
#
#   scripts/speed.sh [ROUNDS] [PROFILE]   (defaults: 5 rounds, release)
#
# Each round runs the engine benchmark (crates/tcran-sim/examples/speed.rs,
# itself the median of 5 runs) and `tcran run` once. For `tcran run` it
# reports the time the summary gives (`wall_s`: building and simulating,
# with the series streamed to their CSV files, as the table's first line
# says "simulated in ...") and the whole command (that plus writing the
# report, its figures as SVG and PDF, and the summary). When the ns-3
# venv of scripts/ns3/setup.sh (`make ns3`) exists, every round also runs
# the same scenario in ns-3 LENA (scripts/ns3/speed.py, ns3-spec C), so the
# three see the same load, and the speed-ups over ns-3 are printed. Prints
# the median of the rounds and the machine's load average, which says how
# much the figures are worth on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
profile=${2:-release}
target=${CARGO_TARGET_DIR:-target}
cargo build --profile "$profile" -q -p tcran-sim --example speed -p tcran-cli --bin tcran
engine=$target/$profile/examples/speed
tcran=$target/$profile/tcran
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
sim_s=60
ns3_python=${NS3_VENV:-$HOME/.cache/tcran-ns3}/bin/python
[[ -x $ns3_python ]] || ns3_python=
declare -a e_wall=() c_wall=() c_total=() n_run=() n_cpu=() n_total=()
for ((i = 0; i < rounds; i++)); do
	if [[ -n $ns3_python ]]; then
		# `wall_s.run` is Simulator::Run alone; the whole process adds
		# importing the bindings (cppyy compiles them) and the setup.
		t0=$EPOCHREALTIME
		# Its stderr (cppyy's start-up notes, docs/simulator.md) is shown
		# only if it fails.
		"$ns3_python" scripts/ns3/speed.py "$sim_s" >"$out/ns3.json" 2>"$out/ns3.err" ||
			{ cat "$out/ns3.err" >&2; exit 1; }
		n_total+=("$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.4f", b - a }')")
		n_run+=("$(sed -nE 's/.*"run": ?([0-9.e+-]+).*/\1/p' "$out/ns3.json")")
		n_cpu+=("$(sed -nE 's/.*"run_cpu_s": ?([0-9.e+-]+).*/\1/p' "$out/ns3.json")")
	fi
	# "... median wall 0.073 s, 822x real time"
	e_wall+=("$("$engine" | sed -E 's/.*median wall ([0-9.]+) s.*/\1/')")
	t0=$EPOCHREALTIME
	"$tcran" run scenarios/reference.toml --out "$out/run" --json >"$out/summary.json"
	c_total+=("$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.4f", b - a }')")
	c_wall+=("$(sed -nE 's/.*"wall_s": ?([0-9.e+-]+).*/\1/p' "$out/summary.json" | head -1)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
report() {
	local m
	m=$(median "${@:2}")
	awk -v what="$1" -v m="$m" -v s="$sim_s" -v all="${*:2}" \
		'BEGIN { printf "%-50s median %.3f s, %5.0fx real time   (runs: %s)\n", what, m, s / m, all }'
}
echo "reference scenario, $sim_s s simulated, $profile build, $rounds rounds"
report "engine (examples/speed, median of 5 each)" "${e_wall[@]}"
report "tcran run: simulation (summary wall_s)" "${c_wall[@]}"
report "tcran run: whole command (with the report)" "${c_total[@]}"
if [[ -n $ns3_python ]]; then
	report "ns-3 LENA: Simulator::Run (scripts/ns3/speed.py)" "${n_run[@]}"
	report "ns-3 LENA: Simulator::Run, its CPU time" "${n_cpu[@]}"
	report "ns-3 LENA: whole process (import, setup, run)" "${n_total[@]}"
	awk -v n="$(median "${n_run[@]}")" -v e="$(median "${e_wall[@]}")" \
		-v c="$(median "${c_wall[@]}")" -v nt="$(median "${n_total[@]}")" \
		-v ct="$(median "${c_total[@]}")" 'BEGIN {
		printf "speed-up over ns-3 LENA: engine %.0fx, tcran run simulation %.0fx, whole commands %.0fx\n",
			n / e, n / c, nt / ct }'
else
	echo "ns-3 LENA: not run (no venv; make ns3 makes it)"
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
