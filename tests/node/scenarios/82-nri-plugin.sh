#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# nri.attach "plugin" on containerd 2.x: the NRI plugin polices a pod's
# containers itself at StartContainer (containerd's container_start.go:
# NewTask, then NRI StartContainer, then task.Start), with no hook exec.
# The plugin is started here (`oci-sockopt-hook nri`, its pid ours), the
# operator config at log_level debug, so that every prestart, the exec'd
# hook's or the plugin's, leaves a line naming its container:
#  - a pod policed through the hook (nri.attach "hook"), kept running;
#  - a pod policed by the plugin: no createRuntime or prestart hook of
#    ours in its spec, only poststop; no line of an exec'd hook in the
#    journal, the plugin's own line for it; the policy inside (SO_MARK
#    refused, SO_RCVBUF clamped, TCP_CONGESTION forced); its record's
#    programs (ids, attach types, names) those of the hook-policed pod's;
#  - a container whose policy the plugin refuses: StartContainer fails
#    with the hook's reason, the container's process never ran (the
#    marker it would write is absent), its CRI state is not RUNNING;
#  - the plugin killed (SIGKILL, its pid) while a StartContainer waits
#    for it: containerd closes the plugin and starts the container (nri
#    v0.8.0 plugin.go: a closed connection is a fatal error, StateChange
#    returns nil), so without the fallback it runs unpoliced, as
#    docs/install.md says; with the fallback (require_annotations.nri and
#    the hook in the default handler's base spec) the same kill leaves it
#    policed by the hook, and a container created while the plugin is
#    gone is refused;
#  - CreateContainer + StartContainer with no plugin, the plugin giving
#    the hook, the plugin attaching, in rotating rounds (figures, never a
#    verdict; NODE_BENCH_CALLS, NODE_BENCH_ROUNDS for more);
#  - nothing left after: records, programs, pins, scopes.
# About 6 to 10 minutes under TCG (two containerd restarts, nine pods):
# node-timeout: 900
# shellcheck source=tests/node/guest/lib.sh
. "$NODE_PAYLOAD/lib.sh"
SRC=$NODE_PAYLOAD/src
# shellcheck source=tests/lib/cri.sh
. "$SRC/tests/lib/cri.sh"

CRI_SOCK=/run/containerd/containerd.sock
CRI_DIR=$NODE_VAR/nri-plugin-pods
CRI_DRIVER=systemd
ETC=/etc/containerd
CALLS=${NODE_BENCH_CALLS:-3}
ROUNDS=${NODE_BENCH_ROUNDS:-1}
rm -rf "$CRI_DIR" && mkdir -p "$CRI_DIR"

tap_like "$(containerd --version)" ' v?2\.[0-9]+' "containerd 2.x: $(containerd --version)"
node_cri_stubs

cp "$NODE_CONFIG" "$CRI_DIR/hook-config.orig"
node_ctd_config
out=$(systemctl restart containerd 2>&1)
tap_ok $? "systemctl restart containerd: config v3, no handler of ours" || tap_diag "$out"
VERSION=$(cri --wait 60 version 2>&1)
tap_like "$VERSION" '^containerd ' "containerd answers CRI: $VERSION" ||
	{ journalctl -u containerd --no-pager | tail -n 30 | sed 's/^/# /'; tap_bail "no CRI"; }
node_cri_images

# hook_config MODE [JQ]: the example config with nri.attach MODE and
# log_level debug (each prestart says its container), and JQ
hook_config() {
	jq --arg m "$1" ".log_level = \"debug\" | .nri = {attach: \$m} ${2:+| $2}" \
		"$CRI_DIR/hook-config.orig" >"$NODE_CONFIG.new" && mv "$NODE_CONFIG.new" "$NODE_CONFIG"
	# the path unit's preload may be at it: the same once more, waited for
	systemctl start oci-sockopt-hook-preload.service
}
hook_config hook
pins() { find /sys/fs/bpf -path '*oci-sockopt-hook*' | sort | tr '\n' ' '; }
snapshot
PINS=$(pins)

# --- the plugin, started and killed by its pid --------------------------------

