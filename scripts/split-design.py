#!/usr/bin/env python3
"""split-design.py - splits docs/design.md into docs/design/NN-slug.md, one file per
top-level section ("## N. Title", its "### N.M" subsections inside), and rewrites
docs/design.md as the index: the document's opening paragraphs as they were, a table of
contents linking every section and subsection, and the rule for citations ("design.md
N.M" is section N.M, found through the index).

Run once from anywhere: scripts/split-design.py [ROOT] (ROOT defaults to the tree this
script is in). Relative links in the moved text are rewritten so they resolve from
docs/design/ (../README.md becomes ../../README.md, #63-... becomes the file and anchor
the heading now has); links to design.md#anchor in README.md, ARCHITECTURE.md and
docs/*.md follow their heading too. Before writing anything it checks that nothing is
lost: the section files, read back, hold every line of the original after its opening,
in order, differing at most in link targets. On a tree already split it changes nothing
and says so. tests/integration/test_docs.sh checks the result (every link and every
"design.md N.M" citation resolves, the index lists every heading).
"""
import glob
import os
import re
import sys
import textwrap

INDEX = "docs/design.md"
DIR = "docs/design"
FENCE = re.compile(r"^(```|~~~)")
TOP = re.compile(r"^## ([0-9]+)\. (.*?)\s*$")
SUB = re.compile(r"^#{3,6} ([0-9]+(?:\.[0-9]+)+)\.? ")
HEADING = re.compile(r"^(#{1,6}) (.*?)\s*$")
LINK = re.compile(r"(\]\()([^)\s]+)((?:\s[^)]*)?\))")
REFDEF = re.compile(r"^(\s{0,3}\[[^\]]+\]:\s*)(\S+)(.*)$")
STOP = {"a", "an", "and", "the", "of", "its", "to", "in", "for"}


def die(msg):
    """Stops with a message and writes nothing: the tree stays as it was."""
    sys.stderr.write("split-design.py: %s\n" % msg)
    sys.exit(1)


