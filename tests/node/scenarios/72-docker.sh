#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Docker Engine 28 (Debian's docker.io, on the node's containerd and runc,
# systemd cgroups) on a node as Debian ships it: no daemon.json, dockerd
# not running. Wired as the docs have it:
#   oci-sockopt-hook runtime configure --runtime docker --default-runtime --restart
#   oci-sockopt-hook runtime configure --cdi
# and the probe image from 00-node's rootfs tarball with `docker import`
# (no registry):
#  - dockerd reads CDI specs (/etc/cdi, /var/run/cdi) with no features.cdi
#    of ours, and its default runtime is sockopt (runtime-exec); the spec
#    written after dockerd started needs no restart;
#  - `docker run --annotation sockopt-hook.io/policy=restricted` and
#    `docker run --device sockopt-hook.io/policy=restricted`: SO_MARK
#    refused, the SO_RCVBUF clamp read back, TCP_CONGESTION forced to
#    reno inside (docker exec), our programs on its docker-ID.scope, the
#    hook's record, and `status` names the annotation, the CDI device;
#    after `docker rm`: no record, the programs loaded are those before,
#    no scope;
#  - controls: the annotation under `--runtime runc` is not policed
#    (Docker has no hooks.d: the registered runtime is what brings the
#    hook), nor is a container with neither while the config has no
#    defaults;
#  - the operator's defaults (defaults.policy restricted): `docker run`
#    with neither is policed, `status` says defaults.policy;
#  - the config no longer allows restricted but the spec still offers it
#    (its path unit stopped): the device is refused by the hook in one
#    line, the container never runs, no record; after `cdi refresh`
#    Docker refuses the device itself;
#  - `runtime unconfigure --runtime docker --restart` and
#    `runtime unconfigure --cdi`: no daemon.json (as it was), no backup,
#    no spec, default runtime runc; dockerd stopped and its units as
#    they were: the node as before (node_state).
# node-timeout: 600
# shellcheck source=tests/node/guest/lib.sh
. "$NODE_PAYLOAD/lib.sh"

DJ=/etc/docker/daemon.json
SPEC=/etc/cdi/sockopt-hook.io-policy.json
DEV=sockopt-hook.io/policy=restricted
CFG_ORIG=$NODE_VAR/docker-config.orig
CAPS=(--cap-add NET_ADMIN --cap-add NET_RAW)
cp "$NODE_CONFIG" "$CFG_ORIG"

tap_like "$(dockerd --version 2>&1)" '^Docker version 28\.' "dockerd 28: $(dockerd --version 2>&1)"
tap_is "$(systemctl is-enabled docker.service docker.socket 2>&1 | tr '\n' ' ')" "disabled disabled " \
	"docker.service and docker.socket are disabled in the image"
tap_check "no daemon.json (Debian ships none)" test ! -e "$DJ"
CDI_DIR_WAS=$([ -d /etc/cdi ] && echo yes || echo no)
BEFORE=$(node_state)

# docker_restart ARGS...: the command (which restarts dockerd), after
# docker.service's start limit (3 in 60 s) is reset
docker_restart() {
	systemctl reset-failed docker.service 2>/dev/null
	"$@"
}

# --- wired as the docs have it ----------------------------------------------

out=$(docker_restart "$NODE_HOOK" runtime configure --runtime docker --default-runtime --restart 2>&1)
tap_like "$?:$out" "^0:$DJ: created.*restarted docker" \
	"runtime configure --runtime docker --default-runtime --restart: daemon.json created, dockerd started" ||
	{ tap_diag "$out"; journalctl -u docker --no-pager | tail -n 20 | sed 's/^/# /'; }
tap_diag "$(cat "$DJ" 2>&1)"
tap_is "$(jq -c '[.["default-runtime"], .runtimes.sockopt.path, .runtimes.sockopt.runtimeArgs[0], has("features")]' "$DJ" 2>&1)" \
	"[\"sockopt\",\"$NODE_HOOK\",\"runtime-exec\",false]" \
	"daemon.json: default-runtime sockopt, the installed binary's runtime-exec, no features.cdi (28 reads CDI specs)"
info=$(timeout 60 docker info --format '{{.DefaultRuntime}} {{json .CDISpecDirs}} {{.CgroupDriver}}' 2>&1)
tap_is "$info" 'sockopt ["/etc/cdi","/var/run/cdi"] systemd' \
	"docker info: default runtime sockopt, CDI spec dirs /etc/cdi and /var/run/cdi, systemd cgroups"
