"""The package's command line: plain help under its own name, and a
readable summary after a sweep instead of a truncated dump of the frame."""

from __future__ import annotations

import subprocess
import sys

import polars as pl
import pytest

from tcran.__main__ import summary, sweep_command


def test_help_is_plain_text_under_the_name_it_was_called_by(capsys):
    r = subprocess.run([sys.executable, "-m", "tcran", "sweep", "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    assert r.stdout.startswith("usage: python -m tcran sweep")
    with pytest.raises(SystemExit) as e:
        sweep_command(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: tcran-sweep")
    for text in (r.stdout, out):
        # No Sphinx or reST markup.
        for markup in (":func:", "``", ":class:"):
            assert markup not in text, markup
        for option in ("--backend", "--jobs", "--store", "--address", "--out"):
            assert option in text


def test_the_summary_counts_rows_names_the_store_and_fits_a_terminal(tmp_path):
    # 108 rows x 34 columns, like a sweep of 2 x 3 grid points x 3 seeds x 2
    # variants x 3 flows.
    rows = []
    for g in range(6):
        for seed in (1, 2, 3):
            for v in ("vanilla", "paced"):
                for f in ("bulk", "voip", "ping"):
                    row = {
                        "run_id": f"r{g}-{seed}",
                        "param_hash": f"h{g}",
                        "seed": seed,
                        "ues[0].channel.path": f"trace-{g // 3}",
                        "variants[1].pipeline.pacer.kind": ["bdp", "jit", "e5g_bdp"][g % 3],
                        "variant": v,
                        "flow": f,
                        "throughput_mbps": 1.0 + seed,
                        "delay_mean_ms": 10.0 * seed,
                        "delay_p95_ms": 20.0 * seed,
                    }
                    row.update({f"extra_{k}": 0.0 for k in range(24)})
                    rows.append(row)
    df = pl.DataFrame(rows)
    assert df.shape == (108, 34)
    text = summary(df, tmp_path / "store", None)
    assert text.startswith("108 rows x 34 columns from 18 runs")
    assert f"store: {tmp_path / 'store'}" in text
    # One table row per grid point and variant (12), the seeds and the
    # means (seeds 1..3: throughput 3, delay 20 ms, p95 40 ms).
    assert "mean throughput_mbps" in text and "mean delay_p95_ms" in text
    body = [l for l in text.splitlines() if "vanilla" in l or "paced" in l]
    assert len(body) == 12
    assert all("3.0" in l and "20.0" in l and "40.0" in l for l in body), body
    assert "…" not in text, "nothing elided"
    assert max(len(l) for l in text.splitlines()) <= 160
