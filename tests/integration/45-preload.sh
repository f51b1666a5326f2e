#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `preload` loads and pins every policy's programs so that
# prestart only attaches. Under runc, on a BPF filesystem of the test's
# own: prestart uses the pins and loads nothing; a config change pins the
# new policies, unpins the removed ones and leaves running containers as
# they were; losing the pins (as at a reboot) falls back to loading; a
# failed preload changes no pin; bad pin directories are refused in one
# line. Also poststop's O(1) promise (gc at most once a minute, its
# container's attachment read once) and the no-op prestart (no bpf(), no
# state directory). And keep_keys, the static keys kept on from a cgroup
# of preload's own, and --unpin removing it.
#
# Modules: `preload.c`, `pin.c`, `share.c`, `cmd_preload.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup runc
tap_require_cmd strace
SHIM=$CT_BUILD/tests/faultshim.so
[ -f "$SHIM" ] || tap_skip_all "$SHIM not built (make test-progs)"
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
before=$(ct_snapshot)
ct_mount_bpffs || tap_bail "cannot mount a BPF filesystem in $CT_TMP"

# pins: the pin directory's entries, one per line, but the generic
# programs' (49-generic checks those).
pins()
{
	local p

	for p in "$CT_PIN_DIR"/*; do
		[ -e "$p" ] || continue
		case $(timeout 20 bpftool -j prog show pinned "$p" | jq -r .name) in
		sh_gen_*) ;;
		*) basename "$p" ;;
		esac
	done
}

# pin_ids: the program ids behind the pins, sorted as comm(1) wants them
# (not numerically: ids that cross a power of ten would be out of order).
pin_ids()
{
	local p

	for p in $(pins); do
		timeout 20 bpftool -j prog show pinned "$CT_PIN_DIR/$p" | jq .id
	done | sort
}

# cg_ids CGROUP: the ids of our programs attached to it, sorted as
# pin_ids sorts them.
cg_ids()
{
	timeout 20 bpftool -j cgroup show "$1" 2>/dev/null |
		jq '.[]? | select(.name | startswith("sh_")) | .id' | sort
}

# With HOOK under valgrind (80-sanitized-hook.sh), valgrind's own notes
# ("--PID-- WARNING: unhandled eBPF command 35") are not the hook's output
# and are dropped; its error reports ("==PID==") are kept.
preload()
{
	"$HOOK" --config "$1" preload 2>&1 | grep -v '^--[0-9]*-- '
	return "${PIPESTATUS[0]}"
}

# start NAME CONFIG: a "restricted" container that reports what it can
# do, then waits. Sets CG.
start()
{
	ct_up -c "$2" -a sockopt-hook.io/policy=restricted --wait '^keepalive=' \
		"$1" -- /bin/sh -c 'sockcheck all; sleep 120' || return 1
	CG=$CT_CG
}

out_val()
{
	sed -n "s/^$1=//p" "$CT_OUT" | head -n 1
}

# ---- preload, then a container that only attaches --------------------------
cfg_a=$(ct_config a)
out=$(preload "$cfg_a")
tap_is "$?" 0 "preload of examples/config.json succeeds"
tap_like "$out" "preloaded 5 program\(s\) for 3 policy variant\(s\) in $CT_PIN_DIR: 5 pinned now" \
	"it pins 5 programs: restricted's 3, setonly's 1 and the pod sandboxes' sock_create (bulk is bypass only, refused here)"
tap_is "$(pins | sed 's/-.*//' | sort | tr '\n' ' ')" \
	"getsockopt setsockopt setsockopt sock_create sock_create " \
	"the pins are named by kind and policy hash"
tap_is "$(stat -c %a "$CT_PIN_DIR")" 700 "the pin directory is root's alone (0700)"
out=$(preload "$cfg_a")
tap_like "$out" "0 pinned now, 5 already pinned, 0 unpinned" "a second preload keeps the pins"
tap_is "$("$HOOK" probe --json | jq -c '[.pin_dir, .preloaded_programs, .pin_dir_error]')" \
	"[\"$CT_PIN_DIR\",5,null]" "probe counts the preloaded programs"

# ---- keep_keys: the static keys kept on from a cgroup of our own ----------------
# keys: our programs on the keys cgroup, as "attach-type name" words.
KEYS_CG=$CT_CG2/$OCI_SOCKOPT_HOOK_KEYS_CGROUP
keys()
{
	[ -d "$KEYS_CG" ] || { echo "no cgroup"; return; }
	timeout 20 bpftool -j cgroup show "$KEYS_CG" |
		jq -r '[.[] | "\(.attach_type):\(.name)"] | sort | join(" ")'
}
all_keys="cgroup_getsockopt:sh_keys cgroup_inet_sock_create:sh_keys cgroup_setsockopt:sh_keys"
tap_like "$out" "static keys kept on for sock_create, setsockopt, getsockopt \(cgroup $KEYS_CG\)" \
	"keep_keys is on when the config does not say: preload says which keys it keeps on"
tap_is "$(keys)" "$all_keys" \
	"one program per attach type the policies use, on the keys cgroup (restricted uses all three)"
tap_is "$(cat "$KEYS_CG/cgroup.procs")" "" "no process is in the keys cgroup"
tap_is "$("$HOOK" probe --json | jq -c '.static_keys')" \
	"{\"kept\":[\"sock_create\",\"setsockopt\",\"getsockopt\"],\"cgroup\":\"$KEYS_CG\",\"populated\":false,\"error\":null}" \
	"probe --json shows them"
tap_like "$("$HOOK" probe)" "static keys kept on: +sock_create, setsockopt, getsockopt \(cgroup $KEYS_CG\)" \
	"and probe"
tap_like "$("$HOOK" status)" "static keys kept on for sock_create, setsockopt, getsockopt \(cgroup $KEYS_CG\)" \
	"and status"
keys_ids=$(timeout 20 bpftool -j cgroup show "$KEYS_CG" | jq -c '[.[].id] | sort')
preload "$cfg_a" >/dev/null
tap_is "$(timeout 20 bpftool -j cgroup show "$KEYS_CG" | jq -c '[.[].id] | sort')" "$keys_ids" \
	"a second preload keeps the same programs (no reload, no key turned off and on)"
# sandbox_policy "": the pod sandboxes' sock_create would keep that key on.
cfg_set=$(ct_config setonly-only 'del(.policies.restricted, .policies.bulk) |
	.annotations.allow_policies = ["setonly"] | .sandbox_policy = ""')
out=$(preload "$cfg_set")
tap_is "$(keys)" "cgroup_setsockopt:sh_keys" \
	"a config whose policies only use setsockopt: only that key stays kept on"
tap_like "$out" "static keys kept on for setsockopt " "and preload says so"
cfg_nokeys=$(ct_config nokeys '.keep_keys = false')
out=$(preload "$cfg_nokeys")
tap_is "$(keys)" "no cgroup" "keep_keys false: the next preload removes the keys cgroup"
tap_is "$(host_prog_count '^sh_keys')" 0 "and no keys program stays loaded"
tap_is "$("$HOOK" probe --json | jq -c '.static_keys.kept')" "[]" "probe: none kept"
out=$(OCI_SOCKOPT_HOOK_KEYS_CGROUP=../escape preload "$cfg_a")
tap_is "$? $(grep -c 'warning' <<<"$out") $(grep -c '^preloaded ' <<<"$out")" "0 1 1" \
	"a keys cgroup outside the cgroup2 mount: preload still pins, with one warning" ||
	tap_diag "$out"
tap_like "$out" "warning: static keys not kept on: keys cgroup ../escape: not a relative path" \
	"the warning says why"
tap_ok "$([ ! -e "$CT_CG2/../escape" ]; echo $?)" "and nothing was made outside the mount"
preload "$cfg_a" >/dev/null
tap_is "$(keys)" "$all_keys" "keep_keys on again: the keys are kept again"

progs_before=$(host_prog_count '^sh_')
start pinned "$cfg_a"
tap_is "$(out_val setsockopt)" EPERM "pinned: setsockopt(SO_MARK) gives EPERM"
tap_is "$(out_val cc)" reno "pinned: TCP_CONGESTION cubic reads back reno"
tap_is "$(out_val socket_inet6_stream)" EPERM "pinned: socket(AF_INET6) gives EPERM"
tap_is "$(host_prog_count '^sh_')" "$progs_before" "pinned: prestart loaded no program"
old_cg_ids=$(cg_ids "$CG")
old_cg=$CG
comm -23 <(echo "$old_cg_ids") <(pin_ids) >"$CT_TMP/not-pinned"
tap_is "$(echo "$old_cg_ids" | wc -l) $(cat "$CT_TMP/not-pinned")" "3 " \
	"pinned: the 3 programs attached are the pinned ones"

# ---- a config change ---------------------------------------------------------
# restricted's clamp changes, setonly goes, a new policy comes.
cfg_b=$(ct_config b '
	.policies.restricted.setsockopt |= map(if .option == "SO_RCVBUF" then .max = 32768 else . end) |
	del(.policies.setonly) | .annotations.allow_policies -= ["setonly"] |
	.policies.fresh = {"setsockopt": [{"level": "SOL_SOCKET", "option": "SO_PRIORITY", "action": "deny"}]} |
	.annotations.allow_policies += ["fresh"]')
old_pins=$(pins)
out=$(preload "$cfg_b")
tap_is "$?" 0 "preload after a config change succeeds"
tap_like "$out" "preloaded 5 program\(s\) for 3 policy variant\(s\) in $CT_PIN_DIR: 2 pinned now, 3 already pinned, 2 unpinned" \
	"it pins the changed and the new policy's setsockopt, keeps sock_create and getsockopt, unpins the old restricted and setonly ones"
tap_is "$(comm -12 <(echo "$old_pins") <(pins) | sed 's/-.*//' | tr '\n' ' ')" \
	"getsockopt sock_create sock_create " "the unchanged programs keep their pins"
tap_is "$(cg_ids "$old_cg")" "$old_cg_ids" "the running container keeps its programs"
ct_rt runc
"${CT_RT[@]}" exec "$(ct_id pinned)" sockcheck set-mark 1 >"$CT_TMP/exec.out" 2>&1
tap_like "$(cat "$CT_TMP/exec.out")" "EPERM" \
	"the running container's setsockopt(SO_MARK) still gives EPERM"
"${CT_RT[@]}" exec "$(ct_id pinned)" sockcheck rcvbuf 65536 >"$CT_TMP/exec.out" 2>&1
tap_like "$(cat "$CT_TMP/exec.out")" "rcvbuf=131072" \
	"the running container keeps the old clamp: SO_RCVBUF 64 KiB reads back 131072"

start changed "$cfg_b"
"${CT_RT[@]}" exec "$(ct_id changed)" sockcheck rcvbuf 65536 >"$CT_TMP/exec.out" 2>&1
tap_like "$(cat "$CT_TMP/exec.out")" "rcvbuf=65536" \
	"a new container gets the new clamp: SO_RCVBUF 64 KiB reads back 65536 (32 KiB doubled)"
comm -23 <(cg_ids "$CG") <(pin_ids) >"$CT_TMP/not-pinned"
tap_is "$(cat "$CT_TMP/not-pinned")" "" "the new container's programs are the new pins"
ct_delete runc "$(ct_id changed)"

# ---- a config changed, not yet preloaded: the generic programs ------------
cfg_d=$CT_TMP/configs/d.json
jq '.policies.late = {"setsockopt": [{"level": "SOL_SOCKET", "option": "SO_KEEPALIVE", "action": "deny"}]} |
	.annotations.allow_policies += ["late"]' "$cfg_b" >"$cfg_d"
late()
{
	local bundle

	bundle=$(ct_bundle -c "$cfg_d" -a sockopt-hook.io/policy=late "$1" -- sockcheck keepalive)
	ct_run runc "$(ct_id "$1")" "$bundle"
	tap_is "$CT_RC $(cat "$CT_OUT")" "0 keepalive=EPERM" "$1: a policy not yet preloaded applies"
}
pins_before=$(pins | wc -l)
progs_before=$(host_prog_count '^sh_')
late late1
tap_is "$(host_prog_count '^sh_')" "$progs_before" "its container loads nothing: it starts on the generic programs"
tap_is "$(pins | wc -l)" "$pins_before" "and pins nothing"
tap_like "$(preload "$cfg_d")" "1 pinned now, [0-9]+ already pinned, 0 unpinned" \
	"preload with that config pins it"
progs_before=$(host_prog_count '^sh_')
late late2
tap_is "$(host_prog_count '^sh_')" "$progs_before" "the next container loads nothing either"
preload "$cfg_b" >/dev/null

# ---- a preload that fails changes no pin ---------------------------------
cfg_c=$(ct_config c '.policies.restricted.getsockopt = [{"level": "SOL_SOCKET", "option": "SO_PRIORITY", "action": "deny"}]')
pins_b=$(pins)
out=$(HOOK=$(ct_dynamic_hook) FAULTSHIM=load:getsockopt:EINVAL LD_PRELOAD=$SHIM preload "$cfg_c")
rc=$?
tap_ok $((rc == 0)) "a preload whose getsockopt program cannot load fails (exit $rc)"
tap_is "$(echo "$out" | wc -l)" 1 "with one line: $out"
tap_is "$(pins)" "$pins_b" "and leaves the pins as they were"

# ---- pins lost (a reboot): the fallback loads --------------------------------
umount "$CT_BPFFS" && mount -t bpf bpf "$CT_BPFFS"
tap_is "$(pins)" "" "a new BPF filesystem has no pins"
start fallback "$cfg_b"
tap_is "$(out_val setsockopt)" EPERM "fallback: setsockopt(SO_MARK) gives EPERM"
tap_is "$(out_val socket_inet6_stream)" EPERM "fallback: socket(AF_INET6) gives EPERM"
ct_delete runc "$(ct_id fallback)"

# ---- bad pin directories -------------------------------------------------------
mkdir -p "$CT_TMP/plain"
out=$(OCI_SOCKOPT_HOOK_PIN_DIR=$CT_TMP/plain/pins preload "$cfg_b")
rc=$?
tap_ok $((rc == 0)) "preload into a directory that is not on a BPF filesystem fails (exit $rc)"
tap_like "$out" "^oci-sockopt-hook: pin directory .* is not on a BPF filesystem[^
]*$" "with one line saying so"
mkdir -m 0777 "$CT_PIN_DIR" && chmod 0777 "$CT_PIN_DIR"
out=$(preload "$cfg_b")
rc=$?
tap_ok $((rc == 0)) "preload into a pin directory others may write fails (exit $rc)"
tap_like "$out" "^oci-sockopt-hook: pin directory .* is writable by group or others: refusing it$" \
	"with one line saying so"
tap_like "$("$HOOK" probe)" "preloaded programs: +none \(pin directory .* is writable by group or others: refusing it\)" \
	"probe says why it finds no preloaded program"
cfg_log=$CT_TMP/configs/log.json
jq --arg f "$CT_TMP/hook.log" '.log_file = $f' "$cfg_b" >"$cfg_log"
start untrusted "$cfg_log"
tap_is "$(out_val setsockopt)" EPERM "a prestart that refuses the pin directory still attaches the policy"
tap_like "$(grep "pin directory" "$CT_TMP/hook.log")" \
	"pin directory .* refusing it; loading the programs instead" "and logs why it loads"
touch "$CT_STATE_DIR/last-gc" # no gc in these poststops
ct_delete runc "$(ct_id untrusted)"
ct_delete runc "$(ct_id pinned)"
rmdir "$CT_PIN_DIR"
# index: the index entries of shared copies in the state directory
index() { find "$CT_STATE_DIR" -mindepth 1 -maxdepth 1 -name 'shared-*' -printf '%f\n' | sort; }
index >"$CT_TMP/index"
[ -s "$CT_TMP/index" ]
tap_ok $? "poststop leaves the index of the copies it loaded to gc: $(tr '\n' ' ' <"$CT_TMP/index")"
tap_is "$("$HOOK" gc --json 2>&1)" '{"released": 0}' "gc finds no stale record"
tap_is "$(index)" "" "and removes the index entries no container uses"

# ---- unpin -------------------------------------------------------------------------
preload "$cfg_b" >/dev/null
tap_is "$(keys)" "$all_keys" "the keys are kept on before --unpin"
out=$("$HOOK" preload --unpin 2>&1)
tap_like "$out" "^unpinned 5 program\(s\) from $CT_PIN_DIR
unpinned 6 generic program\(s\)$" "preload --unpin removes every pin, the sandboxes' one and the generic programs' too"
[ ! -e "$CT_PIN_DIR" ]
tap_ok $? "and the pin directory"
tap_is "$(keys) $(host_prog_count '^sh_keys')" "no cgroup 0" \
	"and the keys cgroup with its programs (uninstall runs it)"

# ---- poststop is O(1): gc at most once a minute --------------------------------
bundle=$(ct_bundle -P -a sockopt-hook.io/policy=setonly stale -- /bin/sh -c 'sleep 120')
ct_start_ok "stale: container without a poststop hook starts" runc "$(ct_id stale)" "$bundle"
ct_delete runc "$(ct_id stale)"
touch "$CT_STATE_DIR/last-gc"
bundle=$(ct_bundle -a sockopt-hook.io/policy=setonly next -- /bin/true)
ct_run runc "$(ct_id next)" "$bundle"
[ -e "$CT_STATE_DIR/$(ct_id stale).json" ]
tap_ok $? "a poststop within a minute of the last gc leaves the stale record"
touch -d '-2 minutes' "$CT_STATE_DIR/last-gc"
ct_run runc "$(ct_id next2)" "$bundle"
[ ! -e "$CT_STATE_DIR/$(ct_id stale).json" ]
tap_ok $? "the first poststop a minute later runs gc and releases it"

# ---- poststop reads its container's attachment once -----------------------------
# The walk over the state directory reads it; releasing it reads nothing
# again (a second parse of the same attachment was a quarter of poststop).
bundle=$(ct_bundle -P -a sockopt-hook.io/policy=setonly once -- /bin/true)
ct_run runc "$(ct_id once)" "$bundle"
tap_is "$CT_RC" 0 "once: a container without a poststop hook runs"
jq -cn --arg id "$(ct_id once)" --arg b "$bundle" \
	'{ociVersion: "1.0.2", id: $id, status: "stopped", bundle: $b}' >"$CT_TMP/once.json"
touch "$CT_STATE_DIR/last-gc" # no gc in this poststop
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	strace -f -qq -s 64 -e trace=fgetxattr,getxattr,lgetxattr -o "$CT_TMP/once.st" \
	"$HOOK" --config "$CT_EXAMPLE_CONFIG" poststop <"$CT_TMP/once.json"
tap_is "$?" 0 "its poststop, run afterwards, succeeds"
# Only the record's attribute: valgrind reads the executable's
# security.capability on its own.
tap_is "$(grep -c 'xattr(.*"trusted\.oci-sockopt-hook\.record"' "$CT_TMP/once.st")" 1 \
	"and reads its attachment once" || tap_diag "$(cat "$CT_TMP/once.st")"
[ ! -e "$CT_STATE_DIR/$(ct_id once).json" ]
tap_ok $? "and releases it"

# ---- nothing to attach: no bpf(), no state directory -------------------------------
bundle=$(ct_bundle plain -- /bin/true)
jq -cn --arg b "$bundle" '{ociVersion: "1.0.2", id: "x", status: "creating", pid: 1, bundle: $b}' \
	>"$CT_TMP/noop.json"
# LeakSanitizer cannot run under ptrace (80-sanitized-hook.sh's ASan hook
# would exit 98 for that alone): no leak check for this one run.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	OCI_SOCKOPT_HOOK_STATE_DIR=$CT_TMP/no-state strace -f -qq -e trace=bpf -o "$CT_TMP/noop.st" \
	"$HOOK" --config "$cfg_b" prestart <"$CT_TMP/noop.json"
tap_is "$?" 0 "a prestart with nothing to attach succeeds"
tap_is "$(grep -c 'bpf(' "$CT_TMP/noop.st")" 0 "and makes no bpf() call"
[ ! -e "$CT_TMP/no-state" ]
tap_ok $? "and does not touch the state directory"

umount "$CT_BPFFS" && CT_BPFFS=
ct_check_same "after the containers are deleted, BPF programs, hook state and cgroups are as before" \
	"$before"
tap_done
