"""tcran.run, tcran.validate and tcran.stages against the command line."""

from __future__ import annotations

import json
import subprocess
import threading
import time
import tomllib
from pathlib import Path

import polars as pl
import pytest

import tcran

from conftest import ROOT, SMALL, cli_error


def test_run_gives_summary_and_one_row_per_variant_and_flow(small: Path) -> None:
    r = tcran.run(small, progress=False)
    s = r.summary
    assert s["scenario"] == "small"
    assert s["seed"] == 1
    assert s["sim_s"] == 2.0
    assert r.variants == ["vanilla", "paced"]
    assert r.flows.shape[0] == 2 * 3
    assert r.flows["variant"].to_list() == ["vanilla"] * 3 + ["paced"] * 3
    assert r.flows["flow"].to_list() == ["bulk", "game", "ping"] * 2
    # The frame holds the summary's numbers, not a copy made elsewhere.
    v = s["variants"][1]
    row = r.flows.row(4, named=True)
    assert row["throughput_mbps"] == v["flows"][1]["throughput_mbps"]
    assert row["delay_p95_ms"] == v["flows"][1]["delay_ms"]["p95"]
    assert row["prb_utilization"] == v["prb_utilization"]
    # Only the ping has an RTT.
    assert r.flows.filter(pl.col("flow") == "ping")["rtt_mean_ms"].null_count() == 0
    assert r.flows.filter(pl.col("flow") != "ping")["rtt_mean_ms"].null_count() == 4
    # Layers add up to the one-way delay (docs/simulator.md), per flow.
    lay = r.layers
    assert lay.shape[0] == 6
    total = sum(lay[f"{layer}_mean_ms"] for layer in ("core", "upf", "tc", "rlc", "air"))
    for got, want in zip(total.to_list(), r.flows["delay_mean_ms"].to_list()):
        assert got == pytest.approx(want, rel=1e-6, abs=1e-6)
    assert r.flows.to_pandas().shape == (6, len(r.flows.columns))


