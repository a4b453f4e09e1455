#!/usr/bin/env python3
"""split-sections.py - keeps every file of docs/design/ short (issue 33): a newcomer
finds the argument for a rule in one file of at most LIMIT bytes.

A section whose file would be longer than LIMIT keeps its introduction in its own file,
docs/design/NN-slug.md, and each of its subsections N.M (with any N.M.K inside) moves
to a file of its own, docs/design/NN.M-slug.md. A stretch still longer than LIMIT that
has no numbered heading of its own (the introduction of section 14, and 14.1) is cut
at the bold leads of its paragraphs ("**Speed.** ...", after a blank line) into parts:
the first part stays in the stretch's file, part K goes to <that file>-K-slug.md and
opens with an unnumbered heading naming the stretch, the part and the leads it holds.
Where PARTS names the leads a stretch is cut at, it is cut there; else as late as fits.

Text moves and is not rewritten: what is added is the navigation line at the top of
every file (index, previous and next file in reading order), a split section's list of
its files (after a <!-- files --> line) and the parts' headings. The script first
joins each section's files back (dropping exactly what it added), then splits again:
run it after an edit and the layout follows; on a tree already laid out it rewrites
nothing. After a merge that brought back a section's old single file (edited on a
branch made before the split), keep that file, remove the section's others (its
NN.M-*.md and its parts, *-K-*.md) and run it. It rewrites the
contents of docs/design.md (between "## Contents" and the next "## " heading) and the
table "## Rules and their arguments" from src/rules.h and src/rules.c: each
rule of the simulation, the subsections its description cites, their files. Before it
writes, it checks that each section's new files joined back are its old text, byte for
byte. tests/integration/test_docs.sh checks the result.

Usage: scripts/split-sections.py [ROOT]
"""
import glob
import os
import re
import sys

LIMIT = 20 * 1024
DIR = "docs/design"
INDEX = "docs/design.md"
NAV = "[Design index](../design.md)"
MARK = "<!-- files -->\n"
PARTS = {
    "14": ["**Namespaces**", "**A change of the increment**", "**Read-only servers**",
           "**State file faults.**", "**Rules with switches**", "**Speed.**",
           "**Liveness**"],
    "14.1": ["**The outside run's five paths**"],
}
FENCE = re.compile(r"^(```|~~~)")
NAME = re.compile(r"^([0-9]{2})(?:\.([0-9]+))?-.*\.md$")
PARTHEAD = re.compile(r"^## .* \(section ([0-9.]+)\), part ([0-9]+) of [0-9]+: ")
TOP = re.compile(r"^## ([0-9]+)\. (.*?)\s*$")
SUB = re.compile(r"^### ([0-9]+\.[0-9]+) (.*?)\s*$")
HEAD = re.compile(r"^(#{1,6}) (.*?)\s*$")
NUMHEAD = re.compile(r"^#{2,4} ([0-9]+(?:\.[0-9]+)*)\.? ")
LEAD = re.compile(r"^\*\*(.+?)\*\*")
STOP = {"a", "an", "and", "the", "of", "its", "to", "in", "for"}


def die(msg):
    sys.stderr.write("split-sections.py: %s\n" % msg)
    sys.exit(1)


def slug(h):
    """GitHub's anchor for a heading text (as tests/integration/test_docs.sh computes it)."""
    return re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")


def words(title, n):
    """At most n words of a title, before any colon or parenthesis, as a file name part."""
    w = re.sub(r"[^\w\- ]", "", re.split(r"[:(]", title)[0].replace("`", "")).lower().split()
    while w and w[0] in STOP:
        w.pop(0)
    w = w[:n]
    while w and w[-1] in STOP:
        w.pop()
    return "-".join(w) or "part"


def size(lines):
    return sum(len(l.encode()) for l in lines)


