# SPDX-License-Identifier: GPL-2.0-only
"""The Targets table (start cost), for bench/report.py: each target with
its value from this run, met or missed, and each target in ms also as a
multiple of this run's fork+exec of /bin/true.

Absolute times move with the machine. The multiple's target is the ms
target over REF_TRUE_MS, the slowest fork+exec of /bin/true seen on this
kind of machine (1.01 ms, a fresh 2-core machine): a value that
meets it meets the ms target on any machine whose /bin/true is at most
that slow, where our cost moves with the machine as /bin/true's does.
Standard library only, for /usr/bin/python3.
"""

from benchstat import middle

REF_TRUE_MS = 1.0
ALONE = ("cold", "coldpl", "fallback", "shared", "preloaded", "plshared",
         "generic", "noop", "noopdisk")
DATAPATH = ("2.", "3.", "4.", "5.", "6.", "7.")


def true_ms(raw):
    """The median fork+exec+wait of /bin/true over every round of
    benchmark 1 (each variant runs its own), in ms; None without it."""
    v = sorted(x for a in ALONE for x in raw.values("alone.%s.true" % a))
    return middle(v) / 1e6 if v else None


def summary_value(t, label_start):
    """The value of the summary row whose label starts so, or None."""
    for label, r in t.summaries:
        if label.startswith(label_start):
            return r["value"]
    return None


def keys_default(raw):
    """"on" when a preload of examples/config.json, which does not set
    keep_keys, kept the keys on (raw/keys.default), else "off"."""
    return "on" if raw.text("keys.default").strip() == "on" else "off"


def ms_row(t, s, label, value, target, ref):
    """The target in ms, then the same as a multiple of /bin/true."""
    t.row(s, label, value, "ms", "<= %s" % target)
    if value in ("", None) or not ref:
        return
    t.row(s, "  as x /bin/true (target: %s ms / %.1f ms)"
          % (target, REF_TRUE_MS),
          "%.3f" % (float(value) / ref), "x",
          "<= %.2f" % (float(target) / REF_TRUE_MS))


def runtime_rows(t, s, ref):
    raw = t.raw
    if not raw.values("rt.runc_true"):
        return
    kept = keys_default(raw) == "on"
    t.row(s, "keep_keys when the config does not say", keys_default(raw),
          "state")
    # With keep_keys on (the default) a quiet host has its keys kept on
    # by preload: the kernel's state of the busy host (bench 6 checks
    # that preload turns each one on).
    quiet = "ours" if kept else "quiet"
    ms_row(t, s, "runc run preloaded, quiet host%s - /bin/true"
           % (", keys kept" if kept else ""),
           raw.pair_ms("rt.runc_%s" % quiet, "rt.runc_true"), "1.0", ref)
    t.row(s, "  quiet host, keep_keys off (keys off) - /bin/true",
          raw.pair_ms("rt.runc_quiet", "rt.runc_true"), "ms")
    ms_row(t, s, "runc run preloaded, busy host - /bin/true",
           raw.pair_ms("rt.runc_ours", "rt.runc_true"), "0.5", ref)
    as_run(t, s, "ours")
    # A policy not preloaded starts on the generic programs (no verifier);
    # the fallback load is what a host without them pays.
    ms_row(t, s, "runc run, policy not preloaded - /bin/true",
           raw.pair_ms("rt.runc_generic", "rt.runc_true"), "1.0", ref)
    as_run(t, s, "generic")
    t.row(s, "  no pins at all (fallback: verifies) - /bin/true",
          raw.pair_ms("rt.runc_fresh", "rt.runc_true"), "ms")
    ms_row(t, s, "runc run, nothing to attach - /bin/true",
           raw.pair_ms("rt.runc_noop", "rt.runc_true"), "0.2", ref)
    as_run(t, s, "noop")
    # crun fails a hook that exits before it wrote the state, as
    # /bin/true may: its baseline is readstate, which reads it.
    if not raw.values("rt.crun_read"):
        return
    for v, what, target in (("ours", "preloaded", "0.5"),
                            ("generic", "policy not preloaded", "1.0"),
                            ("noop", "nothing to attach", "0.2")):
        ms_row(t, s, "crun run, %s - readstate hooks" % what,
               raw.pair_ms("rt.crun_%s" % v, "rt.crun_read"), target, ref)


