#!/usr/bin/env python3
"""The files of a module call each other without a circle (docs/architecture.md):
reads the object files of the built layers (nm), links each file to the files
whose functions it calls, and fails naming the circle when there is one.
usage: scripts/check-calls.py BUILD_DIR [MODULE...]   (default modules: agent cli optimize run search; CTest adds dist when built)"""
import collections
import glob
import os
import subprocess
import sys


def symbols(obj, defined):
    args = ["nm", "--defined-only" if defined else "-u", obj]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if defined and len(parts) == 3 and parts[1] in "TDBR":
            names.add(parts[2])
        elif not defined and len(parts) == 2 and parts[0] == "U":
            names.add(parts[1])
    return names


def circle(edges):
    """A circle of edges as a list of nodes, or None (iterative depth-first search)."""
    state = {}
    for root in sorted(edges):
        if state.get(root):
            continue
        stack = [(root, iter(sorted(edges[root])))]
        path = [root]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(sorted(edges[nxt]))))
                path.append(nxt)
    return None


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build, modules = sys.argv[1], sys.argv[2:] or ["agent", "cli", "optimize", "run", "search"]
    bad = 0
    for mod in modules:
        objs = sorted(glob.glob(os.path.join(build, "CMakeFiles", "*", "src", mod, "*.o")))
        if not objs:
            print(f"check-calls: no object files of src/{mod} under {build}", file=sys.stderr)
            sys.exit(2)
        owner = {}
        for o in objs:
            for s in symbols(o, True):
                owner[s] = os.path.basename(o).split(".")[0]
        edges = collections.defaultdict(set)
        for o in objs:
            me = os.path.basename(o).split(".")[0]
            edges[me]
            for s in symbols(o, False):
                if s in owner and owner[s] != me:
                    edges[me].add(owner[s])
        c = circle(edges)
        if c:
            print(f"check-calls: src/{mod}: a circle of calls: {' -> '.join(c)}")
            bad = 1
        else:
            n = sum(len(v) for v in edges.values())
            print(f"check-calls: src/{mod}: {len(edges)} files, {n} call edges, no circle")
    sys.exit(bad)


if __name__ == "__main__":
    main()
