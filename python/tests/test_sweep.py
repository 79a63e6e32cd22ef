"""tcran.sweep: grid x seeds, the Parquet store, resume after a kill, and
the same rows on the local, Dask and Ray backends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import polars as pl
import pytest

import tcran
from tcran import _native

from conftest import SMALL, cli_error

GRID = {"ues[0].channel.mcs": [8, 20], "variants[1].pipeline.pacer.kind": ["bdp", "jit"]}


def test_rows_are_the_runs_of_every_point_and_seed(small: Path) -> None:
    df = tcran.sweep(small, GRID, seeds=2, progress=False)
    assert df.height == 4 * 2 * 2 * 3  # points x seeds x variants x flows
    assert df.columns[:5] == ["run_id", "param_hash", "seed", "ues[0].channel.mcs", "variants[1].pipeline.pacer.kind"]
    assert df["run_id"].n_unique() == 8 and df["param_hash"].n_unique() == 4
    # Grid order, the last key fastest, seeds inside.
    firsts = df.unique("run_id", keep="first", maintain_order=True)
    assert firsts["ues[0].channel.mcs"].to_list() == [8, 8, 8, 8, 20, 20, 20, 20]
    assert firsts["seed"].to_list() == [1, 2] * 4
    # One point's rows are exactly what tcran.run gives for it.
    one = tcran.run(small, seed=2, set={"ues[0].channel.mcs": 20, "variants[1].pipeline.pacer.kind": "jit"}, progress=False)
    got = df.filter((pl.col("ues[0].channel.mcs") == 20) & (pl.col("variants[1].pipeline.pacer.kind") == "jit") & (pl.col("seed") == 2))
    assert got.drop(got.columns[:5]).equals(one.flows)


def test_labelled_values_and_a_bad_grid_key(small: Path, tmp_path: Path, tcran_bin: Path) -> None:
    df = tcran.sweep(small, {"ues[0].channel": {"low": {"kind": "mcs", "mcs": 5}, "high": {"kind": "cqi", "cqi": 15}}}, progress=False)
    assert df["ues[0].channel"].unique(maintain_order=True).to_list() == ["low", "high"]
    with pytest.raises(tcran.ConfigError) as e:
        tcran.sweep(small, {"ues[4].channel.mcs": [1]}, progress=False)
    cli = cli_error(tcran_bin, "run", str(small), "--set", "ues[4].channel.mcs=1")
    assert str(e.value) == f'1 of 1 grid points are invalid, nothing ran:\n  {{"ues[4].channel.mcs":1}}: {cli}'


def test_a_bad_grid_value_fails_before_the_first_run(small: Path, tmp_path: Path, tcran_bin: Path, monkeypatch) -> None:
    calls = []
    monkeypatch.setattr(_native, "run_many", lambda jobs, *a: calls.append(len(jobs)))
    paths = ["builtin:thesis-pedestrian", "builtin:thesis-train", "builtin:thesis-trian"]
    with pytest.raises(tcran.ConfigError) as e:
        tcran.sweep(small, {"ues[0].channel.mcs": [8, 20], "ues[0].channel": {p[8:]: {"kind": "trace", "path": p} for p in paths}},
                    store=tmp_path / "store", progress=False)
    assert calls == [] and not (tmp_path / "store").exists()
    lines = str(e.value).splitlines()
    assert lines[0] == "2 of 6 grid points are invalid, nothing ran:"
    assert [line.split(": ", 1)[0] for line in lines[1:]] == [
        '  {"ues[0].channel":"thesis-trian","ues[0].channel.mcs":8}',
        '  {"ues[0].channel":"thesis-trian","ues[0].channel.mcs":20}',
    ]
    assert "thesis-trian" in lines[1].split(": ", 1)[1]


def test_a_store_keeps_one_base_setting_unless_told(small: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    grid = {"ues[0].channel.mcs": [8, 20]}
    tcran.sweep(small, grid, set={"duration": "2s"}, store=store, progress=False)
    with pytest.raises(tcran.ConfigError) as e:
        tcran.sweep(small, grid, set={"duration": "3s"}, store=store, progress=False)
    assert str(e.value).startswith(f"store {store}: holds runs made with other base settings (typed ")
    assert "sweep into another store, or pass mix=True" in str(e.value)
    assert len((store / "manifest.jsonl").read_text().splitlines()) == 2
    tcran.sweep(small, grid, set={"duration": "3s"}, store=store, progress=False, mix=True)
    entries = [json.loads(line) for line in (store / "manifest.jsonl").read_text().splitlines()]
    assert len(entries) == 4 and len({e["base_hash"] for e in entries}) == 2
    # Each run says how it was made: the overrides, and the scenario text.
    assert {json.dumps(e["typed"]) for e in entries} == {'[["duration", "\\"2s\\""]]', '[["duration", "\\"3s\\""]]'}
    kept = store / "scenarios" / f"{entries[0]['scenario_hash']}.toml"
    assert kept.read_text() == small.read_text()


def test_store_resume_skips_what_is_stored(small: Path, tmp_path: Path, monkeypatch) -> None:
    store = tmp_path / "store"
    first = tcran.sweep(small, GRID, seeds=2, store=store, progress=False)
    lines = (store / "manifest.jsonl").read_text().splitlines()
    assert len(lines) == 8
    e = json.loads(lines[0])
    assert e["tcran_version"] == tcran.VERSION and e["git_commit"] == tcran.GIT_COMMIT
    assert set(e) >= {"run_id", "param_hash", "seed", "params", "scenario_hash", "file", "wall_s"}
    calls = []
    real = _native.run_many
    monkeypatch.setattr(_native, "run_many", lambda jobs, *a: (calls.append(len(jobs)), real(jobs, *a)))
    again = tcran.sweep(small, GRID, seeds=2, store=store, progress=False)
    assert calls == [] and again.equals(first)
    more = tcran.sweep(small, GRID, seeds=3, store=store, progress=False)
    assert calls == [4]  # only seed 3 of each point ran
    assert more.filter(pl.col("seed") < 3).sort("run_id", "variant", "flow").equals(first.sort("run_id", "variant", "flow"))


KILLED = """
import sys, tcran
tcran.sweep(sys.argv[1], {{"ues[0].channel.mcs": list(range(5, 17))}}, seeds=1, jobs=1,
            set={{"duration": "10s"}}, store=sys.argv[2], progress=False)
