#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What root trusts, under runc:
#  - the operator config: world-writable, in a group-writable directory, or
#    owned by another user, it is refused with one line that names the
#    path, its owner and its mode (prestart, validate, explain); root's
#    0644 one works, also in a sticky root directory; poststop still
#    releases the container and exits 0;
#  - log_file: a symlink is not followed, a FIFO does not block the hook,
#    a regular file gets the lines;
#  - the state directory: writable by others, or someone else's, it is
#    refused (prestart, status, gc), poststop exits 0;
#  - records read back: one whose cgroup path leads out of the cgroup2
#    mount, whose id climbs out of the state directory, or that claims a
#    cgroup the hook cannot have made, is skipped with a warning by
#    poststop, gc and status, and nothing it names is removed.
#
# Modules: `trust.c`, `state.c`, `oci.c`
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
T=$CT_TMP
BASE=$(ct_snapshot)
P=sockopt-hook.io/policy

# mark_run NAME CONFIG: a runc container with policy "restricted" that
# tries setsockopt(SO_MARK); sets CT_OUT, CT_RC.
mark_run()
{
	local b

	b=$(ct_bundle -c "$2" -a "$P=restricted" "$1" -- sockcheck set-mark 5)
	ct_run runc "$(ct_id "$1")" "$b"
}

# one_line TEXT REGEX DESC: TEXT is one line "oci-sockopt-hook: ..."
# matching REGEX.
one_line()
{
	[ "$(grep -c . <<<"$1")" = 1 ] && [[ $1 == "oci-sockopt-hook: "* ]] &&
		[[ $1 =~ $2 ]]
	tap_ok $? "$3" || tap_diag "got: $1" "want: /$2/"
}

# --- the operator config -------------------------------------------------

GOOD=$(ct_config good)
WW=$(ct_config world-writable) && chmod 0666 "$WW"
b=$(ct_bundle -c "$WW" -a "$P=restricted" ww -- sockcheck all)
refused runc ww "$b" "operator config $WW \(owner uid 0, mode 0666\) is writable by group or others: refusing it"

mkdir "$T/gw" && chmod 0775 "$T/gw" && cp "$GOOD" "$T/gw/config.json"
b=$(ct_bundle -c "$T/gw/config.json" -a "$P=restricted" gw -- sockcheck all)
refused runc gw-dir "$b" \
	"operator config $T/gw/config.json: its directory $T/gw \(owner uid 0, mode 0775\) is writable by group or others and not sticky"

NOBODY=$(ct_config nobody) && chown 65534 "$NOBODY"
b=$(ct_bundle -c "$NOBODY" -a "$P=restricted" nobody -- sockcheck all)
refused runc nobody "$b" "operator config $NOBODY \(owner uid 65534, mode 0644\) is owned by neither root nor the caller"

out=$("$HOOK" validate "$WW" 2>&1)
rc=$?
[ "$rc" = 1 ]
tap_ok $? "validate, world-writable config: exit 1 (got $rc)"
one_line "$out" "operator config $WW \(owner uid 0, mode 0666\)" \
	"validate, world-writable config: one line naming path, owner and mode"
out=$("$HOOK" --config "$WW" explain --bundle "$b" 2>&1 >/dev/null)
rc=$?
[ "$rc" = 1 ]
tap_ok $? "explain, world-writable config: exit 1 (got $rc)"
one_line "$out" "operator config $WW \(owner uid 0, mode 0666\)" \
	"explain, world-writable config: one line naming path, owner and mode"

mark_run good "$GOOD"
tap_is "$(cat "$CT_OUT")" "setsockopt=EPERM" \
	"root's 0644 config in a 0755 directory: the policy holds (SO_MARK gives EPERM)" ||
	tap_diag "exit $CT_RC" "$(cat "$CT_ERR")"
mkdir "$T/sticky" && chmod 1777 "$T/sticky" && cp "$GOOD" "$T/sticky/config.json"
mark_run sticky "$T/sticky/config.json"
tap_is "$(cat "$CT_OUT")" "setsockopt=EPERM" \
	"root's 0644 config in a sticky root directory (as /tmp): the policy holds" ||
	tap_diag "exit $CT_RC" "$(cat "$CT_ERR")"

