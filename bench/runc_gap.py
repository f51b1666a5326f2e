#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Accounting of the `runc run` gap: bench/runc_gap.sh measures, this reports.

    runc_gap.py --raw DIR --variants "none true ours ..." --hook PATH
                --prefix ID-PREFIX [--order shuffle|rotate]

DIR holds:
  trace             the tracefs instance's text: markers "gap begin|end
                    VARIANT ROUND" around each `runc run`, and the events
                    in between (see runc_gap.sh)
  stderr.VARIANT    the wrapped variants' hook stderr: OCI_SOCKOPT_HOOK_
                    TIMING lines, one prestart and one poststop a run
  runc.VARIANT.err  runc's stderr (its warnings, e.g. cgroup removal
                    retries)
  strace.V.N        strace -f -tt -T of run N of variant V
  perftrace.V.N     perf trace -S of run N of variant V

Each run is cut at its events into consecutive segments that add up to
its wall time (marker to marker). A row of the table is the median over
rounds of the difference ours - true within the round (paired p50), with
the mean difference beside it. Medians do not add up: the "unexplained"
row is the paired p50 of the whole run minus the sum of the rows' p50.
Standard library only, for /usr/bin/python3.
"""

import argparse
import glob
import os
import re
import sys

LINE = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+\.\d+): (.*)$")
SYS_ENTER = re.compile(r"^sys_(\w+)\((.*)\)$")
SYS_EXIT = re.compile(r"^sys_(\w+) -> (0x[0-9a-f]+)$")
EVENT = re.compile(r"^(\w+): (.*)$")
FIELD = re.compile(r"(\w+)=(\S*)")
RUNC_EXECS = ("/usr/sbin/runc", "/proc/self/exe")
EBUSY = 16


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


def ms(value, spec="%7.3f"):
    return " " * len(spec % 0) if value is None else spec % (value * 1e3)


# ---- the trace -------------------------------------------------------------


class Event:
    __slots__ = ("comm", "pid", "ts", "name", "kind", "text", "fields", "ret")

    def __init__(self, comm, pid, ts, body):
        self.comm, self.pid, self.ts = comm, pid, ts
        self.ret = None
        m = SYS_EXIT.match(body)
        if m:
            self.name, self.kind, self.text = m.group(1), "exit", ""
            self.ret = int(m.group(2), 16)
            if self.ret >= 1 << 63:
                self.ret -= 1 << 64
        else:
            m = SYS_ENTER.match(body)
            if m:
                self.name, self.kind, self.text = m.group(1), "enter", m.group(2)
            else:
                m = EVENT.match(body)
                self.name, self.kind = (m.group(1), "event") if m else ("?", "event")
                self.text = m.group(2) if m else body
        self.fields = dict(FIELD.findall(self.text)) if self.kind == "event" else {}


def read_trace(path):
    events = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = LINE.match(line.rstrip("\n"))
            if m:
                events.append(Event(m.group(1), int(m.group(2)), float(m.group(4)), m.group(5)))
    events.sort(key=lambda e: e.ts)
    return events


class Run:
    """One `runc run`: its events, and the times of its milestones."""

    def __init__(self, variant, rnd, begin, driver):
        self.variant, self.round, self.begin, self.driver = variant, rnd, begin, driver
        self.end = None
        self.cid = None
        self.events = []
        self.error = None
        self.t = {}
        self.facts = {}

    def finish(self, cid, hook):
        try:
            if self.variant == "solo":
                self._solo(hook)
            else:
                self._milestones(cid, hook)
        except (KeyError, IndexError, ValueError) as e:
            self.error = "missing event: %s" % e

    def _tree(self):
        """Our processes and threads: descendants of the driver's fork."""
        ours = {self.driver}
        parent = {}
        for e in self.events:
            if e.name == "sched_process_fork" and int(e.fields["pid"]) in ours:
                child = int(e.fields["child_pid"])
                ours.add(child)
                parent[child] = int(e.fields["pid"])
        ours.discard(self.driver)
        return ours, parent

    def _processes(self):
        ours, parent = self._tree()
        mine = [e for e in self.events if e.pid in ours]
        forks = {int(e.fields["child_pid"]): e.ts for e in self.events
                 if e.name == "sched_process_fork" and (e.pid in ours or e.pid == self.driver)}
        execs = {}
        for e in mine:
            if e.name == "sched_process_exec":
                execs.setdefault(e.pid, []).append((e.ts, e.fields.get("filename", "")))
        exits = {e.pid: e.ts for e in mine if e.name == "sched_process_exit"}
        reaped = {e.ret: e.ts for e in self.events if e.name == "wait4" and e.kind == "exit" and
                  (e.pid in ours or e.pid == self.driver)}
        return ours, parent, mine, forks, execs, exits, reaped

    def _hook_times(self, stages, forks, execs, exits, reaped):
        t = self.t
        self.facts["hook_children"] = 0
        for stage, pid in stages:
            # A child of the hook (the reaper) could hold runc's pipes.
            self.facts["hook_children"] += sum(1 for e in self.events if e.name == "sched_process_fork"
                                               and e.pid == pid and e.ts > execs[pid][0][0])
            t[stage + "_fork"] = forks[pid]
            t[stage + "_exec"] = execs[pid][0][0]
            t[stage + "_exec_last"] = execs[pid][-1][0]
            t[stage + "_exit"] = exits[pid]
            t[stage + "_reaped"] = reaped[pid]
            t[stage + "_binary"] = execs[pid][-1][1]
            self.facts[stage + "_cpu"] = self._cpu(pid, t[stage + "_exec_last"], t[stage + "_exit"])

    def _cpu(self, pid, start, end):
        """on CPU, preempted (runnable), blocked; and who preempted it."""
        off, state, by = None, None, {}
        preempted = blocked = 0.0
        for e in self.events:
            if e.name != "sched_switch" or not start <= e.ts <= end:
                continue
            f = e.fields
            if f.get("prev_pid") == str(pid):
                off, state = e.ts, f.get("prev_state", "")
                nxt = f.get("next_comm", "?")
            elif f.get("next_pid") == str(pid) and off is not None:
                if state.startswith("R"):
                    preempted += e.ts - off
                    by[nxt] = by.get(nxt, 0.0) + e.ts - off
                else:
                    blocked += e.ts - off
                off = None
        return {"on": end - start - preempted - blocked, "preempted": preempted,
                "blocked": blocked, "by": by}

    def _solo(self, hook):
        _, _, _, forks, execs, exits, reaped = self._processes()
        pids = sorted((v[0][0], pid) for pid, v in execs.items() if v[-1][1] == hook)
        self._hook_times(zip(("pre", "post"), (pid for _, pid in pids)), forks, execs, exits, reaped)
        self.t["begin"], self.t["end"] = self.begin, self.end

    def _milestones(self, cid, hook):
        ours, parent, mine, forks, execs, exits, reaped = self._processes()
        init = [int(e.fields["child_pid"]) for e in mine
                if e.name == "sched_process_fork" and e.fields.get("comm", "").startswith("runc:[1:CHILD]")][0]
        hooks = sorted((v[0][0], pid) for pid, v in execs.items()
                       if pid != init and not v[0][1].startswith(RUNC_EXECS) and not v[0][1].startswith("/dev/fd/"))
        t = self.t
        t["begin"], t["end"] = self.begin, self.end
        t["ct_exec"] = execs[init][-1][0]
        t["ct_exit"] = exits[init]
        cg = [e for e in self.events if e.name.startswith("cgroup_") and
              e.fields.get("path", "").endswith("/" + cid)]
        t["cg_mkdir"] = [e.ts for e in cg if e.name == "cgroup_mkdir"][0]
        t["cg_populated"] = [e.ts for e in cg if e.name == "cgroup_notify_populated" and e.fields.get("val") == "1"][0]
        rm_enter = [e.ts for e in mine if e.name == "unlinkat" and e.kind == "enter" and e.ts > t["ct_exit"]]
        rm_done = [e.ts for e in cg if e.name == "cgroup_rmdir"]
        t["rm_first"], t["rm_last"] = rm_enter[0], rm_done[-1]
        self.facts["rmdir_failed"] = sum(1 for e in mine if e.name == "unlinkat" and e.kind == "exit" and
                                         t["ct_exit"] < e.ts <= t["rm_last"])
        self.facts["rmdir_ebusy"] = sum(1 for e in mine if e.name == "unlinkat" and e.kind == "exit" and
                                        e.ret == -EBUSY and t["ct_exit"] < e.ts <= t["rm_last"])
        self._hook_times(zip(("pre", "post"), (pid for _, pid in hooks)), forks, execs, exits, reaped)
        self.facts["hooks"] = len(hooks)
        # Sockets made by the container's processes once our programs were on.
        if "pre_exit" in t:
            ct = {p for p in ours if self._under(p, init, parent)}
            self.facts["ct_sockets_after_prestart"] = sum(
                1 for e in mine if e.pid in ct and e.kind == "enter" and
                e.name in ("socket", "setsockopt") and e.ts > t["pre_exit"])

    @staticmethod
    def _under(pid, root, parent):
        while pid is not None:
            if pid == root:
                return True
            pid = parent.get(pid)
        return False


