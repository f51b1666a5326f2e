# SPDX-License-Identifier: GPL-2.0-only
"""What a container start costs, for bench/report.py: the rows of
benchmarks 1 (the hook alone), 1a (runc run, crun run), 1b (where the
hook's time goes), 8 (scale) and 9 (kernel memory per container), from
what bench/start.sh measured into raw/:

  alone.VARIANT.STEP      the hook alone (VARIANT: cold, fallback, shared,
                          preloaded, plshared, noop; STEP: true, pre, post)
  rt.KEY                  runc/crun run (runc_none, runc_true, runc_read,
                          runc_ours, runc_noop, runc_fresh, runc_shared,
                          crun_none, crun_read, crun_ours, crun_noop,
                          crun_generic; runc_V_nw: runc_V without the
                          cgroup moves before it)
  parts.KEY               --version, validate, empty-policy and full
                          prestarts
  steps.VARIANT           the hook's own step timings (stderr lines of
                          OCI_SOCKOPT_HOOK_TIMING=1)
  strace.VARIANT.N        strace -f of one prestart
  perf.dso, perf.sym      perf report of fallback prestart+poststop rounds
  perf.NAME.stacks/.runs  perf script of preloaded prestart+poststop
                          rounds (NAME preloaded) and of /bin/true's (true)
  scale.N.STEP            benchmark 8 at N containers
  mem.N.progs/.maps       bpftool -j prog/map show at N
  meminfo.STATE, slabinfo.STATE
                          /proc/meminfo and /proc/slabinfo: bare (the
                          largest N's cgroups and sleepers, nothing
                          attached), policed (all N attached), released
  kmem.n                  "N PROGRAMS": containers attached at policed,
                          programs attached to one of them
  cpus.possible           the kernel's possible CPUs (per-CPU storage)
Standard library only, for /usr/bin/python3.
"""

import re

from benchstat import fmt, ratio

# The hook's comm in perf's reports: comm is cut to 15 characters.
HOOK_COMM = "oci-sockopt-hook"[:15]
STRACE_RUNS = 3
def strace_lines(raw, variant):
    """Which system calls one prestart makes, by count (bpf() by command),
    from the strace -f runs: a summary line and the ten most made."""
    if not raw.exists("strace.%s.0" % variant):
        return []
    counts, calls, btf = {}, 0, 0
    for i in range(STRACE_RUNS):
        for line in raw.text("strace.%s.%d" % (variant, i)).splitlines():
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



# Where a sample of a process's CPU goes, first match wins: the leaf
# symbol for user code (a static binary's user stack has no frame
# pointers), the kernel's frames below a system call or fault.
STEP_LEAF = (
    ("start-up: glibc's CPU and cache probes (cpuid)",
     ("intel_check_word", "handle_intel", "get_common_indices",
      "get_common_cache_info", "get_extended_indices", "update_active",
      "init_cpu_features", "init_cacheinfo", "dl_init_cacheinfo")),
    ("start-up: relocation and libc set-up",
     ("_dl_relocate_static_pie", "__libc_setup_tls", "_dl_aux_init",
      "__libc_init_secure", "_dl_non_dynamic_init", "__tunables_init",
      "__libc_start_main_impl", "_dl_start", "_dl_start_final")),
)
STEP_STACK = (
    ("exec (kernel)", ("bprm_execve", "do_execveat_common")),
    ("exit (kernel)", ("do_exit", "do_group_exit")),
    ("page faults", ("asm_exc_page_fault",)),
)


def sample_step(frames):
    """frames: (symbol, dso) leaf first. The step the sample is in."""
    leaf = frames[0][0] if frames else ""
    for step, syms in STEP_LEAF:
        if leaf.split(".", 1)[0] in syms:
            return step
    names = [f[0] for f in frames]
    for step, syms in STEP_STACK:
        if any(n in syms for n in names):
            return step
    for n in names:
        m = re.match(r"__(?:x64|do)_sys_(\w+)", n)
        if m:
            return "system call " + m.group(1)
    if frames and "kernel" in frames[0][1]:
        return "kernel, other (interrupts)"
    if frames and "ld-linux" in frames[0][1]:
        return "start-up: dynamic loading (ld.so)"
    return "user code (ours, libraries)"


