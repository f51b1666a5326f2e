#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Record mode keeps each option's type and each workload's recordings
# apart, under real runc:
#  - a workload that sets SO_MARK to 0 and to 0xffffffff, and IP_TOS to
#    16 and to 256 (the kernel keeps its low byte, 0), gets its recording
#    written: the footprint says 0..4294967295 and 0..16, the proposal
#    clamps SO_MARK to 0..4294967295 and IP_TOS to 0..16, `validate`
#    takes it, and enforced it lets the workload set both marks again;
#  - `record merge` of that recording with one that set SO_MARK 5 only,
#    and with an older hook's file (its ranges the ints as given, -1 for
#    0xffffffff, no "values"), widens SO_MARK to 0..4294967295, in the
#    option's type; `validate` takes the merge;
#  - `record merge web` of pods of namespaces shop and evil that both
#    record as web is refused in one line naming the recordings of each;
#    so is --namespace shop, where a tools pod of another owner records as
#    web beside web-0 and a Deployment's replica of web: --owner web takes
#    web's two, --owner web --owner tools all three, --namespace shop
#    --namespace evil --owner web web's of both; the files named one by
#    one are merged;
#  - a recording's provenance that a capability-less root writes into the
#    state directory's recording-<id> as content is not what it says.
#
# Modules: `footprint.c`, `footprint.bpf.h`, `load.c`, `cmd_record.c`, `container.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup runc
ct_mount_bpffs || tap_bail "cannot mount a BPF filesystem"
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
recdir=$CT_TMP/recorded
LOG=$CT_TMP/hook.log
BEFORE=$(ct_snapshot progs cgroups)

# shellcheck disable=SC2016 # jq variables
cfg=$(ct_config record '.record = {"allow": true, "dir": $d} | .log_file = $log' \
	--arg d "$recdir" --arg log "$LOG")

recordings() { find "$recdir/$1" -name '*.json' 2>/dev/null | sort; }
out_val() { sed -n "s/^$1=//p" "$CT_OUT" | head -n 1; }

# record NAME SCRIPT [ANNOTATION-ARGS...]: runs SCRIPT recorded as NAME
# in a container of its own.
REC_N=0
record()
{
	local name=$1 script=$2 b

	shift 2
	REC_N=$((REC_N + 1))
	b=$(ct_bundle -c "$cfg" -a "sockopt-hook.io/record=$name" "$@" \
		"$name-$REC_N" -- /bin/sh -c "$script")
	ct_run runc "$(ct_id "$name-$REC_N")" "$b"
}

# SO_MARK is SOL_SOCKET (1) 36, IP_TOS SOL_IP (0) 1; -1 is 0xffffffff.
marks='sockcheck setopt dgram 1 36 0; sockcheck setopt dgram 1 36 -1;
sockcheck setopt dgram 0 1 16; sockcheck setopt dgram 0 1 256'

# ---- 1. SO_MARK 0 and 0xffffffff, IP_TOS 16 and 256 --------------------------
record marks "$marks"
file=$(recordings marks)
tap_ok "$([ -f "$file" ]; echo $?)" "SO_MARK 0 and 0xffffffff: the recording is written" ||
	tap_diag "$(grep 'not written' "$LOG")"
tap_is "$(jq -c '[.recordings[0].footprint[] | select(.call == "setsockopt") | [.option, .min, .max]]' "$file")" \
	'[["IP_TOS",0,16],["SO_MARK",0,4294967295]]' \
	"the footprint: SO_MARK 0..4294967295, IP_TOS as kept (256 is 0): 0..16" ||
	tap_diag "$(jq -c .recordings[0].footprint "$file")"
tap_is "$(jq -r '.recordings[0].values' "$file")" kept "its ranges are said to be as the kernel keeps them"
tap_is "$(jq -c '[.policies.marks.setsockopt[] | [.option, .action, .min, .max]]' "$file")" \
	'[["IP_TOS","clamp",0,16],["SO_MARK","clamp",0,4294967295]]' \
	"the proposal clamps SO_MARK to 0..4294967295 and IP_TOS to 0..16" ||
	tap_diag "$(jq -c .policies "$file")"
out=$("$HOOK" validate "$file" 2>&1)
tap_ok $? "validate takes it" || tap_diag "$out"
tap_is "$(grep -c 'not written' "$LOG")" 0 "nothing in the log says a recording was not written" ||
	tap_diag "$(cat "$LOG")"

