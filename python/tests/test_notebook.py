"""The example notebook runs (a small grid) and draws its figure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import ROOT

NOTEBOOK = ROOT / "docs" / "examples" / "pacer-sweep.ipynb"


def test_pacer_sweep_notebook_runs(tmp_path: Path, monkeypatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("TCRAN_NOTEBOOK_QUICK", "1")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    # The figure is drawn (the kernel's inline backend shows it as a PNG).
    assert any("image/png" in o.get("data", {}) for o in outputs)
