#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The module rules of hook/ (the "## Map" of the developers' docs),
checked from the source and the objects:

  - hook/ holds prefixed modules in folders by stage of the data path
    (main.c alone at the top); a module's name is its file name, unique
    across the folders, and its object is BUILD-OBJ-DIR/<folder>/<name>.o;
  - every name an object exports starts with its file's prefix: the file
    name and "_" (cmd_*.c files: "cmd_"; main.c: only main);
  - a module includes another by its path under hook/ ("prog/load.h"),
    and only one of its own folder or of a folder below its own in the
    map's folder table (the table's rows, top to bottom, are the folder
    order); nor does its object call into a folder above its own;
  - the include graph among the modules (a module's .c and .h together)
    has no cycle;
  - the call graph has no cycle: module A depends on module B when A's
    object has an undefined symbol that B's object defines (a call, or a
    reference to B's data); A -> B -> A is a function of A calling into B,
    which calls back into A;
  - nor has the two together: A including B's header while B calls into
    A is a cycle too (B depends on A's code, A on B's declarations);
  - the "## Map" section has every folder of hook/ in its folder table,
    and a table of each folder's modules ("| module of `hook/F/` | what
    it owns |"), one row per module: its .c file, or a header without
    one; a module without its row, or a row for a module that is gone,
    is a violation;
  - only main.c and hook/cmd/ read the environment (getenv,
    secure_getenv): the modules below take it from the run's context
    (lib/context.h), made in main.

Usage: check-modules.py [--layers] BUILD-OBJ-DIR [HOOK-DIR [MAP-FILE]]
Prints one line per violation, then the counts, and exits 1 if there is
any. --layers prints the modules by depth instead (0: depends on no
other, through its includes or its calls), as folder/name.
"""
import os
import re
import subprocess
import sys


def prefix_of(module):
    if module.startswith("cmd_"):
        return "cmd_"
    return module + "_"


def find_modules(hookdir):
    """{name: folder relative to hookdir ("" at the top)} for .c and .h
    files, and the duplicates (a name in two folders)."""
    where, dups = {}, []
    for root, dirs, files in os.walk(hookdir):
        dirs.sort()
        rel = os.path.relpath(root, hookdir)
        rel = "" if rel == "." else rel
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            name = f[:-2]
            if name in where and where[name] != rel:
                dups.append(f"{f}: in hook/{where[name]} and hook/{rel}")
                continue
            where[name] = rel
    return where, dups


def path_of(hookdir, where, module, ext):
    return os.path.join(hookdir, where[module], module + ext)


def object_of(objdir, where, module):
    return os.path.join(objdir, where[module], module + ".o")


def symbols(obj, undefined):
    flags = ["--undefined-only"] if undefined else ["--defined-only", "-g"]
    out = subprocess.run(["nm"] + flags + [obj], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if undefined and len(parts) == 2 and parts[0] == "U":
            yield parts[1]
        elif not undefined and len(parts) == 3 and parts[1] in "TDBRCGSV":
            yield parts[2]


def check_prefixes(objdir, where, modules):
    bad = []
    for mod in modules:
        obj = object_of(objdir, where, mod)
        if not os.path.exists(obj):
            bad.append(f"{mod}.c: no object {obj} (build first)")
            continue
        for name in symbols(obj, False):
            if mod == "main":
                ok = name == "main"
            else:
                ok = name.startswith(prefix_of(mod))
            if not ok:
                bad.append(f"{mod}.c exports {name} without the prefix "
                           f"{prefix_of(mod) if mod != 'main' else '(none)'}")
    return bad


def includes(path):
    """The quoted includes of a file: [path as written, without ".h"]."""
    with open(path, encoding="utf-8") as f:
        return re.findall(r'^#include "([a-z0-9_/]+)\.h"', f.read(), re.M)


def shown(where, module):
    return f"{where[module]}/{module}" if where[module] else module


def include_graph(hookdir, where):
    """A module depends on what its .c and .h include; an include of a
    module not by its path under hook/ is a violation."""
    deps, bad = {}, []
    for mod in where:
        seen = set()
        for ext in (".c", ".h"):
            p = path_of(hookdir, where, mod, ext)
            if not os.path.exists(p):
                continue
            for inc in includes(p):
                name = os.path.basename(inc)
                if name not in where:
                    continue
                if inc != shown(where, name):
                    bad.append(f"{os.path.relpath(p, os.path.dirname(hookdir) or '.')}: "
                               f'#include "{inc}.h": include it by its path, '
                               f'"{shown(where, name)}.h"')
                if name != mod:
                    seen.add(name)
        deps[mod] = sorted(seen)
    return deps, bad


def folder_order(mapfile):
    """The folders of the map's table, top to bottom ("" for hook/)."""
    with open(mapfile, encoding="utf-8") as f:
        text = f.read()
    start = text.find("\n## Map\n")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end > 0 else len(text)]
    return [m.group(1).rstrip("/") for m in
            re.finditer(r"^\| `hook/([a-z0-9_/]*)` \|", section, re.M)]


