#!/bin/sh
# Makes sure the programs the emulator's tests drive are installed (Debian
# packages): iproute2 (ip netns), iperf3, ping (iputils-ping), fping,
# irtt. Installs what is missing with apt-get (needs root, as on CI and
# the dev machines, where the emulator itself needs root anyway).
set -eu

missing=""
command -v ip >/dev/null 2>&1 || missing="$missing iproute2"
command -v iperf3 >/dev/null 2>&1 || missing="$missing iperf3"
command -v ping >/dev/null 2>&1 || missing="$missing iputils-ping"
command -v fping >/dev/null 2>&1 || missing="$missing fping"
command -v irtt >/dev/null 2>&1 || missing="$missing irtt"
command -v sysctl >/dev/null 2>&1 || missing="$missing procps"
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "ensure-emu-tools: missing:$missing; install them with: sudo $0" >&2
    exit 1
fi
echo "ensure-emu-tools: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# iperf3's package asks whether to start a daemon; the answer is no.
echo "iperf3 iperf3/start_daemon boolean false" | debconf-set-selections
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
