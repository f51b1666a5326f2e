#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# An upgrade (and a rollback) on a node with running containers: the hook
# binary of an earlier release (built here from this repository's
# history, UPGRADE_FROM) is replaced in place by this build, as the
# DaemonSet's install container does (copy, then rename). Containers the
# old binary attached keep their programs. That release wrote a record as
# its file's content, which a uid 0 without capabilities could have
# planted: the new binary reads records only as the trusted attribute,
# so it ignores those with one warning each and acts on none of them; the
# runtime's removal of their cgroups frees their programs, and the files
# are removed by hand (docs/cluster.md, Upgrade). The old binary, put back,
# leaves the records of the new one (an attribute it cannot read) alone
# with a warning while the runtime's cgroup removal frees the programs,
# and the next upgrade's gc releases those records. A recording started
# under a release that kept its provenance as file content (PROV_FROM)
# and ended under this one is refused in one line that says why (the
# content is not read), and nothing of it is left.
#
# Modules: `state.c`, `teardown.c`, `recording.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

# The last release before records named the pod (f4d8059).
UPGRADE_FROM=${UPGRADE_FROM:-77cda5a}
# The last release that kept a recording's provenance as file content.
PROV_FROM=${PROV_FROM:-c58c3a7}
NEW_HOOK=$HOOK

ct_require runc
tap_require_cmd git make
for c in "$UPGRADE_FROM" "$PROV_FROM"; do
	git -C "$CT_TOP" cat-file -e "$c^{commit}" 2>/dev/null ||
		tap_skip_all "commit $c is not in this clone's history (shallow clone?)"
done

# old_hook [COMMIT]: builds the hook of COMMIT (UPGRADE_FROM) once into
# build/upgrade/ and prints its path.
old_hook()
{
	local from=${1:-$UPGRADE_FROM}
	local dir=$CT_BUILD/upgrade/$from

	if [ ! -x "$dir/build/oci-sockopt-hook" ]; then
		rm -rf "$dir" && mkdir -p "$dir/src" || return 1
		git -C "$CT_TOP" archive "$from" | tar -x -C "$dir/src" ||
			return 1
		make -s -C "$dir/src" -j2 BUILD="$dir/build" all \
			>"$dir/make.log" 2>&1 || { cat "$dir/make.log" >&2; return 1; }
	fi
	echo "$dir/build/oci-sockopt-hook"
}

OLD_HOOK=$(old_hook) || tap_bail "cannot build the hook of $UPGRADE_FROM"
PROV_HOOK=$(old_hook "$PROV_FROM") || tap_bail "cannot build the hook of $PROV_FROM"
ct_init

# put BINARY: replaces the node's hook binary the way the DaemonSet does.
BIN=$CT_TMP/node/oci-sockopt-hook
put()
{
	mkdir -p "${BIN%/*}" && cp "$1" "$BIN.new" && chmod 0755 "$BIN.new" &&
		mv -f "$BIN.new" "$BIN"
}

hook_on_node()
{
	OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR "$BIN" "$@"
}

# A pod's container, as containerd's CRI names it.
bundle()
{
	local name=$1

	shift
	ct_bundle -a sockopt-hook.io/policy=restricted \
		-a io.kubernetes.cri.container-type=container \
		-a io.kubernetes.cri.sandbox-namespace=shop \
		-a io.kubernetes.cri.sandbox-name="pod-$name" \
		-a io.kubernetes.cri.container-name=app \
		"$@" "$name" -- /bin/sh -c 'sockcheck set-mark 5; sockcheck listen 4000 120'
}

mark_in()
{
	runc exec "$(ct_id "$1")" sockcheck set-mark 5 2>&1 |
		sed -n 's/^setsockopt=//p'
}

before=$(ct_snapshot)
put "$OLD_HOOK"
HOOK=$BIN
b_old=$(bundle old)
b_gone=$(bundle gone -P)
ct_start_ok "old binary: a restricted container starts" runc "$(ct_id old)" "$b_old" '^listen='
ct_start_ok "old binary: a container without poststop starts" runc "$(ct_id gone)" "$b_gone" '^listen='
tap_is "$(mark_in old)" EPERM "old binary: the policy applies"

put "$NEW_HOOK"
tap_is "$(cmp -s "$BIN" "$NEW_HOOK" && echo new)" new "the node's binary is replaced"
tap_is "$(mark_in old)" EPERM "after the upgrade, the running container keeps its programs"
st=$(hook_on_node status --json 2>"$CT_TMP/status.err")
tap_is "$(jq -r --arg id "$(ct_id old)" '[.[] | select(.id == $id)] | length' <<<"$st")" \
	0 "the new binary does not list the old binary's record, kept as file content" ||
	tap_diag "$st"
tap_like "$(cat "$CT_TMP/status.err")" "ignoring state record '$(ct_id old)\.json' in .*: it has no record attribute" \
	"and says why, in one line"
old_cg=$(runc state "$(ct_id old)" | jq -r .pid | xargs -I{} sed -n 's/^0:://p' /proc/{}/cgroup)

b_new=$(bundle new)
ct_start_ok "new binary: a container starts next to the old one's" runc "$(ct_id new)" "$b_new" '^listen='
tap_is "$(mark_in new)" EPERM "new binary: the policy applies"
st=$(hook_on_node status --json)
tap_is "$(jq -r --arg id "$(ct_id new)" '.[] | select(.id == $id) | "\(.namespace)/\(.pod)/\(.container)"' <<<"$st")" \
	shop/pod-new/app "the new binary's record names the pod"
