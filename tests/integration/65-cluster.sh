#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Scheduling and guard rails on a cluster, with no cluster: no API server,
# no kubelet and no NFD daemon run here.
#  - `features` where the runtime is wired: a node without containerd or
#    CRI-O (PATH without them) with the hooks.d file that `runtime
#    configure --runtime podman` writes: installed=true, bypass-prot-mem as
#    `probe --json` says (false on a kernel before 6.19), one label per
#    policy that annotations may choose, a policy whose name is no label
#    key skipped with one warning; text and --json agree;
#  - `features` where it is not: with containerd on PATH and a containerd
#    config without the handler sockopt, installed=false and
#    bypass-prot-mem=false (RuntimeClass pods would fail there), with a
#    warning and the reason in --json (25-runtime-configure-containerd.sh
#    checks a wired containerd);
#  - `features --nfd-file`: the file as NFD's local source reads it
#    (tests/lib/nfd_features.py: directives, key=value, label keys and
#    values, NFD >= 0.13's denied namespaces and extraLabelNs, with
#    examples/kubernetes/nfd-master-sockopt-hook.conf), an expiry five minutes ahead after which NFD
#    would drop every label, replaced atomically (no temp file left, a
#    reader racing 200 rewrites never sees a partial file), left alone when
#    the config is bad; a missing directory, a name NFD skips and an
#    operand each give one line and exit 1;
#  - the RuntimeClasses' nodeSelectors use exactly labels `features` emits,
#    and pick this node as the labels say;
#  - the DaemonSet agent's shell script, taken from the YAML with its paths
#    moved under a temporary directory and its nsenter dropped (no node
#    to enter), run by sh: it writes the feature
#    file (and the metrics file, when the build has `metrics`), and on
#    SIGTERM removes the feature file and exits 0;
#  - the admission policies' CEL, compiled and run by cel-go
#    (tests/cel/vapcheck.go, built from Debian's packages by
#    tests/cel/fetch-cel.sh) on tests/cel/cases/, and a policy changed
#    to let namespace web bypass fails the case that says it must not.
#
# Modules: `cmd_features.c`
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
NFD=$here/../lib/nfd_features.py
tap_require_cmd jq
[ -x "$HOOK" ] || tap_skip_all "hook not built: $HOOK (run make)"
$PY -c 'import yaml' 2>/dev/null || tap_skip_all "python3 with yaml is needed"

