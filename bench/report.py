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
  strace.N                strace -f of one fresh prestart
  perf.dso, perf.sym      perf report of prestart+poststop rounds, by
                          DSO (self) and by symbol (children)
  mem.LABEL.progs/.maps   bpftool -j prog/map show (scale: base, N)

It writes DIR/results.json (every row, with the run's conditions) and
DIR/table.txt, and prints the table: the rows of each benchmark in the
order it ran; with --verbose also the detail rows (each variant's own
median). Standard library only, for /usr/bin/python3.
"""

import argparse
import datetime
import json
import math
import os
import re
import sys

BENCHMARKS = ("datapath", "rules", "host", "hook", "scale")
# The hook's comm in perf's reports: comm is cut to 15 characters.
HOOK_COMM = "oci-sockopt-hook"[:15]
STRACE_RUNS = 3


# ---- statistics ------------------------------------------------------------


def middle(values):
    """The median of sorted values: the mean of the two middle ones when
    there is an even number of them."""
    n = len(values)
    if n % 2:
        return values[n // 2]
    return (values[n // 2 - 1] + values[n // 2]) / 2


def fmt(spec, value):
    """value formatted with spec ("%.3f"), or "" when there is none."""
    return "" if value is None else spec % value


class Raw:
    """The trials of one run, read from DIR/raw as they are asked for."""

    def __init__(self, directory):
        self.dir = directory
        self.cache = {}

    def path(self, name):
        return os.path.join(self.dir, name)

    def exists(self, name):
        return os.path.exists(self.path(name))

    def text(self, name):
        try:
            with open(self.path(name), encoding="utf-8") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def json(self, name):
        with open(self.path(name), encoding="utf-8") as f:
            return json.load(f)

    def values(self, key):
        if key not in self.cache:
            self.cache[key] = [float(v) for v in self.text(key).split()]
        return self.cache[key]

    def stat(self, key, p):
        """The p-th percentile of KEY's values, nearest rank (p 50: the
        median); None when there are none."""
        v = sorted(self.values(key))
        if not v:
            return None
        if p == 50:
            return middle(v)
        return v[max(math.ceil(p * len(v) / 100), 1) - 1]

    def pairs(self, a, b):
        """(a_i, b_i) for every round i that measured both."""
        return list(zip(self.values(a), self.values(b)))

    def pair_ms(self, a, b):
        """The median over rounds of A - B, in ms to 3 decimals: drift
        between rounds cancels."""
        d = sorted(x - y for x, y in self.pairs(a, b))
        return fmt("%.3f", middle(d) / 1e6 if d else None)

    def pair_ratio(self, a, b):
        """The median over trials of A / B, 3 decimals."""
        r = sorted(x / y for x, y in self.pairs(a, b) if y > 0)
        return fmt("%.3f", middle(r) if r else None)

    def ms(self, key, p=50):
        """The p-th percentile of KEY (ns) in ms, 3 decimals, or ""."""
        s = self.stat(key, p)
        return fmt("%.3f", None if s is None else s / 1e6)


def ratio(num, den):
    if num is None or den is None or den <= 0:
        return ""
    return "%.3f" % (num / den)


# ---- rows ------------------------------------------------------------------


def number(text):
    """A row's value as JSON has it: a number if the text is one, else the
    text; None for no value."""
    if text == "":
        return None
    try:
        v = float(text)
    except ValueError:
        return text
    if v.is_integer() and not (v == 0 and math.copysign(1, v) < 0):
        return int(v)
    return v


def verdict(value, target):
    """met or MISSED for "<= X" (numbers) and "== WORD" targets."""
    if target.startswith("== "):
        return "met" if str(value) == target[3:] else "MISSED"
    if isinstance(value, str):
        return "met" if value <= target[3:] else "MISSED"
    return "met" if value <= float(target[3:]) else "MISSED"


class Table:
    def __init__(self, raw, smoke):
        self.raw = raw
        self.smoke = smoke
        self.rows = []

    def row(self, section, label, value, unit, target="-", detail=False):
        """One line: VALUE is text as the table shows it ("" for a line
        that is only a label). Smoke runs judge nothing."""
        v = number(value)
        judged = not self.smoke and target != "-" and v is not None
        self.rows.append({
            "section": section, "label": label, "value": v, "unit": unit,
            "target": target,
            "verdict": verdict(v, target) if judged else "-",
            "detail": detail,
        })

    def detail(self, section, label, value, unit):
        """A line for results.json; the table shows it with --verbose."""
        self.row(section, label, value, unit, detail=True)

    def median(self, section, label, key, unit):
        s = self.raw.stat(key, 50)
        self.detail(section, label, "" if s is None else repr(s), unit)

    def ratio(self, section, label, num, den, target="-"):
        """The median of the per-trial ratios NUM/DEN; the label shows
        both variants' medians (in ns)."""
        n = self.raw.stat(num, 50) or 0
        d = self.raw.stat(den, 50) or 0
        self.row(section, "%-28s %6.0f / %-6.0f" % (label, n, d),
                 self.raw.pair_ratio(num, den), "ratio", target)


