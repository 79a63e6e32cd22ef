"""scripts/ns3/compare.py on hand-made tcran outputs and ns-3 lines: the
series follow simple rules (stated where they are made), so every expected
cell is worked out by hand from those rules, not taken from the script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "ns3" / "compare.py"


def compare(*args: Path | str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, check=False
    )


def write(path: Path, content) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def tcran_handover_run(out: Path, handovers=True) -> Path:
    variant = {"name": "default", "flows": [{"name": "bulk", "kind": "tcp", "throughput_mbps": 1.0}]}
    if handovers:
        variant["handovers"] = [
            {"ue": 1, "t_s": 17.5, "source_cell": 1, "target_cell": 2, "interruption_ms": 30.0,
             "forwarded_packets": 120, "dropped_packets": 0}
        ]
    # Goodput per 100 ms bin: 0 before 1 s, 50 until the handover at 17.5 s,
    # 20 for 1 s, then 60 until 40 s.
    rows = ["flow,kind,t_s,goodput_mbps,delay_ms,cwnd_bytes,srtt_ms"]
    for i in range(400):
        t = round(i * 0.1, 1)
        g = 0 if t < 1 else 50 if t < 17.5 else 20 if t < 18.5 else 60
        rows.append(f"bulk,tcp,{t},{g},20,1000,30")
    write(out / "default" / "flows.csv", "\n".join(rows) + "\n")
    return write(out / "summary.json", {"variants": [variant]})


NS3_A = {
    "case": "A",
    "sim_s": 40.0,
    "bin_s": 1.0,
    # 0 in the first second, 30 Mbit/s after.
    "tcp_mbps_bins": [0.0] + [30.0] * 39,
    "handover_count": 1,
    "handovers": [
        {"t_s": 17.6, "source_cell": 1, "target_cell": 2, "rrc_interruption_ms": 19.0, "no_data_ms": 412.5,
         "mbps_1s_before": 31.5, "mbps_2s_after": 12.3}
    ],
}


def test_handover_rows_from_the_summary_the_series_and_the_ns3_line(tmp_path):
    summary = tcran_handover_run(tmp_path / "tcran")
    ns3 = write(tmp_path / "ns3.json", NS3_A)
    done = compare(summary, ns3)
    assert done.returncode == 0, done.stderr
    # Mean 1-40 s: 165 bins of 50 (1.0-17.4 s), 10 of 20, 215 of 60 over
    # 390 bins = 21350 / 390 = 54.74. Before the handover (16.5-17.4 s): 50.
    # After (17.5-19.4 s): 10 bins of 20 and 10 of 60 = 40.
    assert done.stdout.splitlines() == [
        "| quantity | tcran | ns-3 LENA |",
        "|---|---|---|",
        "| handovers | 1 | 1 |",
        "| TCP goodput, mean 1-40 s (Mbit/s) | 54.7 | 30.0 |",
        "| handover 1: cells | 1 -> 2 | 1 -> 2 |",
        "| handover 1: time (s) | 17.50 | 17.60 |",
        "| handover 1: interruption (ms) | 30.0 | 19.0 |",
        "| handover 1: longest TCP delivery gap around it (ms) | - | 412.5 |",
        "| handover 1: TCP goodput 1 s before (Mbit/s) | 50.0 | 31.5 |",
        "| handover 1: TCP goodput 2 s after (Mbit/s) | 40.0 | 12.3 |",
        "| handover 1: packets forwarded | 120 | - |",
        "| handover 1: packets dropped | 0 | - |",
    ]


def test_a_tcran_run_without_handover_fields_prints_dashes_not_guesses(tmp_path):
    summary = tcran_handover_run(tmp_path / "tcran", handovers=False)
    ns3 = write(tmp_path / "ns3.json", NS3_A)
    done = compare(summary, ns3)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "| handovers | - | 1 |" in lines
    assert "| handover 1: time (s) | - | 17.60 |" in lines
    assert "| handover 1: TCP goodput 2 s after (Mbit/s) | - | 12.3 |" in lines


def test_uplink_rows(tmp_path):
    out = tmp_path / "tcran"
    variant = {
        "name": "default",
        "flows": [
            {"name": "upload", "kind": "tcp", "direction": "uplink", "throughput_mbps": 1.0},
            {"name": "ping", "kind": "ping", "direction": "uplink",
             "rtt_ms": {"p50": 250.0, "p95": 400.0}},
        ],
    }
    summary = write(out / "summary.json", {"variants": [variant]})
    # Upload goodput per 500 ms bin: 10 before 5 s, 40 from 5 s.
    flows = ["flow,kind,t_s,goodput_mbps,delay_ms,cwnd_bytes,srtt_ms"]
    flows += [f"upload,tcp,{i * 0.5},{10 if i * 0.5 < 5 else 40},1,1,1" for i in range(60)]
    write(out / "default" / "flows.csv", "\n".join(flows) + "\n")
    # The UE's RLC buffer once a second: 0 before 5 s, then 1000 x t bytes:
    # 5000 ... 29000 over 5-29 s, median 17000 B = 17.0 kB.
    slots = ["t_s,rlc_bytes,ue_rlc_bytes"] + [f"{t},7,{0 if t < 5 else 1000 * t}" for t in range(30)]
    write(out / "default" / "slots.csv", "\n".join(slots) + "\n")
    ns3 = write(tmp_path / "ns3.json", {
        "case": "B", "sim_s": 30.0, "upload_mbps_5_30s": 35.5, "ping_rtt_ms_p50": 120.0,
        "ping_rtt_ms_p95": 180.5, "ue_rlc_bytes_p50_5_30s": 2_500_000,
    })
    done = compare(summary, ns3)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[2:] == [
        "| upload goodput, mean 5-30 s (Mbit/s) | 40.0 | 35.5 |",
        "| ping RTT median (ms) | 250.0 | 120.0 |",
        "| ping RTT p95 (ms) | 400.0 | 180.5 |",
        "| UE RLC buffer median, 5-30 s (kB) | 17.0 | 2,500.0 |",
    ]


def test_bad_inputs_are_named_with_exit_code_2(tmp_path):
    summary = tcran_handover_run(tmp_path / "tcran")
    speed = write(tmp_path / "speed.json", {"case": "C"})
    done = compare(summary, speed)
    assert done.returncode == 2
    assert done.stderr == f"error: {speed}: case = 'C': A (handover.py) or B (uplink.py) expected\n"

    two = write(tmp_path / "two" / "summary.json", {"variants": [{"name": "a"}, {"name": "b"}]})
    ns3 = write(tmp_path / "ns3.json", NS3_A)
    done = compare(two, ns3)
    assert done.returncode == 2
    assert done.stderr == f"error: {two}: variants ['a', 'b']: say which with --variant\n"
    done = compare(two, ns3, "--variant", "c")
    assert done.stderr == f"error: {two}: --variant c: the run has ['a', 'b']\n"

    broken = write(tmp_path / "broken.json", "{")
    done = compare(summary, broken)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {broken}: not the ns-3 output: ")


def test_without_a_tcran_run_the_tcran_column_is_pending(tmp_path):
    ns3 = write(tmp_path / "ns3.json", NS3_A)
    done = compare("-", ns3)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "| handovers | pending | 1 |" in lines
    assert "| handover 1: cells | pending | 1 -> 2 |" in lines
    assert "| handover 1: packets forwarded | pending | - |" in lines


def test_a_summary_without_directions_has_no_upload(tmp_path):
    # A run from before the uplink: its TCP flow is a download, not case B's upload.
    summary = write(tmp_path / "summary.json",
                    {"variants": [{"name": "default", "flows": [{"name": "bulk", "kind": "tcp"}]}]})
    ns3 = write(tmp_path / "ns3.json", {
        "case": "B", "sim_s": 30.0, "upload_mbps_5_30s": 35.5, "ping_rtt_ms_p50": 120.0,
        "ping_rtt_ms_p95": 180.5, "ue_rlc_bytes_p50_5_30s": 2_500_000,
    })
    done = compare(summary, ns3)
    assert done.returncode == 0, done.stderr
    assert "| upload goodput, mean 5-30 s (Mbit/s) | - | 35.5 |" in done.stdout.splitlines()
