# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash disable=SC2034 # the paths are for the scenarios
#
# Helpers of the node scenarios (tests/node/scenarios/*.sh), sourced by each
# one inside the node. run.sh exports NODE_PAYLOAD (the payload disk's mount
# point) and puts its bin/ (the static probes) on PATH.

# shellcheck source=tests/lib/tap.sh
. "$NODE_PAYLOAD/tap.sh"

# What `make install HOOKSD=/usr/share/containers/oci/hooks.d` put where
# (00-node.sh runs it, as an operator would). That hooks.d directory is the
# one podman 5 reads by default (containers/common's DefaultHooksDirs; it
# no longer reads /etc/containers/oci/hooks.d unless containers.conf's
# hooks_dir names it: 30-podman.sh shows both); CRI-O reads it too.
NODE_HOOK=/usr/local/libexec/oci/hooks.d/oci-sockopt-hook
NODE_CONFIG=/etc/oci-sockopt-hook/config.json
NODE_HOOKSD=/usr/share/containers/oci/hooks.d
NODE_ETC_HOOKSD=/etc/containers/oci/hooks.d
NODE_STATE=/run/oci-sockopt-hook
# the suite's own state in the node: rootfs, bundles, the image tarball
NODE_VAR=/var/lib/node-suite
NODE_ROOTFS=$NODE_VAR/rootfs
NODE_IMAGE=localhost/node-probe:latest
# the annotations of the policed containers: the example config's
# "restricted" policy and the memory-accounting opt-out
NODE_ANN_POLICY=sockopt-hook.io/policy
NODE_ANN_BYPASS=sockopt-hook.io/bypass-prot-mem

# wait_until SECS CMD...: poll CMD every 0.2 s until it succeeds
wait_until() {
	local end=$((SECONDS + $1))

	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}

# BPF programs loaded in the kernel (ids, one a line)
prog_ids() { bpftool prog show -j | jq -r '.[].id' | sort -n; }

# the hook's container records in its state directory
state_records() {
	find "$NODE_STATE" -maxdepth 1 -name '*.json' -printf '%f\n' 2>/dev/null | sort
}

# record_json ID: the JSON of container ID's record (kept in the file's
# trusted.oci-sockopt-hook.record attribute, or in the file itself)
record_json() {
	python3 - "$NODE_STATE/$1.json" <<'PY'
import os, sys
p = sys.argv[1]
with open(p, "rb") as f:
    data = f.read()
if not data:
    data = os.getxattr(p, "trusted.oci-sockopt-hook.record", follow_symlinks=False)
sys.stdout.write(data.decode())
PY
}

# cgroup_of PID: the cgroup v2 path of PID ("/system.slice/x.scope")
cgroup_of() { sed -n 's/^0:://p' "/proc/$1/cgroup"; }

# our_progs CGROUP_PATH: the names of the programs attached to that cgroup
# (relative to /sys/fs/cgroup), sorted, space separated
our_progs() {
	bpftool cgroup show "/sys/fs/cgroup$1" -j 2>/dev/null |
		jq -r '.[].name' | sort | tr '\n' ' ' | sed 's/ $//'
}

# the cgroup v2 root (NODE_CGROOT; 95-node.sh runs these helpers on a
# host whose cgroup2 is elsewhere) and the number of removed cgroups
# under it the kernel has not released yet
NODE_CGROOT=${NODE_CGROOT:-/sys/fs/cgroup}
nr_dying() { sed -n 's/^nr_dying_descendants //p' "$NODE_CGROOT/cgroup.stat"; }

# snapshot: what must be the same after a container is gone
NODE_SNAP_PROGS="" NODE_SNAP_RECORDS="" NODE_SNAP_DYING=0
snapshot() {
	NODE_SNAP_PROGS=$(prog_ids | tr '\n' ' ')
	NODE_SNAP_RECORDS=$(state_records | tr '\n' ' ')
	NODE_SNAP_DYING=$(nr_dying)
}

# same_progs: the loaded programs are those of the snapshot again
same_progs() { [ "$(prog_ids | tr '\n' ' ')" = "$NODE_SNAP_PROGS" ]; }
# same_records: the hook's records are those of the snapshot again
same_records() { [ "$(state_records | tr '\n' ' ')" = "$NODE_SNAP_RECORDS" ]; }

