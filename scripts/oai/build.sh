#!/bin/sh
# `make oai`: OpenAirInterface v2.1.0's gNB, UE and rfsimulator with tcran
# inside (docs/oai.md), built into a cache outside the repository.
#
#   OAI_SRC    directory holding the three archives (default ../shared/oai)
#   OAI_CACHE  where sources, asn1c and the build tree go (default /work/oai-cache)
#   OAI_JOBS   parallel compile jobs (default 2)
#
# Each step prints how long it took. Steps that are done are skipped
# (stamp files in the cache), so a second run after a tcran change rebuilds
# libtcran and the glue, then ninja relinks the two softmodems.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
here="$repo/scripts/oai"
src_dir=${OAI_SRC:-$repo/../shared/oai}
cache=${OAI_CACHE:-/work/oai-cache}
jobs=${OAI_JOBS:-2}
oai="$cache/src/openairinterface5g-v2.1.0"
build="$cache/build"
target_dir=${CARGO_TARGET_DIR:-$repo/target}
nice_cmd="nice -n ${OAI_NICE:-15}"

step() {
    name=$1
    shift
    start=$(date +%s)
    "$@"
    echo "oai: $name took $(($(date +%s) - start)) s"
}

need_archive() {
    for f in openairinterface5g-v2.1.0.tar.gz asn1c-a6bdcd22.tar.gz simde-389f360.tar.gz; do
        if [ ! -f "$src_dir/$f" ]; then
            echo "oai: $src_dir/$f is missing (OAI_SRC names the directory holding the OAI v2.1.0, asn1c and SIMDe archives)" >&2
            exit 2
        fi
    done
}

unpack() {
    mkdir -p "$cache/src"
    for f in openairinterface5g-v2.1.0 asn1c-a6bdcd22 simde-389f360; do
        if [ ! -f "$cache/src/.$f.unpacked" ]; then
            rm -rf "${cache:?}/src/$f"
            tar -xzf "$src_dir/$f.tar.gz" -C "$cache/src"
            touch "$cache/src/.$f.unpacked"
        fi
    done
    # The mirror lacks this file; tcran supplies it (TS 38.212 §5.3.1).
    cmp -s "$here/nr_polar_kronecker_power_matrices.c" \
        "$oai/openair1/PHY/CODING/nrPolar_tools/nr_polar_kronecker_power_matrices.c" ||
        cp "$here/nr_polar_kronecker_power_matrices.c" "$oai/openair1/PHY/CODING/nrPolar_tools/"
    mkdir -p "$cache/include"
    [ -d "$cache/include/simde" ] || cp -r "$cache/src/simde-389f360" "$cache/include/simde"
}

# Copies a file only when it changed, so that ninja rebuilds only what
# depends on a change.
update() {
    mkdir -p "$2"
    cmp -s "$1" "$2/$(basename "$1")" || cp "$1" "$2/"
}

# The applied patch is kept beside the tree: when the repository's copy
# changes, the old one is reversed first, so only the files either touches
# are recompiled.
apply_patch() {
    applied="$cache/src/tcran-oai.applied.patch"
    if [ -f "$applied" ] && cmp -s "$applied" "$here/tcran-oai.patch"; then
        return
    fi
    if [ -f "$applied" ]; then
        patch -s -R -p1 -d "$oai" <"$applied"
        rm "$applied"
    fi
    patch -s -p1 -d "$oai" <"$here/tcran-oai.patch"
    cp "$here/tcran-oai.patch" "$applied"
}

# The replacement polar table against TS 38.212 §5.3.1 written out
# independently (polar_test.c), compiled alone: OAI's nr_polar_defs.h is
# stood in for by the one declaration it needs.
polar_test() {
    shim="$cache/polar-test"
    mkdir -p "$shim"
    printf '#include <stdint.h>\nconst uint8_t **nr_polar_kronecker_power_matrices(uint8_t n);\n' >"$shim/nr_polar_defs.h"
    gcc -std=gnu11 -Wall -Wextra -Werror -O1 -I"$shim" "$here/polar_test.c" \
        "$here/nr_polar_kronecker_power_matrices.c" -o "$shim/polar_test" -lpthread
    "$shim/polar_test"
}

build_asn1c() {
    [ -x "$cache/asn1c/bin/asn1c" ] && return
    cd "$cache/src/asn1c-a6bdcd22"
    $nice_cmd autoreconf -iv >"$cache/asn1c-build.log" 2>&1
    $nice_cmd ./configure --prefix="$cache/asn1c" >>"$cache/asn1c-build.log" 2>&1
    $nice_cmd make -j"$jobs" >>"$cache/asn1c-build.log" 2>&1
    make install >>"$cache/asn1c-build.log" 2>&1
    cd "$repo"
}

# libtcran.a and tcran's glue go where OAI's cmake (patched) finds them:
# the glue into openair2/TCRAN, the library into the cache.
build_libtcran() {
    (cd "$repo" && $nice_cmd "${CARGO:-cargo}" build --release -q -p tcran-capi --lib)
    update "$target_dir/release/libtcran.a" "$cache/lib"
    for f in "$here/glue/tcran_oai.c" "$here/glue/tcran_oai.h" "$repo/crates/tcran-capi/include/tcran.h"; do
        update "$f" "$oai/openair2/TCRAN"
    done
}

configure_oai() {
    # Configured already, by this checkout: a cache configured from another
    # checkout (a moved or deleted clone) names that checkout's settings
    # file, and ninja's regeneration would fail on it.
    if [ -f "$build/build.ninja" ] &&
        grep -qx "TCRAN_LIB:UNINITIALIZED=$cache/lib/libtcran.a" "$build/CMakeCache.txt" &&
        grep -qx "CMAKE_PROJECT_INCLUDE:[A-Z]*=$here/oai-build-settings.cmake" "$build/CMakeCache.txt"; then
        return
    fi
    mkdir -p "$build"
    $nice_cmd cmake -S "$oai" -B "$build" -G Ninja \
        -DOAI_SIMU=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DASN1C_EXEC="$cache/asn1c/bin/asn1c" \
        -DCMAKE_C_FLAGS="-I$cache/include" -DCMAKE_CXX_FLAGS="-I$cache/include" \
        -DCMAKE_PROJECT_INCLUDE="$here/oai-build-settings.cmake" \
        -DTCRAN_LIB="$cache/lib/libtcran.a" \
        >"$cache/cmake.log" 2>&1 || { tail -30 "$cache/cmake.log" >&2; exit 1; }
}

build_oai() {
    $nice_cmd ninja -C "$build" -j"$jobs" \
        nr-softmodem nr-uesoftmodem params_libconfig coding rfsimulator dfts ldpc \
        >"$cache/ninja.log" 2>&1 || { tail -40 "$cache/ninja.log" >&2; exit 1; }
    grep -c '^\[' "$cache/ninja.log" | sed 's/^/oai: ninja ran /; s/$/ build steps/'
}

total_start=$(date +%s)
need_archive
step "unpack" unpack
step "polar table test" polar_test
if [ -f "$here/tcran-oai.patch" ]; then step "patch" apply_patch; fi
step "asn1c" build_asn1c
step "libtcran" build_libtcran
step "cmake" configure_oai
step "gNB, UE, rfsimulator" build_oai
echo "oai: done in $(($(date +%s) - total_start)) s; binaries in $build"
