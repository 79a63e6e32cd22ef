#!/bin/sh
# Builds the C test program, the example gNB loop and its plug-in against
# the installed libtcran (make capi) with gcc -std=c11 -Wall -Wextra -Werror,
# and runs them under AddressSanitizer + UndefinedBehaviorSanitizer (leak
# detection on). With "bench": builds the C benchmark with -O2 instead.
#   scripts/capi-test.sh PREFIX [test|bench]
set -eu
prefix=${1:?usage: capi-test.sh PREFIX [test|bench]}
mode=${2:-test}
CC=${CC:-gcc}
out=target/capi-test
mkdir -p "$out"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cflags="-std=c11 -Wall -Wextra -Werror -g $(pkg-config --cflags tcran) -Iexamples/c"
shared="$(pkg-config --libs tcran) -Wl,-rpath,$prefix/lib"
# libtcran.a with what Rust's std needs (Libs.private).
static="$prefix/lib/libtcran.a $(pkg-config --static --libs-only-l tcran | sed 's/-ltcran//')"

if [ "$mode" = bench ]; then
    $CC $cflags -O2 -fPIC -shared examples/c/prio_plugin.c -o "$out/libprio_plugin.so"
    $CC $cflags -O2 crates/tcran-capi/tests/c/bench.c $static -o "$out/bench"
    exec "$out/bench" "$out/libprio_plugin.so"
fi

san="-O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The installed libraries carry no debug information (capi-install.sh
# strips it; TCRAN_STRIP=0 keeps it).
if [ "${TCRAN_STRIP:-1}" != 0 ] && command -v readelf >/dev/null; then
    for lib in "$prefix/lib/libtcran.a" "$prefix/lib/libtcran.so"; do
        if readelf -S --wide "$lib" | grep -q '\.debug_info'; then
            echo "capi-test: $lib has debug information (not stripped)" >&2
            exit 1
        fi
    done
fi
start=$(date +%s)
$CC $cflags $san -fPIC -shared examples/c/prio_plugin.c -o "$out/libprio_plugin.so"
$CC $cflags $san -fPIC -shared crates/tcran-capi/tests/c/bad_plugin.c -o "$out/libbad_plugin.so"
# The test program links the shared library, the example the static one.
$CC $cflags $san crates/tcran-capi/tests/c/api_test.c $shared -o "$out/api_test"
$CC $cflags $san examples/c/gnb_loop.c $static -o "$out/gnb_loop"
"$out/api_test" "$out"
"$out/gnb_loop" "$out/libprio_plugin.so" 2
echo "C API tests (ASan+UBSan): $(( $(date +%s) - start )) s"