out=$("$NODE_HOOK" runtime configure --cdi 2>&1)
tap_like "$?:$out" "^0:$SPEC: created" "runtime configure --cdi writes $SPEC (dockerd not restarted)" ||
	tap_diag "$out"
out=$(docker import --change 'CMD ["/probe"]' "$NODE_VAR/rootfs.tar" "$NODE_IMAGE" 2>&1)
tap_ok $? "docker import of the probe rootfs as $NODE_IMAGE" || tap_diag "$out"

# --- a container, policed or not -----------------------------------------------

# docker_policed NAME SOURCE DOCKER-RUN-ARGS...: a detached container
# with those arguments is policed by "restricted" from SOURCE (status's
# policy_source): its scope, our programs on it, the record, the probe
# inside; after docker rm -f nothing is left.
docker_policed() {
	local name=$1 src=$2 cid pid cg st
	shift 2

	snapshot
	cid=$(docker run -d --name "$name" --network none "${CAPS[@]}" "$@" "$NODE_IMAGE" sleep 600 2>&1)
	tap_like "$cid" '^[0-9a-f]{64}$' "$name: docker run -d $*" || {
		tap_diag "$cid"
		docker rm -f "$name" >/dev/null 2>&1
		return 1
	}
	pid=$(docker inspect -f '{{.State.Pid}}' "$name")
	cg=$(cgroup_of "$pid")
	tap_like "$cg" "^/system\\.slice/docker-$cid\\.scope\$" "$name: a systemd scope ($cg)"
	tap_is "$(sh_progs "$cg")" "sh_getsockopt sh_setsockopt sh_sock_create" \
		"$name: our programs in effect on its cgroup"
	tap_check "$name: the hook's record" test -f "$NODE_STATE/$cid.json"
	st=$("$NODE_HOOK" status --json 2>&1)
	tap_is "$(jq -r --arg id "$cid" '.[] | select(.id == $id) | "\(.policy) from \(.policy_source)"' <<<"$st" 2>&1)" \
		"restricted from $src" "$name: status names the source: $src" || tap_diag "$st"
	PROBE_OUT=$(docker exec "$name" /probe 2>&1)
	tap_diag "$PROBE_OUT"
	check_restricted "$name"
	out=$(docker rm -f "$name" 2>&1)
	tap_ok $? "$name: docker rm -f" || tap_diag "$out"
	check_gone "$name" "docker-$cid.scope" "$cg"
}

# docker_unpoliced NAME DOCKER-RUN-ARGS...: docker run --rm /probe with
# those arguments sees no policy, and the hook keeps no record of it
docker_unpoliced() {
	local name=$1
	shift

	snapshot
	PROBE_OUT=$(docker run --rm --name "$name" --network none "${CAPS[@]}" "$@" "$NODE_IMAGE" /probe 2>&1)
	tap_ok $? "$name: docker run --rm $*" || tap_diag "$PROBE_OUT"
	check_unpoliced "$name"
	tap_is "$(state_records | tr '\n' ' ')" "$NODE_SNAP_RECORDS" "$name: no record"
}

docker_policed annotation "annotation $NODE_ANN_POLICY" --annotation "$NODE_ANN_POLICY=restricted"
docker_policed device "CDI device $DEV" --device "$DEV"
docker_unpoliced runc-annotation --runtime runc --annotation "$NODE_ANN_POLICY=restricted"
docker_unpoliced no-defaults

# --- the operator's defaults reach every container --------------------------

jq '.defaults.policy = "restricted"' "$CFG_ORIG" >"$NODE_CONFIG"
out=$(systemctl start oci-sockopt-hook-preload.service 2>&1)
tap_ok $? "the config with defaults.policy restricted, preloaded" || tap_diag "$out"
docker_policed defaults defaults.policy

# --- a device for a policy the config no longer allows -----------------------

# the path unit stopped, so that nothing refreshes the spec: it still
# offers restricted
systemctl stop oci-sockopt-hook-preload.path
jq '.annotations.allow_policies -= ["restricted"]' "$CFG_ORIG" >"$NODE_CONFIG"
tap_is "$(jq -r '[.devices[].name] | index("restricted") != null' "$SPEC")" true \
	"the spec still offers restricted, the config no longer allows it"
