#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Every length for every option the hook's table knows, generated from that
# table by tests/attacks/lengths.c, under real runc:
#   1. in an unpoliced container, lengths calibrate finds for each option a
#      value lo and a larger hi the kernel keeps apart, and records what
#      getsockopt returns for a real socket set to lo (the plan);
#   2. three policed containers, with policies made here from the plan:
#      clamp (max lo), force (lo) and getsockopt force (lo's read-back);
#      in each, lengths tries hi at 1, 2, 3, 4, 8, page+1 and 8192 bytes
#      (getsockopt: 0 to page+1 bytes) and asserts what the kernel holds.
# SOL_IP options run on AF_INET6 sockets as well.
#
# Modules: `names.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

LENGTHS=$CT_BUILD/tests/attacks/lengths
[ -x "$LENGTHS" ] || tap_skip_all "$LENGTHS not built (run make test-progs)"
ct_setup runc
BASE=$(ct_snapshot)
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
PLAN=$CT_ROOTFS/plan

# run NAME POLICY -- ARGS...: runs ARGS in a new container under POLICY
# ("" for none) and sets OUT and RC.
run()
{
	local name=$1 policy=$2 b

	shift 3
	if [ -n "$policy" ]; then
		b=$(ct_bundle -c "$CFG" -a "sockopt-hook.io/policy=$policy" "$name" -- "$@")
	else
		b=$(ct_bundle "$name" -- "$@")
	fi || return 1
	ct_run runc "$(ct_id "$name")" "$b"
	OUT=$(cat "$CT_OUT" "$CT_ERR")
	RC=$CT_RC
}

run calibrate "" -- lengths calibrate
tap_ok "$RC" "calibrate: lengths runs in an unpoliced container" || tap_diag "$OUT"
grep -E '^[ISG] ' <<<"$OUT" >"$PLAN"
tap_diag "$(grep '^#' <<<"$OUT")"
n=$(grep -c '^[IS] ' "$PLAN")
[ "$n" -ge 80 ]
tap_ok $? "calibrate: $n (option, socket) pairs to test, at least 80" ||
	tap_diag "$OUT"

# The three policies, one rule per (level, option) of the plan.
# shellcheck disable=SC2016 # jq program
CFG=$(ct_config lengths "$(cat <<'JQ'
	def rules($plan; $kind; f):
		[$plan | split("\n")[] | select(startswith($kind + " ")) | split(" ")]
		| unique_by(.[3] + " " + .[4]) | map(f);
	def rule(l): {level: (l[3] | tonumber), option: (l[4] | tonumber)};
	.annotations.allow_policies += ["lengths-clamp", "lengths-force", "lengths-getforce"] |
	.policies["lengths-clamp"].setsockopt =
		rules($plan; "I"; rule(.) + {action: "clamp", max: (.[6] | tonumber)}) |
	.policies["lengths-force"].setsockopt =
		rules($plan; "I"; rule(.) + {action: "force", value: (.[6] | tonumber)}) +
		rules($plan; "S"; rule(.) + {action: "force", value: .[6]}) |
	.policies["lengths-getforce"].getsockopt =
		rules($plan; "I"; select(. as $l | $plan | contains("G \($l[1]) \($l[2]) \($l[3]) \($l[4]) "))
			| rule(.) + {action: "force", value: (.[9] | tonumber)}) +
		rules($plan; "S"; rule(.) + {action: "force", value: .[6]})
JQ
)" --rawfile plan "$PLAN")
tap_ok $? "the three policies are built from the plan" || exit 1
out=$("$HOOK" validate "$CFG" 2>&1)
tap_ok $? "validate accepts them ($(jq '.policies["lengths-clamp"].setsockopt | length' "$CFG") clamp, $(jq '.policies["lengths-force"].setsockopt | length' "$CFG") force, $(jq '.policies["lengths-getforce"].getsockopt | length' "$CFG") getsockopt rules)" ||
	tap_diag "$out"

for mode in clamp force getforce; do
	run "$mode" "lengths-$mode" -- lengths "$mode" /plan
	if grep -q 'error running hook' <<<"$OUT"; then
		tap_ok 1 "$mode: the container starts" || tap_diag "$OUT"
		continue
	fi
	tap_relay "$mode" "$RC" <<<"$OUT"
done

ct_check_same "after the containers are gone, BPF programs, hook state and cgroups are as before" \
	"$BASE"
tap_done
