#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""coverage.py OBJDIR SOURCE...: the lines and functions of each hook
module that ran, from the .gcda files a --coverage build left in OBJDIR
(make unit-coverage). One line per module, least covered first, then the
total. Needs gcc's gcov, nothing else."""
import json
import os
import subprocess
import sys


def module_lines(objdir, src):
    """(lines run, lines, functions run, functions) of src."""
    out = subprocess.run(["gcov", "-t", "-j", "-o", objdir, src],
                         capture_output=True, text=True, check=False).stdout
    lines = run = funcs = funcs_run = 0
    for doc in out.splitlines():
        if not doc.startswith("{"):
            continue
        for f in json.loads(doc).get("files", []):
            if os.path.normpath(f["file"]) != os.path.normpath(src):
                continue
            lines += len(f["lines"])
            run += sum(1 for ln in f["lines"] if ln["count"] > 0)
            funcs += len(f["functions"])
            funcs_run += sum(1 for fn in f["functions"]
                             if fn["execution_count"] > 0)
    return run, lines, funcs_run, funcs


def main():
    objdir, sources = sys.argv[1], sys.argv[2:]
    rows = []
    for src in sources:
        # hook/cmd/cli.c's object is OBJDIR/cmd/cli.o
        sub = os.path.dirname(os.path.relpath(src, "hook"))
        odir = os.path.join(objdir, sub)
        stem = os.path.splitext(os.path.basename(src))[0]
        if not os.path.exists(os.path.join(odir, stem + ".gcda")):
            run, lines, frun, funcs = module_lines(odir, src)
            rows.append((0.0, src, 0, lines, 0, funcs))
            continue
        run, lines, frun, funcs = module_lines(odir, src)
        rows.append((100.0 * run / lines if lines else 100.0, src, run, lines,
                     frun, funcs))
    rows.sort()
    total_run = total = 0
    for pct, src, run, lines, frun, funcs in rows:
        print(f"{pct:5.1f}%  {run:4d}/{lines:<4d} lines  {frun:3d}/{funcs:<3d} functions  {src}")
        total_run += run
        total += lines
    print(f"{100.0 * total_run / max(total, 1):5.1f}%  {total_run}/{total} lines in {len(rows)} modules")


if __name__ == "__main__":
    main()
