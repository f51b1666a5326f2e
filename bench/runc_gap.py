#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Accounting of the `runc run` gap: bench/runc_gap.sh measures, this
reports.

    runc_gap.py --raw DIR --variants "none true ours ..." --hook PATH
                --prefix ID-PREFIX [--order shuffle|rotate]

DIR holds:
  trace             the text of runc_gap.sh's tracefs instance: markers
                    "gap begin|end VARIANT ROUND" around each run, and
                    the events in between and after
  stderr.VARIANT    the wrapped variants' hook stderr: the
                    OCI_SOCKOPT_HOOK_TIMING lines, a prestart and a
                    poststop line a run
  runc.VARIANT.err  runc's stderr (its warnings: cgroup removal retries)
  strace.V.N        strace -f -tt -T of run N of variant V
  perftrace.V.N     perf trace -S of run N of variant V

Each run is cut at its events into consecutive segments that add up to
its wall time (marker to marker). A row of the table is the median over
rounds of ours - true within the round (paired p50), with the mean and
its 95% confidence interval beside it. Medians do not add up: the
"unexplained" row is the paired p50 of the run minus the sum of the
rows' p50. Standard library only, for /usr/bin/python3.
"""

import argparse
import bisect
import glob
import os
import re
import sys

from runc_gap_trace import cut_runs, read_trace

WITH_OURS = ("ours", "shared", "noop", "pre", "gen", "wours", "solo")
# The variants with a table of their own against /bin/true, and its title.
TABLES = (("ours", "ours (fresh load)"), ("noop", "ours, nothing to attach"),
          ("pre", "ours, preloaded"),
          ("gen", "ours, a policy added after preload (generic)"))

# ---- statistics ------------------------------------------------------------


def median(values):
    v = sorted(values)
    n = len(v)
    if not n:
        return None
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def mean(values):
    return sum(values) / len(values) if values else None


def ci95(values):
    """Half the width of the mean's 95% confidence interval (normal)."""
    n = len(values)
    if n < 3:
        return None
    m = mean(values)
    return 1.96 * (sum((v - m) ** 2 for v in values) / (n - 1) / n) ** 0.5


def ms(value, spec="%.3f"):
    """Seconds as milliseconds, or "" when there is no value."""
    return "" if value is None else spec % (value * 1e3)


# ---- the accounting --------------------------------------------------------

# (label, from, to): consecutive milestones, so the rows add up to the run.
SEGMENTS = (
    ("runc: start -> first cgroup mkdir", "begin", "cg_mkdir"),
    ("runc: first cgroup attach", "cg_mkdir", "cg_populated"),
    ("runc: init in its cgroups -> prestart fork", "cg_populated",
     "pre_fork"),
    ("prestart: runc forks the hook -> exec", "pre_fork", "pre_exec"),
    ("prestart: the hook process, exec -> exit", "pre_exec", "pre_exit"),
    ("prestart: process teardown -> runc reaps it", "pre_exit",
     "pre_reaped"),
    ("runc: reaped -> container's exec (resume init, fifo)", "pre_reaped",
     "ct_exec"),
    ("container: /bin/true, exec -> exit", "ct_exec", "ct_exit"),
    ("runc: container exit -> first cgroup rmdir", "ct_exit", "rm_first"),
    ("runc: cgroup removal, all hierarchies", "rm_first", "rm_last"),
    ("runc: state dir removal -> poststop fork", "rm_last", "post_fork"),
    ("poststop: runc forks the hook -> exec", "post_fork", "post_exec"),
    ("poststop: the hook process, exec -> exit", "post_exec", "post_exit"),
    ("poststop: process teardown -> runc reaps it", "post_exit",
     "post_reaped"),
    ("runc: reaped -> exit, the shell's wait", "post_reaped", "end"),
)
# runc's first cgroup.procs write: left out of the sum (see attach_table).
ATTACH = ("cg_mkdir", "cg_populated")
CPU_ROWS = (("on", "on a CPU"),
            ("blocked", "sleeping (its state on stdin, locks)"),
            ("preempted", "runnable, preempted"))
COLS = "%-54s %8s %8s %9s %9s %6s"


def seg(run, a, b):
    if run is None or a not in run.t or b not in run.t:
        return None
    return run.t[b] - run.t[a]


def seg_wo_attach(run):
    whole, attach = seg(run, "begin", "end"), seg(run, *ATTACH)
    return None if whole is None or attach is None else whole - attach


def cpu(run, stage, kind):
    c = run.facts.get(stage + "_cpu") if run else None
    return None if c is None else c[kind]


def pair(by_round, va, vb, f):
    """Per-round differences f(vb's run) - f(va's run), and each side."""
    d, xa, xb = [], [], []
    for _, runs in sorted(by_round.items()):
        x, y = f(runs.get(va)), f(runs.get(vb))
        xa += [] if x is None else [x]
        xb += [] if y is None else [y]
        d += [] if x is None or y is None else [y - x]
    return d, xa, xb


