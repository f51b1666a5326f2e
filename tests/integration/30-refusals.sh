#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Annotations the operator config does not allow refuse the container with
# one line that names the annotation (and the setting that refused it).
#
# Modules: `policy.c`, `container.c`, `error.c`
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

# "warn", so that a refusal cannot come from the kernel check instead.
NOBYPASS=$(ct_config nobypass \
	'.annotations.allow_bypass_prot_mem = false | .on_unsupported = "warn"')
ONLYBULK=$(ct_config onlybulk '.annotations.allow_policies = ["bulk"]')

for rt in runc crun; do
	b=$(ct_bundle -r "$rt" -a sockopt-hook.io/policy=nope "$rt-unknown" -- sockcheck all)
	refused "$rt" "$rt-unknown" "$b" 'sockopt-hook\.io/policy' 'nope'

	b=$(ct_bundle -r "$rt" -c "$ONLYBULK" -a sockopt-hook.io/policy=restricted \
		"$rt-disallowed" -- sockcheck all)
	refused "$rt" "$rt-disallowed" "$b" 'sockopt-hook\.io/policy' 'allow_policies'

	b=$(ct_bundle -r "$rt" -c "$NOBYPASS" -a sockopt-hook.io/bypass-prot-mem=true \
		"$rt-nobypass" -- sockcheck all)
	refused "$rt" "$rt-nobypass" "$b" 'sockopt-hook\.io/bypass-prot-mem' \
		'allow_bypass_prot_mem'
done

tap_done
