#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The CDI spec of kind sockopt-hook.io/policy. `cdi generate` validates
# against CDI's own JSON schema (from Debian's CDI reference, through
# scripts/cdi-schema.sh), and a spec with a device lacking its edits does
# not, so the check can fail; `validate` lists the same devices. Then
# real podman (4.3, CDI 0.5) reads the spec that `runtime configure --cdi`
# wrote (into /var/run/cdi, which podman reads; removed at the end):
# `podman run --device sockopt-hook.io/policy=restricted` with no
# annotation and no hooks.d file gets the policy (SO_MARK refused, the
# SO_RCVBUF clamp read back, TCP_CONGESTION forced to reno), and status
# names the device as the source; the bypass device alone needs no
# policy; once the config no longer allows restricted, the stale spec's
# device is refused in one line (in the log file: crun drops stderr),
# validate says the spec is stale, `cdi refresh` drops the device and
# podman refuses it itself; unconfigure removes the spec. Nothing is left.
#
# Modules: `container.c`, `policy.c`, `wiring_cdi.c`, `cmd_cdi.c`, `cmd_stages.c`, `cmd_validate.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
# shellcheck source=../lib/podman.sh
. "$here/../lib/podman.sh"

ct_require crun
tap_require_cmd podman conmon
ct_init
ct_hugetlb_setup || {
	echo "Bail out! cannot mount the v1 hugetlb hierarchy"
	exit 1
}
PY=/usr/bin/python3
$PY -c 'import jsonschema' 2>/dev/null || tap_skip_all "python3-jsonschema is not installed"

PM=$CT_TMP/podman
LOG=$PM/hook.log
CDI_DIR=/var/run/cdi
SPEC=$CDI_DIR/sockopt-hook.io-policy.json
MADE_CDI_DIR=0
mkdir -p "$CT_TMP/configs" || exit 1
pm_setup "$PM" "$CT_PREFIX-cdi" || exit 1

# shellcheck disable=SC2317 # run by the EXIT trap
cdi_cleanup()
{
	pm_remove
	# only a spec of ours, only the directory this test made
	[ "$(jq -r .kind "$SPEC" 2>/dev/null)" = sockopt-hook.io/policy ] && rm -f "$SPEC"
	[ "$MADE_CDI_DIR" = 1 ] && rmdir "$CDI_DIR" 2>/dev/null
	ct_cleanup
}
trap cdi_cleanup EXIT
BASE=$(ct_snapshot progs state)

if [ -e "$SPEC" ]; then
	echo "Bail out! $SPEC exists: another run's, or the machine's"
	exit 1
fi
[ -d "$CDI_DIR" ] || { mkdir -p "$CDI_DIR" && MADE_CDI_DIR=1; }

CONF=$CT_TMP/configs/cdi.json
jq --arg log "$LOG" '. + {log_file: $log, log_level: "debug"}' "$CT_EXAMPLE_CONFIG" >"$CONF"
: >"$LOG"

# --- the spec against CDI's schema ---------------------------------------
schema_dir=$("$CT_TOP/scripts/cdi-schema.sh" "$CT_BUILD" 2>"$CT_TMP/schema.err" | tail -n1)
rc=$?
[ "$rc" = 77 ] && tap_skip_all "CDI's schema cannot be had here: $(tail -n1 "$CT_TMP/schema.err")"
tap_ok "$rc" "CDI's JSON schema from Debian's CDI reference ($(cat "$schema_dir/VERSION" 2>/dev/null))" ||
	tap_diag "$(cat "$CT_TMP/schema.err")"

# cdi_valid FILE: CDI's schema.json (with its defs.json) over FILE.
cdi_valid()
{
	$PY - "$schema_dir" "$1" <<'PY'
import json, os, sys, jsonschema
d = sys.argv[1]
schema = json.load(open(os.path.join(d, "schema.json")))
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
resolver = jsonschema.RefResolver("file://" + d + "/", schema)
errors = sorted(cls(schema, resolver=resolver).iter_errors(json.load(open(sys.argv[2]))), key=str)
for e in errors:
    print("%s: %s" % ("/".join(map(str, e.absolute_path)) or "$", e.message))
sys.exit(1 if errors else 0)
PY
}

gen=$CT_TMP/generated.json
out=$("$HOOK" --config "$CONF" cdi generate >"$gen" 2>&1)
tap_ok $? "cdi generate" || tap_diag "$out"
out=$(cdi_valid "$gen" 2>&1)
tap_ok $? "the generated spec validates against CDI's schema.json" || tap_diag "$out"
jq 'del(.devices[0].containerEdits)' "$gen" >"$CT_TMP/broken.json"
out=$(cdi_valid "$CT_TMP/broken.json" 2>&1)
tap_ok $((!$?)) "a device without containerEdits does not (the check can fail)" || tap_diag "$out"
tap_is "$(jq -c '[.kind, [.devices[].name]]' "$gen")" \
	'["sockopt-hook.io/policy",["restricted","bulk","setonly","bypass-prot-mem"]]' \
	"kind sockopt-hook.io/policy: a device per policy in allow_policies, and the bypass"
