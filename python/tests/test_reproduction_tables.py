"""scripts/reproduction-tables.py on a hand-written `tcran reproduce` output
(data/reproduce-out: one scenario `tiny`, seeds 1..3, two variants, and
four fidelity.json rows), so the expected cells are worked out by hand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "reproduction-tables.py"
OUT = Path(__file__).parent / "data" / "reproduce-out"


def run(page: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(OUT), str(page)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_marked_block_becomes_the_scenarios_table_with_intervals_and_paper_numbers(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "Before.\n"
        "<!-- table: tiny flow=game cols=enb_delay_mean_ms,throughput_mbps@bulk,"
        "prb_used_pct,delay_within_pct<=10ms,lost_pct,drops -->\n"
        "| stale | table |\n"
        "<!-- end table -->\n"
        "After.\n"
    )
    done = run(page)
    assert done.returncode == 0, done.stderr
    # Game at the eNodeB in `a`: upf 0 + tc 1 + rlc 4/6/8 ms = 5, 7, 9 ms:
    # mean 7, sd 2, t(0.975, 2) = 4.303 from a t table: 7 +- 4.969.
    # `b` runs no game. Bulk throughput 10 Mbit/s in every seed: no
    # interval; the paper's 12 is within 2x. PRB 50 % vs the paper's 20 %:
    # outside 2x. The factor row (relative_to) is not a cell. Within 10 ms
    # is fidelity.json's own. Lost: 1 of 100 packets.
    assert page.read_text() == (
        "Before.\n"
        "<!-- table: tiny flow=game cols=enb_delay_mean_ms,throughput_mbps@bulk,"
        "prb_used_pct,delay_within_pct<=10ms,lost_pct,drops -->\n"
        "| variant | game: delay at eNodeB, mean (ms) | bulk: Mbit/s | PRB used (%) "
        "| game: within 10ms (%) | game: lost (%) | drops |\n"
        "|---|---|---|---|---|---|---|\n"
        "| a | 7.00 (2.03..12.0) | 10.0; paper 12.0 | 50.0; paper 20.0 (>2x) "
        "| 66.7 (-76.8..210); paper 95.0-100 | 1.00 | 3.00 |\n"
        "| b | - | 20.0 | 100 | - | - | 0.00 |\n"
        "<!-- end table -->\n"
        "After.\n"
    )
    # Running it again changes nothing.
    first = page.read_text()
    assert run(page).returncode == 0
    assert page.read_text() == first


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("<!-- table: nosuch flow=game cols=lost -->", "unknown scenario 'nosuch'"),
        ("<!-- table: tiny flow=game cols=lost variants=a,c -->", "no variant 'c'"),
        ("<!-- table: tiny flow=ball cols=lost -->", "no flow 'ball'"),
        ("<!-- table: tiny flow=game cols=lost,speed -->", "unknown column 'speed'"),
        ("<!-- table: tiny flow=game cols=lost colour=red -->", "unknown option 'colour=red'"),
        ("<!-- table: tiny cols=lost -->", "give flow= or lost@FLOW"),
    ],
)
def test_a_bad_marker_is_an_error_naming_its_line_and_nothing_is_written(tmp_path, marker, message):
    page = tmp_path / "page.md"
    text = f"Line one.\n\n{marker}\n<!-- end table -->\n"
    page.write_text(text)
    done = run(page)
    assert done.returncode == 2
    assert f"{page}:3: " in done.stderr
    assert message in done.stderr
    assert page.read_text() == text


def test_a_block_without_its_end_is_an_error(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- table: tiny flow=game cols=lost -->\n| a |\n")
    done = run(page)
    assert done.returncode == 2
    assert f"{page}:1: table marker without `<!-- end table -->`" in done.stderr


def test_the_fidelity_block_counts_the_rows_within_2x_per_scenario(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- fidelity: by-scenario -->\n<!-- end table -->\n")
    done = run(page)
    assert done.returncode == 0, done.stderr
    # Four rows, the PRB one outside 2x; no row has another in its group.
    assert page.read_text() == (
        "<!-- fidelity: by-scenario -->\n"
        "3 of 4 paper numbers within 2x; 0 of 0 groups keep the paper's ordering.\n"
        "\n"
        "| scenario | paper numbers | within 2x | orderings kept |\n"
        "|---|---|---|---|\n"
        "| `tiny` | 4 | 3 | - |\n"
        "<!-- end table -->\n"
    )
