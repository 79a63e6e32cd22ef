#!/usr/bin/env bash
# Cross-validation of the simulator against real Linux TCP
# (docs/emulator.md): for each cell and variant, the simulator's CUBIC
# model with a 5 Hz ping, and the kernel's CUBIC (iperf3 -C cubic) with a
# real 5 Hz ping through `tcran emulate`, over the same seconds; prints
# the download's throughput and the ping's mean RTT side by side. With
# `uplink`, the same for an upload (iperf3 without -R) and a ping from the
# UE through its uplink DRB (scenarios/uplink-backup.toml's variants).
#
#   sudo scripts/cross-validate.sh [SECONDS] [downlink|uplink|both]
#                                  (default 30 s per run, downlink)
#
# Needs root (the emulator) and iperf3/ping (scripts/ensure-emu-tools.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
which=${2:-downlink}
case $which in downlink | uplink | both) ;; *)
	echo "cross-validate.sh: direction $which: expected downlink, uplink or both" >&2
	exit 2
	;;
esac
warm=5
cargo build --release -q -p tcran-cli
bin=${CARGO_TARGET_DIR:-target}/release/tcran
work=$(mktemp -d /tmp/tcran-xv.XXXXXX)
# The simulated CUBIC is paced when the kernel's is: a listener whose
# default congestion control is BBR (net.ipv4.tcp_congestion_control =
# bbr, as on the development machines) hands iperf3 a socket on which BBR
# already asked for internal pacing (bbr_init sets sk_pacing_status =
# SK_PACING_NEEDED); switching it to cubic (-C cubic) does not clear that,
# so the kernel paces CUBIC at 2x/1.2x cwnd/SRTT (`ss -tmi` shows
# pacing_rate and unsent data leaving at it). Under a cubic default it is
# not paced (the namespaces cannot change the default unless cubic is in
# tcp_allowed_congestion_control).
pace=false
if [ "$(sysctl -n net.ipv4.tcp_congestion_control)" = bbr ]; then pace=true; fi
down_flows='flows=[{ name = "bulk", ue = 1, kind = "tcp", tcp = { cc = "cubic", pacing = '"$pace"' } }, { name = "ping", ue = 1, kind = "ping", interval = "200ms" }]'
# The upload's sender is the UE's own socket: iperf3 -C cubic sets the
# congestion control before connect, so BBR's init never runs on it and
# nothing asks for internal pacing; with the default qdisc pfifo_fast (not
# fq) on the UE's device, CUBIC goes unpaced.
up_flows='flows=[{ name = "bulk", ue = 1, direction = "uplink", kind = "tcp", tcp = { cc = "cubic" } }, { name = "ping", ue = 1, direction = "uplink", kind = "ping", interval = "200ms" }]'