def headings(lines):
    """(index, level, text, anchor) of each heading outside fenced blocks."""
    fence, seen = False, {}
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fence = not fence
            continue
        m = None if fence else HEAD.match(line)
        if m:
            s = slug(m.group(2))
            k = seen.get(s, 0)
            seen[s] = k + 1
            yield i, len(m.group(1)), m.group(2), (s if k == 0 else "%s-%d" % (s, k))


def leads(lines):
    """Indexes of the lines that open a paragraph with a bold lead, outside fences."""
    fence, out = False, []
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fence = not fence
        elif not fence and i > 0 and lines[i - 1].strip() == "" and LEAD.match(line):
            out.append(i)
    return out


def lead_text(line):
    return LEAD.match(line).group(1).rstrip(".:")


def read_sections():
    """The text of every section as one list of lines, joined back from its files."""
    files = {}
    for path in sorted(glob.glob(os.path.join(DIR, "*.md"))):
        name = os.path.basename(path)
        m = NAME.match(name)
        if not m:
            die("%s: not NN-*.md or NN.M-*.md" % path)
        lines = open(path).read().splitlines(keepends=True)
        if len(lines) < 2 or not lines[0].startswith(NAV) or lines[1] != "\n":
            die("%s: does not open with the navigation line and a blank line" % path)
        body, part = lines[2:], 1
        p = PARTHEAD.match(body[0]) if body else None
        if p:
            if len(body) < 2 or body[1] != "\n":
                die("%s: a part's heading without a blank line after it" % path)
            body, part = body[2:], int(p.group(2))
        if MARK in body:
            body = body[:body.index(MARK)]
        num = int(m.group(1))
        files.setdefault(num, []).append((int(m.group(2) or 0), part, name, body))
    secs = []
    for num in sorted(files):
        pieces = sorted(files[num])
        main = [p for p in pieces if p[0] == 0 and p[1] == 1]
        if len(main) != 1:
            die("section %d: %d files for its opening" % (num, len(main)))
        lines = [l for p in pieces for l in p[3]]
        t = TOP.match(lines[0]) if lines else None
        if not t or int(t.group(1)) != num:
            die("%s: does not open with \"## %d. Title\"" % (main[0][2], num))
        secs.append({"num": str(num), "title": t.group(2), "file": main[0][2],
                     "lines": lines})
    return secs


