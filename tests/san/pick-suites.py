#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""pick-suites.py DIR: from DIR/SUITE.lines (the hook's lines each suite
runs, tests/san/suite-coverage.sh) and DIR/times ("SUITE SECONDS"), the
suites that together run every line any of them runs, cheapest first
(greedy set cover: each step takes the suite with the most new lines per
second). Prints each pick with its new lines, then the suites left out
and the lines only they would add (none, by construction)."""
import os
import sys


def main():
    d = sys.argv[1]
    times = {}
    with open(os.path.join(d, "times"), encoding="utf-8") as f:
        for line in f:
            name, secs = line.split()
            times[name] = max(int(secs), 1)
    lines = {}
    for name in times:
        path = os.path.join(d, name + ".lines")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                lines[name] = set(f.read().split())
    union = set().union(*lines.values()) if lines else set()
    covered, picked = set(), []
    while covered != union:
        best = max(lines, key=lambda n: (len(lines[n] - covered) / times[n],
                                         -times[n]))
        new = lines[best] - covered
        if not new:
            break
        picked.append(best)
        covered |= new
        print(f"pick {best}: +{len(new)} lines, {times[best]} s")
    left = sorted(set(lines) - set(picked))
    print(f"{len(picked)} suites, {sum(times[n] for n in picked)} s, run all "
          f"{len(union)} lines; left out ({sum(times[n] for n in left)} s): "
          + " ".join(left))


if __name__ == "__main__":
    main()
