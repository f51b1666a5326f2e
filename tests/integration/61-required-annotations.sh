#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# require_annotations: a pod that asks for a policy
# but whose annotations never reach the spec is loud, not silently
# unpoliced. The bundles carry what containerd and CRI-O write
# (tests/lib/k8s_annotations.py): containerd's from the example base
# runtime spec (examples/containerd/sockopt-hook-base-spec.json, whose
# annotations name the handler in node.sockopt-hook.io/runtime-handler)
# and the example pod_annotations; CRI-O's from the example's handler
# block (examples/crio/99-sockopt-hook.conf, default_annotations).
# Under runc (and crun once), with "require_annotations":
# {"runtime_handlers": ["sockopt"]}:
#  - a container of handler sockopt with no sockopt-hook.io/ key (the pod
#    forgot them, or containerd's handler lacks pod_annotations) is
#    refused: runc run fails, one line naming container, pod, namespace,
#    handler and the fix; no program, record or cgroup left;
#  - with on_missing "warn" it starts, and the log has the warning;
#  - with a key (examples/kubernetes/pod-restricted.yaml) it is policed;
#  - the pod's sandbox under the handler (it gets sandbox_policy), and a
#    container under another handler, are not refused;
#  - under podman's hooks.d matcher (the same as CRI-O's): the annotation
#    file alone never runs the hook for an unannotated container, the
#    handler file (examples/hooks.d-oci-sockopt-hook-handler.json) does,
#    and with both an annotated container is policed once;
#  - require_annotations.nri: a containerd workload container without the
#    NRI plugin's mark is refused with one line, one with it (and the key
#    the plugin copied) is policed, the sandbox passes;
#  - bad require_annotations values: one line from the hook (nothing
#    started) and from validate; validate and explain say what it does,
#    and validate warns when no hooks.d file would show the hook an
#    unannotated container.
#
# Modules: `policy.c`, `config.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
# shellcheck source=../lib/refuse.sh
. "$here/../lib/refuse.sh"
# shellcheck source=../lib/podman.sh
. "$here/../lib/podman.sh"

PY=/usr/bin/python3
$PY -c 'import yaml, tomllib' 2>/dev/null ||
	tap_skip_all "python3 with yaml (python3-yaml) and tomllib is needed"
ct_setup runc crun
EX=$CT_TOP/examples
LOG=$CT_TMP/hook.log
REQ='{runtime_handlers: ["sockopt"]}'
LOGGING=". + {log_file: \"$LOG\", log_level: \"debug\"}"
REFUSE=$(ct_config refuse "$LOGGING | .require_annotations = $REQ")
WARN=$(ct_config warn \
	"$LOGGING | .require_annotations = ($REQ + {on_missing: \"warn\"})")
FIX='pod_annotations must include "sockopt-hook[.]io/[*]"'

# --- the pods and the runtimes' configs -----------------------------------
mkdir -p "$CT_TMP/k8s"
# pod NAME [RUNTIME-CLASS [KEY=VALUE...]]: a pod with one container, app.
pod()
{
	local name=$1 rc=${2:-} a ann='{}'

	shift 2 2>/dev/null || shift $#
	for a in "$@"; do
		ann=$(jq -c --arg k "${a%%=*}" --arg v "${a#*=}" \
			'. + {($k): $v}' <<<"$ann")
	done
	jq -n --arg n "$name" --arg rc "$rc" --argjson ann "$ann" '{
		apiVersion: "v1", kind: "Pod",
		metadata: {name: $n, namespace: "shop", annotations: $ann},
		spec: ({containers: [{name: "app", image: "busybox"}]} +
			(if $rc == "" then {} else {runtimeClassName: $rc} end))
	}' >"$CT_TMP/k8s/$name.yaml"
	echo "$CT_TMP/k8s/$name.yaml"
}
FORGOT=$(pod forgot sockopt)
ASKED=$(pod asked sockopt sockopt-hook.io/policy=restricted)
OTHER=$(pod other runc)
# containerd: the example config plus a plain default handler "runc" (no
# base spec, no pod_annotations); and one whose sockopt handler lost its
# pod_annotations line. Next to them, the example base spec.
cp "$EX/containerd/sockopt-hook-base-spec.json" "$CT_TMP/k8s/"
CTRD=$CT_TMP/k8s/containerd.toml
{
	cat "$EX/containerd/config.toml"
	printf '\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
	printf '  runtime_type = "io.containerd.runc.v2"\n'
} >"$CTRD"
CTRD_DROP=$CT_TMP/k8s/containerd-no-pod-annotations.toml
grep -v '^ *pod_annotations' "$CTRD" >"$CTRD_DROP"
# CRI-O: the example's commented handler block, uncommented.
CRIO=$CT_TMP/k8s/crio.toml
sed -n '/^# \[crio\.runtime\.runtimes\.sockopt\]/,/^#$/p' \
	"$EX/crio/99-sockopt-hook.conf" | sed 's/^# \{0,1\}//' >"$CRIO"
