#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `runtime configure` on a node that never saw the hook: 00-node's
# install undone, containerd 2.x with Debian's own config.toml (version 2,
# no imports line), pods through CRI (tests/cri/cri.py, kubelet's cgroupfs
# driver: Debian's runc handler has no SystemdCgroup). The documented
# install, command by command:
#   make install
#   oci-sockopt-hook runtime configure --runtime containerd
#     -> refused in one line: config.toml imports no drop-in, and what to
#        add, or --add-import
#   oci-sockopt-hook runtime configure --runtime containerd --add-import
#     (--dry-run first: the imports line in config.toml's diff): the line
#     added, Debian's file kept byte for byte beside the base specs
#   systemctl restart containerd
# then: a pod on RuntimeClass handler sockopt gets its policy and keeps the
# default handler's open-files limits, without CAP_NET_RAW; one on
# sockopt-bypass asking for the bypass is not charged for TCP memory;
# `features` labels the node installed=true, bypass-prot-mem=true. The
# NRI path on the same node (containerd 2.1: NRI on by default):
# `runtime configure --runtime containerd --nri service` (--dry-run first;
# again: nothing to change) writes, enables and starts the plugin's unit,
# which registers; an annotated pod on the default handler gets its
# policy; with require_annotations.nri, --nri pod is refused and --nri
# service adds the fallback (the default handler's base spec runs the
# hook): the plugin stopped, an annotated pod is refused in one line,
# started, the pod is policed with the base spec's hooks only; --nri
# plugin swaps the unit for the link in /opt/nri/plugins (containerd
# starts it); NRI turned off in a drop-in: refused in one line naming the
# setting; `runtime unconfigure --nri plugin --restart`: the node as
# before --nri. Then
# `runtime unconfigure --runtime containerd --restart` (config.toml
# byte-identical to Debian's again, conf.d gone) and `make uninstall`:
# containerd's config and every file as before; 00-node's install is put
# back for later scenarios.
# About 2.5 minutes (containerd restarted seven times), more under TCG on
# a loaded host:
# node-timeout: 900
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
node_ctd_keep
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
tap_like "$out" 'config\.toml imports no directory \(DIR/\*\.toml\); add `imports = \["/etc/containerd/conf\.d/\*\.toml"\]` above its first \[table\] and run this again, or run this again with --add-import$' \
	"it names the line to add, or --add-import"
tap_is "$(node_state)" "$installed" "nothing written by the refusal"
out=$("$NODE_HOOK" runtime configure --runtime containerd --add-import --dry-run 2>&1)
tap_like "$?:$out" "^0:.*/etc/containerd/conf.d/99-oci-sockopt-hook.toml: would create.*$MAIN: would update" \
	"runtime configure --add-import --dry-run: the drop-in it would create, config.toml it would update" || tap_diag "$out"
tap_is "$(grep -cxF "+$want" <<<"$out")" 1 "and the imports line in config.toml's diff"
tap_is "$(node_state)" "$installed" "--dry-run wrote nothing"
out=$("$NODE_HOOK" runtime configure --runtime containerd --add-import 2>&1)
tap_like "$?:$out" "^0:.*99-oci-sockopt-hook.toml: created.*$MAIN: updated.*restart containerd to load the change" \
	"runtime configure --add-import: the drop-in, the base specs, the imports line, and it says to restart" || tap_diag "$out"
cmp -s /etc/containerd/oci-sockopt-hook/main-config-before-import.toml "$CRI_DIR/config.toml.orig"
tap_ok $? "Debian's config.toml kept byte for byte beside the base specs"
tap_is "$(grep -cxF "$want" "$MAIN")" 1 "config.toml imports /etc/containerd/conf.d/*.toml"
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

# --- the NRI plugin: runtime configure --nri ---------------------------------
# Debian's config.toml says nothing of NRI: containerd 2.1 has it on.

UNIT=oci-sockopt-hook-nri.service
UNIT_FILE=/etc/systemd/system/$UNIT
LINK=/opt/nri/plugins/50-oci-sockopt-hook
FALLBACK=/etc/containerd/conf.d/99-oci-sockopt-hook-nri.toml
RUNC_SPEC=/etc/containerd/oci-sockopt-hook/runc-base-spec.json
# shellcheck disable=SC2317 # called through wait_until
nri_gone() { "$NODE_HOOK" features 2>/dev/null | grep -qx 'sockopt-hook.io/nri=false'; }
nri_configure() { OUT=$("$NODE_HOOK" runtime "$@" --runtime containerd 2>&1); }
before_nri=$(node_state)
nri_configure configure --nri service --dry-run
tap_like "$?:$OUT" "^0:.*$UNIT_FILE: would create.*NRI: containerd 2\.[0-9.]+[^,]*, socket /var/run/nri/nri\.sock, plugins in /opt/nri/plugins.*would enable and \(re\)start $UNIT" \
	"configure --nri service --dry-run: the unit it would write and start, NRI on in containerd" || tap_diag "$OUT"
