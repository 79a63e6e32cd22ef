#!/bin/sh
# Installs the C library cargo built (`make capi` builds the workspace's
# release libraries, tcran-capi's among them) into a prefix:
# lib/libtcran.so.0.X.Y (+ .so.0 and .so links), lib/libtcran.a,
# include/tcran.h and lib/pkgconfig/tcran.pc.
#   scripts/capi-install.sh PREFIX [TARGET_DIR]
# PREFIX may include a DESTDIR; the .pc file names PREFIX without DESTDIR
# when PKG_PREFIX is set (packaging: PKG_PREFIX=/usr DESTDIR=... make capi).
# The installed libraries are stripped of debug information (the release
# profile keeps line tables for the project's own backtraces): libtcran.a
# goes from 69 MB to 28 MB, a program linked with it from 24.7 MB to 7.1 MB
# (docs/c-api.md). TCRAN_STRIP=0 installs them as built.
set -eu
prefix=${1:?usage: capi-install.sh PREFIX [TARGET_DIR]}
target=${2:-target/release}
pc_prefix=${PKG_PREFIX:-$prefix}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)

mkdir -p "$prefix/lib/pkgconfig" "$prefix/include"
install -m 0644 crates/tcran-capi/include/tcran.h "$prefix/include/tcran.h"
install -m 0644 "$target/libtcran.a" "$prefix/lib/libtcran.a"
install -m 0755 "$target/libtcran.so" "$prefix/lib/libtcran.so.$version"
if [ "${TCRAN_STRIP:-1}" != 0 ]; then
    # --strip-debug on the archive keeps every symbol a program links to;
    # the shared library needs only its dynamic symbols.
    strip --strip-debug "$prefix/lib/libtcran.a"
    strip --strip-unneeded "$prefix/lib/libtcran.so.$version"
fi
ln -sf "libtcran.so.$version" "$prefix/lib/libtcran.so.0"
ln -sf "libtcran.so.0" "$prefix/lib/libtcran.so"

# Libs.private: what a static link needs besides libtcran.a (Rust's std on
# glibc, as `rustc --print native-static-libs` lists it).
cat > "$prefix/lib/pkgconfig/tcran.pc" <<PC
prefix=$pc_prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: tcran
Description: Traffic control for the 5G RAN: the TC-RAN pipeline for C gNB stacks
Version: $version
Libs: -L\${libdir} -ltcran
Libs.private: -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
Cflags: -I\${includedir}
PC
echo "installed libtcran $version into $prefix"
