#!/usr/bin/python3
"""A systemd notify socket for test_notify: receives sd_notify datagrams.

notify_listen.py SOCKET OUT PORT...: binds SOCKET (a path, or @name for the
abstract namespace), appends one line per datagram to OUT (its lines joined
by '|'), and on the first READY=1 connects at once to every PORT on
127.0.0.1, appending "PROBE port=ok|refused ...": READY=1 must come only once
every listener answers. Runs until killed, or 300 s.
"""
import socket
import sys
import time

path, out, ports = sys.argv[1], sys.argv[2], [int(p) for p in sys.argv[3:]]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + path[1:] if path.startswith("@") else path)
s.settimeout(1.0)
ready = False
end = time.monotonic() + 300
with open(out, "a", buffering=1) as f:
    f.write("LISTENING\n")
    while time.monotonic() < end:
        try:
            msg = s.recv(4096).decode("utf-8", "replace")
        except socket.timeout:
            continue
        f.write(msg.replace("\n", "|") + "\n")
        if not ready and "READY=1" in msg.split("\n"):
            ready = True
            res = []
            for p in ports:
                c = socket.socket()
                c.settimeout(2)
                try:
                    c.connect(("127.0.0.1", p))
                    res.append("%d=ok" % p)
                except OSError:
                    res.append("%d=refused" % p)
                finally:
                    c.close()
            f.write("PROBE " + " ".join(res) + "\n")