# progs_settled: the loaded programs become the snapshot's again. The
# kernel frees a cgroup's programs only when it releases the cgroup
# (cgroup_bpf_release, once the cgroup's bpf reference count drops to
# zero), not at rmdir: every socket made in the cgroup holds that count
# (sk_cgrp_data, cgroup_sk_alloc) until it is freed, and a removed pod's
# servers leave orphaned sockets (FIN_WAIT, LAST_ACK, retransmitting)
# that outlive their processes, the more so on a slow node. So, while
# the programs differ and more cgroups are dying under the root than at
# the snapshot, this waits (NODE_DYING_WAIT, 180 s, scaled by run.sh's
# NODE_FACTOR); then the programs must be the snapshot's within 20 s
# (NODE_PROGS_GRACE). A
# program left with no cgroup dying (a pin, an fd a process holds, a
# cgroup still there) fails after those 20 s as before; one whose cgroup
# never goes fails at the bound. Diagnostics on failure (progs_diag).
progs_settled() {
	local start=$SECONDS d
	local end=$((start + ${NODE_DYING_WAIT:-180} * ${NODE_FACTOR:-100} / 100))

	until same_progs; do
		d=$(nr_dying)
		if ! [[ $d =~ ^[0-9]+$ ]] || [ "$d" -le "${NODE_SNAP_DYING:-0}" ] ||
			[ $SECONDS -ge $end ]; then
			if wait_until "${NODE_PROGS_GRACE:-20}" same_progs; then
				echo "# the programs went $((SECONDS - start)) s after the check began"
				return 0
			fi
			progs_diag
			return 1
		fi
		sleep 1
	done
	[ $SECONDS = "$start" ] ||
		echo "# the programs went $((SECONDS - start)) s after the check began, with the dying cgroups"
}

# progs_diag: as comments, the programs that differ from the snapshot's
# (+ loaded since, - gone since, with bpftool's line), the dying cgroups
# and the node's TCP sockets
progs_diag() {
	local id

	comm -3 <(tr ' ' '\n' <<<"$NODE_SNAP_PROGS" | sed '/^$/d' | sort) <(prog_ids | sort) |
		while IFS= read -r id; do
			case $id in
			$'\t'*) echo "+ ${id#$'\t'}: $(bpftool prog show id "${id#$'\t'}" 2>&1 | head -n 2 | tr '\n' ' ')" ;;
			*) echo "- $id: gone since the snapshot" ;;
			esac
		done | sed 's/^/# program /'
	echo "# nr_dying_descendants of $NODE_CGROOT: $(nr_dying) (at the snapshot: $NODE_SNAP_DYING)"
	ss -tanp 2>&1 | head -n 40 | sed 's/^/# ss: /'
}

# check_progs DESC: progs_settled as a test
check_progs() {
	progs_settled
	tap_ok $? "$1"
}

# check_gone NAME UNIT CGROUP: after the container NAME is deleted, no
# record, no scope unit, no cgroup, no program beyond the snapshot's
check_gone() {
	local name=$1 unit=$2 cg=$3

	tap_is "$(state_records | tr '\n' ' ')" "$NODE_SNAP_RECORDS" \
		"$name: no hook state record left"
	check_progs "$name: the BPF programs loaded are those before the container"
	wait_until 20 test ! -d "/sys/fs/cgroup$cg"
	tap_ok $? "$name: cgroup $cg removed"
	wait_until 20 unit_gone "$unit"
	tap_ok $? "$name: unit $unit gone ($(systemctl show -P ActiveState "$unit" 2>&1))"
}

unit_gone() {
	case $(systemctl show -P ActiveState "$1" 2>/dev/null) in
	"" | inactive | failed) return 0 ;;
	esac
	return 1
}

# out_val KEY: KEY's value in the probe output $PROBE_OUT ("key=value")
out_val() { sed -n "s/^$1=//p" <<<"$PROBE_OUT" | head -n1; }

