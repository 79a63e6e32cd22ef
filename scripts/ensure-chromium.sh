#!/bin/sh
# Makes sure Debian's headless Chromium is installed: the report tests
# (crates/tcran-cli/tests/integration/report_browser.rs) open report.html in it.
# Installs the `chromium` package with apt-get when it is missing (needs
# root, as on CI and the dev machines; otherwise run it with sudo).
# Never downloads a browser from anywhere else.
set -eu

if [ -x /usr/bin/chromium ]; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "ensure-chromium: /usr/bin/chromium is missing; install it with: sudo $0" >&2
    exit 1
fi

echo "ensure-chromium: installing Debian's chromium package" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
/usr/bin/chromium --version >&2
