#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The operator commands that need no container:
#  - explain, text and --json, for each example config with the annotations
#    that matter (defaults, named policies, bypass, per-container keys,
#    sandbox, refusals), from --bundle and from an OCI state on stdin, and
#    for the Kubernetes pod examples as CRI-O and containerd pass them on;
#  - validate's warnings about hooks.d files that would not bring the
#    config's defaults to every container (--hooks-dir);
#  - validate on every tests/bad-configs/NAME.json: it fails with one line
#    that names the JSON path and the message in NAME.expect
#    ("path=...", "message=..." (a substring), and optionally
#    "schema=reject" when schemas/config.schema.json must reject it too);
#  - probe --json on this host (root only);
#  - explain changes no kernel or hook state (root only).
#
# Modules: `cmd_explain.c`, `cmd_validate.c`, `policy.c`, `wiring_hooksd.c`, `lint.c`, `cmd_probe.c`
# Root: partly
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/host.sh
. "$here/../lib/host.sh"
top=$TESTS_TOP BUILD=$TESTS_BUILD
HOOK=${HOOK:-$BUILD/oci-sockopt-hook}
PY=/usr/bin/python3
EX=$top/examples
tap_require_cmd jq
[ -x "$HOOK" ] || tap_skip_all "hook not built: $HOOK (run make)"
$PY -c 'import yaml, tomllib, jsonschema' 2>/dev/null ||
	tap_skip_all "python3 with yaml, tomllib and jsonschema is needed"