# check_restricted NAME: the probe output $PROBE_OUT shows the example
# config's "restricted" policy, seen from inside the container
check_restricted() {
	local n=$1 rcv

	tap_is "$(out_val setsockopt)" EPERM "$n: setsockopt(SO_MARK) gives EPERM inside"
	tap_is "$(out_val mark)" EPERM "$n: getsockopt(SO_MARK) gives EPERM inside"
	rcv=$(out_val rcvbuf)
	[[ $rcv =~ ^[0-9]+$ ]] && [ "$rcv" -le 131072 ]
	tap_ok $? "$n: SO_RCVBUF of 4 MiB reads back <= 131072 (got $rcv)"
	tap_is "$(out_val cc)" reno "$n: TCP_CONGESTION cubic reads back reno"
	tap_is "$(out_val socket_inet6_stream)" EPERM "$n: socket(AF_INET6, SOCK_STREAM) gives EPERM"
	tap_is "$(out_val socket_inet_raw)" EPERM "$n: socket(AF_INET, SOCK_RAW) gives EPERM"
	tap_is "$(out_val socket_inet_stream)" ok "$n: socket(AF_INET, SOCK_STREAM) works"
}

# check_unpoliced NAME: $PROBE_OUT (with CAP_NET_ADMIN) shows no policy
check_unpoliced() {
	tap_is "$(out_val setsockopt)" ok "$1: setsockopt(SO_MARK) works (no policy)"
	tap_is "$(out_val mark)" 0 "$1: getsockopt(SO_MARK) works, no mark (no policy)"
	tap_is "$(out_val cc)" cubic "$1: TCP_CONGESTION cubic stays (no policy)"
	tap_is "$(out_val socket_inet6_stream)" ok "$1: socket(AF_INET6) works (no policy)"
}

# growth LINE: the sockstat growth in a memacct line ("... growth=N ...")
growth() { sed -n 's/.* growth=\([-0-9]*\).*/\1/p' <<<" $1" | head -n1; }

# check_bypassed NAME: the memacct line of the probe output: for 1024
# pages sent, memory_allocated grew by at most 10 pages (charged: > 32)
check_bypassed() {
	local g

	g=$(growth "$(out_val memacct)")
	[[ $g =~ ^-?[0-9]+$ ]] && [ "$g" -le 10 ]
	tap_ok $? "$1: TCP memory not charged inside (memory_allocated growth ${g:-missing} <= 10 pages)"
	echo "FIGURE $1 growth=${g:-missing}"
}

# check_charged NAME LINE: a memacct line from outside any policed cgroup
check_charged() {
	local g

	g=$(growth "$2")
	[[ $g =~ ^-?[0-9]+$ ]] && [ "$g" -gt 32 ]
	tap_ok $? "$1: TCP memory charged (growth ${g:-missing} > 32 pages)"
	echo "FIGURE $1 growth=${g:-missing}"
}

# sh_progs CGROUP_PATH: our programs in effect on that cgroup (attached to
# it or inherited), sorted, space separated
sh_progs() {
	bpftool cgroup show "/sys/fs/cgroup$1" effective -j 2>/dev/null |
		jq -r '.[].name' | grep '^sh_' | sort | tr '\n' ' ' | sed 's/ $//'
}

# make_bundle DIR ID CGROUPS_PATH ANNOTATIONS_JSON [ARGS_JSON]: an OCI
# bundle from `runc spec` running ARGS_JSON (["sleep", "600"]) in the
# probe rootfs, with CAP_NET_ADMIN
# and CAP_NET_RAW (so that SO_MARK and raw sockets are refused by the
# policy, not by missing capabilities), with the hooks an
# operator adds for runc and crun (examples/runc-crun-hooks.json, which
# point at what `make install` installed) and these annotations
make_bundle() {
	local dir=$1 id=$2 cgpath=$3 ann=$4 args=${5:-'["sleep", "600"]'}

	rm -rf "$dir" && mkdir -p "$dir" || return 1
	(cd "$dir" && runc spec) || return 1
	jq --slurpfile ex "$NODE_PAYLOAD/src/examples/runc-crun-hooks.json" \
		--arg root "$NODE_ROOTFS" --arg cgp "$cgpath" --arg id "$id" \
		--argjson ann "$ann" --argjson args "$args" '
		.process.terminal = false | .process.args = $args |
		.root = {path: $root, readonly: true} | .hostname = $id |
		.linux.cgroupsPath = $cgp | .hooks = $ex[0].hooks |
		.process.capabilities |= with_entries(.value += ["CAP_NET_ADMIN", "CAP_NET_RAW"]) |
		.annotations = $ann' "$dir/config.json" >"$dir/config.json.new" &&
		mv "$dir/config.json.new" "$dir/config.json"
}

