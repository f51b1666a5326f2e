# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash disable=SC2034
#
# A private containerd (this host's Debian 12 containerd 1.6) for the
# host suites that drive pods through CRI (59-containerd-cri.sh,
# 25-runtime-configure.sh): its own root, state, sockets and runc root
# under the test's directory, the cgroupfs driver of this hybrid host,
# and a cleanup that removes what it made and nothing else. Source
# container.sh and cri.sh first; call ctd_require, then ct_init and ctd_init.
#
#   CTD          its directory ($CT_TMP/containerd)
#   CRI_SOCK     its CRI socket
#   CTD_UIDS     the uids of the pods the test made (for their cgroups)
#   ctd_main_config FILE [IMPORT-GLOB]   a main config (version 2)
#   ctd_node_cri                         the node's CRI section (TOML)
#   ctd_start CONFIG (sets CTD_VERSION) / ctd_stop
#   ctd_cleanup                          for the EXIT trap

# ctd_require: skips the whole file unless pods can run here through CRI
# (runc, containerd and its shim, python3 with grpc, the pause program, the
# CRI stubs); sets CRI_STUBS.
ctd_require()
{
	local rc=0 err=$CT_BUILD/cri-gen-stubs.err

	ct_require runc
	tap_require_cmd containerd ctr containerd-shim-runc-v2 "$CRI_PYTHON"
	[ -x "$CT_BUILD/tests/pause" ] ||
		tap_skip_all "$CT_BUILD/tests/pause not built (run make test-progs)"
	"$CRI_PYTHON" -c 'import grpc' 2>/dev/null ||
		tap_skip_all "$CRI_PYTHON has no grpc (python3-grpcio)"
	# The status is gen-stubs.sh's, not that of a pipe's last command.
	CRI_STUBS=$("$CT_TOP/tests/cri/gen-stubs.sh" "$CT_BUILD" 2>"$err") || rc=$?
	CRI_STUBS=$(tail -n1 <<<"$CRI_STUBS")
	case $rc in
	0) [ -d "$CRI_STUBS" ] || tap_bail "tests/cri/gen-stubs.sh named no stubs directory: $(cat "$err")" ;;
	77) tap_skip_all "no CRI stubs: $(tail -n1 "$err")" ;;
	*) tap_bail "tests/cri/gen-stubs.sh failed: $(cat "$err")" ;;
	esac
}

ctd_init()
{
	CTD=$CT_TMP/containerd
	CRI_SOCK=$CTD/containerd.sock
	CRI_DRIVER=cgroupfs
	CTD_PID=
	CTD_UIDS=()
	CTD_RUN_EXISTED=$([ -e /run/containerd ] && echo 1 || echo 0)
	CTD_RUN_S_EXISTED=$([ -e /run/containerd/s ] && echo 1 || echo 0)
	mkdir -p "$CTD"/{root,state,conf.d,opt,runc}
	# The v1 hierarchies (and the v2 one) where kubelet's /kubepods was
	# not there before us: cleanup removes ours from these only.
	declare -gA CTD_KUBEPODS_OURS=()
	local h
	for h in /sys/fs/cgroup/*/; do
		[ -d "$h/kubepods" ] || CTD_KUBEPODS_OURS[$h]=1
	done
}

# ctd_main_config FILE [IMPORT-GLOB]: where this containerd keeps its
# things, and its drop-ins (IMPORT-GLOB, default $CTD/conf.d/*.toml; "-"
# for no imports line). No plugin section here: containerd 1.x merges an
# imported file plugin by plugin, its [plugins."io.containerd.grpc.v1.cri"]
# replacing the whole CRI section that came before (containerd issues 5837
# and 7982; 2.0 merges them key by key, containerd PR 9982).
ctd_main_config()
{
	local imports=${2:-$CTD/conf.d/*.toml}

	{
		echo "version = 2"
		echo "root = \"$CTD/root\""
		echo "state = \"$CTD/state\""
		[ "$imports" = - ] || echo "imports = [\"$imports\"]"
		cat <<EOF
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.aufs"]

[grpc]
  address = "$CRI_SOCK"
[ttrpc]
  address = "$CRI_SOCK.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "$CTD/opt"
EOF
	} >"$1"
}

# ctd_node_cri: the node's own CRI section: the default handler runc,
# without the hook.
ctd_node_cri()
{
	cat <<EOF
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$CRI_PAUSE"
  # This host cannot lower oom_score_adj (the pause container's -998).
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CTD/cni/bin"
    conf_dir = "$CTD/cni/conf.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$CTD/runc"

EOF
}

# ctd_start CONFIG: containerd in the background (CTD_PID), until CRI
# answers; CTD_VERSION is what it says (or the client's error).
ctd_start()
{
	containerd --config "$1" >>"$CTD/containerd.log" 2>&1 &
	CTD_PID=$!
	CTD_VERSION=$(cri --wait 30 version 2>&1)
}

# ctd_remove_pod_cgroups: what kubelet's pod container manager does after
# the pod's sandbox is gone (runc removes only the containers' own
# cgroups): the pods' cgroups, and /kubepods where it was not there before.
ctd_remove_pod_cgroups()
{
	local h uid

	for h in /sys/fs/cgroup/*/; do
		[ -d "$h/kubepods" ] || continue
		if [ -n "${CTD_KUBEPODS_OURS[$h]:-}" ]; then
			find "$h/kubepods" -depth -type d -exec rmdir {} \; 2>/dev/null
			continue
		fi
		for uid in "${CTD_UIDS[@]}"; do
			[ -d "$h/kubepods/besteffort/pod$uid" ] &&
				find "$h/kubepods/besteffort/pod$uid" -depth -type d \
					-exec rmdir {} \; 2>/dev/null
		done
	done
}

