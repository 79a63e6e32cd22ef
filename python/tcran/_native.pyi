"""Type stubs of the compiled module (crates/tcran-py). Use the public API
of the ``tcran`` package; this module is what it calls."""

from typing import Any, Callable, Optional, Sequence

VERSION: str
GIT_COMMIT: str
#: Largest packet a pipeline takes, bytes (TS 38.323 sec. 4.3.1).
MAX_PACKET: int

class ConfigError(ValueError):
    """A scenario, configuration, override or argument that tcran refuses;
    the message is the command line's one line."""

class OutputError(OSError):
    """An output file or directory that cannot be written."""

class Outcome:
    def summary_json(self) -> str: ...
    def table(self) -> str: ...
    def series_csv(self, stem: str) -> list[tuple[str, bytes]]: ...
    def write(self, dir: str) -> None: ...

_Job = tuple[
    str, str, str, str, str, Sequence[str], Sequence[tuple[str, str]], Optional[int], Optional[Sequence[str]]
]

def run(
    kind: str,
    text: str,
    name: str,
    display: str,
    base: str,
    sets: Sequence[str],
    typed_sets: Sequence[tuple[str, str]],
    seed: Optional[int] = None,
    variants: Optional[Sequence[str]] = None,
    progress: bool = False,
) -> Outcome: ...
def run_many(jobs: Sequence[_Job], threads: int, on_done: Callable[[int, str], Any]) -> None: ...
def validate(
    kind: str,
    text: str,
    name: str,
    display: str,
    base: str,
    sets: Sequence[str],
    typed_sets: Sequence[tuple[str, str]],
) -> list[str]: ...
def stages_json() -> str: ...
def series_names() -> list[str]: ...
def drop_reasons() -> list[str]: ...

class Pipeline:
    def __init__(self, config: str) -> None: ...
    def push(
        self,
        size: int,
        now_ns: int,
        src: str,
        dst: str,
        sport: int,
        dport: int,
        proto: int,
        dscp: int,
        ecn: int,
    ) -> tuple[int, int]: ...
    def push_many(
        self,
        n: int,
        sizes: bytes,
        times_ns: bytes,
        src: bytes,
        dst: bytes,
        sport: bytes,
        dport: bytes,
        proto: bytes,
        dscp: bytes,
        ecn: bytes,
    ) -> tuple[int, bytes]: ...
    def pull(self, now_ns: int) -> Optional[tuple[int, int, int, int, int]]: ...
    def pull_many(self, now_ns: int, max_packets: int) -> tuple[bytes, bytes, bytes, bytes]: ...
    def report(
        self,
        now_ns: int,
        tti_ns: int,
        backlog_bytes: int,
        backlog_sdus: int,
        pulled_bytes: int,
        granted_bytes: int,
        max_bytes: int,
    ) -> None: ...
    def control(self, control: str, now_ns: int) -> None: ...
    def stats_json(self, now_ns: int) -> str: ...
    def config_json(self) -> str: ...
    def totals_json(self) -> str: ...
    def next_wakeup(self, now_ns: int) -> Optional[int]: ...
    def drain_dropped(self) -> tuple[bytes, bytes]: ...
    def backlog(self) -> tuple[int, int]: ...
