"""pty_expect.py SECONDS COMMAND... - runs COMMAND on a pty (TERM=dumb) and
drives it as expect does, from a script on stdin, one step a line:

  expect REGEX   wait until the output since the last match matches REGEX
                 (Python re, DOTALL; carriage returns dropped); its groups,
                 if any, are printed as "MATCH g1 g2 ..."
  send TEXT      type TEXT and a newline
  eof            wait until COMMAND ends and closes the pty

Each step waits at most SECONDS. A line is only typed once the output it waits
for came, so the check does not depend on how a loaded machine interleaves
the pty's echo of typed-ahead input with the program's output (issue 36: a
session's input paced by sleeps was echoed before the reply it followed).
Exits 1 on a timeout or an early end, with the step and the transcript on
stderr; the transcript also goes to stdout's end as "TRANSCRIPT ..." lines.
"""
import os
import re
import select
import subprocess
import sys
import time

limit, cmd = float(sys.argv[1]), sys.argv[2:]
steps = [l.rstrip("\n") for l in sys.stdin if l.strip()]
master, slave = os.openpty()
env = dict(os.environ, TERM="dumb")
proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env,
                        start_new_session=True, close_fds=True)
os.close(slave)
buf, pos, eof = "", 0, False


def read_some(deadline):
    """Appends what the pty has (waiting until deadline); False at its end."""
    global buf, eof
    r, _, _ = select.select([master], [], [], max(0.0, deadline - time.monotonic()))
    if not r:
        return True
    try:
        data = os.read(master, 4096)
    except OSError:         # EIO: the child closed its side
        data = b""
    if not data:
        eof = True
        return False
    buf += data.decode("utf-8", "replace").replace("\r", "")
    return True


def give_up(why):
    sys.stderr.write("pty_expect: %s\n--- transcript ---\n%s\n" % (why, buf))
    proc.kill()
    proc.wait()
    sys.exit(1)


for step in steps:
    verb, _, arg = step.partition(" ")
    deadline = time.monotonic() + limit
    if verb == "send":
        os.write(master, (arg + "\n").encode())
    elif verb == "expect":
        rx = re.compile(arg, re.S)
        while True:
            m = rx.search(buf, pos)
            if m:
                pos = m.end()
                if m.groups():
                    print("MATCH " + " ".join(g or "" for g in m.groups()), flush=True)
                break
            if eof or time.monotonic() >= deadline:
                give_up("%s for %r" % ("end of output" if eof else "timed out", arg))
            read_some(deadline)
    elif verb == "eof":
        while not eof:
            if time.monotonic() >= deadline:
                give_up("timed out waiting for the end")
            read_some(deadline)
    else:
        give_up("unknown step %r" % step)
try:
    proc.wait(timeout=limit)
except subprocess.TimeoutExpired:
    give_up("the command did not exit")
for line in buf.split("\n"):
    print("TRANSCRIPT " + line)