def released(runs, events):
    """When the kernel released each run's cgroup2 cgroup (in a worker,
    after its BPF programs were released): seconds after the rmdir."""
    rel = [(e.ts, e.fields.get("path", "")) for e in events
           if e.name == "cgroup_release" and e.fields.get("root") == "0"]
    for r in runs:
        last = r.t.get("rm_last")
        if last is None or r.variant == "solo":
            continue
        cid = "/" + r.cid
        ts = [t for t, path in rel if t > last and path.endswith(cid)]
        if ts:
            r.facts["released_after"] = ts[0] - last
            r.facts["released_after_end"] = ts[0] > r.end


def cut_runs(events, variants, prefix, hook):
    """The runs between markers; the kernel's deferred work in and
    between them."""
    runs = []
    current = None
    work = []  # (start, end, function, inside-run)
    starts = {}
    for e in events:
        if e.name == "tracing_mark_write":
            words = e.text.split()
            if len(words) == 4 and words[0] == "gap" and words[2] in variants:
                if words[1] == "begin":
                    current = Run(words[2], int(words[3]), e.ts, e.pid)
                elif current and words[1] == "end":
                    current.end = e.ts
                    current.cid = prefix + current.variant
                    current.finish(current.cid, hook)
                    runs.append(current)
                    current = None
            continue
        if e.name == "workqueue_execute_start":
            starts[e.pid] = (e.ts, e.text.rsplit("function ", 1)[-1], current)
        elif e.name == "workqueue_execute_end" and e.pid in starts:
            t0, fn, run = starts.pop(e.pid)
            work.append((t0, e.ts, fn, run))
        if current:
            current.events.append(e)
    released(runs, events)
    return runs, work


