"""How a scenario and its overrides are handed to the native module.

A scenario is a path (``str`` or ``os.PathLike``), a TOML document in a
``str``, or a ``dict`` (the same document as JSON would spell it). A ``str``
is taken as a path when it is one line without ``=``, or one line ending
in ``.toml`` or ``.json``; anything else is TOML text.

Overrides (``set=``) are the command line's ``--set`` paths: either a list
of ``"KEY=VALUE"`` strings (VALUE read as TOML, else as a string, exactly
as ``tcran run --set``) or a dict ``{KEY: value}`` whose Python values are
taken as they are (``{"ues[0].channel": {"kind": "mcs", "mcs": 10}}``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]
Sets = Union[Sequence[str], Mapping[str, Any], None]


@dataclass(frozen=True)
class Source:
    """A scenario ready for the native module."""

    kind: str  # "path", "toml" or "json"
    text: str  # the path, or the document
    name: str  # the scenario's name in the summary
    display: str  # what error messages call the document
    base: str  # where relative trace paths start

    def args(self) -> tuple[str, str, str, str, str]:
        return (self.kind, self.text, self.name, self.display, self.base)

    def inline(self) -> "Source":
        """The same scenario with its text read in, for workers that may
        not see the file; messages still name the path."""
        if self.kind != "path":
            return self
        path = Path(self.text)
        kind = "json" if path.suffix.lower() == ".json" else "toml"
        return Source(
            kind,
            path.read_text(encoding="utf-8"),
            path.stem or "scenario",
            self.text,
            str(path.parent.resolve()),
        )


def _is_path(s: str) -> bool:
    if "\n" in s:
        return False
    return "=" not in s or s.strip().lower().endswith((".toml", ".json"))


def source(scenario: Scenario) -> Source:
    """Classifies ``scenario`` (see the module documentation)."""
    cwd = os.getcwd()
    if isinstance(scenario, os.PathLike):
        return Source("path", os.fspath(scenario), "", "", "")
    if isinstance(scenario, Mapping):
        # Indented, so a line:column in a message points at one key.
        text = json.dumps(scenario, indent=1, default=_unjsonable)
        return Source("json", text, "dict", "<dict>", cwd)
    if isinstance(scenario, str):
        if _is_path(scenario):
            return Source("path", scenario, "", "", "")
        return Source("toml", scenario, "string", "<string>", cwd)
    raise TypeError(
        f"scenario: expected a path, a TOML string or a dict, not {type(scenario).__name__}"
    )


def _unjsonable(v: Any) -> Any:
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    raise TypeError(f"{v!r} ({type(v).__name__}) cannot be written in a scenario")


def overrides(sets: Sets) -> tuple[list[str], list[tuple[str, str]]]:
    """``(["KEY=VALUE", ...], [(KEY, JSON value), ...])`` from ``set=``."""
    if sets is None:
        return [], []
    if isinstance(sets, Mapping):
        return [], [(str(k), json.dumps(v, default=_unjsonable)) for k, v in sets.items()]
    if isinstance(sets, str):
        return [sets], []
    out = []
    for s in sets:
        if not isinstance(s, str):
            raise TypeError(f"set: expected 'KEY=VALUE' strings or a dict, found {s!r}")
        out.append(s)
    return out, []


def variant_list(variants: Union[str, Sequence[str], None]) -> Union[list[str], None]:
    if variants is None:
        return None
    if isinstance(variants, str):
        return [variants]
    return [str(v) for v in variants]