PLUGIN_PID='' NLOG=0
# plugin_start MODE [JQ]: the plugin that runs stopped, the config's
# nri.attach MODE (and JQ), a new plugin registered
plugin_start() {
	plugin_stop
	hook_config "$1" "${2:-}"
	NLOG=$((NLOG + 1))
	"$NODE_HOOK" nri </dev/null >/dev/null 2>"$CRI_DIR/plugin-$NLOG.log" &
	PLUGIN_PID=$!
	if ! wait_until 30 nri_registered || ! kill -0 "$PLUGIN_PID" 2>/dev/null; then
		tap_diag "the plugin did not register: $(cat "$CRI_DIR/plugin-$NLOG.log")"
		return 1
	fi
}
plugin_stop() {
	[ -n "$PLUGIN_PID" ] || return 0
	kill -TERM "$PLUGIN_PID" 2>/dev/null
	kill -CONT "$PLUGIN_PID" 2>/dev/null
	wait "$PLUGIN_PID" 2>/dev/null
	PLUGIN_PID=
	# containerd drops the plugin when the connection closes
	# shellcheck disable=SC2317 # called through wait_until
	nri_gone() { ! nri_registered; }
	wait_until 10 nri_gone
}
trap 'plugin_stop' EXIT

# exec_lines ID SINCE: the hook's journal lines since SINCE that end a
# prestart of container ID (its debug "timing:" line; a reaper forked
# for the pod's sandbox never writes one) from a process other than the
# plugin: an exec'd hook's (pid and message, one a line)
exec_lines() {
	journalctl -t oci-sockopt-hook --since "$2" --no-pager -o json 2>/dev/null |
		jq -r --arg id "$1" --arg pid "${PLUGIN_PID:-0}" \
			'select((.MESSAGE | tostring | contains($id) and contains("timing:")) and ._PID != $pid) | ._PID + " " + (.MESSAGE | tostring)'
}
# plugin_lines ID: the plugin's own (on its stderr: a plugin on a socket
# leaves the journal to its service's stderr)
# shellcheck disable=SC2317 # called through wait_until
plugin_lines() { grep -F "container $1: timing:" "$CRI_DIR/plugin-$NLOG.log"; }
# shellcheck disable=SC2317 # called through wait_until
has_exec_line() { [ -n "$(exec_lines "$@")" ]; }
# shellcheck disable=SC2317 # called through wait_until
has_plugin_line() { [ -n "$(plugin_lines "$@")" ]; }
# our_hooks ID STAGES...: how many of the container's spec hooks at those
# stages are ours
our_hooks() {
	local id=$1

	shift
	cri inspect "$id" | jq --arg h "$NODE_HOOK" --args \
		'[.info.runtimeSpec.hooks as $k | $ARGS.positional[] | $k[.][]? | select(.path == $h)] | length' "$@"
}
progs_of() { record_json "$1" 2>/dev/null | jq -c '[.programs[] | {id, attach, name}]' 2>/dev/null; }

CAPS='["NET_ADMIN", "NET_RAW"]'
SLEEPER='["sleep", "3600"]'
RESTRICTED='{"sockopt-hook.io/policy": "restricted"}'
# marker_pod NAME ANNOTATIONS: a pod whose container "app" writes
# $CRI_DIR/marker-NAME/ran (a hostPath) first thing, then sleeps
marker_pod() {
	local dir=$CRI_DIR/marker-$1

	cri_pod "$1" "" "$2" '[]' "$(jq -n --arg img "$CRI_BUSYBOX" --arg dir "$dir" --argjson caps "$CAPS" '{
		volumes: [{name: "marker", hostPath: {path: $dir, type: "DirectoryOrCreate"}}],
		containers: [{name: "app", image: $img,
			command: ["sh", "-c", "echo ran >/marker/ran && exec sleep 3600"],
			volumeMounts: [{name: "marker", mountPath: "/marker"}],
			securityContext: {capabilities: {add: $caps}}}]}')"
}
UIDS=()
# sandbox POD: RunPodSandbox only (SANDBOX)
sandbox() {
	SANDBOX=$(cri run-sandbox "$1" 2>&1) || { tap_diag "$SANDBOX"; return 1; }
	CRI_PODS+=("$SANDBOX $(jq -r .metadata.uid "$1")")
	UIDS+=("$(jq -r .metadata.uid "$1")")
}

# --- a pod policed through the hook (nri.attach "hook") ---------------------

plugin_start hook
tap_ok $? "the plugin (pid $PLUGIN_PID) registered, nri.attach hook"
since=$(date '+%Y-%m-%d %H:%M:%S')
POD=$(cri_pod hooked "" "$RESTRICTED" "[{\"name\": \"app\", \"command\": $SLEEPER, \"caps\": $CAPS}]")
UIDS+=("$(jq -r .metadata.uid "$POD")")
cri_run_pod "$POD"
tap_ok $? "hook mode: the pod runs"
HOOKED=${CRI_IDS[app]}
tap_is "$(our_hooks "$HOOKED" createRuntime) $(our_hooks "$HOOKED" poststop)" "1 1" \
	"hook mode: our createRuntime and poststop hooks in the spec"