tap_is "$(node_state)" "$before_nri" "--dry-run wrote and started nothing"
nri_configure configure --nri service
tap_like "$?:$OUT" "^0:.*$UNIT_FILE: created.*$UNIT: enabled and \(re\)started" \
	"configure --nri service: the unit written, enabled and started" || tap_diag "$OUT"
tap_is "$(systemctl is-enabled "$UNIT") $(systemctl is-active "$UNIT")" "enabled active" "systemd: $UNIT enabled, active"
tap_like "$(sed -n 's/^ExecStart=//p' "$UNIT_FILE")" "^$NODE_HOOK --config $NODE_CONFIG nri\$" \
	"its ExecStart: the installed hook's nri, the operator config"
wait_until 30 nri_registered
tap_ok $? "the plugin registered with containerd: features says sockopt-hook.io/nri=true" ||
	journalctl -u "$UNIT" --no-pager | tail -n 10 | sed 's/^/# /'
nri_configure configure --nri service
tap_like "$?:$OUT" "^0:.*containerd: nothing to change" "configure --nri service again: nothing to change" || tap_diag "$OUT"
pod nri-web "" '{"sockopt-hook.io/policy": "restricted"}' '["NET_ADMIN", "NET_RAW"]'
tap_ok $? "an annotated pod on the default handler (no RuntimeClass): runs"
PROBE_OUT=$(cri_exec "$APP" /probe)
check_restricted "default handler, through the plugin runtime configure installed"

# The fallback, for require_annotations.nri: a plugin only in a pod is
# refused; with the unit, the default handler runs the hook.
cp "$NODE_CONFIG" "$CRI_DIR/hook-config.orig"
jq '.require_annotations = {nri: true}' "$CRI_DIR/hook-config.orig" >"$NODE_CONFIG"
nri_configure configure --nri pod
tap_like "$?:$OUT" "^1:oci-sockopt-hook: $NODE_CONFIG has require_annotations.nri: a plugin that runs only from a pod would have its own pod refused while it is down" \
	"--nri pod with require_annotations.nri: refused in one line" || tap_diag "$OUT"
nri_configure configure --nri service --restart
tap_like "$?:$OUT" "^0:.*$RUNC_SPEC: created.*$FALLBACK: created.*fallback: containerd's default handler 'runc' runs the hook.*restarted containerd" \
	"configure --nri service with require_annotations.nri: the default handler's base spec and its drop-in; containerd restarted" ||
	tap_diag "$OUT"
cri --wait 60 version >/dev/null
tap_like "$(containerd config dump | sed -n '/runtimes\.runc\]/,/runtimes\.runc\.options\]/p')" "base_runtime_spec = '$RUNC_SPEC'" \
	"containerd's default handler runc has the fallback's base spec"
wait_until 30 nri_registered
tap_ok $? "the plugin registered again after containerd's restart"
systemctl stop "$UNIT"
wait_until 20 nri_gone
tap_ok $? "$UNIT stopped: features says nri=false"
m=$(cri_pod nri-down "" '{"sockopt-hook.io/policy": "restricted"}' \
	"[{\"name\": \"app\", \"command\": $SLEEPER}]")
out=$(cri run-pod "$m" 2>&1)
tap_like "$out" "was not handled by the NRI plugin \\(no node.sockopt-hook.io/nri annotation\\).*refused by require_annotations.nri" \
	"plugin stopped: an annotated pod on the default handler is refused with one line" || tap_diag "$out"
for id in $(cri pods); do cri remove-pod "$id" >/dev/null 2>&1; done
CRI_PODS=()
systemctl start "$UNIT"
wait_until 30 nri_registered
tap_ok $? "$UNIT started again: registered"
pod nri-up "" '{"sockopt-hook.io/policy": "restricted"}' '["NET_ADMIN", "NET_RAW"]'
tap_ok $? "plugin running: the same pod starts"
PROBE_OUT=$(cri_exec "$APP" /probe)
check_restricted "fallback, plugin running"
hooks=$(cri inspect "$APP" | jq -c '[.info.runtimeSpec.hooks | .prestart[]?, .createRuntime[]?, .poststop[]? | .path]')
tap_is "$hooks" "[\"$NODE_HOOK\",\"$NODE_HOOK\"]" \
	"its spec: the base spec's prestart and poststop hooks, the plugin adds none" || tap_diag "$hooks"

