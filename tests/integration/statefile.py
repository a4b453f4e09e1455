#!/usr/bin/env python3
"""statefile.py - read and edit an idserver state file, as an operator might.

  statefile.py show FILE                 print the newest valid record
  statefile.py show-ns FILE              print the newest valid namespace marks record
  statefile.py edit FILE REGEX REPL      rewrite the newest record (valid checksum)
  statefile.py corrupt FILE              change a digit of every record (checksums fail)

The file holds two slots of SLOT bytes, each a text record padded with NULs and
ending in "check <FNV-1a 64>"; the newest valid record (highest gen) counts.
Then, only once idserver has namespace marks, two slots of NS_SLOT bytes from
NS_AT for the namespace marks record, which ends at its first checksum line
(docs/design.md sections 6.2 and 13.5); edit and corrupt leave them alone.
"""
import re
import sys

SLOT = 2048
NS_AT = 2 * SLOT
NS_SLOT = 128 * 1024


def fnv(data):
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def records(raw):
    out = []
    for off in (0, SLOT):
        text = raw[off:off + SLOT].split(b"\0", 1)[0]
        m = re.search(rb"(?m)^check ([0-9a-f]{16})\n\Z", text)
        if not m or int(m.group(1), 16) != fnv(text[:m.start()]):
            continue
        g = re.search(rb"(?m)^gen (\d+)$", text)
        out.append((int(g.group(1)) if g else 0, off, text))
    return out


def ns_records(raw):
    out = []
    for off in (NS_AT, NS_AT + NS_SLOT):
        area = raw[off:off + NS_SLOT]
        m = re.search(rb"(?m)^check ([0-9a-f]{16})\n", area)
        if not m or int(m.group(1), 16) != fnv(area[:m.start()]):
            continue
        text = area[:m.end()]
        g = re.search(rb"(?m)^gen (\d+)$", text)
        out.append((int(g.group(1)) if g else 0, off, text))
    return out


def newest(raw):
    recs = records(raw)
    if not recs:
        sys.exit("no valid record")
    return max(recs)


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    raw = open(path, "rb").read()
    if cmd == "show":
        sys.stdout.write(newest(raw)[2].decode())
    elif cmd == "show-ns":
        recs = ns_records(raw)
        if not recs:
            sys.exit("no valid namespace marks record")
        sys.stdout.write(max(recs)[2].decode())
    elif cmd == "edit":
        gen, off, text = newest(raw)
        body = text[:text.rindex(b"check ")]
        body = re.sub(sys.argv[3].encode(), sys.argv[4].encode(), body, flags=re.M)
        rec = body + b"check %016x\n" % fnv(body)
        # Both slots hold the edited record: nothing older can win.
        slot = rec + b"\0" * (SLOT - len(rec))
        open(path, "r+b").write(slot + slot)
    elif cmd == "corrupt":
        data = bytearray(raw)
        for m in re.finditer(rb"(?m)^mark odd (\d)", raw):
            i = m.start(1)
            data[i] = ord("9") if data[i] != ord("9") else ord("8")
        open(path, "r+b").write(bytes(data))
    else:
        sys.exit("unknown command " + cmd)


main()
