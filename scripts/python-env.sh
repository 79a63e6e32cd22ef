#!/usr/bin/env bash
# `make python`: the project virtualenv (target/venv, ignored by git) with
# the pinned tools of python/requirements-dev.txt, and the `tcran` package
# (python/tcran plus its native module, built from crates/tcran-py)
# installed into it. Re-running only rebuilds what changed.
#
# The native module is the cdylib cargo builds with the rest of the
# workspace: `cargo build --release --workspace --lib --bins --tests`
# selects the targets and resolves the features of the `unit` stage of
# `make test` (tests turn on the workspace's dev-dependencies), so after
# that stage it compiles nothing.
# `maturin develop` would resolve features for tcran-py alone, which
# differ (dev-dependencies such as jsonschema turn on serde_json's
# float_roundtrip, ...), and compile 56 of its 198 packages, every tcran
# crate among them, a second time (docs/performance.md).
# PYO3_BUILD_EXTENSION_MODULE (set in .cargo/config.toml, as maturin sets
# it) makes that cdylib an extension module; the copy is stripped (debug
# information and local symbols).
#
# TCRAN_PY_BUILD=maturin builds and installs with `maturin develop
# --release` instead (what a wheel gets, see docs/python.md).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-target/venv}"
PYTHON="${PYTHON:-python3}"
CARGO="${CARGO:-cargo}"
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
root="$PWD"
if [ "${TCRAN_PY_BUILD:-cargo}" = maturin ]; then
    cd python
    VIRTUAL_ENV="$root/$VENV" PATH="$root/$VENV/bin:$PATH" \
        "$root/$VENV/bin/maturin" develop --release --quiet
    exit 0
fi
"$CARGO" build --release -q --workspace --lib --bins --tests
so="target/release/lib_native.so"
dest="python/tcran/_native.abi3.so"
if [ "$so" -nt "$dest" ]; then
    if command -v strip >/dev/null; then
        strip --strip-unneeded -o "$dest.tmp" "$so"
    else
        cp "$so" "$dest.tmp"
    fi
    mv -f "$dest.tmp" "$dest"
fi
# An editable install, as `maturin develop` makes for a project with
# python-source: a .pth file puts python/ on the venv's path.
site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$root/python" > "$site/tcran.pth"
"$VENV/bin/python" -c 'import tcran'