def check_order(order, where, deps, what):
    """Each dependency on another folder goes to a folder below."""
    bad = []
    for mod in sorted(deps):
        if where[mod] not in order:
            continue
        for d in deps[mod]:
            if where[d] == where[mod] or where[d] not in order:
                continue
            if order.index(where[d]) < order.index(where[mod]):
                bad.append(f"{shown(where, mod)} {what} {shown(where, d)}: "
                           f"hook/{where[d]}/ is above hook/{where[mod]}/ "
                           f"in the folder order")
    return bad


ENV_READERS = ("", "cmd")
ENV_CALLS = ("getenv", "secure_getenv")


def check_env(objdir, where, modules):
    """No module below hook/cmd/ reads the environment."""
    bad = []
    for mod in modules:
        obj = object_of(objdir, where, mod)
        if where[mod] in ENV_READERS or not os.path.exists(obj):
            continue
        for name in sorted(set(symbols(obj, True)) & set(ENV_CALLS)):
            bad.append(f"{shown(where, mod)} calls {name}: below hook/cmd/, "
                       f"take it from the context (lib/context.h) made in "
                       f"main.c")
    return bad


def call_graph(objdir, where, modules):
    """A module depends on the modules whose symbols its object uses."""
    owner = {}
    for mod in modules:
        obj = object_of(objdir, where, mod)
        if os.path.exists(obj):
            for name in symbols(obj, False):
                owner[name] = mod
    deps = {}
    for mod in modules:
        obj = object_of(objdir, where, mod)
        used = set()
        if os.path.exists(obj):
            used = {owner[s] for s in symbols(obj, True) if s in owner}
        deps[mod] = sorted(used - {mod})
    return deps


def cycles(deps):
    """Each strongly connected set of more than one module, as one cycle
    through it (Tarjan's algorithm, then a path back to its start)."""
    index, low, on, stack, sccs = {}, {}, set(), [], []

    def connect(m):
        index[m] = low[m] = len(index)
        stack.append(m)
        on.add(m)
        for d in deps[m]:
            if d not in index:
                connect(d)
                low[m] = min(low[m], low[d])
            elif d in on:
                low[m] = min(low[m], index[d])
        if low[m] == index[m]:
            scc = []
            while True:
                x = stack.pop()
                on.discard(x)
                scc.append(x)
                if x == m:
                    break
            if len(scc) > 1:
                sccs.append(set(scc))

    sys.setrecursionlimit(10000)
    for m in sorted(deps):
        if m not in index:
            connect(m)
    found = []
    for scc in sccs:
        start = min(scc)
        # Breadth-first from start, inside the set, back to start.
        prev, queue = {start: None}, [start]
        while queue:
            m = queue.pop(0)
            for d in deps[m]:
                if d == start:
                    path = [m]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    found.append(list(reversed(path)) + [start])
                    queue = []
                    break
                if d in scc and d not in prev:
                    prev[d] = m
                    queue.append(d)
    return found


def layers(deps, where):
    depth = {}

    def walk(m):
        if m not in depth:
            depth[m] = 0
            depth[m] = 1 + max((walk(d) for d in deps[m]), default=-1)
        return depth[m]

    for m in deps:
        walk(m)

    for level in range(max(depth.values()) + 1):
        print(f"{level:2}  " + " ".join(sorted(shown(where, m) for m in depth
                                               if depth[m] == level)))


MODULE_TABLE = re.compile(r"^\| module of `hook/([a-z0-9_/]*)` \| what it owns \|$")
MODULE_ROW = re.compile(r"^\| `([a-z0-9_]+\.[ch])` \| (.*) \|$")


