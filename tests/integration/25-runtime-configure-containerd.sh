#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `oci-sockopt-hook runtime configure --runtime containerd` on this host's
# Debian 12 containerd 1.6, a private instance as
# 59-containerd-cri.sh runs it: config version 2, the node's CRI section
# (runc, the pause image, the cgroupfs driver) in the main config, and an
# imports line. Pods through CRI with kubelet's messages (tests/cri/cri.py).
#  - without an imports line: one line saying what to add, exit 1, nothing
#    written;
#  - --dry-run: a diff of the three files, nothing written;
#  - --nri (any mode): refused in one line, 1.6 has no NRI, nothing written;
#  - configure: the drop-in (the node's whole CRI section plus the
#    handlers sockopt and sockopt-bypass: containerd 1.x replaces plugin
#    sections whole) and two base specs; again: "nothing to change", the
#    files untouched;
#  - containerd started on it: `config dump` keeps runc and the pause
#    image and has both handlers; a pod on each handler gets its policy and
#    its handler's name in SH_WIRING_HANDLER_KEY; the open-files limits of
#    a pod on sockopt are the default handler's (no ctr oci spec rlimits);
#    CAP_NET_RAW is gone from a sockopt pod unless it adds NET_RAW, and
#    still there on the default handler;
#  - a file imported after ours that holds a CRI section (1.x replaces
#    ours with it): configure refuses, nothing changes;
#  - a hook binary others may write, an operator config the hook refuses:
#    refused before anything is written;
#  - unconfigure: the files and the spec directory go; restarted,
#    containerd has no handler sockopt (a pod on it fails) and its config
#    dump is what it was before configure; nothing of ours is left.
#
# Modules: `cmd_runtime_config.c`, `wiring.c`, `wiring_ctd.c`, `wiring_spec.c`, `wiring_status.c`, `toml.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
# shellcheck source=../lib/cri.sh
. "$here/../lib/cri.sh"
# shellcheck source=../lib/ctd.sh
. "$here/../lib/ctd.sh"

ctd_require

ct_init
BASE=$(ct_snapshot)
ctd_init
CRI_DIR=$CT_TMP/cri
LOG=$CT_TMP/hook.log
HOOK_CONFIG=$(ct_config cri ". + {log_file: \"$LOG\"}")
mkdir -p "$CRI_DIR"
MAIN=$CTD/config.toml
DROPIN=$CTD/conf.d/99-oci-sockopt-hook.toml
SPECS=$CTD/oci-sockopt-hook
# shellcheck disable=SC2317 # the EXIT trap calls it
cleanup()
{
	ctd_cleanup
	ct_cleanup
}
trap cleanup EXIT

# configure ARGS...: the command as an operator runs it, with this test's
# main config, state and pin directories; sets OUT (stdout) and ERR.
configure()
{
	local rc

	OUT=$("$HOOK" --config "$HOOK_CONFIG" runtime "$@" --runtime containerd \
		--ctd-config "$MAIN" --hook-env "$CT_HOOK_PATH_ENV" \
		--hook-env "OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR" \
		--hook-env "OCI_SOCKOPT_HOOK_PIN_DIR=$CT_PIN_DIR" 2>"$CT_TMP/configure.err")
	rc=$?
	ERR=$(cat "$CT_TMP/configure.err")
	return $rc
}
tree() { (cd "$CTD" && find . -path ./root -prune -o -path ./state -prune -o -type f \
	! -name 'containerd.log' -print0 | sort -z | xargs -0 sha256sum); }
mkdir -p "$CT_TMP/no-hooksd"
# features: `features --json` as the agent would run it for this
# containerd (and no hooks.d file), into FEAT; label NAME: a label's value.
features()
{
	FEAT=$("$HOOK" --config "$HOOK_CONFIG" features --json --ctd-config "$MAIN" \
		--hooks-dir "$CT_TMP/no-hooksd" 2>/dev/null)
}
label() { jq -r --arg k "sockopt-hook.io/$1" '.labels[$k]' <<<"$FEAT"; }
wiring() { jq -c .wiring <<<"$FEAT"; }

# --- the main config without an imports line ---------------------------------

ctd_main_config "$MAIN" -
ctd_node_cri >>"$MAIN"
before=$(tree)
configure configure
rc=$?
tap_is "$rc $(wc -l <<<"$ERR")" "1 1" "no imports line: exit 1, one line on stderr" || tap_diag "$ERR"
tap_like "$ERR" "$MAIN imports no directory \(DIR/\*\.toml\); add \`imports = \[\"$CTD/conf.d/\*\.toml\"\]\` above its first \[table\]" \
	"it says what to add to the main config"