# plugin mode: the unit goes, the link comes, containerd starts the plugin
nri_configure configure --nri plugin --restart
tap_like "$?:$OUT" "^0:.*$UNIT_FILE: removed.*$LINK: created \(-> $NODE_HOOK\).*$UNIT: stopped and disabled.*restarted containerd" \
	"configure --nri plugin: the unit stopped and removed, the link made, containerd restarted" || tap_diag "$OUT"
cri --wait 60 version >/dev/null
wait_until 30 nri_registered
tap_ok $? "containerd started the pre-registered plugin: registered"
tap_is "$(jq -r .mode "$NODE_STATE/nri.status" 2>&1)" pre-registered "nri.status: pre-registered"
nri_configure configure --nri plugin
tap_like "$?:$OUT" "^0:.*containerd: nothing to change" "configure --nri plugin again: nothing to change" || tap_diag "$OUT"
rc=0
for entry in "${CRI_PODS[@]}"; do
	cri_remove_pod "${entry%% *}" || rc=1
done
tap_ok $rc "the NRI pods stop and go"

# NRI off in containerd's config: one line says what to change.
printf 'version = 2\n[plugins."io.containerd.nri.v1.nri"]\n  disable = true\n' \
	>/etc/containerd/conf.d/00-nri-off.toml
systemctl restart containerd
cri --wait 60 version >/dev/null
nri_configure configure --nri service
tap_like "$?:$OUT" "^1:oci-sockopt-hook: NRI is off in containerd 2\.[^:]*: set \`disable = false\` under \[plugins\.'io\.containerd\.nri\.v1\.nri'\] in /etc/containerd/config\.toml \(or a drop-in it imports\), restart containerd and run this again\$" \
	"NRI off: configure --nri refused in one line, saying what to change" || tap_diag "$OUT"
rm -f /etc/containerd/conf.d/00-nri-off.toml

nri_configure unconfigure --nri plugin --restart
tap_like "$?:$OUT" "^0:.*$LINK: removed.*$FALLBACK: removed.*$RUNC_SPEC: removed.*restarted containerd" \
	"unconfigure --nri: the link, the fallback's drop-in and spec removed; containerd restarted" || tap_diag "$OUT"
cri --wait 60 version >/dev/null
wait_until 30 nri_gone
tap_ok $? "features: nri=false"
cp "$CRI_DIR/hook-config.orig" "$NODE_CONFIG"
wait_until 20 pod_cgroups_gone
tap_is "$(node_state)" "$before_nri" "the node as before --nri: files, units, containerd's config" ||
	diff <(echo "$before_nri") <(node_state) | sed 's/^/# /'

# --- unconfigure, uninstall -------------------------------------------------

out=$("$NODE_HOOK" runtime unconfigure --runtime containerd --restart 2>&1)
tap_like "$?:$out" "^0:.*99-oci-sockopt-hook.toml: removed.*$MAIN: updated.*restarted containerd" \
	"runtime unconfigure --restart: files removed, config.toml written back, containerd restarted" || tap_diag "$out"
cmp -s "$MAIN" "$CRI_DIR/config.toml.orig"
tap_ok $? "config.toml byte-identical to Debian's again"
[ "$CONFD_EXISTED" = 1 ] || tap_check "the conf.d it made is gone" test ! -e /etc/containerd/conf.d
cri --wait 60 version >/dev/null
labels=$("$NODE_HOOK" features 2>/dev/null)
tap_like "$labels" 'sockopt-hook.io/installed=false' "features: installed=false again"
out=$(node_make uninstall)
tap_ok $? "make uninstall" || tap_diag "$out"
systemctl restart containerd
cri --wait 60 version >/dev/null
after=$(node_state)
tap_is "$after" "$BEFORE" "the node as it was: files, pins, units, containerd's config" ||
	diff <(echo "$BEFORE") <(echo "$after") | sed 's/^/# /'
# The node back to Debian's config.toml whatever the check found.
[ "$CONFD_EXISTED" = 1 ] || rm -rf /etc/containerd/conf.d
node_ctd_restore
cri --wait 60 version >/dev/null

out=$(node_make install)
tap_ok $? "00-node's install put back for later scenarios" || tap_diag "$out"
tap_done