def perf_steps(raw, name, comm):
    """({step: CPU ms per run}, CPU ms per run) of comm's samples in
    raw/perf.NAME.stacks (perf script -F comm,ip,sym,dso), or None."""
    if not raw.exists("perf.%s.stacks" % name):
        return None
    hz, runs = (int(x) for x in raw.text("perf.%s.runs" % name).split())
    steps, frames, who = {}, [], None

    def flush():
        if who == comm:
            k = sample_step(frames)
            steps[k] = steps.get(k, 0) + 1

    # A sample: its comm (padded on the left), then one frame a line,
    # each after a tab: "ADDRESS SYMBOL (DSO)".
    for line in raw.text("perf.%s.stacks" % name).splitlines():
        if not line.strip():
            continue
        if not line.startswith("\t"):
            flush()
            who, frames = line.split()[0], []
            continue
        f = line.split()
        if len(f) >= 3:
            frames.append((f[1].split("+", 1)[0], f[-1]))
    flush()
    per_ms = 1000.0 / hz / runs
    total = sum(steps.values())
    if not total:
        return None
    return {k: v * per_ms for k, v in steps.items()}, total * per_ms


def perf_step_lines(raw):
    """The preloaded prestart+poststop's CPU per run by step beside
    /bin/true's: what each step adds."""
    hook = perf_steps(raw, "preloaded", HOOK_COMM)
    true = perf_steps(raw, "true", "true")
    if not hook or not true:
        return []
    (h, ht), (b, bt) = hook, true
    lines = ["CPU per run (prestart and poststop alike), ms: the hook %.3f, "
             "/bin/true %.3f" % (ht, bt)]
    for k in sorted(set(h) | set(b), key=lambda k: -(h.get(k, 0))):
        if max(h.get(k, 0), b.get(k, 0)) < 0.005:
            continue
        lines.append("  %-48s %5.1f%% %.3f ms, /bin/true %.3f ms" % (
            k, 100 * h.get(k, 0) / ht, h.get(k, 0), b.get(k, 0)))
    return lines


# ---- 1: the hook alone -------------------------------------------------------

ALONE = (("cold", "cold host (turns the static keys on)"),
         ("coldpl", "cold host, preloaded"),
         ("fallback", "fallback: no pins, no other container"),
         ("shared", "shared: no pins, another container"),
         ("preloaded", "preloaded: first container of it"),
         ("plshared", "preloaded, another container"),
         ("generic", "not preloaded: the generic programs"),
         ("noop", "nothing to attach"),
         ("noopdisk", "nothing to attach, state dir on disk"))


def report_alone(t):
    raw = t.raw
    s = "1. the hook alone, fed a saved state (ms; the static keys on, except in 'cold')"
    t.row(s, "p50 / p99 of each command:", "", "-")
    for v, what in (("fallback", "/bin/true"),) + ALONE:
        for step, name in (("pre", "prestart"), ("post", "poststop")):
            key = "alone.%s.%s" % (v, step)
            if what == "/bin/true":
                key, name = "alone.fallback.true", "/bin/true"
            p50, p99 = raw.ms(key, 50), raw.ms(key, 99)
            t.detail(s, "%s, %s (p50)" % (name, what), p50, "ms")
            t.detail(s, "%s, %s (p99)" % (name, what), p99, "ms")
            label = name if what == "/bin/true" else "%s, %s" % (name, what)
            t.row(s, "  " + label, "%s / %s" % (p50 or "?", p99 or "?"), "ms")
            if what == "/bin/true":
                break
    t.row(s, "paired p50 differences, each against the /bin/true of its "
          "round [95% CI]:", "", "-")

    def minus_true(v, step):
        return raw.pair_ms("alone.%s.%s" % (v, step), "alone.%s.true" % v)

    def ci(v):
        return "[%s]" % raw.pair_ci("alone.%s.pre" % v, "alone.%s.true" % v)

    t.row(s, "(a) prestart, nothing to attach - /bin/true " + ci("noop"),
          minus_true("noop", "pre"), "ms", "<= 0.2",
          summary="prestart, nothing to attach - /bin/true")
    t.row(s, "(a) the same, state dir on %s - /bin/true %s"
          % (raw.text("disk.fstype").strip() or "disk", ci("noopdisk")),
          minus_true("noopdisk", "pre"), "ms", "<= 0.2",
          summary="prestart, nothing to attach, state on disk - /bin/true")
    t.row(s, "(b) prestart, preloaded, first - /bin/true " + ci("preloaded"),
          minus_true("preloaded", "pre"), "ms", "<= 0.5",
          summary="prestart, first of a preloaded policy - /bin/true")
    t.row(s, "(c) prestart, fallback (no pins) - /bin/true " + ci("fallback"),
          minus_true("fallback", "pre"), "ms", "<= 1.0",
          summary="prestart without preload (fallback) - /bin/true")
    t.row(s, "(d) prestart, shared, preloaded - /bin/true",
          minus_true("plshared", "pre"), "ms")
    t.row(s, "(d) prestart, shared, no pins - /bin/true",
          minus_true("shared", "pre"), "ms")
    t.row(s, "(e) prestart, not preloaded (generic programs) - /bin/true "
          + ci("generic"), minus_true("generic", "pre"), "ms")
    t.row(s, "    prestart, cold host - /bin/true",
          minus_true("cold", "pre"), "ms")
    t.row(s, "    prestart, cold host, preloaded - /bin/true",
          minus_true("coldpl", "pre"), "ms")
    # The static keys alone: the same preloaded prestart and poststop,
    # keys off against keys on, each against its own round's /bin/true.
    for step, name in (("pre", "prestart"), ("post", "poststop")):
        t.row(s, "    %s, static keys off - on (preloaded)" % name,
              raw.pair_ms("alone.coldpl.%s" % step,
                          "alone.preloaded.%s" % step), "ms")
    for v, what in (("noop", "nothing to attach"),
                    ("noopdisk", "nothing to attach, state on disk"),
                    ("preloaded", "preloaded, first"),
                    ("fallback", "fallback (no pins)"),
                    ("plshared", "shared, preloaded"),
                    ("generic", "not preloaded (generic)"),
                    ("shared", "shared, no pins"), ("cold", "cold host"),
                    ("coldpl", "cold host, preloaded")):
        t.row(s, "    poststop, %s - /bin/true" % what,
              minus_true(v, "post"), "ms")


