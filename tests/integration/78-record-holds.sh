#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Record mode cannot be turned against the operator. Under real
# runc:
#  - a workload recorded under defaults.policy restricted that tries
#    SO_MARK, AF_INET6 and SOCK_RAW (all refused), asks for 4 MiB of
#    SO_RCVBUF (clamped) and cubic (forced to reno) gets a proposal that
#    keeps every deny, force, stamp and getsockopt rule of restricted, a
#    clamp within restricted's, and allows none of the refused calls;
#    enforced, it still refuses them;
#  - setsockopt at level -1, UDP_CORK at SOL_UDP and at SOL_UDPLITE,
#    SO_TIMESTAMP and SO_TIMESTAMP_NEW: the proposal drops the first and
#    folds the aliases, so `validate` takes it; a proposal the parser does
#    not take (a running policy tampered with in the state directory) is
#    not written, and the log says why in one line;
#  - one file per recording, record.dir/<record>/<namespace>_<pod>_
#    <container>_<id>.json, never overwritten (namespaces shop and evil,
#    the same record, pod and container names; the same container id
#    run twice), with its provenance inside;
#  - `record merge`: three replicas that each use another option give one
#    proposal with all three, by name or by file; recordings made under
#    different policies are not merged (one line);
#  - record.dir is trusted like the state directory: a symbolic link or a
#    group-writable directory on the way refuses the container at
#    prestart (one line naming it); swapped for a link while the
#    container runs, nothing is written through it, the recording stays
#    in its pins and its state record, and gc writes it once record.dir
#    is sound again.
#
# Modules: `recording.c`, `footprint.c`, `cmd_record.c`, `trust.c`, `teardown.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
# shellcheck source=../lib/refuse.sh
. "$here/../lib/refuse.sh"

ct_setup runc
ct_mount_bpffs || tap_bail "cannot mount a BPF filesystem"
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
fpdir=$CT_PIN_DIR-footprint
recdir=$CT_TMP/recorded
LOG=$CT_TMP/hook.log
BEFORE=$(ct_snapshot progs cgroups)

# shellcheck disable=SC2016 # jq variables
cfg=$(ct_config record '.record = {"allow": true, "dir": $d} | .log_file = $log' \
	--arg d "$recdir" --arg log "$LOG")
