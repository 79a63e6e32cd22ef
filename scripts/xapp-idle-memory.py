#!/usr/bin/env python3
"""Memory of `tcran xapp` holding idle connections (docs/performance.md,
"Idle connections").

Usage: scripts/xapp-idle-memory.py TCRAN_BINARY N [MAX_CONNECTIONS] [ROUNDS]

Starts `tcran xapp monitor` on 127.0.0.1:0, opens N TCP connections that
never send a byte, and prints the xApp's resident set (VmRSS) before,
while holding them, and 3 s after closing them, for each round.
"""
import re
import resource
import socket
import subprocess
import sys
import time

binary, n = sys.argv[1], int(sys.argv[2])
cap = sys.argv[3] if len(sys.argv) > 3 else str(n)
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
resource.setrlimit(resource.RLIMIT_NOFILE, (n + 1000, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
xapp = subprocess.Popen(
    [binary, "xapp", "monitor", "--ric-listen", "127.0.0.1:0",
     "--max-connections", cap, "--duration", "600s"],
    stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
port = int(re.search(r"127\.0\.0\.1:(\d+)", xapp.stderr.readline()).group(1))


def rss_kib():
    with open(f"/proc/{xapp.pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS"))


time.sleep(0.5)
print(f"{n} idle connections, --max-connections {cap}: RSS before {rss_kib()} KiB")
for r in range(rounds):
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
    time.sleep(2)
    held = rss_kib()
    for s in socks:
        s.close()
    time.sleep(3)
    print(f"  round {r}: holding {held} KiB, 3 s after closing {rss_kib()} KiB")
xapp.kill()
