# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Checks for a container that the hook must refuse. Source tap.sh and
# container.sh first.

# hook_said RUNTIME BUNDLE: what the hook wrote on stderr, one output line
# per line it wrote. runc quotes it inside its own error
# ("... stderr: oci-sockopt-hook: ...\n\""); crun writes it to the file
# that the run.oci.hooks.stderr annotation names.
hook_said()
{
	case $1 in
	runc)
		sed -n 's/.*, stderr: \(.*\)"$/\1/p' "$CT_ERR" |
			sed 's/\\n$//; s/\\n/\n/g; s/\\"/"/g'
		;;
	*) cat "$2/hook.err" 2>/dev/null ;;
	esac
}

# refused RUNTIME NAME BUNDLE REGEX...: runs the container and checks that
# it did not start, that the hook gave one line "oci-sockopt-hook: ..."
# matching every REGEX, and that nothing was left behind.
refused()
{
	local rt=$1 name=$2 bundle=$3 before said re ok=0

	shift 3
	before=$(ct_snapshot)
	ct_run "$rt" "$(ct_id "$name")" "$bundle"
	! grep -q '^done=' "$CT_OUT" && [ "$CT_RC" != 0 ]
	tap_ok $? "$rt $name: the container does not start (exit $CT_RC)" ||
		tap_diag "stdout:" "$(cat "$CT_OUT")"
	said=$(hook_said "$rt" "$bundle")
	[ "$(grep -c . <<<"$said")" = 1 ] && [[ $said == "oci-sockopt-hook: "* ]]
	tap_ok $? "$rt $name: the hook's reason is one line 'oci-sockopt-hook: ...'" ||
		tap_diag "runtime stderr:" "$(cat "$CT_ERR")" "hook stderr:" "$said"
	if [ "$rt" = runc ]; then
		grep -qF "stderr: oci-sockopt-hook: " "$CT_ERR"
		tap_ok $? "$rt $name: runc's error shows the hook's reason"
	fi
	for re in "$@"; do
		[[ $said =~ $re ]] || ok=1
	done
	tap_ok $ok "$rt $name: the reason names: $*" ||
		tap_diag "hook said: $said"
	[ $ok = 0 ] && tap_diag "hook said: $said"
	ct_check_same "$rt $name: BPF programs, hook state and cgroups are as before" "$before"
}

# started RUNTIME NAME BUNDLE: runs the container (sockcheck all) and checks
# that it ran, and that it left nothing behind.
started()
{
	local rt=$1 name=$2 bundle=$3 before

	before=$(ct_snapshot)
	ct_run "$rt" "$(ct_id "$name")" "$bundle"
	[ "$CT_RC" = 0 ] && grep -q '^done=ok' "$CT_OUT"
	tap_ok $? "$rt $name: the container starts and runs" || ct_diag_run "$bundle"
	ct_check_same "$rt $name: BPF programs, hook state and cgroups are as before" "$before"
}