# poststop with a config it refuses still releases the container.
b=$(ct_bundle -c "$GOOD" -P -a "$P=restricted" release -- sleep 60)
ct_start runc "$(ct_id release)" "$b"
CG=$(ct_cgroup_of "$CT_PID")
[ -n "$(ct_our_progs "$CG")" ] && [ -f "$CT_STATE_DIR/$(ct_id release).json" ]
tap_ok $? "a policed container to release: programs attached, record written"
state=$(runc state "$(ct_id release)" | jq -c '.status = "stopped"')
# As a runtime does, poststop comes after the container's processes are
# gone (the hook keeps the policy of a container that still runs).
runc kill "$(ct_id release)" KILL
for _ in $(seq 50); do
	[ "$(runc state "$(ct_id release)" | jq -r .status)" = stopped ] && break
	sleep 0.1
done
out=$(OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR "$HOOK" --config "$WW" poststop \
	<<<"$state" 2>&1)
rc=$?
tap_is "$rc" 0 "poststop with a world-writable config: exit 0"
[[ $out == *"operator config $WW (owner uid 0, mode 0666)"* ]] &&
	[ ! -e "$CT_STATE_DIR/$(ct_id release).json" ] && [ -z "$(ct_our_progs "$CG")" ]
tap_ok $? "poststop with a world-writable config: says so, and still detaches and drops the record" ||
	tap_diag "$out"
ct_delete runc "$(ct_id release)"
ct_check_same "after the release: BPF programs, hook state and cgroups are as before" "$BASE"

# --- log_file ------------------------------------------------------------

echo keep >"$T/victim.log"
ln -s "$T/victim.log" "$T/link.log"
LINKCFG=$(ct_config loglink ". + {log_file: \"$T/link.log\", log_level: \"debug\"}")
mark_run loglink "$LINKCFG"
[ "$(cat "$CT_OUT")" = "setsockopt=EPERM" ] && [ "$(cat "$T/victim.log")" = keep ]
tap_ok $? "log_file is a symlink: not followed (its target is unchanged), the container runs policed" ||
	tap_diag "exit $CT_RC" "$(cat "$CT_ERR")" "victim: $(head -c 300 "$T/victim.log")"

mkfifo "$T/fifo.log"
FIFOCFG=$(ct_config logfifo ". + {log_file: \"$T/fifo.log\"}")
start=$SECONDS
mark_run logfifo "$FIFOCFG"
[ "$(cat "$CT_OUT")" = "setsockopt=EPERM" ] && [ $((SECONDS - start)) -lt 20 ]
tap_ok $? "log_file is a FIFO without a reader: the hook does not block, the container runs policed" ||
	tap_diag "exit $CT_RC after $((SECONDS - start)) s" "$(cat "$CT_ERR")"

REGCFG=$(ct_config logfile ". + {log_file: \"$T/hook.log\"}")
mark_run logfile "$REGCFG"
grep -q "container $(ct_id logfile): attached" "$T/hook.log"
tap_ok $? "log_file is a regular file: the hook's lines are there" ||
	tap_diag "$(cat "$T/hook.log" 2>&1)"

# --- the state directory -------------------------------------------------

chmod 0777 "$CT_STATE_DIR"
b=$(ct_bundle -c "$GOOD" -a "$P=restricted" state-ww -- sockcheck all)
refused runc state-ww "$b" \
	"state directory $CT_STATE_DIR \(owner uid 0, mode 0777\) is writable by group or others: refusing it"
