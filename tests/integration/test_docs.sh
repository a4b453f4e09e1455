#!/usr/bin/env bash
# The map cannot go stale: ARCHITECTURE.md stays under 10 KB, its source map names
# every source file of the tree (src/, common/, lib/, ctl/, cli/, sim/) and only
# paths that exist; and every "design.md N.M" a source or test file cites is a
# section docs/design.md has.
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
log ok
