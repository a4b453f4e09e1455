#!/usr/bin/env bash
# The map cannot go stale: ARCHITECTURE.md stays under 10 KB, its source map names
# every source file of the tree (src/, common/, lib/, ctl/, cli/, sim/) and only
# paths that exist; and every "design.md N.M" (or "design N.M", "docs/design.md
# sections N and M", across a comment's line break) that a source, test or document
# cites is a section of the design: a heading of docs/design/*.md once
# the design was split (issue 33), else of docs/design.md. Once split, every
# section number is in one file only and the index docs/design.md links every one and
# every file; section N is in design/NN-*.md, or N.M (N.M.K) split off in
# design/NN.M-*.md; no file is over 20 KB (scripts/split-sections.py splits one); and
# the index's table of the simulation's rules names every rule of $BUILD/idsim
# --list-rules (of src/rules.h and src/rules.c when idsim is not built), in order,
# with the sections its description cites, their links and files.
# The README stays a guide of at most 12 KB, and every relative link in README.md,
# ARCHITECTURE.md, docs/*.md and docs/design/*.md names a file that exists and, for
# file.md#anchor, a heading that file has (GitHub's slugs). docs/tests.md names
# every tests/integration/test_*.sh.
. "$(dirname "$0")/lib.sh"

A=$ROOT/ARCHITECTURE.md
[ "$(wc -c <"$A")" -le 10240 ] || fail "ARCHITECTURE.md is $(wc -c <"$A") bytes (at most 10 KB)"
out=$(cd "$ROOT" && IDSIM=$BUILD/idsim python3 - <<'PY'
import glob, os, re, sys
text = open("ARCHITECTURE.md").read()
smap = text[text.index("## Source map"):]
named = set(re.findall(r"^\| `([^`]+)` \|", smap, re.M))
bad = []
for pat in ("src/*.c", "common/*.c", "lib/*.c", "ctl/*.c", "cli/*.c", "sim/*.c"):
    for f in sorted(glob.glob(pat)):
        if f not in named:
            bad.append("not in the source map: " + f)
for p in sorted(named):
    if not os.path.exists(p.rstrip("/")):
        bad.append("in the source map but not in the tree: " + p)
def slug(h):
    return re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
def numbered(path):
    """(number, anchor, first) of each numbered heading of a file, outside fenced
    blocks; first: it is the file's first heading (a link to the file alone reaches it)."""
    out, seen, fence, first = [], {}, False, True
    for line in open(path):
        if line.startswith(("```", "~~~")):
            fence = not fence
            continue
        m = None if fence else re.match(r"#{1,6} (.*)", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            num = re.match(r"([0-9]+(?:\.[0-9]+)*)\.? ", m.group(1))
            if num and m.group(0).startswith(("## ", "### ", "#### ")):
                out.append((num.group(1), s if n == 0 else "%s-%d" % (s, n), first))
            first = False
    return out
heads = {}
split = sorted(glob.glob("docs/design/*.md"))
for f in split or ["docs/design.md"]:
    for num, anchor, first in numbered(f):
        if num in heads:
            bad.append("section %s is a heading of both %s and %s" % (num, heads[num][0], f))
        heads[num] = (f, anchor, first)
def link(num):
    """The index's link to section num: its file alone when it opens the file."""
    f, anchor, first = heads[num]
    return "design/%s" % os.path.basename(f) + ("" if first else "#" + anchor)
LIMIT = 20 * 1024
if split:
    index = open("docs/design.md").read()
    if numbered("docs/design.md"):
        bad.append("docs/design.md is the index, yet has numbered sections: move them into docs/design/")
    for num in sorted(heads):
        target = "design/%s#%s" % (os.path.basename(heads[num][0]), heads[num][1])
        if "](%s)" % target not in index and "](%s)" % link(num) not in index:
            bad.append("docs/design.md: the contents do not link section %s (%s)" % (num, target))
    # Section N is in design/NN-*.md; a subsection with a file of its own, N.M (and
    # N.M.K inside it), in design/NN.M-*.md. Every file is listed and short.
    for num, (f, anchor, first) in sorted(heads.items()):
        m = re.match(r"([0-9]{2})(?:\.([0-9]+))?-", os.path.basename(f))
        part = num.split(".")
        if not m or int(m.group(1)) != int(part[0]) or (m.group(2) and part[1:2] != [m.group(2)]):
            bad.append("section %s is in %s: not design/%02d-*.md or design/%02d.M-*.md of its subsection"
                       % (num, f, int(part[0]), int(part[0])))
    for f in split:
        if "](design/%s" % os.path.basename(f) not in index:
            bad.append("docs/design.md: the contents do not link %s" % f)
        if os.path.getsize(f) > LIMIT:
            bad.append("%s is %d bytes (at most %d: run scripts/split-sections.py)"
                       % (f, os.path.getsize(f), LIMIT))
    # The rules' table: one row per rule of the simulation, in --list-rules order, with
    # the sections its description cites, linked, and their files.
    def cited(what):
        nums = []
        for n in re.findall(r"(?<![\w./^-])([0-9]{1,2}\.[0-9]+(?:\.[0-9]+)?)(?![\w-])(?!\.[0-9])", what):
            if n not in nums:
                nums.append(n)
        return nums
    idsim = os.environ.get("IDSIM", "")
    if idsim and os.access(idsim, os.X_OK):
        import subprocess
        listed = [l.split(None, 1) for l in subprocess.run(
            [idsim, "--list-rules"], capture_output=True, text=True, check=True).stdout.splitlines()]
        rules_from = "idsim --list-rules"
    else:
        src = open("src/rules.c").read()
        desc = {m.group(1): [m.group(2), "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(3)))]
                for m in re.finditer(r'\[(RULE_[A-Z_]+)\]\s*=\s*\{\s*"([^"]+)",((?:\s*"(?:[^"\\]|\\.)*")+)\s*\}', src)}
        enum = [e for e in re.findall(r"^\s*(RULE_[A-Z_]+),", open("src/rules.h").read(), re.M)
                if e != "RULE_COUNT"]
        listed = [desc.get(e, [e, ""]) for e in enum]
        rules_from = "src/rules.h and src/rules.c"
    tab = index.split("## Rules and their arguments\n", 1)
    rows = re.findall(r"^\| `([^`]+)` \| (.*?) \| (.*?) \|$", tab[1].split("\n## ", 1)[0], re.M) if len(tab) == 2 else []
    if [r[0] for r in rows] != [l[0] for l in listed]:
        bad.append("docs/design.md: the rules' table names %s, %s lists %s (run scripts/split-sections.py)"
                   % (" ".join(r[0] for r in rows) or "nothing", rules_from, " ".join(l[0] for l in listed)))
    for (name, args, files), (_, what) in zip(rows, listed):
        want = cited(what)
        got = re.findall(r"\[([0-9.]+)\]\(([^)]+)\)", args)
        if [g[0] for g in got] != want:
            bad.append("docs/design.md: rule %s: the table says %s, its description cites %s"
                       % (name, " ".join(g[0] for g in got), " ".join(want)))
            continue
        for n, target in got:
            if n not in heads or target != link(n):
                bad.append("docs/design.md: rule %s: %s links %s, not %s" % (name, n, target,
                           link(n) if n in heads else "a section"))
        if re.findall(r"`([^`]+)`", files) != [os.path.basename(heads[n][0]) for n in want if n in heads]:
            bad.append("docs/design.md: rule %s: the files column is not the files of %s" % (name, " ".join(want)))
NUM = r"[0-9]{1,2}(?:\.[0-9]+)*"
BREAK = r"[ \t]*(?:\n[ \t]*(?:\*|#+|//|--|;+)?[ \t]*)?"
cite = re.compile(r"\bdesign(?:\.md)?,?" + BREAK + r"(?:sections?" + BREAK + r")?(" + NUM +
                  r")\b((?:(?:,|,? and|,? or|–|-|to)[ \t]*" + NUM + r"\b(?!\.[0-9]))*)")
cites = 0
tops = ("src", "common", "include", "lib", "ctl", "cli", "sim", "tests", "bench", "fuzz",
        "scripts", "schema", "man", "dist", "proto", "docs", "ARCHITECTURE.md", "README.md",
        "Makefile", "install.mk", "Dockerfile", "idserver.conf")
for top in tops:
    walk = [(".", [], [top])] if os.path.isfile(top) else os.walk(top)
    for dirpath, dirs, files in walk:
        dirs[:] = [d for d in dirs if d != "node_modules"]
        for f in files:
            path = os.path.normpath(os.path.join(dirpath, f))
            try:
                body = open(path, errors="replace").read()
            except OSError:
                continue
            for m in cite.finditer(body):
                for n in [m.group(1)] + re.findall(NUM, m.group(2)):
                    cites += 1
                    if n not in heads:
                        line = body.count("\n", 0, m.start()) + 1
                        bad.append("%s:%d cites design %s, which has no such section" % (path, line, n))
if not bad:
    print("%d citations of %d sections in %s%s" % (cites, len(heads), "docs/design/" if split else "docs/design.md",
          " (%d files of at most %d bytes; the table of %d rules matches %s)" % (len(split), LIMIT, len(rows), rules_from) if split else ""))
    sys.exit(0)
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
) || fail "$(head -n 8 <<<"$out")"
log "ARCHITECTURE.md: $(wc -c <"$A") bytes, its source map matches the tree; $out resolve"
R=$ROOT/README.md
[ "$(wc -c <"$R")" -le 12288 ] || fail "README.md is $(wc -c <"$R") bytes (at most 12 KB: the reference belongs in docs/)"
out=$(cd "$ROOT" && python3 - <<'PY'
import glob, os, re, sys
def slug(h):
    return re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
def anchors(path):
    out, seen, fence = set(), {}, False
    for line in open(path):
        if line.startswith("```"):
            fence = not fence
            continue
        m = None if fence else re.match(r"#{1,6} (.*)", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else "%s-%d" % (s, n))
    return out
bad, links = [], 0
for f in ["README.md", "ARCHITECTURE.md"] + sorted(glob.glob("docs/*.md")) + sorted(glob.glob("docs/design/*.md")):
    text = re.sub(r"^```.*?^```", "", open(f).read(), flags=re.M | re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        links += 1
        path, _, frag = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        if not os.path.exists(dest):
            bad.append("%s: link to %s: no such file" % (f, target))
        elif frag and dest.endswith(".md") and frag not in anchors(dest):
            bad.append("%s: link to %s: no such heading" % (f, target))
print("\n".join(bad) if bad else links)
sys.exit(1 if bad else 0)
PY
) || fail "$(head -n 8 <<<"$out")"
log "README.md: $(wc -c <"$R") bytes; $out relative links in README.md, ARCHITECTURE.md, docs/*.md and docs/design/*.md resolve"
# docs/tests.md says what each integration test does: every test_*.sh is named there.
unlisted=
for t in "$ROOT"/tests/integration/test_*.sh; do
	n=$(basename "$t" .sh)
	grep -qF "\`$n\`" "$ROOT/docs/tests.md" || unlisted="$unlisted $n"
done
[ -z "$unlisted" ] || fail "docs/tests.md does not describe:$unlisted"
log "docs/tests.md describes all $(ls "$ROOT"/tests/integration/test_*.sh | wc -l) integration tests"
log ok