def row(label, d, xa, xb):
    return COLS % (label, ms(median(xa)), ms(median(xb)), ms(median(d)),
                   ms(mean(d)), ms(ci95(d), "%.2f"))


def table(by_round, order, b="ours", title="ours (fresh load)"):
    a = "true"
    whole = pair(by_round, a, b, lambda r: seg(r, "begin", "end"))
    out = ["== runc run, %s - /bin/true hooks: %d rounds, "
           "order %s; ms" % (title, len(whole[0]), order),
           COLS % ("", "true", b, b + "-true", b + "-true", "95%"),
           COLS % ("", "p50", "p50", "p50", "mean", "CI +-")]
    rows = hooks = 0.0
    for label, s, e in SEGMENTS:
        d, xa, xb = pair(by_round, a, b, lambda r, s=s, e=e: seg(r, s, e))
        if (s, e) == ATTACH:
            attach = (d, xa, xb)
            continue
        rows += median(d) or 0
        if label.startswith(("prestart", "poststop")):
            hooks += median(d) or 0
        out.append(row(label, d, xa, xb))
        if label.endswith("the hook process, exec -> exit"):
            for kind, what in CPU_ROWS:
                out.append(row("    " + what, *pair(
                    by_round, a, b,
                    lambda r, k=kind, st=s[:-5]: cpu(r, st, k))))
    wo = pair(by_round, a, b, seg_wo_attach)
    out += [row("unexplained: the run's p50 - the rows' p50",
                [median(wo[0]) - rows], [], []),
            row("= the run without runc's first cgroup attach", *wo),
            row("+ runc's first cgroup attach (RCU grace period)", *attach),
            row("= the whole run, marker to marker", *whole),
            "the hook's processes (prestart and poststop rows): %s ms of "
            "the %s without runc's first attach"
            % (ms(hooks), ms(median(wo[0])))]
    return out


def attach_table(runs, events):
    """runc's first attach waits for an RCU grace period unless a task
    moved between cgroups (anywhere, anyone's) within about one grace
    period: slow (> 1 ms) attaches by the time since the last move, and
    by whether the run before had our hook."""
    out = ["== runc's first cgroup attach by the time since the last "
           "cgroup move on the host (slow: > 1 ms)"]
    moves = [e.ts for e in events if e.name == "cgroup_attach_task"]
    buckets, prev = {}, None
    for r in runs:
        i = bisect.bisect_left(moves, r.t.get("cg_mkdir", 0))
        if not r.error and "cg_mkdir" in r.t and i:
            key = (min(int((r.t["cg_mkdir"] - moves[i - 1]) * 100) * 10, 50),
                   prev is not None and prev.variant in WITH_OURS)
            n, k = buckets.get(key, (0, 0))
            buckets[key] = (n + 1, k + (seg(r, *ATTACH) > 1e-3))
        prev = r
    for lo in sorted({k[0] for k in buckets}):
        cells = []
        for after, name in ((False, "after a run without our hook"),
                            (True, "after one with it")):
            n, k = buckets.get((lo, after), (0, 0))
            cells.append("%s %d/%d slow" % (name, k, n))
        out.append("  %s ms: %s" % ("%2d-%2d" % (lo, lo + 10) if lo < 50
                                    else ">=50 ", "; ".join(cells)))
    return out


# ---- inside the hook: its timing lines -------------------------------------


def timing_lines(path):
    """(prestart steps, poststop steps): one dict of seconds a run."""
    pre, post = [], []
    if not os.path.exists(path):
        return pre, post
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"^timing: (\w+): (.*) \(us\)$", line.strip())
            if m:
                w = m.group(2).split()
                steps = {w[i]: int(w[i + 1]) * 1e-6
                         for i in range(0, len(w) - 1, 2)}
                (pre if m.group(1) == "prestart" else post).append(steps)
    return pre, post


def stage_rows(timed, stage):
    """Per round: one hook process's times (seconds), by row label."""
    rows = {}
    for rnd, (run, steps) in timed.items():
        a, b = run.t.get(stage + "_exec_last"), run.t.get(stage + "_exit")
        if a is None or b is None:
            continue
        r = {"exec -> exit (the binary)": b - a,
             "  exec, ld.so, libraries, exit": b - a - steps["total"],
             "  main, total": steps["total"]}
        for k, v in steps.items():
            if k != "total":
                r["    " + k] = v
        # Prestart: the index of shared copies, closing the BPF objects,
        # the log line.
        r["    after the last mark"] = steps["total"] - sum(
            v for k, v in steps.items() if k != "total")
        for k, what in (("on", "on a CPU"), ("preempted", "preempted"),
                        ("blocked", "sleeping")):
            r["  " + what] = run.facts[stage + "_cpu"][k]
        rows[rnd] = r
    return rows