TMP=$(mktemp -d /tmp/sockopt-hook-explain.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT
export OCI_SOCKOPT_HOOK_STATE_DIR=$TMP/state
mkdir "$TMP/state"

ROOT=0
if [ "$(id -u)" = 0 ] && command -v bpftool >/dev/null &&
	timeout 20 bpftool prog list >/dev/null 2>&1; then
	ROOT=1
	# Other suites' containers would change the program count.
	host_lock || tap_bail "cannot take $HOST_LOCK"
	PROGS_BEFORE=$(host_prog_count)
fi

# bundle NAME ANNOTATIONS-JSON: a bundle dir whose config.json carries
# the annotations; prints its path.
bundle()
{
	mkdir -p "$TMP/$1" &&
		jq -n --argjson a "$2" '{ociVersion: "1.0.2", annotations: $a}' \
			>"$TMP/$1/config.json" && echo "$TMP/$1"
}

# xcase NAME CONFIG ANNOTATIONS-JSON RC JQ-CHECK TEXT-REGEX...
#   explain --json must exit RC and make JQ-CHECK true; explain (text)
#   must exit RC and match every TEXT-REGEX.
xcase()
{
	local name=$1 cf=$2 ann=$3 want=$4 check=$5 cfg=$EX/$2 b json text rc re ok

	shift 5
	b=$(bundle "$name" "$ann")
	json=$("$HOOK" --config "$cfg" explain --json --bundle "$b" 2>"$TMP/err")
	rc=$?
	[ "$rc" = "$want" ] && jq -e "$check" <<<"$json" >/dev/null 2>&1
	tap_ok $? "explain --json, $cf, $name: exit $want and the expected fields" ||
		tap_diag "exit $rc; want: $check" "stdout:" "$json" "stderr:" "$(cat "$TMP/err")"
	if [ "$want" != 0 ]; then
		# A refusal is one line on stderr too, the same as in the JSON.
		[ "$(grep -c . "$TMP/err")" = 1 ] &&
			[ "$(cat "$TMP/err")" = "oci-sockopt-hook: $(jq -r .refused <<<"$json")" ]
		tap_ok $? "explain --json, $cf, $name: the refusal is also one line on stderr" ||
			tap_diag "stderr:" "$(cat "$TMP/err")"
	fi
	text=$("$HOOK" --config "$cfg" explain --bundle "$b" 2>/dev/null)
	rc=$?
	ok=0
	[ "$rc" = "$want" ] || ok=1
	for re in "$@"; do
		[[ $text =~ $re ]] || ok=1
	done
	tap_ok $ok "explain (text), $cf, $name: exit $want and the expected lines" ||
		tap_diag "exit $rc; stdout:" "$text"
}

P=sockopt-hook.io/policy
BP=sockopt-hook.io/bypass-prot-mem
ALL3='["sock_create","setsockopt","getsockopt"]'

xcase none config.json '{}' 0 \
	'.policy == null and .bypass_prot_mem == {"value": false, "source": "defaults.bypass_prot_mem"} and .programs == [] and .refused == null and .config == "'"$EX/config.json"'"' \
	$'^container: explain\nconfig: '"$EX/config.json"$'\npolicy: none\nbypass-prot-mem: false \\(from defaults\\.bypass_prot_mem\\)\nprograms that would attach: none$'
xcase restricted config.json "{\"$P\": \"restricted\"}" 0 \
	'.policy == {"name": "restricted", "source": "annotation sockopt-hook.io/policy"} and .programs == '"$ALL3"' and .socket == {"deny": [{"family": "AF_INET6"}, {"type": "SOCK_RAW"}, {"protocol": "IPPROTO_MPTCP"}], "mark": 7, "priority": 2} and .setsockopt_default == "allow" and [.setsockopt[].action] == ["deny", "deny", "deny", "clamp", "force"] and [.setsockopt[0:3][].option] == ["SO_MARK", "SO_PRIORITY", "IP_TOS"] and .setsockopt[3].max == 65536 and .setsockopt[4].value == "reno" and .getsockopt == [{"level": "SOL_SOCKET", "option": "SO_MARK", "action": "deny"}]' \
	$'\npolicy: restricted \\(from annotation sockopt-hook\\.io/policy\\)\n' \
	$'\nsocket: \\{ "deny": \\[ \\{ "family": "AF_INET6" \\}, \\{ "type": "SOCK_RAW" \\}, \\{ "protocol": "IPPROTO_MPTCP" \\} \\], "mark": 7, "priority": 2 \\}\n' \
	$'\nsetsockopt rules:\n  \\{ "level": "SOL_SOCKET", "option": "SO_MARK", "action": "deny" \\}\n' \
	$'\ngetsockopt rules:\n  \\{ "level": "SOL_SOCKET", "option": "SO_MARK", "action": "deny" \\}\n' \
	$'\nprograms that would attach: \\[ "sock_create", "setsockopt", "getsockopt" \\]$'
xcase setonly config.json "{\"$P\": \"setonly\"}" 0 \
	'.policy.name == "setonly" and .programs == ["setsockopt"] and .socket == null and .getsockopt == null' \
	'programs that would attach: \[ "setsockopt" \]$'
# Asking for the bypass: examples/config.json says on_unsupported "fail",
# so on a kernel without it explain reports prestart's refusal.
if [ -e /proc/sys/net/core/bypass_prot_mem ]; then
	BYPASS_RC=0 BYPASS_REFUSED='.refused == null'
else
	BYPASS_RC=1
	BYPASS_REFUSED='(.refused | test("lacks SK_BPF_BYPASS_PROT_MEM .*would refuse"))'
fi
xcase bulk config.json "{\"$P\": \"bulk\"}" "$BYPASS_RC" \
	'.policy.name == "bulk" and .bypass_prot_mem == {"value": true, "source": "policy bulk"} and .programs == ["sock_create"] and '"$BYPASS_REFUSED" \
	$'\nbypass-prot-mem: true \\(from policy bulk\\)\n'
xcase bypass-annotation config.json "{\"$BP\": \"true\"}" "$BYPASS_RC" \
	'.policy == null and .bypass_prot_mem == {"value": true, "source": "annotation sockopt-hook.io/bypass-prot-mem"} and .programs == ["sock_create"] and '"$BYPASS_REFUSED" \
	$'\nbypass-prot-mem: true \\(from annotation sockopt-hook\\.io/bypass-prot-mem\\)\n'
xcase bulk-bypass-off config.json "{\"$P\": \"bulk\", \"$BP\": \"false\"}" 0 \
	'.bypass_prot_mem == {"value": false, "source": "annotation sockopt-hook.io/bypass-prot-mem"} and .programs == []' \
	'bypass-prot-mem: false \(from annotation sockopt-hook\.io/bypass-prot-mem\)'
xcase per-container config.json \
	"{\"$P\": \"restricted\", \"$P.web\": \"setonly\", \"io.kubernetes.cri.container-name\": \"web\"}" 0 \
	'.policy == {"name": "setonly", "source": "annotation sockopt-hook.io/policy.web"} and .programs == ["setsockopt"]' \
	'policy: setonly \(from annotation sockopt-hook\.io/policy\.web\)'
xcase per-container-other config.json \
	"{\"$P\": \"restricted\", \"$P.web\": \"setonly\", \"io.kubernetes.container.name\": \"db\"}" 0 \
	'.policy == {"name": "restricted", "source": "annotation sockopt-hook.io/policy"}' \
	'policy: restricted \(from annotation sockopt-hook\.io/policy\)'
xcase sandbox config.json \
	"{\"$P\": \"restricted\", \"io.kubernetes.cri.container-type\": \"sandbox\"}" 0 \
	'.sandbox == true and .programs == ["sock_create"] and .policy == {"name": "@deny-sockets", "source": "sandbox_policy"}' \
	$'\npod sandbox container: it gets sandbox_policy; annotations [^\n]* are not read\n' \
	'policy: @deny-sockets \(from sandbox_policy\)'
xcase unknown-policy config.json "{\"$P\": \"nope\"}" 1 \
	'.refused == "container explain: annotation sockopt-hook.io/policy='"'nope'"' refused: '"'nope'"' is not in annotations.allow_policies of '"$EX/config.json"'" and .programs == null' \
	$'\nrefused: container explain: annotation sockopt-hook\\.io/policy=\'nope\' refused: \'nope\' is not in annotations\\.allow_policies of '
xcase bad-bypass-value config.json "{\"$BP\": \"maybe\"}" 1 \
	'.refused | test("sockopt-hook.io/bypass-prot-mem=.maybe. is invalid: expected .true. or .false.")' \
	'refused: .*bypass-prot-mem=.maybe. is invalid'

xcase allowlist-default config-allowlist.json '{}' 0 \
	'.policy == {"name": "baseline", "source": "defaults.policy"} and .programs == ["sock_create", "setsockopt"] and .setsockopt_default == "allow"' \
	'policy: baseline \(from defaults\.policy\)' 'programs that would attach: \[ "sock_create", "setsockopt" \]$'
xcase allowlist-locked config-allowlist.json "{\"$P\": \"locked\"}" 0 \
	'.policy.name == "locked" and .setsockopt_default == "deny" and .socket.mark == 42 and .getsockopt == [{"level": "SOL_SOCKET", "option": "SO_MARK", "action": "force", "value": 0}] and .programs == '"$ALL3" \
	'"action": "allow"' '"action": "force", "value": "cubic"'
xcase allowlist-no-bypass config-allowlist.json "{\"$BP\": \"true\"}" 1 \
	'.refused | test("annotation sockopt-hook.io/bypass-prot-mem=.true. refused: annotations.allow_bypass_prot_mem is false")' \
	'refused: .*allow_bypass_prot_mem is false'
xcase allowlist-default-not-allowed config-allowlist.json "{\"$P\": \"baseline\"}" 1 \
	'.refused | test("policy=.baseline. refused: .baseline. is not in annotations.allow_policies")' \
	'refused: .*baseline'

xcase minimal-default config-minimal.json '{}' 0 \
	'.policy == null and .programs == []' 'programs that would attach: none$'
xcase minimal-bypass config-minimal.json "{\"$BP\": \"true\"}" 0 \
	'.bypass_prot_mem.value == true and .programs == ["sock_create"]' \
	'bypass-prot-mem: true \(from annotation'
xcase minimal-no-policies config-minimal.json "{\"$P\": \"restricted\"}" 1 \
	'.refused | test("not in annotations.allow_policies")' 'refused: '

# explain from an OCI state on stdin: the state's annotations win over
# the bundle's (they are the runtime's view), and the id is the state's.
b=$(bundle stdin "{\"$P\": \"setonly\"}")
json=$(jq -n --arg b "$b" '{ociVersion: "1.0.2", id: "from-stdin", status: "creating",
	pid: 1, bundle: $b, annotations: {"sockopt-hook.io/policy": "restricted"}}' |
	"$HOOK" --config "$EX/config.json" explain --json 2>&1)