def cell(value):
    """A value as the table prints it (as jq's tostring)."""
    if value is None:
        return ""
    if isinstance(value, float) and value == 0 and math.copysign(1, value) < 0:
        return "-0"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def table_text(rows, verbose):
    out, section = [], None
    for r in rows:
        if r["detail"] and not verbose:
            continue
        if r["section"] != section:
            section = r["section"]
            out.append("== %s" % section)
        value = cell(r["value"])
        if value == "":
            out.append("  %s" % r["label"])
            continue
        unit = "" if r["unit"] in ("ratio", "count", "state", "-") else r["unit"]
        target = "" if r["target"] == "-" else r["target"]
        judged = "" if r["verdict"] == "-" else r["verdict"]
        out.append("  %-48s %13s %-3s %-8s %s"
                   % (r["label"], value, unit, target, judged))
    return "".join(line + "\n" for line in out)


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
    t.ratio(s, "d/b' clamp (rewrites)", "set.d", "set.b2", "<= 1.25")
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
    t.ratio(s, "ZEROCOPY ours/none", "zc.c", "zc.a", "<= 1.05")
    t.ratio(s, "ZEROCOPY ours/empty", "zc.c", "zc.b")
    s = "4. socket()+close() ns/call"
    t.median(s, "TCP: no program", "sock.a", "ns")
    t.median(s, "TCP: empty sock_create", "sock.b", "ns")
    t.median(s, "TCP: ours (deny rules, mark, priority)", "sock.c", "ns")
    t.median(s, "UDP: no program", "usock.a", "ns")
    t.median(s, "UDP: empty sock_create", "usock.b", "ns")
    t.median(s, "UDP: ours", "usock.c", "ns")
    t.ratio(s, "TCP ours/empty", "sock.c", "sock.b", "<= 1.10")
    t.ratio(s, "UDP ours/empty", "usock.c", "usock.b", "<= 1.10")
    t.ratio(s, "TCP empty/none", "sock.b", "sock.a")
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
            for st in ("none", "setonly", "restricted")}

    def key_of(state, key):
        m = re.match(r".*%s=([a-z]*)" % re.escape(key), keys[state])
        return m.group(1) if m else ""

    s = "6. host impact: calls in a cgroup with NO program, ns/call"
    t.row(s, "keys, nothing of ours: " + keys["none"], "", "-")
    t.row(s, "keys, setonly elsewhere: " + keys["setonly"], "", "-")
    t.row(s, "keys, restricted elsewhere: " + keys["restricted"], "", "-")
    t.row(s, "getsockopt key, setonly attached elsewhere",
          key_of("setonly", "getsockopt"), "state", "== off")
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


# ---- 1: hook latency --------------------------------------------------------


