#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `runtime configure` on a node that never saw the hook (issue 23): 00-node's
# install undone, containerd 2.x with Debian's own config.toml (version 2,
# no imports line), pods through CRI (tests/cri/cri.py, kubelet's cgroupfs
# driver: Debian's runc handler has no SystemdCgroup). The documented
# install, command by command:
#   make install
#   oci-sockopt-hook runtime configure --runtime containerd
#     -> refused in one line: config.toml imports no drop-in, and what to
#        add; the operator adds that line
#   oci-sockopt-hook runtime configure --runtime containerd (--dry-run first)
#   systemctl restart containerd
# then: a pod on RuntimeClass handler sockopt gets its policy and keeps the
# default handler's open-files limits, without CAP_NET_RAW; one on
# sockopt-bypass asking for the bypass is not charged for TCP memory;
# `features` labels the node installed=true, bypass-prot-mem=true. Then
# `runtime unconfigure --runtime containerd --restart`, `make uninstall`
# and the imports line taken out: containerd's config and every file as
# before; 00-node's install is put back for later scenarios.
# About 1.5 minutes (containerd restarted three times), more under TCG on a
# loaded host:
# node-timeout: 600
# shellcheck source=tests/node/guest/lib.sh
. "$NODE_PAYLOAD/lib.sh"
SRC=$NODE_PAYLOAD/src
# shellcheck source=tests/lib/cri.sh
. "$SRC/tests/lib/cri.sh"

CRI_SOCK=/run/containerd/containerd.sock
CRI_DIR=$NODE_VAR/rc-pods
CRI_DRIVER=cgroupfs
MAIN=/etc/containerd/config.toml
rm -rf "$CRI_DIR" && mkdir -p "$CRI_DIR"
node_cri_stubs

node_forget_hook
tap_ok $? "00-node's install undone (make uninstall): no binary, config, hooks.d file or pins"
tap_like "$(head -n1 "$MAIN")" '^version = 2$' "containerd's config.toml is Debian's (version 2)"
tap_is "$(grep -c '^imports' "$MAIN")" 0 "it has no imports line"
cp "$MAIN" "$CRI_DIR/config.toml.orig"
CONFD_EXISTED=$([ -d /etc/containerd/conf.d ] && echo 1 || echo 0)
BEFORE=$(node_state)

# --- the install, as the docs have it ---------------------------------------

out=$(node_make install)
tap_ok $? "make install" || tap_diag "$out"
installed=$(node_state)
out=$("$NODE_HOOK" runtime configure --runtime containerd 2>&1)
rc=$?
tap_is "$rc:$(wc -l <<<"$out")" "1:1" "runtime configure: refused, one line" || tap_diag "$out"
want='imports = ["/etc/containerd/conf.d/*.toml"]'
# shellcheck disable=SC2016 # backquotes of the message, not a command
tap_like "$out" 'config\.toml imports no directory \(DIR/\*\.toml\); add `imports = \["/etc/containerd/conf\.d/\*\.toml"\]` above its first \[table\]' \
	"it names the line to add"
tap_is "$(node_state)" "$installed" "nothing written by the refusal"
# The operator adds the line (at the top: TOML keys come before tables).
sed -i "1i $want" "$MAIN"
out=$("$NODE_HOOK" runtime configure --runtime containerd --dry-run 2>&1)
tap_like "$?:$out" "^0:.*/etc/containerd/conf.d/99-oci-sockopt-hook.toml: would create" \
	"runtime configure --dry-run: the drop-in it would create" || tap_diag "$out"
tap_check "--dry-run wrote nothing" test ! -e /etc/containerd/conf.d/99-oci-sockopt-hook.toml
out=$("$NODE_HOOK" runtime configure --runtime containerd 2>&1)
tap_like "$?:$out" "^0:.*99-oci-sockopt-hook.toml: created.*restart containerd to load the change" \
	"runtime configure: the drop-in and the base specs, and it says to restart" || tap_diag "$out"
tap_diag "$(grep -v '^[-+@ ]' <<<"$out")"
drop=$(sed -n '/^\[/p' /etc/containerd/conf.d/99-oci-sockopt-hook.toml | tr '\n' ' ')
tap_like "$drop" '^\[plugins\] \[plugins\."io\.containerd\.grpc\.v1\.cri"\] .*runtimes\.sockopt\] .*runtimes\.sockopt-bypass\]' \
	"containerd 2.x under a version 2 config.toml: a version 2 drop-in with the handlers only"
out=$("$NODE_HOOK" features --json 2>/dev/null)
tap_like "$(jq -r .wiring.missing <<<"$out")" "restart it" \
	"features before the restart: not installed (containerd has not loaded it)"