TMP=$(mktemp -d /tmp/sockopt-hook-cluster.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT
export OCI_SOCKOPT_HOOK_STATE_DIR=$TMP/state
mkdir "$TMP/state" "$TMP/features.d"

# A config whose allow_policies has two names that make no label key:
# one ends with '_', one is too long for the 63-byte name part.
long=p$(printf '%0.s0' {1..59})
jq --arg long "$long" '.annotations.allow_policies += ["trailing_", $long] |
	.policies.trailing_ = {} | .policies[$long] = {}' \
	"$EX/config.json" >"$TMP/config.json" || exit 1
CFG=$TMP/config.json

# --- features ---------------------------------------------------------------
bypass=$("$HOOK" --json probe | jq -r .bypass_prot_mem)
tap_like "$bypass" '^(true|false)$' "probe --json says whether the kernel has SK_BPF_BYPASS_PROT_MEM ($bypass, $(uname -r))"
# A node wired for podman and CRI-O: the hooks.d file of runtime configure,
# in a directory of ours; no containerd or crio on PATH.
# $TMP/empty: a PATH with rm (the agent's trap) and no runtime.
mkdir -p "$TMP/hooksd" "$TMP/empty" && ln -s "$(command -v rm)" "$TMP/empty/rm"
out=$("$HOOK" --config "$CFG" runtime configure --runtime podman --hooks-dir "$TMP/hooksd" 2>&1)
tap_like "$?:$out" "^0:$TMP/hooksd/oci-sockopt-hook.json: created" \
	"runtime configure --runtime podman writes the hooks.d file" || tap_diag "$out"
# features ARGS...: on that node
features() { env PATH="$TMP/empty" "$HOOK" --config "$CFG" "$@" --hooks-dir "$TMP/hooksd"; }
features features >"$TMP/out" 2>"$TMP/err"
rc=$?
tap_is "$rc:$(cat "$TMP/out")" "0:$(printf '%s\n' \
	"sockopt-hook.io/installed=true" \
	"sockopt-hook.io/bypass-prot-mem=$bypass" \
	"sockopt-hook.io/nri=false" \
	"sockopt-hook.io/policy.restricted=true" \
	"sockopt-hook.io/policy.bulk=true" \
	"sockopt-hook.io/policy.setonly=true")" \
	"features: installed, bypass-prot-mem as probe says, nri (no plugin here), one label per allowed policy"
tap_is "$(grep -c 'not a valid Kubernetes label key, skipped' "$TMP/err"):$(wc -l <"$TMP/err")" "2:2" \
	"features: each policy name that makes no label key is skipped with one warning" ||
	tap_diag "$(cat "$TMP/err")"
tap_like "$(cat "$TMP/err")" "policy\\.trailing_'.*policy\\.$long'" \
	"features: the warnings name the keys"
json=$(features --json features 2>/dev/null)
tap_is "$(jq -r '.labels | to_entries[] | "\(.key)=\(.value)"' <<<"$json"):$(jq -c '[.skipped, .nfd_file, .wiring.hooks_d]' <<<"$json")" \
	"$(cat "$TMP/out"):[2,null,true]" "features --json: the same labels, 2 skipped, no file, the hooks.d wiring"
# containerd on PATH, its config without the handler: not installed.
echo "version = 2" >"$TMP/containerd.toml"
if command -v containerd >/dev/null; then
	json=$("$HOOK" --config "$CFG" --json features --ctd-config "$TMP/containerd.toml" \
		--hooks-dir "$TMP/hooksd" 2>"$TMP/err2")
	tap_is "$(jq -c '[.labels["sockopt-hook.io/installed"], .labels["sockopt-hook.io/bypass-prot-mem"], .wiring.containerd]' <<<"$json")" \
		'["false","false",false]' "containerd without the handler sockopt: installed=false, bypass-prot-mem=false"
	tap_like "$(jq -r .wiring.missing <<<"$json"):$(grep installed=false "$TMP/err2")" \
		"^containerd has no runtime handler sockopt:.*warning: features: sockopt-hook.io/installed=false: containerd has no runtime handler sockopt" \
		"it says why, in --json and in a warning"
else
	tap_skip "containerd without the handler: installed=false" "no containerd here"
	tap_skip "it says why" "no containerd here"
fi
case $(uname -r) in
[0-5].* | 6.[0-9].* | 6.1[0-8].*) tap_is "$bypass" false "Linux $(uname -r) < 6.19: bypass-prot-mem=false" ;;
*) tap_skip "bypass-prot-mem=false before 6.19" "Linux $(uname -r)" ;;
esac

# --- the NFD feature file -------------------------------------------------
F=$TMP/features.d/oci-sockopt-hook
start=$(date +%s)
out=$(features features --nfd-file "$F" 2>/dev/null)
tap_like "$?:$out" "^0:wrote 6 label\\(s\\) to $F, expiring at 20[0-9-]+T[0-9:]+Z\$" \
	"features --nfd-file: writes the file and says so"
parsed=$($PY "$NFD" "$F" --allow-ns sockopt-hook.io)
tap_ok $? "the file is what NFD's local source reads, every label one nfd-master keeps" ||
	tap_diag "$parsed"
tap_is "$(jq -r '.labels | to_entries[] | "\(.key)=\(.value)"' <<<"$parsed" | sort)" \
	"$(sort "$TMP/out")" "NFD reads exactly the labels that features prints"
exp=$(date -d "$(jq -r .expiry_time <<<"$parsed")" +%s)
tap_ok $((exp - start >= 295 && exp - start <= 305 + $(date +%s) - start ? 0 : 1)) \
	"# +expiry-time is five minutes ahead ($((exp - start)) s)"
tap_is "$($PY "$NFD" "$F" --allow-ns sockopt-hook.io --now "$(date -u -d @$((exp + 1)) +%FT%TZ)" | jq -c .labels)" \
	"{}" "one second past the expiry time NFD reads no label: the node loses them"
nlabels=$(grep -c . "$TMP/out")
tap_is "$($PY "$NFD" "$F" | jq -c '[(.labels | length), .errors]')" "[$nlabels,[]]" \
	"NFD >= 0.13 publishes them with no setting (sockopt-hook.io is not a denied namespace)"
