# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# What the test suites, tests/run.sh and the benchmarks share about this
# host: the source tree and build directory, the machine-wide lock, the
# cgroup2 mount, the loaded BPF programs.
#
# The lock serializes everything that snapshots the host's BPF programs and
# cgroups, or rewrites files in the build directory (make install): a whole
# tests/run.sh, a suite run alone, bench/run.sh. Whoever is outermost takes
# it; its children inherit the open lock file (the fd is named in
# HOST_LOCK_FD), and flock on that same open file succeeds at once, so a
# suite under tests/run.sh, or tests/run.sh under 80-sanitized-hook.sh,
# does not wait for its parent. TESTS_LOCK names another lock file,
# TESTS_LOCK_WAIT the seconds to wait for it (default 1800).

HOST_LOCK=${TESTS_LOCK:-/run/lock/oci-sockopt-hook-tests.lock}

# The source tree, and the build directory (BUILD, relative to the tree
# unless absolute; default build) as an absolute path.
TESTS_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TESTS_BUILD=${BUILD:-build}
[[ $TESTS_BUILD == /* ]] || TESTS_BUILD=$TESTS_TOP/$TESTS_BUILD

# host_lock: takes the lock, or finds it held for us by a parent. Fails
# after TESTS_LOCK_WAIT seconds, with a line on stderr.
host_lock()
{
	local fd=${HOST_LOCK_FD:-} wait=${TESTS_LOCK_WAIT:-1800}

	if [[ $fd =~ ^[0-9]+$ ]] &&
		[ "$(readlink "/proc/self/fd/$fd" 2>/dev/null)" = "$(readlink -f "$HOST_LOCK")" ] &&
		flock -n "$fd"; then
		return 0
	fi
	# flock needs an open file, not a writable one (the file may be root's).
	# The braces keep 2>/dev/null to the open: on a bare exec it would
	# stay, and every later message of the caller would be lost.
	{ exec {fd}>>"$HOST_LOCK"; } 2>/dev/null || exec {fd}<"$HOST_LOCK" || return 1
	if ! flock -n "$fd"; then
		local since=$SECONDS
		echo "waiting for $HOST_LOCK (a test run or benchmark holds it)" >&2
		if ! flock -w "$wait" "$fd"; then
			echo "cannot take $HOST_LOCK within ${wait}s" >&2
			exec {fd}>&-
			return 1
		fi
		# what a timing of the run must leave out
		echo "took $HOST_LOCK after waiting $((SECONDS - since))s" >&2
	fi
	export HOST_LOCK_FD=$fd
}

# host_cgroup2_mount: where the cgroup2 hierarchy is mounted ("" if not).
host_cgroup2_mount()
{
	awk '{ for (i = 7; i < NF; i++) if ($i == "-") break;
	       if ($(i + 1) == "cgroup2") { print $5; exit } }' /proc/self/mountinfo
}

# host_prog_count [NAME-REGEX]: how many BPF programs are loaded (whose
# name matches NAME-REGEX, if given).
# shellcheck disable=SC2120
host_prog_count()
{
	timeout 20 bpftool -j prog show 2>/dev/null |
		jq --arg re "${1:-}" '[.[]? | select((.name // "") | test($re))] | length'
}

# host_prog_ids: the ids of the loaded BPF programs, sorted, on one line
# (a snapshot by ids: one program leaked while another is freed is a
# difference, as it would not be in a count).
host_prog_ids()
{
	timeout 20 bpftool -j prog show 2>/dev/null |
		jq -r '[.[]?.id] | sort | map(tostring) | join(" ")'
}

# host_qemu_suite SCRIPT PREFIX REPORT-RE: run a QEMU suite (tests/vm,
# tests/node) on this tree's build directory, show its output, report its
# "# figures" block (which ends at its "PREFIX:" lines) and the lines
# matching REPORT-RE, and when it skips, print the plan line that carries
# the reason (tests/run.sh shows a skipped suite's reason from it).
# Returns the script's status.
host_qemu_suite()
{
	local out rc

	out=$("$TESTS_TOP/$1" -B "$TESTS_BUILD" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	sed -n "/^# figures/,/^$2:/{/^#/s/^# */# report: /p}" <<<"$out"
	grep "$3" <<<"$out" | sed 's/^/# report: /'
	[ "$rc" = 77 ] &&
		echo "1..0 # SKIP $(sed -n 's/^[a-z-]*: SKIP: //p' <<<"$out" | head -n 1)"
	return $rc
}
