#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The payload's entry point, run inside the node by node-suite (baked into
# the image) between the results markers. Runs each scenario in
# scenarios/ in order, with bash, its TAP framed by
#   @@NODE-SCENARIO NAME@@ ... @@NODE-SCENARIO-END NAME rc=N secs=S@@
# for run-node-suite.sh to count. NODE_SCENARIO_TIMEOUT (from the
# payload's env file) bounds each one.
set -u
NODE_PAYLOAD=$(cd "$(dirname "$0")" && pwd)
export NODE_PAYLOAD
export PATH="$NODE_PAYLOAD/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# the console is a terminal: no colours, no pager in what the tools print
export NO_COLOR=1 SYSTEMD_COLORS=0 SYSTEMD_PAGER='' PAGER=cat TERM=dumb
# shellcheck disable=SC1091
[ ! -r "$NODE_PAYLOAD/env" ] || . "$NODE_PAYLOAD/env"
mkdir -p /var/lib/node-suite
echo "# node: kernel $(uname -r), $(systemctl --version | head -n1), up $(cut -d' ' -f1 /proc/uptime)s"
rc=0
for s in "$NODE_PAYLOAD"/scenarios/*.sh; do
	[ -e "$s" ] || continue
	name=$(basename "$s" .sh)
	echo "@@NODE-SCENARIO $name@@"
	start=$SECONDS
	# a scenario may ask for more time: a line "# node-timeout: SECS"
	secs=$(sed -n 's/^# node-timeout: \([0-9][0-9]*\)$/\1/p' "$s" | head -n1)
	secs=${secs:-${NODE_SCENARIO_TIMEOUT:-300}}
	timeout -k 10 "$secs" bash "$s" </dev/null 2>&1
	src=$?
	[ $src != 124 ] || echo "# $name: timed out after ${secs}s"
	echo "@@NODE-SCENARIO-END $name rc=$src secs=$((SECONDS - start))@@"
	case $src in 0 | 77) ;; *) rc=1 ;; esac
done
exit $rc