# oci_runtime_scenario RUNTIME ARGS...: the runc/crun scenario with the
# systemd cgroup driver (ARGS are RUNTIME's global options that choose it):
# a detached container with the "restricted" policy and the bypass, its
# scope, the policy and the bypass seen from inside (RUNTIME exec), and
# nothing left after kill + delete
oci_runtime_scenario() {
	local rt=$1 id=node-$1 cg pid unit out
	shift
	local -a r=("$rt" "$@")
	local ann="{\"$NODE_ANN_POLICY\": \"restricted\", \"$NODE_ANN_BYPASS\": \"true\"}"

	tap_diag "$("$rt" --version | head -n1)"
	snapshot
	make_bundle "$NODE_VAR/bundles/$id" "$id" "system.slice:$rt:$id" "$ann"
	tap_ok $? "$rt: bundle with the example hooks and annotations $ann"
	"${r[@]}" run -d -b "$NODE_VAR/bundles/$id" "$id" </dev/null >/dev/null 2>"$NODE_VAR/$id.err"
	tap_ok $? "$rt ${*}: run -d $id" || sed 's/^/# /' "$NODE_VAR/$id.err"
	pid=$("${r[@]}" state "$id" | jq -r .pid)
	cg=$(cgroup_of "$pid")
	unit="$rt-$id.scope"
	tap_like "$cg" "^/system\\.slice/$rt-$id\\.scope(/[a-z]+)?\$" \
		"$rt: the container's cgroup is a systemd scope ($cg)"
	tap_is "$(systemctl show -P ActiveState "$unit")" active "$rt: systemd knows $unit (active)"
	tap_is "$(sh_progs "$cg")" "sh_getsockopt sh_setsockopt sh_sock_bypass" \
		"$rt: our programs in effect on $cg (restricted + bypass: one sock_create program)"
	cg=${cg%/container}
	tap_check "$rt: the hook's record $NODE_STATE/$id.json" test -f "$NODE_STATE/$id.json"

	PROBE_OUT=$("${r[@]}" exec "$id" /probe 2>&1)
	tap_diag "$PROBE_OUT"
	check_restricted "$rt exec"
	check_bypassed "$rt exec"

	"${r[@]}" kill "$id" KILL
	# shellcheck disable=SC2317 # called through wait_until
	rt_stopped() { [ "$("${r[@]}" state "$id" | jq -r .status)" = stopped ]; }
	wait_until 20 rt_stopped
	tap_ok $? "$rt: kill KILL stops $id"
	out=$("${r[@]}" delete "$id" 2>&1)
	tap_ok $? "$rt: delete $id" || tap_diag "$out"
	check_gone "$rt" "$unit" "$cg"

	# in the foreground: RUNTIME run returns when /probe exits and deletes
	# the container itself (poststop from the runtime's own teardown)
	id=$id-fg
	snapshot
	make_bundle "$NODE_VAR/bundles/$id" "$id" "system.slice:$rt:$id" "$ann" '["/probe"]'
	PROBE_OUT=$("${r[@]}" run -b "$NODE_VAR/bundles/$id" "$id" </dev/null 2>&1)
	tap_ok $? "$rt ${*}: run $id in the foreground"
	tap_diag "$PROBE_OUT"
	check_restricted "$rt run"
	check_bypassed "$rt run"
	tap_is "$("${r[@]}" list -q | grep -cx "$id")" 0 "$rt: $id deleted when its process exited"
	check_gone "$rt run" "$rt-$id.scope" "/system.slice/$rt-$id.scope"
}

# --- a node that never saw the hook (70-daemonset, 71-runtime-configure) --

# node_make TARGET: the repository's make TARGET as 00-node runs it
# (install or uninstall; the binary from the build host, no compiler here).
node_make() {
	(cd "$NODE_PAYLOAD/src" &&
		make -o build/oci-sockopt-hook "$1" HOOKSD="$NODE_HOOKSD" 2>&1)
}

