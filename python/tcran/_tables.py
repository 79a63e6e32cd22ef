"""Tidy tables from the summary JSON: one row per variant x flow.

Units are in the column names: ``_ms`` milliseconds, ``_mbps`` Mbit/s
(IP bytes delivered to the UE per second, after warm-up), ``_bytes``
bytes, ``prb_utilization`` a fraction 0..1 (PRBs used / available in DL
slots after warm-up).
"""

from __future__ import annotations

from typing import Any

import polars as pl

_STATS = ("count", "mean", "p50", "p95", "p99", "max")
LAYERS = ("core", "upf", "tc", "rlc", "air")


def _dist(prefix: str) -> dict[str, Any]:
    return {
        f"{prefix}_{s}" + ("" if s == "count" else "_ms"): (pl.UInt64 if s == "count" else pl.Float64)
        for s in _STATS
    }


FLOW_SCHEMA: dict[str, Any] = {
    "variant": pl.String,
    "flow": pl.String,
    "kind": pl.String,
    "throughput_mbps": pl.Float64,
    **_dist("delay"),
    **_dist("rtt"),
    **_dist("page"),
    "lost_packets": pl.UInt64,
    "created_packets": pl.UInt64,
    "delivered_packets": pl.UInt64,
    "in_flight_packets": pl.UInt64,
    "prb_utilization": pl.Float64,
    "rlc_mean_bytes": pl.Float64,
    "rlc_max_bytes": pl.UInt64,
    "rlc_mean_sojourn_ms": pl.Float64,
}

LAYER_SCHEMA: dict[str, Any] = {
    "variant": pl.String,
    "flow": pl.String,
    **{k: v for layer in LAYERS for k, v in _dist(layer).items()},
}

DROP_SCHEMA: dict[str, Any] = {
    "variant": pl.String,
    "what": pl.String,
    "layer": pl.String,
    "reason": pl.String,
    "count": pl.UInt64,
}


def _put(row: dict[str, Any], prefix: str, d: Any) -> None:
    for s in _STATS:
        key = f"{prefix}_{s}" + ("" if s == "count" else "_ms")
        row[key] = None if d is None else d[s]


def flow_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for v in summary["variants"]:
        rlc = v["rlc"]
        for f in v["flows"]:
            row: dict[str, Any] = {
                "variant": v["name"],
                "flow": f["name"],
                "kind": f["kind"],
                "throughput_mbps": f["throughput_mbps"],
            }
            _put(row, "delay", f["delay_ms"])
            _put(row, "rtt", f.get("rtt_ms"))
            _put(row, "page", f.get("page_ms"))
            for k in ("lost_packets", "created_packets", "delivered_packets", "in_flight_packets"):
                row[k] = f[k]
            row["prb_utilization"] = v["prb_utilization"]
            row["rlc_mean_bytes"] = rlc["mean_bytes"]
            row["rlc_max_bytes"] = rlc["max_bytes"]
            row["rlc_mean_sojourn_ms"] = rlc["mean_sojourn_ms"]
            rows.append(row)
    return rows


def flows(summary: dict[str, Any]) -> pl.DataFrame:
    return pl.DataFrame(flow_rows(summary), schema=FLOW_SCHEMA, orient="row")


def layers(summary: dict[str, Any]) -> pl.DataFrame:
    rows = []
    for v in summary["variants"]:
        for f in v["flows"]:
            row: dict[str, Any] = {"variant": v["name"], "flow": f["name"]}
            for layer in LAYERS:
                _put(row, layer, f["layers_ms"][layer])
            rows.append(row)
    return pl.DataFrame(rows, schema=LAYER_SCHEMA, orient="row")


def drops(summary: dict[str, Any]) -> pl.DataFrame:
    rows = []
    for v in summary["variants"]:
        for what, table in (("drop", v["drops"]), ("mark", v["marks"])):
            for layer, reasons in table.items():
                for reason, n in reasons.items():
                    rows.append(
                        {"variant": v["name"], "what": what, "layer": layer, "reason": reason, "count": n}
                    )
    return pl.DataFrame(rows, schema=DROP_SCHEMA, orient="row")


# The CSV series (crates/tcran-cli/src/series_csv.rs, columns in
# docs/report.md), typed: an empty field is a null, never a zero.
SERIES_SCHEMA: dict[str, dict[str, Any]] = {
    "slots": {
        "t_s": pl.Float64,
        "rlc_bytes": pl.UInt64,
        "capacity_bytes": pl.UInt64,
        "prbs_used": pl.UInt32,
        "prbs_available": pl.UInt32,
    },
    "flows": {
        "flow": pl.String,
        "kind": pl.String,
        "t_s": pl.Float64,
        "goodput_mbps": pl.Float64,
        "delay_ms": pl.Float64,
        "cwnd_bytes": pl.Float64,
        "srtt_ms": pl.Float64,
    },
    "delay_cdf": {"flow": pl.String, "delay_ms": pl.Float64, "fraction": pl.Float64},
    "layer_delay_cdf": {
        "flow": pl.String,
        "layer": pl.String,
        "delay_ms": pl.Float64,
        "fraction": pl.Float64,
    },
    "events": {
        "t_s": pl.Float64,
        "what": pl.String,
        "layer": pl.String,
        "reason": pl.String,
        "count": pl.UInt64,
    },
    "reconfigurations": {
        "t_s": pl.Float64,
        "by": pl.String,
        "rnti": pl.UInt16,
        "drb": pl.UInt8,
        "what": pl.String,
    },
}