tap_is "$(jq -c '[.devices[0].containerEdits.hooks[] | [.hookName, .path, .args[1:]]]' "$gen")" \
	"[[\"createRuntime\",\"$HOOK\",[\"createRuntime\",\"--cdi-device\",\"sockopt-hook.io/policy=restricted\"]],[\"poststop\",\"$HOOK\",[\"poststop\",\"--cdi-device\",\"sockopt-hook.io/policy=restricted\"]]]" \
	"each device runs the hook's createRuntime and poststop with its own name"
tap_is "$("$HOOK" validate --json "$CONF" | jq -c .cdi_devices)" \
	'["restricted","bulk","setonly","bypass-prot-mem"]' "validate --json lists the same devices"

# --- podman --device ------------------------------------------------------
out=$("$HOOK" --config "$CONF" runtime configure --cdi --cdi-dir "$CDI_DIR" \
	--hook-env "OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR" \
	--hook-env "$CT_HOOK_PATH_ENV" 2>&1)
tap_like "$?:$out" "^0:$SPEC: created" "runtime configure --cdi writes $SPEC" || tap_diag "$out"
out=$(cdi_valid "$SPEC" 2>&1)
tap_ok $? "the installed spec validates against CDI's schema too" || tap_diag "$out"
out=$("$HOOK" --config "$CONF" runtime configure --cdi --cdi-dir "$CDI_DIR" \
	--hook-env "OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR" \
	--hook-env "$CT_HOOK_PATH_ENV" 2>&1)
tap_like "$out" "nothing to change" "a second run changes nothing" || tap_diag "$out"

# run NAME [PODMAN-RUN-ARGS...] -- ARGS...: podman run with no hooks.d
# directory at all (an empty one), so that only CDI brings the hook. Sets
# OUT, RC, CID and NEWLOG.
run()
{
	local name=$1 lines pre=() cidfile

	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		pre+=("$1")
		shift
	done
	shift
	cidfile=$PM/$name.cid
	mkdir -p "$PM/no-hooks"
	lines=$(wc -l <"$LOG")
	OUT=$(timeout -k 5 "$CT_TIMEOUT" "${PODMAN[@]}" run --rm --hooks-dir "$PM/no-hooks" \
		--cidfile "$cidfile" --cgroup-parent "/$CGPARENT" --net=none \
		--cap-add NET_ADMIN --ulimit "nofile=$NOFILE:$NOFILE" \
		--ulimit "nproc=$NPROC:$NPROC" "${pre[@]}" \
		--rootfs "$CT_ROOTFS" "$@" 2>"$PM/$name.err")
	RC=$?
	CID=$(cat "$cidfile" 2>/dev/null)
	[ -n "$CID" ] && CIDS+=("$CID")
	NEWLOG=$(sed -n "$((lines + 1)),\$p" "$LOG" | grep -v ': libbpf: ')
}
val() { sed -n "s/^$1=//p" <<<"$OUT" | head -n1; }

run restricted --device sockopt-hook.io/policy=restricted -- /bin/sockcheck all
tap_is "$(val setsockopt)" EPERM "podman --device sockopt-hook.io/policy=restricted: SO_MARK gives EPERM" ||
	pm_diag restricted
rcv=$(val rcvbuf)
[[ $rcv =~ ^[0-9]+$ ]] && [ "$rcv" -le 131072 ]
tap_ok $? "SO_RCVBUF of 4 MiB reads back <= 131072, the clamp (got $rcv)" || pm_diag restricted
tap_is "$(val cc)" reno "TCP_CONGESTION cubic reads back reno: forced" || pm_diag restricted
[[ $NEWLOG == *"container $CID: attached"*"policy 'restricted'"* ]]
tap_ok $? "the hook logged the attach" || pm_diag restricted
[[ $NEWLOG == *"container $CID: released"* ]]
tap_ok $? "the device's poststop released it" || pm_diag restricted

run plain -- /bin/sockcheck set-mark 5
tap_is "$OUT:$NEWLOG" "setsockopt=ok:" "podman, no device: no hook runs, SO_MARK works" || pm_diag plain

run detached -d --device sockopt-hook.io/policy=restricted -- /bin/sleep 60
st=$(OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR "$HOOK" status --json 2>&1)
tap_is "$(jq -r --arg id "$CID" '.[] | select(.id == $id) | .policy' <<<"$st" 2>&1)" restricted \
	"status shows the CDI-policed container with its policy" || tap_diag "$st"
