#!/usr/bin/env python3
"""Judges `make oai-test` (scripts/oai/test.sh) in radio time.

Reads what the sessions left in one directory: the glue's stats
(<session>-stats.jsonl: every 100 ms of radio time, OAI's radio clock next
to the wall clock and the MAC/RLC/tcran counters of the bearer), ping's
log (-D: wall-clock stamps), iperf3's JSON, and the wall-clock instants at
which the download started and the cure was deployed.

rfsimulator runs faster or slower than the wall clock, and by a different
ratio under load, so every duration is mapped onto the radio clock through
the stats lines (piecewise linear wall -> radio) before it is compared: a
ping RTT becomes radio(reply) - radio(request), a throughput is MAC bytes
pulled per second of radio time.

Run 1 (OAI as it is) is judged from the instant OAI's RLC buffer has
levelled off (`levelled_at`, in radio time) for half a phase of wall-clock
time; a buffer that has not levelled off within OAI_TEST_VANILLA_MAX is
judged on the half phase after that cap, and the report says so. Each
ping's RTT is also split into its uplink and downlink legs from
icmp_stamps.py's kernel stamps at the two TUN devices.

Pass: the cure's median ping RTT is at least 10x below OAI's own (run 1),
its MAC throughput within 10 % of it, and the live deploy (over E2 by
`tcran xapp`, or by the pipeline file) shows within a second of radio time
(a ping RTT within twice the cured median). Exit code 1 otherwise.
"""
import bisect
import json
import statistics
import sys
from pathlib import Path

# The passthrough and cured phases are judged on their second halves: CUBIC
# takes wall-clock seconds to fill OAI's RLC buffer, and the RLC buffer the
# passthrough phase filled drains after the deploy. Run 1's judged part is
# as long.
SETTLE_SHARE = 0.5

# OAI as it is is judged once its RLC buffer has stopped growing: CUBIC
# grows its window in wall-clock time while the cell runs at 0.1-0.4x real
# time, so after a fixed wall-clock wait the buffer is sometimes still
# filling (0.5-2.2 MB in 30-s phases), and the bufferbloat the cure is
# measured against would be the machine's speed, not OAI's. Levelled: the
# median RLC occupancy over the last LEVEL_WINDOW_NS of radio time is at
# most LEVEL_GROWTH above the median over the window before (so an RTT that
# follows the buffer drifts by less than that per window while judged), and
# the buffer held data at every sample of both windows: a standing queue,
# the cell the bottleneck. (Early on, the flow in slow start and OAI's
# downlink link adaptation still climbing from MCS 9, the buffer empties
# again and again; a low level then is not bufferbloat's.)
# The buffer stops growing when the flow's window reaches the receiver's
# window or the sender's buffer (Linux's tcp_rmem/tcp_wmem limits), well
# below OAI's 10 MB RLC limit. test.sh waits for it at most
# OAI_TEST_VANILLA_MAX wall-clock seconds.
LEVEL_WINDOW_NS = 1_000_000_000
LEVEL_GROWTH = 0.10


class Clock:
    """Wall-clock ns -> radio ns, from the glue's stats lines."""

    def __init__(self, lines):
        points = sorted((line["wall_ns"], line["radio_ns"]) for line in lines)
        self.wall = [w for w, _ in points]
        self.radio = [r for _, r in points]

    def radio_at(self, wall_ns):
        if len(self.wall) < 2:
            return float("nan")
        i = bisect.bisect_left(self.wall, wall_ns)
        i = min(max(i, 1), len(self.wall) - 1)
        w0, w1 = self.wall[i - 1], self.wall[i]
        r0, r1 = self.radio[i - 1], self.radio[i]
        return r0 + (r1 - r0) * (wall_ns - w0) / max(w1 - w0, 1)


