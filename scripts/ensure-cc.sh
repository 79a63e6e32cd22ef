#!/bin/sh
# Makes sure gcc (with its AddressSanitizer and UndefinedBehaviorSanitizer
# runtimes), g++ and pkg-config are installed: the C API tests
# (scripts/capi-test.sh) build C programs with them, and the fuzz smoke
# run builds libFuzzer (C++) through libfuzzer-sys. Installs Debian's
# gcc, g++, libc6-dev and pkg-config packages with apt-get when one is missing
# (needs root, as on CI and the dev machines; otherwise run it with sudo).
set -eu

if command -v gcc >/dev/null && command -v g++ >/dev/null && command -v pkg-config >/dev/null; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "ensure-cc: gcc, g++ or pkg-config is missing; install them with: sudo $0" >&2
    exit 1
fi

echo "ensure-cc: installing Debian's gcc, g++, libc6-dev and pkg-config packages" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends gcc g++ libc6-dev pkg-config >/dev/null
gcc --version | head -n1 >&2
