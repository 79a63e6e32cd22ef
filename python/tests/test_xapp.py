"""xApps in Python (tcran.xapp) against the simulator as an E2 node
(`tcran run --realtime --e2`, framed TCP on loopback), the path
crates/tcran-cli/tests/xapp_e2e.rs runs with the Rust xApps."""

from __future__ import annotations

import csv
import importlib.util
import subprocess
import threading
import time
from pathlib import Path

import pytest

import tcran
from tcran import xapp
from conftest import ROOT

# The online-game case of TC-RAN Figs. 8-10, shortened
# (crates/tcran-cli/tests/fixtures/xapp_game.toml): a game shares one
# bearer with a greedy CUBIC download from 1 s, which bloats the RLC buffer
# past 10 ms within a few hundred ms.
GAME = """
duration = "5s"
seed = 1

[cell]
numerology = 1
prbs = 106
slot_pattern = "DDDDDDDSUU"

[[ues]]
rnti = 1
channel = { kind = "mcs", mcs = 10 }

[[flows]]
name = "game"
ue = 1
kind = "gaming"
mean = "20ms"

[[flows]]
name = "background"
ue = 1
kind = "tcp"
tcp = { cc = "cubic" }
start = "1s"
"""


def _example():
    path = ROOT / "docs" / "examples" / "low_latency_xapp.py"
    spec = importlib.util.spec_from_file_location("low_latency_xapp", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _realtime(tcran_bin: Path, scenario: Path, address: str, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(tcran_bin), "run", str(scenario), "--realtime", "--e2", address, "--json", "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )


def test_the_low_latency_example_deploys_codel_when_the_rlc_bloats(tmp_path: Path, tcran_bin: Path) -> None:
    # Two variants, two E2 nodes (gNB ids 1 and 2): the xApp is told to
    # leave the first, the baseline, alone.
    scenario = tmp_path / "game.toml"
    scenario.write_text(GAME + '[[variants]]\nname = "baseline"\n[[variants]]\nname = "served"\n')
    out = tmp_path / "out"
    example = _example()
    listening = threading.Event()
    address: list[str] = []
    result: dict = {}
    log: list[str] = []

    def serve() -> None:
        def on_listen(a: str) -> None:
            address.append(a)
            listening.set()

        try:
            result["outcomes"] = example.low_latency(
                "127.0.0.1:0", threshold_ms=10.0, wait_s=60.0, leave=[1], on_listen=on_listen, log=log.append
            )
        except BaseException as e:  # handed to the test thread
            result["error"] = e
            listening.set()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    assert listening.wait(30)
    assert "error" not in result, result
    run = _realtime(tcran_bin, scenario, address[0], out)
    assert run.returncode == 0, run.stderr
    # The node went away at the end of the run: the loop ends.
    t.join(30)
    assert not t.is_alive()
    assert "error" not in result, result
    outcomes = result["outcomes"]
    # At least one deployment, every one applied, and what the node runs
    # afterwards is the cure: one CoDel queue, round robin, 5G-BDP.
    assert outcomes and all(o.applied for o in outcomes), (outcomes, log)
    p = outcomes[0].pipeline
    assert [q["kind"] for q in p["queues"]] == ["codel"]
    assert p["scheduler"]["kind"] == "round_robin"
    assert p["pacer"]["kind"] == "bdp"
    # The node's own record: the deployment came over E2 after the
    # download started (1 s) bloated the RLC buffer.
    def by_e2(variant: str) -> list[dict]:
        with open(out / variant / "reconfigurations.csv") as f:
            return [r for r in csv.DictReader(f) if r["by"] == "e2" and r["what"]]

    rows = by_e2("served")
    assert rows, log
    assert float(rows[0]["t_s"]) > 1.0
    assert rows[0]["what"].startswith("deploy"), rows[0]
    # The baseline was left as it was.
    assert by_e2("baseline") == [], log
    assert any("left alone" in line for line in log), log


def test_indications_listing_and_controls_against_a_live_node(tmp_path: Path, tcran_bin: Path) -> None:
    scenario = tmp_path / "game.toml"
    scenario.write_text(GAME.replace('duration = "5s"', 'duration = "3s"'))
    with xapp.Xapp("127.0.0.1:0") as x:
        assert x.nodes() == []
        node_proc = subprocess.Popen(
            [str(tcran_bin), "run", str(scenario), "--realtime", "--e2", x.address, "--json",
             "--out", str(tmp_path / "out")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        try:
            (node,) = x.wait_for_nodes(1, timeout=30)
            assert node.drbs == ((1, 1),)
            assert x.drbs(node) == [(1, 1)]
            assert x.nodes() == [node]
            with x.subscribe(node, period_ms=50) as sub:
                ind = [sub.next(timeout=10) for _ in range(4)]
            assert all(i is not None and not i.condition for i in ind)
            times = [i.time_ns for i in ind]
            # Every 50 ms of the node's clock (the simulator's, real time).
            assert times == sorted(times) and times[-1] - times[0] >= 3 * 40_000_000, times
            (drb,) = ind[-1].drbs
            assert drb.key == (1, 1)
            assert drb.stats["totals"]["in_packets"] >= drb.stats["totals"]["out_packets"] > 0
            assert ind[-1].rows()[0]["rnti"] == 1

            # A control list, all or none: the second one is refused, so
            # the first one is not applied either.
            add = {"op": "add_queue", "queue": {"id": 7, "kind": "codel"}}
            refused = x.control(node, drb, [add, {"op": "delete_queue", "id": 99}])
            assert not refused and "99" in refused.reason
            assert [q["id"] for q in x.pipeline(node, drb)["queues"]] == [0]
            applied = x.control(node, drb, 'op = "add_queue"\nqueue = { id = 7, kind = "codel" }\n')
            assert applied and [q["id"] for q in applied.pipeline["queues"]] == [0, 7]
            assert [q["id"] for q in x.pipeline(node, (1, 1))["queues"]] == [0, 7]
            # A control tcran cannot read is refused here, with the
            # pipeline's message, before anything is sent.
            with pytest.raises(tcran.ConfigError, match="unknown variant `teleport`"):
                x.control(node, drb, {"op": "teleport"})
            with pytest.raises(tcran.ConfigError, match="metric"):
                x.subscribe(node, metric="rlc_temperature")
            with pytest.raises(xapp.XappError, match="no node 99"):
                x.drbs(99)
            # Once the run ends the node goes away and a subscription ends.
            sub = x.subscribe(node, period_ms=1000)
            list(sub)
            assert sub.ended and sub.next(timeout=0) is None
        finally:
            node_proc.wait(60)
        assert node_proc.returncode == 0, node_proc.stderr.read()


def test_a_ues_uplink_pipeline_over_e2(tmp_path: Path, tcran_bin: Path) -> None:
    # scenarios/uplink-backup.toml's vanilla variant: UE 1 has downlink DRB
    # 1 and uplink DRB 1, two pipelines named (1, 1); the uplink one is
    # the UE's, where its backup upload bloats.
    with xapp.Xapp("127.0.0.1:0") as x:
        node_proc = subprocess.Popen(
            [str(tcran_bin), "run", str(ROOT / "scenarios" / "uplink-backup.toml"), "--realtime",
             "--e2", x.address, "--set", 'variants=[{ name = "vanilla" }]', "--set", "duration=2s",
             "--set", "warmup=0s",
             "--json", "--out", str(tmp_path / "out")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        try:
            (node,) = x.wait_for_nodes(1, timeout=30)
            with x.subscribe(node, period_ms=50, drbs=[(1, 1, "uplink")]) as sub:
                ind = sub.next(timeout=10)
            (up,) = ind.drbs
            # Known from E2 Setup's Service Update or from the reports.
            (node,) = x.nodes()
            assert node.drbs == ((1, 1),) and node.uplink_drbs == ((1, 1),)
            assert x.drbs(node, direction="uplink") == [(1, 1)]
            assert (up.key, up.direction) == ((1, 1), "uplink")
            cure = {"queues": [{"id": 0, "kind": "codel"}], "pacer": {"kind": "static", "limit_bytes": "20kB"}}
            # The status names its direction; the downlink DRB (1, 1) keeps
            # its pipeline.
            assert x.deploy(node, up, cure)
            assert x.pipeline(node, (1, 1), direction="uplink")["pacer"]["kind"] == "static"
            assert x.pipeline(node, (1, 1))["pacer"]["kind"] == "none"
            with pytest.raises(tcran.ConfigError, match="direction = 'sideways'"):
                x.pipeline(node, (1, 1), direction="sideways")
        finally:
            node_proc.wait(60)
        assert node_proc.returncode == 0, node_proc.stderr.read()


def test_bad_arguments() -> None:
    with pytest.raises(tcran.ConfigError, match="not an address"):
        xapp.Xapp("localhost")
    with pytest.raises(tcran.ConfigError, match="answer_timeout"):
        xapp.Xapp("127.0.0.1:0", answer_timeout=0)
    with xapp.Xapp("127.0.0.1:0") as x:
        # The port is taken.
        with pytest.raises(xapp.XappError, match="cannot listen"):
            xapp.Xapp(x.address)
        with pytest.raises(TimeoutError, match="within 0.2 s"):
            x.wait_for_nodes(1, timeout=0.2)


def test_waiting_releases_the_gil() -> None:
    # A thread that notes the time every millisecond gets to run while the
    # main thread waits for a node; with the GIL held it could not.
    stamps: list[float] = []
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            stamps.append(time.monotonic())
            time.sleep(0.001)

    with xapp.Xapp("127.0.0.1:0") as x:
        t = threading.Thread(target=tick)
        t.start()
        try:
            t0 = time.monotonic()
            with pytest.raises(TimeoutError):
                x.wait_for_nodes(1, timeout=0.6)
            t1 = time.monotonic()
        finally:
            stop.set()
            t.join()
    assert any(t0 + 0.2 < s < t1 - 0.2 for s in stamps)
