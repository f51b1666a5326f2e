#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# scripts/shellcheck.sh [FILE...]: Debian's shellcheck over every shell script of
# the repository (make shellcheck, in make check and make check-quick):
# each *.sh, and each file whose first line runs sh, bash or dash. Sourced
# files are followed (-x; .shellcheckrc: source= paths are relative to the
# script). Prints shellcheck's findings; exit 1 when there are any.
set -eu
cd "$(dirname "$0")/.."
command -v shellcheck >/dev/null ||
	{ echo "shellcheck.sh: shellcheck is not installed (scripts/deps.sh check)" >&2; exit 1; }

# The repository's files: git's list in a checkout, else the tree
# without the build directory.
files() {
	if git rev-parse --git-dir >/dev/null 2>&1; then
		git ls-files -co --exclude-standard
	else
		find . -path ./build -prune -o -path ./.git -prune -o -type f -print |
			sed 's|^\./||'
	fi
}

# is_shell FILE: a shell script by its name or its #! line.
is_shell() {
	case $1 in
	*.sh) return 0 ;;
	esac
	head -n 1 "$1" 2>/dev/null | grep -qE '^#!.*[/ ](sh|bash|dash)( |$)'
}

if [ $# -eq 0 ]; then
	list=$(files | while read -r f; do
		if [ -f "$f" ] && is_shell "$f"; then echo "$f"; fi
	done)
else
	list=$(printf '%s\n' "$@")
fi
n=$(printf '%s\n' "$list" | grep -c .)
# Two at a time: about 30 s for the whole tree on one core.
if printf '%s\n' "$list" | xargs -d '\n' -n 8 -P "${SHELLCHECK_JOBS:-2}" shellcheck -x; then
	echo "shellcheck: $n scripts, no findings"
else
	echo "shellcheck: findings above (in $n scripts)" >&2
	exit 1
fi
