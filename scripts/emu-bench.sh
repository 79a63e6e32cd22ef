#!/usr/bin/env bash
# The emulator's own figures (docs/performance.md): relay throughput on a
# cell that is never the bottleneck (iperf3 UDP flood and TCP), and, under
# a light load on 0.5-ms slots, how late the real-time loop wakes for its
# deadlines and how much latency it adds beyond the modelled delays, and
# its CPU per packet. Needs root; run it on an otherwise idle machine.
#
#   sudo scripts/emu-bench.sh [SECONDS]     (default 10 s per run)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
./scripts/ensure-emu-tools.sh
cargo build --release -q -p tcran-cli
bin=target/release/tcran
scn=scenarios/emulate-unconstrained.toml
work=$(mktemp -d /tmp/tcran-emu-bench.XXXXXX)

report() { # label dir
	python3 - "$1" "$2" <<'PY'
import json, sys
label, d = sys.argv[1], sys.argv[2]
e = json.load(open(f"{d}/emulation.json"))
s = json.load(open(f"{d}/summary.json"))["variants"][0]
r = e["relay"]
thr = sum(f["throughput_mbps"] for f in s["flows"])
print(f"| {label} | {thr:.0f} | {r['downlink_in'] + r['uplink_in']} | "
      f"{r['lateness_us']['p50']:.0f} / {r['lateness_us']['p99']:.0f} / {r['lateness_us']['max']:.0f} | "
      f"{r['added_latency_us']['p50']:.0f} / {r['added_latency_us']['p99']:.0f} / {r['added_latency_us']['max']:.0f} | "
      f"{e['cpu_us_per_packet']:.2f} | {r['write_dropped'] + r['write_errors']} |")
PY
}

echo "| load | delivered Mbit/s | packets relayed | wake-up lateness p50 / p99 / max (us) | added latency p50 / p99 / max (us) | CPU us per packet | lost at the devices |"
echo "|---|---|---|---|---|---|---|"
# Throughput: the cell lifted to FR2, 400 MHz at 120 kHz (264 PRB, about
# 8 Gbit/s), so the relay, not the model, is the bottleneck.
fr2=(--set cell.frequency_range=fr2 --set cell.numerology=3 --set cell.bandwidth_mhz=400)
# Each UE command waits 0.5 s for the server to listen.
"$bin" emulate "$scn" "${fr2[@]}" --out "$work/udp" --server "iperf3 -s -1" -- \
	sh -c "sleep 0.5; iperf3 -c 198.51.100.1 -R -u -b 3G -l 1472 -t $secs 2>/dev/null" >/dev/null
report "UDP flood, 1500-byte packets (iperf3 -u -b 3G -l 1472)" "$work/udp"
"$bin" emulate "$scn" "${fr2[@]}" --out "$work/tcp" --server "iperf3 -s -1" -- \
	sh -c "sleep 0.5; iperf3 -c 198.51.100.1 -R -t $secs" >/dev/null
report "TCP (iperf3, the kernel's default BBR)" "$work/tcp"
# Timing: the 0.5-ms slots of the scenario's own FR1 cell.
light() { # dir [emulate options]
	local dir=$1
	shift
	"$bin" emulate "$scn" --out "$dir" --server "iperf3 -s -1" "$@" -- \
		sh -c "sleep 0.5; ping -n -q -i 0.01 -c $((secs * 100)) 198.51.100.1 >/dev/null & iperf3 -c 198.51.100.1 -R -u -b 10M -t $secs >/dev/null; wait" >/dev/null
}
light "$work/light"
report "light: 10 Mbit/s UDP + 100 Hz ping" "$work/light"
light "$work/spin" --spin 50us
report "light, --spin 50us" "$work/spin"
echo "(outputs in $work)"
