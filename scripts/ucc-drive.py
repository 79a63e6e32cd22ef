#!/usr/bin/env python3
"""Converts rows of a UCC 5G dataset CSV (Raca et al., MMSys 2020) into a
tcran drive trace (crates/tcran-ran/src/mobility/drive.rs):
time_s,serving,cqi,rsrp:<cell id>,...

    scripts/ucc-drive.py IN.csv FIRST_ROW ROWS > OUT.csv

What each column becomes, and what is assumed:
- time_s: the row's index from FIRST_ROW, in seconds (one G-NetTrack row
  is nominally one second; its Timestamp column has 1-s resolution and
  repeats or skips seconds, so it is not used, as tcran's UccTrace does).
- serving: RAWCELLID, the serving cell's full identity (CellID alone is
  the sector and repeats across sites).
- cqi: CQI; a missing value ("-") holds the previous one (a leading gap
  takes the first value), as UccTrace does.
- rsrp:<serving>: RSRP of that row.
- the neighbour: the dataset has one neighbour reading (NRxRSRP) without
  its cell identity. It is attributed to the next cell the recording
  network served after this row (the previous one if none follows): the
  most likely strongest neighbour, but an assumption that borrows the
  recording's own choice of target cell. A comparison of tcran's
  handovers with the recording's can therefore test their timing and
  count, not the choice of target.
- every other cell: empty (not measured).
"""
import csv
import sys


def main():
    src, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))[first : first + count]
    if not rows:
        sys.exit("no rows in that range")
    serving = [r["RAWCELLID"].strip() for r in rows]
    cells = []
    for c in serving:
        if c not in cells:
            cells.append(c)
    cqi = [r["CQI"].strip() for r in rows]
    known = [c for c in cqi if c not in ("", "-")]
    if not known:
        sys.exit("no CQI in that range")
    last = known[0]
    w = sys.stdout
    w.write(f"# {count} rows of {src.split('/')[-1]} from row {first} (header = row -1), converted by scripts/ucc-drive.py\n")
    w.write("time_s,serving,cqi," + ",".join(f"rsrp:{c}" for c in cells) + "\n")
    for i, r in enumerate(rows):
        if cqi[i] not in ("", "-"):
            last = cqi[i]
        rsrp = {c: "" for c in cells}
        if r["RSRP"].strip() not in ("", "-"):
            rsrp[serving[i]] = r["RSRP"].strip()
        n = r["NRxRSRP"].strip()
        if n not in ("", "-"):
            nxt = next((c for c in serving[i + 1 :] if c != serving[i]), None)
            if nxt is None:
                nxt = next((c for c in reversed(serving[:i]) if c != serving[i]), None)
            if nxt is not None:
                v = float(n)
                if -156 <= v <= -31:
                    rsrp[nxt] = f"{v:g}"
        w.write(f"{i},{serving[i]},{last}," + ",".join(rsrp[c] for c in cells) + "\n")


main()