tap_is "$(tree)" "$before" "nothing written (the main config untouched, no drop-in, no spec)"

# --- --dry-run, configure, again ----------------------------------------------

ctd_main_config "$MAIN"
ctd_node_cri >>"$MAIN"
ctd_start "$MAIN"
VERSION=$CTD_VERSION
tap_like "$VERSION" '^containerd ' "containerd runs on the node's config: $VERSION" ||
	{ tap_diag "$(tail -n 30 "$CTD/containerd.log")"; tap_bail "containerd did not start"; }
DUMP_BEFORE=$(containerd --config "$MAIN" config dump 2>&1)
features
tap_is "$(label installed)" false "features before configure: installed=false"
tap_like "$(wiring)" '"missing":"containerd has no runtime handler sockopt' "and says why"
before=$(tree)
configure configure --dry-run
tap_is "$?" 0 "--dry-run: exit 0" || tap_diag "$ERR"
tap_like "$OUT" "$DROPIN: would create" "--dry-run names the drop-in"
tap_like "$OUT" "\+\[plugins\.\"io\.containerd\.grpc\.v1\.cri\"\.containerd\.runtimes\.sockopt-bypass\]" \
	"--dry-run shows the handlers in a diff"
tap_like "$OUT" "$SPECS/sockopt-base-spec.json: would create" "--dry-run names the base specs"
tap_is "$(tree)" "$before" "--dry-run writes nothing"

# --nri: the NRI plugin needs a containerd with NRI (1.7, 2.x)
for mode in service plugin pod; do
	OUT=$("$HOOK" --config "$HOOK_CONFIG" runtime configure --runtime containerd \
		--ctd-config "$MAIN" --nri "$mode" 2>"$CT_TMP/configure.err")
	rc=$?
	ERR=$(cat "$CT_TMP/configure.err")
	tap_is "$rc $(wc -l <<<"$ERR"):$OUT" "1 1:" "--nri $mode on containerd 1.6: exit 1, one line, nothing on stdout" ||
		tap_diag "$OUT" "$ERR"
done
tap_like "$ERR" "^oci-sockopt-hook: containerd 1\.6\.[^ ]+ has no NRI \(it came in 1\.7\): wire the handlers instead \(runtime configure without --nri\)$" \
	"it says containerd 1.6 has no NRI, and what to do instead"
tap_is "$(tree)" "$before" "--nri wrote nothing"

configure configure
tap_is "$?" 0 "configure: exit 0" || tap_diag "$ERR"
tap_is "$(grep -c ': created$' <<<"$OUT")" 3 "configure creates the drop-in and two base specs" ||
	tap_diag "$OUT"
tap_like "$OUT" "restart containerd to load the change" "it says to restart containerd"
tap_is "$(head -n1 "$DROPIN")" "# Written by \`oci-sockopt-hook runtime configure\`" \
	"the drop-in is marked as ours"
