#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A missing BPF filesystem is not an error. In a mount namespace
# of the suite's own (unshare --mount --propagation private), where
# /sys/fs/bpf can be unmounted without disturbing anyone, with the default
# pin directory /sys/fs/bpf/oci-sockopt-hook:
#  - nothing mounted at /sys/fs/bpf: `probe` says preload and record mode
#    mount one; `preload` mounts one (mode 0700) and pins there; a
#    recorded container under runc runs, and its recording is written;
#    a container that pins nothing mounts nothing;
#  - another filesystem (tmpfs) mounted there: `probe` says why preload
#    is impossible and what to do; `preload` fails in that one line; a
#    recorded container is refused in one line naming it;
#  - a pin directory elsewhere, not on a BPF filesystem: probe and preload
#    say so, naming its parent.
#
# Modules: `pin.c`, `cmd_probe.c`, `cmd_preload.c`, `footprint.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
tap_require_cmd unshare findmnt
if [ -z "${SH_BPFFS_PRIVATE:-}" ]; then
	exec env SH_BPFFS_PRIVATE=1 unshare --mount --propagation private \
		"$BASH" "$0" "$@"
fi
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
# shellcheck source=../lib/refuse.sh
. "$here/../lib/refuse.sh"

ct_setup runc
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
# The default pin directory, named so that bundles pass it on.
CT_PIN_DIR=/sys/fs/bpf/oci-sockopt-hook
export OCI_SOCKOPT_HOOK_PIN_DIR=$CT_PIN_DIR
recdir=$CT_TMP/recorded
# shellcheck disable=SC2016
cfg=$(ct_config record '.record = {"allow": true, "dir": $d}' --arg d "$recdir")

# unmount_bpf: nothing mounted at /sys/fs/bpf (here, in our namespace).
unmount_bpf()
{
	while findmnt -n /sys/fs/bpf >/dev/null; do
		umount /sys/fs/bpf || return 1
	done
}
fstype() { stat -f -c %T /sys/fs/bpf; }

unmount_bpf || tap_bail "cannot unmount /sys/fs/bpf in our mount namespace"
tap_is "$(fstype)" sysfs "nothing is mounted at /sys/fs/bpf (in this mount namespace)"

# ---- nothing mounted: preload and record mode mount one ----------------------
out=$("$HOOK" probe 2>&1)
tap_like "$out" "BPF filesystem: +none at /sys/fs/bpf yet: preload and record mode mount one there" \
	"probe: none at /sys/fs/bpf yet, preload and record mode mount one" || tap_diag "$out"
tap_is "$("$HOOK" probe --json | jq -c '[.bpffs, .bpffs_error]')" '["mountable",null]' \
	"probe --json: bpffs mountable"
out=$("$HOOK" --config "$cfg" preload 2>&1)
tap_ok $? "preload succeeds with nothing mounted at /sys/fs/bpf" || tap_diag "$out"
tap_is "$(fstype)" bpf_fs "it mounted a BPF filesystem there"
tap_like "$(findmnt -no OPTIONS /sys/fs/bpf)" "(^|,)mode=700(,|$)" "root's alone (mode=700)"
tap_ok "$([ "$(find "$CT_PIN_DIR" -mindepth 1 | wc -l)" -gt 0 ]; echo $?)" "and pinned the programs there"
tap_is "$("$HOOK" probe --json | jq -c '[.bpffs, (.preloaded_programs > 0)]')" '["mounted",true]' \
	"probe: mounted, with the preloaded programs"
"$HOOK" --config "$cfg" preload --unpin >/dev/null 2>&1
unmount_bpf

b=$(ct_bundle -c "$CT_EXAMPLE_CONFIG" -a sockopt-hook.io/policy=restricted plain -- sockcheck set-mark 5)
ct_run runc "$(ct_id plain)" "$b"
tap_is "$CT_RC $(sed -n 's/^setsockopt=//p' "$CT_OUT") $(fstype)" "0 EPERM sysfs" \
	"a policed container that pins nothing runs, and mounts nothing" || tap_diag "$(cat "$CT_ERR")"

b=$(ct_bundle -c "$cfg" -a sockopt-hook.io/record=web rec -- sockcheck keepalive)
ct_run runc "$(ct_id rec)" "$b"
tap_is "$CT_RC" 0 "a recorded container runs with nothing mounted at /sys/fs/bpf" ||
	tap_diag "$(cat "$CT_ERR")"
tap_is "$(find "$recdir/web" -name '*.json' 2>/dev/null | wc -l)" 1 "its recording is written"
tap_is "$(fstype)" bpf_fs "the hook mounted the BPF filesystem it pinned on"
unmount_bpf

# ---- another filesystem there: what to do, in one line -----------------------------
mount -t tmpfs -o mode=0700 none /sys/fs/bpf || tap_bail "cannot mount a tmpfs at /sys/fs/bpf"
why="/sys/fs/bpf is a tmpfs mount, not a BPF filesystem: unmount it, or mount -t bpf bpf /sys/fs/bpf"
out=$("$HOOK" probe 2>&1)
tap_like "$out" "BPF filesystem: +unusable: $why" "probe: a tmpfs at /sys/fs/bpf, and what to do" ||
	tap_diag "$out"
tap_like "$out" "preloaded programs: +none \\(preload is impossible: $why\\)" \
	"probe says why preload is impossible"
tap_is "$("$HOOK" probe --json | jq -r '.bpffs + ": " + .bpffs_error')" "unusable: $why" \
	"probe --json: unusable, with why"
out=$("$HOOK" --config "$cfg" preload 2>&1)
rc=$?
tap_ok "$([ "$rc" != 0 ] && [ "$(grep -c . <<<"$out")" = 1 ]; echo $?)" "preload fails (exit $rc), in one line" ||
	tap_diag "$out"
tap_like "$out" "^oci-sockopt-hook: pin directory $CT_PIN_DIR is not on a BPF filesystem: $why$" \
	"naming the pin directory and what to do"
b=$(ct_bundle -c "$cfg" -a sockopt-hook.io/record=web tmpfs -- sockcheck all)
refused runc tmpfs "$b" "footprint pin directory $CT_PIN_DIR-footprint is not on a BPF filesystem: $why"
tap_is "$(find /sys/fs/bpf -mindepth 1 | wc -l)" 0 "nothing is made in the tmpfs"
umount /sys/fs/bpf

# ---- a pin directory elsewhere -----------------------------------------------------
mkdir -p "$CT_TMP/plain"
export OCI_SOCKOPT_HOOK_PIN_DIR=$CT_TMP/plain/pins
why="$CT_TMP/plain is not on a BPF filesystem: mount one there \\(mount -t bpf bpf $CT_TMP/plain\\), or point OCI_SOCKOPT_HOOK_PIN_DIR into one"
tap_like "$("$HOOK" probe 2>&1)" "BPF filesystem: +unusable: $why" \
	"probe: a pin directory elsewhere, not on a BPF filesystem"
out=$("$HOOK" --config "$cfg" preload 2>&1)
tap_like "$out" "^oci-sockopt-hook: pin directory $CT_TMP/plain/pins is not on a BPF filesystem: $why$" \
	"preload says so in one line"
tap_is "$(fstype)" sysfs "and mounts nothing at /sys/fs/bpf"

tap_done
