"""Costs of the Python package (docs/performance.md): `make python-bench`.

1. tcran.run against `tcran run` on the reference scenario (the one of
   `make speed`: 25 PRB, one CUBIC download and one VoIP call, 60 s).
2. The batched pipeline from numpy: ns per packet pushed and pulled.
3. Sweep throughput: 200 runs of the demo at 20 s on the local, Dask and
   Ray backends (2 workers each).

Medians of repeated measurements; needs an idle machine.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import tcran

ROOT = Path(__file__).resolve().parents[2]
TCRAN = ROOT / "target" / "release" / "tcran"

REFERENCE = """
duration = "60s"
[cell]
bandwidth_mhz = 5
[[ues]]
rnti = 1
channel = { kind = "mcs", mcs = 28 }
[[flows]]
name = "bulk"
ue = 1
kind = "tcp"
[[flows]]
name = "voip"
ue = 1
kind = "voip"
"""


def median_time(f, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench_run(n: int = 5) -> None:
    with tempfile.TemporaryDirectory() as d:
        ref = Path(d) / "reference.toml"
        ref.write_text(REFERENCE)
        out = Path(d) / "out"
        cli = median_time(lambda: subprocess.run([str(TCRAN), "run", str(ref), "--out", str(out), "--json"],
                                                 check=True, capture_output=True), n)
        py = median_time(lambda: tcran.run(ref, progress=False), n)
        py_write = median_time(lambda: tcran.run(ref, progress=False).write(Path(d) / "py"), n)
        r = tcran.run(ref, progress=False)
        frames = median_time(lambda: (tcran.Run(r._outcome).flows, tcran.Run(r._outcome).series("slots")), n)
    print(f"run/reference: tcran run (process, writes files) {cli*1e3:.0f} ms; "
          f"tcran.run {py*1e3:.0f} ms ({py/cli:.2f}x); tcran.run + write {py_write*1e3:.0f} ms ({py_write/cli:.2f}x); "
          f"flows + slots frames {frames*1e3:.1f} ms")


def bench_pipeline(n: int = 1_000_000, reps: int = 5) -> None:
    """A million packets through a pipeline in batches of `chunk` packets
    (one push_many and one pull_many per batch, as a TTI loop would), and
    100,000 packets one push() and one pull() at a time."""
    rng = np.random.default_rng(1)
    sizes = rng.integers(40, 1500, n).astype(np.uint32)
    times = np.arange(n, dtype=np.uint64) * 1000
    sport = rng.integers(1024, 65535, n).astype(np.uint16)
    configs = {
        "fifo": {"queues": [{"id": 0, "kind": "fifo", "limit_packets": 100_000}]},
        "fq_codel": {
            "classifier": {"kind": "flow_hash", "buckets": 64},
            "scheduler": {"kind": "drr"},
            "queues": [{"id": 0, "count": 64, "kind": "codel", "limit_packets": 100_000}],
        },
    }
    for name, cfg in configs.items():
        for chunk in (1000, 10_000):
            per = []
            for _ in range(reps):
                p = tcran.Pipeline(cfg)
                t = time.perf_counter()
                for lo in range(0, n, chunk):
                    hi = lo + chunk
                    p.push_many(sizes[lo:hi], times[lo:hi], sport=sport[lo:hi], proto="tcp")
                    p.pull_many(int(times[hi - 1]))
                per.append((time.perf_counter() - t) / n * 1e9)
                assert p.totals()["out_packets"] + p.totals()["dropped_packets"] == n
            print(f"pipeline/{name}: push_many + pull_many, {chunk} packets a call: {statistics.median(per):.0f} ns/packet")
        m = 100_000
        p = tcran.Pipeline(cfg)
        t = time.perf_counter()
        for i in range(m):
            p.push(int(sizes[i]), int(times[i]), sport=int(sport[i]), proto="tcp")
            p.pull(int(times[i]))
        one = (time.perf_counter() - t) / m * 1e9
        print(f"pipeline/{name}: push() + pull() one by one: {one:.0f} ns/packet")


def bench_sweep(runs: int = 200) -> None:
    demo = ROOT / "scenarios" / "demo.toml"
    kw = dict(seeds=runs, set={"duration": "20s", "warmup": "5s"}, progress=False)
    base = None
    for backend in ("local", "dask", "ray"):
        t = time.perf_counter()
        if backend == "local":
            df = tcran.sweep(demo, None, backend="local", jobs=2, **kw)
        elif backend == "dask":
            from distributed import Client, LocalCluster

            with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as c, Client(c) as cl:
                t = time.perf_counter()
                df = tcran.sweep(demo, None, backend="dask", address=cl, **kw)
        else:
            import ray

            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            t = time.perf_counter()
            df = tcran.sweep(demo, None, backend="ray", **kw)
            ray.shutdown()
        wall = time.perf_counter() - t
        if base is None:
            base = df
        assert df.equals(base), backend
        print(f"sweep/{backend}: {runs} runs of the demo at 20 s in {wall:.1f} s = {runs / wall:.2f} runs/s")


if __name__ == "__main__":
    what = sys.argv[1:] or ["run", "pipeline", "sweep"]
    if "run" in what:
        bench_run()
    if "pipeline" in what:
        bench_pipeline()
    if "sweep" in what:
        bench_sweep()