"""


def test_a_killed_sweep_resumes_without_recomputing(small: Path, tmp_path: Path, monkeypatch) -> None:
    store = tmp_path / "store"
    manifest = store / "manifest.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", KILLED.format(), str(small), str(store)])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if manifest.exists() and len(manifest.read_text().splitlines()) >= 3:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    stored = tcran.Store(store).done()
    assert 3 <= len(stored) < 12, len(stored)
    before = {k: os.stat(store / e["file"]).st_mtime_ns for k, e in stored.items()}
    calls = []
    real = _native.run_many
    monkeypatch.setattr(_native, "run_many", lambda jobs, *a: (calls.append(len(jobs)), real(jobs, *a)))
    grid = {"ues[0].channel.mcs": list(range(5, 17))}
    df = tcran.sweep(small, grid, set={"duration": "10s"}, store=store, progress=False)
    assert calls == [12 - len(stored)]
    assert {k: os.stat(store / e["file"]).st_mtime_ns for k, e in stored.items()} == before
    fresh = tcran.sweep(small, grid, set={"duration": "10s"}, progress=False)
    assert df.equals(fresh)


def test_dask_gives_the_same_rows(small: Path) -> None:
    distributed = pytest.importorskip("distributed")
    local = tcran.sweep(small, GRID, seeds=2, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            got = tcran.sweep(small, GRID, seeds=2, backend="dask", address=client, batch=3, progress=False)
    assert got.equals(local)


def test_ray_gives_the_same_rows(small: Path) -> None:
    ray = pytest.importorskip("ray")
    local = tcran.sweep(small, GRID, seeds=2, progress=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        got = tcran.sweep(small, GRID, seeds=2, backend="ray", batch=3, progress=False)
    finally:
        ray.shutdown()
    assert got.equals(local)


def test_sweep_file_on_the_command_line(small: Path, tmp_path: Path, tcran_bin: Path) -> None:
    f = tmp_path / "sweep.toml"
    f.write_text(textwrap.dedent("""
        scenario = "small.toml"
        seeds = 2
        store = "store"
        [grid]
        "ues[0].channel.mcs" = [8, 20]
    """))
    out = tmp_path / "rows.parquet"
    r = subprocess.run([sys.executable, "-m", "tcran", "sweep", str(f), "--out", str(out), "--no-progress"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert pl.read_parquet(out).equals(tcran.sweep(small, {"ues[0].channel.mcs": [8, 20]}, seeds=2, progress=False))
    assert len((tmp_path / "store" / "manifest.jsonl").read_text().splitlines()) == 4
    # `tcran sweep` hands the same arguments to this Python: the same rows,
    # all of them read back from the store.
    env = {**os.environ, "TCRAN_PYTHON": sys.executable}
    out2 = tmp_path / "rows-cli.parquet"
    r = subprocess.run([str(tcran_bin), "sweep", str(f), "--out", str(out2), "--no-progress"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert pl.read_parquet(out2).equals(pl.read_parquet(out))
    assert len((tmp_path / "store" / "manifest.jsonl").read_text().splitlines()) == 4
    f.write_text('scenario = "small.toml"\nseedz = 2\n')
    r = subprocess.run([sys.executable, "-m", "tcran", "sweep", str(f)], capture_output=True, text=True)
    assert r.returncode == 2
    want = f"error: {f}: unknown key `seedz`, expected one of address, backend, batch, grid, jobs, mix, scenario, seeds, set, store, variants"
    assert r.stderr.strip() == want
    r = subprocess.run([str(tcran_bin), "sweep", str(f)], capture_output=True, text=True, env=env)
    assert (r.returncode, r.stderr.strip()) == (2, want)
