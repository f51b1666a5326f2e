# SPDX-License-Identifier: GPL-2.0-only
"""The trace of bench/runc_gap.sh, cut into runs: for runc_gap.py.

A run is what happens between the markers "gap begin VARIANT ROUND" and
"gap end VARIANT ROUND"; its milestones (Run.t) are the times, on the
kernel's clock, of the events that runc_gap.py's segments start and end
at. Standard library only, for /usr/bin/python3.
"""

import re

LINE = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+\.\d+): (.*)$")
SYS_ENTER = re.compile(r"^sys_(\w+)\((.*)\)$")
SYS_EXIT = re.compile(r"^sys_(\w+) -> (0x[0-9a-f]+)$")
EVENT = re.compile(r"^(\w+): (.*)$")
FIELD = re.compile(r"(\w+)=(\S*)")
# What runc execs itself: runc, runc init, its sealed copy (/dev/fd/N).
RUNC_EXECS = ("/usr/sbin/runc", "/proc/self/exe", "/dev/fd/")

# ---- the trace -------------------------------------------------------------


class Event:
    """One line of the trace: a tracepoint, or a system call's entry or
    exit (name without sys_, ret signed)."""

    __slots__ = ("pid", "ts", "name", "kind", "text", "fields", "ret")

    def __init__(self, pid, ts, body):
        self.pid, self.ts, self.ret = pid, ts, None
        self.kind, self.text = "event", body
        m = SYS_EXIT.match(body)
        if m:
            self.name, self.kind, self.text = m.group(1), "exit", ""
            self.ret = int(m.group(2), 16)
            if self.ret >= 1 << 63:
                self.ret -= 1 << 64
        elif SYS_ENTER.match(body):
            m = SYS_ENTER.match(body)
            self.name, self.kind, self.text = m.group(1), "enter", m.group(2)
        else:
            m = EVENT.match(body)
            self.name = m.group(1) if m else "?"
            self.text = m.group(2) if m else body
        self.fields = {}
        if self.kind == "event":
            self.fields = dict(FIELD.findall(self.text))


def read_trace(path):
    events = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LINE.match(line.rstrip("\n"))
            if m and not line.startswith("#"):
                events.append(Event(int(m.group(2)), float(m.group(4)),
                                    m.group(5)))
    events.sort(key=lambda e: e.ts)
    return events