tap_is "$(jq -r '"\(.container) \(.policy.name)"' <<<"$json" 2>&1)" "from-stdin restricted" \
	"explain < state.json: the state's id and annotations" || tap_diag "$json"
out=$("$HOOK" --config "$EX/config.json" explain </dev/null 2>&1)
rc=$?
[ "$rc" != 0 ] && [ "$(grep -c . <<<"$out")" = 1 ]
tap_ok $? "explain with neither --bundle nor a state: one line, exit $rc" || tap_diag "$out"

# The Kubernetes examples as the runtimes pass them on.
CTRD=$EX/containerd/config.toml
# k8s POD RUNTIME CONTAINER WANT-POLICY WANT-SOURCE
k8s()
{
	local pod=$1 rt=$2 ctr=$3 want=$4 ann b json got

	ann=$($PY "$here/../lib/k8s_annotations.py" "$EX/kubernetes/$pod" "$rt" "$ctr" "$CTRD" 2>&1)
	b=$(bundle "k8s-$rt-${pod%.yaml}-$ctr" "$ann") || {
		tap_ok 1 "$pod on $rt, container $ctr: annotations"
		tap_diag "$ann"
		return
	}
	# stdout only: a refusal (bulk on a kernel without the bypass) is also
	# reported on stderr, and the policy is still shown in the JSON.
	json=$("$HOOK" --config "$EX/config.json" explain --json --bundle "$b" 2>"$TMP/k8s.err")
	got=$(jq -r 'if .sandbox then "sandbox" else "\(.policy.name) from \(.policy.source)" end' <<<"$json" 2>&1)
	tap_is "$got" "$want" "$pod on $rt, container $ctr: $want" ||
		tap_diag "annotations: $ann" "explain: $json" "$(cat "$TMP/k8s.err")"
}
for rt in crio containerd; do
	k8s pod-restricted.yaml "$rt" web "restricted from annotation $P"
	k8s pod-restricted.yaml "$rt" POD sandbox
	k8s pod-per-container.yaml "$rt" web "restricted from annotation $P"
	k8s pod-per-container.yaml "$rt" loader "bulk from annotation $P.loader"
	k8s pod-per-container.yaml "$rt" POD sandbox
	k8s pod-redis.yaml "$rt" cache "restricted from annotation $P"
