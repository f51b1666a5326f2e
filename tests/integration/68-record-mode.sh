#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Record mode under real runc: a container annotated
# sockopt-hook.io/record: NAME (allowed by record.allow) has its socket
# footprint recorded, and a policy in the operator config's schema is
# written to record.dir when it is gone; `validate` accepts it as it is.
# Applied in enforce mode, the same workload runs unchanged and an option
# it never used is denied. `record ID` shows a running container's
# footprint; a runtime that never runs poststop leaves it to gc; more
# distinct options than the table holds are flagged as overflow; the
# recorded policy for the example workload is the one in examples/.
#
# Modules: `footprint.c`, `cmd_record.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup runc crun-nocg
# The footprint tables are pinned beside the pin directory, on a BPF
# filesystem: the test's own.
ct_mount_bpffs || tap_bail "cannot mount a BPF filesystem"
fpdir=$CT_PIN_DIR-footprint
recdir=$CT_TMP/recorded
example=$CT_TOP/examples/config-recorded-example.json
# The example workload: a known list of options, values and sockets.
workload='sockcheck rcvbuf 65536; sockcheck keepalive; sockcheck cc cubic;
sockcheck socket inet dgram; sockcheck get-mark'

hook() { OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR "$HOOK" "$@"; }
# recording NAME: the one recording file of record NAME, or nothing.
recording() { find "$recdir/$1" -name '*.json' 2>/dev/null; }

# shellcheck disable=SC2016 # a jq variable
cfg=$(ct_config record '.record = {"allow": true, "dir": $d}' --arg d "$recdir")
refused=$(ct_config norecord 'del(.record)')

# --- recording refused unless the operator allows it ---
b=$(ct_bundle -c "$refused" -a sockopt-hook.io/record=web refused -- sockcheck keepalive)
ct_run runc "$(ct_id refused)" "$b"
tap_ok "$([ "$CT_RC" != 0 ]; echo $?)" "without record.allow, a record annotation refuses the container"
tap_like "$(cat "$CT_ERR")" "record.allow is false" "the refusal names record.allow"

# --- record a workload with no policy ---
kernel=$(ct_snapshot progs cgroups)
b=$(ct_bundle -c "$cfg" -a sockopt-hook.io/record=web rec -- /bin/sh -c "$workload")
ct_run runc "$(ct_id rec)" "$b"
tap_is "$CT_RC" 0 "a recorded container with no policy runs" ||
	tap_diag "$(cat "$CT_ERR")"
recorded_out=$(cat "$CT_OUT")
file=$(recording web)
tap_like "$file" "^$recdir/web/-_-_$(ct_id rec | cut -c1-12)_[0-9a-f]{12}\.json$" \
	"poststop wrote the recording as web/-_-_<id>_<recording id>.json" ||
	tap_diag "$(ls -laR "$recdir" 2>&1)" "$(cat "$CT_ERR")"
out=$("$HOOK" validate "$file" 2>&1)
tap_ok $? "oci-sockopt-hook validate accepts the recorded policy as it is" ||
	tap_diag "$out" "$(cat "$file")"
tap_is "$(jq -r '.policies.web.default' "$file")" deny "the policy is in allow-list mode"
tap_is "$(jq -c '.policies.web.setsockopt[] | select(.option == "SO_RCVBUF") | [.action, .min, .max]' "$file")" \
	'["clamp",65536,65536]' "SO_RCVBUF gets a clamp to the observed value"
tap_is "$(jq -c '[.policies.web.setsockopt[] | select(.action == "allow") | .option]' "$file")" \
	'["SO_KEEPALIVE","TCP_CONGESTION"]' "SO_KEEPALIVE and TCP_CONGESTION are allowed"
tap_is "$(jq -c '.policies.web.socket.deny' "$file")" \
	'[{"type":"SOCK_RAW"},{"family":"AF_INET6"}]' "socket types never created are denied"
tap_is "$(find "$fpdir" -mindepth 1 2>/dev/null | wc -l)" 0 "the footprint pins are gone"
ct_check_same "BPF programs and cgroups are as before" "$kernel" progs cgroups

# --- the example policy in examples/ is what recording gives ---
tap_is "$(jq -S .policies "$file")" "$(jq -S .policies "$example")" \
	"re-recording the example workload gives the policy of examples/$(basename "$example")" ||
	tap_diag "recorded:" "$(cat "$file")"

# --- enforce the recorded policy ---
enforce=$CT_TMP/configs/enforce.json
jq '{policies} + {"annotations": {"allow_policies": ["web"]}}' "$file" >"$enforce"
b=$(ct_bundle -c "$enforce" -a sockopt-hook.io/policy=web enf -- /bin/sh -c "$workload")
ct_run runc "$(ct_id enf)" "$b"
tap_is "$CT_RC" 0 "the workload runs under its recorded policy" ||
	tap_diag "$(cat "$CT_ERR")"
tap_is "$(cat "$CT_OUT")" "$recorded_out" "and its output is unchanged"
b=$(ct_bundle -c "$enforce" -a sockopt-hook.io/policy=web enf2 -- sockcheck set-mark 5)
ct_run runc "$(ct_id enf2)" "$b"
tap_is "$(sed -n 's/^setsockopt=//p' "$CT_OUT")" EPERM \
	"an option the workload never used (SO_MARK) is denied"

# --- record ID on a running container, and recording copies unshared ---
b=$(ct_bundle -c "$cfg" -a sockopt-hook.io/record=live live -- \
	/bin/sh -c 'sockcheck keepalive; sockcheck listen 4680 60')
