"""``tcran.run``: one scenario, every variant, results as DataFrames."""

from __future__ import annotations

import io
import json
import os
import sys
from functools import cached_property
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import polars as pl

from . import _native, _tables
from ._scenario import Scenario, Sets, overrides, source, variant_list

#: The time series every run records, by name (``Run.series(name)``):
#: the CSV files the command line writes per variant.
SERIES: tuple[str, ...] = tuple(_native.series_names())


class Run:
    """What :func:`run` produced.

    Attributes are computed on first use from the same results the command
    line writes (``summary.json`` and the CSV series).
    """

    def __init__(self, outcome: "_native.Outcome") -> None:
        self._outcome = outcome

    @cached_property
    def summary(self) -> dict[str, Any]:
        """The summary JSON as a dict (docs/simulator.md): ``scenario``,
        ``seed``, ``sim_s`` (simulated seconds), ``wall_s`` (wall-clock
        seconds the run took) and one entry per variant under
        ``variants``."""
        return json.loads(self._outcome.summary_json())

    @property
    def variants(self) -> list[str]:
        """The variants that ran, in order."""
        return [v["name"] for v in self.summary["variants"]]

    @cached_property
    def flows(self) -> pl.DataFrame:
        """One row per variant x flow: throughput (Mbit/s), one-way delay
        distribution (ms), ping RTT and web page load time (ms, null for
        other flows), packet ledger, and the variant's PRB utilisation
        (0..1) and RLC occupancy (bytes) and sojourn (ms)."""
        return _tables.flows(self.summary)

    @cached_property
    def layers(self) -> pl.DataFrame:
        """One row per variant x flow: the one-way delay split by layer
        (core, UPF queue, TC queues, RLC, air), each as count, mean, p50,
        p95, p99 and max in ms."""
        return _tables.layers(self.summary)

    @cached_property
    def drops(self) -> pl.DataFrame:
        """Drops and CE marks over the whole run: one row per variant,
        ``what`` (drop or mark), layer and reason, with the packet count."""
        return _tables.drops(self.summary)

    def series(self, name: str) -> pl.DataFrame:
        """The time series ``name`` (one of :data:`SERIES`) of every
        variant, with a ``variant`` column first: the CSV files of
        ``tcran run`` (columns and units in docs/report.md; times ``t_s``
        in seconds from the start of the run, warm-up included; a bin
        without a sample is null)."""
        if name not in _tables.SERIES_SCHEMA:
            raise KeyError(f"no series {name!r}: the series are {', '.join(SERIES)}")
        schema = _tables.SERIES_SCHEMA[name]
        frames = []
        for variant, csv in self._outcome.series_csv(name):
            df = pl.read_csv(io.BytesIO(csv), schema=schema)
            frames.append(df.select(pl.lit(variant, dtype=pl.String).alias("variant"), pl.all()))
        if not frames:
            return pl.DataFrame(schema={"variant": pl.String, **schema})
        return pl.concat(frames, how="vertical")

    def write(self, dir: Union[str, "os.PathLike[str]"]) -> Path:
        """Writes what ``tcran run --out DIR`` writes: ``summary.json``, one
        directory of CSV series per variant and ``report.html``. Returns
        the directory.

        As on the command line, ``dir`` then holds this run only: an
        earlier tcran output there is replaced as a whole, and a directory
        that is not empty and not a tcran output is refused
        (:class:`tcran.ConfigError`), nothing deleted."""
        self._outcome.write(os.fspath(dir))
        return Path(dir)

    def table(self) -> str:
        """The table ``tcran run`` prints."""
        return self._outcome.table()

    def __repr__(self) -> str:
        return self.table()


def run(
    scenario: Scenario,
    *,
    seed: Optional[int] = None,
    set: Sets = None,
    variants: Union[str, Sequence[str], None] = None,
    progress: bool = True,
) -> Run:
    """Runs every variant of a scenario, as ``tcran run`` does.

    ``scenario`` is a path (``.toml``/``.json``), a TOML string or a dict.
    ``seed`` replaces the scenario's seed; ``set`` changes it first (the
    command line's ``--set`` paths: ``["duration=20s"]`` or
    ``{"duration": "20s", "ues[0].channel.mcs": 10}``); ``variants`` runs
    only the variants named (``"default"`` names the single run of a
    scenario without variants). ``progress`` draws the command line's
    progress bar on stderr when it is a terminal.

    The GIL is released while the simulation runs. A bad scenario raises
    :class:`tcran.ConfigError` with the command line's one-line message.
    """
    src = source(scenario)
    plain, typed = overrides(set)
    show = bool(progress) and sys.stderr is not None and sys.stderr.isatty()
    job = (*src.args(), plain, typed, seed, variant_list(variants))
    outcome = _native.run(job, progress=show)
    return Run(outcome)


def validate(scenario: Scenario, *, set: Sets = None) -> list[str]:
    """Checks a scenario as ``tcran validate`` does, without running it;
    returns the names of the runs it would make. Raises
    :class:`tcran.ConfigError` with the command line's message."""
    src = source(scenario)
    plain, typed = overrides(set)
    return _native.validate((*src.args(), plain, typed, None, None))


def stages() -> dict[str, Any]:
    """Every built-in stage kind with its parameters, units, defaults and
    references: ``tcran stages --json`` as a dict."""
    return json.loads(_native.stages_json())