done

# validate on the broken configs.
n=0
for f in "$top"/tests/bad-configs/*.json; do
	name=$(basename "$f" .json)
	exp=${f%.json}.expect
	n=$((n + 1))
	if [ ! -f "$exp" ]; then
		tap_ok 1 "bad config $name has an .expect file"
		continue
	fi
	path=$(sed -n 's/^path=//p' "$exp")
	msg=$(sed -n 's/^message=//p' "$exp")
	err=$("$HOOK" validate "$f" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" = 1 ] && [ "$(grep -c . <<<"$err")" = 1 ] &&
		[[ $err == "oci-sockopt-hook: invalid operator config $f: $path: "*"$msg"* ]]
	tap_ok $? "validate $name: exit 1, one line naming $path: $msg" ||
		tap_diag "exit $rc; stderr:" "$err"
	out=$("$HOOK" validate --json "$f" 2>/dev/null)
	tap_is "$(jq -c .valid <<<"$out" 2>&1)" false "validate --json $name: \"valid\": false"
	if grep -qx 'schema=reject' "$exp"; then
		$PY - "$top/schemas/config.schema.json" "$f" <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
cls = jsonschema.validators.validator_for(schema)
sys.exit(0 if list(cls(schema).iter_errors(json.load(open(sys.argv[2])))) else 1)
PY
		tap_ok $? "the JSON Schema rejects $name too"
	fi
done
[ "$n" -ge 10 ]
tap_ok $? "at least 10 broken configs in tests/bad-configs (found $n)"
out=$("$HOOK" validate "$EX/config.json" 2>&1)
tap_ok $? "control: validate accepts examples/config.json ($out)"

# validate warns (one line, exit 0; "warnings" in --json) when the config
# has defaults that an installed hooks.d file would not bring to every
# container, and, given --hooks-dir, when no hooks.d file runs the hook.
DEF=$TMP/defaults.json BYP=$TMP/bypass.json
jq '.defaults.policy = "restricted"' "$EX/config.json" >"$DEF"
jq '.defaults.bypass_prot_mem = true' "$EX/config.json" >"$BYP"
mkdir -p "$TMP"/hd-{ann,always,empty,other,cmd}
cp "$EX/hooks.d-oci-sockopt-hook.json" "$TMP/hd-ann/oci-sockopt-hook.json"
cp "$EX/hooks.d-oci-sockopt-hook-always.json" "$TMP/hd-always/oci-sockopt-hook.json"
jq '.hook.path = "/usr/libexec/other-hook"' "$EX/hooks.d-oci-sockopt-hook-always.json" \
	>"$TMP/hd-other/other.json"
jq '.when.commands = ["^/bin/sh$"]' "$EX/hooks.d-oci-sockopt-hook-always.json" \
	>"$TMP/hd-cmd/10-sockopt.json"

# vcase DESC WANT-REGEX ARGS...: validate ARGS exits 0 and says "valid" on
# stdout; stderr is one "warning:" line matching WANT-REGEX, or empty when
# WANT-REGEX is "-"; validate --json ARGS has the same in "warnings".
vcase()
{
	local desc=$1 want=$2 out err rc json ok=0

	shift 2
	out=$("$HOOK" validate "$@" 2>"$TMP/verr")
	rc=$?
	# The node's TCP autotuning warning about restricted's clamp depends
	# on the kernel's tcp_rmem, not on these files (85-sysctls.sh).
	err=$(grep -v 'TCP autotuning' "$TMP/verr")
	[ "$rc" = 0 ] && [[ $out == *": valid ("* ]] || ok=1
	if [ "$want" = - ]; then
		[ -z "$err" ] || ok=1
	else
		[ "$(grep -c . <<<"$err")" = 1 ] &&
			[[ $err == "oci-sockopt-hook: warning: "* ]] && [[ $err =~ $want ]] || ok=1
	fi
	tap_ok $ok "validate, $desc: exit 0, ${want/#-/no warning}" ||
		tap_diag "exit $rc; stdout: $out" "stderr: $err"
	json=$("$HOOK" validate --json "$@" 2>/dev/null |
		jq -c '.warnings |= map(select(test("TCP autotuning") | not))')
	# jq 1.6 -e exits 0 on empty input.
	if [ -z "$json" ]; then
		false
	elif [ "$want" = - ]; then
		jq -e '.valid and .warnings == []' <<<"$json" >/dev/null
	else
		jq -e --arg re "$want" '.valid and (.warnings | length == 1 and (.[0] | test($re)))' \
			<<<"$json" >/dev/null
	fi
	tap_ok $? "validate --json, $desc: \"warnings\" agrees" || tap_diag "$json"
}

vcase "defaults.policy, annotation-conditioned hooks.d file" \
	"the defaults of $DEF \\(defaults.policy 'restricted'\\) will not reach unannotated containers: $TMP/hd-ann/oci-sockopt-hook.json \\(when.annotations\\)" \
	"$DEF" --hooks-dir "$TMP/hd-ann"
vcase "defaults.bypass_prot_mem, annotation-conditioned hooks.d file" \
	"\\(defaults.bypass_prot_mem\\) will not reach unannotated containers" \
	"$BYP" --hooks-dir "$TMP/hd-ann"
vcase "defaults.policy, hooks.d file narrowed by when.commands" \
	"$TMP/hd-cmd/10-sockopt.json \\(when.commands\\)" "$DEF" --hooks-dir "$TMP/hd-cmd"
vcase "defaults.policy, the always hooks.d file" - "$DEF" --hooks-dir "$TMP/hd-always"
vcase "defaults.policy, --hooks-dir twice, the always file in the second" - \
	"$DEF" --hooks-dir "$TMP/hd-empty" --hooks-dir "$TMP/hd-always"
vcase "defaults.policy, no hooks.d file in the --hooks-dir" \
	"apply only to containers whose runtime config runs the hook: no hooks.d file for oci-sockopt-hook in .*$TMP/hd-empty" \
	"$DEF" --hooks-dir "$TMP/hd-empty"
vcase "defaults.policy, only another hook's hooks.d file" \
	"no hooks.d file for oci-sockopt-hook in" "$DEF" --hooks-dir "$TMP/hd-other"
vcase "no defaults, annotation-conditioned hooks.d file" - "$EX/config.json" --hooks-dir "$TMP/hd-ann"
vcase "no defaults, no hooks.d file" - "$EX/config.json" --hooks-dir "$TMP/hd-empty"
sys_files=$(grep -ls '"[^"]*/oci-sockopt-hook"' /usr/share/containers/oci/hooks.d/*.json \
	/etc/containers/oci/hooks.d/*.json /usr/local/share/containers/oci/hooks.d/*.json 2>/dev/null)