def as_run(t, s, v):
    """The same through runc without the two cgroup moves before the run,
    as a runtime runs it (its first cgroup attach may wait for an RCU
    grace period: wider, not judged)."""
    t.row(s, "  as a runtime runs it (no cgroup moves first)",
          t.raw.pair_ms("rt.runc_%s_nw" % v, "rt.runc_true_nw"), "ms")


# The generic programs next to the specialised copies, each over the
# same baseline, as (what, generic, specialised, baseline, target): the
# targets of benchmarks 2-4, which the generic programs keep too.
GENERIC_DATAPATH = (
    ("setsockopt, option without rule", "set.g", "set.c", "set.b", "1.10"),
    ("setsockopt, SO_RCVBUF clamped", "set.gd", "set.d", "set.b2", "1.25"),
    ("getsockopt, option without rule", "get.g", "get.c", "get.b", "1.10"),
    ("getsockopt, SO_MARK denied", "get.gd", "get.d", "get.b2", "1.25"),
    ("TCP_ZEROCOPY_RECEIVE / no program", "zc.g", "zc.c", "zc.a", "1.05"),
    ("socket()+close() TCP / empty", "sock.g", "sock.c", "sock.b", "1.10"),
    ("socket()+close() UDP / empty", "usock.g", "usock.c", "usock.b",
     "1.10"),
)


def generic_rows(t, s, ref, benchmarks):
    """A start path that never verifies: a policy not preloaded starts on
    the generic programs; their start and datapath beside the specialised
    copies'."""
    raw = t.raw
    if "hook" in benchmarks and raw.values("alone.generic.pre"):
        ms_row(t, s, "prestart alone, policy not preloaded (generic) - "
               "/bin/true", raw.pair_ms("alone.generic.pre",
                                        "alone.generic.true"), "1.0", ref)
        t.row(s, "  specialised copy preloaded - /bin/true",
              raw.pair_ms("alone.preloaded.pre", "alone.preloaded.true"),
              "ms")
    if "datapath" not in benchmarks:
        return
    for what, gen, spec, base, target in GENERIC_DATAPATH:
        if not raw.values(gen):
            continue
        t.row(s, "generic: %s" % what, raw.pair_ratio(gen, base), "ratio",
              "<= %s" % target)
        t.row(s, "  specialised, the same", raw.pair_ratio(spec, base),
              "ratio")


def report_targets(t, benchmarks):
    raw = t.raw
    ref = true_ms(raw)
    s = "targets: start cost (p50, this run; fork+exec of /bin/true %s ms)" % (
        "%.3f" % ref if ref else "?")
    if "hook" in benchmarks:
        runtime_rows(t, s, ref)
        for v, where in (("noopdisk", "on %s" % (
                raw.text("disk.fstype").strip() or "disk")),
                         ("noop", "on tmpfs")):
            ms_row(t, s, "prestart, nothing to attach, state %s - /bin/true"
                   % where,
                   raw.pair_ms("alone.%s.pre" % v, "alone.%s.true" % v),
                   "0.2", ref)
    generic_rows(t, s, ref, benchmarks)
    kmem = summary_value(t, "kernel memory per container")
    if kmem is not None:
        t.row(s, "kernel memory per container, largest N", kmem,
              "KiB", "<= 8")
    judged = [r for r in t.rows if r["target"] != "-"
              and r["section"].startswith(DATAPATH)]
    if judged and "datapath" in benchmarks:
        met = sum(r["verdict"] == "met" for r in judged)
        t.row(s, "every datapath ratio of benchmarks 2-7: targets met",
              "%d/%d" % (met, len(judged)), "count",
              "== %d/%d" % (len(judged), len(judged)))
    if "host" in benchmarks:
        raw = t.raw
        for what, name in (("set", "setsockopt"), ("get", "getsockopt"),
                           ("sock", "socket()")):
            t.row(s, "keep_keys, host-wide: %s, unpoliced cgroup, kept/off"
                  % name, raw.pair_ratio("host.kept." + what,
                                         "host.none." + what), "ratio")
