#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The bad-input corpus (tests/bad-inputs/*.cases, one file per family of
# cases, format in its README.md): for
# every case, `oci-sockopt-hook prestart` with the case's OCI state on
# stdin, its bundle config.json and its operator config, for a real process
# in a real cgroup of its own. Each case is one TAP test, which passes when
# the hook
#   - finishes within CASE_TIMEOUT seconds (default 20),
#   - exits non-zero, and not by a signal (status < 128),
#   - writes exactly one line on stderr, "oci-sockopt-hook: ...", that
#     contains the case's expected substring (file `expect`),
#   - attaches nothing: no sh_* program on the case's cgroup, the number of
#     loaded BPF programs unchanged,
#   - leaves no state record and creates no cgroup (ct_snapshot).
# CASES='glob...' runs only the cases whose name matches one of the globs.
#
# Modules: `oci.c`, `strictjson.c`, `config.c`, `policy.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

CORPUS=$CT_TOP/tests/bad-inputs
CASE_TIMEOUT=${CASE_TIMEOUT:-20}

ct_require_host
tap_require_cmd python3 unshare
# No container runtime: each case's container is a process of ours in a
# cgroup of ours, $CT_CG2/$CT_PREFIX-NNN.
ct_init_host
CG2=$CT_CG2
# Each case a directory NAME/ of its files, as the runner reads them.
CASEDIR=$CT_TMP/cases
out=$("$CT_TOP/tests/lib/cases.py" unpack "$CORPUS" "$CASEDIR" 2>&1) ||
	tap_bail "the corpus does not read: $out"
# For the cases' setup and run scripts, and the placeholders.
export CG2 HOOK W BUNDLE OPERATOR ID CG STATE_DIR PID DEADPID

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

	name=$(basename "$dir")
	W=$CT_TMP/$name
	BUNDLE=$W/bundle OPERATOR=$W/operator.json ID=$(ct_id "${name%%-*}")
	CG=$CG2/$ID STATE_DIR=$W/state
	mkdir -p "$BUNDLE" "$STATE_DIR"

	# The stand-in container: a live process alone in its own cgroup.
	ct_sleeper "$CG" || { tap_ok 1 "$name: cannot put a process in $CG"; return; }
	PID=$CT_SLEEPER
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
			teardown_case "$PID"
			return
		elif [ "$rc" != 0 ]; then
			tap_ok 1 "$name: setup failed (exit $rc)"
			tap_diag "$(cat "$W/setup.log")"
			teardown_case "$PID"
			return
		fi
	fi
	mapfile -t args <"$W/args"

	before=$(ct_snapshot -d "$STATE_DIR")
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
	if ! diff=$(ct_same_as "$before" -d "$STATE_DIR"); then
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
	teardown_case "$PID"
}

# teardown_case PID: ends the case's stand-in container.
teardown_case()
{
	ct_kill "$1"
	# A case's setup may have left processes there (280's zombie parent).
	[ -d "$CG" ] && ct_remove_cgroup "$CG"
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

	W=$CT_TMP/control
	BUNDLE=$W/bundle OPERATOR=$W/operator.json ID=$(ct_id control)
	CG=$CG2/$ID STATE_DIR=$W/state DEADPID=1
	mkdir -p "$BUNDLE" "$STATE_DIR"
	ct_sleeper "$CG" || tap_bail "cannot put a process in $CG"
	PID=$CT_SLEEPER
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
	ct_kill "$PID"
	OCI_SOCKOPT_HOOK_STATE_DIR=$STATE_DIR timeout 20 "$HOOK" "${args[@]/prestart/poststop}" \
		<"$W/state.json" >/dev/null 2>&1
	tap_is "$(ct_our_progs "$CG")" "" "control: poststop detaches them"
	teardown_case "$PID"
}

# The corpus reader refuses what would lose a case or its assertion.
# reader_refuses DESC WANT TEXT: a .cases file TEXT is refused, naming WANT.
reader_refuses()
{
	local d=$CT_TMP/reader out

	rm -rf "$d" && mkdir -p "$d/corpus" && printf '%s' "$3" >"$d/corpus/x.cases"
	out=$("$CT_TOP/tests/lib/cases.py" unpack "$d/corpus" "$d/out" 2>&1)
	[ $? = 1 ] && [[ $out == *"$2"* ]]
	tap_ok $? "corpus reader: $1" || tap_diag "got: $out"
}
reader_refuses "a case without its expect is refused" "case 001-x has no expect" \
	$'=== 001-x\n--- state.json\n{}\n'
reader_refuses "a file it does not know is refused" "want --- one of expect" \
	$'=== 001-x\n--- expect\nx\n--- stat.json\n{}\n'
reader_refuses "a case named twice is refused" "case 001-x is also in" \
	$'=== 001-x\n--- expect\nx\n\n=== 001-x\n--- expect\ny\n'
reader_refuses "a file given twice in a case is refused" "state.json twice in 001-x" \
	$'=== 001-x\n--- expect\nx\n--- state.json\n{}\n--- state.json\n[]\n'
reader_refuses "an expect of two lines is refused" "its expect is not one line" \
	$'=== 001-x\n--- expect\nx\ny\n'
reader_refuses "text outside a case's files is refused" "text outside a file" \
	$'{}\n=== 001-x\n--- expect\nx\n'

control
n=0
for dir in "$CASEDIR"/*/; do
	dir=${dir%/}
	selected "$(basename "$dir")" || continue
	run_case "$dir"
	n=$((n + 1))
done
tap_diag "report: bad-input corpus: $n cases"
tap_done