# ctd_kubepods_left: the /kubepods cgroups of ours still there.
ctd_kubepods_left()
{
	local h

	for h in /sys/fs/cgroup/*/; do
		[ -n "${CTD_KUBEPODS_OURS[$h]:-}" ] && [ -e "$h/kubepods" ] && echo "$h/kubepods"
	done
}

# ctd_processes: the pids whose command line names our containerd's
# directory (its shims), and containerd itself.
ctd_processes()
{
	local f

	[ -n "$CTD_PID" ] && kill -0 "$CTD_PID" 2>/dev/null && echo "$CTD_PID"
	for f in /proc/[0-9]*/cmdline; do
		{ tr "\0" " " <"$f"; } 2>/dev/null | grep -qF -- "$CTD" &&
			basename "$(dirname "$f")"
	done | sort -u
}

ctd_mounts()
{
	awk -v t="$CT_TMP" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo
}

# ctd_stop_daemon: containerd itself, TERM then KILL; its shims stay, as
# they do when containerd stops on a node.
ctd_stop_daemon()
{
	local i

	[ -n "$CTD_PID" ] || return 0
	kill -TERM "$CTD_PID" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$CTD_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$CTD_PID" 2>/dev/null
	wait "$CTD_PID" 2>/dev/null
	CTD_PID=
}

ctd_stop()
{
	local pid

	ctd_stop_daemon
	# Shims of containers we could not remove (a failed run).
	for pid in $(ctd_processes); do
		kill -KILL "$pid" 2>/dev/null
	done
}

# ctd_cleanup: every pod of ours, containerd, its mounts and cgroups.
ctd_cleanup()
{
	local entry m

	if [ -n "$CTD_PID" ]; then
		for entry in "${CRI_PODS[@]}"; do
			cri_remove_pod "${entry%% *}" >/dev/null 2>&1
		done
	fi
	ctd_stop
	ctd_mounts | sort -r | while read -r m; do umount -l "$m"; done
	ctd_remove_pod_cgroups
	[ "$CTD_RUN_S_EXISTED" = 0 ] && rmdir /run/containerd/s 2>/dev/null
	[ "$CTD_RUN_EXISTED" = 0 ] && rmdir /run/containerd 2>/dev/null
	return 0
}

# ctd_check_clean NAME: after the pods: no sandbox, no kubepods cgroup,
# containerd stopped with no shim, no mount, no shim socket. What is left
# is seen before anything is killed or unmounted (a shim gets 5 s to end
# after its pod), then cleaned up.
ctd_check_clean()
{
	local m i left mounts

	tap_is "$(cri pods)" "" "$1: containerd lists no pod sandbox"
	# kubelet's part: rmdir, which fails on a cgroup with a process in it
	ctd_remove_pod_cgroups
	tap_is "$(ctd_kubepods_left)" "" "$1: no kubepods cgroup left in any hierarchy"
	ctd_stop_daemon
	for ((i = 0; i < 50; i++)); do
		left=$(ctd_processes)
		[ -z "$left" ] && break
		sleep 0.1
	done
	mounts=$(ctd_mounts)
	tap_is "$left" "" "$1: containerd stopped, no shim left" ||
		tap_diag "$(for m in $left; do tr '\0' ' ' <"/proc/$m/cmdline"; echo; done 2>/dev/null)"
	tap_is "$mounts" "" "$1: no mount left under the test's directory"
	tap_is "$(ls -A /run/containerd/s 2>/dev/null)" "" "$1: no shim socket left in /run/containerd/s"
	ctd_stop
	ctd_mounts | sort -r | while read -r m; do umount "$m"; done
}
