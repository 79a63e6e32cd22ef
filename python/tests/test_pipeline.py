"""tcran.Pipeline: packet by packet and batched from numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tcran

from conftest import cli_error

PRIORITY = """
default_queue = 1
classifier = { kind = "filter", rules = [ { priority = 1, protocol = "udp", queue = 0 } ] }
scheduler = { kind = "priority" }
[[queues]]
id = 0
kind = "fifo"
[[queues]]
id = 1
kind = "fifo"
limit_packets = 5
priority = 1
"""


def test_push_pull_in_priority_order_with_ids_and_conservation() -> None:
    p = tcran.Pipeline(PRIORITY)
    assert p.push(1500, 0, proto="tcp") == tcran.Pushed(0, "queued")
    assert p.push(200, 10, proto="udp").id == 1
    out = [p.pull(20), p.pull(20), p.pull(20)]
    assert [o.id for o in out[:2]] == [1, 0]  # UDP first
    assert out[2] is None
    assert out[0].size == 200 and out[0].sojourn_ns == 10
    t = p.totals()
    assert t["in_packets"] == t["out_packets"] + t["dropped_packets"] + t["queued_packets"] == 2


def test_a_full_queue_drops_with_its_reason() -> None:
    p = tcran.Pipeline(PRIORITY)
    res = [p.push(1000, i, proto="tcp") for i in range(7)]
    assert [r.outcome for r in res] == ["queued"] * 5 + ["dropped:queue_full"] * 2
    d = p.drain_dropped()
    assert d["id"].tolist() == [5, 6]
    assert [tcran.DROP_REASONS[r] for r in d["reason"]] == ["queue_full"] * 2
    assert p.drain_dropped()["id"].size == 0
    assert p.backlog == (5, 5000)


def test_batched_equals_one_by_one() -> None:
    rng = np.random.default_rng(3)
    n = 5000
    sizes = rng.integers(40, 1500, n).astype(np.uint32)
    times = np.cumsum(rng.integers(0, 200_000, n)).astype(np.uint64)
    proto = rng.choice([6, 17], n).astype(np.uint8)
    dport = (np.arange(n) % 7).astype(np.uint16)
    cfg = {
        "default_queue": 1,
        "classifier": {"kind": "filter", "rules": [{"priority": 1, "protocol": "udp", "queue": 0}]},
        "scheduler": {"kind": "priority"},
        "pacer": {"kind": "static", "limit_bytes": "20kB"},
        "queues": [
            {"id": 0, "kind": "fifo", "limit_packets": 50},
            {"id": 1, "kind": "codel", "priority": 1, "limit_packets": 200},
        ],
    }
    a, b = tcran.Pipeline(cfg), tcran.Pipeline(cfg)
    tti = 1_000_000
    codes_a, outcomes_b, pulled_a, pulled_b = [], [], [], []
    # Each TTI: the packets that arrived during it, then the pulls, then
    # the RLC report (the MAC took 5 kB, less than arrives: queues fill).
    for now in range(tti, int(times[-1]) + 100 * tti, tti):
        lo, hi = np.searchsorted(times, [now - tti, now], side="left")
        if hi > lo:
            sl = slice(lo, hi)
            ids, codes = a.push_many(sizes[sl], times[sl], proto=proto[sl], sport=5000, dport=dport[sl])
            assert ids.tolist() == list(range(lo, hi))
            codes_a += [tcran.OUTCOMES[c] for c in codes]
            for i in range(lo, hi):
                outcomes_b.append(b.push(int(sizes[i]), int(times[i]), proto=int(proto[i]), sport=5000, dport=int(dport[i])).outcome)
        pulled_a += a.pull_many(now)["id"].tolist()
        while (q := b.pull(now)) is not None:
            pulled_b.append(q.id)
        for p in (a, b):
            backlog = max(0, p.stats(now)["lower"]["rlc_bytes"] - 5_000)
            p.report(now, tti_ns=tti, backlog_bytes=backlog, pulled_bytes=5_000, granted_bytes=5_000, max_bytes=5_000)
    assert codes_a == outcomes_b
    assert "dropped:queue_full" in set(codes_a)
    assert pulled_a == pulled_b
    assert a.stats(now) == b.stats(now)
    t = a.totals()
    assert t["in_packets"] == n == t["out_packets"] + t["dropped_packets"] + t["queued_packets"]
    dropped = a.drain_dropped()["id"].tolist()
    assert dropped == b.drain_dropped()["id"].tolist()
    assert set(dropped).isdisjoint(pulled_a)
    assert len(dropped) + len(pulled_a) + t["queued_packets"] == n


def test_the_pacer_holds_packets_until_the_rlc_report() -> None:
    p = tcran.Pipeline({"pacer": {"kind": "static", "limit_bytes": "3000B"}, "queues": [{"id": 0, "kind": "fifo"}]})
    p.push_many(np.full(10, 1000), np.zeros(10, dtype=np.uint64))
    assert p.pull_many(0)["id"].tolist() == [0, 1, 2]
    assert p.pull(0) is None
    p.report(1_000_000, tti_ns=1_000_000, backlog_bytes=0, pulled_bytes=3000)
    got = p.pull_many(1_000_000)
    assert got["id"].tolist() == [3, 4, 5]
    assert got["sojourn_ns"].tolist() == [1_000_000] * 3


def test_live_control_and_refusals() -> None:
    p = tcran.Pipeline(PRIORITY)
    p.control({"op": "add_queue", "queue": {"id": 2, "kind": "codel", "target": "5ms", "interval": "100ms"}}, 0)
    assert [q["id"] for q in p.config["queues"]] == [0, 1, 2]
    with pytest.raises(tcran.ConfigError, match="<control>"):
        p.control('op = "delete_queue"\nid = 9\n', 0)
    with pytest.raises(tcran.ConfigError, match="unknown variant `teleport`"):
        p.control({"op": "teleport"}, 0)
    assert [q["id"] for q in p.config["queues"]] == [0, 1, 2]


def test_a_list_of_controls_is_all_or_none() -> None:
    p = tcran.Pipeline(PRIORITY)
    before = p.config
    add = {"op": "add_queue", "queue": {"id": 2, "kind": "fifo"}}
    with pytest.raises(tcran.ConfigError, match=r"<control>: control 3 of 3: limit_packets = 0"):
        p.control([add, {"op": "set_default_queue", "id": 2}, {"op": "set_total_limit", "limit_packets": 0}], 0)
    assert p.config == before
    p.control([add, {"op": "set_default_queue", "id": 2}], 0)
    assert p.config["default_queue"] == 2


def test_deploy_keeps_every_queued_packet_in_order() -> None:
    p = tcran.Pipeline(PRIORITY)
    for t in range(4):
        p.push(100, t, proto="tcp")  # queue 1
    p.deploy('[[queues]]\nid = 7\nkind = "codel"\n', 10)
    assert [q["id"] for q in p.config["queues"]] == [7]
    assert p.backlog == (4, 400)
    assert [p.pull(20).id for _ in range(4)] == [0, 1, 2, 3]
    with pytest.raises(tcran.ConfigError, match=r"<config>: queues\[0\].weight = 0"):
        p.deploy({"queues": [{"id": 0, "kind": "fifo", "weight": 0}]}, 30)
    assert [q["id"] for q in p.config["queues"]] == [7]


def test_time_before_the_pipelines_is_clamped_and_counted() -> None:
    # The C ABI's policy: threads that read a clock, then race for the
    # pipeline, hand in times slightly out of order; that is not an error.
    p = tcran.Pipeline(PRIORITY)
    p.push(100, 50, proto="tcp")
    assert p.push(100, 10, proto="tcp").outcome == "queued"
    ids, _ = p.push_many([100, 100], [70, 5], proto="tcp")
    assert p.time_clamped == 2
    out = p.pull(40)  # taken at the pipeline's time, 70 ns
    assert out is not None and out.id == 0 and out.sojourn_ns == 20
    assert p.time_clamped == 3


def test_bad_config_is_the_command_lines_message(tmp_path: Path, tcran_bin: Path) -> None:
    for text in ('pacer = { kind = "bdp", offset = 1.5 }\n', 'pacer = { kind = "warp" }\n', "[[queues]]\nid = 0\nkind = \"codel\"\ntarget = \"5 parsecs\"\n"):
        f = tmp_path / "pipe.toml"
        f.write_text(text)
        want = cli_error(tcran_bin, "validate", str(f)).replace(str(f), "<config>")
        with pytest.raises(tcran.ConfigError) as e:
            tcran.Pipeline(text)
        assert str(e.value) == want


def test_bad_arguments_change_nothing() -> None:
    p = tcran.Pipeline(PRIORITY)
    p.push(100, 50)
    with pytest.raises(tcran.ConfigError, match=r"size = 0: a packet is 1..=9000 bytes"):
        p.push(0, 60)
    with pytest.raises(tcran.ConfigError, match=r"sizes\[1\] = 10000"):
        p.push_many([100, 10000], [70, 80])
    with pytest.raises(tcran.ConfigError, match="dscp = 64"):
        p.push_many([100], [70], dscp=64)
    with pytest.raises(tcran.ConfigError, match="not an IPv4 or IPv6 address"):
        p.push(100, 60, src="10.0.0.300")
    assert p.totals()["in_packets"] == 1
    assert p.push(100, 60, src="2001:db8::1", dst="2001:db8::2").outcome == "queued"


def test_next_wakeup_of_a_shaper() -> None:
    p = tcran.Pipeline({"queues": [{"id": 0, "kind": "fifo", "shaper": {"kind": "token_bucket", "rate": "8Mbit/s", "burst": "1500B"}}]})
    p.push_many(np.full(3, 1500), np.zeros(3, dtype=np.uint64))
    assert p.pull_many(0)["id"].tolist() == [0]
    w = p.next_wakeup(0)
    # 1500 bytes at 8 Mbit/s take 1.5 ms.
    assert w == 1_500_000
    assert p.pull_many(w)["id"].tolist() == [1]


def test_a_report_outside_the_slot_range_is_refused() -> None:
    # The range the C API checks too (LowerLayerReport::check).
    p = tcran.Pipeline({"pacer": {"kind": "bdp"}, "queues": [{"id": 0, "kind": "fifo"}]})
    with pytest.raises(tcran.ConfigError, match=r"tti_ns = 0: must be 1000..=1000000000"):
        p.report(0, tti_ns=0, backlog_bytes=0, granted_bytes=12_000)
    with pytest.raises(tcran.ConfigError, match=r"next_pull_in_ns = 2000000000: must be 0"):
        p.report(0, tti_ns=1_000_000, backlog_bytes=0, next_pull_in_ns=2_000_000_000)
    with pytest.raises(tcran.ConfigError, match=r"mcs = 32: must be 0..=31"):
        p.report(0, tti_ns=1_000_000, backlog_bytes=0, mcs=32)
    # The MAC's view and the head-of-line age are accepted as a gNB gives them.
    p.report(
        0, tti_ns=1_000_000, backlog_bytes=0, head_of_line_age_ns=3_000_000,
        mcs=27, prbs=51, harq_acks=1, harq_nacks=0,
    )


def _pulled_after_one_report(next_pull_in_ns: int) -> int:
    """Packets of 1000 B a 5G-BDP pacer lets down 1 ms after a report of a
    12000-byte grant on an empty RLC buffer (1 ms TTI)."""
    p = tcran.Pipeline({"pacer": {"kind": "bdp"}, "queues": [{"id": 0, "kind": "fifo"}]})
    p.push_many(np.full(40, 1000), np.zeros(40, dtype=np.uint64))
    p.report(0, tti_ns=1_000_000, backlog_bytes=0, granted_bytes=12_000, next_pull_in_ns=next_pull_in_ns)
    return len(p.pull_many(1_000_000)["id"])


def test_report_next_pull_in_sets_the_interval_5g_bdp_spreads_its_grant_over() -> None:
    # Thesis Alg. 2 (crates/tcran-tc/src/pacer/bdp.rs): soll_tx =
    # (min(elapsed / TTI, 1) + 0.33) x 12000 B, TTI the time to the next
    # pull. Next pull in 1 ms (or unknown, 0): 1.33 x 12000 = 15960 B, 15
    # packets by 1 ms; in 2 ms (after a DDDSU S slot): 0.83 x 12000 = 9960
    # B, 9 packets.
    assert _pulled_after_one_report(0) == 15
    assert _pulled_after_one_report(1_000_000) == 15
    assert _pulled_after_one_report(2_000_000) == 9


def test_report_pulls_per_pattern_keeps_tdd_phases_apart() -> None:
    # DDDS pulls (the U slot of DDDSU has none): D grants 5000 B, S 2000 B.
    # jit's estimate for the next pull is the mean over the same TDD phase
    # (pacer/jit.rs): with pulls_per_pattern = 4 it is the next slot's own
    # grant; unknown (0), the phases are averaged and it is neither.
    def limits(pulls_per_pattern: int) -> list[float]:
        p = tcran.Pipeline({"pacer": {"kind": "jit"}, "queues": [{"id": 0, "kind": "fifo"}]})
        t, out = 0, []
        for pull in range(40):
            g = 2000 if pull % 4 == 3 else 5000
            gap = 2_000_000 if pull % 4 == 3 else 1_000_000
            p.report(
                t, tti_ns=1_000_000, backlog_bytes=0, pulled_bytes=g, granted_bytes=g, max_bytes=g,
                next_pull_in_ns=gap, pulls_per_pattern=pulls_per_pattern,
            )
            out.append(p.stats(t)["pacer"]["limit"])
            t += gap
        return out

    want = [2000 if (pull + 1) % 4 == 3 else 5000 for pull in range(40)]
    assert limits(4)[4:] == want[4:]
    assert all(l not in (2000, 5000) for l in limits(0)[8:])


def test_report_sets_jits_target_from_what_the_slots_offered() -> None:
    # jit's target leaves at most unused_share of the slots' capacity unused
    # and is never below their mean (pacer/jit.rs): one slot of 1000 B gives
    # 1000 B; slots of 0, 0, 0 and 8000 B with 2 % give 8000 - 160 = 7840 B,
    # with 50 % 8000 - 4000 = 4000 B (still above the mean, 2000 B).
    def limit(share: float, slots: list) -> float:
        p = tcran.Pipeline({"pacer": {"kind": "jit", "unused_share": share}, "queues": [{"id": 0, "kind": "fifo"}]})
        for k, s in enumerate(slots):
            p.report(k * 1_000_000, tti_ns=1_000_000, backlog_bytes=0, pulled_bytes=s, granted_bytes=s)
        return p.stats(len(slots) * 1_000_000)["pacer"]["limit"]

    assert limit(0.02, [1000]) == 1000
    assert limit(0.0, [0, 0, 0, 8000]) == 8000
    assert limit(0.02, [0, 0, 0, 8000]) == 7840
    assert limit(0.5, [0, 0, 0, 8000]) == 4000