tap_like "$(cat "$CRIO")" 'node\.sockopt-hook\.io/runtime-handler" = "sockopt"' \
	"the example CRI-O handler names itself in default_annotations"

# annotations POD RUNTIME CONTAINER [CONFIG]: what the runtime writes.
annotations()
{
	$PY "$here/../lib/k8s_annotations.py" "$@"
}

# base_spec_bundle NAME CONFIG ANNOTATIONS-JSON [RT]: a bundle made from the
# example containerd base spec, as containerd makes it, running
# `sockcheck all`, its hooks pointed at the build, CONFIG and our state.
base_spec_bundle()
{
	local b=$CT_TMP/bundles/$1 extra='{}'

	mkdir -p "$b"
	case ${4:-runc} in
	crun) extra=$(jq -cn --arg f "$b/hook.err" '{"run.oci.hooks.stderr": $f}') ;;
	esac
	# shellcheck disable=SC2016 # jq variables
	jq --argjson a "$3" --argjson x "$extra" --arg hook "$HOOK" \
		--arg cfg "OCI_SOCKOPT_HOOK_CONFIG=$2" \
		--arg state "OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR" \
		--arg rootfs "$CT_ROOTFS" --arg path "$CT_HOOK_PATH_ENV" '
		.annotations = $a + $x |
		.hooks |= map_values(map(.path = $hook | .env = [$path, $cfg, $state])) |
		.root = {path: $rootfs, readonly: true} |
		.process.terminal = false | .process.args = ["sockcheck", "all"] |
		.process.env = [$path]' \
		"$CT_TMP/k8s/sockopt-hook-base-spec.json" >"$b/config.json" || return 1
	echo "$b"
}

val()
{
	sed -n "s/^$1=//p" "$CT_OUT" | head -n 1
}

# --- containerd: refused ---------------------------------------------------
ann=$(annotations "$FORGOT" containerd app "$CTRD")
tap_like "$ann" '"node.sockopt-hook.io/runtime-handler": "sockopt"' \
	"containerd, handler sockopt: the base spec's handler annotation reaches the spec"
for rt in runc crun; do
	b=$(base_spec_bundle "forgot-$rt" "$REFUSE" "$ann" $rt)
	refused $rt "forgot-$rt" "$b" \
		"container 'app' of pod 'forgot' in namespace 'shop' runs under runtime handler 'sockopt'" \
		"carries no sockopt-hook.io/ policy annotation" "$FIX" \
		"refused by require_annotations in $REFUSE"
done

ann=$(annotations "$ASKED" containerd app "$CTRD_DROP")
tap_is "$(jq -r '."sockopt-hook.io/policy" // "dropped"' <<<"$ann")" dropped \
	"containerd without pod_annotations drops the pod's sockopt-hook.io/policy"
b=$(base_spec_bundle dropped "$REFUSE" "$ann")
refused runc dropped "$b" "container 'app' of pod 'asked'" "$FIX"

# What the node did before require_annotations: the same container starts,
# unpoliced, and nothing says so (below warning level).
ann=$(annotations "$ASKED" containerd app "$CTRD_DROP")
b=$(base_spec_bundle silent "$(ct_config silent "$LOGGING")" "$ann")
: >"$LOG"
started runc silent "$b"
tap_is "$(grep -c 'warning\|error' "$LOG")" 0 \
	"without require_annotations the dropped pod runs unpoliced, and nothing is logged above info"

# --- containerd: warn ------------------------------------------------------
ann=$(annotations "$FORGOT" containerd app "$CTRD")
b=$(base_spec_bundle warn "$WARN" "$ann")
: >"$LOG"
started runc warn "$b"
tap_like "$(grep -c "warning: .*container 'app' of pod 'forgot' in namespace 'shop' runs under runtime handler 'sockopt'.*on_missing is 'warn'" "$LOG")" '^1$' \
	"on_missing warn: one warning in the log, naming the container and handler"
tap_like "$(cat "$LOG")" "no socket policy applies: nothing to attach" \
	"on_missing warn: nothing attached"