tap_like "$($PY "$NFD" "$F" --deny-ns '*.io' | jq -r '.errors[0]')" "nfd-master drops 'sockopt-hook.io/" \
	"a denyLabelNs that covers sockopt-hook.io drops them"
snippet=$EX/kubernetes/nfd-master-sockopt-hook.conf
allow=$($PY -c 'import sys, yaml; print(" ".join(yaml.safe_load(open(sys.argv[1]))["extraLabelNs"]))' "$snippet")
tap_is "$($PY "$NFD" "$F" --deny-ns '*.io' --allow-ns "$allow" | jq -c '[(.labels | length), .errors]')" "[$nlabels,[]]" \
	"the extraLabelNs of $(basename "$snippet"), merged into nfd-master.conf, lets them through again"
tap_is "$(ls -A "$TMP/features.d")" "oci-sockopt-hook" "no temporary file is left beside it"
ino=$(stat -c %i "$F")
features features --nfd-file "$F" >/dev/null 2>&1
tap_ok $(($(stat -c %i "$F") != ino ? 0 : 1)) "a rewrite replaces the file (rename), not its content in place"

# A reader racing the writer sees a whole file every time.
lines=$(wc -l <"$F")
(for _ in $(seq 200); do features features --nfd-file "$F" >/dev/null 2>&1; done) &
writer=$!
bad=0 reads=0
while kill -0 "$writer" 2>/dev/null; do
	n=$(wc -l <"$F") reads=$((reads + 1))
	[ "$n" = "$lines" ] || bad=$((bad + 1))
done
wait "$writer"
tap_is "$bad" 0 "a reader racing 200 rewrites never sees a partial file ($reads reads)"
tap_is "$(ls -A "$TMP/features.d")" "oci-sockopt-hook" "and no temporary file is left"

# Failures: one line, exit 1, nothing written.
before=$(cat "$F")
err=$("$HOOK" --config "$TMP/missing.json" features --nfd-file "$F" 2>&1 >/dev/null)
tap_is "$?:$(wc -l <<<"$err"):$(cat "$F")" "1:1:$before" \
	"a missing config: one line, exit 1, the file left to expire" || tap_diag "$err"
err=$("$HOOK" --config "$CFG" features --nfd-file "$TMP/no-such-dir/f" 2>&1 >/dev/null)
tap_like "$?:$(wc -l <<<"$err"):$err" "^1:1:.*cannot open the directory of --nfd-file $TMP/no-such-dir/f: No such file or directory\$" \
	"--nfd-file in a missing directory: one line naming it, exit 1"
err=$("$HOOK" --config "$CFG" features --nfd-file "$TMP/features.d/.hidden" 2>&1 >/dev/null)
tap_like "$?:$(wc -l <<<"$err"):$err" "^1:1:.*does not start with '\\.'" \
	"--nfd-file with a name NFD skips: one line, exit 1"
err=$("$HOOK" --config "$CFG" features extra 2>&1 >/dev/null)
tap_like "$?:$err" "^2:oci-sockopt-hook: features: unexpected argument 'extra'" \
	"an operand: a usage error, one line, exit 2"
tap_is "$(ls -A "$TMP/features.d")" "oci-sockopt-hook" "the failures wrote nothing"

