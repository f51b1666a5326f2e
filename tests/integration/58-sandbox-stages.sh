#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Who is a sandbox, and at which stage the `hook` command acts.
#  - Under runc, with an operator config whose defaults.policy is
#    "restricted" and no policy annotation: a container that carries a
#    copied io.kubernetes.cri.container-type "sandbox" next to CRI-O's own
#    io.kubernetes.cri-o.ContainerType "container" gets the default policy;
#    so does a containerd container with a passed-through CRI-O "sandbox"
#    key; a real CRI-O pause container gets sandbox_policy (the built-in
#    @deny-sockets: no inet socket), whatever pod annotations it carries; a CRI-O container
#    is named by CRI-O's key, not by a copied containerd one.
#  - The `hook` command (hooks.d files) fed runc-, crun- and podman-style
#    states for a real process in a cgroup of its own: it attaches only on
#    "creating" or "created", releases on "stopped", does nothing (exit 0,
#    nothing on stderr) on running, starting, paused or an unknown status,
#    and refuses a state without status with one line.
#  - runc and crun containers whose prestart, poststart and poststop hooks
#    all run `hook`: policed, the poststart run does nothing (crun sends
#    "running"; runc 1.1.5 sends "created" there, and the repeated attach
#    finds the policy in place), poststop releases.
#
# Modules: `container.c`, `cmd_stages.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup runc crun
BASE=$(ct_snapshot)
LOG=$CT_TMP/hook.log
DEFAULTS=$(ct_config defaults \
	". + {log_file: \"$LOG\", log_level: \"debug\"} | .defaults.policy = \"restricted\"")
CRI_NS=io.kubernetes.cri
CRIO=io.kubernetes.cri-o

# probe NAME CHECK ANNOTATION...: a runc container under $DEFAULTS, with
# the annotations, running `sockcheck CHECK`; prints its output.
probe()
{
	local name=$1 check=$2 args=() a b

	shift 2
	for a in "$@"; do
		args+=(-a "$a")
	done
	# shellcheck disable=SC2086 # CHECK is a command line on purpose
	b=$(ct_bundle -c "$DEFAULTS" "${args[@]}" "$name" -- sockcheck $check)
	ct_run runc "$(ct_id "$name")" "$b"
	cat "$CT_OUT"
	[ "$CT_RC" = 0 ] || echo "exit $CT_RC: $(cat "$CT_ERR")"
}

# --- who is a sandbox ----------------------------------------------------

tap_is "$(probe crio-copied set-mark\ 5 "$CRI_NS.container-type=sandbox" \
	"$CRIO.ContainerType=container" io.kubernetes.container.name=app)" \
	"setsockopt=EPERM" \
	"CRI-O container with a copied $CRI_NS.container-type=sandbox: defaults.policy applies (SO_MARK gives EPERM)"
tap_is "$(probe containerd-copied set-mark\ 5 "$CRI_NS.container-type=container" \
	"$CRI_NS.container-name=app" "$CRIO.ContainerType=sandbox")" \
	"setsockopt=EPERM" \
	"containerd container with a passed-through $CRIO.ContainerType=sandbox: defaults.policy applies"
tap_like "$(probe crio-pause set-mark\ 5 "$CRIO.ContainerType=sandbox" \
	sockopt-hook.io/policy=setonly)" \
	"^socket=EPERM" \
	"CRI-O pause container ($CRIO.ContainerType=sandbox), with a copied policy annotation: sandbox_policy only, no inet socket at all"
# restricted denies getsockopt(SO_MARK), setonly does not.
tap_is "$(probe crio-name get-mark "$CRIO.ContainerType=container" \
	io.kubernetes.container.name=db "$CRI_NS.container-name=web" \
	sockopt-hook.io/policy.web=setonly)" \
	"mark=EPERM" \
	"CRI-O container db with a copied $CRI_NS.container-name=web: policy.web does not apply to it"
# A container name longer than a scoped key's name part may be (63
# characters: "policy." leaves 56): its entry in containers.policy.
LONG=web-$(printf 'x%.0s' $(seq 59))
tap_is "$(probe long-name get-mark "$CRI_NS.container-type=container" \
	"$CRI_NS.container-name=$LONG" \
	"sockopt-hook.io/containers.policy=db=restricted, $LONG=setonly")" \
	"mark=0" \
	"containerd container with a 63-character name: its containers.policy entry (setonly) applies, not defaults.policy"
# Storage relocated through a link root made (/var/lib/containers ->
# /data/containers): the runtime names the bundle through the link.
b=$(ct_bundle -c "$DEFAULTS" relocated -- sockcheck set-mark 5)
ln -s "$CT_TMP/bundles" "$CT_TMP/relocated"
ct_run runc "$(ct_id relocated)" "$CT_TMP/relocated/relocated"
tap_is "$(cat "$CT_OUT")" "setsockopt=EPERM" \
	"a bundle reached through a root-owned link (relocated storage): the policy applies" ||
	tap_diag "$(cat "$CT_ERR")"
ct_check_same "after the sandbox checks: BPF programs, hook state and cgroups are as before" \
	"$BASE"

# --- the hook command's stages, from the state's status ------------------

CG=$CT_CG2/$CT_PREFIX-stages
ID=$(ct_id stages)
BUNDLE=$(ct_bundle -a sockopt-hook.io/policy=restricted stages -- true)
mkdir "$CG" || exit 1

