#!/usr/bin/env python3
"""
cycles.py - the files that call each other in a cycle, from their objects.

Usage: cycles.py OBJECT.o...  Reads each object's symbols with nm: file A calls
file B when A uses a function or datum B defines (a use through a pointer
handed in at run time is no edge). Prints each strongly connected set of two
or more files, with its edges, one line each, then the count; exits 1 when
there is one. Objects are named by their path below ".../obj/" when they have
one, so src/conn.c and ctl/conn.c stay apart.
"""
import collections
import subprocess
import sys


def name(path):
    """An object's name in the report."""
    return path.split("/obj/", 1)[1] if "/obj/" in path else path


def graph(objs):
    """file -> the files whose symbols it uses."""
    defs, uses = {}, collections.defaultdict(set)
    for o in objs:
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBRVWC":
                defs.setdefault(p[2], name(o))
            elif len(p) == 2 and p[0] == "U":
                uses[name(o)].add(p[1])
    g = collections.defaultdict(set)
    for f, syms in uses.items():
        for s in syms:
            t = defs.get(s)
            if t is not None and t != f:
                g[f].add(t)
    return g


def cycles(g):
    """Tarjan's strongly connected components of two or more files."""
    index, low, stack, on, found, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(set(g) | {t for ts in g.values() for t in ts}):
        if v not in index:
            visit(v)
    return found


def main():
    g = graph(sys.argv[1:])
    found = cycles(g)
    for c in found:
        edges = ["%s -> %s" % (a, b) for a in c for b in sorted(g[a]) if b in c]
        print("cycle: %s (%s)" % (" ".join(c), ", ".join(edges)))
    print("%d cycles" % len(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
