"""The package's command line: ``python -m tcran sweep SWEEP.toml ...``, also
installed as ``tcran-sweep SWEEP.toml ...`` (and run by ``tcran sweep``).
It runs a sweep file (:func:`tcran.sweep.main_sweep`) and prints a summary
of the rows; errors are one line on stderr with exit code 2, like the
``tcran`` command's."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from . import ConfigError
from .sweep import KEY_COLUMNS, main_sweep

# What --help says: plain text (the module docstring above is for readers
# of the code).
SWEEP_HELP = (
    "Run a sweep file (TOML): every grid point x seed of a scenario through "
    "tcran, each finished run kept in a resumable Parquet store. Prints the "
    "number of rows, the store, and per grid point and variant the mean "
    "throughput and delay over its seeds and flows."
)
SWEEP_EPILOG = (
    "The sweep file names the scenario (relative to the file), [grid], seeds, "
    "store, backend and jobs; the options override it. Guide: docs/python.md, "
    "section Sweeps."
)


def _sweep_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("file", metavar="SWEEP.toml", help="the sweep file")
    ap.add_argument("--backend", choices=["local", "dask", "ray"], help="where the runs go [default: the file's, else local]")
    ap.add_argument("--jobs", type=int, metavar="N", help="local backend: runs at once [default: one per core]")
    ap.add_argument("--store", metavar="DIR", help="the Parquet store (resume skips what it holds) [default: the file's]")
    ap.add_argument("--address", metavar="A", help="dask: the scheduler (tcp://HOST:8786); ray: the head (HOST:6379)")
    ap.add_argument("--out", metavar="FILE.parquet", help="also write every row to this Parquet file")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    ap.add_argument("--mix", action="store_true", help="let the store hold runs of other base settings (scenario, set, variants)")


def _store_of(file: str, given: "str | None") -> "Path | None":
    """Where the rows are kept: ``--store``, else the file's ``store``
    (relative to the file), as :func:`tcran.sweep.main_sweep` resolves it."""
    if given is not None:
        return Path(given)
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    with open(file, "rb") as f:
        store = tomllib.load(f).get("store")
    if store is None:
        return None
    return Path(store) if os.path.isabs(store) else Path(file).parent / store


def summary(df: Any, store: "Path | None", out: "str | None", max_rows: int = 20) -> str:
    """The text printed after a sweep: its size, where its rows are, and a
    small table of the key metrics per grid point and variant (means over
    seeds and flows), at most ``max_rows`` rows."""
    import polars as pl

    cols = df.columns
    grid = cols[len(KEY_COLUMNS) : cols.index("variant")] if "variant" in cols else []
    runs = df["run_id"].n_unique() if "run_id" in cols else 0
    lines = [f"{df.height} rows x {df.width} columns from {runs} runs (one row per run, variant and flow)"]
    lines.append(f"store: {store}" if store is not None else "store: none (rows kept in memory only)")
    if out:
        lines.append(f"rows:  {out}")
    by = [*grid, "variant"] if "variant" in cols else grid
    metrics = [c for c in ("throughput_mbps", "delay_mean_ms", "delay_p95_ms") if c in cols]
    if by and metrics:
        table = (
            df.group_by(by, maintain_order=True)
            .agg(
                pl.col("seed").n_unique().alias("seeds"),
                *[pl.col(m).mean().round(2).alias(f"mean {m}") for m in metrics],
            )
        )
        with pl.Config(
            tbl_rows=max_rows,
            tbl_cols=-1,
            tbl_width_chars=160,
            fmt_str_lengths=40,
            tbl_hide_dataframe_shape=True,
            tbl_hide_column_data_types=True,
        ):
            lines.append("")
            lines.append("per grid point and variant, means over seeds and flows:")
            lines.append(str(table))
        if table.height > max_rows:
            lines.append(f"({table.height} rows; all of them with --out FILE.parquet, or in the store)")
    return "\n".join(lines)


def _run(a: argparse.Namespace) -> int:
    try:
        df = main_sweep(
            a.file,
            {
                "backend": a.backend,
                "jobs": a.jobs,
                "store": a.store,
                "address": a.address,
                "progress": not a.no_progress,
                "mix": a.mix,
            },
        )
        store = _store_of(a.file, a.store)
    except (ConfigError, ValueError, TypeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if a.out:
        df.write_parquet(a.out)
    print(summary(df, store, a.out))
    return 0


def sweep_command(argv: "list[str] | None" = None) -> int:
    """``tcran-sweep SWEEP.toml [...]``."""
    ap = argparse.ArgumentParser(prog="tcran-sweep", description=SWEEP_HELP, epilog=SWEEP_EPILOG)
    _sweep_arguments(ap)
    return _run(ap.parse_args(argv))


def main(argv: "list[str] | None" = None) -> int:
    """``python -m tcran sweep SWEEP.toml [...]``."""
    ap = argparse.ArgumentParser(prog="python -m tcran", description="tcran's Python commands.")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sw = sub.add_parser("sweep", help="run a sweep file (TOML)", description=SWEEP_HELP, epilog=SWEEP_EPILOG)
    _sweep_arguments(sw)
    return _run(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