# node_state: what "the node as it was" compares: every file and
# directory under the paths that make install, the DaemonSet and runtime
# configure touch (with its mode and, for a file, its content), the pins,
# the hook's records, the units' state (dockerd's: enabled and running
# only while 72-docker runs it), containerd's effective config.
NODE_STATE_PATHS="/usr/local/libexec /usr/local/share/containers /usr/local/lib/systemd
/etc/oci-sockopt-hook /usr/share/containers/oci /etc/containers/oci /etc/containerd
/etc/kubernetes /var/lib/prometheus /sys/fs/bpf /opt/nri/plugins /etc/systemd/system
/etc/docker /etc/cdi /run/cdi"
node_state() {
	local p

	for p in $NODE_STATE_PATHS; do
		[ -e "$p" ] || continue
		# crun makes /sys/fs/bpf/crun for its device programs' pins the
		# first time it runs a container, and keeps it: only what is in
		# it counts
		find "$p" \( -path /sys/fs/bpf/crun -type d -empty -prune \) -o \
			-printf '%p %y %m\n' | sort
		# pins have no content to read (EIO): their names are listed
		[ "$p" = /sys/fs/bpf ] || find "$p" -type f -exec sha256sum {} + | sort -k2
	done
	state_records
	systemctl is-enabled oci-sockopt-hook-preload.path oci-sockopt-hook-metrics.timer \
		oci-sockopt-hook-nri.service docker.service docker.socket 2>&1
	systemctl is-active docker.service docker.socket 2>&1
	containerd config dump 2>&1 | sha256sum
}

# node_forget_hook: undoes 00-node's install (make uninstall), so that a
# scenario starts from a node that never saw the hook; fails if anything of
# the hook is left.
node_forget_hook() {
	local out

	out=$(node_make uninstall) || { tap_diag "$out"; return 1; }
	[ ! -e "$NODE_HOOK" ] && [ ! -e "$NODE_CONFIG" ] &&
		[ ! -e "$NODE_HOOKSD/oci-sockopt-hook.json" ] &&
		[ ! -e /sys/fs/bpf/oci-sockopt-hook ]
}

# pod_cgroups_gone: kubelet's pod container manager removes the pods'
# cgroups (no kubelet here): cgroupfs driver.
pod_cgroups_gone() {
	[ -d /sys/fs/cgroup/kubepods ] || return 0
	find /sys/fs/cgroup/kubepods -depth -type d -exec rmdir {} \; 2>/dev/null
	[ ! -d /sys/fs/cgroup/kubepods ]
}

# --- the CRI scenarios (40, 45, 70, 71, 76-examples, 80-nri) ----------------
# after tests/lib/cri.sh is sourced with CRI_DIR set:

# node_cri_stubs: the CRI client's stubs, generated here; sets CRI_STUBS
# (skips the scenario where they cannot be made)
node_cri_stubs() {
	local out rc

	out=$("$NODE_PAYLOAD/src/tests/cri/gen-stubs.sh" "$NODE_VAR" 2>&1)
	rc=$?
	case $rc in
	0) CRI_STUBS=$(tail -n1 <<<"$out") ;;
	77) tap_diag "$out"; tap_skip_all "no CRI stubs here: $(tail -n1 <<<"$out")" ;;
	*) tap_diag "$out"; tap_bail "tests/cri/gen-stubs.sh failed" ;;
	esac
	tap_ok 0 "CRI stubs generated here by $(python3 -m grpc_tools.protoc --version)"
}

# nri_registered: the NRI plugin holds the node's lock and has registered
# with the runtime (`features` says sockopt-hook.io/nri=true)
nri_registered() { "$NODE_HOOK" features 2>/dev/null | grep -qx 'sockopt-hook.io/nri=true'; }

# containerd's config.toml as these scenarios set it, and the node's own
# put back: the first node_ctd_keep (or node_ctd_config) of a scenario
# keeps the node's file (or its absence) in $CRI_DIR, and
# node_ctd_restore puts that back.
NODE_CTD_TOML=/etc/containerd/config.toml
NODE_CTD_KEPT=
node_ctd_keep() {
	[ -z "$NODE_CTD_KEPT" ] || return 0
	rm -f "$CRI_DIR/config.toml.orig"
	[ ! -e "$NODE_CTD_TOML" ] || cp "$NODE_CTD_TOML" "$CRI_DIR/config.toml.orig" || return 1
	NODE_CTD_KEPT=1
}