class Run:
    """One marked run: its events, and in t the times of its milestones."""

    def __init__(self, variant, rnd, begin, driver):
        self.variant, self.round = variant, rnd
        self.begin, self.driver = begin, driver
        self.end = self.cid = self.error = None
        self.events = []
        self.t = {}
        self.facts = {}

    def finish(self, hook):
        self.t["begin"], self.t["end"] = self.begin, self.end
        try:
            self._processes()
            if self.variant == "solo":
                self._solo(hook)
            else:
                self._runc()
        except (KeyError, IndexError, ValueError) as e:
            self.error = "missing event: %s" % e

    def _processes(self):
        """Our processes and threads (the driver's descendants), and when
        each was forked, exec'd, exited and reaped."""
        ours, self.parent = {self.driver}, {}
        for e in self.events:
            if e.name == "sched_process_fork" and \
                    int(e.fields["pid"]) in ours:
                child = int(e.fields["child_pid"])
                ours.add(child)
                self.parent[child] = int(e.fields["pid"])
        self.mine = [e for e in self.events if e.pid in ours]
        self.forks = {int(e.fields["child_pid"]): e.ts for e in self.mine
                      if e.name == "sched_process_fork"}
        self.execs = {}
        for e in self.mine:
            if e.name == "sched_process_exec":
                self.execs.setdefault(e.pid, []).append(
                    (e.ts, e.fields.get("filename", "")))
        self.exits = {e.pid: e.ts for e in self.mine
                      if e.name == "sched_process_exit"}
        self.reaped = {e.ret: e.ts for e in self.mine
                       if e.name == "wait4" and e.kind == "exit"}
        ours.discard(self.driver)
        self.ours = ours

    def _hooks(self, pids):
        t = self.t
        self.facts["hook_children"] = 0
        for stage, pid in zip(("pre", "post"), pids):
            first, last = self.execs[pid][0][0], self.execs[pid][-1][0]
            # A child of the hook (a reaper) could hold runc's pipes.
            self.facts["hook_children"] += sum(
                1 for e in self.mine if e.name == "sched_process_fork" and
                e.pid == pid and e.ts > first)
            t[stage + "_fork"] = self.forks[pid]
            t[stage + "_exec"], t[stage + "_exec_last"] = first, last
            t[stage + "_exit"] = self.exits[pid]
            t[stage + "_reaped"] = self.reaped[pid]
            self.facts[stage + "_cpu"] = self._cpu(pid, last, self.exits[pid])

    def _cpu(self, pid, start, end):
        """Time on a CPU, preempted (runnable) and asleep, from the
        scheduler's switches; and who preempted it."""
        off = state = nxt = None
        preempted = blocked = 0.0
        by = {}
        for e in self.events:
            if e.name != "sched_switch" or not start <= e.ts <= end:
                continue
            if e.fields.get("prev_pid") == str(pid):
                off, state = e.ts, e.fields.get("prev_state", "")
                nxt = e.fields.get("next_comm", "?")
            elif e.fields.get("next_pid") == str(pid) and off is not None:
                if state.startswith("R"):
                    preempted += e.ts - off
                    by[nxt] = by.get(nxt, 0.0) + e.ts - off
                else:
                    blocked += e.ts - off
                off = None
        return {"on": end - start - preempted - blocked,
                "preempted": preempted, "blocked": blocked, "by": by}

    def _solo(self, hook):
        pids = sorted((v[0][0], pid) for pid, v in self.execs.items()
                      if v[-1][1] == hook)
        self._hooks([pid for _, pid in pids])

    def _runc(self):
        t, cid = self.t, "/" + self.cid
        init = [int(e.fields["child_pid"]) for e in self.mine
                if e.name == "sched_process_fork" and
                e.fields.get("comm", "").startswith("runc:[1:CHILD]")][0]
        hooks = sorted((v[0][0], pid) for pid, v in self.execs.items()
                       if pid != init and not v[0][1].startswith(RUNC_EXECS))
        t["ct_exec"], t["ct_exit"] = self.execs[init][-1][0], self.exits[init]
        cg = [e for e in self.events if e.name.startswith("cgroup_") and
              e.fields.get("path", "").endswith(cid)]
        t["cg_mkdir"] = [e.ts for e in cg if e.name == "cgroup_mkdir"][0]
        t["cg_populated"] = [e.ts for e in cg if e.fields.get("val") == "1"
                             and e.name == "cgroup_notify_populated"][0]
        t["rm_first"] = [e.ts for e in self.mine if e.name == "unlinkat" and
                         e.kind == "enter" and e.ts > t["ct_exit"]][0]
        t["rm_last"] = [e.ts for e in cg if e.name == "cgroup_rmdir"][-1]
        self.facts["rmdir_failed"] = sum(
            1 for e in self.mine if e.name == "unlinkat" and
            e.kind == "exit" and t["ct_exit"] < e.ts <= t["rm_last"])
        self._hooks([pid for _, pid in hooks])
        if "pre_exit" in t:
            # Calls that ran our programs: the container's, once attached.
            ct = {p for p in self.ours if self._under(p, init)}
            self.facts["ct_sockets"] = sum(
                1 for e in self.mine if e.pid in ct and e.kind == "enter"
                and e.name in ("socket", "setsockopt") and
                e.ts > t["pre_exit"])

    def _under(self, pid, root):
        while pid is not None and pid != root:
            pid = self.parent.get(pid)
        return pid == root


def released(runs, events):
    """When the kernel released each run's cgroup2 cgroup (in a worker,
    after its BPF programs): seconds after runc's rmdir."""
    rel = [(e.ts, e.fields.get("path", "")) for e in events
           if e.name == "cgroup_release" and e.fields.get("root") == "0"]
    for r in runs:
        last = r.t.get("rm_last")
        if last is None:
            continue
        ts = [t for t, path in rel if t > last and path.endswith("/" + r.cid)]
        if ts:
            r.facts["released_after"] = ts[0] - last
            r.facts["released_after_end"] = ts[0] > r.end


def cut_runs(events, variants, prefix, hook):
    """The runs between markers; the kernel's deferred work items
    (start, end, function, the run it fell in or None)."""
    runs, work, starts, current = [], [], {}, None
    for e in events:
        words = e.text.split() if e.name == "tracing_mark_write" else []
        if len(words) == 4 and words[0] == "gap" and words[2] in variants:
            if words[1] == "begin":
                current = Run(words[2], int(words[3]), e.ts, e.pid)
            elif current and words[1] == "end":
                current.end, current.cid = e.ts, prefix + current.variant
                current.finish(hook)
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