ct_start runc "$(ct_id live)" "$b" '^listen='
tap_ok $? "a recorded container runs detached" || tap_diag "$(cat "$CT_ERR")"
# With no policy there is no rule to find: the sockopt programs never
# look in their rules map (record mode notes every call with a hash
# lookup; a rules lookup beside it cost as much again).
live_cg=$(ct_cgroup_of "$CT_PID")
for type in cgroup_setsockopt cgroup_getsockopt; do
	prog=$(timeout 20 bpftool -j cgroup show "$live_cg" 2>/dev/null |
		jq -r --arg t "$type" '.[]? | select(.attach_type == $t) | .id')
	rules=
	for m in $(timeout 20 bpftool -j prog show id "$prog" 2>/dev/null | jq -r '.map_ids[]?'); do
		[ "$(timeout 20 bpftool -j map show id "$m" 2>/dev/null | jq -r .name)" = rules ] && rules=$m
	done
	n=$(timeout 20 bpftool prog dump xlated id "$prog" 2>/dev/null | grep -c "map\[id:$rules\]")
	tap_is "${rules:+found} $n" "found 0" \
		"$type of a container recorded under no policy never reads its rules map"
done
b=$(ct_bundle -c "$cfg" -a sockopt-hook.io/record=live live2 -- \
	/bin/sh -c 'sockcheck listen 4681 60')
ct_start runc "$(ct_id live2)" "$b" '^listen='
json=$(hook record "$(ct_id live)" --json 2>&1)
tap_is "$(jq -r '.entries[] | select(.call == "setsockopt" and .option == "SO_KEEPALIVE") | .count' <<<"$json")" 1 \
	"record --json shows the SO_KEEPALIVE call of the running container" ||
	tap_diag "$json"
tap_like "$(hook record "$(ct_id live)" 2>&1)" "setsockopt SOL_SOCKET SO_KEEPALIVE count 1 values 1..1" \
	"record shows it as text"
json2=$(hook record "$(ct_id live2)" --json 2>&1)
tap_is "$(jq '[.entries[] | select(.option == "SO_KEEPALIVE")] | length' <<<"$json2")" 0 \
	"another recorded container has its own footprint"
tap_like "$(hook status "$(ct_id live)" 2>&1)" "record:    'live': its recording goes to $recdir/live when it is gone" \
	"status says the container is being recorded, and where its policy goes"
ct_delete runc "$(ct_id live)"
ct_delete runc "$(ct_id live2)"

# --- a runtime that never runs poststop: gc writes the policy ---
b=$(ct_bundle -c "$cfg" -P -a sockopt-hook.io/record=nops nops -- /bin/sh -c "$workload")
ct_run runc "$(ct_id nops)" "$b"
tap_is "$CT_RC" 0 "a recorded container without poststop runs"
tap_is "$(recording nops)" "" "without poststop, nothing is written yet"
out=$(hook --config "$cfg" gc 2>&1)
file=$(recording nops)
tap_ok "$([ -f "$file" ]; echo $?)" "gc writes the policy of the container that is gone" ||
	tap_diag "$out"
tap_is "$(jq -S '.policies.nops' "$file")" "$(jq -S '.policies.web' "$example")" \
	"and it is the same policy"

# --- a cgroup the hook made, no poststop: the reaper writes the policy ---
b=$(ct_bundle -r crun-nocg -c "$cfg" -P -a sockopt-hook.io/record=reap reap -- \
	/bin/sh -c "$workload")
ct_run crun-nocg "$(ct_id reap)" "$b"
tap_is "$CT_RC" 0 "crun without a cgroup manager: a recorded container runs" ||
	tap_diag "$(cat "$CT_ERR")" "$(cat "$b/hook.err" 2>/dev/null)"
ct_delete crun-nocg "$(ct_id reap)"
for ((i = 0; i < 100; i++)); do
	file=$(recording reap)
	[ -n "$file" ] && break
	sleep 0.1
done
ct_wait_for "$file" '"policies"' 100
tap_is "$(jq -S '.policies.reap' "$file" 2>&1)" "$(jq -S '.policies.web' "$example")" \
	"the hook's reaper writes the same policy once the cgroup empties"

# --- more distinct options than the table holds ---
b=$(ct_bundle -c "$cfg" -a sockopt-hook.io/record=spray spray -- \
	/bin/sh -c 'sockcheck spray 200; sockcheck listen 4682 60')
ct_start runc "$(ct_id spray)" "$b" '^listen='
json=$(hook record "$(ct_id spray)" --json 2>&1)
tap_is "$(jq '[.entries[] | select(.call == "setsockopt")] | length' <<<"$json")" 128 \
	"the setsockopt table stops at 128 distinct options" || tap_diag "$json"
tap_ok "$(jq -e '.overflow.setsockopt > 0' <<<"$json" >/dev/null; echo $?)" \
	"and the overflow is flagged"
tap_like "$(hook record "$(ct_id spray)" 2>&1)" "overflow: the setsockopt table" \
	"record says so as text"
ct_delete runc "$(ct_id spray)"
file=$(recording spray)
out=$("$HOOK" validate "$file" 2>&1)
tap_ok $? "an overflowed record still validates" || tap_diag "$out"
tap_is "$(find "$fpdir" -mindepth 1 2>/dev/null | wc -l)" 0 "no footprint pins remain"

tap_done
