"""``tcran.Pipeline``: one TC pipeline (one UE bearer), packet by packet or
in batches from numpy arrays.

Time is integer nanoseconds on any clock (``now_ns``) and never goes
backwards; sizes are IP packet bytes (1..9000). Every packet pushed gets an
id (0, 1, 2, ... in push order) that comes back when it is pulled or
dropped.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any, Mapping, NamedTuple, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from . import _native

#: Why a packet was dropped, by index (``DropReason`` of tcran-core).
DROP_REASONS: tuple[str, ...] = tuple(_native.drop_reasons())

#: The outcome codes of ``push``/``push_many``, by code: 0 queued, 1
#: queued with its ECN field set to CE, 2 + i dropped for DROP_REASONS[i].
OUTCOMES: tuple[str, ...] = ("queued", "marked") + tuple(f"dropped:{r}" for r in DROP_REASONS)

_PROTOCOLS = {"icmp": 1, "tcp": 6, "udp": 17, "icmpv6": 58}
_ECN = {"not_ect": 0, "ect1": 1, "ect0": 2, "ce": 3}
_ECN_NAMES = {v: k for k, v in _ECN.items()}


class Pushed(NamedTuple):
    """A pushed packet: its id and what happened to it (an OUTCOMES label)."""

    id: int
    outcome: str


class Pulled(NamedTuple):
    """A packet for PDCP/RLC: its id, size (bytes), time it waited in the
    pipeline (ns), DSCP and ECN field (``not_ect``, ``ect1``, ``ect0``,
    ``ce``)."""

    id: int
    size: int
    sojourn_ns: int
    dscp: int
    ecn: str


def _doc(what: str, d: Union[str, Mapping[str, Any]]) -> str:
    if isinstance(d, str):
        return d
    if isinstance(d, Mapping):
        return json.dumps(d, indent=1)
    raise TypeError(f"{what}: expected a TOML/JSON string or a dict, not {type(d).__name__}")


def _proto(p: Union[int, str]) -> int:
    if isinstance(p, str):
        try:
            return _PROTOCOLS[p.lower()]
        except KeyError:
            raise _native.ConfigError(
                f"proto = {p!r}: expected an IP protocol number or one of {', '.join(_PROTOCOLS)}"
            ) from None
    return int(p)


def _ecn(e: Union[int, str]) -> int:
    if isinstance(e, str):
        try:
            return _ECN[e.lower()]
        except KeyError:
            raise _native.ConfigError(
                f"ecn = {e!r}: expected 0..3 or one of {', '.join(_ECN)}"
            ) from None
    return int(e)


def _ipv4(a: Any) -> int:
    if isinstance(a, str):
        try:
            return int(ipaddress.IPv4Address(a))
        except ipaddress.AddressValueError:
            raise _native.ConfigError(
                f"{a!r}: not an IPv4 address (the batched form takes IPv4 only; push() takes IPv6 too)"
            ) from None
    return int(a)


def _column(name: str, v: Any, n: int, dtype: str, conv=None) -> bytes:
    """A little-endian array of ``n`` values from an array or a scalar."""
    if np.isscalar(v) or isinstance(v, str):
        v = conv(v) if conv else v
        a = np.full(n, v, dtype=np.dtype(dtype).newbyteorder("<"))
        return a.tobytes()
    a = np.asarray(v)
    if a.shape != (n,):
        raise _native.ConfigError(f"{name}: shape {a.shape}, expected ({n},) like sizes")
    if a.dtype.kind in "OU" and conv:
        a = np.array([conv(x) for x in a])
    target = np.dtype(dtype).newbyteorder("<")
    if a.dtype.kind in "iu" and a.size and (a.min() < 0 or a.max() > np.iinfo(target).max):
        raise _native.ConfigError(
            f"{name}: values {a.min()}..{a.max()} do not fit {np.dtype(dtype).name}"
        )
    return np.ascontiguousarray(a, dtype=target).tobytes()


class Pipeline:
    """One TC pipeline: classifier, policer, queues, scheduler, shaper,
    pacer (docs/pipeline.md), built from a config as TOML/JSON text or a
    dict. A bad config raises :class:`tcran.ConfigError` naming the field,
    the value and what is allowed."""

    OUTCOMES = OUTCOMES
    DROP_REASONS = DROP_REASONS

    def __init__(self, config: Union[str, Mapping[str, Any]]) -> None:
        self._p = _native.Pipeline(_doc("config", config))

    # ------------------------------------------------------------ packets

    def push(
        self,
        size: int,
        now_ns: int,
        *,
        src: str = "198.51.100.1",
        dst: str = "10.45.0.1",
        sport: int = 0,
        dport: int = 0,
        proto: Union[int, str] = "udp",
        dscp: int = 0,
        ecn: Union[int, str] = 0,
    ) -> Pushed:
        """Pushes one packet of ``size`` bytes at ``now_ns`` (from SDAP)."""
        pid, code = self._p.push(
            int(size), int(now_ns), str(src), str(dst), int(sport), int(dport),
            _proto(proto), int(dscp), _ecn(ecn),
        )
        return Pushed(pid, OUTCOMES[code])

    def push_many(
        self,
        sizes: npt.ArrayLike,
        times_ns: npt.ArrayLike,
        *,
        src: Any = "198.51.100.1",
        dst: Any = "10.45.0.1",
        sport: Any = 0,
        dport: Any = 0,
        proto: Any = "udp",
        dscp: Any = 0,
        ecn: Any = 0,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Pushes ``len(sizes)`` packets, packet ``i`` at ``times_ns[i]``
        (a time before the pipeline's is taken as the pipeline's and
        counted in :attr:`time_clamped`). Each header field is an array of the same length
        or one value for all: IPv4 addresses as uint32 or strings, ports,
        protocol numbers (or ``"tcp"``...), DSCP 0..63, ECN bits 0..3.
        Everything is checked before the first packet goes in. Returns
        ``(ids, outcomes)``: the packets' ids (uint64) and their outcome
        codes (uint8, labels in :data:`OUTCOMES`)."""
        s = np.asarray(sizes)
        n = int(s.shape[0]) if s.ndim == 1 else -1
        if n < 0:
            raise _native.ConfigError(f"sizes: expected a 1-d array, found shape {s.shape}")
        first, codes = self._p.push_many(
            n,
            _column("sizes", s, n, "u4"),
            _column("times_ns", times_ns, n, "u8"),
            _column("src", src, n, "u4", _ipv4),
            _column("dst", dst, n, "u4", _ipv4),
            _column("sport", sport, n, "u2"),
            _column("dport", dport, n, "u2"),
            _column("proto", proto, n, "u1", _proto),
            _column("dscp", dscp, n, "u1"),
            _column("ecn", ecn, n, "u1", _ecn),
        )
        ids = np.arange(first, first + n, dtype=np.uint64)
        return ids, np.frombuffer(codes, dtype=np.uint8)

    def pull(self, now_ns: int) -> Optional[Pulled]:
        """The next packet for PDCP/RLC at ``now_ns``, or None when the
        scheduler, a shaper or the pacer lets nothing go now."""
        p = self._p.pull(int(now_ns))
        if p is None:
            return None
        pid, size, soj, dscp, ecn = p
        return Pulled(pid, size, soj, dscp, _ECN_NAMES[ecn])

    def pull_many(self, now_ns: int, max_packets: Optional[int] = None) -> dict[str, np.ndarray]:
        """Pulls at ``now_ns`` until the pipeline refuses (or
        ``max_packets``): arrays ``id`` (uint64), ``size`` (bytes, uint32),
        ``sojourn_ns`` (uint64) and ``ecn`` (bits, uint8)."""
        limit = (1 << 62) if max_packets is None else int(max_packets)
        ids, sizes, soj, ecn = self._p.pull_many(int(now_ns), limit)
        return {
            "id": np.frombuffer(ids, dtype="<u8"),
            "size": np.frombuffer(sizes, dtype="<u4"),
            "sojourn_ns": np.frombuffer(soj, dtype="<u8"),
            "ecn": np.frombuffer(ecn, dtype=np.uint8),
        }

    # ----------------------------------------------------------- feedback

    def report(
        self,
        now_ns: int,
        *,
        tti_ns: int,
        backlog_bytes: int,
        backlog_sdus: int = 0,
        pulled_bytes: int = 0,
        granted_bytes: int = 0,
        max_bytes: int = 0,
        next_pull_in_ns: int = 0,
        pulls_per_pattern: int = 0,
        head_of_line_age_ns: int = 0,
        mcs: Optional[int] = None,
        prbs: int = 0,
        harq_acks: int = 0,
        harq_nacks: int = 0,
    ) -> None:
        """The RLC/MAC report closing one TTI of ``tti_ns`` (ns), sent at
        the MAC's pull: bytes and SDUs left in RLC after the MAC pulled,
        bytes pulled, bytes the grant could carry (5G-BDP's channel
        capacity) and bytes one TTI could carry with every PRB (e5G-BDP's
        max).

        The cell's slot clock, as the simulator's gNB reports it:
        ``next_pull_in_ns`` is the time to the MAC's next pull (``tti_ns``,
        or more when slots without downlink come first: two slots after
        the S slot of DDDSU; 0 = not known, read as ``tti_ns``);
        ``pulls_per_pattern`` the reports one repetition of the TDD pattern
        spans (DDDSU: 4, FDD: 1; 0 = not known). Everything here is what a
        real MAC and RLC know after a pull. The ``bdp`` and ``e5g_bdp``
        pacers read ``next_pull_in_ns``; ``jit`` reads both (docs/pacer.md).

        What the MAC knows of the UE in the period and the RLC's
        head-of-line delay, for pacers that read them (no built-in one does
        yet): ``head_of_line_age_ns`` (how long the oldest SDU still to send
        has waited, after the pull), ``mcs`` (0..=31, ``None`` on a channel
        known only as capacity), ``prbs`` (PRBs given to the UE, new data
        and retransmissions) and the HARQ outcomes of its transport blocks
        (``harq_acks``, ``harq_nacks``)."""
        self._p.report(
            int(now_ns), int(tti_ns), int(backlog_bytes), int(backlog_sdus),
            int(pulled_bytes), int(granted_bytes), int(max_bytes),
            int(next_pull_in_ns), int(pulls_per_pattern),
            int(head_of_line_age_ns), None if mcs is None else int(mcs),
            int(prbs), int(harq_acks), int(harq_nacks),
        )

    def control(
        self,
        control: Union[str, Mapping[str, Any], Sequence[Union[str, Mapping[str, Any]]]],
        now_ns: int,
    ) -> None:
        """Applies a live change (docs/pipeline.md, ``op = "add_queue"``,
        ``"set_pacer"``...), or a list of them in order, all or none; a
        refused change changes nothing and raises :class:`tcran.ConfigError`
        (in a list, naming which: ``control 2 of 3: ...``)."""
        docs = list(control) if isinstance(control, (list, tuple)) else [control]
        self._p.control([_doc("control", c) for c in docs], int(now_ns))

    def deploy(self, config: Union[str, Mapping[str, Any]], now_ns: int) -> None:
        """Replaces the whole pipeline (a config as :class:`Pipeline` takes
        it) without losing or reordering a queued packet: queues kept by id
        change in place, queues that are gone hand their packets to the new
        default queue. A refused config changes nothing and raises
        :class:`tcran.ConfigError`."""
        self._p.deploy(_doc("config", config), int(now_ns))

    # --------------------------------------------------------- inspection

    def stats(self, now_ns: int) -> dict[str, Any]:
        """Per-stage statistics (totals, classifier, every queue, pacer)."""
        return json.loads(self._p.stats_json(int(now_ns)))

    def totals(self) -> dict[str, int]:
        """Packets and bytes in, out, dropped and queued
        (``in = out + dropped + queued``)."""
        return json.loads(self._p.totals_json())

    @property
    def config(self) -> dict[str, Any]:
        """The running configuration (live changes included)."""
        return json.loads(self._p.config_json())

    def next_wakeup(self, now_ns: int) -> Optional[int]:
        """When ``pull`` may release a packet it refuses now (ns), or None
        when only a new packet or report can change that."""
        return self._p.next_wakeup(int(now_ns))

    def drain_dropped(self) -> dict[str, np.ndarray]:
        """Every packet dropped since the last call: ``id`` (uint64) and
        ``reason`` (index into :data:`DROP_REASONS`, uint8)."""
        ids, reasons = self._p.drain_dropped()
        return {
            "id": np.frombuffer(ids, dtype="<u8"),
            "reason": np.frombuffer(reasons, dtype=np.uint8),
        }

    @property
    def backlog(self) -> tuple[int, int]:
        """Packets and bytes queued now."""
        return self._p.backlog()

    @property
    def time_clamped(self) -> int:
        """Calls whose ``now_ns`` was before the pipeline's time, which was
        used instead (time never goes backwards)."""
        return self._p.time_clamped()