# node_ctd_config [--imports] [--base-spec FILE] [TOML]: config version 3
# with the pinned pause image and the default handler runc on kubelet's
# cgroup driver (systemd on this node); --imports: it imports
# /etc/containerd/conf.d/*.toml; --base-spec: runc's base_runtime_spec is
# FILE; TOML: more tables, after the pause image's
node_ctd_config() {
	local imports=0 spec=""

	while [ $# -gt 0 ]; do
		case $1 in
		--imports) imports=1 ;;
		--base-spec) spec=$2 && shift ;;
		*) break ;;
		esac
		shift
	done
	node_ctd_keep || return 1
	mkdir -p "${NODE_CTD_TOML%/*}" || return 1
	{
		echo "version = 3"
		[ "$imports" = 0 ] || echo 'imports = ["/etc/containerd/conf.d/*.toml"]'
		printf '\n%s\n  sandbox = "%s"\n' \
			"[plugins.'io.containerd.cri.v1.images'.pinned_images]" "$CRI_PAUSE"
		[ $# = 0 ] || printf '\n%s\n' "$1"
		cat <<'EOF'

# kubelet's cgroupDriver is systemd on this node: runc's must be too.
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
EOF
		[ -z "$spec" ] || echo "  base_runtime_spec = \"$spec\""
		cat <<'EOF'
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
    SystemdCgroup = true
EOF
	} >"$NODE_CTD_TOML"
}

