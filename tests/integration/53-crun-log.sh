#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# crun throws a hook's stderr away (unless the run.oci.hooks.stderr
# annotation names a file, which these bundles do not set), so a refused
# container's reason must reach the operator through the config's
# log_file, and syslog when a syslog daemon listens on /dev/log. Under
# crun and crun --cgroup-manager=disabled: a disallowed policy, and (on a
# kernel without SK_BPF_BYPASS_PROT_MEM) a bypass the kernel cannot do,
# are refused with one log line that says why; an allowed policy logs its
# attach; nothing is left behind.
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup crun crun-nocg

LOG=$CT_TMP/hook.log
CFG=$CT_TMP/configs/logged.json
jq --arg log "$LOG" '.annotations.allow_policies = ["bulk", "setonly"] |
	.log_file = $log | .log_level = "info"' "$CT_EXAMPLE_CONFIG" >"$CFG" || exit 1
BYPASS=$("$HOOK" probe --json 2>/dev/null | jq -r .bypass_prot_mem)
SYSLOG=0
[ -S /dev/log ] && SYSLOG=1

# log_of ID: the log file's lines about container ID.
log_of()
{
	grep -F "container $1: " "$LOG"
}

# syslog_has TEXT: TEXT is in the journal or a syslog file.
syslog_has()
{
	local f

	if command -v journalctl >/dev/null &&
		journalctl -q -t oci-sockopt-hook --no-pager 2>/dev/null | grep -qF "$1"; then
		return 0
	fi
	for f in /var/log/syslog /var/log/messages /var/log/daemon.log; do
		[ -r "$f" ] && grep -F "oci-sockopt-hook" "$f" | grep -qF "$1" && return 0
	done
	return 1
}

# refused_logged RT NAME POLICY REGEX: the container does not start and the
# log file has exactly one line about it: an error matching REGEX.
refused_logged()
{
	local rt=$1 name=$2 id b before lines

	id=$(ct_id "$name")
	b=$(ct_bundle -c "$CFG" -a "sockopt-hook.io/policy=$3" "$name" -- sockcheck all)
	before=$(ct_snapshot)
	ct_run "$rt" "$id" "$b"
	! grep -q '^done=' "$CT_OUT" && [ "$CT_RC" != 0 ]
	tap_ok $? "$rt $name: policy '$3' is refused, the container does not start" ||
		tap_diag "exit $CT_RC; stdout:" "$(cat "$CT_OUT")"
	tap_diag "$rt said: $(cat "$CT_ERR")"
	lines=$(log_of "$id")
	[ "$(grep -c . <<<"$lines")" = 1 ] &&
		[[ $lines =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z\ oci-sockopt-hook\[[0-9]+\]\ error:\ container\ $id:\ $4 ]]
	tap_ok $? "$rt $name: the log file holds the reason, in one error line" ||
		tap_diag "log lines about $id:" "$lines" "whole log:" "$(cat "$LOG" 2>/dev/null)"
	[ -n "$lines" ] && tap_diag "log: $lines"
	if [ "$SYSLOG" = 1 ]; then
		syslog_has "container $id: "
		tap_ok $? "$rt $name: syslog holds the reason too (ident oci-sockopt-hook)"
	fi
	ct_check_same "$rt $name: BPF programs, hook state and cgroups are as before" "$before"
}

for rt in crun crun-nocg; do
	refused_logged "$rt" "$rt-disallowed" restricted \
		"annotation sockopt-hook\.io/policy='restricted' refused: 'restricted' is not in annotations\.allow_policies of $CFG\$"
	if [ "$BYPASS" = false ]; then
		refused_logged "$rt" "$rt-nobypass" bulk \
			"bypass-prot-mem is requested \(by policy bulk\) but this kernel lacks SK_BPF_BYPASS_PROT_MEM.*on_unsupported is 'fail'"
	else
		tap_skip "$rt: a bypass the kernel cannot do is logged" "this kernel has SK_BPF_BYPASS_PROT_MEM"
	fi

	# Control: an allowed policy starts and logs its attach.
	id=$(ct_id "$rt-allowed")
	b=$(ct_bundle -c "$CFG" -a sockopt-hook.io/policy=setonly "$rt-allowed" -- sockcheck set-mark 5)
	ct_run "$rt" "$id" "$b"
	tap_is "$(cat "$CT_OUT")" "setsockopt=EPERM" "$rt allowed: policy 'setonly' is in force" ||
		tap_diag "exit $CT_RC; stderr:" "$(cat "$CT_ERR")"
	tap_like "$(log_of "$id")" "info: container $id: attached 1 program\(s\) to cgroup .*\(policy 'setonly'" \
		"$rt allowed: the log file records the attach" ||
		tap_diag "whole log:" "$(cat "$LOG" 2>/dev/null)"
	ct_delete "$rt" "$id"
done

tap_is "$(grep -c ' error: ' "$LOG")" "$([ "$BYPASS" = false ] && echo 4 || echo 2)" \
	"the log holds one error per refused container, nothing else at error level"
if [ "$SYSLOG" = 0 ]; then
	tap_skip "syslog holds the reasons" "no syslog daemon here (/dev/log is not a socket)"
fi

tap_done
