#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The payload's entry point, run inside the node by node-suite (baked into
# the image) between the results markers. Runs each scenario in
# scenarios/ in order, with bash, its TAP framed by
#   @@NODE-SCENARIO NAME@@ ... @@NODE-SCENARIO-END NAME rc=N secs=S@@
# for run-node-suite.sh to count.
#
# Budgets follow the machine and the work: a reference step (a fixed
# shell loop, which takes NODE_REF_MS on the development VM under TCG,
# where the scenarios' budgets were set) is timed first, and each
# scenario's budget (NODE_SCENARIO_TIMEOUT from the payload's env file,
# default 300, or the scenario's own "# node-timeout: SECS" line) is
# scaled by how much slower this node is (never below 1); the scenario
# then runs as long as it makes progress (lib.sh's node_run_scenario: it
# is stopped when it has printed nothing for its budget, or has run three
# times its budget), so that a node slowed down after the reference step
# (a loaded host) still passes. The known node is saved after
# 00-node; a scenario that leaves the node otherwise (one stopped by its
# budget before it put containerd back, or one that failed half-way) is
# followed by a restore of the known node, outside its budget, so that
# the next scenario starts from it.
set -u
NODE_PAYLOAD=$(cd "$(dirname "$0")" && pwd)
export NODE_PAYLOAD
export PATH="$NODE_PAYLOAD/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# the console is a terminal: no colours, no pager in what the tools print
export NO_COLOR=1 SYSTEMD_COLORS=0 SYSTEMD_PAGER='' PAGER=cat TERM=dumb
# shellcheck disable=SC1091
[ ! -r "$NODE_PAYLOAD/env" ] || . "$NODE_PAYLOAD/env"
# shellcheck source=tests/node/guest/lib.sh
. "$NODE_PAYLOAD/lib.sh"
mkdir -p /var/lib/node-suite
echo "# node: kernel $(uname -r), $(systemctl --version | head -n1), up $(cut -d' ' -f1 /proc/uptime)s"

# The reference step: 10000 rounds of a shell loop, in milliseconds (2.6 s
# on the reference node, the 2-core development VM under TCG, loaded as
# when the budgets were set).
NODE_REF_MS=${NODE_REF_MS:-2600}
t=$(date +%s%N)
i=0
while [ $i -lt 10000 ]; do i=$((i + 1)); done
ref_ms=$((($(date +%s%N) - t) / 1000000))
# factor, in hundredths: this node's time over the reference's, >= 100
factor=$((ref_ms * 100 / NODE_REF_MS))
[ "$factor" -ge 100 ] || factor=100
# for the scenarios' own waits (lib.sh's progs_settled)
export NODE_FACTOR=$factor
scale="$((factor / 100)).$(printf '%02d' $((factor % 100)))"
echo "# node: reference step ${ref_ms} ms (${NODE_REF_MS} ms on the reference node): budgets x$scale"
echo "FIGURE node reference step ${ref_ms} ms: budgets scaled by $scale"

rc=0 known=0
for s in "$NODE_PAYLOAD"/scenarios/*.sh; do
	[ -e "$s" ] || continue
	name=$(basename "$s" .sh)
	echo "@@NODE-SCENARIO $name@@"
	start=$SECONDS
	# a scenario may ask for more time: a line "# node-timeout: SECS"
	secs=$(sed -n 's/^# node-timeout: \([0-9][0-9]*\)$/\1/p' "$s" | head -n1)
	secs=${secs:-${NODE_SCENARIO_TIMEOUT:-300}}
	budget=$((secs * factor / 100))
	echo "# $name: budget ${budget}s (${secs}s declared): stopped when silent for ${budget}s or after $((budget * NODE_BUDGET_CEILING))s"
	node_run_scenario "$s" "$budget"
	src=$?
	# outside the budget: the known node for the next scenario
	if [ "$known" = 1 ] && ! node_known_same; then
		echo "# $name left the node changed: restoring the known node"
		diff "$NODE_KNOWN/state" <(node_state) | grep '^[<>]' | head -n 20 | sed 's/^/# /'
		if node_known_restore; then
			echo "# known node restored after $name"
		else
			echo "# the known node could not be restored after $name: later scenarios may fail"
		fi
	elif [ "$name" = 00-node ] && [ $src = 0 ]; then
		node_known_save && known=1 ||
			echo "# cannot save the known node: later scenarios are not restored"
	fi
	echo "@@NODE-SCENARIO-END $name rc=$src secs=$((SECONDS - start))@@"
	case $src in 0 | 77) ;; *) rc=1 ;; esac
done
exit $rc