# A process standing in for the container's init, in $CG. A runtime runs
# poststop once the init is gone, and the hook keeps the policy of a
# container that still runs: end_init before every "stopped".
start_init()
{
	ct_sleeper "$CG"
	PID=$CT_SLEEPER
}

end_init()
{
	ct_kill "$PID"
}
start_init

# feed STATE-JQ DESC WANT-RC WANT-PROGS [STDERR-REGEX]: runs `hook` with
# the state that the jq expression builds from $id, $pid and $bundle.
feed()
{
	local state out said rc progs ok=0

	state=$(jq -cn --arg id "$ID" --argjson pid "$PID" --arg bundle "$BUNDLE" "$1")
	out=$(OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR "$HOOK" --config "$CT_EXAMPLE_CONFIG" \
		hook <<<"$state" 2>&1)
	rc=$?
	progs=$(ct_our_progs "$CG" | wc -l)
	[ "$rc" = "$3" ] && [ "$progs" = "$4" ] || ok=1
	# The hook's own lines (valgrind, under 80-sanitized-hook, adds some).
	said=$(grep '^oci-sockopt-hook: ' <<<"$out")
	if [ -n "${5:-}" ]; then
		[ "$(grep -c . <<<"$said")" = 1 ] && [[ $said =~ $5 ]] || ok=1
	else
		[ -z "$said" ] || ok=1
	fi
	tap_ok $ok "hook, $2: exit $3, $4 program(s) of ours on the cgroup${5:+, one line on stderr}" ||
		tap_diag "state: $state" "exit $rc, $progs program(s); stderr:" "$out"
}

# jq programs: $id, $pid and $bundle are jq's variables.
# shellcheck disable=SC2016
RUNC='{ociVersion: "1.0.2", id: $id, pid: $pid, bundle: $bundle}'
# shellcheck disable=SC2016
CRUN='{ociVersion: "1.0.0", id: $id, pid: $pid, bundle: $bundle, root: "/run/crun"}'
feed "$RUNC + {status: \"running\"}" "runc poststart (running)" 0 0
feed "$CRUN + {status: \"starting\"}" "crun startContainer (starting)" 0 0
feed "$RUNC + {status: \"paused\"}" "paused" 0 0
feed "$RUNC + {status: \"\"}" "empty status" 0 0
feed "$RUNC + {status: \"Creating\"}" "status 'Creating' (case matters)" 0 0
feed "$RUNC" "no status" 1 0 "lacks 'status'"
feed "$RUNC + {status: \"creating\"}" "runc prestart (creating)" 0 3
feed "$RUNC + {status: \"running\"}" "runc poststart after the attach" 0 3
end_init
# shellcheck disable=SC2016
feed '{id: $id, status: "stopped"}' "podman poststop (stopped, no pid)" 0 0
[ ! -e "$CT_STATE_DIR/$ID.json" ]
tap_ok $? "podman-style poststop dropped the record"
start_init
feed "$CRUN + {status: \"created\"}" "crun prestart (created)" 0 3
end_init
feed "$CRUN + {status: \"stopped\", pid: 0}" "crun poststop (stopped, pid 0)" 0 0
rmdir "$CG"

# --- real containers whose every hook runs `hook` ------------------------

# all_hook BUNDLE: prestart, poststart and poststop all run `hook`.
all_hook()
{
	local cmd

	cmd=$(jq -c --arg hook "$HOOK" --arg cfg "$DEFAULTS" \
		'{path: $hook, args: [$hook, "--config", $cfg, "hook"], timeout: 30}
		 + (.hooks.prestart[0] | {env})' "$1/config.json")
	jq --argjson h "$cmd" '.hooks = {prestart: [$h], poststart: [$h], poststop: [$h]}' \
		"$1/config.json" >"$1/config.json.new" && mv "$1/config.json.new" "$1/config.json"
}

declare -A POSTSTART=(
	[runc]="policy already attached: nothing to do"
	[crun]="status 'running': nothing to do at this stage"
)
for rt in runc crun; do
	b=$(ct_bundle -r "$rt" "$rt-allhook" -- sh -c 'sockcheck set-mark 5; sleep 60')
	all_hook "$b"
	: >"$LOG"
	ct_start "$rt" "$(ct_id "$rt-allhook")" "$b" '^setsockopt='
	tap_is "$(cat "$CT_OUT")" "setsockopt=EPERM" \
		"$rt, hook at prestart, poststart and poststop: the defaults hold (SO_MARK gives EPERM)" ||
		tap_diag "exit $CT_RC: $(cat "$CT_ERR")" "$(cat "$b/hook.err" 2>/dev/null)"
	for _ in $(seq 1 50); do
		grep -qF "${POSTSTART[$rt]}" "$LOG" && break
		sleep 0.1
	done
	tap_like "$(cat "$LOG")" "container $(ct_id "$rt-allhook"): ${POSTSTART[$rt]}" \
		"$rt poststart: the hook attaches nothing more (${POSTSTART[$rt]})"
	ct_delete "$rt" "$(ct_id "$rt-allhook")"
	tap_like "$(cat "$LOG")" "container $(ct_id "$rt-allhook"): released cgroup" \
		"$rt poststop: the hook released the container"
done

ct_check_same "at the end: BPF programs, hook state and cgroups are as before" "$BASE"
tap_done
