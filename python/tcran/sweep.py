"""``tcran.sweep``: a scenario over a grid of ``--set`` values and seeds,
on this machine's cores, a Dask cluster or a Ray cluster, with a
resumable Parquet store.

Every grid point is checked before the first run starts: a bad value
anywhere in the grid fails the sweep at once, naming each bad point,
instead of after the good points have run.

The store (``store=DIR``) holds one Parquet file per finished run
(``DIR/runs/<run id>.parquet``, the run's rows), the scenario text of its
runs (``DIR/scenarios/<scenario hash>.toml`` or ``.json``, as given, before
overrides)
and ``DIR/manifest.jsonl``, one line per finished run: run id, parameter
hash, the grid point, seed, the base settings (scenario hash, ``set``
overrides, variants) and their hash, tcran version and git commit, wall
time. A run is written to its file first and entered in the manifest
after, so a sweep killed at any moment loses only the runs that were
still going; run again, it skips every run the manifest lists.

A store holds the runs of one set of base settings: a sweep with another
scenario text, other ``set`` overrides or other variants into a store
that holds runs is refused, naming what differs, unless ``mix=True``
(then ``base_hash`` in the manifest tells the runs apart).

Every run is deterministic (same scenario, overrides and seed give the
same summary), so the rows do not depend on the backend or on the order
in which runs finish: the table comes back in grid order, seeds inside.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Optional, Union

import polars as pl

from . import _native, _tables
from ._scenario import Scenario, Sets, Source, overrides, source, variant_list

#: Columns every sweep row has before its grid columns.
KEY_COLUMNS = ("run_id", "param_hash", "seed")

Grid = Mapping[str, Union[Sequence[Any], Mapping[str, Any]]]


def _canonical(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def _cell(v: Any) -> Any:
    """A grid value as a table cell: scalars as they are, tables as JSON."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return _canonical(v)