# ---- 1a: through the runtimes ------------------------------------------------


RUNC = ("none", "true", "read", "ours", "quiet", "noop", "fresh", "generic",
        "shared", "true_nw", "ours_nw", "noop_nw", "generic_nw")
CRUN = ("none", "read", "ours", "noop", "generic")
RT_NAMES = {"none": "no hooks", "true": "/bin/true", "read": "readstate",
            "ours": "ours preloaded",
            "quiet": "ours preloaded, quiet host (keys off)",
            "noop": "ours, nothing to attach",
            "fresh": "ours fallback", "shared": "ours shared, no pins",
            "generic": "ours, policy not preloaded",
            "true_nw": "/bin/true, no cgroup moves first",
            "ours_nw": "ours preloaded, no cgroup moves first",
            "noop_nw": "ours, nothing to attach, no cgroup moves first",
            "generic_nw": "ours, policy not preloaded, no cgroup moves first"}
# The differences shown, as (runtime, variant, baseline, target):
# /bin/true for runc, as the millisecond targets have it; readstate for
# crun, which fails a hook that exits before it has written the state
# (EPIPE), as /bin/true may.
RT_DIFFS = (("runc", "ours", "true", "<= 1.0"), ("runc", "quiet", "true", "-"),
            ("runc", "quiet", "ours", "-"),
            ("runc", "generic", "true", "<= 1.0"), ("runc", "noop", "true", "-"),
            ("runc", "fresh", "true", "-"), ("runc", "shared", "true", "-"),
            ("runc", "true", "none", "-"), ("runc", "read", "true", "-"),
            ("runc", "ours", "read", "-"),
            ("runc", "ours_nw", "true_nw", "-"),
            ("runc", "noop_nw", "true_nw", "-"),
            ("runc", "generic_nw", "true_nw", "-"),
            ("crun", "ours", "read", "<= 1.0"), ("crun", "noop", "read", "-"),
            ("crun", "generic", "read", "-"), ("crun", "read", "none", "-"))