def strace_lines(raw):
    """Which system calls one prestart makes, by count (bpf() by command),
    from the strace -f runs: a summary line and the ten most made."""
    if not raw.exists("strace.0"):
        return []
    counts, calls, btf = {}, 0, 0
    for i in range(STRACE_RUNS):
        for line in raw.text("strace.%d" % i).splitlines():
            f = line.split()
            # "PID name(args) = R"
            if len(f) > 1 and re.match(r"[a-z_0-9]+\(", f[1]):
                name = f[1].split("(", 1)[0]
                if name == "bpf":
                    cmd = re.sub(r"^bpf\(BPF_", "", f[1]).split(",", 1)[0]
                    name = "bpf " + cmd
                counts[name] = counts.get(name, 0) + 1
                calls += 1
            if "/sys/kernel/btf/vmlinux" in line:
                btf += 1
    per_run = sorted(((n // STRACE_RUNS, name) for name, n in counts.items()),
                     reverse=True)[:10]
    return ["%d syscalls; vmlinux BTF opened %d time(s)"
            % (calls // STRACE_RUNS, btf // STRACE_RUNS),
            ", ".join("%s x%d" % (name, n) for n, name in per_run)]


def perf_rows(raw, name):
    """(percent, what) of the hook's lines in a perf report: DSO for
    perf.dso (--sort comm,dso), symbol for perf.sym (--sort comm,sym)."""
    comm, what = (1, 2) if name == "perf.dso" else (2, 4)
    rows = []
    for line in raw.text(name).splitlines():
        f = line.split()
        if len(f) > what and f[comm] == HOOK_COMM:
            rows.append((float(f[0].rstrip("%")), f[what]))
    return rows


def perf_lines(raw):
    """Where prestart+poststop's CPU time goes, as shares of the hook
    process's samples: self time by DSO, the bpf() path, the rest."""
    dso = perf_rows(raw, "perf.dso")
    total = sum(p for p, _ in dso)
    if not total:
        return []
    # A name can stand twice, the kernel's bpf_prog_load and libbpf's: the
    # report is sorted by share, the first line is the larger one.
    p = {}
    for pct, sym in perf_rows(raw, "perf.sym"):
        p.setdefault(sym, 100 * pct / total)

    def share(sym):
        return p.get(sym, 0)

    by_dso = ", ".join(
        "%s %.0f%%" % (re.sub(r"-x86-64\.so\.2|\.so\.6", "",
                              name.replace("[", "").replace("]", ""),
                              count=1), 100 * pct / total)
        for pct, name in dso[:4])
    return [
        "by DSO: " + by_dso,
        "bpf() %.0f%%: prog load %.0f%% (verifier %.0f%%, JIT %.0f%%), "
        "BTF load %.0f%%, map create %.0f%%, attach %.1f%%"
        % (share("__x64_sys_bpf"), share("bpf_prog_load"), share("bpf_check"),
           share("bpf_int_jit_compile"), share("btf_new_fd"),
           share("map_create"), share("__cgroup_bpf_attach")),
        "libbpf memcg probe %.0f%%, openat %.0f%%, close %.0f%%, "
        "JSON %.1f%%; perf's BPF events %.0f%% (artifact)"
        % (share("probe_memcg_account"), share("__x64_sys_openat"),
           share("__x64_sys_close"), share("json_tokener_parse_ex"),
           share("perf_event_bpf_event")),
    ]


def report_hook(t):
    raw = t.raw
    s = "1. hook latency, ms"
    runc = {v: raw.ms("runc." + v) for v in ("none", "true", "ours", "shared")}
    t.detail(s, "runc run, no hook (p50)", runc["none"], "ms")
    t.detail(s, "runc run, /bin/true prestart+poststop (p50)", runc["true"],
             "ms")
    t.detail(s, "runc run, ours restricted, fresh (p50)", runc["ours"], "ms")
    t.detail(s, "runc run, ours restricted, shared (p50)", runc["shared"],
             "ms")
    t.row(s, "runc run p50: no hook %.1f, /bin/true %.1f, ours fresh %.1f, "
          "shared %.1f" % tuple(float(runc[v] or 0) for v in
                                ("none", "true", "ours", "shared")), "", "-")
    t.row(s, "runc: ours fresh - /bin/true (paired p50)",
          raw.pair_ms("runc.ours", "runc.true"), "ms", "<= 1")
    t.row(s, "runc: ours shared - /bin/true (paired p50)",
          raw.pair_ms("runc.shared", "runc.true"), "ms", "<= 1")
    t.row(s, "hook alone, fed a saved state (p50 / p99):", "", "-")
    for key, what in (("true2", "/bin/true"), ("cold_pre", "prestart, cold host"),
                      ("pre", "prestart, fresh"),
                      ("shared_pre", "prestart, shared"),
                      ("post", "poststop, fresh")):
        p50, p99 = raw.ms("alone." + key, 50), raw.ms("alone." + key, 99)
        t.detail(s, "hook alone: %s (p50)" % what, p50, "ms")
        t.detail(s, "hook alone: %s (p99)" % what, p99, "ms")
        t.row(s, "  " + what, "%s / %s" % (p50 or "?", p99 or "?"), "ms")
    t.row(s, "prestart fresh - /bin/true (paired p50)",
          raw.pair_ms("alone.pre", "alone.true2"), "ms", "<= 1")
    t.row(s, "prestart shared - /bin/true (paired p50)",
          raw.pair_ms("alone.shared_pre", "alone.true3"), "ms", "<= 1")
    t.row(s, "poststop fresh - /bin/true (paired p50)",
          raw.pair_ms("alone.post", "alone.true2"), "ms")
    t.row(s, "cold - fresh prestart (turning the keys on)",
          raw.pair_ms("alone.cold_pre", "alone.pre"), "ms")
    s = "1b. where a fresh prestart's time goes (ms, paired p50; keys on)"
    t.row(s, "fork+exec+wait of /bin/true", raw.ms("parts.true"), "ms")
    t.row(s, "+ exec of the hook, ld.so, main: --version",
          raw.pair_ms("parts.version", "parts.true"), "ms")
    t.row(s, "+ operator config: validate",
          raw.pair_ms("parts.validate", "parts.version"), "ms")
    t.row(s, "+ state, bundle, policy: prestart, empty policy",
          raw.pair_ms("parts.noop", "parts.validate"), "ms")
    t.row(s, "+ load, verify, attach, record: prestart",
          raw.pair_ms("parts.pre", "parts.noop"), "ms")
    t.row(s, "= prestart", raw.ms("parts.pre"), "ms")
    strace = strace_lines(raw)
    if strace:
        t.row(s, "strace: " + strace[0], "", "-")
        t.row(s, "  " + strace[1], "", "-")
    for line in perf_lines(raw):
        t.row(s, "perf, hook CPU time: " + line, "", "-")


# ---- 8: scale ---------------------------------------------------------------


def memory(raw, label):
    """(programs, maps, memlock bytes, JIT bytes) of the sh_* programs
    loaded and the maps they use, each counted once."""
    progs = [p for p in raw.json("mem.%s.progs" % label)
             if (p.get("name") or "").startswith("sh_")]
    ids = {i for p in progs for i in p.get("map_ids") or []}
    maps = [m for m in raw.json("mem.%s.maps" % label) if m["id"] in ids]
    return (len(progs), len(maps),
            sum(x.get("bytes_memlock") or 0 for x in progs + maps),
            sum(p.get("bytes_jited") or 0 for p in progs))


SCALE = "8. scale: N policed containers (one sleeping process each)"


def scale_rows(t, size, base, mem):
    raw, s, k = t.raw, SCALE, "scale.%d." % size
    pre50, pre99 = raw.ms(k + "pre", 50), raw.ms(k + "pre", 99)
    post50, post99 = raw.ms(k + "post", 50), raw.ms(k + "post", 99)
    true50 = raw.ms(k + "true", 50)
    progs, maps = mem[0] - base[0], mem[1] - base[1]
    t.detail(s, "N=%d: prestart p50" % size, pre50, "ms")
    t.detail(s, "N=%d: prestart p99" % size, pre99, "ms")
    t.detail(s, "N=%d: poststop p50" % size, post50, "ms")
    t.detail(s, "N=%d: poststop p99" % size, post99, "ms")
    t.detail(s, "N=%d: /bin/true p50" % size, true50, "ms")
    t.detail(s, "N=%d: programs of ours loaded" % size, str(progs), "count")
    t.detail(s, "N=%d: maps of ours loaded" % size, str(maps), "count")
    t.detail(s, "N=%d: JIT code per container" % size,
             "%.2f" % ((mem[3] - base[3]) / size / 1024), "KiB")
    t.row(s, "N=%-5s prestart %s/%s, poststop %s/%s, true %s ms; %d progs "
          "%d maps" % (size, pre50, pre99, post50, post99, true50, progs,
                       maps), "", "-")
    t.row(s, "  N=%d: memlock per container (progs+maps)" % size,
          "%.2f" % ((mem[2] - base[2]) / size / 1024), "KiB",
          "<= 32" if size >= 1000 else "-")


def scale_ratio(t, what, p, first, last):
    """The p-th percentile of WHAT (pre or post) at N=LAST over N=FIRST."""
    raw = t.raw
    num = raw.stat("scale.%d.%s" % (last, what), p)
    den = raw.stat("scale.%d.%s" % (first, what), p)
    t.row(SCALE, "%s p%s, N=%s / N=%s %9s / %s ms"
          % (what, p, last, first, fmt("%.3f", num and num / 1e6),
             fmt("%.3f", den and den / 1e6)), ratio(num, den), "ratio",
          "<= 1.20")


def report_scale(t, sizes, complete):
    """Rows for every size measured to the end; the ratios between sizes
    when all were."""
    raw = t.raw
    base = memory(raw, "base")
    for size in sizes:
        if not raw.exists("mem.%d.maps" % size):
            break
        scale_rows(t, size, base, memory(raw, str(size)))
    if not complete:
        return
    first, last = sizes[0], sizes[-1]
    for what, p in (("pre", 50), ("pre", 99), ("post", 50), ("post", 99)):
        scale_ratio(t, what, p, first, last)
    # N=1 is the only size whose prestart loads its own copy.
    if len(sizes) >= 3:
        scale_ratio(t, "pre", 50, sizes[1], last)


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