new_cg=$(jq -r --arg id "$(ct_id new)" '.[] | select(.id == $id) | .cgroup_path' <<<"$st")

ct_delete runc "$(ct_id old)"
ct_delete runc "$(ct_id gone)"
tap_ok "$([ -n "$old_cg" ] && [ ! -d "/sys/fs/cgroup/unified$old_cg" ] && [ ! -d "/sys/fs/cgroup$old_cg" ]; echo $?)" \
	"deleted, the old binary's container's cgroup is gone, and its programs with it ($old_cg)"
hook_on_node gc >"$CT_TMP/gc.out" 2>&1
tap_ok $? "the new binary's gc runs beside the old binary's records" ||
	tap_diag "$(cat "$CT_TMP/gc.out")"
tap_is "$(for n in old gone; do [ -e "$CT_STATE_DIR/$(ct_id "$n").json" ] && echo kept; done | xargs)" \
	"kept kept" "and acts on neither: their files are left for the operator to remove"
rm -f "$CT_STATE_DIR/$(ct_id old).json" "$CT_STATE_DIR/$(ct_id gone).json"

# Rollback: the DaemonSet's previous image puts the old binary back. The
# new binary keeps a record's JSON in an attribute of an empty file (issue
# 25: no tmpfs page per container), which the old one cannot read: it
# leaves such a record alone, with a warning, and never acts on it; the
# container's programs go with its cgroup, which the runtime removes; the
# next upgrade's gc releases the record.
put "$OLD_HOOK"
tap_is "$(mark_in new)" EPERM "after a rollback, the new binary's container keeps its programs"
ct_delete runc "$(ct_id new)"
tap_ok "$([ -e "$CT_STATE_DIR/$(ct_id new).json" ]; echo $?)" \
	"the old binary's poststop leaves a record in the new format alone"
tap_like "$(hook_on_node status 2>&1 >/dev/null)" "ignoring state record '$(ct_id new).json'" \
	"and its status says it ignores it, with a warning"
tap_ok "$([ -n "$new_cg" ] && [ ! -d "$new_cg" ]; echo $?)" \
	"the container's cgroup is gone, and its programs with it (runc removed it: $new_cg)"
put "$NEW_HOOK"
hook_on_node gc >"$CT_TMP/gc.out" 2>&1
tap_like "$(cat "$CT_TMP/gc.out")" "released 1 stale container record" \
	"upgraded again, the new binary's gc releases it"
[ -e "$CT_STATE_DIR/last-gc" ] && touch -d '-2 minutes' "$CT_STATE_DIR/last-gc"
hook_on_node gc >/dev/null 2>&1
# A recording started under PROV_FROM, which kept its provenance
# (recording-<id>: the running policy the proposal is made under) as the
# file's content, and ended under this release, which reads it only as the
# trusted attribute: a uid 0 without capabilities can write the content,
# and the two look alike. The recording is refused in one line that says
# why, and nothing of it is left.
ct_mount_bpffs || tap_bail "cannot mount a BPF filesystem"
recdir=$CT_TMP/recorded LOG=$CT_TMP/hook.log
# shellcheck disable=SC2016 # jq variables
rcfg=$(ct_config record '.record = {"allow": true, "dir": $d} | .log_file = $log' \
	--arg d "$recdir" --arg log "$LOG")
put "$PROV_HOOK"
b_rec=$(ct_bundle -c "$rcfg" -a sockopt-hook.io/record=web \
	-a io.kubernetes.cri.container-type=container \
	-a io.kubernetes.cri.sandbox-namespace=shop \
	-a io.kubernetes.cri.sandbox-name=web-0 \
	-a io.kubernetes.cri.container-name=app \
	rec -- /bin/sh -c 'sockcheck keepalive; sockcheck listen 4000 120')
ct_start_ok "$PROV_FROM: a recorded container starts" runc "$(ct_id rec)" "$b_rec" '^listen='
side=$(find "$CT_STATE_DIR" -maxdepth 1 -name 'recording-*' | head -n 1)
tap_ok "$([ -s "$side" ] && ! getfattr -n trusted.oci-sockopt-hook.record "$side" >/dev/null 2>&1; echo $?)" \
	"$PROV_FROM kept its provenance as file content (${side##*/})"
put "$NEW_HOOK"
out=$(hook_on_node --config "$rcfg" record "$(ct_id rec)" 2>&1)
tap_like "$out" "no policy can be proposed: its provenance recording-[0-9a-f]+ in .* is not the attribute trusted\.oci-sockopt-hook\.record .*an earlier release kept it as the file's content.*: not read; record the workload again under this release" \
	"upgraded, record says it proposes nothing: the provenance is file content, not read"
ct_delete runc "$(ct_id rec)"
tap_like "$(grep 'not written' "$LOG")" "recording of $(ct_id rec) \(record 'web'\) not written: its provenance recording-[0-9a-f]+ .* is not the attribute .*: not read; record the workload again under this release" \
	"its poststop refuses the recording in one line that says why"
tap_is "$(grep -c 'not written' "$LOG") $(find "$recdir" -name '*.json' 2>/dev/null | wc -l)" "1 0" \
	"one line, and no recording file"
tap_is "$(find "$CT_STATE_DIR" -maxdepth 1 \( -name 'recording-*' -o -name "$(ct_id rec)*" \) | wc -l) $(find "$CT_PIN_DIR-footprint" -mindepth 1 2>/dev/null | wc -l)" \
	"0 0" "no provenance, record or footprint pin of it is left"

ct_check_same "after upgrade, rollback and upgrade, BPF programs, hook state and cgroups are as before" "$before"

tap_done