snapshot
out=$(docker run -d --name stale --network none --device "$DEV" "$NODE_IMAGE" sleep 600 2>&1)
rc=$?
tap_diag "$out"
tap_ok $((rc == 0)) "docker run --device $DEV: refused (exit $rc)"
tap_is "$(grep -c 'oci-sockopt-hook: container ' <<<"$out")" 1 "one line of the hook's in Docker's error"
tap_like "$out" "oci-sockopt-hook: container [0-9a-f]{64}: CDI device $DEV refused: 'restricted' is not in annotations\\.allow_policies of $NODE_CONFIG" \
	"it names the device and the setting"
tap_is "$(docker inspect -f '{{.State.Running}} {{.State.StartedAt}}' stale 2>&1)" \
	"false 0001-01-01T00:00:00Z" "the container never ran"
tap_is "$(state_records | tr '\n' ' ')" "$NODE_SNAP_RECORDS" "no record"
docker rm -f stale >/dev/null 2>&1
out=$(systemctl start oci-sockopt-hook-preload.service 2>&1)
tap_ok $? "the preload service (cdi refresh) for that config" || tap_diag "$out"
tap_is "$(jq -c '[.devices[].name]' "$SPEC")" '["bulk","setonly","bypass-prot-mem"]' \
	"cdi refresh: restricted's device is gone from the spec"
out=$(docker run -d --name refused --network none --device "$DEV" "$NODE_IMAGE" true 2>&1)
rc=$?
tap_like "$rc:$out" "^[1-9][0-9]*:.*unresolvable CDI devices $DEV" \
	"Docker refuses the device itself now" || tap_diag "$out"
docker rm -f refused >/dev/null 2>&1
tap_is "$(docker ps -a -q | wc -l)" 0 "no container left in Docker"
cp "$CFG_ORIG" "$NODE_CONFIG"
systemctl start oci-sockopt-hook-preload.service oci-sockopt-hook-preload.path
tap_is "$(jq -c '[.devices[].name]' "$SPEC")" '["restricted","bulk","setonly","bypass-prot-mem"]' \
	"the example config back: the spec offers restricted again"

# --- unconfigure: the node as before ------------------------------------------

out=$(docker_restart "$NODE_HOOK" runtime unconfigure --runtime docker --restart 2>&1)
tap_like "$?:$out" "^0:$DJ: removed.*restarted docker" \
	"runtime unconfigure --runtime docker --restart: daemon.json removed, dockerd restarted" ||
	tap_diag "$out"
tap_check "no daemon.json, as before" test ! -e "$DJ"
tap_check "no backup directory left" test ! -e /etc/docker/oci-sockopt-hook
tap_is "$(timeout 60 docker info --format '{{.DefaultRuntime}}' 2>&1)" runc "docker info: default runtime runc again"
out=$("$NODE_HOOK" runtime unconfigure --cdi 2>&1)
tap_like "$?:$out" "^0:$SPEC: removed" "runtime unconfigure --cdi removes the spec" || tap_diag "$out"
# /etc/cdi is every CDI vendor's: unconfigure takes out our spec, not the
# directory configure made; it goes here if the node had none
tap_is "$(ls -A /etc/cdi 2>&1)" "" "/etc/cdi holds nothing any more"
[ "$CDI_DIR_WAS" = yes ] || rmdir /etc/cdi
docker rmi "$NODE_IMAGE" >/dev/null 2>&1
systemctl stop docker.service docker.socket
ip link delete docker0 2>/dev/null
tap_is "$(systemctl is-active docker.service docker.socket 2>&1 | tr '\n' ' ')" "inactive inactive " \
	"dockerd stopped"
# an operator's own daemon.json, as they wrote it (spacing, key order, no
# final newline): configure keeps its keys, unconfigure puts its bytes back
printf '{ "log-level":"warn",\n  "runtimes": {} }' >"$DJ"
sum=$(sha256sum <"$DJ")
out=$("$NODE_HOOK" runtime configure --runtime docker --default-runtime 2>&1)
tap_is "$?:$(jq -c '[.["log-level"], .["default-runtime"], (.runtimes | keys)]' "$DJ" 2>&1)" \
	'0:["warn","sockopt",["sockopt"]]' "an operator's daemon.json: configure keeps its keys" || tap_diag "$out"
out=$("$NODE_HOOK" runtime unconfigure --runtime docker 2>&1)
tap_is "$?:$(sha256sum <"$DJ")" "0:$sum" "unconfigure: the operator's daemon.json byte-identical (sha256)" ||
	tap_diag "$out" "$(cat "$DJ")"
rm -f "$DJ"
after=$(node_state)
tap_is "$after" "$BEFORE" "the node as before (files, pins, records, units)" ||
	diff <(echo "$BEFORE") <(echo "$after") | sed 's/^/# /'
tap_done
