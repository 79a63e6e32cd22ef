"""The TC-RAN paper's low-latency xApp (Fig. 7) in Python: when a DRB's
RLC sojourn rises above a threshold, deploy CoDel + round robin + 5G-BDP on
it (docs/python.md, "xApps").

Run it, then point an E2 node at it, e.g. the simulator in real time:

    target/venv/bin/python docs/examples/low_latency_xapp.py 127.0.0.1:36421 &
    target/release/tcran run scenarios/controller-online-game.toml --realtime --e2 127.0.0.1:36421

python/tests/test_xapp.py runs it against ``tcran run --realtime --e2``.
"""

from __future__ import annotations

import sys
from typing import Callable, Optional

from tcran import xapp

#: CoDel (RFC 8289 defaults) + round robin + 5G-BDP, as `tcran xapp
#: low-latency` deploys it (crates/tcran-xapp/src/xapps.rs).
CURE = """
scheduler = { kind = "round_robin" }
pacer = { kind = "bdp" }
queues = [ { id = 0, kind = "codel" } ]
"""


def low_latency(
    listen: str,
    *,
    threshold_ms: float = 10.0,
    check_ms: int = 10,
    wait_s: Optional[float] = 600.0,
    on_listen: Callable[[str], None] = lambda address: None,
    log: Callable[[str], None] = print,
) -> list[xapp.Outcome]:
    """Serves one E2 node until it goes away; returns the outcome of every
    deployment. ``on_listen`` gets the address listened on (the port the
    OS chose for port 0) before waiting for the node."""
    outcomes = []
    with xapp.Xapp(listen) as x:
        on_listen(x.address)
        node = x.wait_for_nodes(1, timeout=wait_s)[0]
        log(f"{node.name} connected with DRBs {list(node.drbs)}")
        # One indication per DRB whose RLC sojourn rises above the threshold.
        bloated = x.subscribe(
            node, period_ms=check_ms, metric="rlc_sojourn_us", threshold=int(threshold_ms * 1000)
        )
        for report in bloated:
            for drb in report.drbs:
                outcome = x.deploy(node, drb, CURE)
                outcomes.append(outcome)
                if outcome:
                    log(f"RNTI {drb.rnti} DRB {drb.drb}: RLC sojourn {drb.rlc_sojourn_ms:.1f} ms, CoDel deployed")
                else:
                    log(f"RNTI {drb.rnti} DRB {drb.drb}: refused: {outcome.reason}")
    return outcomes


if __name__ == "__main__":
    low_latency(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:36421")
