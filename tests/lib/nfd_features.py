#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Reads a Node Feature Discovery feature file as nfd-worker's "local"
source does, and checks what nfd-master and the API server would then do
with its labels.

    nfd_features.py FILE [--now RFC3339] [--allow-ns NS]... [--deny-ns NS]...

NFD's rules (source/local/local.go): files in features.d whose names start
with '.' are skipped, and files larger than 65536 bytes; the content is
split on newlines, each line trimmed; an empty line is skipped; a line
starting with '#' is a comment unless it starts with '# +', a directive:
`expiry-time=RFC3339` (lines after it count only while it is not past),
`no-label`, `no-feature` (one line each); any other directive, or an
expiry time that does not parse, is an error NFD logs. Any other line is
`key=value` (split at the first '='), or `key` alone for "true".

nfd-master (0.13 and later, pkg/nfd-master filterFeatureLabels) drops a
label whose key or value the API server would refuse, and one whose
namespace is denied: kubernetes.io and *.kubernetes.io always (but for
feature.node.kubernetes.io, profile.node.kubernetes.io and their
sub-namespaces), and what denyLabelNs lists (--deny-ns here; "*.example.com"
denies its sub-namespaces), unless extraLabelNs lists it (--allow-ns). A
key without a '/' gets feature.node.kubernetes.io/.

Prints JSON: {"labels": {...}, "expiry_time": "...", "errors": [...]}.
Exit 0 when there is no error, 1 otherwise.
"""
import datetime
import json
import os
import re
import sys

MAX_SIZE = 65536
DEFAULT_NS = "feature.node.kubernetes.io"
NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def rfc3339(text):
    """Go's time.Parse(time.RFC3339, ...): a 'Z' or a numeric offset."""
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?)(Z|[+-]\d\d:\d\d)",
                     text)
    if not m:
        raise ValueError("not RFC 3339: %r" % text)
    return datetime.datetime.fromisoformat(
        m.group(1) + ("+00:00" if m.group(3) == "Z" else m.group(3)))


def key_valid(key):
    prefix, _, name = key.rpartition("/")
    if "/" in prefix:
        return False
    return NAME.match(name) is not None and (
        not prefix or (len(prefix) <= 253 and DNS1123.match(prefix) is not None))


def ns_allowed(key, allow, deny):
    ns = key.rpartition("/")[0]
    if (ns in (DEFAULT_NS, "profile.node.kubernetes.io") or
            ns.endswith("." + DEFAULT_NS) or
            ns.endswith(".profile.node.kubernetes.io")):
        return True
    denied = ns == "kubernetes.io" or ns.endswith(".kubernetes.io") or any(
        ns.endswith(d[1:]) if d.startswith("*") else ns == d for d in deny)
    return not denied or ns in allow


def parse(path, now, allow, deny):
    errors, labels, expiry = [], {}, None
    base = os.path.basename(path)
    if base.startswith("."):
        errors.append("%s: NFD skips names starting with '.'" % base)
    size = os.stat(path).st_size
    if size > MAX_SIZE:
        errors.append("%s: %d bytes, NFD skips files over %d" % (base, size, MAX_SIZE))
    with open(path, "rb") as f:
        text = f.read().decode()
    opts = {"expiry": now, "no_label": False}
    for n, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if line.startswith("# +"):
                key, eq, value = line[3:].partition("=")
                if key == "expiry-time" and eq:
                    try:
                        opts["expiry"] = rfc3339(value.strip())
                        expiry = value.strip()
                    except ValueError as e:
                        errors.append("line %d: %s" % (n, e))
                elif key == "no-label":
                    opts["no_label"] = True
                elif key != "no-feature":
                    errors.append("line %d: unknown directive %r" % (n, key))
            continue
        if opts["expiry"] < now:
            continue
        key, eq, value = line.partition("=")
        if not eq:
            value = "true"
        if not opts["no_label"]:
            full = key if "/" in key else DEFAULT_NS + "/" + key
            if not key_valid(full):
                errors.append("line %d: %r is not a valid label key" % (n, key))
            elif value and NAME.match(value) is None:
                errors.append("line %d: %r is not a valid label value" % (n, value))
            elif not ns_allowed(full, allow, deny):
                errors.append("line %d: nfd-master drops %r: its namespace "
                              "is denied and not in extraLabelNs" % (n, full))
            else:
                labels[full] = value
        opts["no_label"] = False
    return {"labels": labels, "expiry_time": expiry, "errors": errors}


def main(argv):
    path, now = None, datetime.datetime.now(datetime.timezone.utc)
    allow, deny = [], []
    args = iter(argv)
    for a in args:
        if a == "--now":
            now = rfc3339(next(args))
        elif a == "--allow-ns":
            allow.append(next(args))
        elif a == "--deny-ns":
            deny.append(next(args))
        else:
            path = a
    if path is None:
        print(__doc__, file=sys.stderr)
        return 2
    out = parse(path, now, allow, deny)
    print(json.dumps(out, indent=1, sort_keys=True))
    return 1 if out["errors"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
