#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The benchmarks' statistics: bench/run.sh measures, this reports.

    report.py --out DIR [--smoke] [--verbose] --trials T --calls N
              --rounds R --cpu C --cpus N --scale "1 100 1000"
              --git REV --hook-version TEXT

DIR (build/bench) holds what run.sh measured, in raw/:
  KEY                     one value a line, one line a trial or round
                          (line i of KEY and of another KEY of the same
                          benchmark were measured in the same round)
  benchmarks              the benchmarks that ran to the end, one a line
  host.keys.STATE         sockbench keys in host state STATE
and what bench/start.sh measured for benchmarks 1, 8 and 9 (see
report_start.py).

It writes DIR/results.json (every row, with the run's conditions) and
DIR/table.txt, and prints the table: the rows of each benchmark in the
order it ran, then the summary (the millisecond targets again, and how
many datapath targets were met), then the Targets table (start cost)
(report_targets.py); with --verbose also the detail rows
(each variant's own median). Standard library only, for /usr/bin/python3.
The statistics are benchstat.py's.
"""

import argparse
import datetime
import json
import os
import re
import sys

from benchstat import Raw, Table, summary, table_text
from report_start import report_hook, report_scale
from report_targets import report_targets

BENCHMARKS = ("datapath", "rules", "host", "hook", "scale")


# ---- 2, 3, 4, 7: datapath and the seccomp peer ------------------------------


def report_datapath(t):
    s = "2. setsockopt ns/call: a none, b empty program, c/d ours"
    t.median(s, "a  no program, SO_KEEPALIVE", "set.a", "ns")
    t.median(s, "b  empty program, SO_KEEPALIVE", "set.b", "ns")
    t.median(s, "c  ours, option without rule (SO_KEEPALIVE)", "set.c", "ns")
    t.median(s, "a' no program, SO_RCVBUF 1 MiB", "set.a2", "ns")
    t.median(s, "b' empty program, SO_RCVBUF 1 MiB", "set.b2", "ns")
    t.median(s, "d  ours, SO_RCVBUF 1 MiB clamped to 64 KiB", "set.d", "ns")
    t.ratio(s, "b/a  the kernel's hook", "set.b", "set.a")
    t.ratio(s, "c/b  no rule", "set.c", "set.b", "<= 1.10")
    t.median(s, "r  record mode, no policy (SO_KEEPALIVE)", "set.r", "ns")
    t.ratio(s, "r/b  record mode, no rule", "set.r", "set.b", "<= 1.10")
    t.ratio(s, "d/b' clamp (rewrites)", "set.d", "set.b2", "<= 1.25")
    t.median(s, "e  audit mode, option without rule", "set.e", "ns")
    t.median(s, "f  audit mode, SO_RCVBUF 1 MiB (would clamp)", "set.f", "ns")
    t.ratio(s, "e/b  audit mode, no rule", "set.e", "set.b", "<= 1.10")
    t.ratio(s, "f/b' audit mode, would clamp", "set.f", "set.b2")
    t.median(s, "g  generic program, option without rule", "set.g", "ns")
    t.median(s, "gd generic program, SO_RCVBUF 1 MiB clamped", "set.gd", "ns")
    t.ratio(s, "g/b  generic program, no rule", "set.g", "set.b", "<= 1.10")
    t.ratio(s, "gd/b' generic program, clamp", "set.gd", "set.b2",
            "<= 1.25")
    t.ratio(s, "g/c  generic/specialised, no rule", "set.g", "set.c")
    s = "3. getsockopt ns/call: a none, b empty program, c/d ours"
    t.median(s, "a  no program, SO_KEEPALIVE", "get.a", "ns")
    t.median(s, "b  empty program, SO_KEEPALIVE", "get.b", "ns")
    t.median(s, "c  ours, option without rule (SO_KEEPALIVE)", "get.c", "ns")
    t.median(s, "b' empty program, SO_MARK", "get.b2", "ns")
    t.median(s, "d  ours, SO_MARK denied (EPERM)", "get.d", "ns")
    t.median(s, "TCP_ZEROCOPY_RECEIVE, no program", "zc.a", "ns")
    t.median(s, "TCP_ZEROCOPY_RECEIVE, empty program", "zc.b", "ns")
    t.median(s, "TCP_ZEROCOPY_RECEIVE, ours", "zc.c", "ns")
    t.ratio(s, "b/a  the kernel's hook", "get.b", "get.a")
    t.ratio(s, "c/b  no rule", "get.c", "get.b", "<= 1.10")
    t.ratio(s, "d/b' deny rule", "get.d", "get.b2", "<= 1.25")
    t.median(s, "r  record mode, no policy (SO_KEEPALIVE)", "get.r", "ns")
    t.ratio(s, "r/b  record mode, no rule", "get.r", "get.b", "<= 1.10")
    t.ratio(s, "e/b  audit mode, no rule", "get.e", "get.b", "<= 1.10")
    t.ratio(s, "ZEROCOPY ours/none", "zc.c", "zc.a", "<= 1.05")
    t.ratio(s, "ZEROCOPY ours/empty", "zc.c", "zc.b")
    t.median(s, "g  generic program, option without rule", "get.g", "ns")
    t.median(s, "gd generic program, SO_MARK denied", "get.gd", "ns")
    t.ratio(s, "g/b  generic program, no rule", "get.g", "get.b", "<= 1.10")
    t.ratio(s, "gd/b' generic program, deny rule", "get.gd", "get.b2",
            "<= 1.25")
    t.ratio(s, "ZEROCOPY generic/none", "zc.g", "zc.a", "<= 1.05")
    s = "4. socket()+close() ns/call"
    t.median(s, "TCP: no program", "sock.a", "ns")
    t.median(s, "TCP: empty sock_create", "sock.b", "ns")
    t.median(s, "TCP: ours (deny rules, mark, priority)", "sock.c", "ns")
    t.median(s, "UDP: no program", "usock.a", "ns")
    t.median(s, "UDP: empty sock_create", "usock.b", "ns")
    t.median(s, "UDP: ours", "usock.c", "ns")
    t.ratio(s, "TCP ours/empty", "sock.c", "sock.b", "<= 1.10")
    t.ratio(s, "TCP audit mode/empty (would deny, stamp)", "sock.e",
            "sock.b")
    t.ratio(s, "UDP ours/empty", "usock.c", "usock.b", "<= 1.10")
    t.median(s, "TCP: record mode, no policy", "sock.r", "ns")
    t.ratio(s, "TCP record mode/empty", "sock.r", "sock.b", "<= 1.10")
    t.ratio(s, "TCP empty/none", "sock.b", "sock.a")
    t.median(s, "TCP: generic program", "sock.g", "ns")
    t.ratio(s, "TCP generic/empty", "sock.g", "sock.b", "<= 1.10")
    t.ratio(s, "UDP generic/empty", "usock.g", "usock.b", "<= 1.10")
    s = ("7. peer: seccomp filter denying setsockopt(SOL_SOCKET, SO_MARK), "
         "ns/call")
    t.median(s, "setsockopt(SO_MARK) allowed, nothing", "deny.allowed", "ns")
    t.median(s, "setsockopt(SO_MARK) denied by seccomp", "deny.seccomp", "ns")
    t.median(s, "setsockopt(SO_MARK) denied by our rule", "deny.ours", "ns")
    t.median(s, "getppid, nothing", "ppid.a", "ns")
    t.median(s, "getppid under the seccomp filter", "ppid.seccomp", "ns")
    t.median(s, "getppid in our policed cgroup", "ppid.ours", "ns")
    t.median(s, "setsockopt(SO_KEEPALIVE) under seccomp", "set.seccomp", "ns")
    t.ratio(s, "denied: ours/seccomp", "deny.ours", "deny.seccomp")
    t.ratio(s, "would deny (audit mode)/allowed", "deny.audit",
            "deny.allowed")
    t.ratio(s, "denied: seccomp/allowed", "deny.seccomp", "deny.allowed")
    t.ratio(s, "getppid: seccomp/none", "ppid.seccomp", "ppid.a")
    t.ratio(s, "getppid: ours/none", "ppid.ours", "ppid.a")
    t.ratio(s, "KEEPALIVE: seccomp/none", "set.seccomp", "set.a")
    t.ratio(s, "KEEPALIVE: ours/none", "set.c", "set.a")


# ---- 5: rule count ----------------------------------------------------------


def report_rules(t):
    s = "5. rule count: setsockopt ns/call with 1, 16, 256 rules"
    for k in (1, 16, 256):
        t.median(s, "%d rule(s): SO_RCVBUF (rule, within the clamp)" % k,
                 "rules.%d.hit" % k, "ns")
        t.median(s, "%d rule(s): SO_KEEPALIVE (no rule)" % k,
                 "rules.%d.miss" % k, "ns")
    t.ratio(s, "256/1, option with a rule", "rules.256.hit", "rules.1.hit",
            "<= 1.05")
    t.ratio(s, "256/1, option, no rule", "rules.256.miss", "rules.1.miss",
            "<= 1.05")
    t.ratio(s, "16/1, option with a rule", "rules.16.hit", "rules.1.hit",
            "<= 1.05")


# ---- 6: host impact ---------------------------------------------------------


def report_host(t):
    raw = t.raw
    keys = {st: raw.text("host.keys." + st).strip()
            for st in ("none", "setonly", "restricted", "kept")}

    def key_of(state, key):
        m = re.match(r".*%s=([a-z]*)" % re.escape(key), keys[state])
        return m.group(1) if m else ""

    s = "6. host impact: calls in a cgroup with NO program, ns/call"
    t.row(s, "keys, nothing of ours: " + keys["none"], "", "-")
    t.row(s, "keys, setonly elsewhere: " + keys["setonly"], "", "-")
    t.row(s, "keys, restricted elsewhere: " + keys["restricted"], "", "-")
    t.row(s, "keys, kept by preload (keep_keys): " + keys["kept"], "", "-")
    t.row(s, "getsockopt key, setonly attached elsewhere",
          key_of("setonly", "getsockopt"), "state", "== off")
    for key in ("sock_create", "setsockopt", "getsockopt"):
        t.row(s, "%s key, kept by preload, no container" % key,
              key_of("kept", key), "state", "== on")
    t.median(s, "setsockopt: no program anywhere", "host.none.set", "ns")
    t.median(s, "setsockopt: setonly elsewhere", "host.setonly.set", "ns")
    t.median(s, "setsockopt: restricted elsewhere", "host.restricted.set",
             "ns")
    t.median(s, "getsockopt: no program anywhere", "host.none.get", "ns")
    t.median(s, "getsockopt: setonly elsewhere (key off)", "host.setonly.get",
             "ns")
    t.median(s, "getsockopt: restricted elsewhere (key on)",
             "host.restricted.get", "ns")
    t.median(s, "socket()+close(): no program anywhere", "host.none.sock",
             "ns")
    t.median(s, "socket()+close(): restricted elsewhere",
             "host.restricted.sock", "ns")
    t.ratio(s, "set: restricted/nowhere", "host.restricted.set",
            "host.none.set")
    t.ratio(s, "get: setonly/nowhere", "host.setonly.get", "host.none.get")
    t.ratio(s, "get: restricted/nowhere", "host.restricted.get",
            "host.none.get")
    t.ratio(s, "socket: restricted/nowhere", "host.restricted.sock",
            "host.none.sock")
    # What keep_keys costs every other cgroup's sockets: the keys' checks.
    for what, name in (("set", "setsockopt"), ("get", "getsockopt"),
                       ("sock", "socket")):
        t.median(s, "%s: keys kept by preload" % name, "host.kept." + what,
                 "ns")
        t.ratio(s, "%s: keys kept/nowhere" % what.replace("sock", "socket"),
                "host.kept." + what, "host.none." + what)


# ---- the summary -------------------------------------------------------------

DATAPATH = ("2.", "3.", "4.", "5.", "6.", "7.")


def report_summary(t, benchmarks):
    """The millisecond targets again, one line each, and how many of the
    datapath targets (benchmarks 2 to 7, unchanged) were met."""
    judged = [r for r in t.rows if r["target"] != "-"
              and r["section"].startswith(DATAPATH)]
    s = "summary: the millisecond targets (p50, this run)"
    summary(t, s)
    if judged and "datapath" in benchmarks:
        met = sum(r["verdict"] == "met" for r in judged)
        t.row(s, "every datapath ratio of benchmarks 2-7: targets met",
              "%d/%d" % (met, len(judged)), "count",
              "== %d/%d" % (len(judged), len(judged)))


# ---- the run ----------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--trials", type=int, required=True)
    ap.add_argument("--calls", type=int, required=True)
    ap.add_argument("--rounds", type=int, required=True)
    ap.add_argument("--cpu", type=int, required=True)
    ap.add_argument("--cpus", type=int, required=True)
    ap.add_argument("--scale", required=True)
    ap.add_argument("--git", default="unknown")
    ap.add_argument("--hook-version", default="")
    args = ap.parse_args()

    raw = Raw(os.path.join(args.out, "raw"))
    done = raw.text("benchmarks").split()
    t = Table(raw, args.smoke)
    reports = {"datapath": report_datapath, "rules": report_rules,
               "host": report_host, "hook": report_hook}
    for name in BENCHMARKS:
        if name == "scale" and raw.exists("mem.base.maps"):
            report_scale(t, [int(n) for n in args.scale.split()],
                         "scale" in done)
        elif name in done and name in reports:
            reports[name](t)
    report_summary(t, done)
    report_targets(t, done)
    if not t.rows:
        return 0
    results = {
        "date": datetime.datetime.now(datetime.timezone.utc)
        .strftime("%Y-%m-%dT%H:%M:%SZ"),
        "kernel": os.uname().release, "cpus": args.cpus,
        "pinned_cpu": args.cpu, "git": args.git, "hook": args.hook_version,
        "smoke": args.smoke, "trials": args.trials,
        "calls_per_batch": args.calls, "runc_rounds": args.rounds,
        "rows": t.rows,
    }
    with open(os.path.join(args.out, "results.json"), "w",
              encoding="utf-8") as f:
        json.dump(results, f, indent=2, ensure_ascii=False)
        f.write("\n")
    text = table_text(t.rows, args.verbose)
    with open(os.path.join(args.out, "table.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