# --- containerd: not refused -----------------------------------------------
ann=$(annotations "$EX/kubernetes/pod-restricted.yaml" containerd web "$CTRD")
b=$(base_spec_bundle keyed "$REFUSE" "$ann")
before=$(ct_snapshot)
ct_run runc "$(ct_id keyed)" "$b"
tap_is "$(val cc) $(val socket_inet6_stream) $(val "done")" "reno EPERM ok" \
	"containerd, examples/kubernetes/pod-restricted.yaml (sockopt-hook.io/policy): policed (cc forced, no IPv6)" ||
	ct_diag_run "$b"
ct_check_same "keyed: nothing left behind" "$before"

ann=$(annotations "$FORGOT" containerd POD "$CTRD")
b=$(base_spec_bundle sandbox "$REFUSE" "$ann")
before=$(ct_snapshot)
ct_run runc "$(ct_id sandbox)" "$b"
tap_is "$(val socket_inet_stream) $(val socket_inet6_stream) $(val "done")" "EPERM EPERM ok" \
	"containerd, the pod sandbox under handler sockopt: not refused; it gets sandbox_policy (no inet socket)" ||
	ct_diag_run "$b"
ct_check_same "sandbox: nothing left behind" "$before"

# Handler runc has no base spec, so neither the hook nor the handler key;
# the hook runs anyway here (as an "always" hooks.d file under NRI would).
ann=$(annotations "$OTHER" containerd app "$CTRD")
args=()
while IFS= read -r kv; do args+=(-a "$kv"); done < <(jq -r 'to_entries[] | "\(.key)=\(.value)"' <<<"$ann")
b=$(ct_bundle -c "$REFUSE" "${args[@]}" other -- sockcheck all)
started runc other "$b"

# --- require_annotations.nri: the NRI plugin's mark -----------------------
# The fallback of a node that relies on the NRI plugin: the hook runs for
# every container of the default handler (here: in the bundle), and a
# workload container that the plugin did not mark is refused.
NRI_CFG=$(ct_config nri "$LOGGING | .require_annotations = {nri: true}")
ann=$(annotations "$OTHER" containerd app "$CTRD")
args=()
while IFS= read -r kv; do args+=(-a "$kv"); done < <(jq -r 'to_entries[] | "\(.key)=\(.value)"' <<<"$ann")
b=$(ct_bundle -c "$NRI_CFG" "${args[@]}" nri-unmarked -- sockcheck all)
refused runc nri-unmarked "$b" \
	"container 'app' of pod 'other' in namespace 'shop' was not handled by the NRI plugin [(]no node[.]sockopt-hook[.]io/nri annotation[)]" \
	"refused by require_annotations.nri in $NRI_CFG"
b=$(ct_bundle -c "$NRI_CFG" "${args[@]}" -a node.sockopt-hook.io/nri=delivered \
	-a sockopt-hook.io/policy=restricted nri-marked -- sockcheck all)
before=$(ct_snapshot)
ct_run runc "$(ct_id nri-marked)" "$b"
tap_is "$(val cc) $(val socket_inet6_stream) $(val "done")" "reno EPERM ok" \
	"require_annotations.nri: a container the plugin marked, with the key it copied, is policed" ||
	ct_diag_run "$b"
ct_check_same "nri-marked: nothing left behind" "$before"
ann=$(annotations "$OTHER" containerd POD "$CTRD")
args=()
while IFS= read -r kv; do args+=(-a "$kv"); done < <(jq -r 'to_entries[] | "\(.key)=\(.value)"' <<<"$ann")
b=$(ct_bundle -c "$NRI_CFG" "${args[@]}" nri-sandbox -- sockcheck all)
before=$(ct_snapshot)
ct_run runc "$(ct_id nri-sandbox)" "$b"
tap_is "$(val socket_inet_stream) $(val "done")" "EPERM ok" \
	"require_annotations.nri: the pod's sandbox (no mark) is not refused; it gets sandbox_policy (no inet socket)" ||
	ct_diag_run "$b"
ct_check_same "nri-sandbox: nothing left behind" "$before"

# --- CRI-O -----------------------------------------------------------------
# crio_bundle NAME POD CONTAINER: a bundle with CRI-O's annotations.
crio_bundle()
{
	local kv args=()

	while IFS= read -r kv; do
		args+=(-a "$kv")
	done < <(annotations "$2" crio "$3" "$CRIO" |
		jq -r 'to_entries[] | "\(.key)=\(.value)"')
	ct_bundle -c "$REFUSE" "${args[@]}" "$1" -- sockcheck set-mark 5
}
b=$(crio_bundle crio-forgot "$FORGOT" app)
refused runc crio-forgot "$b" \
	"container 'app' of pod 'forgot' in namespace 'shop' runs under runtime handler 'sockopt'" "$FIX"
