# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash disable=SC2034
#
# Pods through a CRI runtime, as kubelet runs them (tests/cri/cri.py), for
# the host suite 59-containerd-cri.sh and the node VM's CRI scenario. Set
# before use:
#   CRI_SOCK      the runtime's CRI socket
#   CRI_STUBS     the directory of the generated stubs (tests/cri/gen-stubs.sh)
#   CRI_DIR       a directory of ours: pod manifests, logs, kubelet's pod files
#   CRI_DRIVER    kubelet's cgroup driver: cgroupfs or systemd
# and CRI_PY (default: tests/cri/cri.py next to this file),
# CRI_PYTHON (default /usr/bin/python3).

CRI_LIB_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CRI_PY=${CRI_PY:-$CRI_LIB_TOP/tests/cri/cri.py}
CRI_PYTHON=${CRI_PYTHON:-/usr/bin/python3}
CRI_BUSYBOX=localhost/sockopt-hook-test/busybox:1
CRI_PAUSE=localhost/sockopt-hook-test/pause:1
# Pods made by cri_run_pod: "sandbox-id uid", for cri_cleanup.
CRI_PODS=()
# More options of the client for the next calls (--timeout, --configmaps).
CRI_OPTS=()

# cri ARGS...: tests/cri/cri.py against CRI_SOCK.
cri()
{
	"$CRI_PYTHON" "$CRI_PY" -a "$CRI_SOCK" --stubs "$CRI_STUBS" \
		--cgroup-driver "$CRI_DRIVER" --log-root "$CRI_DIR/pods-logs" \
		--pod-root "$CRI_DIR/kubelet-pods" "${CRI_OPTS[@]}" "$@"
}

# cri_images DIR BUSYBOX-ROOTFS PAUSE-PROGRAM: the archives of the tests'
# busybox image (a rootfs as ct_rootfs makes it) and of the pause image
# (/pause, its entrypoint), DIR/busybox.tar and DIR/pause.tar.
cri_images()
{
	local dir=$1 rootfs=$2 pause=$3

	mkdir -p "$dir/pause-rootfs" || return 1
	cp "$pause" "$dir/pause-rootfs/pause" || return 1
	"$CRI_PYTHON" "$CRI_LIB_TOP/tests/cri/mkimage.py" "$dir/busybox.tar" \
		"$CRI_BUSYBOX" "$rootfs" &&
		"$CRI_PYTHON" "$CRI_LIB_TOP/tests/cri/mkimage.py" "$dir/pause.tar" \
			"$CRI_PAUSE" "$dir/pause-rootfs" /pause
}

# cri_pod NAME HANDLER ANNOTATIONS-JSON CONTAINERS-JSON [SPEC-JSON]:
# writes the Pod manifest $CRI_DIR/NAME.json (host network, a fresh uid,
# grace period 2 s, then SPEC-JSON's fields over the spec's) and prints
# its path. CONTAINERS-JSON: [{name, command, caps}], all of the busybox
# image.
cri_pod()
{
	local name=$1 handler=$2 ann=$3 containers=$4 spec=${5:-'{}'}
	local out=$CRI_DIR/$1.json

	jq -n --arg name "$name" --arg handler "$handler" --argjson ann "$ann" \
		--argjson cs "$containers" --arg image "$CRI_BUSYBOX" \
		--argjson spec "$spec" \
		--arg uid "$(cat /proc/sys/kernel/random/uuid)" '{
		apiVersion: "v1", kind: "Pod",
		metadata: {name: $name, namespace: "sockopt-test", uid: $uid,
			   labels: {app: $name},
			   annotations: ($ann + {"kubernetes.io/config.source": "api"})},
		spec: ({hostNetwork: true, terminationGracePeriodSeconds: 2,
			containers: [$cs[] | {name, image: $image, command,
				securityContext: {capabilities: {add: (.caps // [])}}}]}
		       + if $handler == "" then {} else {runtimeClassName: $handler} end
		       + $spec)
	}' >"$out" || return 1
	echo "$out"
}

# cri_run_pod MANIFEST: runs the pod; sets CRI_SANDBOX, CRI_IDS (an
# associative array, container name -> id) and CRI_RUN_OUT (the client's
# JSON, with the init containers' ids). Fails with the client's error on
# stdout as comments.
cri_run_pod()
{
	local out name err=$CRI_DIR/run-pod.err

	# stdout is the one JSON line; what else the client (or gRPC's C core,
	# whose log lines go to stderr) prints is a diagnostic, never parsed
	out=$(cri run-pod "$1" 2>"$err") ||
		{ tap_diag "run-pod $1: $out $(cat "$err")"; return 1; }
	[ ! -s "$err" ] || tap_diag "run-pod $1 (stderr): $(head -c 600 "$err")"
	jq -e .sandbox <<<"$out" >/dev/null 2>&1 ||
		{ tap_diag "run-pod $1: not one JSON object: $out"; return 1; }
	CRI_RUN_OUT=$out
	CRI_SANDBOX=$(jq -r .sandbox <<<"$out")
	CRI_PODS+=("$CRI_SANDBOX $(jq -r .metadata.uid "$1")")
	declare -gA CRI_IDS=()
	for name in $(jq -r '.containers | keys[]' <<<"$out"); do
		CRI_IDS[$name]=$(jq -r --arg n "$name" '.containers[$n]' <<<"$out")
	done
}

# cri_exec CONTAINER-ID CMD...: ExecSync; prints stdout (then stderr, and
# the exit code unless 0).
cri_exec()
{
	local rc

	cri exec "$@" 2>&1
	rc=$?
	[ "$rc" = 0 ] || echo "exit $rc"
}

# cri_pid CONTAINER-ID: the host pid of the container's init.
cri_pid()
{
	cri inspect "$1" | jq -r '.info.pid // empty'
}

# cri_sandbox_pid SANDBOX-ID: the host pid of the pod's pause process.
cri_sandbox_pid()
{
	cri inspect-pod "$1" | jq -r '.info.pid // empty'
}

# cri_spec_annotations CONTAINER-ID: the annotations of the container's
# OCI spec, as the runtime wrote them (and the hook reads them).
cri_spec_annotations()
{
	cri inspect "$1" | jq -c '.info.runtimeSpec.annotations // {}'
}

# cri_remove_pod SANDBOX-ID: stops and removes the pod, as kubelet does
# when the pod is deleted; CRI_REMOVE_ATTEMPTS says how many tries it took.
cri_remove_pod()
{
	local keep=() entry try

	# kubelet retries a pod's removal until it succeeds; a shim that
	# closes its ttrpc connection while the kill is under way (seen on a
	# loaded node: "failed to kill container ...: ttrpc: closed") fails
	# one attempt, not the removal
	for try in 1 2 3; do
		CRI_REMOVE_ATTEMPTS=$try
		cri remove-pod "$1" && break
		[ "$try" != 3 ] || return 1
		echo "# remove-pod $1: attempt $try failed; retrying, as kubelet does"
		sleep 2
	done
	for entry in "${CRI_PODS[@]}"; do
		[ "${entry%% *}" = "$1" ] || keep+=("$entry")
	done
	CRI_PODS=("${keep[@]}")
}
