#!/usr/bin/env bash
# Builds FlexRIC (openaicellular/flexric, dev c74bcef0) as a local interop
# peer for scripts/flexric-matrix.sh: its nearRT-RIC, its emulated gNB
# (emu_agent_gnb, to check the transport against FlexRIC itself first), its
# eight service-model plugins and its stock C xApps, plus our LD_PRELOAD
# shim (scripts/flexric-sctp-shim.c) that carries FlexRIC's SCTP over TCP
# with the 4-byte big-endian length framing tcran speaks (docs/e2.md,
# "Transport"). FlexRIC is a peer to test against, never code of ours:
# this script fetches nothing and copies nothing of it into the repository.
#
#   scripts/build-flexric-peer.sh FLEXRIC_SRC [BUILD_DIR]
#
# FLEXRIC_SRC: a checkout of FlexRIC at c74bcef0 kept OUTSIDE this
# repository, e.g. from a mirror:
#   git -C flexric.git archive c74bcef0 | tar -x -C /work/flexric-peer
# BUILD_DIR defaults to FLEXRIC_SRC/build. Prints the line to export
# (FLEXRIC_DIR=BUILD_DIR) for scripts/flexric-matrix.sh.
#
# Needs: cmake, ninja-build, gcc, libsctp-dev (headers only: this kernel may
# have no SCTP at all), libsqlite3-dev. About 2 min on two cores (1,428 steps).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${1:-${FLEXRIC_SRC:-}}
if [ -z "$src" ] || [ ! -f "$src/CMakeLists.txt" ] || [ ! -d "$src/src/ric" ]; then
    echo "usage: $0 FLEXRIC_SRC [BUILD_DIR]  (FLEXRIC_SRC: FlexRIC's source tree at c74bcef0)" >&2
    exit 2
fi
src=$(cd "$src" && pwd)
case "$src/" in
"$(cd "$here/.." && pwd)"/*)
    echo "FLEXRIC_SRC must be outside this repository: $src" >&2
    exit 2
    ;;
esac
build=${2:-$src/build}
for header in /usr/include/netinet/sctp.h /usr/include/sqlite3.h; do
    if [ ! -f "$header" ]; then
        echo "missing $header: apt-get install libsctp-dev libsqlite3-dev" >&2
        exit 2
    fi
done

# Some snapshots of the repository lack SQLite's 8 MB amalgamation
# (src/xApp/db/sqlite3/sqlite3.c, a blob the mirror does not hold). The
# xApp library only calls SQLite's stable C API, so Debian's libsqlite3 is
# linked in its place (CMAKE_C_STANDARD_LIBRARIES below) and the file left
# empty.
amalgamation=$src/src/xApp/db/sqlite3/sqlite3.c
if [ ! -s "$amalgamation" ]; then
    echo "/* SQLite comes from the system's libsqlite3 (build-flexric-peer.sh) */" >"$amalgamation"
fi

# Debug, as FlexRIC builds by default and as the captures in
# ../shared/e2 were made; no unit tests, no SWIG bindings.
nice -n 15 cmake -S "$src" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Debug \
    -DUNIT_TEST=FALSE \
    -DXAPP_MULTILANGUAGE=OFF \
    -DCMAKE_C_STANDARD_LIBRARIES=-lsqlite3 \
    -DCMAKE_CXX_STANDARD_LIBRARIES=-lsqlite3 >/dev/null

xapps="xapp_hw xapp_mac_ctrl xapp_gtp_mac_rlc_pdcp_moni xapp_kpm_moni xapp_kpm_rc
  xapp_rc_moni xapp_slice_moni_ctrl xapp_tc_all xapp_tc_codel xapp_tc_ecn
  xapp_tc_osi_codel xapp_tc_partition"
sms="mac_sm rlc_sm pdcp_sm slice_sm tc_sm gtp_sm kpm_sm rc_sm"
# shellcheck disable=SC2086 # word lists
nice -n 15 ninja -C "$build" -j 2 nearRT-RIC emu_agent_gnb $sms $xapps

# FlexRIC loads every plugin of one directory (-p DIR/); the build leaves
# them one per model directory.
mkdir -p "$build/sm-libs"
find "$build/src/sm" -name 'lib*_sm.so' -exec cp -f {} "$build/sm-libs/" \;

gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -shared -fPIC \
    -o "$build/libsctp-over-tcp.so" "$here/flexric-sctp-shim.c" -ldl -lpthread

echo "FlexRIC peer built: export FLEXRIC_DIR=$build"
