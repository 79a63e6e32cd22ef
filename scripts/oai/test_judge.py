#!/usr/bin/env python3
"""Tests of judge.py's criteria on made-up stats (`make oai-test` runs them
first, in well under a second): when OAI's RLC buffer counts as levelled
off, and how a ping's RTT is split into its legs."""
import tempfile
import unittest
from pathlib import Path

import judge

START = 1_000_000_000_000
PERIOD = 100_000_000  # the glue writes a stats line every 100 ms of radio time


def stats(occupancies, speed=0.2):
    """One line per 100 ms of radio time, the wall clock running at 1/speed."""
    return [
        {"radio_ns": i * PERIOD, "wall_ns": START + int(i * PERIOD / speed), "rlc_bytes": rlc}
        for i, rlc in enumerate(occupancies)
    ]


class Levelled(unittest.TestCase):
    def test_a_buffer_growing_10_percent_a_second_or_more_never_levels(self):
        # +1.2 % per 100 ms: the median of each second is 12.7 % above the last's
        lines = stats([int(100_000 * 1.012**i) for i in range(100)])
        self.assertIsNone(judge.levelled_at(lines, START))

    def test_a_standing_plateau_levels_once_the_earlier_window_is_near_it(self):
        # filling 200 kB per 100 ms up to 2 MB at 0.9 s, then flat: the last
        # second's median is 2 MB from 1.9 s on, and it must be within 10 %
        # of the second before's: at 2.2 s that is (0.2 s, 1.2 s], median
        # (1.6 + 1.8) / 2 = 1.7 MB, too low; at 2.3 s (0.3 s, 1.3 s], median
        # (1.8 + 2.0) / 2 = 1.9 MB, above 2 MB / 1.1
        lines = stats([200_000 * (i + 1) for i in range(10)] + [2_000_000] * 30)
        levelled = judge.levelled_at(lines, START)
        self.assertEqual(levelled, lines[23]["wall_ns"])

    def test_a_buffer_that_empties_is_not_a_level(self):
        # slow start: the buffer keeps emptying, its medians flat near zero
        lines = stats([0 if i % 3 == 0 else 5_000 for i in range(50)])
        self.assertIsNone(judge.levelled_at(lines, START))

    def test_lines_before_the_download_do_not_count(self):
        lines = stats([2_000_000] * 30 + [0] * 30)
        self.assertIsNone(judge.levelled_at(lines, lines[30]["wall_ns"]))


class Legs(unittest.TestCase):
    def test_an_echo_is_split_at_the_two_tun_devices(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            # seq 1 once by the attach check (answered long before), then
            # by the download's ping: the last crossing counts
            (out / "s-icmp-ue.txt").write_text("10 out 8 1\n20 in 0 1\n100 out 8 1\n190 in 0 1\n")
            (out / "s-icmp-gnb.txt").write_text("15 in 8 1\n16 out 0 1\n130 in 8 1\n131 out 0 1\n")
            self.assertEqual(judge.read_legs(out, "s"), [(190, (100, 130), (131, 190))])

    def test_an_echo_seen_on_one_side_only_is_left_out(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            (out / "s-icmp-ue.txt").write_text("100 out 8 7\n190 in 0 7\n")
            (out / "s-icmp-gnb.txt").write_text("")
            self.assertEqual(judge.read_legs(out, "s"), [])


if __name__ == "__main__":
    unittest.main()
