#!/usr/bin/env bash
# The map cannot go stale: ARCHITECTURE.md stays under 10 KB, its source map names
# every source file of the tree (src/, common/, lib/, ctl/, cli/, sim/) and only
# paths that exist; and every "design.md N.M" a source or test file cites is a
# section docs/design.md has. The README stays a guide of at most 12 KB, and
# every relative link in README.md, ARCHITECTURE.md and docs/*.md names a file
# that exists and, for file.md#anchor, a heading that file has (GitHub's slugs).
. "$(dirname "$0")/lib.sh"

A=$ROOT/ARCHITECTURE.md
[ "$(wc -c <"$A")" -le 10240 ] || fail "ARCHITECTURE.md is $(wc -c <"$A") bytes (at most 10 KB)"
out=$(cd "$ROOT" && python3 - <<'PY'
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
heads = set()
for line in open("docs/design.md"):
    m = re.match(r"#{2,3} ([0-9]+(?:\.[0-9]+)*)\.? ", line)
    if m:
        heads.add(m.group(1))
cite = re.compile(r"design\.md,?(?: sections?)? ([0-9]+(?:\.[0-9]+)*)")
for root in ("src", "common", "lib", "ctl", "cli", "sim", "tests", "bench", "fuzz", "scripts"):
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "node_modules"]
        for f in files:
            path = os.path.join(dirpath, f)
            try:
                body = open(path, errors="replace").read()
            except OSError:
                continue
            for n in cite.findall(body):
                n = n.rstrip(".")
                if n not in heads:
                    bad.append("%s cites design.md %s, which has no such section" % (path, n))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
) || fail "$(head -n 8 <<<"$out")"
log "ARCHITECTURE.md: $(wc -c <"$A") bytes, its source map matches the tree; every design.md citation resolves"
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
for f in ["README.md", "ARCHITECTURE.md"] + sorted(glob.glob("docs/*.md")):
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
log "README.md: $(wc -c <"$R") bytes; $out relative links in README.md, ARCHITECTURE.md and docs/*.md resolve"
log ok
