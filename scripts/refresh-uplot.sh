#!/bin/sh
# Refreshes the chart library the dashboard embeds (uPlot, MIT) from the npm
# registry at a pinned version, checking the tarball's sha256, and copies
# the three files the page uses (and the licence) into
# crates/tcran-cli/src/dashboard/assets/. The files are committed: building
# tcran needs no npm. To move to another version, change VERSION and
# SHA256 (the sha256 of `npm pack uplot@VERSION`) and run it again.
set -eu

VERSION=1.6.32
SHA256=4b8a8191e425658e3ea8c8c1314b0fc679c861ee3a1af2b20c7b16ba50b5133d

here=$(cd "$(dirname "$0")/.." && pwd)
dest="$here/crates/tcran-cli/src/dashboard/assets"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$work"
npm pack --silent "uplot@$VERSION" >/dev/null
tarball="uplot-$VERSION.tgz"
got=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$got" != "$SHA256" ]; then
    echo "refresh-uplot: $tarball has sha256 $got, expected $SHA256" >&2
    exit 1
fi
tar xzf "$tarball"
cp package/dist/uPlot.iife.min.js "$dest/uPlot.iife.min.js"
cp package/dist/uPlot.min.css "$dest/uPlot.min.css"
cp package/LICENSE "$dest/uPlot.LICENSE"
echo "refresh-uplot: uPlot $VERSION ($SHA256) in $dest" >&2
