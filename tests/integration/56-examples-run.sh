#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The runtime examples, run for real (only the hook path, the operator
# config and the state dir are pointed at the build and the test):
#  - examples/runc-crun-hooks.json merged into `runc spec`, under runc and
#    crun: the restricted policy is in force;
#  - examples/containerd/sockopt-hook-base-spec.json under runc, with the
#    annotations containerd gives the containers of
#    examples/kubernetes/pod-per-container.yaml: web is restricted, the
#    sandbox gets sandbox_policy (no socket at all);
#  - the init container of examples/kubernetes/base/daemonset.yaml (its ConfigMap from base/kustomization.yaml) under runc,
#    as kubelet would run it (no capabilities, read-only image, the
#    volumes bind-mounted): it installs the three files on the "node" (a
#    temp dir), and refuses a broken ConfigMap without touching them.
#
# Modules: `cmd_stages.c`, `container.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

PY=/usr/bin/python3
ct_require runc crun
tap_require_cmd make ldd
$PY -c 'import yaml, tomllib' 2>/dev/null ||
	tap_skip_all "python3 with yaml (python3-yaml) and tomllib is needed"
ct_init
ct_hugetlb_setup || {
	echo "Bail out! cannot mount the v1 hugetlb hierarchy"
	exit 1
}
EX=$CT_TOP/examples
STATE_ENV="OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR"
CFG_ENV="OCI_SOCKOPT_HOOK_CONFIG=$CT_EXAMPLE_CONFIG"

