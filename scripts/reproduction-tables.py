#!/usr/bin/env python3
"""Rewrites the generated tables of docs/reproduction.md from a `tcran
reproduce` output directory (`make reproduction-doc` runs both).

A table is a block between two marker comments:

    <!-- table: SCENARIO flow=FLOW cols=COL,COL,... [variants=V,V,...] -->
    ...whatever is there is replaced...
    <!-- end table -->

It gets one row per variant of the scenario (all, in the scenario's order,
or the ones `variants=` names, in that order) and one column per COL. A
cell is ours, the mean over the seeds the output was run with and its 95 %
confidence interval, `mean (low..high)`, from every seed's run summary
(OUT/SCENARIO/summary.json, `seed_runs`); a value every seed gave alike
has no interval, and neither has one narrower than the digits shown. Where
OUT/fidelity.json has the paper's number for that scenario, variant, flow
and metric, the cell adds it: `; paper X`, and `(>2x)` when ours is more
than a factor 2 away.

The interval is Student's t: mean +- t(0.975, n-1) x sd / sqrt(n), sd the
sample standard deviation over the n seeds, as `tcran reproduce` computes
its own (fidelity.json, across_seeds). The numbers are rounded as
fidelity.md rounds them (3 significant digits above 10, 2 decimals below).

COL is METRIC or METRIC@FLOW (another flow than the marker's `flow=`).
METRIC is one of the keys of FLOW_METRICS and VARIANT_METRICS below (the
names `[[paper]]` uses where it has one, docs/scenarios.md "Paper
numbers"), `drops_REASON` (a variant's drops of that reason, e.g.
`drops_codel`), or `delay_within_pct<=BOUND` (e.g. `<=10ms`), which the run
summary cannot give (it needs the delay CDF of the run's series), so the
cell is fidelity.json's, for the variants that have a paper number.

A block between `<!-- fidelity: by-scenario -->` and `<!-- end table -->`
gets fidelity.json's totals, in the words of fidelity.md's first line, and
a table of them per scenario.

A marker that names an unknown scenario, variant, flow or column, or a
block without its end, is an error naming the marker's line: nothing is
written and the exit code is 2.

Usage: scripts/reproduction-tables.py OUT [PAGE]   (PAGE: docs/reproduction.md)
"""

import json
import math
import re
import statistics
import sys
from pathlib import Path

# t(0.975, df) for df = 1..30 (any table of Student's t, e.g. NIST/SEMATECH
# e-Handbook 1.3.6.7.2); above 30 the Cornish-Fisher expansion below.
T975 = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
]


