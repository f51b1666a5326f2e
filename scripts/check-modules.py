#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The module rules of hook/ (docs/development.md, "Map"), checked from
the source and the objects:

  - every name an object exports starts with its file's prefix: the file
    name and "_" (cmd_*.c files: "cmd_"; main.c: only main);
  - the include graph among hook/*.h, seen through the .c files that
    implement them, has no cycle;
  - the "## Map" section of docs/development.md names every hook/*.c
    file, so the map stays true as files come and go.

Usage: check-modules.py [--layers] BUILD-OBJ-DIR [HOOK-DIR [MAP-FILE]]
Prints one line per violation and exits 1 if there is any. --layers
prints the modules by dependency depth instead (0: depends on no other).
"""
import os
import re
import subprocess
import sys


def prefix_of(module):
    if module.startswith("cmd_"):
        return "cmd_"
    return module + "_"


def exported(obj):
    out = subprocess.run(["nm", "--defined-only", "-g", obj],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRC":
            yield parts[2]


def check_prefixes(objdir, modules):
    bad = []
    for mod in modules:
        obj = os.path.join(objdir, mod + ".o")
        if not os.path.exists(obj):
            bad.append(f"{mod}.c: no object {obj} (build first)")
            continue
        for name in exported(obj):
            if mod == "main":
                ok = name == "main"
            else:
                ok = name.startswith(prefix_of(mod))
            if not ok:
                bad.append(f"{mod}.c exports {name} without the prefix "
                           f"{prefix_of(mod) if mod != 'main' else '(none)'}")
    return bad


def includes(path):
    with open(path, encoding="utf-8") as f:
        return re.findall(r'^#include "([a-z0-9_]+)\.h"', f.read(), re.M)


def dependencies(hookdir, modules):
    """A module depends on what its .c and .h include."""
    deps = {}
    for mod in modules:
        seen = set()
        for ext in (".c", ".h"):
            p = os.path.join(hookdir, mod + ext)
            if os.path.exists(p):
                seen.update(i for i in includes(p) if i != mod)
        deps[mod] = sorted(d for d in seen if d in modules)
    return deps


def check_cycles(deps):
    bad, state, stack = [], {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in deps[m]:
            if state.get(d) == 1:
                cycle = stack[stack.index(d):] + [d]
                bad.append("cycle: " + " -> ".join(cycle))
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(deps):
        if m not in state:
            visit(m)
    return bad


def layers(deps):
    depth = {}

    def walk(m):
        if m not in depth:
            depth[m] = 0
            depth[m] = 1 + max((walk(d) for d in deps[m]), default=-1)
        return depth[m]

    for m in deps:
        walk(m)
    for level in range(max(depth.values()) + 1):
        print(f"{level}: " + " ".join(sorted(m for m in depth
                                             if depth[m] == level)))


def check_map(readme, modules):
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    start = text.find("\n## Map\n")
    if start < 0:
        return [f"{readme}: no '## Map' section"]
    end = text.find("\n## ", start + 1)
    section = text[start:end if end > 0 else len(text)]
    return [f"{readme}: the map does not name hook/{m}.c"
            for m in modules if f"{m}.c" not in section]


def main():
    args = sys.argv[1:]
    want_layers = bool(args) and args[0] == "--layers"
    args = args[1:] if want_layers else args
    if len(args) not in (1, 2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    objdir = args[0]
    hookdir = args[1] if len(args) > 1 else "hook"
    readme = args[2] if len(args) > 2 else "docs/development.md"
    modules = sorted(f[:-2] for f in os.listdir(hookdir) if f.endswith(".c"))
    headers = {f[:-2] for f in os.listdir(hookdir) if f.endswith(".h")}
    deps = dependencies(hookdir, sorted(set(modules) | headers))
    if want_layers:
        layers(deps)
        return 0
    bad = check_prefixes(objdir, modules)
    bad += check_cycles(deps)
    bad += check_map(readme, modules)
    for line in bad:
        print(line)
    print(f"{len(modules)} modules: {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
