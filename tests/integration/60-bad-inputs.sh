#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The bad-input corpus (tests/bad-inputs/, format in its README.md): for
# every case, `oci-sockopt-hook prestart` with the case's OCI state on
# stdin, its bundle config.json and its operator config, for a real process
# in a real cgroup of its own. Each case is one TAP test, which passes when
# the hook
#   - finishes within CASE_TIMEOUT seconds (default 20),
#   - exits non-zero, and not by a signal (status < 128),
#   - writes exactly one line on stderr, "oci-sockopt-hook: ...", that
#     contains the case's expected substring (file `expect`),
#   - attaches nothing: no sh_* program on the case's cgroup, the number of
#     loaded sh_* programs unchanged,
#   - leaves no state record and creates no cgroup.
# CASES='glob...' runs only the cases whose name matches one of the globs.
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

CORPUS=$CT_TOP/tests/bad-inputs
CASE_TIMEOUT=${CASE_TIMEOUT:-20}
PREFIX=shbad$$

tap_require_root
tap_require_cmd jq timeout flock python3 unshare
tap_require_bpf
[ -x "$HOOK" ] || tap_skip_all "hook not built: $HOOK (run make)"
CG2=$(ct_cgroup2_mount)
[ -n "$CG2" ] || tap_skip_all "no cgroup2 mount"
# For the cases' setup and run scripts, and the placeholders.
export CG2 HOOK W BUNDLE OPERATOR ID CG STATE_DIR PID DEADPID

# Other suites of ours load sh_* programs and make cgroups: run alone.
LOCK=${CT_LOCK:-/run/lock/oci-sockopt-hook-tests.lock}
if ! exec {LOCK_FD}>>"$LOCK" || ! flock -w "${LOCK_WAIT:-1800}" "$LOCK_FD"; then
	echo "Bail out! cannot take $LOCK (another test run holds it?)"
	exit 1
fi

