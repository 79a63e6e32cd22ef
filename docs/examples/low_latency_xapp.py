"""The TC-RAN paper's low-latency xApp (Fig. 7) in Python: when a DRB's
RLC sojourn rises above a threshold, deploy CoDel + round robin + 5G-BDP on
it (docs/python.md, "xApps").

It serves every E2 node that connects except the gNB ids it is told to
leave alone: `tcran run --realtime --e2` makes each variant a node (gNB id
= variant index + 1), so a scenario's baseline can stay a baseline. Run it,
then point the nodes at it, e.g. the simulator in real time, leaving the
first variant (vanilla) as it is:

    target/venv/bin/python docs/examples/low_latency_xapp.py 127.0.0.1:36421 --leave 1 &
    target/release/tcran run scenarios/controller-online-game.toml --realtime --e2 127.0.0.1:36421

python/tests/test_xapp.py runs it against ``tcran run --realtime --e2``.
"""

from __future__ import annotations

import time
from typing import Callable, Iterable, Optional

from tcran import xapp

#: CoDel (RFC 8289 defaults) + round robin + 5G-BDP, as `tcran xapp
#: low-latency` deploys it (crates/tcran-xapp/src/xapps.rs).
CURE = """
scheduler = { kind = "round_robin" }
pacer = { kind = "bdp" }
queues = [ { id = 0, kind = "codel" } ]
"""


def gnb_id(node: xapp.Node) -> int:
    """The gNB id of a node's GlobalE2node-ID (``gnb:<PLMN>:<id>``)."""
    return int(node.name.rsplit(":", 1)[-1])


def low_latency(
    listen: str,
    *,
    threshold_ms: float = 10.0,
    check_ms: int = 10,
    wait_s: Optional[float] = 600.0,
    leave: Iterable[int] = (),
    on_listen: Callable[[str], None] = lambda address: None,
    log: Callable[[str], None] = print,
) -> list[xapp.Outcome]:
    """Serves every E2 node that connects, except those whose gNB id is in
    ``leave``, until every node it serves has gone; returns the outcome of
    every deployment. Waits at most ``wait_s`` for the first node.
    ``on_listen`` gets the address listened on (the port the OS chose for
    port 0) before waiting."""
    leave = set(leave)
    outcomes: list[xapp.Outcome] = []
    with xapp.Xapp(listen) as x:
        on_listen(x.address)
        x.wait_for_nodes(1, timeout=wait_s)
        seen: set[int] = set()
        served: list[tuple[xapp.Node, xapp.Subscription]] = []
        while True:
            for node in x.nodes():
                if node.id in seen:
                    continue
                seen.add(node.id)
                if gnb_id(node) in leave:
                    log(f"{node.name} connected: left alone")
                    continue
                log(f"{node.name} connected with DRBs {list(node.drbs)}")
                # One indication per DRB whose RLC sojourn rises above the threshold.
                sub = x.subscribe(
                    node, period_ms=check_ms, metric="rlc_sojourn_us", threshold=int(threshold_ms * 1000)
                )
                served.append((node, sub))
            going = [(n, s) for n, s in served if not s.ended]
            if served and not going or not served and not x.nodes():
                return outcomes
            if not going:
                time.sleep(check_ms / 1000)
            for node, sub in going:
                report = sub.next(timeout=check_ms / 1000 / len(going))
                for drb in report.drbs if report else ():
                    outcome = x.deploy(node, drb, CURE)
                    outcomes.append(outcome)
                    where = f"{node.name} RNTI {drb.rnti} DRB {drb.drb}"
                    if outcome:
                        log(f"{where}: RLC sojourn {drb.rlc_sojourn_ms:.1f} ms, CoDel deployed")
                    else:
                        log(f"{where}: refused: {outcome.reason}")


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="The TC-RAN paper's low-latency xApp (Fig. 7).")
    ap.add_argument("listen", nargs="?", default="127.0.0.1:36421", help="HOST:PORT to listen on for E2 nodes")
    ap.add_argument("--leave", type=int, nargs="*", default=[], metavar="GNB_ID",
                    help="gNB ids of nodes to leave alone (e.g. a baseline variant)")
    a = ap.parse_args()
    low_latency(a.listen, leave=a.leave)