# ---- the accounting --------------------------------------------------------

# (label, from-milestone, to-milestone): consecutive, so they add up to
# the run. The attach row is runc's and is left out of the sum (see
# ATTACH).
SEGMENTS = (
    ("runc: start -> first cgroup mkdir", "begin", "cg_mkdir"),
    ("runc: first cgroup attach (see below)", "cg_mkdir", "cg_populated"),
    ("runc: init in its cgroups -> prestart fork", "cg_populated", "pre_fork"),
    ("prestart: runc forks the hook -> exec", "pre_fork", "pre_exec"),
    ("prestart: the hook process, exec -> exit", "pre_exec", "pre_exit"),
    ("prestart: process teardown -> runc reaps it", "pre_exit", "pre_reaped"),
    ("runc: reaped -> container's exec (resume init, fifo)", "pre_reaped", "ct_exec"),
    ("container: /bin/true, exec -> exit", "ct_exec", "ct_exit"),
    ("runc: container exit -> first cgroup rmdir", "ct_exit", "rm_first"),
    ("runc: cgroup removal, all hierarchies", "rm_first", "rm_last"),
    ("runc: state dir removal -> poststop fork", "rm_last", "post_fork"),
    ("poststop: runc forks the hook -> exec", "post_fork", "post_exec"),
    ("poststop: the hook process, exec -> exit", "post_exec", "post_exit"),
    ("poststop: process teardown -> runc reaps it", "post_exit", "post_reaped"),
    ("runc: reaped -> exit, the shell's wait", "post_reaped", "end"),
)
ATTACH = ("cg_mkdir", "cg_populated")
CPU_ROWS = (("on", "on a CPU"), ("blocked", "sleeping (its state on stdin, locks)"),
            ("preempted", "runnable, preempted"))


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
    for rnd, runs in sorted(by_round.items()):
        x, y = f(runs.get(va)), f(runs.get(vb))
        if x is not None:
            xa.append(x)
        if y is not None:
            xb.append(y)
        if x is not None and y is not None:
            d.append(y - x)
    return d, xa, xb