wait_until 10 has_exec_line "$HOOKED" "$since"
tap_ok $? "hook mode: the exec'd hook's line for it in the journal (what the plugin mode must not have)"
PROBE_OUT=$(cri_exec "$HOOKED" /probe)
check_restricted "hook mode"
HOOKED_PROGS=$(progs_of "$HOOKED")
HOOKED_CG=$(cgroup_of "$(cri_pid "$HOOKED")")

# --- a pod policed by the plugin (nri.attach "plugin") ----------------------

plugin_stop
plugin_start plugin
tap_ok $? "the plugin (pid $PLUGIN_PID) registered again, nri.attach plugin"
tap_like "$(cat "$CRI_DIR/plugin-$NLOG.log")" 'this session: the plugin attaches at StartContainer' \
	"the plugin's log: it attaches at StartContainer"
since=$(date '+%Y-%m-%d %H:%M:%S')
POD=$(marker_pod inproc "$RESTRICTED")
UIDS+=("$(jq -r .metadata.uid "$POD")")
cri_run_pod "$POD"
tap_ok $? "plugin mode: the pod runs"
INPROC=${CRI_IDS[app]}
wait_until 20 test -e "$CRI_DIR/marker-inproc/ran"
tap_ok $? "plugin mode: its process ran (the marker it writes is there)"
tap_is "$(our_hooks "$INPROC" prestart createRuntime createContainer startContainer)" 0 \
	"plugin mode: no hook of ours in the spec before the process runs" ||
	tap_diag "$(cri inspect "$INPROC" | jq -c .info.runtimeSpec.hooks)"
tap_is "$(our_hooks "$INPROC" poststop)" 1 "plugin mode: the poststop hook only"
wait_until 10 has_plugin_line "$INPROC"
tap_ok $? "plugin mode: the plugin's own line for it (it ran prestart in-process)" ||
	tap_diag "$(tail -n 5 "$CRI_DIR/plugin-$NLOG.log")"
lines=$(exec_lines "$INPROC" "$since")
tap_is "$lines" "" "plugin mode: no exec'd hook's line for it in the journal (no hook exec)"
PROBE_OUT=$(cri_exec "$INPROC" /probe)
tap_diag "$PROBE_OUT"
check_restricted "plugin mode"
INPROC_CG=$(cgroup_of "$(cri_pid "$INPROC")")
tap_is "$(sh_progs "$INPROC_CG")" "$(sh_progs "$HOOKED_CG")" \
	"plugin mode: the programs in effect on its cgroup are hook mode's ($(sh_progs "$INPROC_CG"))"
INPROC_PROGS=$(progs_of "$INPROC")
[ -n "$INPROC_PROGS" ] && [ "$INPROC_PROGS" != "[]" ] && [ "$INPROC_PROGS" = "$HOOKED_PROGS" ]
tap_ok $? "the records hold the same program ids and attach types ($(jq length <<<"$INPROC_PROGS" 2>/dev/null) programs)" ||
	tap_diag "plugin: $INPROC_PROGS" "hook: $HOOKED_PROGS"
tap_is "$(record_json "$INPROC" | jq -r .policy)" restricted "plugin mode: the record says restricted"

# --- a container the plugin refuses -------------------------------------------

POD=$(marker_pod refused '{"sockopt-hook.io/policy": "nosuch"}')
sandbox "$POD"
tap_ok $? "refused: its sandbox runs"
REFUSED=$(cri create "$POD" "$SANDBOX" app 2>&1)
tap_like "$REFUSED" '^[0-9a-f]{64}$' "refused: CreateContainer passes (the plugin decides at StartContainer)"
out=$(cri start "$REFUSED" 2>&1)
rc=$?
[ $rc != 0 ] && [[ $out == *"NRI container start failed"*"oci-sockopt-hook:"*nosuch* ]]
tap_ok $? "refused: StartContainer fails with the hook's reason (exit $rc)" || tap_diag "$out"
tap_diag "$out"
st=$(cri state "$REFUSED" 2>&1)
[[ $st != CONTAINER_RUNNING* && $st == CONTAINER_* ]]
tap_ok $? "refused: its CRI state is not RUNNING ($st)"
sleep 1
tap_check "refused: its process never ran (no marker)" test ! -e "$CRI_DIR/marker-refused/ran"
tap_check "refused: no record" test ! -e "$NODE_STATE/$REFUSED.json"

