#!/usr/bin/env bash
# The ns-3 LENA environment the comparison programs of scripts/ns3/ run in
# (docs/simulator.md "Against ns-3 LENA"): a Python venv outside the
# repository holding ns-3 from PyPI, pinned, so every machine runs the same
# LENA. Idempotent: an existing venv that already imports the right ns-3 is
# left as it is.
#
#   scripts/ns3/setup.sh          (make ns3; NS3_VENV overrides the place)
#
# Prints the venv's path, its size and how long the install took.
set -euo pipefail
venv=${NS3_VENV:-$HOME/.cache/tcran-ns3}
# The release the tables of docs/simulator.md were made with; another one
# changes LENA's defaults (schedulers, AMC, RLC) under the comparison.
pin=3.44.post0
python=${PYTHON:-python3}

# `from ns import ns` is the 3.44 bindings' entry point (cppyy); the LTE
# module is what the comparison needs, and the wheel could in principle
# be built without it, so it is looked for by a class it defines.
check() {
	"$venv/bin/python" - "$pin" <<'PY'
import sys
from importlib.metadata import version
want = sys.argv[1]
have = version("ns3")
if have != want:
    sys.exit(f"ns3 {have} installed, {want} wanted")
from ns import ns
ns.LteHelper  # raises AttributeError without the LTE module
ns.A3RsrpHandoverAlgorithm
ns.ThreeGppUmaPropagationLossModel
ns.Ping
print(f"ns-3 {have} with LTE")
PY
}

# Importing the bindings takes 12-15 s of CPU, so a venv that passed the
# check once says so in a stamp naming the pin, and is not checked again.
stamp=$venv/.tcran-ns3-checked
if [[ -f $stamp && $(cat "$stamp") == "$pin" ]]; then
	echo "ns-3 venv ready: $venv"
	exit 0
fi
if [[ -x $venv/bin/python ]] && check 2>/dev/null; then
	echo "$pin" >"$stamp"
	echo "ns-3 venv ready: $venv ($(du -sh "$venv" | cut -f1))"
	exit 0
fi
t0=$EPOCHREALTIME
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "ns3==$pin"
check
echo "$pin" >"$stamp"
awk -v a="$t0" -v b="$EPOCHREALTIME" -v v="$venv" -v s="$(du -sh "$venv" | cut -f1)" \
	'BEGIN { printf "ns-3 venv made: %s (%s) in %.0f s\n", v, s, b - a }'
