# SPDX-License-Identifier: GPL-2.0-only
"""The benchmarks' statistics and table, for bench/report.py and
bench/report_start.py: Raw reads what bench/run.sh measured (one value a
line, one line a trial or round), Table collects the rows, table_text
prints them. Standard library only, for /usr/bin/python3.
"""

import json
import math
import os

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

    def pair_ci(self, a, b):
        """A distribution-free 95% confidence interval of that median,
        "lo..hi" in ms (the order statistics n/2 -+ 0.98 sqrt(n) of the
        differences), or "" for fewer than 10 rounds. A runtime's own
        jitter can make it wider than a target."""
        d = sorted(x - y for x, y in self.pairs(a, b))
        n = len(d)
        if n < 10:
            return ""
        k = max(int((n - 1.96 * math.sqrt(n)) / 2), 0)
        return "%.2f..%.2f" % (d[k] / 1e6, d[n - 1 - k] / 1e6)

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
        self.summaries = []  # (label, row) for summary()

    def row(self, section, label, value, unit, target="-", detail=False,
            summary=None):
        """One line: VALUE is text as the table shows it ("" for a line
        that is only a label). Smoke runs judge nothing. SUMMARY, a
        shorter label, also lists the row among the run's summary."""
        v = number(value)
        judged = not self.smoke and target != "-" and v is not None
        self.rows.append({
            "section": section, "label": label, "value": v, "unit": unit,
            "target": target,
            "verdict": verdict(v, target) if judged else "-",
            "detail": detail,
        })
        if summary:
            self.summaries.append((summary, self.rows[-1]))

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
        out.append("  %-56s %9s %-3s %-8s %s"
                   % (r["label"], value, unit, target, judged))
    return "".join(line + "\n" for line in out)


def summary(t, section):
    """The rows marked with a summary label, again, under SECTION (with
    "summary": true in results.json)."""
    for label, r in list(t.summaries):
        t.rows.append(dict(r, section=section, label=label, detail=False,
                           summary=True))