systemctl restart containerd
VERSION=$(cri --wait 60 version 2>&1)
tap_like "$VERSION" '^containerd ' "systemctl restart containerd: CRI answers ($VERSION)" ||
	{ journalctl -u containerd --no-pager | tail -n 30 | sed 's/^/# /'; tap_bail "no CRI"; }
dump=$(containerd config dump)
[[ $dump == *"runtimes.sockopt]"* && $dump == *"runtimes.sockopt-bypass]"* &&
	$dump == *"bin_dirs = ['/usr/lib/cni']"* ]]
tap_ok $? "config dump: both handlers, and Debian's CNI setting still there (migrated with the rest)"

# --- pods ------------------------------------------------------------------

node_cri_images
snapshot
SLEEPER='["sleep", "3600"]'
pod() # NAME HANDLER ANNOTATIONS CAPS: sets APP
{
	local m

	m=$(cri_pod "$1" "$2" "$3" "[{\"name\": \"app\", \"command\": $SLEEPER, \"caps\": $4}]")
	cri_run_pod "$m" || return 1
	APP=${CRI_IDS[app]}
}
pod web sockopt '{"sockopt-hook.io/policy": "restricted"}' '["NET_ADMIN", "NET_RAW"]'
tap_ok $? "pod on handler sockopt, policy restricted: runs"
WEB=$APP
PROBE_OUT=$(cri_exec "$WEB" /probe)
check_restricted "sockopt pod"
pod bulk sockopt-bypass '{"sockopt-hook.io/bypass-prot-mem": "true"}' '[]'
tap_ok $? "pod on handler sockopt-bypass with bypass-prot-mem: runs"
PROBE_OUT=$(cri_exec "$APP" /probe)
check_bypassed "sockopt-bypass pod"
pod plain sockopt '{}' '[]'
PLAIN=$APP
pod default "" '{}' '[]'
DEFAULT=$APP
raw() { cri_exec "$1" sh -c 'sed -n "s/^CapBnd:\t//p" /proc/self/status'; }
bit13() { echo $(((0x$1 >> 13) & 1)); }
tap_is "$(bit13 "$(raw "$PLAIN")") $(bit13 "$(raw "$DEFAULT")")" "0 1" \
	"CAP_NET_RAW: not in a sockopt pod, in a default-handler pod"
# shellcheck disable=SC2016 # expanded by the container's shell
NOFILE='echo "$(ulimit -Sn) $(ulimit -Hn)"'
tap_is "$(cri_exec "$PLAIN" sh -c "$NOFILE")" "$(cri_exec "$DEFAULT" sh -c "$NOFILE")" \
	"open files (soft hard): the sockopt pod has the default handler's"
labels=$("$NODE_HOOK" features 2>&1)
tap_like "$labels" 'sockopt-hook.io/installed=true.*sockopt-hook.io/bypass-prot-mem=true' \
	"features: installed=true, bypass-prot-mem=true (RuntimeClass sockopt-bypass picks this node)"

rc=0
for entry in "${CRI_PODS[@]}"; do
	cri_remove_pod "${entry%% *}" || rc=1
done
tap_ok $rc "the pods stop and go"
wait_until 20 pod_cgroups_gone
tap_ok $? "no pod cgroup left" ||
	find /sys/fs/cgroup/kubepods -name cgroup.procs -exec grep -H . {} + | sed 's/^/# /'

tap_is "$(state_records | tr '\n' ' ')" "$NODE_SNAP_RECORDS" "no hook record left"

# --- unconfigure, uninstall -------------------------------------------------

out=$("$NODE_HOOK" runtime unconfigure --runtime containerd --restart 2>&1)
tap_like "$?:$out" "^0:.*99-oci-sockopt-hook.toml: removed.*restarted containerd" \
	"runtime unconfigure --restart: files removed, containerd restarted" || tap_diag "$out"
cri --wait 60 version >/dev/null
labels=$("$NODE_HOOK" features 2>/dev/null)
tap_like "$labels" 'sockopt-hook.io/installed=false' "features: installed=false again"
out=$(node_make uninstall)
tap_ok $? "make uninstall" || tap_diag "$out"
cp "$CRI_DIR/config.toml.orig" "$MAIN"
# The operator's directory for drop-ins, if this test made it.
[ "$CONFD_EXISTED" = 1 ] || rmdir /etc/containerd/conf.d
systemctl restart containerd
cri --wait 60 version >/dev/null
after=$(node_state)
tap_is "$after" "$BEFORE" "the node as it was: files, pins, units, containerd's config" ||
	diff <(echo "$BEFORE") <(echo "$after") | sed 's/^/# /'

out=$(node_make install)
tap_ok $? "00-node's install put back for later scenarios" || tap_diag "$out"
tap_done
