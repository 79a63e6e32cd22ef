"""``tcran.xapp``: traffic-control xApps in Python, on the xApp SDK's E2
termination (crates/tcran-xapp, docs/xapps.md).

An :class:`Xapp` listens for E2 nodes (``tcran run --realtime --e2
ADDR``, the emulator, any E2SM-TCRAN node) over framed TCP, lists them and
their DRBs, subscribes to E2SM-TCRAN indications (periodic, or when a
metric crosses a threshold) and sends controls: the same
``op = "add_queue"``... changes as :meth:`tcran.Pipeline.control` and the
scenarios' controllers, or a whole pipeline. Every call that waits on
the network releases the GIL; waits for nodes and indications wake every
100 ms for Ctrl-C, a control waits at most ``answer_timeout``.

Units are in the names: ``_ns`` nanoseconds (the node's clock), ``_us``
microseconds, ``_ms`` milliseconds, ``_bytes`` bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Optional, Sequence, Union

from . import _native
from ._native import ConfigError
from ._pipeline import _doc

#: Raised when the termination or a node fails a request (no such node,
#: a node gone, no answer in time, an address that cannot be bound).
XappError = _native.XappError

#: The metrics a condition subscription can watch (E2SM-TCRAN).
METRICS: tuple[str, ...] = (
    "rlc_sojourn_us",
    "rlc_backlog_bytes",
    "tc_sojourn_us",
    "tc_backlog_packets",
    "tc_drops_per_check",
)

Drb = tuple[int, int]
Doc = Union[str, Mapping[str, Any]]

#: A DRB's direction: the gNB's downlink pipeline or the UE's uplink one
#: (a UE numbers its uplink DRBs on their own, so ``(rnti, drb)`` names
#: one of each).
DIRECTIONS: tuple[str, ...] = ("downlink", "uplink")


@dataclass(frozen=True)
class Node:
    """A connected E2 node (its E2 Setup done)."""

    id: int  #: this association's id (a node that reconnects gets a new one)
    name: str  #: its GlobalE2node-ID, ``gnb:<PLMN>:<id>``
    peer: str  #: its address, ``host:port``
    tls: bool
    functions: tuple[tuple[int, str], ...]  #: RAN functions: (id, OID)
    drbs: tuple[Drb, ...]  #: downlink DRBs: (RNTI, DRB id), ascending
    indications: int  #: indications received so far
    indications_dropped: int  #: lost because a subscriber did not keep up
    uplink_drbs: tuple[Drb, ...] = ()  #: the UEs' uplink DRBs, ascending

    @staticmethod
    def _from(d: dict[str, Any]) -> "Node":
        return Node(
            d["id"], d["name"], d["peer"], d["tls"],
            tuple((f[0], f[1]) for f in d["functions"]),
            tuple((r[0], r[1]) for r in d["drbs"]),
            d["indications"], d["indications_dropped"],
            tuple((r[0], r[1]) for r in d["uplink_drbs"]),
        )


@dataclass(frozen=True)
class DrbStatus:
    """One DRB in an indication: what RLC/MAC below the pipeline report,
    and the pipeline's statistics (``stats``: the dict of
    :meth:`tcran.Pipeline.stats`; counters E2SM-TCRAN does not carry, such
    as token levels, are 0)."""

    rnti: int
    drb: int
    direction: str  #: "downlink" (the gNB's pipeline) or "uplink" (the UE's)
    rlc_backlog_bytes: int  #: bytes waiting in the RLC buffer
    rlc_backlog_sdus: int  #: SDUs (whole or partly sent) in it
    rlc_sojourn_us: int  #: how long its oldest SDU has waited, us
    rlc_tx_bytes: int  #: RLC SDU bytes sent so far (cumulative)
    mac_tx_bytes: int  #: bytes the MAC scheduled so far (cumulative)
    mac_prbs: int  #: PRBs allocated so far (cumulative)
    mcs: int  #: MCS of the last transmission, 0..31
    stats: dict[str, Any] = field(repr=False)

    @property
    def key(self) -> Drb:
        """``(rnti, drb)``, as :meth:`Xapp.control` takes it (with
        ``direction=``; the status itself carries its direction)."""
        return (self.rnti, self.drb)

    @property
    def rlc_sojourn_ms(self) -> float:
        """The RLC sojourn in milliseconds."""
        return self.rlc_sojourn_us / 1000.0


@dataclass(frozen=True)
class Indication:
    """One E2SM-TCRAN indication."""

    time_ns: int  #: the node's clock when it reported, ns
    condition: bool  #: a condition fired (else: the period)
    drbs: tuple[DrbStatus, ...]

    @staticmethod
    def _from(text: str) -> "Indication":
        d = json.loads(text)
        return Indication(d["time_ns"], d["condition"], tuple(DrbStatus(**x) for x in d["drbs"]))

    def rows(self) -> list[dict[str, Any]]:
        """One flat dict per DRB (``time_ns``, ``condition`` and the
        DrbStatus fields but ``stats``): ``polars.DataFrame(rows)`` makes
        a table of many indications."""
        out = []
        for s in self.drbs:
            row = {"time_ns": self.time_ns, "condition": self.condition}
            row.update({k: v for k, v in s.__dict__.items() if k != "stats"})
            out.append(row)
        return out


@dataclass(frozen=True)
class Outcome:
    """What a node did with a control: ``applied`` with the DRB's pipeline
    configuration afterwards (a dict, as :attr:`tcran.Pipeline.config`),
    or refused (the node changed nothing) with its one-line ``reason``."""

    applied: bool
    pipeline: Optional[dict[str, Any]]
    reason: Optional[str]

    def __bool__(self) -> bool:
        return self.applied

    @staticmethod
    def _from(answer: tuple[bool, str]) -> "Outcome":
        ok, text = answer
        return Outcome(True, json.loads(text), None) if ok else Outcome(False, None, text)


class Subscription:
    """E2SM-TCRAN indications from one node, in order. Iterating waits for
    each one and stops when the node goes away; :meth:`next` waits at most
    a timeout. Closing it (``close()``, ``with``, or dropping it) deletes
    the subscription on the node."""

    def __init__(self, native: "_native.Subscription") -> None:
        self._s = native
        self._ended = False

    @property
    def node(self) -> int:
        return self._s.node

    @property
    def ended(self) -> bool:
        """True once the node is gone (or the subscription closed) and
        every indication was read."""
        return self._ended

    def next(self, timeout: Optional[float] = None) -> Optional[Indication]:
        """The next indication, waiting at most ``timeout`` seconds (None:
        until one comes); None on timeout or once :attr:`ended`."""
        text, ended = self._s.next_json(None if timeout is None else float(timeout))
        if ended:
            self._ended = True
        return None if text is None else Indication._from(text)

    def __iter__(self) -> Iterator[Indication]:
        while True:
            i = self.next()
            if i is None:
                return
            yield i

    def close(self) -> None:
        self._s.close()
        self._ended = True

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _drb(drb: Union[Drb, DrbStatus], direction: str = "downlink") -> tuple[int, int, bool]:
    """``(rnti, drb, uplink)``: a DrbStatus names its own direction, a
    ``(rnti, drb)`` pair takes ``direction``, a ``(rnti, drb, direction)``
    triple its third item."""
    if isinstance(drb, DrbStatus):
        rnti, d, direction = drb.rnti, drb.drb, drb.direction
    elif len(drb) == 3:
        rnti, d, direction = drb  # type: ignore[misc]
    else:
        rnti, d = drb
    return int(rnti), int(d), _uplink(direction)


def _uplink(direction: str) -> bool:
    """Whether ``direction`` (one of :data:`DIRECTIONS`) is the uplink."""
    if direction not in DIRECTIONS:
        raise ConfigError(f"direction = {direction!r}: expected one of {', '.join(DIRECTIONS)}")
    return direction == "uplink"


def _node(node: Union[int, Node]) -> int:
    return node.id if isinstance(node, Node) else int(node)


class Xapp:
    """An E2 termination listening on ``listen`` (``"host:port"``; port 0
    picks a free one, see :attr:`address`). ``answer_timeout`` (s) is the
    longest wait for a node's answer to a subscription or control;
    ``setup_timeout`` (s) closes a connection without E2 Setup;
    ``buffer`` indications wait per subscription before newer ones are
    dropped (and counted in :attr:`Node.indications_dropped`).

    Use it as a context manager, or call :meth:`shutdown`."""

    def __init__(
        self,
        listen: str = "127.0.0.1:36421",
        *,
        answer_timeout: float = 5.0,
        setup_timeout: float = 5.0,
        buffer: int = 4096,
    ) -> None:
        self._x = _native.Xapp(str(listen), float(answer_timeout), float(setup_timeout), int(buffer))

    @property
    def address(self) -> str:
        """The address listened on, ``host:port`` (the port chosen for 0)."""
        return self._x.local_addrs()[0]

    def nodes(self) -> list[Node]:
        """The nodes connected now."""
        return [Node._from(d) for d in json.loads(self._x.nodes_json())]

    def wait_for_nodes(self, n: int = 1, timeout: Optional[float] = None) -> list[Node]:
        """Waits until at least ``n`` nodes are connected (at most
        ``timeout`` seconds, None: for ever); returns them. Raises
        :class:`TimeoutError` when ``timeout`` passes first."""
        text = self._x.wait_for_nodes_json(int(n), None if timeout is None else float(timeout))
        if text is None:
            raise TimeoutError(f"fewer than {n} E2 node(s) connected to {self.address} within {timeout} s")
        return [Node._from(d) for d in json.loads(text)]

    def drbs(self, node: Union[int, Node], *, direction: str = "downlink") -> list[Drb]:
        """The node's DRBs of ``direction`` as ``(rnti, drb)``."""
        return self._x.drbs(_node(node), _uplink(direction))

    def subscribe(
        self,
        node: Union[int, Node],
        *,
        period_ms: int = 100,
        metric: Optional[str] = None,
        threshold: int = 0,
        rising_edge_only: bool = True,
        drbs: Optional[Sequence[Union[Drb, DrbStatus, tuple[int, int, str]]]] = None,
    ) -> Subscription:
        """Subscribes to E2SM-TCRAN indications of ``drbs`` (None: all, of
        both directions; a ``(rnti, drb)`` pair is a downlink DRB, a
        ``(rnti, drb, "uplink")`` triple a UE's uplink one).

        Without ``metric``: one indication every ``period_ms`` ms with
        every DRB. With ``metric`` (one of :data:`METRICS`, its unit in
        its name): checked every ``period_ms`` ms, an indication with the
        DRBs whose metric is above ``threshold`` (only when it rises above
        it, with ``rising_edge_only``)."""
        keys = [_drb(d) for d in (drbs or [])]
        return Subscription(
            self._x.subscribe(
                _node(node), int(period_ms), keys, metric, int(threshold), bool(rising_edge_only)
            )
        )

    def control(
        self,
        node: Union[int, Node],
        drb: Union[Drb, DrbStatus],
        control: Union[Doc, Sequence[Doc]],
        *,
        direction: str = "downlink",
    ) -> Outcome:
        """Sends a control to one DRB and waits for the outcome:
        ``control`` is a dict or TOML/JSON text like
        :meth:`tcran.Pipeline.control` takes (``{"op": "add_queue",
        "queue": {...}}``), or a list of them applied in order, all or
        none. A control tcran cannot read raises
        :class:`tcran.ConfigError` before anything is sent; one the node
        refuses gives ``Outcome(applied=False, reason=...)``.
        ``direction="uplink"`` (or a DrbStatus of an uplink DRB) addresses
        the UE's pipeline of its uplink DRB."""
        docs = list(control) if isinstance(control, (list, tuple)) else [control]
        rnti, d, up = _drb(drb, direction)
        return Outcome._from(self._x.control(_node(node), rnti, d, [_doc("control", c) for c in docs], up))

    def deploy(
        self, node: Union[int, Node], drb: Union[Drb, DrbStatus], pipeline: Doc, *, direction: str = "downlink"
    ) -> Outcome:
        """Replaces one DRB's whole pipeline (a dict or TOML/JSON text, as
        :class:`tcran.Pipeline` takes) and waits for the outcome;
        ``direction`` as for :meth:`control`."""
        rnti, d, up = _drb(drb, direction)
        return Outcome._from(self._x.deploy(_node(node), rnti, d, _doc("pipeline", pipeline), up))

    def pipeline(
        self, node: Union[int, Node], drb: Union[Drb, DrbStatus], *, direction: str = "downlink"
    ) -> dict[str, Any]:
        """One DRB's running pipeline configuration; ``direction`` as for
        :meth:`control`."""
        rnti, d, up = _drb(drb, direction)
        return json.loads(self._x.pipeline_json(_node(node), rnti, d, up))

    def disconnect(self, node: Union[int, Node]) -> None:
        """Closes one node's association."""
        self._x.disconnect(_node(node))

    def shutdown(self) -> None:
        """Stops listening and closes every association."""
        self._x.shutdown()

    def __enter__(self) -> "Xapp":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()


__all__ = [
    "DrbStatus",
    "Indication",
    "METRICS",
    "Node",
    "Outcome",
    "Subscription",
    "Xapp",
    "XappError",
]