files=$(tree)
sleep 1.1 # a rewrite would show in the mtimes
stamps=$(stat -c '%n %Y' "$DROPIN" "$SPECS"/*.json)
configure configure
tap_is "$?" 0 "configure again: exit 0"
tap_like "$OUT" "containerd: nothing to change" "configure again: nothing to change"
tap_is "$(tree) $(stat -c '%n %Y' "$DROPIN" "$SPECS"/*.json)" "$files $stamps" \
	"configure again: the files untouched"

# The base specs: the node's defaults less rlimits and CAP_NET_RAW, our hooks.
spec=$SPECS/sockopt-base-spec.json
tap_is "$(jq -c '[.process.rlimits, .process.apparmorProfile, .linux.seccomp]' "$spec")" "[null,null,null]" \
	"base spec: no rlimits, apparmor profile or seccomp (what CRI clears for the default handler)"
tap_is "$(jq -r '.process.capabilities.bounding | index("CAP_NET_RAW")' "$spec")" null \
	"base spec: CAP_NET_RAW dropped"
want_caps=$(ctr oci spec | jq -c '.process.capabilities.bounding - ["CAP_NET_RAW"]')
tap_is "$(jq -c .process.capabilities.bounding "$spec")" "$want_caps" \
	"base spec: the other capabilities are ctr oci spec's"
tap_is "$(jq -r '.hooks.prestart[-1].path, .hooks.poststop[-1].args[1], .annotations["node.sockopt-hook.io/runtime-handler"]' "$spec" | tr '\n' ' ')" \
	"$HOOK poststop sockopt " "base spec: our hooks and the handler's name"
tap_is "$(jq -r '.annotations["node.sockopt-hook.io/runtime-handler"]' "$SPECS/sockopt-bypass-base-spec.json")" \
	sockopt-bypass "sockopt-bypass's base spec names its own handler"

# --- containerd on it, pods -----------------------------------------------------

features
tap_is "$(label installed)" false "features after configure, before the restart: installed=false"
tap_like "$(wiring)" "containerd was started before its handler's spec was written: restart it" "and says why"
ctd_stop
ctd_start "$MAIN"
VERSION=$CTD_VERSION
tap_like "$VERSION" '^containerd ' "containerd restarts on the configured config: $VERSION" ||
	{ tap_diag "$(tail -n 30 "$CTD/containerd.log")"; tap_bail "containerd did not start"; }
dump=$(containerd --config "$MAIN" config dump 2>&1)
sockopt=$(sed -n '/runtimes.sockopt\]/,/runtimes.sockopt.options\]/p' <<<"$dump")
[[ $dump == *'runtimes.runc]'* && $dump == *"sandbox_image = \"$CRI_PAUSE\""* &&
	$sockopt == *"base_runtime_spec = \"$spec\""* &&
	$sockopt == *'pod_annotations = ["sockopt-hook.io/*"]'* && $dump == *'runtimes.sockopt-bypass]'* ]]
tap_ok $? "config dump: runc and the pause image kept, handlers sockopt and sockopt-bypass with our base specs" ||
	tap_diag "$dump"
features
tap_is "$(label installed)" true "features after the restart: installed=true"
tap_is "$(wiring | jq -c '[.containerd, .bypass_handler]')" "[true,true]" \
	"features: containerd has both handlers"

cri_images "$CRI_DIR/images" "$CT_ROOTFS" "$CT_BUILD/tests/pause" ||
	tap_bail "cannot build the image archives"
for img in busybox pause; do
	ctr -a "$CRI_SOCK" -n k8s.io images import "$CRI_DIR/images/$img.tar" >/dev/null 2>&1
done
SLEEPER='["sleep", "3600"]'
# pod NAME HANDLER ANNOTATIONS CAPS: one container "app"; sets APP.
pod()
{
	local manifest

	manifest=$(cri_pod "$1" "$2" "$3" "[{\"name\": \"app\", \"command\": $SLEEPER, \"caps\": $4}]")
	CTD_UIDS+=("$(jq -r .metadata.uid "$manifest")")
	cri_run_pod "$manifest" || return 1
	APP=${CRI_IDS[app]}
}
# net_raw ID: whether CAP_NET_RAW (bit 13) is in the container's bounding set.
net_raw()
{
	local hex

	hex=$(cri_exec "$1" sh -c 'sed -n "s/^CapBnd:\t//p" /proc/self/status')
	[ -n "$hex" ] && echo $(((0x$hex >> 13) & 1))
}
# shellcheck disable=SC2016 # expanded by the container's shell
NOFILE='echo "$(ulimit -Sn) $(ulimit -Hn)"'

pod web sockopt '{"sockopt-hook.io/policy": "restricted"}' '["NET_ADMIN"]'
tap_ok $? "pod on handler sockopt with sockopt-hook.io/policy: restricted: runs" ||
	tap_diag "$(tail -n 20 "$CTD/containerd.log")" "$(cat "$LOG" 2>/dev/null)"
WEB=$APP
tap_is "$(cri_exec "$WEB" sockcheck get-mark; cri_exec "$WEB" sockcheck set-mark 5)" \
	"mark=EPERM"$'\n'"setsockopt=EPERM" "sockopt pod: the restricted policy holds (SO_MARK get and set EPERM)"
tap_is "$(cri_spec_annotations "$WEB" | jq -r '.["node.sockopt-hook.io/runtime-handler"]')" sockopt \
	"sockopt pod: its OCI spec names the handler"
tap_is "$(net_raw "$WEB")" 0 "sockopt pod: no CAP_NET_RAW"
pod bypass-class sockopt-bypass '{"sockopt-hook.io/policy": "restricted"}' '["NET_ADMIN"]'
tap_ok $? "pod on handler sockopt-bypass: runs"
tap_is "$(cri_exec "$APP" sockcheck get-mark)" "mark=EPERM" "sockopt-bypass pod: policed"
tap_is "$(cri_spec_annotations "$APP" | jq -r '.["node.sockopt-hook.io/runtime-handler"]')" sockopt-bypass \
	"sockopt-bypass pod: its OCI spec names its handler"
pod raw sockopt '{}' '["NET_RAW"]'
tap_is "$(net_raw "$APP")" 1 "a sockopt pod that adds NET_RAW has it"
pod default "" '{"sockopt-hook.io/policy": "restricted"}' '[]'
DEFAULT=$APP
tap_is "$(net_raw "$DEFAULT")" 1 "default handler: CAP_NET_RAW as containerd gives it"
tap_is "$(cri_exec "$DEFAULT" sockcheck get-mark)" "mark=0" "default handler: not policed"
nofile_sockopt=$(cri_exec "$WEB" sh -c "$NOFILE")
nofile_default=$(cri_exec "$DEFAULT" sh -c "$NOFILE")
tap_is "$nofile_sockopt" "$nofile_default" \
	"open files (soft hard) on handler sockopt = on the default handler ($nofile_default)"

# --- what configure refuses -------------------------------------------------------

ctd_node_cri >"$CTD/conf.d/zz-late.toml"
files=$(tree)
configure configure
tap_is "$?" 1 "a file imported after ours with a CRI section: configure refuses"
tap_like "$ERR" "does not load handler sockopt as $DROPIN has it .* one imported later replaces the CRI section" \
	"and says why" || tap_diag "$ERR"
tap_is "$(tree)" "$files" "nothing changed"
rm -f "$CTD/conf.d/zz-late.toml"

cp "$HOOK" "$CT_TMP/hook-copy" && chmod 0777 "$CT_TMP/hook-copy"
files=$(tree)
OUT=$("$HOOK" --config "$HOOK_CONFIG" runtime configure --runtime containerd \
	--ctd-config "$MAIN" --hook-path "$CT_TMP/hook-copy" 2>&1)
tap_like "$?:$OUT" "^1:.*must be an executable owned by root and writable by no one else" \
	"a hook binary others may write: refused"
BAD_CONFIG=$(ct_config bad '.policies.restricted.setsockopt[0].action = "explode"')
OUT=$("$HOOK" --config "$BAD_CONFIG" runtime configure --runtime containerd \
	--ctd-config "$MAIN" 2>&1)
tap_like "$?:$OUT" "^1:.*explode" "an operator config the hook refuses: refused with its reason"
tap_is "$(tree)" "$files" "neither wrote anything"

# --- unconfigure ----------------------------------------------------------------

rc=0
for entry in "${CRI_PODS[@]}"; do
	cri_remove_pod "${entry%% *}" || rc=1
done
tap_ok $rc "the pods stop and go"
configure unconfigure
tap_is "$?" 0 "unconfigure: exit 0" || tap_diag "$ERR"
tap_is "$(grep -c ': removed$' <<<"$OUT")" 3 "unconfigure removes the drop-in and the base specs" ||
	tap_diag "$OUT"
tap_ok "$([ ! -e "$DROPIN" ] && [ ! -e "$SPECS" ]; echo $?)" "the drop-in and the spec directory are gone"
ctd_stop
ctd_start "$MAIN"
VERSION=$CTD_VERSION
tap_like "$VERSION" '^containerd ' "containerd restarts without the drop-in"
tap_is "$(containerd --config "$MAIN" config dump 2>&1)" "$DUMP_BEFORE" \
	"config dump: as before configure"
features
tap_is "$(label installed)" false "features after unconfigure: installed=false"
manifest=$(cri_pod gone sockopt '{}' "[{\"name\": \"app\", \"command\": $SLEEPER}]")
CTD_UIDS+=("$(jq -r .metadata.uid "$manifest")")
out=$(cri run-pod "$manifest" 2>&1)
# containerd 1.6's getSandboxRuntime, the one refusal that says the
# handler is gone (not the pause image, not a failed hook).
tap_like "$out" 'failed to get sandbox runtime: no runtime for "sockopt" is configured' \
	"a pod on handler sockopt fails: the wiring is gone ($out)"
configure unconfigure
tap_like "$?:$OUT" "^0:.*nothing to change" "unconfigure again: nothing to change"

# --- the node as it was -------------------------------------------------------------

tap_is "$(find "$CT_STATE_DIR" -name '*.json' ! -name 'shared-*')" "" \
	"no record left in the hook's state dir"
ctd_remove_pod_cgroups
ct_check_same "BPF programs, hook state and cgroups (v2) are as before" "$BASE"
ctd_check_clean "after unconfigure"
tap_done
