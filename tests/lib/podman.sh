# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash disable=SC2034
#
# podman in a root of the suite's own, for the host suites that run real
# podman containers (50-podman.sh, 61-required-annotations.sh, 84-cdi.sh).
# Source after container.sh, then call pm_setup DIR CGPARENT; pm_remove
# undoes what podman made, before ct_cleanup.

# pm_setup DIR CGPARENT: PM=DIR holds podman's root, runroot, tmpdir and
# network configs; PODMAN is the command line for it (crun, cgroupfs,
# containers under /CGPARENT on every hierarchy); CIDS collects the ids
# podman writes; NOFILE and NPROC are the limits to ask for (the sandbox
# caps RLIMIT_NOFILE, and podman asks for more unless told).
pm_setup()
{
	PM=$1
	CGPARENT=$2
	CIDS=()
	mkdir -p "$PM/cni" || return 1
	PODMAN=(podman --root "$PM/root" --runroot "$PM/runroot" --tmpdir "$PM/tmp"
		--network-config-dir "$PM/cni" --storage-driver vfs
		--cgroup-manager=cgroupfs --events-backend=none --runtime crun)
	NOFILE=$(pm_limit "$(ulimit -Hn)")
	NPROC=$(pm_limit "$(ulimit -Hu)")
}

pm_limit()
{
	local hard=$1 cap=4096

	[ "$hard" = unlimited ] || [ "$hard" -gt "$cap" ] && hard=$cap
	echo "$hard"
}

# pm_remove: podman's containers (by the ids it wrote), then their cgroups
# below CGPARENT on every hierarchy.
pm_remove()
{
	local cid dir

	for cid in "${CIDS[@]}"; do
		timeout 30 "${PODMAN[@]}" rm -f "$cid" >/dev/null 2>&1
	done
	for dir in /sys/fs/cgroup/*/"$CGPARENT"; do
		[ -d "$dir" ] || continue
		for _ in $(seq 1 50); do
			find "$dir" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
			rmdir "$dir" 2>/dev/null && break
			sleep 0.1
		done
	done
}

# pm_diag NAME: the last run's exit status (RC), stdout (OUT), podman's
# stderr ($PM/NAME.err) and the hook's new log lines (NEWLOG).
pm_diag()
{
	tap_diag "exit $RC; stdout:" "$OUT" "podman stderr:" "$(cat "$PM/$1.err")" \
		"hook log (without libbpf lines):" "$NEWLOG"
}