# Enforced, the proposal takes what the workload did.
enforce=$CT_TMP/configs/enforce.json
jq '{policies} + {"annotations": {"allow_policies": ["marks"]}}' "$file" >"$enforce"
b=$(ct_bundle -c "$enforce" -a sockopt-hook.io/policy=marks enf -- /bin/sh -c \
	'sockcheck setopt dgram 1 36 -1; sockcheck setopt dgram 0 1 16')
ct_run runc "$(ct_id enf)" "$b"
tap_is "$CT_RC $(out_val setopt_0_1)" "0 ok" "enforced, IP_TOS 16 is let through" ||
	tap_diag "$(cat "$CT_OUT" "$CT_ERR")"

# ---- 2. record merge, in the option's type ------------------------------------
record marks 'sockcheck setopt dgram 1 36 5'
tap_is "$(recordings marks | wc -l)" 2 "a second replica: two recordings"
# An older hook's file: the same recording with its ranges as given.
old=$CT_TMP/old-hook.json
jq '.recordings[0] |= (del(.values) | .container_id = "older" |
	.footprint |= map(if .option == "SO_MARK" then .min = -1 | .max = -1 else . end))' \
	"$file" >"$old"
merged=$CT_TMP/merged.json
"$HOOK" --config "$cfg" record merge marks "$old" >"$merged" 2>"$CT_TMP/merge.err"
tap_is "$?" 0 "record merge of both replicas and an older hook's file" ||
	tap_diag "$(cat "$CT_TMP/merge.err")"
tap_is "$(jq -c '.policies.marks.setsockopt[] | select(.option == "SO_MARK") | [.action, .min, .max]' "$merged")" \
	'["clamp",0,4294967295]' "SO_MARK 0, 0xffffffff, 5 and an older -1: a clamp to 0..4294967295" ||
	tap_diag "$(jq -c .policies "$merged")"
out=$("$HOOK" validate "$merged" 2>&1)
tap_ok $? "validate takes the merge" || tap_diag "$out"
tap_is "$("$HOOK" record merge "$old" | jq -c '.policies.marks.setsockopt[] | select(.option == "SO_MARK") | [.min, .max]')" \
	'[4294967295,4294967295]' "the older file alone: its SO_MARK -1 is 4294967295" ||
	tap_diag "$("$HOOK" record merge "$old" 2>&1)"

# ---- 3. A record name stays within one workload -----------------------------
# Namespace shop runs web (web-0, and a Deployment's replica) and a tools
# pod of another team that also records as web; evil has a web-0 too.
ct_cri shop web-0 app
record web 'sockcheck keepalive' "${CRI[@]}"
ct_cri evil web-0 app
record web 'sockcheck rcvbuf 4096' "${CRI[@]}"
ct_cri shop web-7d4b9c8f6d-x2k9p app
record web 'sockcheck keepalive' "${CRI[@]}"
ct_cri shop tools-5d8f7c9b6d-zx4kq debug
record web 'sockcheck setopt dgram 0 1 16' "${CRI[@]}"
shopf=$(recordings web | grep /shop_web-0_) evilf=$(recordings web | grep /evil_)
replf=$(recordings web | grep /shop_web-7d) toolsf=$(recordings web | grep /shop_tools-)
tap_is "$(recordings web | wc -l)" 4 "four recordings under web"
err=$("$HOOK" --config "$cfg" record merge web 2>&1 >/dev/null)
rc=$?
tap_ok "$([ "$rc" != 0 ] && [ "$(grep -c . <<<"$err")" = 1 ]; echo $?)" \
	"record merge web of namespaces shop and evil: refused, in one line (exit $rc)" || tap_diag "$err"
tap_like "$err" "'web' holds recordings of more than one namespace .*${evilf##*/} is of namespace evil, and [^;]*${shopf##*/}[^;]* are not; name the namespace to take with --namespace NS" \
	"the line names the recordings of each namespace and the flag"
err=$("$HOOK" --config "$cfg" record merge --namespace shop web 2>&1 >/dev/null)
rc=$?
tap_ok "$([ "$rc" != 0 ] && [ "$(grep -c . <<<"$err")" = 1 ]; echo $?)" \
	"--namespace shop, of pods of owners tools and web: refused, in one line (exit $rc)" || tap_diag "$err"
