# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh disable=SC3043
#
# The TAP producer of every shell test: the bash suites and the VM guest's
# busybox sh scripts (tests/vm/guest/). Plain sh with `local`, except
# tap_like, which needs bash. Source it, then:
#
#   tap_require_root; tap_require_bpf; tap_require_cmd runc
#   tap_plan 3                      (optional; tap_done prints it otherwise)
#   tap_ok "$rc" "description"      (rc 0 is a pass)
#   tap_check "description" cmd...  (pass when cmd exits 0)
#   tap_is "$got" "$want" "description"
#   tap_like "$text" "regex" "description"
#   tap_skip "description" "reason"
#   tap_diag "text..."              (comment lines on stdout)
#   tap_relay PREFIX RC <<<"$out"   (the TAP lines of another program)
#   tap_done                        (exits 0 if all passed, 1 otherwise
#                                    or when no check ran)
#
# tap_skip_all "reason" prints "1..0 # SKIP reason" and exits 77;
# tap_bail "reason" prints "Bail out! reason" and exits 1.

TAP_COUNT=0
TAP_FAILED=0
TAP_PLANNED=

tap_plan()
{
	TAP_PLANNED=$1
	echo "1..$1"
}

# Each argument is one or more lines of comment.
tap_diag()
{
	local arg

	for arg in "$@"; do
		printf '%s\n' "$arg" | sed 's/^/# /'
	done
}

# tap_ok RC DESCRIPTION: RC 0 passes. A DESCRIPTION ending in
# "# TODO reason" marks a known failure, which does not fail the file.
tap_ok()
{
	TAP_COUNT=$((TAP_COUNT + 1))
	if [ "$1" = 0 ]; then
		echo "ok $TAP_COUNT - $2"
		return 0
	fi
	case $2 in
	*"# TODO"*) ;;
	*) TAP_FAILED=$((TAP_FAILED + 1)) ;;
	esac
	echo "not ok $TAP_COUNT - $2"
	return 1
}

tap_check()
{
	local desc="$1"

	shift
	"$@"
	tap_ok $? "$desc"
}

tap_is()
{
	if [ "$1" = "$2" ]; then
		tap_ok 0 "$3"
		return 0
	fi
	tap_ok 1 "$3"
	tap_diag "got:  '$1'" "want: '$2'"
	return 1
}

# tap_like TEXT REGEX DESCRIPTION: bash's =~ (an extended regex against
# the whole text, newlines included).
# shellcheck disable=SC3010
tap_like()
{
	if [[ $1 =~ $2 ]]; then
		tap_ok 0 "$3"
		return 0
	fi
	tap_ok 1 "$3"
	tap_diag "text does not match /$2/:"
	tap_diag "$1"
	return 1
}

# tap_relay PREFIX RC: re-emits the "ok"/"not ok" lines of a program's TAP
# output (stdin; numbered or not) as our own, prefixed, its "#" lines as
# comments, and any other line as a comment naming PREFIX. RC is the
# program's exit status: a program that failed without a "not ok" line,
# or printed no result at all, is one more failure.
tap_relay()
{
	local prefix="$1" rc="$2" line results=0 failed=0

	while IFS= read -r line; do
		case $line in
		"ok "*)
			results=$((results + 1))
			tap_ok 0 "$prefix: $(tap_description "$line")"
			;;
		"not ok "*)
			results=$((results + 1)) failed=$((failed + 1))
			tap_ok 1 "$prefix: $(tap_description "$line")"
			;;
		"#"*) echo "$line" ;;
		"1.."*) ;;
		*) [ -n "$line" ] && echo "# $prefix: $line" ;;
		esac
	done
	if [ "$results" = 0 ] || { [ "$rc" != 0 ] && [ "$failed" = 0 ]; }; then
		tap_ok 1 "$prefix: ran to completion (exit $rc, $results result(s))"
	fi
}

# tap_description LINE: what follows "ok N - " or "not ok - " in LINE.
tap_description()
{
	local d="${1#not }"

	d=${d#ok }
	d=${d#"${d%%[!0-9]*}"}
	d=${d# }
	printf '%s\n' "${d#- }"
}

tap_skip()
{
	TAP_COUNT=$((TAP_COUNT + 1))
	echo "ok $TAP_COUNT - $1 # SKIP $2"
}

tap_skip_all()
{
	echo "1..0 # SKIP $*"
	exit 77
}

tap_bail()
{
	echo "Bail out! $*"
	exit 1
}

tap_require_root()
{
	[ "$(id -u)" = 0 ] || tap_skip_all "needs root"
}

tap_require_cmd()
{
	local cmd

	for cmd in "$@"; do
		command -v "$cmd" >/dev/null 2>&1 || tap_skip_all "$cmd not installed"
	done
}

tap_require_bpf()
{
	tap_require_cmd bpftool
	timeout 20 bpftool prog list >/dev/null 2>&1 ||
		tap_skip_all "BPF unavailable ('bpftool prog list' fails)"
}

# A file that ran no check at all failed: it never got as far as its
# first claim (a skip is a check; tap_skip_all is the way to run none).
tap_done()
{
	if [ "$TAP_COUNT" = 0 ]; then
		echo "1..0"
		tap_diag "no check ran"
		exit 1
	fi
	if [ -z "$TAP_PLANNED" ]; then
		echo "1..$TAP_COUNT"
	elif [ "$TAP_PLANNED" != "$TAP_COUNT" ]; then
		tap_diag "planned $TAP_PLANNED tests but ran $TAP_COUNT"
		exit 1
	fi
	if [ "$TAP_FAILED" -gt 0 ]; then
		tap_diag "failed $TAP_FAILED of $TAP_COUNT"
		exit 1
	fi
	exit 0
}