def cut(lines, key, name, title):
    """A stretch as its parts: [(file, lines, heading or None, leads)]."""
    size_all = size(lines)
    at = leads(lines)
    starts = [0]
    if key in PARTS:
        for want in PARTS[key]:
            hit = [i for i in at if lines[i].startswith(want)]
            if len(hit) != 1:
                die("section %s: %d paragraphs open with %s" % (key, len(hit), want))
            starts.append(hit[0])
        if starts != sorted(starts):
            die("section %s: PARTS out of order" % key)
    elif size_all > LIMIT:
        base = 0
        for k, i in enumerate(at):
            nxt = at[k + 1] if k + 1 < len(at) else len(lines)
            if size(lines[base:nxt]) > LIMIT - 512 and i > base:
                starts.append(i)
                base = i
    parts = []
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else len(lines)
        chunk = lines[s:e]
        if k == 0:
            parts.append((name, chunk, None, []))
        else:
            held = [lead_text(chunk[0])] + [lead_text(chunk[i]) for i in leads(chunk)]
            f = "%s-%d-%s.md" % (name[:-3], k + 1, words(held[0], 4))
            parts.append((f, chunk, (title, key, k + 1, len(starts)), held))
    return parts


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    os.chdir(root)
    secs = read_sections()

    # Each section's files, in reading order: (file, body, nav title, part heading, sub).
    order = []
    for s in secs:
        lines, num = s["lines"], s["num"]
        subs = [(i, SUB.match(l)) for i, l in enumerate(lines) if SUB.match(l)]
        fence = False
        for i, l in enumerate(lines):
            if FENCE.match(l):
                fence = not fence
            elif fence and SUB.match(l):
                die("section %s: a ### N.M line inside a fenced block" % num)
        s["files"] = []
        if size(lines) + 200 <= LIMIT or not subs:
            pieces = [(num, s["file"], s["title"], lines)]
        else:
            pieces = [(num, s["file"], s["title"], lines[:subs[0][0]])]
            for k, (i, m) in enumerate(subs):
                e = subs[k + 1][0] if k + 1 < len(subs) else len(lines)
                mm = m.group(1).split(".")
                if mm[0] != num:
                    die("subsection %s inside section %s" % (m.group(1), num))
                f = "%02d.%s-%s.md" % (int(num), mm[1], words(m.group(2), 4))
                pieces.append((m.group(1), f, m.group(2), lines[i:e]))
        for key, f, title, body in pieces:
            for pf, pb, head, held in cut(body, key, f, title):
                nav = ("%s. %s" % (num, title)) if key == num else "%s %s" % (key, title)
                if head:
                    nav += ", part %d" % head[2]
                s["files"].append({"file": pf, "body": pb, "nav": nav, "head": head,
                                   "held": held, "key": key})
        joined = [l for f in s["files"] for l in f["body"]]
        if joined != lines:
            die("internal: section %s's files would not join back to its text" % num)
        order.extend(s["files"])
    names = [f["file"] for f in order]
    if len(set(names)) != len(names):
        die("two files would share a name: %s" % " ".join(names))

    # Where each numbered heading is: number -> (file, anchor, first heading of its file).
    where = {}
    for f in order:
        first = True
        for i, lvl, text, a in headings(f["body"]):
            m = NUMHEAD.match(f["body"][i])
            if m:
                where[m.group(1)] = (f["file"], a, first and i == 0)
            first = False

    def link(num):
        f, a, top = where[num]
        return "design/%s" % f if top else "design/%s#%s" % (f, a)

    out = {}
    for k, f in enumerate(order):
        nav = NAV
        if k > 0:
            nav += " · [← %s](%s)" % (order[k - 1]["nav"], order[k - 1]["file"])
        if k + 1 < len(order):
            nav += " · [%s →](%s)" % (order[k + 1]["nav"], order[k + 1]["file"])
        text = [nav + "\n", "\n"]
        if f["head"]:
            title, key, part, n = f["head"]
            text += ["## %s (section %s), part %d of %d: %s\n" %
                     (title, key, part, n, "; ".join(f["held"])), "\n"]
        text += f["body"]
        if text[-1] and not text[-1].endswith("\n"):
            text[-1] += "\n"
        out[f["file"]] = text
    for s in secs:
        if len(s["files"]) > 1:
            first = s["files"][0]["file"]
            lst = [MARK, "Section %s, one file for each subsection and part:\n" % s["num"], "\n"]
            for f in s["files"][1:]:
                held = (": " + "; ".join(f["held"])) if f["head"] else ""
                lst.append("- [%s%s](%s)\n" % (f["nav"], held, f["file"]))
            body = out[first]
            if body[-1].strip() != "":
                die("section %s: its opening does not end with a blank line" % s["num"])
            out[first] = body + lst

    # The index: its contents and the rules' table.
    toc = ["## Contents\n", "\n",
           "One file per section under [design/](design/), `design/NN-*.md`. A section longer\n",
           "than 20 KB keeps its introduction there and has a file for each subsection N.M,\n",
           "`design/NN.M-*.md` (N.M.K inside it); a stretch longer than that with no numbered\n",
           "heading of its own (in section 14) is cut into parts at its paragraphs' bold leads,\n",
           "`-2-*.md`, `-3-*.md`, each listed below with its leads. `scripts/split-sections.py`\n",
           "makes this layout, and remakes it after an edit.\n", "\n"]
    for s in secs:
        for f in s["files"]:
            if f["head"]:
                depth = 1 if f["key"] == s["num"] else 2
                toc.append("%s- [part %d: %s](design/%s)\n" %
                           ("  " * depth, f["head"][2], "; ".join(f["held"]), f["file"]))
                continue
            for i, lvl, text, a in headings(f["body"]):
                m = NUMHEAD.match(f["body"][i])
                if not m:
                    continue
                if "." not in m.group(1):
                    toc.append("- [%s](design/%s)\n" % (text, f["file"]))
                else:
                    toc.append("%s- [%s](%s)\n" % ("  " * (lvl - 2), text, link(m.group(1))))
    toc.append("\n")

    enum = re.findall(r"^\s*(RULE_[A-Z_]+),", open("src/rules.h").read(), re.M)
    src = open("src/rules.c").read()
    desc = {}
    for m in re.finditer(r"\[(RULE_[A-Z_]+)\]\s*=\s*\{\s*\"([^\"]+)\",((?:\s*\"(?:[^\"\\]|\\.)*\")+)\s*\}", src):
        desc[m.group(1)] = (m.group(2), "".join(re.findall(r"\"((?:[^\"\\]|\\.)*)\"", m.group(3))))
    if sorted(desc) != sorted(e for e in enum if e != "RULE_COUNT"):
        die("src/rules.c does not name every rule of src/rules.h once")
    table = ["## Rules and their arguments\n", "\n",
             "The simulation's %d rules, as `build/idsim --list-rules` prints them" %
             len(desc) + " (`--disable RULE`\n",
             "turns one off): each with the subsections its description in `src/rules.c` cites,\n",
             "where the argument for it is, and their files. 14.1, *The rules with a switch*, has\n",
             "what the simulation finds with each one off. `tests/integration/test_docs.sh`\n",
             "checks this table against `--list-rules`.\n", "\n",
             "| Rule | Argument | File |\n", "|---|---|---|\n"]
    for e in enum:
        if e == "RULE_COUNT":
            continue
        name, what = desc[e]
        nums = cited(what)
        if not nums or any(n not in where for n in nums):
            die("rule %s cites %s: not a section of the design" % (name, nums))
        table.append("| `%s` | %s | %s |\n" % (
            name, ", ".join("[%s](%s)" % (n, link(n)) for n in nums),
            ", ".join("`%s`" % where[n][0] for n in nums)))
    table.append("\n")

    index = open(INDEX).read().splitlines(keepends=True)
    keep, skip = [], False
    for l in index:
        if l.startswith("## "):
            skip = l in ("## Contents\n", "## Rules and their arguments\n")
            if l == "## Contents\n":
                keep += toc + table
        if not skip:
            keep.append(l)
    if "## Contents\n" not in index:
        die("%s has no \"## Contents\" heading" % INDEX)
    out_index = keep

    changed = 0
    old = set(os.listdir(DIR))
    for name in sorted(old - set(out)):
        os.remove(os.path.join(DIR, name))
        changed += 1
    for name, text in out.items():
        path = os.path.join(DIR, name)
        if not os.path.exists(path) or open(path).read() != "".join(text):
            with open(path, "w") as fh:
                fh.writelines(text)
            changed += 1
    if open(INDEX).read() != "".join(out_index):
        with open(INDEX, "w") as fh:
            fh.writelines(out_index)
        changed += 1
    again = read_sections()
    if [(s["num"], s["lines"]) for s in again] != [(s["num"], s["lines"]) for s in secs]:
        die("internal: the files written do not read back as the sections' text")
    big = max(out, key=lambda n: size(out[n]))
    print("split-sections.py: %d files in %s/ (%d written or removed); the largest, %s, "
          "is %d bytes" % (len(out), DIR, changed, big, size(out[big])))


def cited(what):
    """The design sections a rule's description cites, in order, each once."""
    nums = []
    for n in re.findall(r"(?<![\w./^-])([0-9]{1,2}\.[0-9]+(?:\.[0-9]+)?)(?![\w-])(?!\.[0-9])", what):
        if n not in nums:
            nums.append(n)
    return nums


if __name__ == "__main__":
    main()