tap_like "$err" "'web' holds recordings of pods of more than one owner .*${toolsf##*/} is of owner tools, and ${shopf##*/}, ${replf##*/} are not; name the owner to take with --owner OWNER" \
	"the line names the recordings of each owner and the flag"
out=$("$HOOK" --config "$cfg" record merge --namespace shop --owner web web 2>&1)
tap_is "$? $(jq -c '[.recordings[].pod] | sort' <<<"$out" 2>/dev/null) $(jq -c '[.policies.web.setsockopt[].option]' <<<"$out" 2>/dev/null)" \
	'0 ["web-0","web-7d4b9c8f6d-x2k9p"] ["SO_KEEPALIVE"]' \
	"--namespace shop --owner web: web-0 and the Deployment's replica, not tools" || tap_diag "$out"
out=$("$HOOK" --config "$cfg" record merge --namespace shop --owner web --owner tools web 2>&1)
tap_is "$? $(jq -c '[.recordings[].pod] | sort' <<<"$out" 2>/dev/null) $(jq -c '[.policies.web.setsockopt[].option] | sort' <<<"$out" 2>/dev/null)" \
	'0 ["tools-5d8f7c9b6d-zx4kq","web-0","web-7d4b9c8f6d-x2k9p"] ["IP_TOS","SO_KEEPALIVE"]' \
	"--owner web --owner tools: the three, as the operator named them" || tap_diag "$out"
out=$("$HOOK" --config "$cfg" record merge --namespace shop --namespace evil --owner web web 2>&1)
tap_is "$? $(jq -c '[.recordings[].namespace] | sort' <<<"$out" 2>/dev/null)" '0 ["evil","shop","shop"]' \
	"--namespace shop --namespace evil --owner web: web of both, as the operator named them" || tap_diag "$out"
err=$("$HOOK" --config "$cfg" record merge --namespace shop --namespace evil web 2>&1 >/dev/null)
tap_like "$? $err" "^[1-9][0-9]* .*more than one owner .* is of owner web, and ${toolsf##*/} are not" \
	"--namespace shop --namespace evil alone: refused for tools' recording"
out=$("$HOOK" record merge "$shopf" "$evilf" "$toolsf" 2>&1)
tap_is "$? $(jq -c '[.recordings[].namespace] | sort' <<<"$out" 2>/dev/null)" '0 ["evil","shop","shop"]' \
	"the files named one by one: merged" || tap_diag "$out"
err=$("$HOOK" --config "$cfg" record merge --namespace other web 2>&1 >/dev/null)
tap_like "$? $err" "^[1-9][0-9]* .*no recording of 'web' is of the namespaces named with --namespace" \
	"--namespace of none of them: refused, one line"
err=$("$HOOK" --config "$cfg" record merge --namespace shop --owner nobody web 2>&1 >/dev/null)
tap_like "$? $err" "^[1-9][0-9]* .*no recording of 'web' is of the namespaces named with --namespace and the owners named with --owner" \
	"--owner of none of them: refused, one line"

# ---- 4. A recording's provenance is only what the hook wrote -----------------
# Its provenance is the trusted attribute of recording-<id> in the state
# directory; a uid 0 without capabilities may write the directory, and
# what it writes into that file as content is not read.
record prov 'sleep 4; sockcheck rcvbuf 4096' &
recpid=$!
side=
for _ in $(seq 1 100); do
	side=$(find "$CT_STATE_DIR" -maxdepth 1 -name 'recording-*' | head -n 1)
	[ -n "$side" ] && break
	sleep 0.1
done
# shellcheck disable=SC2016 # expanded by the inner sh
setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- sh -c \
	'printf %s "{\"kernel\":\"planted\",\"policy_config\":null}" >"$1"' \
	sh "$side"
wait "$recpid"
pf=$(recordings prov | head -n 1)
tap_is "$(jq -r '.recordings[0].kernel' "$pf" 2>/dev/null)" "$(uname -r)" \
	"a recording's provenance planted as file content by a capability-less root: not read" ||
	tap_diag "$(jq -c '.recordings[0] | del(.footprint)' "$pf" 2>&1)"

tap_is "$(find "$CT_PIN_DIR-footprint" -mindepth 1 2>/dev/null | wc -l)" 0 "no footprint pins are left"
ct_check_same "BPF programs and cgroups are as before" "$BEFORE" progs cgroups
tap_done