def slug(heading):
    """GitHub's anchor for a heading text (as tests/integration/test_docs.sh computes it)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def file_slug(num, title):
    """A short, stable file name for section num: at most four words of its title, before
    any colon or parenthesis, without a leading or trailing article or conjunction."""
    words = re.sub(r"[^\w\- ]", "", re.split(r"[:(]", title)[0].replace("`", "")).lower().split()
    while words and words[0] in STOP:
        words.pop(0)
    words = words[:4]
    while words and words[-1] in STOP:
        words.pop()
    return "%02d-%s.md" % (int(num), "-".join(words) or "section")


def para(text):
    """A paragraph wrapped as the rest of the docs are, at 92 columns."""
    return textwrap.fill(text, 92, break_on_hyphens=False, break_long_words=False) + "\n"


def outside_code(line, fn):
    """Applies fn to the parts of a line outside inline `code` spans (links there are text)."""
    parts = re.split(r"(`[^`\n]*`)", line)
    return "".join(p if p.startswith("`") and p.endswith("`") and len(p) > 1 else fn(p)
                   for p in parts)


def map_links(lines, fn):
    """Rewrites every link target outside fenced blocks and code spans with fn(target)."""
    out, fence = [], False
    for line in lines:
        if FENCE.match(line):
            fence = not fence
            out.append(line)
            continue
        if fence:
            out.append(line)
            continue
        m = REFDEF.match(line)
        if m:
            out.append(m.group(1) + fn(m.group(2)) + m.group(3) + ("\n" if line.endswith("\n") else ""))
            continue
        out.append(outside_code(line, lambda s: LINK.sub(
            lambda m: m.group(1) + fn(m.group(2)) + m.group(3), s)))
    return out


def headings(lines):
    """Yields (line index, level, text, anchor) for each heading outside fenced blocks,
    anchors numbered as GitHub numbers repeated ones within one file."""
    fence, seen = False, {}
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fence = not fence
            continue
        m = None if fence else HEADING.match(line)
        if m:
            s = slug(m.group(2))
            n = seen.get(s, 0)
            seen[s] = n + 1
            yield i, len(m.group(1)), m.group(2), (s if n == 0 else "%s-%d" % (s, n))


def neutral(line):
    """A line with its link targets blanked: what must survive the move unchanged."""
    m = REFDEF.match(line)
    if m:
        return m.group(1) + m.group(3)
    return outside_code(line, lambda s: LINK.sub(r"\1\3", s))


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    os.chdir(root)
    lines = open(INDEX).read().splitlines(keepends=True)
    tops = [(i, lvl, text) for i, lvl, text, _ in headings(lines) if lvl == 2]
    numbered = [t for t in tops if TOP.match(lines[t[0]])]
    if os.path.isdir(DIR) and glob.glob(os.path.join(DIR, "*.md")):
        if numbered:
            die("%s/ exists and %s still has numbered sections (%s): move their text into "
                "%s/ by hand" % (DIR, INDEX, ", ".join(TOP.match(lines[t[0]]).group(1)
                                                       for t in numbered), DIR))
        print("split-design.py: %s is already split into %s/ (nothing to do)" % (INDEX, DIR))
        return
    if not numbered:
        die("%s has no \"## N. Title\" section to split" % INDEX)
    if len(numbered) != len(tops):
        bad = [t for t in tops if t not in numbered]
        die("%s:%d: \"%s\" is a ## heading without a section number; every ## heading "
            "after the opening must be \"## N. Title\"" % (INDEX, bad[0][0] + 1, bad[0][2]))

    # The sections: consecutive slices of the original, from each "## N." to the next.
    starts = [t[0] for t in numbered]
    nums = [TOP.match(lines[i]).group(1) for i in starts]
    if len(set(nums)) != len(nums):
        die("%s repeats a section number: %s" % (INDEX, " ".join(nums)))
    secs = []
    for k, i in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        title = TOP.match(lines[i]).group(2)
        secs.append({"num": nums[k], "title": title, "file": file_slug(nums[k], title),
                     "lines": lines[i:end], "at": i})
    if len({s["file"] for s in secs}) != len(secs):
        die("two sections would share a file name: %s" % " ".join(s["file"] for s in secs))
    preamble = lines[:starts[0]]
    for j, line in enumerate(preamble):
        if SUB.match(line):
            die("%s:%d: a numbered subsection before section %s" % (INDEX, j + 1, nums[0]))
    for s in secs:
        for j, line in enumerate(s["lines"][1:]):
            m = SUB.match(line)
            if m and m.group(1).split(".")[0] != s["num"]:
                die("%s:%d: subsection %s inside section %s" %
                    (INDEX, s["at"] + j + 2, m.group(1), s["num"]))

    # Where each heading of the original goes: old anchor -> (file, anchor in that file).
    where = {}
    old = {i: a for i, _, _, a in headings(lines)}
    for s in secs:
        s["heads"] = list(headings(s["lines"]))
        for j, lvl, text, a in s["heads"]:
            where[old[s["at"] + j]] = (s["file"], a)

    def retarget(here):
        """The link rewriter for text moved from docs/ into docs/design/<here>."""
        def fn(target):
            if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target):
                return target
            path, hash_, frag = target.partition("#")
            dest = os.path.normpath(os.path.join("docs", path)) if path else INDEX
            if dest == INDEX:
                if frag in where:
                    f, a = where[frag]
                    return "#" + a if f == here else "%s#%s" % (f, a)
                return "../design.md" + hash_ + frag
            return os.path.relpath(dest, DIR).replace(os.sep, "/") + hash_ + frag
        return fn

    for k, s in enumerate(secs):
        nav = "[Design index](../design.md)"
        if k > 0:
            nav += " · [← %s. %s](%s)" % (secs[k - 1]["num"], secs[k - 1]["title"], secs[k - 1]["file"])
        if k + 1 < len(secs):
            nav += " · [%s. %s →](%s)" % (secs[k + 1]["num"], secs[k + 1]["title"], secs[k + 1]["file"])
        s["nav"] = [nav + "\n", "\n"]
        body = map_links(s["lines"], retarget(s["file"]))
        if body and not body[-1].endswith("\n"):
            body[-1] += "\n"
        s["out"] = s["nav"] + body

    # Links from the rest of the docs to a heading that moved.
    others = {}
    for f in ["README.md", "ARCHITECTURE.md"] + sorted(glob.glob("docs/*.md")):
        if f == INDEX:
            continue
        def fn(target, f=f):
            path, _, frag = target.partition("#")
            if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target) or not path or not frag:
                return target
            if os.path.normpath(os.path.join(os.path.dirname(f), path)) != INDEX or frag not in where:
                return target
            dest = os.path.join(DIR, where[frag][0])
            return os.path.relpath(dest, os.path.dirname(f) or ".").replace(os.sep, "/") + "#" + where[frag][1]
        text = open(f).read().splitlines(keepends=True)
        new = map_links(text, fn)
        if new != text:
            others[f] = new

    # The index: the opening as it was, the contents, the rule for citations.
    toc = ["\n", "## Contents\n", "\n",
           para("One file per section, under [design/](design/); each subsection is in "
                "its section's file."), "\n"]
    for s in secs:
        link = "design/" + s["file"]
        toc.append("- [%s. %s](%s)\n" % (s["num"], s["title"], link))
        for j, lvl, text, a in s["heads"]:
            if j > 0 and SUB.match(s["lines"][j]):
                toc.append("%s- [%s](%s#%s)\n" % ("  " * (lvl - 2), text, link, a))
    rule = ["\n", "## Citations\n", "\n", para(
            "Source comments, tests and the other documents cite this design as "
            "`design.md N.M`, `docs/design.md section N.M` or `design N.M`: that is "
            "section N.M, whichever file it is in, found through the contents above "
            "(section N is in `design/NN-*.md`). Section numbers are stable: a new "
            "subsection takes the next free number and is added to the contents; "
            "`tests/integration/test_docs.sh` checks that every citation names a heading "
            "of `docs/design/`, that every heading there is in the contents, and every "
            "link.")]
    index = list(preamble)
    while index and index[-1].strip() == "":
        index.pop()
    index = index + toc + rule

    # Nothing lost: the original is the preamble and the sections, and each section
    # file is its slice, line for line, link targets aside.
    if preamble + [l for s in secs for l in s["lines"]] != lines:
        die("internal: the sections do not add up to the original")
    for s in secs:
        body = s["out"][len(s["nav"]):]
        orig = [l if l.endswith("\n") else l + "\n" for l in s["lines"]]
        if len(body) != len(orig) or [neutral(l) for l in body] != [neutral(l) for l in orig]:
            die("internal: section %s would change beyond its link targets" % s["num"])

    os.makedirs(DIR, exist_ok=True)
    for s in secs:
        with open(os.path.join(DIR, s["file"]), "w") as fh:
            fh.writelines(s["out"])
    with open(INDEX, "w") as fh:
        fh.writelines(index)
    for f, new in others.items():
        with open(f, "w") as fh:
            fh.writelines(new)

    # Read back what was written: every original line after the opening is there, in
    # order, and the index kept the opening.
    back = []
    for s in secs:
        got = open(os.path.join(DIR, s["file"])).read().splitlines(keepends=True)
        if got[:len(s["nav"])] != s["nav"]:
            die("%s/%s: written text differs from what was meant" % (DIR, s["file"]))
        back += got[len(s["nav"]):]
    want = [l if l.endswith("\n") else l + "\n" for l in lines[starts[0]:]]
    if [neutral(l) for l in back] != [neutral(l) for l in want]:
        die("read back, the section files lack lines of the original")
    got = open(INDEX).read()
    if not got.startswith("".join(preamble).rstrip("\n")):
        die("read back, %s lost its opening" % INDEX)
    moved = sum(1 for a, b in zip(back, want) if a != b)
    print("split-design.py: %s -> %d files in %s/ (%d lines, %d with a link rewritten); "
          "index %d bytes; %d other files' links followed their heading" %
          (INDEX, len(secs), DIR, len(want), moved, len(got.encode()), len(others)))
    for s in secs:
        print("  %s/%s %d bytes" % (DIR, s["file"],
                                    os.path.getsize(os.path.join(DIR, s["file"]))))


if __name__ == "__main__":
    main()