def paired(by_round, va, vb, a, b):
    return pair(by_round, va, vb, lambda r: seg(r, a, b))[0]


def own(by_round, v, a, b):
    return [s for s in (seg(r.get(v), a, b) for r in by_round.values()) if s is not None]


def row(label, d, xa, xb):
    return "%-56s %8s %8s %9s %8s %6s" % (label, ms(median(xa), "%.3f"), ms(median(xb), "%.3f"),
                                           ms(median(d), "%.3f"), ms(mean(d), "%.3f"), ms(ci95(d), "%.2f"))


def table(by_round, runs, variants, raw, order):
    a, b = "true", "ours"
    out = ["== runc run, ours (fresh load) - /bin/true hooks: %d rounds, order %s; ms"
           % (len(paired(by_round, a, b, "begin", "end")), order),
           "%-56s %8s %8s %9s %8s %6s" % ("", "true", "ours", "ours-true", "ours-true", "95%"),
           "%-56s %8s %8s %9s %8s %6s" % ("", "p50", "p50", "p50", "mean", "CI +-")]
    rows = 0.0
    for label, s, e in SEGMENTS:
        d, xa, xb = pair(by_round, a, b, lambda r, s=s, e=e: seg(r, s, e))
        if (s, e) == ATTACH:
            attach = (d, xa, xb)
            continue
        rows += median(d) or 0
        out.append(row(label, d, xa, xb))
        if label.endswith("exec -> exit") and not label.startswith("container"):
            stage = s.split("_")[0]
            for kind, what in CPU_ROWS:
                out.append(row("    " + what, *pair(by_round, a, b, lambda r, k=kind: cpu(r, stage, k))))
    d, xa, xb = pair(by_round, a, b, seg_wo_attach)
    out.append(row("unexplained: the run's p50 - the sum of the rows' p50", [median(d) - rows], [], []))
    out.append(row("= the run without runc's first cgroup attach", d, xa, xb))
    out.append(row("+ runc's first cgroup attach (RCU grace period)", *attach))
    out.append(row("= the whole run, marker to marker", *pair(by_round, a, b, lambda r: seg(r, "begin", "end"))))
    return out