if [ -z "$sys_files" ]; then
	vcase "defaults.policy, no --hooks-dir, no hooks.d file on this machine" - "$DEF"
else
	tap_skip "validate, defaults.policy, no --hooks-dir" "this machine has $sys_files"
fi

if [ "$ROOT" = 1 ]; then
	json=$("$HOOK" probe --json 2>/dev/null)
	tap_ok $? "probe --json exits 0"
	jq -e 'type == "object"' <<<"$json" >/dev/null 2>&1
	tap_ok $? "probe --json prints one JSON object" || tap_diag "$json"
	cg2=$(host_cgroup2_mount)
	tap_is "$(jq -r .cgroup2_mount <<<"$json")" "$cg2" "probe: cgroup2_mount is $cg2 (mountinfo)"
	hybrid=false
	awk '$3 == "cgroup" { found = 1 } END { exit !found }' /proc/self/mounts && hybrid=true
	tap_is "$(jq -r .hybrid <<<"$json")" "$hybrid" "probe: hybrid is $hybrid (v1 hierarchies mounted: $hybrid)"
	tap_is "$(jq -c '[.bpf_syscall, .prog_type_cgroup_sock, .prog_type_cgroup_sockopt]' <<<"$json")" \
		"[true,true,true]" "probe: bpf syscall and both cgroup program types"
	sysctl=false
	[ -e /proc/sys/net/core/bypass_prot_mem ] && sysctl=true
	tap_is "$(jq -r .sysctl_bypass_prot_mem <<<"$json")" "$sysctl" \
		"probe: sysctl_bypass_prot_mem is $sysctl, as /proc/sys/net/core/bypass_prot_mem says"
	tap_is "$(jq -r .bypass_prot_mem <<<"$json")" "$sysctl" \
		"probe: bypass_prot_mem (the loaded program) agrees with the sysctl ($sysctl on $(uname -r))"
	tap_is "$(jq -r .unprivileged_bpf_disabled <<<"$json")" \
		"$(cat /proc/sys/kernel/unprivileged_bpf_disabled)" "probe: unprivileged_bpf_disabled"
	tap_is "$(jq -r '"\(.state_dir) \(.state_dir_writable)"' <<<"$json")" "$TMP/state true" \
		"probe: the state dir (OCI_SOCKOPT_HOOK_STATE_DIR) is writable"
	tap_like "$(jq -r .verdict <<<"$json")" '^ready' "probe: the verdict says ready"
	text=$("$HOOK" probe 2>&1)
	tap_like "$text" "cgroup2 mount: +$cg2" "probe (text): the cgroup2 mount"
	tap_like "$text" $'\nverdict: ' "probe (text): a verdict line"

	tap_is "$(host_prog_count)" "$PROGS_BEFORE" "explain, validate and probe left no BPF program loaded"
	tap_is "$(find "$TMP/state" -mindepth 1)" "" "explain wrote no hook state"
else
	tap_skip "probe --json on the host" "needs root and BPF"
fi

tap_done
