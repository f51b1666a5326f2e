#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# On a kernel without SK_BPF_BYPASS_PROT_MEM (Linux < 6.19), a container
# asking for the bypass does not start when on_unsupported is "fail", and
# the runtime's error shows the hook's one-line reason; with "warn" it
# starts. Skips when the kernel has the feature.
#
# Modules: `load.c`, `prestart.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
# shellcheck source=../lib/refuse.sh
. "$here/../lib/refuse.sh"

ct_setup runc crun

probe=$(timeout 30 "$HOOK" probe --json 2>&1)
has=$(jq -r '.bypass_prot_mem | if type == "boolean" then . else "missing" end' \
	<<<"$probe" 2>/dev/null)
case $has in
false) ;;
true) tap_skip_all "this kernel supports SK_BPF_BYPASS_PROT_MEM" ;;
*)
	tap_ok 1 "oci-sockopt-hook probe --json reports bypass_prot_mem"
	tap_diag "probe said:" "$probe"
	tap_done
	;;
esac
tap_ok 0 "probe --json: bypass_prot_mem is false on $(uname -r)"

FAIL=$(ct_config fail '.on_unsupported = "fail"')
WARN=$(ct_config warn '.on_unsupported = "warn"')
BYPASS=(-a sockopt-hook.io/bypass-prot-mem=true)

for rt in runc crun; do
	b=$(ct_bundle -r "$rt" -c "$FAIL" "${BYPASS[@]}" "$rt-fail" -- sockcheck all)
	refused "$rt" "$rt-fail" "$b" 'SK_BPF_BYPASS_PROT_MEM'

	b=$(ct_bundle -r "$rt" -c "$FAIL" -a sockopt-hook.io/policy=bulk \
		"$rt-bulk-fail" -- sockcheck all)
	refused "$rt" "$rt-bulk-fail" "$b" 'SK_BPF_BYPASS_PROT_MEM'

	b=$(ct_bundle -r "$rt" -c "$WARN" "${BYPASS[@]}" "$rt-warn" -- sockcheck all)
	started "$rt" "$rt-warn" "$b"

	# The rest of the policy still applies when the bypass is skipped.
	b=$(ct_bundle -r "$rt" -c "$WARN" "${BYPASS[@]}" \
		-a sockopt-hook.io/policy=restricted "$rt-warn-restricted" -- sockcheck all)
	started "$rt" "$rt-warn-restricted" "$b"
	tap_is "$(sed -n 's/^setsockopt=//p' "$CT_OUT")" EPERM \
		"$rt warn-restricted: setsockopt(SO_MARK) still gives EPERM"
done

tap_done
