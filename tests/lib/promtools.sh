# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# node_exporter and promtool for the metrics tests, from Debian's own
# packages without installing them (installing would start node_exporter
# and prometheus through their init scripts): `apt-get download` into
# $TESTS_BUILD/promtools/, then `dpkg-deb -x` there. Later runs use that
# copy and need no network. Debian 12 has node_exporter 1.5.0 and
# prometheus (promtool) 2.42.
#
#   promtools_require   sets NODE_EXPORTER and PROMTOOL, or skips the
#                       whole file (exit 77) saying why
#   promtools_series [PREFIX] < TEXT
#                       the samples of a text exposition whose names start
#                       with PREFIX, one canonical line each: labels sorted
#                       by name and escaped again, values as integers when
#                       whole; sorted. A line that does not parse fails.

# shellcheck source=host.sh
. "$(dirname "${BASH_SOURCE[0]}")/host.sh"

PROMTOOLS_DIR=$TESTS_BUILD/promtools
PROMTOOLS_PACKAGES=(prometheus-node-exporter prometheus)

# promtools_fetch: downloads and unpacks the packages; prints why not.
promtools_fetch()
{
	local dl=$PROMTOOLS_DIR/debs out deb

	mkdir -p "$dl" || return 1
	# _apt cannot write into a directory of root's: apt-get then fetches
	# as root, and says so on stderr.
	if ! out=$(cd "$dl" && timeout 300 apt-get download "${PROMTOOLS_PACKAGES[@]}" 2>&1); then
		echo "cannot download ${PROMTOOLS_PACKAGES[*]} from the Debian mirror: $(grep -m1 -E '^(E|Err):' <<<"$out")"
		return 1
	fi
	for deb in "$dl"/*.deb; do
		dpkg-deb -x "$deb" "$PROMTOOLS_DIR/root" || {
			echo "cannot unpack $deb"
			return 1
		}
	done
}

promtools_require()
{
	local why

	tap_require_cmd apt-get dpkg-deb /usr/bin/python3
	NODE_EXPORTER=$PROMTOOLS_DIR/root/usr/bin/prometheus-node-exporter
	PROMTOOL=$PROMTOOLS_DIR/root/usr/bin/promtool
	if ! [ -x "$NODE_EXPORTER" ] || ! [ -x "$PROMTOOL" ]; then
		why=$(promtools_fetch) || tap_skip_all "${why:-cannot fetch node_exporter and promtool}"
	fi
	if ! [ -x "$NODE_EXPORTER" ] || ! [ -x "$PROMTOOL" ]; then
		tap_skip_all "the packages hold no $NODE_EXPORTER or $PROMTOOL"
	fi
	tap_diag "$("$NODE_EXPORTER" --version 2>&1 | head -1)" \
		"$("$PROMTOOL" --version 2>&1 | head -1)"
}

promtools_series()
{
	/usr/bin/python3 -c '
import re, sys

prefix = sys.argv[1]
name_re = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
label_re = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
unescape = {"\\": "\\", "\"": "\"", "n": "\n"}


def labels(line, i):
    out = {}
    i += 1
    while line[i] != "}":
        m = label_re.match(line, i)
        name = m.group(0)
        i = m.end()
        assert line[i:i + 2] == "=\"", line
        i += 2
        value = ""
        while line[i] != "\"":
            if line[i] == "\\":
                value += unescape[line[i + 1]]
                i += 2
            else:
                value += line[i]
                i += 1
        assert name not in out, "label twice: " + line
        out[name] = value
        i += 1
        if line[i] == ",":
            i += 1
    return out, i + 1


def esc(v):
    return v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")


seen = set()
rows = []
for line in sys.stdin.read().split("\n"):
    if not line or line.startswith("#"):
        continue
    m = name_re.match(line)
    name, i = m.group(0), m.end()
    lab = {}
    if line[i] == "{":
        lab, i = labels(line, i)
    value = float(line[i:].split()[0])
    key = name + "{" + ",".join("%s=\"%s\"" % (k, esc(lab[k])) for k in sorted(lab)) + "}"
    assert key not in seen, "duplicate series: " + key
    seen.add(key)
    if name.startswith(prefix):
        rows.append("%s %s" % (key, int(value) if value == int(value) else repr(value)))
print("\n".join(sorted(rows)))
' "${1:-}"
}