def test_outputs_are_the_command_lines_files(small: Path, tmp_path: Path, tcran_bin: Path) -> None:
    r = tcran.run(small, progress=False)
    ours = r.write(tmp_path / "py")
    theirs = tmp_path / "cli"
    subprocess.run(
        [str(tcran_bin), "run", str(small), "--out", str(theirs), "--json"],
        check=True,
        capture_output=True,
    )
    a = json.loads((ours / "summary.json").read_text())
    b = json.loads((theirs / "summary.json").read_text())
    a.pop("wall_s"), b.pop("wall_s")
    assert a == b
    files = sorted(p.relative_to(theirs) for p in theirs.rglob("*.csv"))
    assert len(files) == 2 * len(tcran.SERIES)
    for f in files:
        assert (ours / f).read_bytes() == (theirs / f).read_bytes(), f
    html = (ours / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") or html.startswith("<!doctype html>")
    assert "paced" in html


def test_every_series_is_the_csv_with_a_variant_column(small: Path, tmp_path: Path) -> None:
    r = tcran.run(small, progress=False)
    out = r.write(tmp_path / "out")
    for name in tcran.SERIES:
        df = r.series(name)
        assert df.columns[0] == "variant"
        for v in r.variants:
            part = df.filter(pl.col("variant") == v).drop("variant")
            csv = pl.read_csv(out / v / f"{name}.csv", schema=dict(part.schema))
            assert part.equals(csv), name
    slots = r.series("slots")
    # 2 s of 1-ms slots (15 kHz) per variant.
    assert slots.height == 2 * 2000
    assert slots["t_s"].max() == pytest.approx(1.999)
    with pytest.raises(KeyError, match="no series 'nope'"):
        r.series("nope")


def test_same_seed_same_frames_other_seed_other_frames(small: Path) -> None:
    a = tcran.run(small, seed=7, progress=False)
    b = tcran.run(small, seed=7, progress=False)
    c = tcran.run(small, seed=8, progress=False)
    assert a.flows.equals(b.flows)
    assert a.series("flows").equals(b.series("flows"))
    assert a.summary["seed"] == 7
    assert not a.flows.equals(c.flows)


def test_path_toml_string_and_dict_run_the_same(small: Path) -> None:
    a = tcran.run(small, progress=False).flows
    b = tcran.run(SMALL, progress=False).flows
    c = tcran.run(tomllib.loads(SMALL), progress=False).flows
    assert a.equals(b) and a.equals(c)
    assert tcran.run(SMALL, progress=False).summary["scenario"] == "string"


def test_sets_and_variants(small: Path) -> None:
    r = tcran.run(small, set=["duration=1s", "ues[0].channel.mcs=20"], variants="paced", progress=False)
    assert r.summary["sim_s"] == 1.0
    assert r.variants == ["paced"]
    typed = tcran.run(small, set={"duration": "1s", "ues[0].channel": {"kind": "mcs", "mcs": 20}},
                      variants=["paced"], progress=False)
    assert typed.flows.equals(r.flows)
    with pytest.raises(tcran.ConfigError) as e:
        tcran.run(small, variants=["paced", "nope"], progress=False)
    assert str(e.value) == f"{small}: variants: no variant named `nope` (the scenario has: vanilla, paced)"


@pytest.mark.parametrize(
    "edit, sets",
    [
        (lambda t: t.replace('duration = "2s"', 'durration = "2s"'), []),  # wrong key
        (lambda t: t.replace('duration = "2s"', 'duration = "2 parsecs"'), []),  # wrong unit
        (lambda t: t.replace("mcs = 12", "mcs = 99"), []),  # out of range
        (lambda t: t, ["ues[3].channel.mcs=10"]),  # bad --set path
        (lambda t: t, ["duration=fast"]),  # bad --set value
    ],
)
def test_bad_input_raises_the_command_lines_message(tmp_path: Path, tcran_bin: Path, edit, sets) -> None:
    p = tmp_path / "bad.toml"
    p.write_text(edit(SMALL))
    args = [a for s in sets for a in ("--set", s)]
    want = cli_error(tcran_bin, "run", str(p), "--out", str(tmp_path / "o"), *args)
    with pytest.raises(tcran.ConfigError) as e:
        tcran.run(p, set=sets, progress=False)
    assert str(e.value) == want
    # (`tcran validate` would read a document without `duration` as a
    # pipeline; tcran.validate always reads a scenario, like `tcran run`.)
    with pytest.raises(tcran.ConfigError) as e:
        tcran.validate(p, set=sets)
    assert str(e.value) == want


def test_missing_file_is_the_command_lines_message(tmp_path: Path, tcran_bin: Path) -> None:
    p = tmp_path / "missing.toml"
    with pytest.raises(tcran.ConfigError) as e:
        tcran.run(p, progress=False)
    assert str(e.value) == cli_error(tcran_bin, "run", str(p))
    assert isinstance(e.value, ValueError)


def test_unwritable_output_is_an_os_error(small: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = tcran.run(small, variants="vanilla", progress=False)
    with pytest.raises(tcran.OutputError) as e:
        r.write(blocker / "out")
    assert str(blocker / "out") in str(e.value)


def test_a_directory_holds_one_run(small: Path, tmp_path: Path) -> None:
    # As `tcran run --out`: a second run into the same directory replaces
    # the first as a whole, and a folder tcran did not write is refused.
    out = tmp_path / "out"
    tcran.run(small, progress=False).write(out)
    tcran.run(small, variants="vanilla", progress=False).write(out)
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["figures", "vanilla"]
    # No staging directory is left beside it.
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(tcran.ConfigError, match="mine"):
        tcran.run(small, variants="vanilla", progress=False).write(mine)
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]


def test_the_gil_is_released_while_rust_runs(small: Path) -> None:
    # 200 s simulated takes a good fraction of a second (20 s took 0.05 s on
    # an idle machine, too short to tell). A Python thread
    # keeps looping meanwhile: were the GIL held, it would stop for the
    # whole run, leaving a gap as long as the run between two iterations.
    done = threading.Event()
    result = {}

    def work() -> None:
        t = time.perf_counter()
        result["run"] = tcran.run(small, set={"duration": "200s"}, progress=False)
        result["wall"] = time.perf_counter() - t
        done.set()

    th = threading.Thread(target=work)
    # From before start(): the new thread may run at once while this one
    # waits in start() (a run holding the GIL would end before the loop).
    last = time.perf_counter()
    th.start()
    gap = 0.0
    while True:
        now = time.perf_counter()
        gap, last = max(gap, now - last), now
        if done.is_set():
            break
    th.join()
    assert result["wall"] > 0.1
    assert gap < result["wall"] / 4, (gap, result["wall"])


def test_stages_are_the_command_lines(tcran_bin: Path) -> None:
    out = subprocess.run([str(tcran_bin), "stages", "--json"], capture_output=True, text=True, check=True)
    assert tcran.stages() == json.loads(out.stdout)
    kinds = {s["stage"]: [k["kind"] for k in s["kinds"]] for s in tcran.stages()["stages"]}
    assert "jit" in kinds["pacer"]


def test_validate_names_the_runs(small: Path) -> None:
    assert tcran.validate(small) == ["vanilla", "paced"]
    assert tcran.validate(ROOT / "scenarios" / "demo.toml")[0] == "vanilla"