# hooks_to_test: jq filter that points every hook at the built binary, the
# example config and the test's state dir.
# shellcheck disable=SC2016 # jq variables
HOOKS_TO_TEST='.hooks |= map_values(map(.path = $hook |
	.env = [(.env // [])[] | select(startswith("OCI_SOCKOPT_HOOK_CONFIG=") | not)] + [$cfg, $state]))'

# finish_bundle DIR ARGS-JSON: the container runs ARGS from the test rootfs.
finish_bundle()
{
	jq --arg hook "$HOOK" --arg cfg "$CFG_ENV" --arg state "$STATE_ENV" \
		--arg rootfs "$CT_ROOTFS" --argjson args "$2" --arg path "$CT_HOOK_PATH_ENV" "
		$HOOKS_TO_TEST |
		.root = {path: \$rootfs, readonly: true} |
		.process.terminal = false | .process.args = \$args |
		.process.env = [\$path]" "$1/config.json" >"$1/config.json.new" &&
		mv "$1/config.json.new" "$1/config.json"
}

val()
{
	sed -n "s/^$1=//p" "$CT_OUT" | head -n 1
}

# --- runc/crun config.json snippet -------------------------------------
for rt in runc crun; do
	name=$rt-snippet
	b=$CT_TMP/bundles/$name
	mkdir -p "$b"
	(cd "$b" && runc spec) &&
		jq --slurpfile s "$EX/runc-crun-hooks.json" '. * $s[0] |
		.process.capabilities |= map_values(. + ["CAP_NET_ADMIN"])' \
			"$b/config.json" >"$b/config.json.new" &&
		mv "$b/config.json.new" "$b/config.json" &&
		finish_bundle "$b" '["sockcheck", "all"]'
	tap_ok $? "$rt: bundle from 'runc spec' + examples/runc-crun-hooks.json"
	before=$(ct_snapshot)
	ct_run "$rt" "$(ct_id "$name")" "$b"
	tap_is "$(val setsockopt) $(val cc) $(val socket_inet6_stream) $(val "done")" "EPERM reno EPERM ok" \
		"$rt, the snippet's hooks and annotation: SO_MARK denied, cc forced to reno, no IPv6" ||
		ct_diag_run "$b"
	ct_check_same "$rt: the snippet's poststop leaves nothing behind" "$before"
done

# --- containerd base runtime spec ---------------------------------------
POD=$EX/kubernetes/pod-per-container.yaml
for ctr in web POD; do
	name=base-spec-$ctr
	b=$CT_TMP/bundles/$name
	mkdir -p "$b"
	ann=$($PY "$here/../lib/k8s_annotations.py" "$POD" containerd "$ctr" \
		"$EX/containerd/config.toml") &&
		jq --argjson a "$ann" '.annotations = $a' \
			"$EX/containerd/sockopt-hook-base-spec.json" >"$b/config.json" &&
		finish_bundle "$b" '["sockcheck", "all"]'
	tap_ok $? "containerd base spec, container $ctr: bundle with containerd's annotations"
	before=$(ct_snapshot)
	ct_run runc "$(ct_id "$name")" "$b"
	# SO_MARK and TCP_CONGESTION cubic need CAP_NET_ADMIN, which
	# containerd's default spec does not grant; the policy's forced reno
	# needs none.
	if [ "$ctr" = web ]; then
		tap_is "$(val cc) $(val socket_inet6_stream) $(val rcvbuf) $(val "done")" "reno EPERM 131072 ok" \
			"runc with the containerd base spec, container web: restricted (cc forced, no IPv6, SO_RCVBUF clamped)" ||
			ct_diag_run "$b"
	else
		# The pause container makes no socket: sandbox_policy's
		# default, @deny-sockets, refuses every family.
		tap_is "$(val socket_inet_stream) $(val socket_inet6_stream) $(val socket_inet_dgram) $(val "done")" "EPERM EPERM EPERM ok" \
			"runc with the containerd base spec, the sandbox: sandbox_policy (no socket)" ||
			ct_diag_run "$b"
	fi
	ct_check_same "containerd base spec, container $ctr: nothing left behind" "$before"
done

# --- DaemonSet init container -------------------------------------------
DS=$EX/kubernetes/base/daemonset.yaml
IMG=$CT_TMP/ds-image
NODE=$CT_TMP/node
CM=$CT_TMP/configmap

# The image: busybox, and the tree of `make install DESTDIR=/dist` with the
# shared libraries the hook needs to run `validate` inside it.
mkdir -p "$IMG"/{bin,proc,sys,dev,tmp,etc} "$NODE" || exit 1
cp /bin/busybox "$IMG/bin/" &&
	for a in sh cp chmod mv echo cat; do ln -s busybox "$IMG/bin/$a" || exit 1; done
out=$(make -C "$CT_TOP" BUILD="$CT_BUILD" -o "$CT_BUILD/oci-sockopt-hook" \
	install DESTDIR="$IMG/dist" 2>&1) &&
	ldd "$IMG/dist/usr/local/libexec/oci/hooks.d/oci-sockopt-hook" |
	grep -o '/[^ ]*' | while read -r lib; do
		mkdir -p "$IMG$(dirname "$lib")" && cp -L "$lib" "$IMG$lib" || exit 1
	done
tap_ok $? "DaemonSet: an image with the 'make install DESTDIR=/dist' tree" || tap_diag "$out"

# ds_spec: what kubelet would run, from the YAML, as JSON: the init
# container's argv, its volume mounts as (mountPath, volume kind, hostPath
# or ConfigMap name, readOnly), and the ConfigMap's data.
ds_json=$($PY - "$DS" <<'PY'
import json, sys, yaml
import os
docs = {d["kind"]: d for d in yaml.safe_load_all(open(sys.argv[1]))}
# the ConfigMap as the base's configMapGenerator makes it
base = os.path.dirname(sys.argv[1])
gen = yaml.safe_load(open(os.path.join(base, "kustomization.yaml")))["configMapGenerator"][0]
data = dict(lit.split("=", 1) for lit in gen.get("literals", []))
for f in gen.get("files", []):
    data[os.path.basename(f)] = open(os.path.join(base, f)).read()
spec = docs["DaemonSet"]["spec"]["template"]["spec"]
init = spec["initContainers"][0]
vols = {v["name"]: v for v in spec["volumes"]}
mounts = []
for m in init["volumeMounts"]:
    v = vols[m["name"]]
    src = v["hostPath"]["path"] if "hostPath" in v else "configmap"
    mounts.append({"dest": m["mountPath"], "src": src,
                   "ro": bool(m.get("readOnly"))})
sc = init.get("securityContext", {})
print(json.dumps({"argv": init["command"] + init.get("args", []),
                  "mounts": mounts, "uid": sc.get("runAsUser", 0),
                  "drop_all": "ALL" in sc.get("capabilities", {}).get("drop", []),
                  "ro_root": bool(sc.get("readOnlyRootFilesystem")),
                  "data": data}))
PY
)
tap_ok $? "DaemonSet: init container, volumes and ConfigMap read from the YAML" ||
	tap_diag "$ds_json"

# configmap DATA-JSON: the ConfigMap volume as kubelet lays it out (files
# are symlinks into ..data).
configmap()
{
	rm -rf "$CM" && mkdir -p "$CM/..2026_01_01" && ln -s ..2026_01_01 "$CM/..data" &&
		jq -r 'keys[]' <<<"$1" | while read -r key; do
			jq -j --arg k "$key" '.[$k]' <<<"$1" >"$CM/..2026_01_01/$key" &&
				ln -s "..data/$key" "$CM/$key" || exit 1
		done
}

# run_init NAME: runs the init container under runc. Sets CT_RC/CT_OUT/CT_ERR.
run_init()
{
	local b=$CT_TMP/bundles/$1 mounts

	mkdir -p "$b"
	mounts=$(jq -c --arg node "$NODE" --arg cm "$CM" '[.mounts[] |
		{destination: .dest, type: "bind",
		 source: (if .src == "configmap" then $cm else $node + .src end),
		 options: (["rbind"] + (if .ro then ["ro"] else [] end))}]' <<<"$ds_json")
	jq -r '.mounts[] | select(.src != "configmap") | .src' <<<"$ds_json" |
		while read -r d; do mkdir -p "$NODE$d"; done # DirectoryOrCreate
	(cd "$b" && runc spec) || return 1
	jq --argjson ds "$ds_json" --argjson m "$mounts" --arg img "$IMG" '
		.process.terminal = false | .process.args = $ds.argv |
		.process.user = {uid: $ds.uid, gid: 0} |
		.process.noNewPrivileges = true |
		(if $ds.drop_all then .process.capabilities = {} else . end) |
		.root = {path: $img, readonly: $ds.ro_root} |
		.mounts += $m' "$b/config.json" >"$b/config.json.new" &&
		mv "$b/config.json.new" "$b/config.json" || return 1
	ct_run runc "$(ct_id "$1")" "$b"
}

N=$NODE/usr/local
configmap "$(jq -c .data <<<"$ds_json")"
run_init ds-install
tap_is "$CT_RC:$(tail -n 1 "$CT_OUT")" "0:oci-sockopt-hook installed" \
	"DaemonSet init container runs, unprivileged, and says so" ||
	tap_diag "stderr:" "$(cat "$CT_ERR")"
tap_is "$(cd "$NODE" && find . -type f -printf '%m %P\n' | sort -k2)" \
	"$(printf '%s\n' "644 etc/oci-sockopt-hook/config.json" \
		"644 usr/share/containers/oci/hooks.d/oci-sockopt-hook.json" \
		"755 usr/local/libexec/oci/hooks.d/oci-sockopt-hook" | sort -k2)" \
	"DaemonSet: the node has exactly the binary, the config and the hooks.d file (no temp files)"
cmp -s "$CT_BUILD/oci-sockopt-hook" "$N/libexec/oci/hooks.d/oci-sockopt-hook" &&
	cmp -s "$CT_EXAMPLE_CONFIG" "$NODE/etc/oci-sockopt-hook/config.json" &&
	cmp -s "$IMG/dist/usr/local/share/containers/oci/hooks.d/oci-sockopt-hook.json" \
		"$NODE/usr/share/containers/oci/hooks.d/oci-sockopt-hook.json"
tap_ok $? "DaemonSet: the files are the built binary, the ConfigMap's config and the installed hooks.d file"
tap_is "$(jq -r .hook.path "$NODE/usr/share/containers/oci/hooks.d/oci-sockopt-hook.json")" \
	/usr/local/libexec/oci/hooks.d/oci-sockopt-hook \
	"DaemonSet: the hooks.d file runs the binary where the DaemonSet put it"

# A broken ConfigMap: the init container fails, the node keeps its files.
snap=$(cd "$NODE" && find . -type f -exec md5sum {} + | sort)
configmap "$(jq -c '.data["config.json"] |= sub("\"policies\""; "\"polices\"")' <<<"$ds_json" | jq -c .data)"
run_init ds-broken
[ "$CT_RC" != 0 ] && grep -q "polices: unknown key" "$CT_ERR" "$CT_OUT"
tap_ok $? "DaemonSet: a broken ConfigMap fails the init container, with the validator's reason" ||
	tap_diag "exit $CT_RC; stdout:" "$(cat "$CT_OUT")" "stderr:" "$(cat "$CT_ERR")"
tap_is "$(cd "$NODE" && find . -type f -exec md5sum {} + | sort)" "$snap" \
	"DaemonSet: after the failed init, the node's files are untouched"

tap_done
