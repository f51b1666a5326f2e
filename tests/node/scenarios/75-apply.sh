#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A policy change reaches running containers through the units `make
# install` put on the node: the operator rewrites
# /etc/oci-sockopt-hook/config.json, oci-sockopt-hook-preload.path starts
# the preload service, whose `apply` switches running runc and crun
# containers (systemd cgroup driver) from audit to enforce while they call
# setsockopt(SO_MARK) in a loop: their calls pass, then are refused, the
# answer changes once, none passes after one was refused. Then a policy
# the config no longer allows fails the service, which names the
# container; the example config put back, nothing is left.
# shellcheck source=tests/node/guest/lib.sh
. "$NODE_PAYLOAD/lib.sh"

EXAMPLE=$NODE_PAYLOAD/src/examples/config.json

# the preload service's runs so far (ExecMainExitTimestamp changes)
service_ran() {
	systemctl show -P ExecMainExitTimestampMonotonic oci-sockopt-hook-preload.service
}

# set_config FILTER: the example config through jq FILTER, written as an
# operator would (a new file renamed over the old); waits until the path
# unit's preload service has run for it. Sets RESULT (success, exit-code).
set_config() {
	local before

	before=$(service_ran)
	jq "$1" "$EXAMPLE" >"$NODE_CONFIG.new" && mv "$NODE_CONFIG.new" "$NODE_CONFIG"
	# shellcheck disable=SC2317 # called through wait_until
	ran() { [ "$(service_ran)" != "$before" ] && unit_gone oci-sockopt-hook-preload.service; }
	wait_until 300 ran
	tap_ok $? "the path unit ran the preload service for the new config"
	RESULT=$(systemctl show -P Result oci-sockopt-hook-preload.service)
}

# start_loop RT ARGS...: a restricted container that calls
# setsockopt(SO_MARK) in a loop until SIGTERM. Sets ID, R.
start_loop() {
	local rt=$1

	shift
	ID=node-apply-$rt
	R=("$rt" "$@")
	make_bundle "$NODE_VAR/bundles/$ID" "$ID" "system.slice:$rt:$ID" \
		"{\"$NODE_ANN_POLICY\": \"restricted\"}" '["sockcheck", "mark-loop", "3600"]'
	"${R[@]}" run -d -b "$NODE_VAR/bundles/$ID" "$ID" </dev/null \
		>"$NODE_VAR/$ID.out" 2>"$NODE_VAR/$ID.err"
	tap_ok $? "$rt: a restricted container calling setsockopt(SO_MARK) in a loop starts" ||
		sed 's/^/# /' "$NODE_VAR/$ID.err"
	wait_until 60 grep -q '^mark_loop=ready' "$NODE_VAR/$ID.out"
	tap_is "$(record_mode)" audit "$rt: its record says audit mode"
}

# record_mode: the mode container $ID's record names (the record is the
# attribute trusted.oci-sockopt-hook.record of an empty file)
record_mode()
{
	python3 -c 'import json, os, sys
p = sys.argv[1]
d = open(p, "rb").read() or os.getxattr(p, "trusted.oci-sockopt-hook.record")
print(json.loads(d)["mode"])' "$NODE_STATE/$ID.json"
}

loop_val() { sed -n "s/^mark_loop_$1=//p" "$NODE_VAR/$ID.out" | head -n1; }

# loop_num KEY: loop_val, 0 when it printed none
loop_num()
{
	local v

	v=$(loop_val "$1")
	echo "${v:-0}"
}

# end_loop: SIGTERM: the loop reports its answers and the container
# exits; then delete it
end_loop() {
	"${R[@]}" kill "$ID" TERM >/dev/null 2>&1
	wait_until 60 grep -q '^mark_loop_order=' "$NODE_VAR/$ID.out"
	# shellcheck disable=SC2317 # called through wait_until
	stopped() { [ "$("${R[@]}" state "$ID" | jq -r .status)" = stopped ]; }
	wait_until 20 stopped
	"${R[@]}" delete "$ID" >/dev/null 2>&1
}

progs_before=$(prog_ids | wc -l)
records_before=$(state_records | tr '\n' ' ')
set_config '.policies.restricted.mode = "audit" | .policies.restricted.audit_by_annotation = true'
tap_is "$RESULT" success "audit config: preload and apply succeed (no container yet)"

for rt in runc crun; do
	case $rt in
	runc) start_loop runc --systemd-cgroup ;;
	crun) start_loop crun --cgroup-manager=systemd ;;
	esac
	set_config '.'
	tap_is "$RESULT" success "$rt: enforce config: preload and apply succeed"
	tap_is "$(record_mode)" enforce "$rt: its record says enforce mode"
	journalctl -u oci-sockopt-hook-preload.service -n 20 --no-pager -o cat |
		grep -E '^(updated|apply:)' | sed 's/^/# /'
	PROBE_OUT=$("${R[@]}" exec "$ID" sockcheck set-mark 1 2>&1)
	tap_is "$PROBE_OUT" "setsockopt=EPERM" "$rt: its next setsockopt(SO_MARK) gets EPERM, no restart"
	end_loop
	tap_ok $((!($(loop_num pass) > 0 && $(loop_num eperm) > 0))) \
		"$rt: the loop's calls passed ($(loop_val pass)), then were refused ($(loop_val eperm))"
	tap_is "$(loop_val changes) $(loop_val other)" "1 0" "$rt: the answer changed once"
	tap_is "$(loop_val order)" ok "$rt: no call passed after one was refused"
	set_config '.policies.restricted.mode = "audit" | .policies.restricted.audit_by_annotation = true'
done

# a policy no longer allowed: the service fails and names the container
start_loop runc --systemd-cgroup
set_config '.annotations.allow_policies -= ["restricted"]'
tap_is "$RESULT" exit-code "a config that no longer allows a running container's policy fails the service"
tap_like "$(journalctl -u oci-sockopt-hook-preload.service -n 20 --no-pager -o cat)" \
	"left +$ID: annotation sockopt-hook.io/policy='restricted' refused" \
	"and the journal names the container, left as it was"
end_loop
set_config '.'
tap_is "$RESULT" success "the example config back: the service succeeds"
# shellcheck disable=SC2317 # called through wait_until
as_many() { [ "$(prog_ids | wc -l)" = "$progs_before" ]; }
wait_until 20 as_many
tap_ok $? "as many BPF programs loaded as before the scenario (the same pins, loaded again)"
tap_is "$(state_records | tr '\n' ' ')" "$records_before" "no hook state record left"
tap_done
