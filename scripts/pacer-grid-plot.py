#!/usr/bin/env python3
"""Plots the pacer grid (examples/pacer_grid --csv) as one SVG without
dependencies: game p95 one-way delay against the bulk throughput as a share
of the unpaced buffer's, one colour per pacer, filled = per-slot MAC,
hollow = 10-ms MAC.

    python3 scripts/pacer-grid-plot.py grid.csv docs/figures/pacer-grid.svg
"""
import csv
import sys

rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["pacer"] != "unpaced"]
colors = {"jit": "#d62728", "e5g-bdp": "#1f77b4", "5g-bdp": "#2ca02c",
          "drql": "#9467bd", "dynrlc": "#8c564b"}
W, H, L, R, T, B = 720, 440, 70, 150, 30, 50
x0, x1 = 0.0, 110.0
y0, y1 = 0.0, max(float(r["game_p95_ms"]) for r in rows) * 1.05


def px(x):
    return L + (x - x0) / (x1 - x0) * (W - L - R)


def py(y):
    return H - B - (y - y0) / (y1 - y0) * (H - T - B)


out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{W/2}" y="18" text-anchor="middle">Game p95 vs bulk throughput (share of unpaced), every shipped channel</text>']
for x in range(0, 111, 10):
    out.append(f'<line x1="{px(x)}" y1="{py(y0)}" x2="{px(x)}" y2="{py(y1)}" stroke="#eee"/>')
    out.append(f'<text x="{px(x)}" y="{H-B+16}" text-anchor="middle">{x}</text>')
step = 20 if y1 < 200 else 50
for y in range(0, int(y1) + 1, step):
    out.append(f'<line x1="{px(x0)}" y1="{py(y)}" x2="{px(x1)}" y2="{py(y)}" stroke="#eee"/>')
    out.append(f'<text x="{L-6}" y="{py(y)+4}" text-anchor="end">{y}</text>')
out.append(f'<line x1="{px(97)}" y1="{py(y0)}" x2="{px(97)}" y2="{py(y1)}" stroke="#999" stroke-dasharray="4 3"/>')
out.append(f'<text x="{px(97)-4}" y="{py(y1)+12}" text-anchor="end" fill="#666">97 %</text>')
out.append(f'<text x="{(L+W-R)/2}" y="{H-12}" text-anchor="middle">bulk throughput, % of the unpaced buffer</text>')
out.append(f'<text x="16" y="{(T+H-B)/2}" transform="rotate(-90 16 {(T+H-B)/2})" text-anchor="middle">game p95 one-way delay (ms)</text>')
for r in rows:
    c = colors.get(r["pacer"], "black")
    x = min(float(r["bulk_share_pct"]), x1)
    y = float(r["game_p95_ms"])
    fill = c if r["period"] == "slot" else "none"
    out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="4" fill="{fill}" stroke="{c}" stroke-width="1.5"><title>{r["channel"]} {r["period"]} {r["pacer"]}: {x:.1f} %, {y:.2f} ms</title></circle>')
ly = T + 20
for name, c in colors.items():
    out.append(f'<circle cx="{W-R+20}" cy="{ly}" r="4" fill="{c}"/><text x="{W-R+30}" y="{ly+4}">{name}</text>')
    ly += 18
out.append(f'<circle cx="{W-R+20}" cy="{ly+10}" r="4" fill="#555"/><text x="{W-R+30}" y="{ly+14}">per-slot MAC</text>')
out.append(f'<circle cx="{W-R+20}" cy="{ly+28}" r="4" fill="none" stroke="#555"/><text x="{W-R+30}" y="{ly+32}">10-ms MAC</text>')
out.append("</svg>")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