def hook_detail(by_round, runs, raw):
    """The hook's steps from the wrapped runs under runc (wours) and alone
    (solo), matched to the runs in order; the wrapped /bin/true of the same
    round for ours - true."""
    out, timed = [], {}
    for v in ("wours", "solo"):
        pre, post = timing_lines(os.path.join(raw, "stderr." + v))
        vr = [r for r in runs if r.variant == v]
        if not vr or len(pre) != len(vr) or len(post) != len(vr):
            out.append("  (%s: %d+%d timing lines for %d runs: no steps)"
                       % (v, len(pre), len(post), len(vr)))
            continue
        timed[v] = {st: {r.round: (r, s) for r, s in zip(vr, lines)
                         if not r.error}
                    for st, lines in (("pre", pre), ("post", post))}
    if "wours" not in timed:
        return out
    for stage in ("pre", "post"):
        runc = stage_rows(timed["wours"][stage], stage)
        solo = stage_rows(timed["solo"][stage], stage) if "solo" in timed \
            else {}
        true = {rnd: seg(rs.get("wtrue"), stage + "_exec_last",
                         stage + "_exit") for rnd, rs in by_round.items()}
        out += ["== %s: the hook process, wrapped, OCI_SOCKOPT_HOOK_TIMING=1; "
                "p50 ms" % ("prestart" if stage == "pre" else "poststop"),
                "  %-44s %8s %8s %10s %10s" % ("", "runc", "alone",
                                               "runc-alone", "ours-true")]
        # A step some runs lack (poststop's gc, once a minute) counts only
        # in the runs that have it.
        labels = list(dict.fromkeys(lb for r in runc.values() for lb in r))
        for label in labels:
            d = [runc[k][label] - solo[k][label] for k in runc
                 if label in runc[k] and label in solo.get(k, {})]
            # /bin/true's exec -> exit is all exec, ld.so, libraries, exit.
            dt = [runc[k][label] - true[k] for k in runc
                  if true.get(k) is not None and label in runc[k] and
                  label.startswith(("exec", "  exec"))]
            out.append("  %-44s %8s %8s %10s %10s" % (
                label,
                ms(median([r[label] for r in runc.values() if label in r])),
                ms(median([r[label] for r in solo.values() if label in r])),
                ms(median(d)), ms(median(dt))))
    return out


def others(by_round, variants):
    out = ["== other variants, whole run, paired p50 (mean), ms"]
    for a, b, label in (("none", "true", "/bin/true hooks - no hooks"),
                        ("true", "shared", "ours, policy already in use by "
                         "another container - /bin/true"),
                        ("wtrue", "wours",
                         "wrapped ours - wrapped /bin/true")):
        d = pair(by_round, a, b, lambda r: seg(r, "begin", "end"))[0]
        if a in variants and b in variants and d:
            out.append("  %-62s %7s (%s)" % (label, ms(median(d)),
                                             ms(mean(d))))
    if "shared" in variants:
        d = pair(by_round, "true", "shared",
                 lambda r: seg(r, "pre_exec", "pre_exit"))[0]
        out.append("  %-62s %7s" % ("prestart process, shared - /bin/true",
                                    ms(median(d))))
    return out


# ---- what else could differ ------------------------------------------------

FACT_HEAD = ("  %-7s %4s %6s %6s %7s %6s %9s %8s %8s",
             ("", "runs", "rmdir", "runc", "ct sock", "hook", "cg2 freed",
              "freed", "kworker"),
             ("", "", "failed", "retry", "after", "forks", "after", "after",
              "frees in"),
             ("", "", "", "", "pre", "", "rmdir p50", "run end", "run p50"))