TMP=$(mktemp -d /tmp/sockopt-hook-bad.XXXXXX) || exit 1
PIDS=()
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup()
{
	local pid dir

	for pid in "${PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	# Cgroups of ours, with whatever a case left running in them.
	for dir in "$CG2/$PREFIX"-*; do
		[ -d "$dir" ] && remove_cgroup "$dir"
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# remove_cgroup DIR: kills every process in the subtree, then removes it.
remove_cgroup()
{
	echo 1 >"$1/cgroup.kill" 2>/dev/null
	for _ in $(seq 1 50); do
		grep -q '^populated 0' "$1/cgroup.events" 2>/dev/null && break
		sleep 0.1
	done
	find "$1" -depth -type d -exec rmdir {} \; 2>/dev/null
}

sh_prog_count()
{
	timeout 20 bpftool -j prog list 2>/dev/null |
		jq '[.[]? | select((.name // "") | startswith("sh_"))] | length'
}

# What a refused case must not change. $1: the case's state dir.
snapshot()
{
	echo "sh_* programs loaded: $(sh_prog_count)"
	echo "state dir $1:"
	(cd "$1" && find . | sort)
	echo "ours in $CT_DEFAULT_STATE_DIR:"
	ct_default_state_ours "$PREFIX"
	echo "cgroups:"
	(cd "$CG2" && find . -type d | sort)
}

# same_as BEFORE STATE-DIR: up to 5 s for the kernel to free what a
# detach released; prints the difference otherwise.
same_as()
{
	local now

	for _ in $(seq 1 50); do
		now=$(snapshot "$2")
		[ "$now" = "$1" ] && return 0
		sleep 0.1
	done
	diff <(echo "$1") <(echo "$now") | sed -n '2,$p'
	return 1
}

# subst FILE...: replaces the @NAME@ placeholders of the corpus format in
# place, from the environment.
subst()
{
	python3 - "$@" <<'EOF'
import os, sys
names = ("PID", "DEADPID", "ID", "BUNDLE", "OPERATOR", "W", "CG", "CG2")
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        data = f.read()
    for name in names:
        data = data.replace(b"@%s@" % name.encode(), os.environ[name].encode())
    with open(path, "wb") as f:
        f.write(data)
EOF
}

# A pid that existed and is gone (and is not reused this soon).
dead_pid()
{
	local pid

	sleep 0 &
	pid=$!
	wait "$pid"
	echo "$pid"
}

# run_case DIR: one TAP test.
run_case()
{
	local dir=$1 name rc why=() err lines want before diff start secs args=()
	local sleeper

	name=$(basename "$dir")
	W=$TMP/$name
	BUNDLE=$W/bundle OPERATOR=$W/operator.json ID=$PREFIX-${name%%-*}
	CG=$CG2/$PREFIX-${name%%-*} STATE_DIR=$W/state
	mkdir -p "$BUNDLE" "$STATE_DIR"

	# The stand-in container: a live process alone in its own cgroup.
	mkdir "$CG" || { tap_ok 1 "$name: cannot create $CG"; return; }
	sleep 600 &
	sleeper=$!
	PIDS+=("$sleeper")
	echo "$sleeper" >"$CG/cgroup.procs"
	PID=$sleeper
	DEADPID=$(dead_pid)

	for f in state.json config.json operator.json args; do
		if [ -e "$dir/$f" ]; then
			cp "$dir/$f" "$W/$f"
		else
			cp "$CORPUS/defaults/$f" "$W/$f"
		fi
	done
	cp "$dir/expect" "$W/expect"
	subst "$W"/{state.json,config.json,operator.json,args,expect}
	mv "$W/config.json" "$BUNDLE/config.json"
	want=$(cat "$W/expect")
	if [ -f "$dir/setup" ]; then
		(cd "$W" && bash "$dir/setup") >"$W/setup.log" 2>&1
		rc=$?
		if [ "$rc" = 77 ]; then
			tap_skip "$name" "$(tail -n 1 "$W/setup.log")"
			teardown_case "$sleeper"
			return
		elif [ "$rc" != 0 ]; then
			tap_ok 1 "$name: setup failed (exit $rc)"
			tap_diag "$(cat "$W/setup.log")"
			teardown_case "$sleeper"
			return
		fi
	fi
	mapfile -t args <"$W/args"

	before=$(snapshot "$STATE_DIR")
	start=$SECONDS
	# argv[0] as runtimes pass it, so that getopt's messages carry it too.
	(
		cd "$W" || exit 1
		# shellcheck disable=SC2016 # expanded by that bash
		runner=(bash -c 'exec -a oci-sockopt-hook "$0" "$@"')
		[ -f "$dir/run" ] && runner=(bash "$dir/run")
		exec env -u OCI_SOCKOPT_HOOK_CONFIG \
			OCI_SOCKOPT_HOOK_STATE_DIR="$STATE_DIR" \
			timeout -k 5 "$CASE_TIMEOUT" "${runner[@]}" "$HOOK" "${args[@]}" \
			<"$W/state.json" >"$W/stdout" 2>"$W/stderr"
	)
	rc=$?
	secs=$((SECONDS - start))

	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		why+=("did not finish within ${CASE_TIMEOUT}s (exit $rc)")
	elif [ "$rc" = 0 ]; then
		why+=("exit status 0")
	elif [ "$rc" -ge 128 ]; then
		why+=("killed by signal $((rc - 128))")
	fi
	err=$(cat "$W/stderr")
	lines=$(tr -cd '\n' <"$W/stderr" | wc -c)
	if [ "$lines" != 1 ] || [ -n "$(tail -c 1 "$W/stderr")" ]; then
		why+=("stderr is not exactly one line ($lines newlines)")
	elif [[ $err != "oci-sockopt-hook: "* ]]; then
		why+=("stderr does not start with 'oci-sockopt-hook: '")
	fi
	[[ $err == *"$want"* ]] || why+=("stderr lacks: $want")
	[ -z "$(ct_our_progs "$CG")" ] ||
		why+=("sh_* programs attached to the case's cgroup")
	if ! diff=$(same_as "$before" "$STATE_DIR"); then
		why+=("programs, state or cgroups changed: $diff")
	fi

	if [ ${#why[@]} = 0 ]; then
		tap_ok 0 "$name (exit $rc, ${secs}s)"
		tap_diag "  $(head -c 300 "$W/stderr")"
	else
		tap_ok 1 "$name (exit $rc, ${secs}s)"
		tap_diag "${why[@]/#/  }" "  stderr: $(head -c 2000 "$W/stderr")"
		# Whatever it attached and recorded goes, before the next case.
		OCI_SOCKOPT_HOOK_STATE_DIR=$STATE_DIR timeout 20 "$HOOK" \
			--config "$OPERATOR" poststop <"$W/state.json" >/dev/null 2>&1
	fi
	teardown_case "$sleeper"
}

teardown_case()
{
	local keep=() p

	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	for p in "${PIDS[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	PIDS=("${keep[@]}")
	# A case's setup may have left processes there (280's zombie parent).
	[ -d "$CG" ] && remove_cgroup "$CG"
	rm -rf "$W"
}

selected()
{
	local pat

	[ -z "${CASES:-}" ] && return 0
	for pat in $CASES; do
		# shellcheck disable=SC2053
		[[ $1 == $pat ]] && return 0
	done
	return 1
}

# The control: the defaults themselves attach, so refusals below are the
# hook's doing and not the harness's.
control()
{
	local out

	W=$TMP/control
	BUNDLE=$W/bundle OPERATOR=$W/operator.json ID=$PREFIX-control
	CG=$CG2/$PREFIX-control STATE_DIR=$W/state DEADPID=1
	mkdir -p "$BUNDLE" "$STATE_DIR" "$CG"
	sleep 600 &
	PID=$!
	PIDS+=("$PID")
	echo "$PID" >"$CG/cgroup.procs"
	for f in state.json config.json operator.json args; do
		cp "$CORPUS/defaults/$f" "$W/$f"
	done
	subst "$W"/{state.json,config.json,operator.json,args}
	mv "$W/config.json" "$BUNDLE/config.json"
	mapfile -t args <"$W/args"
	out=$(OCI_SOCKOPT_HOOK_STATE_DIR=$STATE_DIR timeout 20 "$HOOK" "${args[@]}" \
		<"$W/state.json" 2>&1)
	tap_ok $? "control: the default state, bundle and operator config attach" ||
		tap_diag "$out"
	tap_is "$(ct_our_progs "$CG" | tr '\n' ' ')" \
		"cgroup_getsockopt sh_getsockopt cgroup_inet_sock_create sh_sock_create cgroup_setsockopt sh_setsockopt " \
		"control: the restricted policy's programs are on the process's cgroup"
	# As with a runtime, poststop comes once the container's init is gone:
	# a running container keeps its policy.
	kill -KILL "$PID" && wait "$PID" 2>/dev/null
	OCI_SOCKOPT_HOOK_STATE_DIR=$STATE_DIR timeout 20 "$HOOK" "${args[@]/prestart/poststop}" \
		<"$W/state.json" >/dev/null 2>&1
	tap_is "$(ct_our_progs "$CG")" "" "control: poststop detaches them"
	teardown_case "$PID"
}

control
n=0
for dir in "$CORPUS"/cases/*/; do
	dir=${dir%/}
	selected "$(basename "$dir")" || continue
	run_case "$dir"
	n=$((n + 1))
done
tap_diag "report: bad-input corpus: $n cases"
tap_done
