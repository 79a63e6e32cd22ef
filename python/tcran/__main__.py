"""``python -m tcran sweep SWEEP.toml [--backend B] [--jobs N] [--store DIR]
[--address A] [--out FILE.parquet]``: runs a sweep file (see
:func:`tcran.sweep.main_sweep`) and prints the table; errors are one line
on stderr with exit code 2, like the ``tcran`` command."""

from __future__ import annotations

import argparse
import sys

from . import ConfigError
from .sweep import main_sweep


def main(argv: "list[str] | None" = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tcran", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    sw = sub.add_parser("sweep", help="run a sweep file (TOML)")
    sw.add_argument("file")
    sw.add_argument("--backend", choices=["local", "dask", "ray"])
    sw.add_argument("--jobs", type=int)
    sw.add_argument("--store")
    sw.add_argument("--address")
    sw.add_argument("--out", help="also write the table to this Parquet file")
    sw.add_argument("--no-progress", action="store_true")
    sw.add_argument("--mix", action="store_true", help="let the store hold runs of other base settings")
    a = ap.parse_args(argv)
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
    except (ConfigError, ValueError, TypeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if a.out:
        df.write_parquet(a.out)
    print(df)
    return 0


if __name__ == "__main__":
    sys.exit(main())