row() { # scenario variant direction
	local scn=$1 var=$2 dir=$3 tag flows=$down_flows reverse=-R
	tag=$(basename "$scn" .toml)-${var//+/_}
	if [ "$dir" = uplink ]; then
		flows=$up_flows reverse=
		tag=$tag-up
	fi
	"$bin" run "$scn" --out "$work/sim-$tag" --json \
		--set "$flows" --set "duration=${secs}s" --set "warmup=${warm}s" \
		--set "variants=[$(var_of "$scn" "$var")]" >/dev/null
	# The emulation lasts exactly as long as the simulation, so both
	# measure the same seconds; the programs would run longer and are
	# ended with it (exit code 128 + SIGTERM).
	local rc=0
	"$bin" emulate "$scn" --variant "$var" --out "$work/emu-$tag" \
		--warmup "${warm}s" --duration "${secs}s" --server "iperf3 -s -1" -- \
		sh -c "sleep 0.5; ping -n -q -i 0.2 198.51.100.1 >/dev/null & iperf3 -c 198.51.100.1 $reverse -C cubic -t $((secs + 10)) >/dev/null; wait" >/dev/null || rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ]; then
		echo "tcran emulate failed ($rc) for $tag" >&2
		exit "$rc"
	fi
	python3 - "$work/sim-$tag" "$work/emu-$tag" "$tag" "$warm" "$secs" "$dir" <<'EOF'
import csv, json, sys
from pathlib import Path
sim_dir, emu_dir, tag = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
warm, secs, direction = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
sim, emu = (json.load(open(d / 'summary.json'))['variants'][0] for d in (sim_dir, emu_dir))
# A second in which no flow delivered anything (the bulk transfer and the
# 5 Hz ping both silent, either way) is a stall of the host or of the emulator, not
# something the cell does here: the row is flagged, not printed as if
# nothing happened.
for side, d in (('simulator', sim_dir), ('emulator', emu_dir)):
    delivered = {}
    # One variant ran: its folder is the one with a flows.csv.
    with open(next(d.glob('*/flows.csv'))) as f:
        for r in csv.DictReader(f):
            s = int(float(r['t_s']) + 1e-9)
            delivered[s] = delivered.get(s, 0.0) + float(r['goodput_mbps'] or 0)
    silent = [s for s in range(warm, secs) if delivered.get(s, 0.0) == 0.0]
    if silent:
        why = ''
        if side == 'emulator':
            # What the emulator saw in its quiet seconds (emulation.json):
            # the machine or the relay did not run, the cell held the packets, or the
            # programs sent nothing.
            quiet = json.load(open(d / 'emulation.json'))['relay']['quiet']['first']
            causes = {q['second']: q['cause'] for q in quiet}
            why = ' (' + ', '.join(f"{s}: {causes.get(s, 'moved only one way')}" for s in silent) + ')'
        print(f"warning: {tag}: the {side} delivered no packet in second(s) "
              f"{', '.join(map(str, silent))} of {secs}{why}: a stall, this row does not "
              f"measure the model ({d})", file=sys.stderr)
# The transfer's data and the ping's requests go `direction` (with uplink
# DRBs the emulator also reports the connections' other way: ACKs, echo
# replies).
def pick(v, kind):
    fs = [f for f in v['flows'] if f['kind'] == kind and f.get('direction', 'downlink') == direction]
    return max(fs, key=lambda f: f['delivered_packets'])
st, et = pick(sim, 'tcp')['throughput_mbps'], pick(emu, 'tcp')['throughput_mbps']
sr, er = pick(sim, 'ping')['rtt_ms']['mean'], pick(emu, 'ping')['rtt_ms']['mean']
print(f"| {tag} | {st:.2f} | {et:.2f} | {100 * (et - st) / st:+.1f} % "
      f"| {sr:.1f} | {er:.1f} | {er - sr:+.1f} ms ({100 * (er - sr) / sr:+.1f} %) |")
EOF
}

# The variant's table as an inline TOML value, for --set variants=[...].
var_of() {
	python3 - "$1" "$2" <<'EOF'
import sys, tomllib, json
cfg = tomllib.load(open(sys.argv[1], 'rb'))
v = next(v for v in cfg['variants'] if v['name'] == sys.argv[2])
def toml(x):
    if isinstance(x, dict):
        return '{ ' + ', '.join(f'{k} = {toml(val)}' for k, val in x.items()) + ' }'
    if isinstance(x, list):
        return '[' + ', '.join(toml(i) for i in x) + ']'
    if isinstance(x, bool):
        return 'true' if x else 'false'
    if isinstance(x, str):
        return json.dumps(x)
    return str(x)
print(toml(v))
EOF
}

echo "| cell, variant | sim Mbit/s | emu Mbit/s | diff | sim ping RTT ms | emu ping RTT ms | diff |"
echo "|---|---|---|---|---|---|---|"
if [ "$which" != uplink ]; then
	for var in vanilla fq_codel+5g-bdp; do
		row scenarios/emulate-25prb.toml "$var" downlink
	done
	for var in vanilla fq_codel+5g-bdp; do
		row scenarios/demo.toml "$var" downlink
	done
fi
if [ "$which" != downlink ]; then
	for var in vanilla priority+static fq_codel+static; do
		row scenarios/uplink-backup.toml "$var" uplink
	done
fi
echo "(outputs in $work)"
