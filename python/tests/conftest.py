"""Shared fixtures: a small scenario (seconds of simulated time, so each
run takes milliseconds) and the `tcran` binary for comparisons with the
command line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# One UE at a fixed MCS; a CUBIC download, an online game (random
# inter-arrivals, so the seed matters) and a ping; two variants.
SMALL = """
duration = "2s"
warmup = "500ms"
seed = 1
core_delay = "10ms"

[cell]
bandwidth_mhz = 5

[[ues]]
rnti = 1
channel = { kind = "mcs", mcs = 12 }

[[flows]]
name = "bulk"
ue = 1
kind = "tcp"

[[flows]]
name = "game"
ue = 1
kind = "gaming"
mean = "20ms"

[[flows]]
name = "ping"
ue = 1
kind = "ping"
interval = "100ms"

[[variants]]
name = "vanilla"

[[variants]]
name = "paced"
[variants.pipeline]
default_queue = 1
classifier = { kind = "filter", rules = [ { priority = 1, protocol = "udp", queue = 0 } ] }
scheduler = { kind = "priority" }
pacer = { kind = "bdp" }
[[variants.pipeline.queues]]
id = 0
kind = "fifo"
[[variants.pipeline.queues]]
id = 1
kind = "codel"
priority = 1
"""


@pytest.fixture
def small(tmp_path: Path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


@pytest.fixture(scope="session")
def tcran_bin() -> Path:
    """The command line, built by `make python` (scripts/python-env.sh)
    with the same features as the workspace's tests, so nothing is
    compiled twice."""
    p = Path(os.environ.get("TCRAN_BIN", ROOT / "target" / "release" / "tcran"))
    if not p.exists():
        subprocess.run(
            ["cargo", "build", "--release", "-q", "--workspace", "--lib", "--bins", "--tests"], cwd=ROOT, check=True
        )
    return p


def cli_error(tcran_bin: Path, *args: str, cwd: Path = ROOT) -> str:
    """The one-line error of a failing `tcran` command (exit code 2)."""
    r = subprocess.run([str(tcran_bin), *args], cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    line = r.stderr.strip()
    assert "\n" not in line
    assert line.startswith("error: ")
    return line[len("error: ") :]