def _points(grid: Optional[Grid]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(labels, values)`` of every grid point, in order: the product of
    the keys' values, the last key varying fastest. A key's values are a
    list, or a dict {label: value} whose labels name them in the table."""
    if not grid:
        return [({}, {})]
    axes = []
    for key, vals in grid.items():
        if isinstance(vals, Mapping):
            axes.append([(key, str(label), v) for label, v in vals.items()])
        elif isinstance(vals, (str, bytes)) or not hasattr(vals, "__iter__"):
            raise TypeError(f"grid[{key!r}]: expected a list of values or a dict of labelled values")
        else:
            # numpy scalars become Python ones (JSON and table cells).
            vs = [v.item() if hasattr(v, "item") else v for v in vals]
            axes.append([(key, _cell(v), v) for v in vs])
        if not axes[-1]:
            raise ValueError(f"grid[{key!r}]: no values")
    out = []
    for combo in itertools.product(*axes):
        out.append(({k: lab for k, lab, _ in combo}, {k: v for k, _, v in combo}))
    return out


def _seeds(seeds: Union[int, Sequence[int]]) -> list[int]:
    if isinstance(seeds, int):
        if seeds < 1:
            raise ValueError(f"seeds = {seeds}: at least one seed")
        return list(range(1, seeds + 1))
    out = [int(s) for s in seeds]
    if not out:
        raise ValueError("seeds: no seeds")
    return out


class _Progress:
    """tqdm's bar when it is installed (notebooks included), else a line
    on stderr when it is a terminal."""

    def __init__(self, total: int, done: int, show: bool) -> None:
        self.total, self.done, self.bar = total, done, None
        self.show = show
        self.t0 = time.monotonic()
        if not show:
            return
        try:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, initial=done, unit="run", desc="tcran sweep")
        except ImportError:
            self.show = sys.stderr is not None and sys.stderr.isatty()

    def step(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
        elif self.show:
            rate = self.done / max(time.monotonic() - self.t0, 1e-9)
            sys.stderr.write(f"\rtcran sweep: {self.done}/{self.total} runs, {rate:.1f} runs/s")
            sys.stderr.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.show:
            sys.stderr.write("\n")


class Store:
    """The Parquet store of a sweep (see the module documentation)."""

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        self.path = Path(path)
        (self.path / "runs").mkdir(parents=True, exist_ok=True)
        self.manifest = self.path / "manifest.jsonl"

    def admit(self, base: dict[str, Any], scenario: "Source", mix: bool) -> None:
        """Checks that the store's runs were made with the base settings
        ``base`` (unless ``mix``), then keeps the scenario's text (a TOML
        or JSON document, inlined)."""
        if not mix:
            mine = _base_hash(base)
            for e in self.done().values():
                if e.get("base_hash") == mine:
                    continue
                theirs = {k: e.get(k) for k in base}
                differ = [
                    f"{k} {_canonical(theirs[k])} there, {_canonical(base[k])} now"
                    for k in base
                    if theirs[k] != base[k]
                ]
                raise _native.ConfigError(
                    f"store {self.path}: holds runs made with other base settings "
                    f"({'; '.join(differ) or 'made by an older tcran'}); "
                    "sweep into another store, or pass mix=True to keep both"
                )
        scenarios = self.path / "scenarios"
        scenarios.mkdir(exist_ok=True)
        kept = scenarios / f"{base['scenario_hash']}.{scenario.kind}"
        if not kept.exists():
            tmp = kept.with_suffix(".tmp")
            tmp.write_text(scenario.text, encoding="utf-8")
            os.replace(tmp, kept)

    def done(self) -> dict[str, dict[str, Any]]:
        """The runs the manifest lists whose file is there, by run id. A
        line cut short by a crash is not a run."""
        out: dict[str, dict[str, Any]] = {}
        if not self.manifest.exists():
            return out
        with self.manifest.open(encoding="utf-8") as f:
            for line in f:
                try:
                    e = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if (self.path / e["file"]).exists():
                    out[e["run_id"]] = e
        return out

    def put(self, entry: dict[str, Any], rows: pl.DataFrame) -> None:
        rel = f"runs/{entry['run_id']}.parquet"
        tmp = self.path / (rel + ".tmp")
        rows.write_parquet(tmp)
        os.replace(tmp, self.path / rel)
        line = json.dumps({**entry, "file": rel}, sort_keys=True) + "\n"
        with self.manifest.open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def read(self, run_id: str) -> pl.DataFrame:
        return pl.read_parquet(self.path / "runs" / f"{run_id}.parquet")


def _base_hash(base: dict[str, Any]) -> str:
    return hashlib.sha256(_canonical(base).encode()).hexdigest()[:16]


def _rows(summary: dict[str, Any], key: dict[str, Any], labels: dict[str, Any]) -> pl.DataFrame:
    df = _tables.flows(summary)
    front = [pl.lit(key[k]).alias(k) for k in KEY_COLUMNS]
    front += [pl.lit(v).alias(k) for k, v in labels.items()]
    return df.select(*front, pl.all())


def _run_batch(batch: list[tuple[int, tuple]]) -> list[tuple[int, str]]:
    """Runs ``(index, job)`` pairs one after the other (a Dask or Ray
    task); returns ``(index, summary JSON)``."""
    out: list[tuple[int, str]] = []
    jobs = [job for _, job in batch]
    index = [i for i, _ in batch]
    _native.run_many(jobs, 1, lambda k, js: out.append((index[k], js)))
    return out


def _batches(todo: list[tuple[int, tuple]], size: int) -> list[list[tuple[int, tuple]]]:
    return [todo[i : i + size] for i in range(0, len(todo), size)]


def _local(todo, jobs, done_cb):
    index = [i for i, _ in todo]
    _native.run_many([job for _, job in todo], jobs or 0, lambda k, js: done_cb(index[k], js))


def _dask(todo, batch, address, done_cb):
    from distributed import Client, as_completed

    own = not isinstance(address, Client)
    client = Client(address) if own else address
    try:
        size = batch or max(1, math.ceil(len(todo) / (4 * max(1, len(client.nthreads())))))
        futures = [client.submit(_run_batch, b, pure=False) for b in _batches(todo, size)]
        for fut in as_completed(futures):
            for i, js in fut.result():
                done_cb(i, js)
    finally:
        if own:
            client.close()


def _ray(todo, batch, address, done_cb):
    import ray

    own = not ray.is_initialized()
    if own:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        size = batch or max(1, math.ceil(len(todo) / (4 * cpus)))
        task = ray.remote(num_cpus=1)(_run_batch)
        pending = [task.remote(b) for b in _batches(todo, size)]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for i, js in ray.get(ready[0]):
                done_cb(i, js)
    finally:
        if own:
            ray.shutdown()


def sweep(
    scenario: Scenario,
    grid: Optional[Grid] = None,
    *,
    seeds: Union[int, Sequence[int]] = 1,
    backend: str = "local",
    jobs: Optional[int] = None,
    store: Union[str, "os.PathLike[str]", None] = None,
    set: Sets = None,
    variants: Union[str, Sequence[str], None] = None,
    address: Any = None,
    batch: Optional[int] = None,
    progress: bool = True,
    mix: bool = False,
) -> pl.DataFrame:
    """Runs ``scenario`` for every point of ``grid`` and every seed; returns
    one tidy DataFrame, one row per run x variant x flow.

    - ``grid``: ``{--set path: [values]}`` (or ``{path: {label: value}}``
      to name table values), e.g. ``{"ues[0].channel.path":
      ["builtin:thesis-pedestrian", "builtin:thesis-train"],
      "ues[0].drbs[0].pipeline.pacer.kind": ["bdp", "jit"]}``; the product
      of all keys runs.
    - ``seeds``: a count n (seeds 1..n) or a list of seeds.
    - ``backend``: ``"local"`` (a Rust thread pool, ``jobs`` threads,
      default one per core), ``"dask"`` (``address``: a
      ``distributed.Client`` or a scheduler address; None starts a local
      cluster) or ``"ray"`` (``address`` for ``ray.init``; None uses the
      running Ray or starts a local one). Dask and Ray run ``batch`` runs
      per task (default: about four tasks per core).
    - ``store``: a directory for the Parquet store; runs it already holds
      are not run again (resume after a crash or Ctrl-C). A store that
      holds runs of other base settings (scenario, ``set``, ``variants``)
      is refused unless ``mix`` is true.
    - ``set``, ``variants``: as for :func:`tcran.run`, applied to every run.

    Columns: ``run_id``, ``param_hash`` (the grid point and base overrides,
    hashed with the scenario), ``seed``, one column per grid key, then the
    columns of :attr:`tcran.Run.flows`.
    """
    if backend not in ("local", "dask", "ray"):
        raise ValueError(f"backend = {backend!r}: expected 'local', 'dask' or 'ray'")
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs = {jobs}: at least 1")
    src = source(scenario)
    plain, typed = overrides(set)
    only = variant_list(variants)
    # The scenario as given must be valid before anything runs (the
    # command line's messages, a missing file included).
    _native.validate((*src.args(), plain, typed, None, None))
    src = src.inline()
    scenario_hash = hashlib.sha256(src.text.encode()).hexdigest()[:16]
    points = _points(grid)
    seed_list = _seeds(seeds)
    base = {"scenario_hash": scenario_hash, "set": plain, "typed": typed, "variants": only}

    # Every grid point is checked before anything runs.
    bad = []
    for labels, values in points:
        point_typed = typed + [(k, json.dumps(v)) for k, v in values.items()]
        try:
            _native.validate((*src.args(), plain, point_typed, None, None))
        except _native.ConfigError as e:
            bad.append(f"  {_canonical(labels)}: {e}")
    if bad:
        raise _native.ConfigError(
            f"{len(bad)} of {len(points)} grid points are invalid, nothing ran:\n" + "\n".join(bad)
        )

    runs = []  # (key, labels, job)
    for labels, values in points:
        point_typed = typed + [(k, json.dumps(v)) for k, v in values.items()]
        param = _canonical(
            {"scenario": scenario_hash, "set": plain, "typed": typed, "point": values, "variants": only}
        )
        param_hash = hashlib.sha256(param.encode()).hexdigest()[:16]
        for seed in seed_list:
            key = {"run_id": f"{param_hash}-{seed}", "param_hash": param_hash, "seed": seed}
            job = (*src.args(), plain, point_typed, seed, only)
            runs.append((key, labels, values, job))

    st = Store(store) if store is not None else None
    if st is not None:
        st.admit(base, src, mix)
    stored = st.done() if st else {}
    results: dict[int, pl.DataFrame] = {}
    todo = []
    for i, (key, _, _, job) in enumerate(runs):
        if key["run_id"] in stored:
            continue
        todo.append((i, job))

    bar = _Progress(len(runs), len(runs) - len(todo), progress)

    def done_cb(i: int, summary_json: str) -> None:
        key, labels, values, _ = runs[i]
        summary = json.loads(summary_json)
        rows = _rows(summary, key, labels)
        if st is not None:
            entry = {
                **key,
                "params": values,
                "scenario": src.display or src.name,
                **base,
                "base_hash": _base_hash(base),
                "tcran_version": _native.VERSION,
                "git_commit": _native.GIT_COMMIT,
                "wall_s": summary["wall_s"],
                "backend": backend,
            }
            st.put(entry, rows)
        results[i] = rows
        bar.step()

    try:
        if todo:
            if backend == "local":
                _local(todo, jobs, done_cb)
            elif backend == "dask":
                _dask(todo, batch, address, done_cb)
            else:
                _ray(todo, batch, address, done_cb)
    finally:
        bar.close()

    frames = []
    for i, (key, _, _, _) in enumerate(runs):
        if i in results:
            frames.append(results[i])
        else:
            frames.append(st.read(key["run_id"]))  # type: ignore[union-attr]
    return pl.concat(frames, how="vertical_relaxed")


def main_sweep(path: Union[str, "os.PathLike[str]"], argv: dict[str, Any]) -> pl.DataFrame:
    """Runs a sweep file (TOML): ``scenario`` (a path relative to the file),
    ``[grid]``, ``seeds``, ``store``, ``backend``, ``jobs``, ``set``,
    ``variants``; ``argv`` overrides ``backend``, ``jobs`` and ``store``."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]

    p = Path(path)
    with p.open("rb") as f:
        spec = tomllib.load(f)
    allowed = {"scenario", "grid", "seeds", "store", "backend", "jobs", "set", "variants", "batch", "address", "mix"}
    for k in spec:
        if k not in allowed:
            raise _native.ConfigError(
                f"{path}: unknown key `{k}`, expected one of {', '.join(sorted(allowed))}"
            )
    if "scenario" not in spec:
        raise _native.ConfigError(f"{path}: missing key `scenario` (the scenario file, relative to this one)")
    scen = p.parent / spec["scenario"]
    store = argv.get("store") or spec.get("store")
    if store is not None and not os.path.isabs(store) and argv.get("store") is None:
        store = p.parent / store
    return sweep(
        scen,
        spec.get("grid"),
        seeds=spec.get("seeds", 1),
        backend=argv.get("backend") or spec.get("backend", "local"),
        jobs=argv.get("jobs") or spec.get("jobs"),
        store=store,
        set=spec.get("set"),
        variants=spec.get("variants"),
        address=argv.get("address") or spec.get("address"),
        batch=spec.get("batch"),
        progress=argv.get("progress", True),
        mix=bool(argv.get("mix") or spec.get("mix", False)),
    )