# --- the cost: CreateContainer + StartContainer, three ways ------------------

# figures only: TCG makes each call 50 to 200 times slower than a host
POD=$(cri_pod bench "" "$RESTRICTED" "[{\"name\": \"c\", \"command\": $SLEEPER, \"caps\": $CAPS}]")
UIDS+=("$(jq -r .metadata.uid "$POD")")
cri_run_pod "$POD"
BENCH_SANDBOX=$CRI_SANDBOX BENCH_FAILED=0
: >"$CRI_DIR/bench.jsonl"
cri start-loop "$POD" "$BENCH_SANDBOX" 1 >/dev/null 2>&1 # warm up
for ((r = 0; r < ROUNDS; r++)); do
	order=(none hook plugin none hook)
	for v in "${order[@]:$((r % 3)):3}"; do
		plugin_stop
		[ "$v" = none ] || plugin_start "$v" || BENCH_FAILED=1
		if out=$(cri start-loop "$POD" "$BENCH_SANDBOX" "$CALLS" 2>&1); then
			jq -c --arg v "$v" --argjson r "$r" '. + {variant: $v, round: $r}' <<<"$out" >>"$CRI_DIR/bench.jsonl"
		else
			tap_diag "$v: $out"
			BENCH_FAILED=1
		fi
	done
done
figures=$(python3 - "$CRI_DIR/bench.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def q(v, p):
    v = sorted(v)
    return v[int(p * (len(v) - 1))]
tot = {}
for r in rows:
    tot.setdefault(r["variant"], []).extend(
        c + s for c, s in zip(r["create_us"], r["start_us"]))
p50 = {v: q(t, 0.5) for v, t in tot.items()}
for v in ("none", "hook", "plugin"):
    t = tot[v]
    print("FIGURE NRI-attach CreateContainer+StartContainer %s: p50 %d us p90 %d us (%d calls, TCG)"
          % (v, q(t, 0.5), q(t, 0.9), len(t)))
hook, plugin = p50["hook"] - p50["none"], p50["plugin"] - p50["none"]
print("FIGURE NRI-attach added over no plugin (p50): hook %+d us, plugin %+d us, plugin/hook %s"
      % (hook, plugin, "%.2f" % (plugin / hook) if hook > 0 else "n/a"))
PY
)
rc=$?
echo "$figures"
[ $rc = 0 ] && [ "$BENCH_FAILED" = 0 ] && [ "$(grep -c '^FIGURE' <<<"$figures")" = 4 ]
tap_ok $? "CreateContainer + StartContainer timed: no plugin, hook, plugin (figures, $ROUNDS rounds of $CALLS)"
cri_remove_pod "$BENCH_SANDBOX"

# --- the plugin killed while a StartContainer waits for it -------------------

# kill_mid_start ID: StartContainer of ID in the background, the plugin
# stopped (SIGSTOP) until containerd has made the task and asked it, then
# SIGKILL; START_RC, START_OUT; KILL_WAITED says the start was waiting
# and the plugin alive (stopped) when it was killed
kill_mid_start() {
	local id=$1 bg

	kill -STOP "$PLUGIN_PID"
	cri start "$id" >"$CRI_DIR/start.out" 2>&1 &
	bg=$!
	# shellcheck disable=SC2317 # called through wait_until
	task_created() { ctr -n k8s.io tasks ls 2>/dev/null | awk -v id="$id" '$1 == id { print $3 }' | grep -qx CREATED; }
	wait_until 60 task_created
	sleep 0.3
	KILL_WAITED=no
	kill -0 "$bg" 2>/dev/null && kill -0 "$PLUGIN_PID" 2>/dev/null && KILL_WAITED=yes
	kill -KILL "$PLUGIN_PID"
	wait "$PLUGIN_PID" 2>/dev/null
	PLUGIN_PID=
	wait "$bg"
	START_RC=$?
	START_OUT=$(cat "$CRI_DIR/start.out")
}

plugin_start plugin
since=$(date '+%Y-%m-%d %H:%M:%S')
POD=$(marker_pod killed "$RESTRICTED")
sandbox "$POD"
KILLED=$(cri create "$POD" "$SANDBOX" app 2>&1)
tap_like "$KILLED" '^[0-9a-f]{64}$' "killed mid-start: created while the plugin runs"
kill_mid_start "$KILLED"
tap_is "$KILL_WAITED" yes "killed mid-start: StartContainer was waiting for the plugin when it was killed"
tap_like "$(journalctl -u containerd --since "$since" --no-pager -o cat)" \
	'closing plugin 50-oci-sockopt-hook, failed to handle event' \
	"containerd's journal: it closed the plugin on the failed StartContainer"