b=$(crio_bundle crio-asked "$ASKED" app)
ct_run runc "$(ct_id crio-asked)" "$b"
tap_is "$(cat "$CT_OUT")" "setsockopt=EPERM" \
	"CRI-O, handler sockopt, sockopt-hook.io/policy=restricted: policed (SO_MARK gives EPERM)" ||
	ct_diag_run "$b"
b=$(crio_bundle crio-pause "$FORGOT" POD)
ct_run runc "$(ct_id crio-pause)" "$b"
tap_is "$(cat "$CT_OUT")" "socket=EPERM" \
	"CRI-O, the pause container under handler sockopt: not refused; it gets sandbox_policy (no inet socket)" ||
	ct_diag_run "$b"

# --- hooks.d, under podman's matcher ----------------------------------------
# podman decides from hooks.d files as CRI-O does (containers/common
# pkg/hooks/1.0.0/when.go). The annotation file alone never runs the hook
# for a container without our keys; examples/hooks.d-oci-sockopt-hook-handler.json
# next to it does, for the handler's containers (and an annotated one then
# gets the hook twice per stage, which is harmless).
if command -v podman >/dev/null && command -v conmon >/dev/null; then
	pm_setup "$CT_TMP/podman" "$CT_PREFIX-podman" && mkdir -p "$PM/hooks" || exit 1
	# shellcheck disable=SC2317 # run by the EXIT trap
	pm_cleanup()
	{
		# the containers are --rm: any left is one a timeout cut short
		timeout 30 "${PODMAN[@]}" rm -fa >/dev/null 2>&1
		pm_remove
		ct_cleanup
	}
	trap pm_cleanup EXIT
	# hooksd FILE: the example hooks.d file, run with the test's hook,
	# config and state dir.
	hooksd()
	{
		jq --arg hook "$HOOK" --arg cfg "OCI_SOCKOPT_HOOK_CONFIG=$REFUSE" \
			--arg state "OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR" \
			'.hook.path = $hook | .hook.env = [$cfg, $state]' \
			"$EX/$1" >"$PM/hooks/$1"
	}
	hooksd hooks.d-oci-sockopt-hook.json
	# pm NAME [--annotation K=V...]: a CRI-O-style container "app" under
	# handler sockopt (the keys CRI-O and its default_annotations write).
	pm()
	{
		local name=$1

		shift
		PM_OUT=$(timeout -k 5 "$CT_TIMEOUT" "${PODMAN[@]}" run --rm \
			--hooks-dir "$PM/hooks" --cgroup-parent "/$CGPARENT" \
			--net=none --cap-add NET_ADMIN \
			--ulimit "nofile=$NOFILE:$NOFILE" --ulimit "nproc=$NPROC:$NPROC" \
			--annotation "$HANDLER_KEY=sockopt" \
			--annotation io.kubernetes.cri-o.ContainerType=container \
			--annotation io.kubernetes.container.name=app \
			--annotation io.kubernetes.pod.name="$name" \
			--annotation io.kubernetes.pod.namespace=shop \
			"$@" --rootfs "$CT_ROOTFS" /bin/sockcheck set-mark 5 2>"$PM/$name.err")
		PM_RC=$?
	}
	HANDLER_KEY=node.sockopt-hook.io/runtime-handler
	# The runc containers above free their programs with their cgroups,
	# which the kernel does asynchronously: wait until that has settled.
	before=$(ct_snapshot progs state)
	for _ in $(seq 1 30); do
		sleep 0.2
		now=$(ct_snapshot progs state)
		[ "$now" = "$before" ] && break
		before=$now
	done
	: >"$LOG"
	pm annotation-file-only
	tap_is "$PM_RC $PM_OUT $(grep -c . "$LOG")" "0 setsockopt=ok 0" \
		"podman, only the annotation hooks.d file: a container without our keys never reaches the hook" ||
		tap_diag "$(cat "$PM/annotation-file-only.err")"
	hooksd hooks.d-oci-sockopt-hook-handler.json
	pm handler-file
	[ "$PM_RC" != 0 ] && [ -z "$PM_OUT" ]
	tap_ok $? "podman, with the handler hooks.d file: the container without our keys does not start (exit $PM_RC)"
	tap_like "$(cat "$LOG")" "error: .*container 'app' of pod 'handler-file' in namespace 'shop' runs under runtime handler 'sockopt' .*refused by require_annotations" \
		"podman, with the handler hooks.d file: the log holds the refusal"
	: >"$LOG"
	pm both-files --annotation sockopt-hook.io/policy=restricted
	tap_is "$PM_OUT" "setsockopt=EPERM" \
		"podman, both hooks.d files match an annotated container: policed (SO_MARK gives EPERM)" ||
		tap_diag "$(cat "$PM/both-files.err")" "$(cat "$LOG")"
	tap_is "$(grep -c 'attached 3 program' "$LOG") $(grep -c 'policy already attached' "$LOG") $(grep -c 'error:' "$LOG")" "1 1 0" \
		"podman, both files: the second prestart finds the policy attached, no stage fails" ||
		tap_diag "$(cat "$LOG")"
	ct_check_same "podman: BPF programs and hook state are as before" "$before" progs state
