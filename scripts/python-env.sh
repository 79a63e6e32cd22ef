#!/usr/bin/env bash
# `make python`: the project virtualenv (target/venv, ignored by git) with
# the pinned tools of python/requirements-dev.txt, and the `tcran` package
# built from crates/tcran-py by maturin (release, abi3) and installed into
# it. Re-running only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-target/venv}"
PYTHON="${PYTHON:-python3}"
req=python/requirements-dev.txt
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
# Install the requirements again only when the file changed.
stamp="$VENV/.requirements.sha256"
want="$(sha256sum "$req" | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q -r "$req"
    echo "$want" > "$stamp"
fi
# maturin develop builds into the workspace's target/ (dependencies are
# shared with `cargo build --release`) and installs into the venv.
root="$PWD"
cd python
VIRTUAL_ENV="$root/$VENV" PATH="$root/$VENV/bin:$PATH" \
    "$root/$VENV/bin/maturin" develop --release --quiet