# --- RuntimeClasses ---------------------------------------------------------
sel=$($PY -c 'import json, sys, yaml
print(json.dumps({d["metadata"]["name"]: d["scheduling"]["nodeSelector"]
                  for d in yaml.safe_load_all(open(sys.argv[1]))}))' \
	"$EX/kubernetes/overlays/runtimeclass/runtimeclass.yaml")
ex=$(env PATH="$TMP/empty" "$HOOK" --config "$EX/config.json" --json features --hooks-dir "$TMP/hooksd" 2>/dev/null | jq -c .labels)
tap_is "$(jq -c '[.[] | keys[]] | unique' <<<"$sel")" \
	"$(jq -c '[keys[] | select((startswith("sockopt-hook.io/policy.") or . == "sockopt-hook.io/nri") | not)] | sort' <<<"$ex")" \
	"the RuntimeClasses select on exactly the node labels features emits (policies aside, and nri: pods that need no RuntimeClass select on it)"
tap_is "$(jq -c --argjson l "$ex" 'map_values(to_entries | all(.value == $l[.key]))' <<<"$sel")" \
	"{\"sockopt\":true,\"sockopt-bypass\":$bypass}" \
	"this node's labels: RuntimeClass sockopt picks it, sockopt-bypass only if the kernel has the bypass"

# --- the DaemonSet agent's script, run here -------------------------------
# Its shell script from the YAML with the node paths moved under $TMP (no
# kubelet: sh runs it directly; the node's hook is this one, on a state
# and a pin directory of the test's own, every 1 s). It preloads and
# applies at start, writes the feature file, repeats; a changed ConfigMap
# it installs, preloads and applies, a broken one it leaves out; the
# hooks.d file removed from the node it puts back from the image and
# counts (oci_sockopt_hook_wiring_repairs_total); on SIGTERM it removes
# the feature file and exits 0.
A=$TMP/agent
mkdir -p "$A/features.d" "$A/textfile" "$A/configmap" "$A/state" "$A/hooks.d"
cp "$EX/hooks.d-oci-sockopt-hook.json" "$A/hooks.d/oci-sockopt-hook.json"
cp "$EX/config.json" "$A/config.json"
cp "$EX/config.json" "$A/configmap/config.json"
$PY -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d["kind"] == "DaemonSet":
        print(next(c["args"][0] for c in d["spec"]["template"]["spec"]["containers"]
                   if c["name"] == "agent"))' \
	"$EX/kubernetes/base/daemonset.yaml" |
	sed -e "s|^host=.*|host=\"env PATH=$TMP/empty\"|" \
		-e "s|^hook=.*|hook=$HOOK|" -e "s|^config=.*|config=$A/config.json|" \
		-e "s|^image_hook=.*|image_hook=$HOOK|" \
		-e "s|^configmap=.*|configmap=$A/configmap/config.json|" \
		-e "s|^installed=.*|installed=$A/config.json|" -e "s|^every=.*|every=1|" \
		-e "s|^nfd=/etc/kubernetes/node-feature-discovery/features.d/|nfd=$A/features.d/|" \
		-e "s|^prom=/var/lib/prometheus/node-exporter/|prom=$A/textfile/|" \
		-e "s|^textfile=.*|textfile=$A/textfile|" -e "s|^hooksd=.*|hooksd=$A/hooks.d/oci-sockopt-hook.json|" \
		-e "s|^hooksd_src=.*|hooksd_src=$EX/hooks.d-oci-sockopt-hook.json|" >"$A/script.sh"
tap_like "$(cat "$A/script.sh")" "nfd=$A/features.d/oci-sockopt-hook" \
	"the agent's script, from the DaemonSet, with its paths under \$TMP"
OCI_SOCKOPT_HOOK_STATE_DIR=$A/state OCI_SOCKOPT_HOOK_PIN_DIR=$A/no-pins \
	setsid sh "$A/script.sh" >"$A/out" 2>&1 &
agent=$!
# wait_file FILE: until the agent wrote FILE, or it ended, or 30 s passed
wait_file() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ -s "$1" ] || ! kill -0 "$agent" 2>/dev/null && return
		sleep 0.1
	done
}
wait_file "$A/features.d/oci-sockopt-hook"
tap_is "$($PY "$NFD" "$A/features.d/oci-sockopt-hook" --allow-ns sockopt-hook.io | jq -r '.labels | keys | length')" 6 \
	"the agent wrote the feature file, with the example config's 6 labels"
if "$HOOK" --help 2>&1 | grep -q '^  metrics '; then
	wait_file "$A/textfile/oci-sockopt-hook.prom"
	tap_check "the agent wrote the metrics file" test -s "$A/textfile/oci-sockopt-hook.prom"
else
	tap_skip "the agent writes the metrics file" "no metrics command in this build"
fi
tap_like "$(cat "$A/out")" "apply: 0 updated, 0 unchanged, 0 left as it was, 0 failed, 0 gone \(config $A/config.json\)" \
	"at start the agent preloads and applies the node's config (here: no container)"