else
	tap_skip 5 "podman or conmon is not installed"
fi

# --- bad values, validate and explain --------------------------------------
bad()
{
	local name=$1 req=$2 want=$3 cfg b out

	cfg=$(ct_config "bad-$name" ".require_annotations = $req")
	b=$(ct_bundle -c "$cfg" -a sockopt-hook.io/policy=restricted \
		"bad-$name" -- sockcheck all)
	refused runc "bad-$name" "$b" "invalid operator config .*: $want"
	out=$("$HOOK" validate "$cfg" 2>&1)
	tap_ok $(($? == 0)) "validate refuses $name" || tap_diag "$out"
	tap_is "$(grep -c . <<<"$out")" 1 "validate: one line for $name"
	tap_like "$out" "$want" "validate names it: $want"
}
bad upper '{runtime_handlers: ["Sockopt"]}' \
	"require_annotations.runtime_handlers\\[0\\]: 'Sockopt' is not a runtime handler name"
bad empty '{runtime_handlers: []}' \
	"require_annotations.runtime_handlers: needs at least one runtime handler"
bad action '{runtime_handlers: ["sockopt"], on_missing: "deny"}' \
	"require_annotations.on_missing: unknown value 'deny' \\(expected 'refuse' or 'warn'\\)"

out=$("$HOOK" validate "$REFUSE" 2>&1)
tap_like "$out" "require_annotations: a Kubernetes container .*node.sockopt-hook.io/runtime-handler is 'sockopt'.* refused at prestart" \
	"validate says what require_annotations does"
tap_is "$("$HOOK" validate --json "$REFUSE" 2>/dev/null | jq -c '.require_annotations | [.runtime_handlers, .on_missing]')" \
	'[["sockopt"],"refuse"]' "validate --json: require_annotations"
if $PY -c 'import jsonschema' 2>/dev/null; then
	$PY - "$CT_TOP/schemas/config.schema.json" "$REFUSE" "$WARN" <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
cls = jsonschema.validators.validator_for(schema)
sys.exit(any(list(cls(schema).iter_errors(json.load(open(f))))
             for f in sys.argv[2:]))
PY
	tap_ok $? "the JSON Schema accepts require_annotations with refuse and warn"
else
	tap_skip "the JSON Schema accepts require_annotations" "no python3-jsonschema"
fi
mkdir -p "$CT_TMP/hd-narrow" "$CT_TMP/hd-handler"
cp "$EX/hooks.d-oci-sockopt-hook.json" "$CT_TMP/hd-narrow/"
cp "$EX/hooks.d-oci-sockopt-hook.json" "$EX/hooks.d-oci-sockopt-hook-handler.json" \
	"$CT_TMP/hd-handler/"
out=$("$HOOK" validate --hooks-dir "$CT_TMP/hd-narrow" "$REFUSE" 2>&1 >/dev/null)
tap_like "$out" "warning: require_annotations of .* will not see unannotated containers where hooks.d files run the hook .*hooks.d-oci-sockopt-hook.json \\(when.annotations\\)" \
	"validate warns when the only hooks.d file runs the hook for annotated containers alone"
out=$("$HOOK" validate --hooks-dir "$CT_TMP/hd-handler" "$REFUSE" 2>&1 >/dev/null |
	grep -v 'TCP autotuning')
tap_is "$out" "" "validate: no warning with the handler hooks.d file next to it (but the node's autotuning one, 85-sysctls.sh)"
b=$CT_TMP/bundles/forgot-runc
out=$("$HOOK" explain --config "$REFUSE" --bundle "$b" 2>/dev/null)
tap_ok $(($? == 0)) "explain exits non-zero for a container prestart would refuse"
tap_like "$out" "refused: .*container 'app' of pod 'forgot'.*runtime handler 'sockopt'" \
	"explain shows the refusal"

tap_done