def module_tables(section):
    """{folder: [(file, what), ...]} of the map's tables of modules, and
    the lines that are not a row where one is due."""
    tables, bad, folder = {}, [], None
    for line in section.splitlines():
        m = MODULE_TABLE.match(line)
        if m:
            folder = m.group(1).rstrip("/")
            if folder in tables:
                bad.append(f"two tables of modules for hook/{folder}/")
            tables[folder] = []
            continue
        if folder is None:
            continue
        if not line.startswith("|"):
            folder = None
            continue
        if line.startswith("|---"):
            continue
        row = MODULE_ROW.match(line)
        if not row or not row.group(2).strip():
            bad.append(f"hook/{folder}/: not a row of a module and what it "
                       f"owns: {line}")
            continue
        tables[folder].append((row.group(1), row.group(2)))
    return tables, bad


def check_map(mapfile, hookdir, where):
    """Each folder's table of modules has one row per module of it: its
    .c file, or a header without one."""
    with open(mapfile, encoding="utf-8") as f:
        text = f.read()
    start = text.find("\n## Map\n")
    if start < 0:
        return [f"{mapfile}: no '## Map' section"]
    end = text.find("\n## ", start + 1)
    section = text[start:end if end > 0 else len(text)]
    tables, bad = module_tables(section)
    bad = [f"{mapfile}: {b}" for b in bad]
    for folder in sorted(set(where.values()) | set(tables)):
        name = f"hook/{folder}/" if folder else "hook/"
        want = {m + (".c" if os.path.exists(path_of(hookdir, where, m, ".c"))
                     else ".h")
                for m in where if where[m] == folder}
        if folder not in tables:
            bad.append(f"{mapfile}: no table of the modules of {name}")
            continue
        rows = [r[0] for r in tables[folder]]
        for f in sorted(want - set(rows)):
            bad.append(f"{mapfile}: the table of {name} has no row for {f}")
        for f in sorted(set(rows) - want):
            bad.append(f"{mapfile}: the table of {name} has a row for {f}, "
                       f"which is not a module of {name}")
        for f in sorted({r for r in rows if rows.count(r) > 1}):
            bad.append(f"{mapfile}: the table of {name} has {f} twice")
    return bad


def main():
    args = sys.argv[1:]
    want_layers = bool(args) and args[0] == "--layers"
    args = args[1:] if want_layers else args
    if len(args) not in (1, 2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    objdir = args[0]
    hookdir = args[1] if len(args) > 1 else "hook"
    mapfile = args[2] if len(args) > 2 else "docs/development.md"
    where, bad = find_modules(hookdir)
    modules = sorted(m for m in where
                     if os.path.exists(path_of(hookdir, where, m, ".c")))
    includes_of, bad_paths = include_graph(hookdir, where)
    bad += bad_paths
    calls_of = call_graph(objdir, where, modules)
    both = {m: sorted(set(includes_of[m]) | set(calls_of.get(m, [])))
            for m in includes_of}
    if want_layers:
        layers(both, where)
        return 0
    bad += check_prefixes(objdir, where, modules)
    include_cycles = cycles(includes_of)
    bad += ["include cycle: " + " -> ".join(c) for c in include_cycles]
    call_cycles = cycles(calls_of)
    bad += ["call cycle: " + " -> ".join(c) for c in call_cycles]
    mixed = [c for c in cycles(both)
             if c not in include_cycles and c not in call_cycles]
    bad += ["include and call cycle: " + " -> ".join(c) for c in mixed]
    bad += check_map(mapfile, hookdir, where)
    order = folder_order(mapfile)
    for folder in sorted({where[m] for m in where} - set(order)):
        bad.append(f"{mapfile}: hook/{folder}/ is not in the folder table")
    bad += check_order(order, where, includes_of, "includes")
    bad += check_order(order, where, calls_of, "calls")
    bad += check_env(objdir, where, modules)
    for line in bad:
        print(line)
    print(f"{len(modules)} modules in "
          f"{len({where[m] for m in modules})} folders: "
          f"{len(order)} in order, "
          f"{len(include_cycles)} include cycle(s), "
          f"{len(call_cycles)} call cycle(s), "
          f"{len(mixed)} include and call cycle(s), {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