# node_ctd_restore [FILE...]: the node's config.toml back (none if it had
# none), FILEs removed, containerd restarted on them
# shellcheck disable=SC2120 # FILEs are optional
node_ctd_restore() {
	if [ -e "$CRI_DIR/config.toml.orig" ]; then
		cp "$CRI_DIR/config.toml.orig" "$NODE_CTD_TOML"
	else
		rm -f "$NODE_CTD_TOML"
	fi
	[ $# = 0 ] || rm -f "$@"
	systemctl restart containerd
}

# ctd_sandbox_image: the pause image this containerd's CRI runs sandboxes
# from (2.x: pinned_images.sandbox; 1.x: sandbox_image).
ctd_sandbox_image() {
	containerd config dump 2>/dev/null |
		sed -n "s/^ *\(sandbox\|sandbox_image\) = ['\"]\(.*\)['\"]$/\2/p" | head -n1
}

# node_cri_images: the busybox probe image and the pause image (the
# payload's static pause program) imported into containerd's k8s.io store,
# the pause image also under the name containerd wants for sandboxes (no
# registry here: a config that pins none of ours, Debian's, names
# registry.k8s.io's); one test, its status returned
node_cri_images() {
	local out ids want

	mkdir -p "$CRI_DIR/pause-bin"
	if [ -x "$NODE_PAYLOAD/bin/pause" ]; then
		cp "$NODE_PAYLOAD/bin/pause" "$CRI_DIR/pause-bin/pause"
	else
		# tests/progs/pause.c is not in this payload: a shell that
		# does the same (PID 1 ignores signals it has no handler for).
		cp /bin/busybox "$CRI_DIR/pause-bin/busybox"
		printf '#!/busybox sh\ntrap "exit 0" TERM INT\nwhile :; do /busybox sleep 1; done\n' \
			>"$CRI_DIR/pause-bin/pause-sh"
		printf '#!/busybox sh\nexec /busybox sh /pause-sh\n' >"$CRI_DIR/pause-bin/pause"
		chmod 0755 "$CRI_DIR/pause-bin/pause" "$CRI_DIR/pause-bin/pause-sh"
	fi
	cri_images "$CRI_DIR/images" "$NODE_ROOTFS" "$CRI_DIR/pause-bin/pause" &&
		cp -a "$CRI_DIR/pause-bin/." "$CRI_DIR/images/pause-rootfs/" &&
		"$CRI_PYTHON" "$NODE_PAYLOAD/src/tests/cri/mkimage.py" "$CRI_DIR/images/pause.tar" \
			"$CRI_PAUSE" "$CRI_DIR/images/pause-rootfs" /pause
	out=$(for img in busybox pause; do
		ctr -n k8s.io images import "$CRI_DIR/images/$img.tar" 2>&1 || echo "import $img failed"
	done)
	want=$(ctd_sandbox_image)
	[ "$want" != "$CRI_PAUSE" ] || want=
	if [ -n "$want" ]; then
		out+=$(ctr -n k8s.io images tag --force "$CRI_PAUSE" "$want" 2>&1) ||
			out+=" tag $want failed"
	fi
	ids=$(cri image-id "$CRI_BUSYBOX" && cri image-id "${want:-$CRI_PAUSE}")
	tap_like "$ids" '^sha256:[0-9a-f]{64}'$'\n''sha256:[0-9a-f]{64}$' \
		"ctr images import: the busybox and pause images are in CRI's store${want:+ (pause as $want)}" ||
		tap_diag "$out" "$ids"
}

# --- a scenario's budget: by progress ---------------------------------------
# node_run_scenario SCRIPT BUDGET: bash SCRIPT (stdin /dev/null), its output
# passed on line by line, under a budget that follows its progress rather
# than a wall clock: it is stopped once it has printed nothing for BUDGET
# seconds (a hang), or once it has run NODE_BUDGET_CEILING (3) times
# BUDGET while still printing, so that a machine a third as fast as the
# one the budgets were set on still passes. Stopped as timeout(1) stops a
# command (TERM to its process group, KILL 10 s later; status 124, 137
# after the KILL), with a line saying why. Its exit status otherwise. A
# child it leaves behind holding its output does not hold the runner.
NODE_BUDGET_CEILING=3
node_run_scenario() {
	local s=$1 budget=$2 name fifo tpid fd line last st stopped="" start=$SECONDS

	name=$(basename "$s" .sh)
	fifo=$(mktemp -u "${TMPDIR:-/tmp}/node-scenario.XXXXXX") && mkfifo "$fifo" || return 1
	# in the background, with SIGINT and SIGQUIT as the runner has them
	# (bash ignores them for a background command)
	(
		trap - INT QUIT
		exec timeout -k 10 $((budget * NODE_BUDGET_CEILING)) bash "$s" </dev/null >"$fifo" 2>&1
	) &
	tpid=$!
	exec {fd}<"$fifo"
	rm -f "$fifo"
	last=$SECONDS
	while :; do
		line=""
		IFS= read -r -t 1 line <&"$fd"
		st=$?
		if [ $st = 0 ]; then
			printf '%s\n' "$line"
			last=$SECONDS
			continue
		fi
		# a partial line (timed out) or the last one (no newline)
		[ -z "$line" ] || { printf '%s' "$line"; last=$SECONDS; }
		# end of its output, or it ended and a child holds the pipe
		[ $st -gt 128 ] || break
		if ! node_alive "$tpid"; then
			# what it wrote as it ended (a child of it may hold the
			# pipe and write on: 5 s of that at most)
			st=$SECONDS
			while [ $((SECONDS - st)) -lt 5 ] && IFS= read -r -t 0.5 line <&"$fd"; do
				printf '%s\n' "$line"
				line=""
			done
			[ -z "$line" ] || printf '%s' "$line"
			break
		fi
		if [ -z "$stopped" ] && [ $((SECONDS - last)) -ge "$budget" ]; then
			echo "# $name: silent for ${budget}s: stopped"
			stopped=1
			# timeout(1)'s own alarm: as if its time were up
			kill -ALRM "$tpid" 2>/dev/null
		fi
	done
	exec {fd}<&-
	wait "$tpid"
	st=$?
	if [ -z "$stopped" ] && { [ $st = 124 ] || [ $st = 137 ]; } &&
		[ $((SECONDS - start)) -ge $((budget * NODE_BUDGET_CEILING)) ]; then
		echo "# $name: still running after $((budget * NODE_BUDGET_CEILING))s ($NODE_BUDGET_CEILING times its budget): stopped"
	fi
	return $st
}

# node_alive PID: PID runs (is not gone, nor a zombie left to reap)
node_alive() {
	local state

	state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	[ -n "$state" ] && [ "$state" != Z ]
}

# --- the known node: what run.sh puts back after a scenario -----------------
# After 00-node, run.sh saves the node as every later scenario must find it
# (node_known_save); after each scenario, a node that differs (a scenario
# stopped by its budget before it put containerd back, or one that failed
# half-way) is put back (node_known_restore), outside the scenario's
# budget, so that the next one starts from the known node.
NODE_KNOWN=$NODE_VAR/known
NODE_KNOWN_UNITS="containerd.service oci-sockopt-hook-preload.path oci-sockopt-hook-metrics.timer oci-sockopt-hook-nri.service docker.socket docker.service"

node_units() {
	local u

	for u in $NODE_KNOWN_UNITS; do
		echo "$u $(systemctl is-enabled "$u" 2>/dev/null || true) $(systemctl is-active "$u" 2>/dev/null || true)"
	done
}

node_known_save() {
	local p

	rm -rf "$NODE_KNOWN" && mkdir -p "$NODE_KNOWN" || return 1
	for p in $NODE_STATE_PATHS; do
		[ "$p" != /sys/fs/bpf ] && [ -e "$p" ] && echo "${p#/}"
	done >"$NODE_KNOWN/paths"
	tar -C / --numeric-owner -cpf "$NODE_KNOWN/files.tar" -T "$NODE_KNOWN/paths" || return 1
	node_units >"$NODE_KNOWN/units"
	node_state >"$NODE_KNOWN/state"
}

# node_known_same: the node is the known one
node_known_same() { [ "$(node_state)" = "$(cat "$NODE_KNOWN/state")" ]; }

# node_known_restore: every container gone, the known files, units and
# pins back, containerd restarted on them; fails if the node still
# differs (the difference as comments).
node_known_restore() {
	local ns id p u en act

	for ns in $(timeout 20 ctr namespaces list -q 2>/dev/null); do
		for id in $(timeout 20 ctr -n "$ns" tasks list -q 2>/dev/null); do
			timeout 20 ctr -n "$ns" tasks kill -s KILL "$id" >/dev/null 2>&1
			timeout 20 ctr -n "$ns" tasks delete -f "$id" >/dev/null 2>&1
		done
		for id in $(timeout 20 ctr -n "$ns" containers list -q 2>/dev/null); do
			timeout 20 ctr -n "$ns" containers delete "$id" >/dev/null 2>&1
		done
	done
	for id in $(runc list -q 2>/dev/null) $(crun list -q 2>/dev/null); do
		runc delete -f "$id" >/dev/null 2>&1 || crun delete -f "$id" >/dev/null 2>&1
	done
	timeout 60 podman rm -a -f >/dev/null 2>&1
	systemctl stop containerd oci-sockopt-hook-nri.service >/dev/null 2>&1
	pod_cgroups_gone
	for p in $NODE_STATE_PATHS; do
		[ "$p" = /sys/fs/bpf ] || rm -rf "$p"
	done
	tar -C / --numeric-owner -xpf "$NODE_KNOWN/files.tar"
	systemctl daemon-reload
	while read -r u en act; do
		case $en in
		enabled) systemctl enable "$u" >/dev/null 2>&1 ;;
		disabled) systemctl disable "$u" >/dev/null 2>&1 ;;
		esac
		case $act in
		active) systemctl restart "$u" >/dev/null 2>&1 ;;
		*) systemctl stop "$u" >/dev/null 2>&1 ;;
		esac
	done <"$NODE_KNOWN/units"
	# the hook's records of containers now gone, its pins as the config says
	if [ -x "$NODE_HOOK" ]; then
		"$NODE_HOOK" gc >/dev/null 2>&1
		"$NODE_HOOK" preload --unpin >/dev/null 2>&1
		"$NODE_HOOK" preload >/dev/null 2>&1
	fi
	# pins and pin directories the known node lacked (no container is
	# left to own one), deepest first
	comm -13 <(sed -n 's|^\(/sys/fs/bpf/[^ ]*\) . [0-7]*$|\1|p' "$NODE_KNOWN/state" | sort) \
		<(node_state | sed -n 's|^\(/sys/fs/bpf/[^ ]*\) . [0-7]*$|\1|p' | sort) |
		sort -r | while read -r p; do rm -rf "$p"; done
	wait_until 60 test -S /run/containerd/containerd.sock
	wait_until 20 node_known_same && return 0
	diff "$NODE_KNOWN/state" <(node_state) | sed 's/^/# /'
	return 1
}