def attach_by_elapsed(runs):
    """runc's first attach waits for an RCU grace period unless the last
    cgroup.procs write (the previous run's) was recent: slow (> 1 ms)
    attaches by the time since the previous run's last attach, and by
    whether the previous run had our hook."""
    out = ["== runc's first cgroup attach by the time since the previous run's last one (slow: > 1 ms)"]
    prev, buckets = None, {}
    for r in runs:
        if r.error or r.variant == "solo" or "cg_mkdir" not in r.t:
            prev = None if r.variant != "solo" else prev
            continue
        if prev is not None:
            last = max(e.ts for e in prev.events if e.name == "cgroup_notify_populated" and
                       e.fields.get("val") == "1")
            el = r.t["cg_mkdir"] - last
            slow = seg(r, *ATTACH) > 1e-3
            key = (min(int(el * 1e3) // 10 * 10, 50), prev.variant in ("ours", "wours", "shared"))
            n, k = buckets.get(key, (0, 0))
            buckets[key] = (n + 1, k + slow)
        prev = r
    for lo in sorted({k[0] for k in buckets}):
        cells = []
        for after, name in ((False, "after no hook of ours"), (True, "after ours")):
            n, k = buckets.get((lo, after), (0, 0))
            cells.append("%s %d/%d slow" % (name, k, n))
        out.append("  %s ms: %s" % ("%2d-%2d" % (lo, lo + 10) if lo < 50 else ">=50 ", "; ".join(cells)))
    return out


def timing_lines(path):
    """(prestart steps, poststop steps), in seconds, one dict a run."""
    pre, post = [], []
    if not os.path.exists(path):
        return pre, post
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"^timing: (\w+): (.*) \(us\)$", line.strip())
            if not m:
                continue
            words = m.group(2).split()
            steps = {words[i]: int(words[i + 1]) * 1e-6 for i in range(0, len(words) - 1, 2)}
            (pre if m.group(1) == "prestart" else post).append(steps)
    return pre, post


def stage_rows(by_variant, stage):
    """Per round: the hook process's times in one stage (seconds)."""
    rows = {}
    for rnd, (run, steps) in by_variant.items():
        a, b = run.t.get(stage + "_exec_last"), run.t.get(stage + "_exit")
        if a is None or b is None:
            continue
        cpu = run.facts.get(stage + "_cpu", {})
        row = {"exec -> exit (the binary)": b - a,
               "  exec, ld.so, libraries, exit (all but main)": b - a - steps["total"],
               "  main, total": steps["total"]}
        for k, v in steps.items():
            if k != "total":
                row["    " + k] = v
        # After the last mark (prestart: the index of shared copies, closing
        # the BPF objects, the log line): not in any step.
        row["    after the last mark"] = steps["total"] - sum(v for k, v in steps.items() if k != "total")
        for k in ("on", "preempted", "blocked"):
            if k in cpu:
                row["  %s" % {"on": "on a CPU", "preempted": "runnable, preempted",
                                                        "blocked": "sleeping"}[k]] = cpu[k]
        rows[rnd] = row
    return rows


def hook_detail(by_round, runs, raw):
    """The hook's own steps, from the timing lines of the wrapped runs under
    runc (wours) and alone (solo), in the order of the runs; wrapped
    /bin/true (wtrue) of the same round for ours - true."""
    out = []
    timed = {}
    for v in ("wours", "solo"):
        pre, post = timing_lines(os.path.join(raw, "stderr." + v))
        vr = [r for r in runs if r.variant == v]
        if not vr or len(pre) != len(vr) or len(post) != len(vr):
            out.append("  (%s: %d+%d timing lines for %d runs: no step timings)" % (v, len(pre), len(post), len(vr)))
            continue
        timed[v] = {"pre": {r.round: (r, s) for r, s in zip(vr, pre) if not r.error},
                    "post": {r.round: (r, s) for r, s in zip(vr, post) if not r.error}}
    if "wours" not in timed:
        return out
    for stage in ("pre", "post"):
        name = "prestart" if stage == "pre" else "poststop"
        runc = stage_rows(timed["wours"][stage], stage)
        solo = stage_rows(timed["solo"][stage], stage) if "solo" in timed else {}
        true = {rnd: seg(runs_.get("wtrue"), stage + "_exec_last", stage + "_exit")
                for rnd, runs_ in by_round.items()}
        out.append("== %s: the hook process, wrapped, OCI_SOCKOPT_HOOK_TIMING=1; p50 ms" % name)
        out.append("  %-50s %8s %8s %10s %10s" % ("", "runc", "alone", "runc-alone", "ours-true"))
        labels = list(next(iter(runc.values())).keys()) if runc else []
        for label in labels:
            a = [r[label] for r in runc.values() if label in r]
            b = [r[label] for r in solo.values() if label in r]
            d = [runc[k][label] - solo[k][label] for k in runc if k in solo and label in runc[k] and label in solo[k]]
            if label.startswith(("exec -> exit", "  exec, ld.so")):
                base = (lambda x: x) if label.startswith("exec") else (lambda x: x)
                dt = [runc[k][label] - true[k] for k in runc if true.get(k) is not None]
            else:
                dt = []
            out.append("  %-50s %8s %8s %10s %10s" % (label, ms(median(a), "%.3f"), ms(median(b), "%.3f"),
                                                       ms(median(d), "%.3f"), ms(median(dt), "%.3f")))
        by = {}
        for run, _ in timed["wours"][stage].values():
            for k, v in run.facts.get(stage + "_cpu", {}).get("by", {}).items():
                by[k] = by.get(k, 0.0) + v
        n = max(len(timed["wours"][stage]), 1)
        if by:
            out.append("  under runc, preempted by (ms a run): " + ", ".join(
                "%s %.3f" % (k, v / n * 1e3) for k, v in sorted(by.items(), key=lambda kv: -kv[1])[:5]))
    return out


def others(by_round, variants):
    out = ["== other variants, whole run, paired p50 (mean), ms"]
    for a, b, label in (("none", "true", "/bin/true hooks - no hooks"),
                        ("true", "shared", "ours, policy shared with a running container - /bin/true"),
                        ("wtrue", "wours", "wrapped ours - wrapped /bin/true")):
        if a in variants and b in variants:
            d = paired(by_round, a, b, "begin", "end")
            if d:
                out.append("  %-64s %8s (%s)" % (label, ms(median(d), "%.3f"), ms(mean(d), "%.3f").strip()))
    for a, b in (("true", "shared"),):
        if b not in variants:
            continue
        d = paired(by_round, a, b, "pre_exec", "pre_exit")
        out.append("  %-64s %8s" % ("prestart process, %s - %s" % (b, a), ms(median(d), "%.3f")))
    return out


def facts(runs, work, variants, raw):
    out = ["== what else differs, per variant (all runs)",
           "  %-7s %4s %6s %6s %7s %7s %9s %9s %9s" % (
               "", "runs", "rmdir", "runc", "ct sock", "hook", "cg2 freed", "freed", "kworker"),
           "  %-7s %4s %6s %6s %7s %7s %9s %9s %9s" % (
               "", "", "failed", "retry", "after", "forks", "after", "after the", "frees in"),
           "  %-7s %4s %6s %6s %7s %7s %9s %9s %9s" % (
               "", "", "", "", "pre", "", "rmdir p50", "run ends", "run p50")]
    for v in variants:
        rs = [r for r in runs if r.variant == v and not r.error]
        if not rs:
            continue
        failed = sum(r.facts.get("rmdir_failed", 0) for r in rs)
        socks = [r.facts["ct_sockets_after_prestart"] for r in rs if "ct_sockets_after_prestart" in r.facts]
        retries = 0
        err = os.path.join(raw, "runc.%s.err" % v)
        if os.path.exists(err):
            with open(err, encoding="utf-8", errors="replace") as f:
                retries = sum(1 for line in f if "will retry" in line)
        children = sum(r.facts.get("hook_children", 0) for r in rs)
        rel = [r.facts["released_after"] for r in rs if "released_after" in r.facts]
        late = sum(1 for r in rs if r.facts.get("released_after_end"))
        inside = [sum(b - a for a, b, fn, run in work if run is r) for r in rs]
        out.append("  %-7s %4d %6d %6d %7s %7d %9s %4d/%-4d %9s" % (
            v, len(rs), failed, retries, sum(socks) if socks else "-", children,
            ms(median(rel), "%.3f") if rel else "-", late, len(rel), ms(median(inside), "%.3f")))
    out.append("  (rmdir failed: runc's unlinkat of a cgroup that failed, as EBUSY would; runc retry: its "
               "'will retry' warnings; ct sock after pre: socket()/setsockopt() by the container's "
               "processes once our programs were attached; hook forks: children of the hook processes "
               "(a reaper would hold runc's pipes); cg2 freed: the kernel's cgroup_release of the "
               "container's cgroup2 cgroup, in a worker; kworker frees: wall time of the workers "
               "freeing cgroups, BPF programs and maps while the run went on)")
    fns = {}
    for a, b, fn, run in work:
        n, t, outside = fns.get(fn, (0, 0.0, 0))
        fns[fn] = (n + 1, t + (b - a), outside + (run is None))
    if fns:
        out.append("  kernel deferred work, all rounds: " + "; ".join(
            "%s x%d %.1f ms" % (fn, n, t * 1e3) for fn, (n, t, o) in sorted(fns.items())))
    return out


def perf_sections(path):
    """perf trace -S's summary: [(comm, pid, {syscall: (calls, errors, ms)})]."""
    out, current, on = [], None, False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if "Summary of events" in line:
                on = True
            if not on:
                continue
            m = re.match(r"^ (\S.*) \((\d+)\), \d+ events", line)
            if m:
                current = {}
                out.append((m.group(1), int(m.group(2)), current))
                continue
            m = re.match(r"^\s+(\w+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s", line)
            if m and current is not None:
                current[m.group(1)] = (int(m.group(2)), int(m.group(3)), float(m.group(4)))
    return out


def syscall_summaries(raw):
    """What the hook processes call (perf trace -S: counts, failures, time,
    inflated by the tracing), and what strace -T shows of runc's cgroup
    removal."""
    out = []
    files = sorted(glob.glob(os.path.join(raw, "perftrace.ours.*")))
    hooks = {"prestart": {}, "poststop": {}}
    for path in files:
        secs = sorted((pid, calls) for comm, pid, calls in perf_sections(path)
                      if comm.startswith("oci-sockopt"))
        for stage, (_, calls) in zip(("prestart", "poststop"), secs):
            for name, (n, e, t) in calls.items():
                c = hooks[stage].setdefault(name, [0, 0, 0.0])
                c[0] += n
                c[1] += e
                c[2] += t
    for stage, calls in hooks.items():
        if not calls:
            continue
        n = len(files)
        total = sum(c[0] for c in calls.values()) / n
        top = sorted(calls.items(), key=lambda kv: -kv[1][0])[:12]
        out.append("  perf trace, %s: %d syscalls a run; " % (stage, total) + ", ".join(
            "%s %d%s" % (k, c[0] / n, " (%d failed)" % (c[1] / n) if c[1] else "") for k, c in top))
    for v in ("true", "ours"):
        files = sorted(glob.glob(os.path.join(raw, "strace.%s.*" % v)))
        if not files:
            continue
        rm, busy = [], 0
        for path in files:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for m in re.finditer(r'unlinkat\(AT_FDCWD, "/sys/fs/cgroup/[^"]*", AT_REMOVEDIR\) = (-?\d+)(?: (\w+))?.*<([\d.]+)>', text):
                rm.append(float(m.group(3)))
                busy += m.group(2) == "EBUSY"
        out.append("  strace, %-4s: runc's cgroup rmdir %d a run, %.3f ms each (p50, inflated by strace), EBUSY %d"
                   % (v, len(rm) // len(files), (median(rm) or 0) * 1e3, busy))
    return ["== syscall traces (%s)" % "strace -f -T and perf trace -S, a few runs each"] + out if out else []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--variants", required=True)
    ap.add_argument("--hook", required=True)
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--order", default="shuffle")
    args = ap.parse_args()
    variants = args.variants.split()
    runs, work = cut_runs(read_trace(os.path.join(args.raw, "trace")), variants, args.prefix, args.hook)
    bad = [r for r in runs if r.error]
    by_round = {}
    for r in runs:
        if not r.error:
            by_round.setdefault(r.round, {})[r.variant] = r
    lines = table(by_round, runs, variants, args.raw, args.order)
    lines += attach_by_elapsed(runs)
    lines += hook_detail(by_round, runs, args.raw)
    lines += others(by_round, variants)
    lines += facts(runs, work, variants, args.raw)
    lines += syscall_summaries(args.raw)
    if bad:
        lines.append("  %d run(s) not cut (%s)" % (len(bad), "; ".join(
            "%s/%d: %s" % (r.variant, r.round, r.error) for r in bad[:3])))
    print("\n".join(lines))
    return 0 if len(bad) <= len(runs) // 10 else 1


if __name__ == "__main__":
    sys.exit(main())