timeout 30 "${PODMAN[@]}" rm -f -t 0 "$CID" >/dev/null 2>&1

# The bypass device asks for bypass-prot-mem=true: on a kernel without
# SK_BPF_BYPASS_PROT_MEM, on_unsupported "fail" (the example's) refuses it
# and names the device; with it, the container runs with no policy.
run bypass --device sockopt-hook.io/policy=bypass-prot-mem -- /bin/sockcheck set-mark 5
if [ -e /proc/sys/net/core/bypass_prot_mem ]; then
	[ "$RC" = 0 ] && [ "$OUT" = setsockopt=ok ]
	tap_ok $? "the bypass device alone: bypass, no policy (SO_MARK works)" || pm_diag bypass
else
	[ "$RC" != 0 ] && [[ $NEWLOG == *"bypass-prot-mem is requested (by CDI device sockopt-hook.io/policy=bypass-prot-mem) but this kernel lacks"* ]]
	tap_ok $? "the bypass device alone, on this kernel without the bypass: refused by on_unsupported, naming the device" ||
		pm_diag bypass
fi

run two --device sockopt-hook.io/policy=restricted --device sockopt-hook.io/policy=setonly -- \
	/bin/sockcheck set-mark 5
[ "$RC" != 0 ] && [ -z "$OUT" ]
tap_ok $? "two policy devices: the container does not start" || pm_diag two
tap_like "$NEWLOG" "CDI devices sockopt-hook\.io/policy=[a-z]+ and sockopt-hook\.io/policy=[a-z]+ refused: a container takes one policy" \
	"and the log says why, in one line" || pm_diag two

run conflict --device sockopt-hook.io/policy=restricted \
	--annotation sockopt-hook.io/policy=setonly -- /bin/sockcheck set-mark 5
[ "$RC" != 0 ] && [[ $NEWLOG == *"CDI device sockopt-hook.io/policy=restricted refused: annotation sockopt-hook.io/policy='setonly' asks otherwise"* ]]
tap_ok $? "a device and an annotation that disagree: refused, in one line" || pm_diag conflict

# --- a policy no longer allowed ------------------------------------------
jq '.annotations.allow_policies = ["bulk", "setonly"]' "$CONF" >"$CONF.new" && mv "$CONF.new" "$CONF"
run stale --device sockopt-hook.io/policy=restricted -- /bin/sockcheck set-mark 5
[ "$RC" != 0 ] && [ -z "$OUT" ]
tap_ok $? "restricted no longer allowed, the stale spec's device: the container does not start" ||
	pm_diag stale
tap_is "$(grep -c ' error: ' <<<"$NEWLOG")" 1 "one error line says why" || pm_diag stale
tap_like "$NEWLOG" "error: container $CID: CDI device sockopt-hook\.io/policy=restricted refused: 'restricted' is not in annotations\.allow_policies of $CONF" \
	"the line names the device and the setting" || pm_diag stale
out=$("$HOOK" validate "$CONF" 2>&1)
tap_like "$out" "$SPEC offers other CDI devices than $CONF gives now: run .oci-sockopt-hook cdi refresh." \
	"validate: the installed spec is stale" || tap_diag "$out"
out=$("$HOOK" cdi refresh --cdi-dir "$CDI_DIR" 2>&1)
tap_like "$?:$out" "^0:$SPEC: updated" "cdi refresh writes it again for the config its hook names" ||
	tap_diag "$out"
tap_is "$(jq -c '[.devices[].name]' "$SPEC")" '["bulk","setonly","bypass-prot-mem"]' \
	"restricted's device is gone"
out=$("$HOOK" validate "$CONF" 2>&1)
[[ $out != *"offers other CDI devices"* ]]
tap_ok $? "validate and the spec agree again" || tap_diag "$out"
run gone --device sockopt-hook.io/policy=restricted -- /bin/sockcheck set-mark 5
[ "$RC" != 0 ] && [ -z "$OUT" ] && grep -q "sockopt-hook.io/policy=restricted" "$PM/gone.err"
tap_ok $? "podman itself refuses the device now: $(tail -n1 "$PM/gone.err")" || pm_diag gone

out=$("$HOOK" --config "$CONF" runtime unconfigure --cdi --cdi-dir "$CDI_DIR" 2>&1)
tap_like "$?:$out" "^0:$SPEC: removed" "runtime unconfigure --cdi removes the spec" || tap_diag "$out"
tap_ok "$([ ! -e "$SPEC" ]; echo $?)" "no spec left"
left=$(timeout 30 "${PODMAN[@]}" ps -a -q 2>&1)
tap_is "$left" "" "podman left no container in its store"
ct_check_same "BPF programs and hook state are as before" "$BASE" progs state
tap_done