def t975(df):
    if df <= len(T975):
        return T975[df - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def layer(name):
    return lambda f: f["layers_ms"][name]["mean"]


def rtt(stat):
    return lambda f: f["rtt_ms"][stat] if f.get("rtt_ms") else None


def lost_pct(f):
    created = f["created_packets"]
    return 100.0 * f["lost_packets"] / created if created else 0.0


# Per flow: (column title, value of one seed's flow summary).
FLOW_METRICS = {
    "throughput_mbps": ("Mbit/s", lambda f: f["throughput_mbps"]),
    "delay_mean_ms": ("one-way delay, mean (ms)", lambda f: f["delay_ms"]["mean"]),
    "delay_p50_ms": ("one-way p50 (ms)", lambda f: f["delay_ms"]["p50"]),
    "delay_p95_ms": ("one-way p95 (ms)", lambda f: f["delay_ms"]["p95"]),
    "delay_p99_ms": ("one-way p99 (ms)", lambda f: f["delay_ms"]["p99"]),
    "ran_delay_mean_ms": (
        "delay in RAN, mean (ms)",
        lambda f: f["delay_ms"]["mean"] - f["layers_ms"]["core"]["mean"],
    ),
    "ran_delay_p95_ms": (
        "delay in RAN, p95 (ms)",
        lambda f: f["delay_ms"]["p95"] - f["layers_ms"]["core"]["mean"],
    ),
    "enb_delay_mean_ms": (
        "delay at eNodeB, mean (ms)",
        lambda f: sum(f["layers_ms"][k]["mean"] for k in ("upf", "tc", "rlc")),
    ),
    "tc_delay_mean_ms": (
        "UPF + TC queues, mean (ms)",
        lambda f: f["layers_ms"]["upf"]["mean"] + f["layers_ms"]["tc"]["mean"],
    ),
    "upf_delay_mean_ms": ("UPF queue, mean (ms)", layer("upf")),
    "sdap_delay_mean_ms": ("TC (SDAP) queues, mean (ms)", layer("tc")),
    "rlc_delay_mean_ms": ("RLC, mean (ms)", layer("rlc")),
    "rtt_mean_ms": ("RTT mean (ms)", rtt("mean")),
    "rtt_p95_ms": ("RTT p95 (ms)", rtt("p95")),
    "lost": ("lost packets", lambda f: f["lost_packets"]),
    "lost_pct": ("lost (%)", lost_pct),
    "page_mean_ms": (
        "page load, mean (ms)",
        lambda f: f["page_ms"]["mean"] if f.get("page_ms") else None,
    ),
}

# Per variant: (column title, value of one seed's variant summary).
VARIANT_METRICS = {
    "prb_used_pct": ("PRB used (%)", lambda v: 100.0 * v["prb_utilization"]),
    "prb_unused_pct": ("PRB unused (%)", lambda v: 100.0 * (1.0 - v["prb_utilization"])),
    "capacity_used_pct": ("capacity used (%)", lambda v: 100.0 * v["capacity_utilization"]),
    "total_mbps": ("all flows, Mbit/s", lambda v: sum(f["throughput_mbps"] for f in v["flows"])),
    "rlc_mean_kb": ("RLC mean (kB)", lambda v: v["rlc"]["mean_bytes"] / 1000.0),
    "rlc_max_kb": ("RLC peak (kB)", lambda v: v["rlc"]["max_bytes"] / 1000.0),
    "rlc_sojourn_mean_ms": ("RLC sojourn, mean (ms)", lambda v: v["rlc"]["mean_sojourn_ms"]),
    # The run's length over the status PDUs sent: their mean spacing.
    "status_pdu_gap_ms": (
        "status PDU every (ms)",
        lambda v: 1000.0 * v["sim_s"] / v["rlc"]["status_pdus"] if v["rlc"]["status_pdus"] else None,
    ),
    "drops": (
        "drops",
        lambda v: sum(n for reasons in v["drops"].values() for n in reasons.values()),
    ),
    "ce_marks": (
        "CE marks",
        lambda v: sum(n for reasons in v["marks"].values() for n in reasons.values()),
    ),
}

# `drops_REASON`: a variant's drops of that reason (`codel`, `rlc_full`,
# ...), summed over the layers.
DROPS = re.compile(r"^drops_(\w+)$")
WITHIN = re.compile(r"^delay_within_pct<=(\d+(?:\.\d+)?(?:us|ms|s))$")
MARKER = re.compile(r"^<!-- (table|fidelity): (.*) -->$")
END = "<!-- end table -->"


class MarkerError(Exception):
    pass


def short(v):
    """fidelity.md's rounding (crates/tcran-sim/src/fidelity.rs `short`)."""
    if v is None or not math.isfinite(v):
        return "-"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def interval(values):
    """Mean and 95 % interval (None when every value is the same)."""
    mean = statistics.fmean(values)
    if len(values) < 2 or max(values) == min(values):
        return mean, None
    half = t975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, (mean - half, mean + half)


def with_interval(mean, ci):
    """`mean (low..high)`; without the interval when it is narrower than
    the digits shown."""
    text = short(mean)
    if ci is None or short(ci[0]) == short(ci[1]) == text:
        return text
    return f"{text} ({short(ci[0])}..{short(ci[1])})"


def paper_text(row):
    low, high = row["paper"]["low"], row["paper"]["high"]
    text = short(low) if low == high else f"{short(low)}-{short(high)}"
    return f"paper {text}" + ("" if row["within_2x"] else " (>2x)")


class Output:
    """A `tcran reproduce` output directory."""

    def __init__(self, root):
        self.root = Path(root)
        try:
            fidelity = json.loads((self.root / "fidelity.json").read_text())
        except (OSError, ValueError) as e:
            raise MarkerError(f"{self.root}: not a `tcran reproduce` output: {e}") from e
        self.fidelity = fidelity["rows"]
        self.summaries = {}

    def scenarios(self):
        return sorted(p.parent.name for p in self.root.glob("*/summary.json"))

    def summary(self, scenario):
        if scenario not in self.summaries:
            path = self.root / scenario / "summary.json"
            if not path.is_file():
                raise MarkerError(
                    f"unknown scenario {scenario!r} (the output has: {', '.join(self.scenarios())})"
                )
            self.summaries[scenario] = json.loads(path.read_text())
        return self.summaries[scenario]

    def paper_row(self, scenario, variant, flow, metric, within=None):
        for r in self.fidelity:
            if (
                r["scenario"] == scenario
                and r["variant"] == variant
                and r.get("flow") == flow
                and r["metric"] == metric
                and r.get("within") == within
                and "relative_to" not in r
            ):
                return r
        return None


def parse_marker(spec):
    words = spec.split()
    if not words or "=" in words[0]:
        raise MarkerError("the marker names no scenario: <!-- table: SCENARIO flow=F cols=A,B -->")
    opts = {}
    for w in words[1:]:
        key, eq, value = w.partition("=")
        if not eq or key not in ("flow", "cols", "variants") or not value:
            raise MarkerError(f"unknown option {w!r} (allowed: flow=, cols=, variants=)")
        opts[key] = value
    if "cols" not in opts:
        raise MarkerError("the marker has no cols=")
    return words[0], opts


def column(col, default_flow):
    """(metric, flow, within) of a column, or a MarkerError."""
    metric, _, flow = col.partition("@")
    flow = flow or default_flow
    within = None
    m = WITHIN.match(metric)
    if m:
        metric, within = "delay_within_pct", m.group(1)
    elif DROPS.match(metric):
        return metric, None, None
    elif metric not in FLOW_METRICS and metric not in VARIANT_METRICS:
        allowed = ", ".join([*FLOW_METRICS, *VARIANT_METRICS, "drops_REASON"])
        allowed += ", delay_within_pct<=BOUND"
        raise MarkerError(f"unknown column {metric!r} (allowed: {allowed})")
    if metric in VARIANT_METRICS:
        return metric, None, None
    if not flow:
        raise MarkerError(f"column {col!r} is a flow's: give flow= or {metric}@FLOW")
    return metric, flow, within


def title(metric, flow, within):
    if metric == "delay_within_pct":
        return f"{flow}: within {within} (%)"
    if metric in VARIANT_METRICS:
        return VARIANT_METRICS[metric][0]
    if DROPS.match(metric):
        return f"{DROPS.match(metric).group(1)} drops"
    return f"{flow}: {FLOW_METRICS[metric][0]}"


def table(out, spec):
    scenario, opts = parse_marker(spec)
    summary = out.summary(scenario)
    names = [v["name"] for v in summary["variants"]]
    variants = opts["variants"].split(",") if "variants" in opts else names
    for v in variants:
        if v not in names:
            raise MarkerError(
                f"scenario {scenario!r} has no variant {v!r} (it has: {', '.join(names)})"
            )
    runs = summary.get("seed_runs") or [{"variants": summary["variants"]}]
    columns = [column(c, opts.get("flow")) for c in opts["cols"].split(",")]
    flows = {f["name"] for r in runs for v in r["variants"] for f in v["flows"]}
    for _, flow, _ in columns:
        if flow is not None and flow not in flows:
            raise MarkerError(
                f"scenario {scenario!r} has no flow {flow!r} (it has: {', '.join(sorted(flows))})"
            )
    lines = [
        "| variant | " + " | ".join(title(*c) for c in columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for name in variants:
        i = names.index(name)
        cells = [name]
        for metric, flow, within in columns:
            paper = out.paper_row(scenario, name, flow, metric, within)
            if metric == "delay_within_pct":
                cell = "-"
                if paper is not None:
                    o = paper["ours"]
                    ci = (o["ci_low"], o["ci_high"]) if "ci_low" in o else None
                    cell = with_interval(o["mean"], ci)
            else:
                values = []
                for r in runs:
                    v = r["variants"][i]
                    if metric in VARIANT_METRICS:
                        x = VARIANT_METRICS[metric][1](v)
                    elif DROPS.match(metric):
                        reason = DROPS.match(metric).group(1)
                        x = sum(by.get(reason, 0) for by in v["drops"].values())
                    else:
                        f = next((f for f in v["flows"] if f["name"] == flow), None)
                        x = FLOW_METRICS[metric][1](f) if f is not None else None
                    if x is not None:
                        values.append(x)
                cell = with_interval(*interval(values)) if len(values) == len(runs) else "-"
            if paper is not None:
                cell += f"; {paper_text(paper)}"
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def totals(out, spec):
    """fidelity.json's totals, as fidelity.md's first line, and per
    scenario: paper numbers, within 2x, groups (two or more rows judged
    together: scenario, source, figure, flow, metric, bound, reference)
    and the groups whose every row keeps the paper's ordering."""
    if spec != "by-scenario":
        raise MarkerError(f"unknown fidelity block {spec!r} (allowed: by-scenario)")
    per = {}
    groups = {}
    for r in out.fidelity:
        n = per.setdefault(r["scenario"], [0, 0])
        n[0] += 1
        n[1] += bool(r["within_2x"])
        if r["ordering_kept"] is not None:
            key = (r["scenario"], r["source"], r["figure"], r.get("flow"), r["metric"])
            key += (r.get("within"), r.get("relative_to"))
            groups[key] = groups.get(key, True) and r["ordering_kept"]
    kept = {}
    for key, ok in groups.items():
        k = kept.setdefault(key[0], [0, 0])
        k[0] += 1
        k[1] += ok
    rows, within = len(out.fidelity), sum(n[1] for n in per.values())
    lines = [
        f"{within} of {rows} paper numbers within 2x; {sum(groups.values())} of "
        f"{len(groups)} groups keep the paper's ordering.",
        "",
        "| scenario | paper numbers | within 2x | orderings kept |",
        "|---|---|---|---|",
    ]
    for scenario, (n, w) in per.items():
        g, k = kept.get(scenario, (0, 0))
        lines.append(f"| `{scenario}` | {n} | {w} | {f'{k} of {g}' if g else '-'} |")
    return lines


def rewrite(page_text, out, page_name):
    """The page with every table block rewritten, or MarkerError."""
    lines = page_text.split("\n")
    result = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = MARKER.match(line.strip())
        if line.strip() == END:
            raise MarkerError(f"{page_name}:{i + 1}: `{END}` without its table marker")
        if not m:
            result.append(line)
            i += 1
            continue
        start = i
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == END), None)
        inner = next(
            (j for j in range(i + 1, end or len(lines)) if MARKER.match(lines[j].strip())), None
        )
        if end is None or inner is not None:
            raise MarkerError(f"{page_name}:{start + 1}: table marker without `{END}`")
        try:
            rows = table(out, m.group(2)) if m.group(1) == "table" else totals(out, m.group(2))
        except MarkerError as e:
            raise MarkerError(f"{page_name}:{start + 1}: {e}") from e
        result.append(line)
        result.extend(rows)
        result.append(lines[end])
        i = end + 1
    return "\n".join(result)


def main(argv):
    if len(argv) not in (2, 3) or argv[1].startswith("-"):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    page = Path(argv[2] if len(argv) == 3 else "docs/reproduction.md")
    try:
        out = Output(argv[1])
        text = rewrite(page.read_text(), out, str(page))
    except MarkerError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {page}: {e}", file=sys.stderr)
        return 2
    page.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
