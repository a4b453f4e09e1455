#!/usr/bin/env python3
"""statefile.py - read and edit an idserver state file, as an operator might.

  statefile.py show FILE                 print the newest valid record
  statefile.py show-ns FILE              print its namespace marks (mark lines of a namespace)
  statefile.py edit FILE REGEX REPL      rewrite the newest record (valid checksum)
  statefile.py corrupt FILE              change a digit of every record (checksums fail)

The file holds two slots of SLOT bytes from offset 0 and SLOT, each a text
record "idgen-state 3" that ends at its first "check <FNV-1a 64>" line,
followed by its write stamp; the newest valid record (highest gen) counts
(docs/design.md section 6.10). A file of the earlier format (records in two
slots of OLD_SLOT bytes from offset 0, namespace marks from NS_AT) is read
when no version 3 slot is valid.
"""
import re
import sys

SLOT = 266240
OLD_SLOT = 2048
NS_AT = 2 * OLD_SLOT
NS_SLOT = 128 * 1024


def fnv(data):
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def first_record(area):
    m = re.search(rb"(?m)^check ([0-9a-f]{16})\n", area)
    if not m or int(m.group(1), 16) != fnv(area[:m.start()]):
        return None
    return area[:m.end()]


def records(raw):
    out = []
    for off in (0, SLOT):
        text = first_record(raw[off:off + SLOT])
        if text and text.startswith(b"idgen-state 3\n"):
            g = re.search(rb"(?m)^gen (\d+)$", text)
            out.append((int(g.group(1)), off, text))
    if out:
        return out
    for off in (0, OLD_SLOT):
        text = first_record(raw[off:off + OLD_SLOT].split(b"\0", 1)[0])
        if text and not text.startswith(b"idgen-state 3\n"):
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
        text = newest(raw)[2].decode()
        sys.stdout.write("".join(l + "\n" for l in text.splitlines()
                                 if l.startswith("mark ") and not l.startswith("mark - ")))
    elif cmd == "edit":
        gen, off, text = newest(raw)
        body = text[:text.rindex(b"check ")]
        body = re.sub(sys.argv[3].encode(), sys.argv[4].encode(), body, flags=re.M)
        rec = body + b"check %016x\n" % fnv(body)
        # Both slots hold the edited record, with no stamp: nothing older can win.
        with open(path, "r+b") as f:
            if text.startswith(b"idgen-state 3\n"):
                for at in (0, SLOT):
                    f.seek(at)
                    f.write(rec + b"\0" * 112)
            else:
                f.write((rec + b"\0" * (OLD_SLOT - len(rec))) * 2)
    elif cmd == "corrupt":
        data = bytearray(raw)
        for m in re.finditer(rb"(?m)^mark (?:- )?odd (\d)", raw):
            i = m.start(1)
            data[i] = ord("9") if data[i] != ord("9") else ord("8")
        open(path, "r+b").write(bytes(data))
    else:
        sys.exit("unknown command " + cmd)


main()