def report_runtimes(t):
    raw = t.raw
    s = ("1a. runc run / crun run of a container that exits at once (ms; "
         "paired p50 and its 95% CI)")
    crun = bool(raw.values("rt.crun_none"))
    keys = raw.text("rt.keys.quiet").strip()
    if keys:
        t.row(s, "keys before the quiet-host rounds, nothing of ours "
              "attached: " + keys, "", "-")
        for key in ("sock_create", "setsockopt", "getsockopt"):
            m = re.match(r".*%s=([a-z]*)" % key, keys)
            t.row(s, "%s key, quiet host" % key, m.group(1) if m else "",
                  "state", "== off")
    for rt, variants in (("runc", RUNC), ("crun", CRUN)):
        if rt == "crun" and not crun:
            t.row(s, "crun: not measured (no crun, or no v1 hugetlb mount)",
                  "", "-")
            continue
        t.row(s, "%s p50: %s" % (rt, ", ".join(
            "%s %.1f" % (RT_NAMES[v], float(raw.ms("rt.%s_%s" % (rt, v)) or 0))
            for v in variants)), "", "-")
        for v in variants:
            t.detail(s, "%s run, %s (p50)" % (rt, RT_NAMES[v]),
                     raw.ms("rt.%s_%s" % (rt, v)), "ms")
    for rt, v, base, target in RT_DIFFS:
        if rt == "crun" and not crun:
            continue
        a, b = "rt.%s_%s" % (rt, v), "rt.%s_%s" % (rt, base)
        label = "%s: %s - %s" % (rt, RT_NAMES[v], RT_NAMES[base])
        t.row(s, "%s [%s]" % (label, raw.pair_ci(a, b)), raw.pair_ms(a, b),
              "ms", target, summary=None if target == "-" else
              "%s run, %s - %s hooks" % (
                  rt, "policy not preloaded" if v == "generic" else
                  "ours (preloaded)", RT_NAMES[base]))


# ---- 1b: where the time goes -------------------------------------------------


def step_lines(raw, variant):
    """The hook's own step timings (us, median over runs) of prestart and
    poststop in VARIANT, one line each, steps in the hook's order."""
    steps = {}
    for line in raw.text("steps." + variant).splitlines():
        m = re.match(r"timing: (\w+): (.*) \(us\)$", line)
        if not m:
            continue
        words = m.group(2).split()
        cmd = steps.setdefault(m.group(1), {})
        for name, value in zip(words[::2], words[1::2]):
            cmd.setdefault(name, []).append(float(value))
    out = []
    for cmd, by_step in steps.items():
        out.append("%s: %s" % (cmd, " ".join(
            "%s %.0f" % (name, median_of(v)) for name, v in by_step.items())))
    return out