# rewritten_twice FILE: the agent rewrote FILE twice from now (or 30 s
# passed, or it ended): a whole round of its loop, which begins with the
# ConfigMap, ran after this point.
rewritten_twice() {
	local i n=0 was now

	was=$(stat -c '%i %y' "$1" 2>/dev/null)
	for ((i = 0; i < 300 && n < 2; i++)); do
		kill -0 "$agent" 2>/dev/null || break
		now=$(stat -c '%i %y' "$1" 2>/dev/null)
		[ "$now" != "$was" ] && n=$((n + 1)) was=$now
		sleep 0.1
	done
	[ "$n" = 2 ]
}
echo '{"policies": {' >"$A/configmap/config.json" # a broken edit
rewritten_twice "$A/features.d/oci-sockopt-hook"
tap_ok $? "after the broken edit the agent went round its loop (it rewrote the feature file twice)"
tap_is "$(cmp "$EX/config.json" "$A/config.json" && grep -c '^apply:' "$A/out")" 1 \
	"a ConfigMap that does not validate is not installed, nor applied"
jq '.policies.restricted.mode = "audit"' "$EX/config.json" >"$A/configmap/config.json"
until [ "$(grep -c '^apply:' "$A/out")" = 2 ] || ! kill -0 "$agent" 2>/dev/null; do sleep 0.1; done
tap_ok "$(cmp -s "$A/configmap/config.json" "$A/config.json"; echo $?)" \
	"a changed ConfigMap that validates is installed on the node"
tap_is "$(grep -c '^apply:' "$A/out")" 2 "and applied to the running containers (apply ran again)"
# repairs N M: the agent's counter says N repaired, M failed
repairs() { sed -n 's/^oci_sockopt_hook_wiring_repairs_total{runtime="none",outcome="\(repaired\|failed\)"} //p' "$A/textfile/oci-sockopt-hook-agent.prom" 2>/dev/null | tr '\n' ' '; }
tap_is "$(repairs)" "0 0 " "the agent's repairs counter: written at start, 0 repaired, 0 failed"
rm "$A/hooks.d/oci-sockopt-hook.json" # node tooling removed it
wait_file "$A/hooks.d/oci-sockopt-hook.json"
cmp -s "$A/hooks.d/oci-sockopt-hook.json" "$EX/hooks.d-oci-sockopt-hook.json"
tap_ok $? "the hooks.d file removed from the node: the agent puts the image's back"
until [ "$(repairs)" = "1 0 " ] || ! kill -0 "$agent" 2>/dev/null; do sleep 0.1; done
tap_is "$(repairs)" "1 0 " "counted: oci_sockopt_hook_wiring_repairs_total{outcome=repaired} 1"
tap_like "$(cat "$A/out")" "wiring missing: the hooks.d file; putting it back" "and said in its log"
kill -TERM "$agent"
wait "$agent"
rc=$?
kill -- -"$agent" 2>/dev/null # its `sleep 15`, in the agent's process group
tap_is "$rc:$(ls -A "$A/features.d")" "0:" "on SIGTERM the agent removes the feature file and exits 0" ||
	tap_diag "$(cat "$A/out")"

# --- the admission policies' CEL --------------------------------------------
vapcheck=$("$top/tests/cel/fetch-cel.sh" "$BUILD" 2>"$TMP/cel.err" | tail -n 1)
rc=${PIPESTATUS[0]}
if [ "$rc" = 77 ]; then
	tap_skip "admission CEL under cel-go" "$(grep SKIP "$TMP/cel.err" | head -n 1)"
elif ! [ -x "$vapcheck" ]; then
	tap_ok 1 "cel-go and vapcheck built from Debian's packages (exit $rc)"
	tap_diag "$(tail -n 20 "$TMP/cel.err")"
else
	tap_diag "vapcheck: $(grep -o 'go version .*' "$TMP/cel.err" || echo cached)"
	POL=$EX/kubernetes/overlays/admission/admission-sockopt-hook.yaml
	out=$("$vapcheck" "$POL" "$top"/tests/cel/cases/*.yaml 2>&1)
	tap_relay cel $? <<<"$out"
	# The cases can fail: let namespace web bypass, and 01 must say so.
	sed 's/^  bypass-namespaces: "batch"$/  bypass-namespaces: "batch, web"/' "$POL" >"$TMP/pol.yaml"
	out=$("$vapcheck" "$TMP/pol.yaml" "$top"/tests/cel/cases/01-*.yaml 2>&1)
	tap_like "$?:$out" "^1:.*not ok - 01-bypass-forbidden-namespace.yaml" \
		"cel: with web in bypass-namespaces, case 01 fails"
fi

tap_done