tap_diag "$(journalctl -u containerd --since "$since" --no-pager -o cat | grep -F 'closing plugin' | tail -n 1)"
# nri v0.8.0 pkg/adaptation/plugin.go StateChange: a fatal error
# (ttrpc.ErrClosed) closes the plugin and returns nil
tap_is "$START_RC" 0 "no fallback: StartContainer goes on without the plugin (fail-open, as install.md says)" ||
	tap_diag "$START_OUT"
PROBE_OUT=$(cri_exec "$KILLED" /probe)
check_unpoliced "no fallback, plugin killed mid-start"
tap_check "no fallback: no record for it" test ! -e "$NODE_STATE/$KILLED.json"

# The fallback: require_annotations.nri, the hook in the default handler's
# base spec. The kill leaves a container policed by the hook, or refused.
jq '.hooks = {createRuntime: [{path: "'"$NODE_HOOK"'", args: ["oci-sockopt-hook", "createRuntime"]}],
	poststop: [{path: "'"$NODE_HOOK"'", args: ["oci-sockopt-hook", "poststop"]}]}' \
	"$SRC/examples/containerd/sockopt-hook-base-spec.json" |
	jq 'del(.annotations)' >"$ETC/runc-base-spec.json"
node_ctd_config --base-spec "$ETC/runc-base-spec.json"
systemctl restart containerd
cri --wait 60 version >/dev/null
plugin_start plugin '.require_annotations = {nri: true}'
tap_ok $? "fallback: containerd restarted with the base spec, the plugin registered, require_annotations.nri"
since=$(date '+%Y-%m-%d %H:%M:%S')
POD=$(marker_pod fallback "$RESTRICTED")
sandbox "$POD"
FALLBACK=$(cri create "$POD" "$SANDBOX" app 2>&1)
tap_like "$FALLBACK" '^[0-9a-f]{64}$' "fallback: created while the plugin runs"
dead_pid=$PLUGIN_PID
kill_mid_start "$FALLBACK"
tap_is "$KILL_WAITED" yes "fallback: StartContainer was waiting for the plugin when it was killed"
tap_is "$START_RC" 0 "fallback: the container starts" || tap_diag "$START_OUT"
PROBE_OUT=$(cri_exec "$FALLBACK" /probe)
check_restricted "fallback, plugin killed mid-start"
PLUGIN_PID=$dead_pid
lines=$(exec_lines "$FALLBACK" "$since")
PLUGIN_PID=
tap_like "$lines" . "fallback: policed by the base spec's hook (its exec'd line in the journal)"
tap_check "fallback: its record" test -e "$NODE_STATE/$FALLBACK.json"
# and one created while the plugin is gone: no mark, refused
POD=$(marker_pod orphan "$RESTRICTED")
sandbox "$POD"
ORPHAN=$(cri create "$POD" "$SANDBOX" app 2>&1)
out=$(cri start "$ORPHAN" 2>&1)
rc=$?
[ $rc != 0 ] && [[ $out == *"was not handled by the NRI plugin"*"refused by require_annotations.nri"* ]]
tap_ok $? "fallback, plugin gone: StartContainer refused by require_annotations.nri (exit $rc)" || tap_diag "$out"
sleep 1
tap_check "fallback, plugin gone: its process never ran (no marker)" test ! -e "$CRI_DIR/marker-orphan/ran"

# --- nothing left ---------------------------------------------------------------

rc=0
for entry in "${CRI_PODS[@]}"; do
	cri_remove_pod "${entry%% *}" || rc=1
done
tap_ok $rc "Stop/Remove of every container and pod sandbox"
for uid in "${UIDS[@]}"; do
	systemctl stop "kubepods-besteffort-pod${uid//-/_}.slice" 2>/dev/null
done
systemctl stop kubepods-besteffort.slice kubepods.slice 2>/dev/null
cp "$CRI_DIR/hook-config.orig" "$NODE_CONFIG"
systemctl start oci-sockopt-hook-preload.service
node_ctd_restore "$ETC/runc-base-spec.json"
wait_until 20 same_records
tap_is "$(state_records | tr '\n' ' ')" "$NODE_SNAP_RECORDS" "no hook state record left"
check_progs "the BPF programs loaded are those before the pods"
tap_is "$(pins)" "$PINS" "the pins are those before the pods"
tap_is "$(systemctl list-units --all --plain --no-legend 'cri-containerd-*.scope' | wc -l)" 0 \
	"no cri-containerd scope left"
tap_done