for cmd in status gc; do
	out=$(OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR "$HOOK" "$cmd" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" = 1 ]
	tap_ok $? "$cmd, world-writable state dir: exit 1 (got $rc)"
	one_line "$out" "state directory $CT_STATE_DIR \(owner uid 0, mode 0777\)" \
		"$cmd, world-writable state dir: one line naming path, owner and mode"
done
out=$(OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR "$HOOK" poststop \
	<<<'{"id": "x", "status": "stopped"}' 2>&1)
tap_is "$?" 0 "poststop, world-writable state dir: exit 0"
one_line "$out" "state directory $CT_STATE_DIR" "poststop, world-writable state dir: one line"
chmod 0755 "$CT_STATE_DIR" && chown 65534 "$CT_STATE_DIR"
b=$(ct_bundle -c "$GOOD" -a "$P=restricted" state-nobody -- sockcheck all)
refused runc state-nobody "$b" \
	"state directory $CT_STATE_DIR \(owner uid 65534, mode 0755\) is not owned by the caller"
chown 0 "$CT_STATE_DIR"

# --- records read back ---------------------------------------------------

R=$T/records
mkdir -m 0700 "$R"
inode() { stat -c %i "$1"; }
dead=$(sh -c 'echo $$')
# From the cgroup2 mount up to /.
# shellcheck disable=SC2001 # a regex: each path component becomes ..
up=$(sed 's|/[^/]*|/..|g' <<<"$CT_CG2")

# record FILE-STEM ID CGROUP CGROUP-PATH CGROUP-ID CREATED: a record as
# the hook writes it (the trusted attribute of an empty file), by a root
# with CAP_SYS_ADMIN: what the checks on what it names must stop.
record()
{
	jq -n --arg id "$2" --arg cg "$3" --arg abs "$4" --argjson cgid "$5" \
		--argjson created "$6" --argjson pid "$dead" '{id: $id, pid: $pid,
		pid_start: 1, cgroup: $cg, cgroup_path: $abs, cgroup_id: $cgid,
		cgroup_created: $created, parent_cgroup: "/", policy: "restricted",
		policy_source: "defaults.policy", bypass_prot_mem: false,
		bypass_active: false, bypass_source: "defaults.bypass_prot_mem",
		programs: []}' | ct_write_record "$R/$1.json"
}

hook_r() { OCI_SOCKOPT_HOOK_STATE_DIR=$R "$HOOK" "$@"; }

# 1. cgroup "/../../../..$T/victim": poststop would rmdir it.
mkdir "$T/victim"
record evil1 evil1 "$up$T/victim" "$T/victim" "$(inode "$T/victim")" true
out=$(hook_r poststop <<<'{"id": "evil1", "status": "stopped"}' 2>&1)
rc=$?
[ "$rc" = 0 ] && [ -d "$T/victim" ]
tap_ok $? "poststop, a record whose cgroup climbs out to $T/victim: exit 0, $T/victim is still there" ||
	tap_diag "exit $rc" "$out"
tap_like "$out" "ignoring state record 'evil1.json' in $R: its cgroup is not a clean absolute path" \
	"poststop says which record it ignores, and why"

# 2. id "../victim2": gc of a stale record would unlink ../victim2.json.
echo keep >"$T/victim2.json"
record evil2 ../victim2 /gone-sht "$CT_CG2/gone-sht" 1 false
out=$(hook_r gc 2>&1)
rc=$?
[ "$rc" = 0 ] && [ -f "$T/victim2.json" ] && [ -f "$R/evil2.json" ]
tap_ok $? "gc, a record whose id is ../victim2: exit 0, $T/victim2.json and the record stay" ||
	tap_diag "exit $rc" "$out"
[[ $out == *"ignoring state record 'evil2.json' in $R: its id is not a valid container id"* ]]
tap_ok $? "gc warns about the record it ignores" || tap_diag "$out"

# 3. A cgroup the hook cannot have made (no oci-sockopt-hook- prefix),
#    empty, its init dead: gc would remove it as the hook's own.
VICTIM_CG=$CT_CG2/$CT_PREFIX-victim
mkdir "$VICTIM_CG"
rm -f "$R/evil2.json"
record evil3 evil3 "/$CT_PREFIX-victim" "$VICTIM_CG" "$(inode "$VICTIM_CG")" true
out=$(hook_r gc 2>&1)
[ -d "$VICTIM_CG" ]
tap_ok $? "gc, a record that claims a cgroup not made by the hook: the cgroup stays" ||
	tap_diag "$out"
tap_like "$out" "ignoring state record 'evil3.json' .*cgroup the hook cannot have made" \
	"gc says why it ignores that record"
rmdir "$VICTIM_CG"

# 4. status lists no invalid record, with a warning for each.
record evil4 other "/x" "$CT_CG2/x" 1 false
out=$(hook_r status 2>"$T/status.err")
[ "$out" = "no containers are managed by the hook" ] &&
	records=("$R"/*.json) &&
	[ "$(grep -c 'warning: ignoring state record' "$T/status.err")" = "${#records[@]}" ]
tap_ok $? "status: invalid records are not listed, one warning each" ||
	tap_diag "$out" "$(cat "$T/status.err")"

ct_check_same "at the end: BPF programs, hook state and cgroups are as before" "$BASE"
tap_done
