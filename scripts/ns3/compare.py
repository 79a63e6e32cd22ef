#!/usr/bin/env python3
"""The rows of docs/simulator.md's "Against ns-3 LENA" tables from a tcran
run and an ns-3 run of the same case (A: handover, B: uplink bufferbloat,
docs/ns3-spec.md):

    scripts/ns3/compare.py TCRAN_SUMMARY NS3_JSON [--variant NAME]

TCRAN_SUMMARY is the `summary.json` of `tcran run SCENARIO --out DIR`
(scenarios/ns3-handover.toml for A, scenarios/ns3-uplink.toml for B); the
per-bin series next to it (DIR/VARIANT/flows.csv, slots.csv) give the
windowed figures when they are there. NS3_JSON is the line printed by
scripts/ns3/handover.py or uplink.py; its `case` says which table.

Prints Markdown rows `| quantity | tcran | ns-3 LENA |`. A figure the
tcran output does not carry prints as `-`, never as a guess; with `-` for
TCRAN_SUMMARY every tcran cell says `pending` (the ns-3 column alone). Standard
library only, so it runs with any Python 3.9+.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from pathlib import Path

# What the tcran summary calls each figure. The handover and uplink fields
# come with issues 29 and 28; the first name present is used, so a rename
# on either side is one line here.
HANDOVER_TIME = ("t_s", "time_s", "at_s")
HANDOVER_SOURCE = ("source_cell", "source", "from_cell", "from")
HANDOVER_TARGET = ("target_cell", "target", "to_cell", "to")
HANDOVER_INTERRUPTION = ("interruption_ms",)
HANDOVER_GAP = ("tcp_gap_ms", "no_data_ms")
HANDOVER_FORWARDED = ("forwarded_packets", "packets_forwarded", "forwarded")
HANDOVER_DROPPED = ("dropped_packets", "packets_dropped", "dropped")
UE_RLC_SLOT_COLUMNS = ("ue_rlc_bytes", "ul_rlc_bytes")

# ns3-spec A and B: the windows the figures are taken over.
TCP_START_S = 1.0
BEFORE_S = 1.0
AFTER_S = 2.0
UPLINK_FROM_S = 5.0


class Unusable(Exception):
    """An input that cannot give the table (named in the message)."""


def first(d: dict, names: tuple[str, ...]):
    for n in names:
        if n in d:
            return d[n]
    return None


def fmt(v, digits: int = 1) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    return f"{v:,.{digits}f}"


PENDING = False


def row(what: str, tcran, ns3, digits: int = 1) -> str:
    left = "pending" if PENDING else fmt(tcran, digits)
    return f"| {what} | {left} | {fmt(ns3, digits)} |"


def load_json(path: Path, what: str) -> dict:
    try:
        return json.loads(path.read_text())
    except OSError as e:
        raise Unusable(f"{path}: cannot read the {what}: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise Unusable(f"{path}: not the {what}: {e}") from e


class Tcran:
    """One variant of a tcran run: its summary and, if written, its series."""

    def __init__(self, summary_path: Path | None, variant: str | None):
        if summary_path is None:
            self.v, self.dir = {}, Path("/nonexistent")
            return
        summary = load_json(summary_path, "tcran summary")
        variants = summary.get("variants")
        if not isinstance(variants, list) or not variants:
            raise Unusable(f"{summary_path}: no `variants` list: not a tcran summary.json")
        names = [v.get("name") for v in variants]
        if variant is None:
            if len(variants) > 1:
                raise Unusable(f"{summary_path}: variants {names}: say which with --variant")
            self.v = variants[0]
        else:
            if variant not in names:
                raise Unusable(f"{summary_path}: --variant {variant}: the run has {names}")
            self.v = variants[names.index(variant)]
        self.dir = summary_path.parent / str(self.v.get("name"))

    def flow(self, kind: str, direction: str | None = None) -> dict | None:
        for f in self.v.get("flows", []):
            # A summary from before the uplink (no `direction`) has no
            # uplink flow: its downlink TCP is not taken for the upload.
            if f.get("kind") == kind and (direction is None or f.get("direction") == direction):
                return f
        return None

    def bins(self, flow_name: str) -> list[tuple[float, float]] | None:
        """(bin start s, goodput Mbit/s) of a flow from flows.csv."""
        path = self.dir / "flows.csv"
        if not path.is_file():
            return None
        with path.open(newline="") as f:
            return [(float(r["t_s"]), float(r["goodput_mbps"]))
                    for r in csv.DictReader(f) if r["flow"] == flow_name]

    def slot_column(self, names: tuple[str, ...]) -> list[tuple[float, float]] | None:
        path = self.dir / "slots.csv"
        if not path.is_file():
            return None
        with path.open(newline="") as f:
            reader = csv.DictReader(f)
            col = next((n for n in names if n in (reader.fieldnames or [])), None)
            if col is None:
                return None
            return [(float(r["t_s"]), float(r[col])) for r in reader]


def mean_over(bins: list[tuple[float, float]] | None, t0: float, t1: float) -> float | None:
    """Mean goodput of the bins starting in [t0, t1): the bins are equal, so
    their mean is the goodput of the window (to a bin's width)."""
    if not bins:
        return None
    inside = [g for t, g in bins if t0 - 1e-9 <= t < t1 - 1e-9]
    return statistics.fmean(inside) if inside else None


def ns3_bins(ns3: dict, key: str) -> list[tuple[float, float]]:
    width = ns3["bin_s"]
    return [(i * width, g) for i, g in enumerate(ns3[key])]


def handover_rows(tcran: Tcran, ns3: dict) -> list[str]:
    tcp = tcran.flow("tcp")
    bins = tcran.bins(tcp["name"]) if tcp else None
    t_hos = tcran.v.get("handovers")
    sim_s = ns3["sim_s"]
    rows = [
        row("handovers", None if t_hos is None else len(t_hos), ns3["handover_count"], 0),
        row(f"TCP goodput, mean {TCP_START_S:g}-{sim_s:g} s (Mbit/s)",
            mean_over(bins, TCP_START_S, sim_s), mean_over(ns3_bins(ns3, "tcp_mbps_bins"), TCP_START_S, sim_s)),
    ]
    for i in range(max(len(t_hos or []), len(ns3["handovers"]))):
        n = ns3["handovers"][i] if i < len(ns3["handovers"]) else {}
        t = (t_hos or [])[i] if i < len(t_hos or []) else {}
        t_at = first(t, HANDOVER_TIME)
        cells = lambda h, s, d: None if first(h, s) is None else f"{first(h, s)} -> {first(h, d)}"  # noqa: E731
        tag = f"handover {i + 1}"
        rows += [
            f"| {tag}: cells | {'pending' if PENDING else cells(t, HANDOVER_SOURCE, HANDOVER_TARGET) or '-'} "
            f"| {cells(n, ('source_cell',), ('target_cell',)) or '-'} |",
            row(f"{tag}: time (s)", t_at, n.get("t_s"), 2),
            row(f"{tag}: interruption (ms)", first(t, HANDOVER_INTERRUPTION), n.get("rrc_interruption_ms")),
            row(f"{tag}: longest TCP delivery gap around it (ms)", first(t, HANDOVER_GAP), n.get("no_data_ms")),
            row(f"{tag}: TCP goodput 1 s before (Mbit/s)",
                None if t_at is None else mean_over(bins, t_at - BEFORE_S, t_at), n.get("mbps_1s_before")),
            row(f"{tag}: TCP goodput 2 s after (Mbit/s)",
                None if t_at is None else mean_over(bins, t_at, t_at + AFTER_S), n.get("mbps_2s_after")),
            row(f"{tag}: packets forwarded", first(t, HANDOVER_FORWARDED), None, 0),
            row(f"{tag}: packets dropped", first(t, HANDOVER_DROPPED), None, 0),
        ]
    return rows


def uplink_rows(tcran: Tcran, ns3: dict) -> list[str]:
    tcp = tcran.flow("tcp", "uplink")
    ping = tcran.flow("ping")
    sim_s = ns3["sim_s"]
    bins = tcran.bins(tcp["name"]) if tcp else None
    rtt = (ping or {}).get("rtt_ms", {})
    occupancy = tcran.slot_column(UE_RLC_SLOT_COLUMNS)
    median = None
    if occupancy:
        inside = [b for t, b in occupancy if t >= UPLINK_FROM_S]
        median = statistics.median(inside) if inside else None
    kb = lambda b: None if b is None else b / 1e3  # noqa: E731
    return [
        row(f"upload goodput, mean {UPLINK_FROM_S:g}-{sim_s:g} s (Mbit/s)",
            mean_over(bins, UPLINK_FROM_S, sim_s), ns3["upload_mbps_5_30s"]),
        row("ping RTT median (ms)", rtt.get("p50"), ns3["ping_rtt_ms_p50"]),
        row("ping RTT p95 (ms)", rtt.get("p95"), ns3["ping_rtt_ms_p95"]),
        row(f"UE RLC buffer median, {UPLINK_FROM_S:g}-{sim_s:g} s (kB)",
            kb(median), kb(ns3["ue_rlc_bytes_p50_5_30s"])),
    ]


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tcran_summary", type=Path)
    p.add_argument("ns3_json", type=Path)
    p.add_argument("--variant", help="the tcran variant, if the run has several")
    args = p.parse_args(argv)
    try:
        ns3 = load_json(args.ns3_json, "ns-3 output")
        case = ns3.get("case")
        if case not in ("A", "B"):
            raise Unusable(f"{args.ns3_json}: case = {case!r}: A (handover.py) or B (uplink.py) expected")
        global PENDING
        PENDING = str(args.tcran_summary) == "-"
        tcran = Tcran(None if PENDING else args.tcran_summary, args.variant)
        rows = (handover_rows if case == "A" else uplink_rows)(tcran, ns3)
    except (Unusable, KeyError) as e:
        msg = e.args[0] if isinstance(e, Unusable) else f"{args.ns3_json}: no field {e}"
        print(f"error: {msg}", file=sys.stderr)
        return 2
    print("| quantity | tcran | ns-3 LENA |")
    print("|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