# shellcheck disable=SC2016
under=$(ct_config under '.defaults.policy = "restricted" |
	.record = {"allow": true, "dir": $d}' --arg d "$recdir")

# recordings NAME: the recording files of record NAME, one a line (and
# record.dir/NAME-*.json, where older hooks wrote them, so that
# its output is checked too).
recordings()
{
	{
		find "$recdir/$1" -name '*.json'
		find "$recdir" -maxdepth 1 -name "$1-*.json"
	} 2>/dev/null | sort
}
out_val() { sed -n "s/^$1=//p" "$CT_OUT" | head -n 1; }

# record NAME CONFIG SCRIPT [ANNOTATION...]: runs SCRIPT recorded as NAME
# in a container of its own (id REC_ID).
REC_N=0
record()
{
	local name=$1 config=$2 script=$3 b

	shift 3
	REC_N=$((REC_N + 1))
	REC_ID=$(ct_id "$name-$REC_N")
	b=$(ct_bundle -c "$config" "$@" -a "sockopt-hook.io/record=$name" \
		"$name-$REC_N" -- /bin/sh -c "$script")
	ct_run runc "$REC_ID" "$b"
}

# ---- 1. Never less than the container ran under ----------------------------
record tried "$under" 'sockcheck set-mark 5; sockcheck socket inet6 stream;
sockcheck socket inet raw; sockcheck rcvbuf 4194304; sockcheck cc cubic;
sockcheck keepalive; sockcheck get-mark'
tap_is "$CT_RC $(out_val setsockopt) $(out_val socket_inet6_stream) $(out_val socket_inet_raw)" \
	"0 EPERM EPERM EPERM" "under restricted, SO_MARK, AF_INET6 and SOCK_RAW are refused" ||
	tap_diag "$(cat "$CT_ERR")"
file=$(recordings tried)
tap_ok "$([ -f "$file" ]; echo $?)" "the recording is written" || tap_diag "$(ls -laR "$recdir")"
out=$("$HOOK" validate "$file" 2>&1)
tap_ok $? "validate takes it" || tap_diag "$out"
pol='.policies.tried'
want='.policies.restricted'
ex=$CT_EXAMPLE_CONFIG
tap_is "$(jq -c "$pol.socket" "$file")" "$(jq -c "$want.socket" "$ex")" \
	"its socket denies and stamps are restricted's (AF_INET6, SOCK_RAW, MPTCP; mark 7, priority 2)" ||
	tap_diag "$(cat "$file")"
tap_is "$(jq -c "$pol.getsockopt" "$file")" "$(jq -c "$want.getsockopt" "$ex")" \
	"its getsockopt rules are restricted's"
tap_is "$(jq -c "[$pol.setsockopt[] | select(.option == \"SO_MARK\" or .option == \"SO_PRIORITY\" or .option == \"IP_TOS\") | .action]" "$file")" \
	'["deny","deny","deny"]' "SO_MARK (tried and refused), SO_PRIORITY and IP_TOS stay denied"
tap_is "$(jq -c "$pol.setsockopt[] | select(.option == \"SO_RCVBUF\") | [.action, .min, .max]" "$file")" \
	'["clamp",65536,65536]' "SO_RCVBUF asked 4 MiB: a clamp within restricted's (65536)"
tap_is "$(jq -c "$pol.setsockopt[] | select(.option == \"TCP_CONGESTION\") | [.action, .value]" "$file")" \
	'["force","reno"]' "TCP_CONGESTION: the force to reno is kept"
tap_is "$(jq -c "[$pol.setsockopt[] | select(.action == \"allow\") | .option]" "$file")" \
	'["SO_KEEPALIVE"]' "only SO_KEEPALIVE, let through, is allowed"
tap_is "$(jq -c '[.recordings[0].footprint[] | select(.refused > 0) | [.call, .option // .family, .count, .refused]]' "$file")" \
	'[["setsockopt","SO_MARK",0,1],["getsockopt","SO_MARK",0,1],["socket","AF_INET",0,1],["socket","AF_INET6",0,1]]' \
	"the footprint notes the refused calls apart (count 0)" || tap_diag "$(jq -c .recordings[0].footprint "$file")"
enforce=$CT_TMP/configs/enforce.json
jq '{policies} + {"annotations": {"allow_policies": ["tried"]}}' "$file" >"$enforce"
b=$(ct_bundle -c "$enforce" -a sockopt-hook.io/policy=tried enf -- /bin/sh -c \
	'sockcheck set-mark 5; sockcheck socket inet6 stream; sockcheck socket inet raw; sockcheck get-mark')
ct_run runc "$(ct_id enf)" "$b"
tap_is "$(out_val setsockopt) $(out_val socket_inet6_stream) $(out_val socket_inet_raw) $(out_val mark)" \
	"EPERM EPERM EPERM EPERM" "enforced, the proposal refuses what restricted refused (SO_MARK set and read, AF_INET6, SOCK_RAW)" ||
	tap_diag "$(cat "$CT_OUT" "$CT_ERR")"

# ---- 2. What no config can say ----------------------------------------------
record odd "$cfg" 'sockcheck setopt dgram -1 5 1; sockcheck setopt dgram 17 1 0;
sockcheck setopt dgram 136 1 0; sockcheck setopt dgram 1 29 1;
sockcheck setopt dgram 1 63 1'
file=$(recordings odd)
tap_ok "$([ -f "$file" ]; echo $?)" "level -1, SOL_UDPLITE and SO_TIMESTAMP_NEW: the recording is written" ||
	tap_diag "$(cat "$CT_ERR")" "$(cat "$LOG")"
out=$("$HOOK" validate "$file" 2>&1)
tap_ok $? "validate takes it" || tap_diag "$out" "$(jq .policies "$file")"
tap_is "$(jq -c '[.policies.odd.setsockopt[] | [.level, .option]]' "$file")" \
	'[["SOL_SOCKET","SO_TIMESTAMP"],["SOL_UDP","UDP_CORK"]]' \
	"level -1 dropped, SOL_UDPLITE folded into SOL_UDP, SO_TIMESTAMP_NEW into SO_TIMESTAMP" ||
	tap_diag "$(jq -c .policies "$file")"
tap_is "$(jq -c '[.recordings[0].footprint[] | select(.call == "setsockopt") | .level] | sort_by(tostring)' "$file")" \
	'[-1,"SOL_SOCKET","SOL_SOCKET","SOL_UDP","SOL_UDPLITE"]' "the footprint keeps every call as made"

# A proposal the parser does not take is not written: the running policy
# in the recording's provenance, tampered with.
b=$(ct_bundle -c "$cfg" -a sockopt-hook.io/record=tamper tamper -- /bin/sh -c \
	'sockcheck keepalive; sockcheck listen 4790 60')
ct_start runc "$(ct_id tamper)" "$b" '^listen='
side=$(find "$CT_STATE_DIR" -name 'recording-*' | head -n 1)
# It is the file's trusted attribute, which only a CAP_SYS_ADMIN root sets.
attr=trusted.oci-sockopt-hook.record
python3 -c 'import os, sys; sys.stdout.buffer.write(os.getxattr(sys.argv[1], sys.argv[2]))' "$side" "$attr" |
	jq -c '.policy_config = {"default": "maybe"}' >"$CT_TMP/side.new"
python3 -c 'import os, sys; os.setxattr(sys.argv[1], sys.argv[2], open(sys.argv[3], "rb").read().strip())' \
	"$side" "$attr" "$CT_TMP/side.new"
: >"$LOG"
ct_delete runc "$(ct_id tamper)"
tap_is "$(recordings tamper)" "" "a proposal the config parser refuses is not written"
tap_like "$(grep -c 'not written' "$LOG") $(grep 'not written' "$LOG")" \
	"^1 .*recording of $(ct_id tamper) \\(record 'tamper'\\) not written: .*policies\\.running\\.default" \
	"the log says why, in one line" || tap_diag "$(cat "$LOG")"

# ---- 3. One file per recording, with its provenance -------------------------
ct_cri shop web-0 app
record web "$cfg" 'sockcheck keepalive' "${CRI[@]}"
ct_cri evil web-0 app
record web "$cfg" 'sockcheck rcvbuf 4096' "${CRI[@]}"
evil_id=$REC_ID
tap_is "$(recordings web | sed 's|.*/||; s/_[0-9a-f]\{12\}\.json$//')" "evil_web-0_app
shop_web-0_app" "namespaces evil and shop, the same record, pod and container: two files" ||
	tap_diag "$(ls -laR "$recdir")"
file=$(recordings web | grep /evil_)
tap_is "$(jq -c '.recordings[0] | [.record, .namespace, .pod, .container, .container_id, .policy, .mode]' "$file")" \
	"$(jq -cn --arg id "$evil_id" '["web", "evil", "web-0", "app", $id, null, "enforce"]')" \
	"its provenance: record, namespace, pod, container, container id, policy, mode"
tap_is "$(jq -r '.recordings[0] | "\(.kernel) \(.hook_version)"' "$file")" \
	"$(uname -r) $("$HOOK" --version --json | jq -r .version)" "the kernel and the hook's version"
jq -e '.recordings[0] | (.started | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$")) and .ended >= .started' "$file" >/dev/null
tap_ok $? "its start and end time (UTC)" || tap_diag "$(jq -c .recordings "$file")"
# The same container id, run again: another file.
b=$(ct_bundle -c "$cfg" -a sockopt-hook.io/record=again again -- sockcheck keepalive)
ct_run runc "$(ct_id again)" "$b"
ct_run runc "$(ct_id again)" "$b"
tap_is "$(recordings again | wc -l)" 2 "the same container id run twice: two files"

# ---- 4. record merge ----------------------------------------------------------
i=0
for work in 'sockcheck keepalive' 'sockcheck rcvbuf 65536' 'sockcheck cc cubic'; do
	ct_cri shop "shopweb-$i" app
	record shopweb "$cfg" "$work" "${CRI[@]}"
	i=$((i + 1))
done
tap_is "$(recordings shopweb | wc -l)" 3 "three replicas: three recordings"
merged=$CT_TMP/merged.json
"$HOOK" --config "$cfg" record merge shopweb >"$merged" 2>"$CT_TMP/merge.err"
tap_is "$?" 0 "record merge shopweb" || tap_diag "$(cat "$CT_TMP/merge.err")"
tap_is "$(jq -c '[.policies.shopweb.setsockopt[] | .option] | sort' "$merged")" \
	'["SO_KEEPALIVE","SO_RCVBUF","TCP_CONGESTION"]' "the merged proposal has every replica's option" ||
	tap_diag "$(cat "$merged")"
tap_is "$(jq -c '[.recordings[] | .pod] | sort' "$merged")" \
	'["shopweb-0","shopweb-1","shopweb-2"]' "and every replica's provenance"
out=$("$HOOK" validate "$merged" 2>&1)
tap_ok $? "validate takes the merged proposal" || tap_diag "$out"
mapfile -t files < <(recordings shopweb)
tap_is "$("$HOOK" record merge "${files[@]}" "${files[0]}" | jq -S .policies)" "$(jq -S .policies "$merged")" \
	"merging the files (one given twice) gives the same"
ct_cri shop shopweb-3 app
record shopweb2 "$under" 'sockcheck keepalive' "${CRI[@]}"
err=$("$HOOK" --config "$cfg" record merge shopweb "$(recordings shopweb2)" 2>&1 >/dev/null)
rc=$?
tap_ok "$([ "$rc" != 0 ] && [ "$(grep -c . <<<"$err")" = 1 ]; echo $?)" \
	"a recording made under another policy is not merged, in one line (exit $rc)" || tap_diag "$err"
tap_like "$err" "ran under another policy \\(restricted\\) than .*: merge the recordings of one workload under one policy" \
	"the line says why"

# ---- 5. record.dir is trusted like the state directory ---------------------------
mkdir -p "$CT_TMP/real" "$CT_TMP/evil"
ln -s "$CT_TMP/real" "$CT_TMP/link"
# shellcheck disable=SC2016
linked=$(ct_config linked '.record = {"allow": true, "dir": $d}' --arg d "$CT_TMP/link/rec")
b=$(ct_bundle -c "$linked" -a sockopt-hook.io/record=web linked -- sockcheck all)
refused runc linked "$b" "record\\.dir: $CT_TMP/link is a symbolic link or not a directory: refusing it"
tap_is "$(find "$CT_TMP/real" -mindepth 1 | wc -l)" 0 "nothing is made through the link"
mkdir -m 0775 "$CT_TMP/shared" && chmod 0775 "$CT_TMP/shared"
# shellcheck disable=SC2016
shared=$(ct_config shared '.record = {"allow": true, "dir": $d}' --arg d "$CT_TMP/shared/rec")
b=$(ct_bundle -c "$shared" -a sockopt-hook.io/record=web shared -- sockcheck all)
refused runc shared "$b" "record\\.dir: $CT_TMP/shared \\(owner uid 0, mode 0775\\) is writable by group or others"

# Swapped for a link while the container runs.
rd=$CT_TMP/rd
# shellcheck disable=SC2016
swap=$(ct_config swap '.record = {"allow": true, "dir": $d} | .log_file = $log' \
	--arg d "$rd" --arg log "$LOG")
b=$(ct_bundle -c "$swap" -a sockopt-hook.io/record=web swapped -- /bin/sh -c \
	'sockcheck keepalive; sockcheck listen 4791 60')
ct_start runc "$(ct_id swapped)" "$b" '^listen='
tap_ok "$([ -d "$rd/web" ]; echo $?)" "prestart made record.dir/web"
mv "$rd" "$rd.moved" && ln -s "$CT_TMP/evil" "$rd"
: >"$LOG"
ct_delete runc "$(ct_id swapped)"
tap_is "$(find "$CT_TMP/evil" "$rd.moved" -type f | wc -l)" 0 \
	"record.dir swapped for a link: nothing is written, through it or anywhere" ||
	tap_diag "$(find "$CT_TMP/evil" "$rd.moved")"
tap_like "$(grep "kept in its pins" "$LOG")" \
	"recording of $(ct_id swapped) kept in its pins for gc: record\\.dir: $rd is a symbolic link or not a directory: refusing it" \
	"the log says so, naming the path" || tap_diag "$(cat "$LOG")"
tap_ok "$([ "$(find "$fpdir" -mindepth 1 | wc -l)" -gt 0 ]; echo $?)" "the recording stays in its pins"
tap_like "$("$HOOK" status --json | jq -r '.[].id')" "$(ct_id swapped)" "and in its state record"
rm "$rd" && mv "$rd.moved" "$rd"
out=$("$HOOK" --config "$swap" gc 2>&1)
tap_is "$(find "$rd/web" -name '*.json' | wc -l)" 1 "once record.dir is sound, gc writes it" || tap_diag "$out"
tap_is "$(find "$fpdir" -mindepth 1 | wc -l)" 0 "and removes the pins"

ct_check_same "BPF programs and cgroups are as before" "$BEFORE" progs cgroups
tap_done