def facts(runs, work, variants, raw):
    fmt = FACT_HEAD[0]
    out = ["== what else differs, per variant (all runs)"]
    out += [fmt % h for h in FACT_HEAD[1:]]
    for v in variants:
        rs = [r for r in runs if r.variant == v and not r.error]
        if not rs:
            continue
        socks = [r.facts["ct_sockets"] for r in rs if "ct_sockets" in r.facts]
        retries = 0
        err = os.path.join(raw, "runc.%s.err" % v)
        if os.path.exists(err):
            with open(err, encoding="utf-8", errors="replace") as f:
                retries = sum(1 for line in f if "will retry" in line)
        rel = [r.facts["released_after"] for r in rs
               if "released_after" in r.facts]
        late = sum(1 for r in rs if r.facts.get("released_after_end"))
        inside = [sum(b - a for a, b, _, run in work if run is r) for r in rs]
        out.append(fmt % (
            v, len(rs), sum(r.facts.get("rmdir_failed", 0) for r in rs),
            retries, sum(socks) if socks else "-",
            sum(r.facts.get("hook_children", 0) for r in rs),
            ms(median(rel)) or "-", "%d/%d" % (late, len(rel)),
            ms(median(inside))))
    out.append(
        "  (rmdir failed: runc's cgroup rmdirs that failed, as EBUSY would; "
        "runc retry: its 'will retry' warnings; ct sock after pre: socket() "
        "and setsockopt() by the container's processes once our programs "
        "were attached; hook forks: children of the hook processes, which "
        "could hold runc's pipes; cg2 freed: the kernel's cgroup_release of "
        "the container's cgroup2 cgroup, in a worker, after runc's rmdir; "
        "kworker frees: wall time of the kernel's workers freeing cgroups, "
        "BPF programs and maps during the run)")
    fns = {}
    for a, b, fn, _ in work:
        n, t = fns.get(fn, (0, 0.0))
        fns[fn] = (n + 1, t + (b - a))
    if fns:
        out.append("  kernel deferred work, all rounds: " + "; ".join(
            "%s x%d %.1f ms" % (fn, n, t * 1e3)
            for fn, (n, t) in sorted(fns.items())))
    return out


def perf_sections(path):
    """perf trace -S's summary: [(comm, pid, {syscall: (calls, errors)})]."""
    out, current, on = [], None, False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            on = on or "Summary of events" in line
            m = re.match(r"^ (\S.*) \((\d+)\), \d+ events", line)
            if on and m:
                current = {}
                out.append((m.group(1), int(m.group(2)), current))
            m = re.match(r"^\s+(\w+)\s+(\d+)\s+(\d+)\s+[\d.]+\s", line)
            if on and m and current is not None:
                current[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out


def syscall_summaries(raw):
    """What the hook processes call (perf trace -S), and runc's cgroup
    rmdirs (strace -T); both inflate times, so counts only."""
    out = []
    files = sorted(glob.glob(os.path.join(raw, "perftrace.ours.*")))
    calls = {"prestart": {}, "poststop": {}}
    for path in files:
        hooks = sorted((pid, c) for comm, pid, c in perf_sections(path)
                       if comm.startswith("oci-sockopt"))
        for stage, (_, c) in zip(("prestart", "poststop"), hooks):
            for name, (n, e) in c.items():
                s = calls[stage].setdefault(name, [0, 0])
                s[0], s[1] = s[0] + n, s[1] + e
    for stage, c in calls.items():
        if c:
            n = len(files)
            top = sorted(c.items(), key=lambda kv: -kv[1][0])[:12]
            out.append("  perf trace, %s: %d system calls a run; %s" % (
                stage, sum(v[0] for v in c.values()) / n, ", ".join(
                    "%s %d%s" % (k, v[0] / n, " (%d failed)" % (v[1] / n)
                                 if v[1] else "") for k, v in top)))
    for v in ("true", "ours"):
        files = sorted(glob.glob(os.path.join(raw, "strace.%s.*" % v)))
        rm = busy = 0
        for path in files:
            with open(path, encoding="utf-8", errors="replace") as f:
                for line in f:
                    rm += bool(re.search(r'unlinkat\(AT_FDCWD, '
                                         r'"/sys/fs/cgroup/[^"]*", '
                                         r'AT_REMOVEDIR', line))
                    busy += "unlinkat" in line and "EBUSY" in line
        if files:
            out.append("  strace, %s: runc's cgroup rmdirs %d a run, EBUSY %d"
                       % (v, rm / len(files), busy))
    if out:
        out.insert(0, "== system calls (strace -f -T, perf trace -S; a few "
                   "runs each)")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--variants", required=True)
    ap.add_argument("--hook", required=True)
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--order", default="shuffle")
    args = ap.parse_args()
    variants = args.variants.split()
    events = read_trace(os.path.join(args.raw, "trace"))
    runs, work = cut_runs(events, variants, args.prefix, args.hook)
    by_round = {}
    for r in runs:
        if not r.error:
            by_round.setdefault(r.round, {})[r.variant] = r
    lines = []
    for v, title in TABLES:
        if "true" in variants and v in variants:
            lines += table(by_round, args.order, v, title)
    lines += attach_table(runs, events)
    lines += hook_detail(by_round, runs, args.raw)
    lines += others(by_round, variants)
    lines += facts(runs, work, variants, args.raw)
    lines += syscall_summaries(args.raw)
    bad = [r for r in runs if r.error]
    if bad:
        lines.append("  %d run(s) not cut: %s" % (len(bad), "; ".join(
            "%s/%d %s" % (r.variant, r.round, r.error) for r in bad[:3])))
    print("\n".join(lines))
    # A few runs may miss an event (a lost line); more is a broken trace.
    return 0 if runs and len(bad) <= len(runs) // 10 else 1


if __name__ == "__main__":
    sys.exit(main())
