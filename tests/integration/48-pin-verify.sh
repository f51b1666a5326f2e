#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Pins are verified before use. In a pin directory of
# the test's own BPF filesystem, after `preload` pinned restricted's three
# programs, the pins are replaced by what another tool, an older hook or a
# mistake could leave under those names (tests/progs/cgprog pin):
#  - sock_create-<hash>: a program of the right type, attach type and name
#    (sh_sock_create) that allows everything: the hook that trusted names
#    attached it, and the container made AF_INET6 sockets under
#    socket.deny; now it is refused (no .rodata of ours), with a warning,
#    and a fresh copy enforces;
#  - setsockopt-<hash>: a CGROUP_SKB program named sh_setsockopt (the
#    wrong program type), and getsockopt-<hash>: a CGROUP_SOCKOPT program
#    named sh_getsockopt that attaches as setsockopt (the wrong attach
#    type): the old hook tried to attach them and the container failed;
#    now each is a warning and a fresh load, and the container is policed;
#  - the prestart that refused them pins its own copies in their place:
#    each pin is then the very program that prestart attached (its id),
#    with the tag of the genuine pin (the same instructions), not the
#    planted one; the next container attaches those pins; planted again,
#    preload replaces them (the old one kept them);
#  - record mode: a pinned footprint table replaced by a hash map with
#    64-byte keys and 256-byte values is not read (the old hook read its
#    keys into an 8-byte buffer), with a warning; the container's poststop
#    still ends well.
#
# Modules: `progcheck.c`, `preload.c`, `share.c`, `load.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup runc
CGPROG=$CT_BUILD/tests/cgprog
[ -x "$CGPROG" ] || tap_skip_all "$CGPROG not built (run make test-progs)"
tap_require_cmd bpftool
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
BASE=$(ct_snapshot)
ct_mount_bpffs || tap_bail "cannot mount a BPF filesystem in $CT_TMP"
LOG=$CT_TMP/hook.log
# restricted only, no bypass, no default: restricted's three pins and the
# pod sandboxes' sock_create.
# shellcheck disable=SC2016 # $log and $rec are jq's
CFG=$(ct_config pins '.annotations = {"allow_policies": ["restricted"]} |
	.log_file = $log | .record = {"allow": true, "dir": $rec}' \
	--arg log "$LOG" --arg rec "$CT_TMP/recorded")

# run NAME: a restricted container that runs sockcheck all, then is
# deleted; sets RC, OUT and ATTACHED (the sorted ids of the sh_* programs
# on its cgroup while it ran).
run()
{
	local b id

	b=$(ct_bundle -c "$CFG" -a sockopt-hook.io/policy=restricted "$1" -- sh -c 'sockcheck all; sleep 600')
	id=$(ct_id "$1")
	: >"$LOG"
	ct_start runc "$id" "$b" '^done='
	RC=$CT_RC
	OUT=$(cat "$CT_OUT" "$CT_ERR")
	ATTACHED=null
	[ -n "$CT_PID" ] && ATTACHED=$(timeout 20 bpftool -j cgroup show "$(ct_cgroup_of "$CT_PID")" |
		jq -c '[.[]? | select(.name | startswith("sh_")) | .id] | sort')
	ct_delete runc "$id"
}

# pin_show PIN: "id tag type name" of the program pinned as PIN.
pin_show()
{
	timeout 20 bpftool -j prog show pinned "$CT_PIN_DIR/$1" 2>/dev/null |
		jq -r '"\(.id) \(.tag) \(.type) \(.name)"'
}

# repinned PIN PLANTED-ID GENUINE: PIN is now one of ATTACHED (the copy
# the last prestart loaded), not the planted program, and it is the
# genuine program again: same tag, type and name as GENUINE
# ("id tag type name" of the pin before it was replaced).
repinned()
{
	local now id

	now=$(pin_show "$1")
	id=${now%% *}
	[ -n "$id" ] && [ "$id" != "$2" ] && [ "${now#* }" = "${3#* }" ] &&
		jq -e --argjson id "$id" 'index($id) != null' <<<"$ATTACHED" >/dev/null
	tap_ok $? "the prestart that refused $1 pinned the copy it attached in its place (now: $now; attached $ATTACHED; planted id $2; genuine: $3)"
}

val()
{
	sed -n "s/^$1=//p" <<<"$OUT" | head -n 1
}

out=$("$HOOK" --config "$CFG" preload 2>&1)
tap_like "$out" "preloaded [0-9]+ program\(s\) for [0-9]+ policy variant\(s\) in $CT_PIN_DIR" \
	"preload pins the config's programs" || tap_diag "$out"

# restricted's pins: those a detached restricted container has attached.
b=$(ct_bundle -c "$CFG" -a sockopt-hook.io/policy=restricted genuine -- sh -c 'sockcheck all; sleep 600')
ct_start_ok "genuine: a restricted container starts on the pins" runc "$(ct_id genuine)" "$b" '^done=' ||
	tap_bail "no container to tell restricted's pins by"
OUT=$(cat "$CT_OUT")
tap_is "$(val setsockopt) $(val socket_inet6_stream)" "EPERM EPERM" \
	"the genuine pins: the container is policed"
tap_is "$(grep -c 'is not the one this policy needs' "$LOG")" 0 "and no pin is refused"
attached=$(timeout 20 bpftool -j cgroup show "$CT_CG" | jq '[.[]? | select(.name | startswith("sh_")) | .id]')
SOCK='' SET='' GET=''
for p in "$CT_PIN_DIR"/*; do
	id=$(timeout 20 bpftool -j prog show pinned "$p" | jq .id)
	jq -e --argjson id "$id" 'index($id) != null' <<<"$attached" >/dev/null || continue
	case $(basename "$p") in
	sock_create-*) SOCK=$(basename "$p") ;;
	setsockopt-*) SET=$(basename "$p") ;;
	getsockopt-*) GET=$(basename "$p") ;;
	esac
done
[ -n "$SOCK" ] && [ -n "$SET" ] && [ -n "$GET" ]
tap_ok $? "restricted's three programs are pins: $SOCK $SET $GET"
ct_delete runc "$(ct_id genuine)"
G_SOCK=$(pin_show "$SOCK") G_SET=$(pin_show "$SET") G_GET=$(pin_show "$GET")

# --- a pin of the right type, attach type and name that allows all -------
rm "$CT_PIN_DIR/$SOCK"
"$CGPROG" pin "$CT_PIN_DIR/$SOCK" sock_create sh_sock_create
tap_ok $? "planted: an allow-all sh_sock_create (cgroup_sock, inet_sock_create) as $SOCK"
P_SOCK=$(pin_show "$SOCK")
run impostor
tap_is "$RC $(val socket_inet6_stream) $(val socket_inet_raw)" "0 EPERM EPERM" \
	"the impostor is not used: socket(AF_INET6) and SOCK_RAW still give EPERM" || tap_diag "$OUT"
tap_like "$(cat "$LOG")" "warning: container [^ ]*: pinned program $SOCK in $CT_PIN_DIR is not the one this policy needs: it has no .rodata; loading a copy instead" \
	"one warning naming the pin and why"
repinned "$SOCK" "${P_SOCK%% *}" "$G_SOCK"

# --- the wrong program type, the wrong attach type ------------------------
rm "$CT_PIN_DIR/$SET" "$CT_PIN_DIR/$GET"
"$CGPROG" pin "$CT_PIN_DIR/$SET" skb sh_setsockopt &&
	"$CGPROG" pin "$CT_PIN_DIR/$GET" setsockopt sh_getsockopt
tap_ok $? "planted: a cgroup_skb sh_setsockopt as $SET, a sh_getsockopt that attaches as setsockopt as $GET"
P_SET=$(pin_show "$SET") P_GET=$(pin_show "$GET")
run mistyped
tap_is "$RC $(val setsockopt) $(val mark) $(val cc)" "0 EPERM EPERM reno" \
	"the container starts policed: SO_MARK denied both ways, reno forced" || tap_diag "$OUT"
tap_like "$(cat "$LOG")" "pinned program $SET in $CT_PIN_DIR is not the one this policy needs: it is a cgroup_skb program, not cgroup_sockopt" \
	"the wrong program type is named"
tap_like "$(cat "$LOG")" "pinned program $GET in $CT_PIN_DIR is not the one this policy needs: it does not attach as getsockopt" \
	"the wrong attach type is named"
repinned "$SET" "${P_SET%% *}" "$G_SET"
repinned "$GET" "${P_GET%% *}" "$G_GET"

# The prestart that refused them pinned the copies it loaded in their
# place, as a prestart does for a policy it finds no pin of: the next
# container attaches those very pins.
pins=$(for p in "$SOCK" "$SET" "$GET"; do pin_show "$p"; done | jq -Rsc 'split("\n") | map(select(. != "") | split(" ")[0] | tonumber) | sort')
run repinned
tap_is "$RC $(grep -c 'is not the one' "$LOG") $ATTACHED" "0 0 $pins" \
	"the next container finds the pins good and attaches them"

# --- preload replaces what fails the check --------------------------------
rm "$CT_PIN_DIR/$SOCK" "$CT_PIN_DIR/$SET" "$CT_PIN_DIR/$GET"
"$CGPROG" pin "$CT_PIN_DIR/$SOCK" sock_create sh_sock_create &&
	"$CGPROG" pin "$CT_PIN_DIR/$SET" skb sh_setsockopt &&
	"$CGPROG" pin "$CT_PIN_DIR/$GET" setsockopt sh_getsockopt
tap_ok $? "planted again: all three"
out=$("$HOOK" --config "$CFG" preload 2>/dev/null)
tap_like "$out" " 3 pinned now, 1 already pinned, " \
	"preload replaces the three planted pins and keeps the sandbox's" || tap_diag "$out"
: >"$LOG"
run preloaded
tap_is "$RC $(grep -c 'is not the one' "$LOG") $(val socket_inet6_stream)" "0 0 EPERM" \
	"after it, the pins verify again"

# --- a pinned footprint table of another shape ----------------------------
b=$(ct_bundle -c "$CFG" -a sockopt-hook.io/policy=restricted -a sockopt-hook.io/record=web \
	recorded -- sleep 600)
ID=$(ct_id recorded)
if ct_start_ok "record mode: the container starts" runc "$ID" "$b"; then
	table=$(cd "$CT_PIN_DIR-footprint" && for t in *-setsockopt; do [ -e "$t" ] && echo "$t"; done)
	[ -n "$table" ]
	tap_ok $? "its setsockopt footprint table is pinned: $table"
	rm "$CT_PIN_DIR-footprint/$table"
	read -ra KEY <<<"$(printf 'ff %.0s' $(seq 64))"
	read -ra VALUE <<<"$(printf 'aa %.0s' $(seq 256))"
	bpftool map create "$CT_PIN_DIR-footprint/$table" type hash key 64 value 256 \
		entries 128 name footprint &&
		bpftool map update pinned "$CT_PIN_DIR-footprint/$table" \
			key hex "${KEY[@]}" value hex "${VALUE[@]}"
	tap_ok $? "planted: a hash map with 64-byte keys and 256-byte values, holding one entry, in its place"
	: >"$LOG"
	ct_delete runc "$ID"
	tap_like "$(cat "$LOG")" "pinned footprint table $CT_PIN_DIR-footprint/$table is not one of ours \(it has key size 64, value size 256 and 128 entries, not 8, 32 and 128\): not read" \
		"poststop does not read it, and says why" || tap_diag "$(cat "$LOG")"
	tap_is "$(ls "$CT_PIN_DIR-footprint" 2>/dev/null)" "" "and removes the container's footprint pins"
	tap_is "$(find "$CT_TMP/recorded" -type f 2>/dev/null)" "" "no proposal was written from it"
fi

"$HOOK" --config "$CFG" preload --unpin >/dev/null 2>&1
ct_check_same "after the containers: BPF programs, hook state and cgroups are as before" "$BASE"
tap_done