def median_of(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def report_parts(t):
    raw = t.raw
    s = "1b. where the hook's time goes (ms, paired p50; keys on)"
    t.row(s, "fork+exec+wait of /bin/true", raw.ms("parts.true"), "ms")
    t.row(s, "+ exec of the hook and its start-up: --version",
          raw.pair_ms("parts.version", "parts.true"), "ms")
    t.row(s, "+ operator config: validate",
          raw.pair_ms("parts.validate", "parts.version"), "ms")
    t.row(s, "+ state, bundle, policy: prestart, empty policy",
          raw.pair_ms("parts.noop", "parts.validate"), "ms")
    t.row(s, "+ find pins, attach, record: preloaded prestart",
          raw.pair_ms("parts.plpre", "parts.noop"), "ms")
    t.row(s, "+ load, verify, attach, record: fallback prestart",
          raw.pair_ms("parts.pre", "parts.noop"), "ms")
    t.row(s, "= preloaded prestart", raw.ms("parts.plpre"), "ms")
    t.row(s, "= fallback prestart", raw.ms("parts.pre"), "ms")
    for v in ("noop", "preloaded", "generic", "fallback"):
        for line in step_lines(raw, v):
            t.row(s, "hook's steps, %s, us p50: %s" % (v, line), "", "-")
    for v in ("preloaded", "fallback"):
        strace = strace_lines(raw, v)
        if strace:
            t.row(s, "strace, %s prestart: %s" % (v, strace[0]), "", "-")
            t.row(s, "  " + strace[1], "", "-")
    for line in perf_lines(raw):
        t.row(s, "perf, fallback prestart+poststop CPU: " + line, "", "-")
    for line in perf_step_lines(raw):
        t.row(s, "perf, preloaded: " + line, "", "-")


def report_hook(t):
    report_alone(t)
    report_runtimes(t)
    report_parts(t)


# ---- 8: scale ----------------------------------------------------------------


def memory(raw, label):
    """(programs, maps, memlock bytes, JIT bytes) of the programs attached
    to the probe (mem.LABEL.attached) and the maps they use, each counted
    once: the copies every container of the policy shares."""
    attached = {p.get("id") for p in raw.json("mem.%s.attached" % label)}
    progs = [p for p in raw.json("mem.%s.progs" % label)
             if p.get("id") in attached]
    ids = {i for p in progs for i in p.get("map_ids") or []}
    maps = [m for m in raw.json("mem.%s.maps" % label) if m["id"] in ids]
    return (len(progs), len(maps),
            sum(x.get("bytes_memlock") or 0 for x in progs + maps),
            sum(p.get("bytes_jited") or 0 for p in progs))


SCALE = "8. scale: N policed containers (preloaded; one sleeping process each)"


def scale_rows(t, size, mem):
    raw, s, k = t.raw, SCALE, "scale.%d." % size
    pre50, pre99 = raw.ms(k + "pre", 50), raw.ms(k + "pre", 99)
    post50, post99 = raw.ms(k + "post", 50), raw.ms(k + "post", 99)
    true50 = raw.ms(k + "true", 50)
    t.detail(s, "N=%d: prestart p50" % size, pre50, "ms")
    t.detail(s, "N=%d: prestart p99" % size, pre99, "ms")
    t.detail(s, "N=%d: poststop p50" % size, post50, "ms")
    t.detail(s, "N=%d: poststop p99" % size, post99, "ms")
    t.detail(s, "N=%d: /bin/true p50" % size, true50, "ms")
    t.detail(s, "N=%d: programs of ours loaded" % size, str(mem[0]), "count")
    t.detail(s, "N=%d: maps of ours loaded" % size, str(mem[1]), "count")
    t.row(s, "N=%-5s prestart %s/%s, poststop %s/%s, true %s ms; %d progs "
          "%d maps shared" % (size, pre50, pre99, post50, post99, true50,
                              mem[0], mem[1]), "", "-")
    t.row(s, "  N=%d: prestart - /bin/true (paired p50)" % size,
          raw.pair_ms(k + "pre", k + "true"), "ms")
    t.detail(s, "N=%d: memlock of our programs+maps (all, shared)" % size,
             "%.1f" % (mem[2] / 1024), "KiB")


def scale_ratio(t, what, p, first, last, summary=None):
    """The p-th percentile of WHAT (pre or post) at N=LAST over N=FIRST."""
    raw = t.raw
    num = raw.stat("scale.%d.%s" % (last, what), p)
    den = raw.stat("scale.%d.%s" % (first, what), p)
    t.row(SCALE, "%s p%s, N=%s / N=%s %9s / %s ms"
          % (what, p, last, first, fmt("%.3f", num and num / 1e6),
             fmt("%.3f", den and den / 1e6)), ratio(num, den), "ratio",
          "<= 1.20", summary=summary)


def report_scale(t, sizes, complete):
    """Rows for every size measured to the end; the ratios between sizes
    when all were."""
    raw = t.raw
    for size in sizes:
        if not raw.exists("mem.%d.maps" % size):
            break
        scale_rows(t, size, memory(raw, str(size)))
    if not complete:
        return
    first, last = sizes[0], sizes[-1]
    for what, p in (("pre", 50), ("pre", 99), ("post", 50), ("post", 99)):
        scale_ratio(t, what, p, first, last, summary=(
            "poststop p50 at N=%d / at N=%d" % (last, first)
            if (what, p) == ("post", 50) else None))
    report_kmem(t, memory(raw, str(last)))


# ---- 9: kernel memory per container ------------------------------------------

# What the kernel holds, from /proc/meminfo: per-CPU allocations (the
# per-CPU cgroup storage of every attachment), slab (bpf_prog_list,
# effective arrays, storage structs, the records' inodes and dentries),
# vmalloc (large arrays), the records themselves on the state dir's tmpfs,
# and the stacks and page tables of processes (none of ours stay).
KMEM_FIELDS = ("Percpu", "SUnreclaim", "SReclaimable", "VmallocUsed",
               "Shmem", "KernelStack", "PageTables")
KMEM = "9. kernel memory per container (/proc/meminfo, policed - bare) / N"


def meminfo(raw, state):
    """/proc/meminfo of STATE as {field: bytes}."""
    out = {}
    for line in raw.text("meminfo." + state).splitlines():
        m = re.match(r"(\w+):\s+(\d+)( kB)?$", line)
        if m:
            out[m.group(1)] = int(m.group(2)) * (1024 if m.group(3) else 1)
    return out


def slabinfo(raw, state):
    """/proc/slabinfo of STATE as {cache: (objects, bytes)}: active
    objects, and the bytes of its slabs."""
    out = {}
    for line in raw.text("slabinfo." + state).splitlines():
        f = line.split()
        if len(f) < 15 or f[0].startswith("#") or f[6] != ":":
            continue
        out[f[0]] = (int(f[1]), int(f[14]) * int(f[5]) * 4096)
    return out


def slab_growth(raw, n):
    """The five slab caches that grew most from bare to policed, as
    "cache +objects (+KiB)" per container."""
    bare, pol = slabinfo(raw, "bare"), slabinfo(raw, "policed")
    grown = sorted(((pol[c][1] - bare.get(c, (0, 0))[1],
                     pol[c][0] - bare.get(c, (0, 0))[0], c) for c in pol),
                   reverse=True)[:5]
    return ", ".join("%s %+.1f (%+.2f KiB)" % (c, objs / n, b / n / 1024)
                     for b, objs, c in grown if b > 0)


def possible_cpus(raw):
    """How many CPUs the kernel may bring up (per-CPU memory is
    allocated for each), from cpus.possible ("0-1", "0,2-3")."""
    cpus = 0
    for part in raw.text("cpus.possible").strip().split(","):
        lo, _, hi = part.partition("-")
        if lo.isdigit():
            cpus += int(hi or lo) - int(lo) + 1
    return cpus


def counted_storages(raw, label):
    """(storages, per-CPU bytes) of the per-CPU cgroup storages in our
    counters maps (kmem.storages): each holds its value, rounded up to 8
    bytes, once per possible CPU."""
    value = {m["id"]: m.get("bytes_value") or 0
             for m in raw.json("mem.%s.maps" % label)}
    cpus, n, size = possible_cpus(raw), 0, 0
    for line in raw.text("kmem.storages").splitlines():
        words = line.split()
        if len(words) == 2 and words[1].isdigit():
            entries = int(words[1])
            n += entries
            size += entries * ((value.get(int(words[0]), 0) + 7) // 8 * 8) * cpus
    return n, size


def report_kmem(t, mem):
    raw, s = t.raw, KMEM
    words = raw.text("kmem.n").split()
    if len(words) != 2 or not raw.exists("meminfo.released"):
        return
    n, progs = int(words[0]), int(words[1])
    bare, pol, rel = (meminfo(raw, st) for st in
                      ("bare", "policed", "released"))
    t.row(s, "N=%d containers, %d programs attached to each; bare: the "
          "same cgroups and sleepers, nothing attached, each /proc/PID/stat "
          "read as runc reads its init's" % (n, progs), "", "-")
    storages, percpu = counted_storages(raw, str(n))
    total = returned = 0
    for f in KMEM_FIELDS:
        d = (pol.get(f, 0) - bare.get(f, 0)) / n / 1024
        if f != "SReclaimable":  # release reads /proc too: caches grow
            returned += (pol.get(f, 0) - rel.get(f, 0)) / n / 1024
        t.row(s, "  %s" % f, "%.2f" % d, "KiB")
        if f == "Percpu" and percpu / n / 1024 > d:
            d = percpu / n / 1024
            t.row(s, "  Percpu, counted: %d storages x %d B x %d CPUs / N"
                  % (storages, percpu // max(storages, 1)
                     // max(possible_cpus(raw), 1), possible_cpus(raw)),
                  "%.2f" % d, "KiB")
        total += d
    t.row(s, "all of it, per container", "%.2f" % total, "KiB", "<= 8",
          summary="kernel memory per container at N=%d, all of it" % n)
    t.row(s, "of which reclaimable (SReclaimable: dentries, inodes)",
          "%.2f" % ((pol.get("SReclaimable", 0) - bare.get("SReclaimable", 0))
                    / n / 1024), "KiB")
    t.row(s, "given back at release, caches aside (policed - released)",
          "%.2f" % returned, "KiB")
    if raw.exists("meminfo.bare2"):
        bare2 = meminfo(raw, "bare2")
        t.row(s, "noise floor: the same sum, bare taken again 2 s later, "
              "nothing changed, / N", "%.2f" % sum(
                  (bare2.get(f, 0) - bare.get(f, 0)) / n / 1024
                  for f in KMEM_FIELDS), "KiB")
    growth = slab_growth(raw, n)
    if growth:
        t.row(s, "slab caches grown most, objects per container: " + growth,
              "", "-")
    t.row(s, "information: the %d programs and %d maps every container "
          "shares: memlock %.1f KiB, JIT code %.1f KiB (bpftool; once, not "
          "per attachment)" % (mem[0], mem[1], mem[2] / 1024, mem[3] / 1024),
          "", "-")