def read_stats(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def read_pings(path):
    """(reply wall ns, rtt wall ms) for every answered echo."""
    pings = []
    for line in path.read_text().splitlines():
        if not line.startswith("[") or "time=" not in line:
            continue
        stamp = float(line[1 : line.index("]")])
        rtt = float(line.split("time=")[1].split()[0])
        pings.append((int(stamp * 1e9), rtt))
    return pings


def levelled_at(stats, start_ns):
    """Wall ns of the first stats line, after the download started at
    start_ns, at which OAI's RLC occupancy has levelled off, or None."""
    lines = [s for s in stats if s["wall_ns"] >= start_ns]
    if not lines:
        return None
    first = lines[0]["radio_ns"]
    for line in lines:
        now = line["radio_ns"]
        if now - first < 2 * LEVEL_WINDOW_NS:
            continue
        last = [s["rlc_bytes"] for s in lines if now - LEVEL_WINDOW_NS < s["radio_ns"] <= now]
        before = [s["rlc_bytes"] for s in lines
                  if now - 2 * LEVEL_WINDOW_NS < s["radio_ns"] <= now - LEVEL_WINDOW_NS]
        if not last or not before:
            continue
        standing = min(last) > 0 and min(before) > 0
        if standing and statistics.median(last) <= (1 + LEVEL_GROWTH) * statistics.median(before):
            return line["wall_ns"]
    return None


def read_legs(out, session):
    """(reply wall ns, uplink leg wall ns pair, downlink leg wall ns pair) per
    echo, from icmp_stamps.py's stamps at the UE's and the gNB's TUN device:
    the request from the UE's device to the gNB's, the reply back."""
    stamps = {}
    for side in ("ue", "gnb"):
        path = out / f"{session}-icmp-{side}.txt"
        if not path.exists():
            return []
        for line in path.read_text().splitlines():
            fields = line.split()
            if len(fields) == 4:
                # the last crossing of a (side, type, seq) wins: ping's seq
                # starts again at 1 in the download's ping after the check's
                stamps[(side, int(fields[2]), int(fields[3]))] = int(fields[0])
    legs = []
    for (side, kind, seq), t4 in stamps.items():
        if side != "ue" or kind != 0:
            continue
        t1, t2, t3 = stamps.get(("ue", 8, seq)), stamps.get(("gnb", 8, seq)), stamps.get(("gnb", 0, seq))
        if t1 is not None and t2 is not None and t3 is not None and t1 <= t2 <= t3 <= t4:
            legs.append((t4, (t1, t2), (t3, t4)))
    return legs


def phase(stats, pings, clock, start_ns, end_ns, legs=()):
    lines = [s for s in stats if start_ns <= s["wall_ns"] <= end_ns]
    if len(lines) < 2:
        return None
    radio_span = lines[-1]["radio_ns"] - lines[0]["radio_ns"]
    wall_span = lines[-1]["wall_ns"] - lines[0]["wall_ns"]
    pulled = sum(s["pulled_bytes"] for s in lines[1:])
    rtts = []
    for reply_ns, rtt_ms in pings:
        if start_ns <= reply_ns <= end_ns:
            sent_ns = reply_ns - rtt_ms * 1e6
            rtts.append((clock.radio_at(reply_ns) - clock.radio_at(sent_ns)) / 1e6)
    rlc = [s["rlc_bytes"] for s in lines]
    up, down = [], []
    for reply_ns, (t1, t2), (t3, t4) in legs:
        if start_ns <= reply_ns <= end_ns:
            up.append((clock.radio_at(t2) - clock.radio_at(t1)) / 1e6)
            down.append((clock.radio_at(t4) - clock.radio_at(t3)) / 1e6)
    return {
        "radio_s": radio_span / 1e9,
        "wall_s": wall_span / 1e9,
        "speed": radio_span / max(wall_span, 1),
        "mbit_radio": pulled * 8 / max(radio_span, 1) * 1e3,
        "rtt_ms_median": statistics.median(rtts) if rtts else float("nan"),
        "rtt_ms_p95": sorted(rtts)[int(0.95 * (len(rtts) - 1))] if rtts else float("nan"),
        "pings": len(rtts),
        "uplink_ms_median": statistics.median(up) if up else float("nan"),
        "downlink_ms_median": statistics.median(down) if down else float("nan"),
        "rlc_kB_median": statistics.median(rlc) / 1e3,
        "queued_kB_median": statistics.median(s["queued_bytes"] for s in lines) / 1e3,
        "dropped": lines[-1]["dropped_packets"] - lines[0]["dropped_packets"],
        "drops": lines[-1].get("drops", {}),
        "release_us_per_packet": sum(s["release_ns_sum"] for s in lines)
        / max(sum(s["release_packets"] for s in lines), 1)
        / 1e3,
        "release_us_max": max(s["release_ns_max"] for s in lines) / 1e3,
        "frames": (lines[0]["frame"], lines[-1]["frame"]),
    }


def iperf_mbit(path):
    try:
        end = json.loads(path.read_text())["end"]
        return end["sum_received"]["bits_per_second"] / 1e6
    except (ValueError, KeyError):
        return float("nan")


def main():
    if sys.argv[1] == "--levelled":
        # test.sh asks, during run 1: has the RLC buffer levelled off yet?
        path, start = Path(sys.argv[2]), int(sys.argv[3])
        levelled = levelled_at(read_stats(path), start) if path.exists() else None
        if levelled is not None:
            print(levelled)
        return 0
    out = Path(sys.argv[1])
    seconds = float(sys.argv[2])
    deploy_by = sys.argv[3] if len(sys.argv) > 3 else "file"
    vanilla_max = float(sys.argv[4]) if len(sys.argv) > 4 else 4 * seconds
    rows = {}
    for session, phases in (("vanilla", ("vanilla",)), ("tcran", ("passthrough", "cured"))):
        stats = read_stats(out / f"{session}-stats.jsonl")
        pings = read_pings(out / f"{session}-ping.log")
        clock = Clock(stats)
        legs = read_legs(out, session)
        start = int((out / f"{session}-start").read_text())
        total_ns = int((seconds * len(phases) + 2) * 1e9)
        settle = int(SETTLE_SHARE * seconds * 1e9)
        bounds = [start + settle, start + total_ns]
        if len(phases) == 1:
            levelled = levelled_at(stats, start)
            rows["vanilla_levelled"] = levelled is not None
            judged_from = levelled if levelled is not None else start + int(vanilla_max * 1e9)
            rows["vanilla_levelled_after_radio_s"] = (clock.radio_at(judged_from) - clock.radio_at(start)) / 1e9
            rows["vanilla_levelled_after_wall_s"] = (judged_from - start) / 1e9
            bounds = [judged_from, judged_from + int((1 - SETTLE_SHARE) * seconds * 1e9)]
        if len(phases) == 2:
            deploy_file = out / f"{session}-deploy"
            if not deploy_file.exists() or not deploy_file.read_text().strip():
                print(f"oai-test: FAIL: the cure was never deployed ({deploy_by}; see {out})")
                return 1
            deploy = int(deploy_file.read_text())
            bounds = [bounds[0], deploy, deploy + settle, bounds[1]]
            rows["deploy_to_cure_radio_ms"] = time_to_cure(pings, clock, deploy, settle)
        for i, name in enumerate(phases):
            rows[name] = phase(stats, pings, clock, bounds[2 * i], bounds[2 * i + 1], legs)
        rows[f"{session}_iperf_mbit_wall"] = iperf_mbit(out / f"{session}-iperf.json")
        rows[f"{session}_tun_dropped"] = {side: tun_dropped(out / f"{session}-tun-{side}.json")
                                          for side in ("gnb", "ue")}
        rows[f"{session}_load"] = [load_average(out / f"{session}-load-{when}") for when in ("start", "end")]

    keys = ["radio_s", "wall_s", "speed", "mbit_radio", "rtt_ms_median", "rtt_ms_p95", "pings",
            "uplink_ms_median", "downlink_ms_median",
            "rlc_kB_median", "queued_kB_median", "dropped", "release_us_per_packet", "release_us_max"]
    print(f"{'':24}" + "".join(f"{p:>14}" for p in ("vanilla", "passthrough", "cured")))
    for k in keys:
        cells = []
        for p in ("vanilla", "passthrough", "cured"):
            v = rows[p][k] if rows.get(p) else float("nan")
            cells.append(f"{v:>14.2f}" if isinstance(v, float) else f"{v:>14}")
        print(f"{k:24}" + "".join(cells))
    print(f"cured drops by reason: {rows['cured']['drops'] if rows.get('cured') else {}}")
    print(f"iperf3 (wall clock): vanilla {rows['vanilla_iperf_mbit_wall']:.1f} Mbit/s, tcran session "
          f"{rows['tcran_iperf_mbit_wall']:.1f} Mbit/s")
    print(f"run 1's RLC buffer {'levelled off' if rows['vanilla_levelled'] else 'had not levelled off (cap)'} "
          f"{rows['vanilla_levelled_after_radio_s']:.1f} s of radio time "
          f"({rows['vanilla_levelled_after_wall_s']:.0f} s wall) after the download started; judged from there")
    print(f"dropped by the TUN devices (gNB, UE; rx+tx): vanilla {rows['vanilla_tun_dropped']}, "
          f"tcran session {rows['tcran_tun_dropped']}")
    print(f"load average (1 min) at start/end: vanilla {rows['vanilla_load']}, tcran session {rows['tcran_load']}")
    how = "the xApp's deploy over E2 was applied" if deploy_by == "e2" else "the pipeline file changed"
    print(f"live deploy: ping RTT within 2x of the cured median {rows['deploy_to_cure_radio_ms']:.0f} ms "
          f"(radio) after {how}")
    (out / "summary.json").write_text(json.dumps(rows, indent=1, default=str))

    vanilla, cured = rows.get("vanilla"), rows.get("cured")
    if not vanilla or not cured:
        print("oai-test: FAIL: a phase has no stats (see the logs)")
        return 1
    rtt_ratio = vanilla["rtt_ms_median"] / cured["rtt_ms_median"]
    tput_ratio = cured["mbit_radio"] / vanilla["mbit_radio"]
    shows = rows["deploy_to_cure_radio_ms"] <= 1000
    ok = rtt_ratio >= 10 and tput_ratio >= 0.9 and shows
    print(f"oai-test: {'PASS' if ok else 'FAIL'}: ping RTT {rtt_ratio:.2f}x lower (>= 10x), "
          f"throughput {tput_ratio * 100:.0f} % of vanilla (>= 90 %), the deploy shows after "
          f"{rows['deploy_to_cure_radio_ms']:.0f} ms (<= 1000 ms), in radio time")
    passthrough = rows.get("passthrough")
    if passthrough:
        print(f"(against the passthrough phase of the same session: ping RTT "
              f"{passthrough['rtt_ms_median'] / cured['rtt_ms_median']:.1f}x lower)")
    return 0 if ok else 1


def tun_dropped(path):
    """Packets a TUN device dropped (received + sent), from `ip -j -s link`."""
    try:
        stats = json.loads(path.read_text())[0]["stats64"]
        return stats["rx"]["dropped"] + stats["tx"]["dropped"]
    except (OSError, ValueError, IndexError, KeyError):
        return None


def load_average(path):
    """The machine's 1-minute load average test.sh wrote, or NaN."""
    try:
        return float(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def time_to_cure(pings, clock, deploy_ns, settle_ns):
    """Radio ms from the deploy to the first ping reply no more than twice the
    cured phase's median (read from the replies of its second half)."""
    later = [rtt for t, rtt in pings if t > deploy_ns + settle_ns]
    if not later:
        return float("nan")
    limit = 2 * statistics.median(later)
    for t, rtt in pings:
        if t > deploy_ns and rtt <= limit:
            return (clock.radio_at(t) - clock.radio_at(deploy_ns)) / 1e6
    return float("nan")


if __name__ == "__main__":
    sys.exit(main())
