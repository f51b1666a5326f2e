#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run-vm-suite.sh [-B BUILD_DIR] [-t SECS]
#
# The VM suite, the memory-accounting opt-out proved on a 6.19+ kernel:
# fetch (or reuse) a Debian kernel >= 6.19, build
# memacct and the initramfs, boot it under qemu (TCG) and report the guest's
# TAP results and figures. Everything is cached under BUILD_DIR/vm
# (default: build/ of this repository).
#
# The image holds busybox, tests/vm/guest/ as /guest with tests/lib/tap.sh
# beside it, memacct, neighbour, and, when they exist, the host's runc,
# BUILD_DIR/oci-sockopt-hook with its shared libraries,
# BUILD_DIR/tests/sockcheck, bpftool, and examples/config.json plus a
# "bypass-marked" policy as /guest/config.json.
# VM_EXTRA="HOST[:GUEST] ..." adds more files (see mkinitramfs.sh).
#
# Its budget follows the work (as the node suite's): the guest is stopped
# when its console has printed nothing for VM_IDLE seconds (180; every
# phase of the guest prints within seconds, even under TCG on a loaded
# machine); VM_TIMEOUT (or -t) is only a ceiling, 1800 s.
#
# Exit: 0 all passed; 1 a test or the rig failed; 77 qemu or a suitable
# kernel cannot be had here (the reason is printed).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build="$top/build"
secs=${VM_TIMEOUT:-1800}
idle=${VM_IDLE:-180}
while getopts "B:t:" opt; do
	case $opt in
	B) build=$OPTARG ;;
	t) secs=$OPTARG ;;
	*) echo "usage: $0 [-B BUILD_DIR] [-t SECS]" >&2; exit 2 ;;
	esac
done
mkdir -p "$build/vm"
build=$(cd "$build" && pwd)
vm="$build/vm"

say() { echo "vm-suite: $*" >&2; }
t0=$(date +%s)

if ! command -v qemu-system-x86_64 >/dev/null; then
	say "SKIP: qemu-system-x86_64 not installed (apt-get install qemu-system-x86)"
	exit 77
fi

# The kernel in TESTS_CACHE when it names a directory that outlives the
# build directory (a CI cache): keyed by its version, fetched once.
set +e
kout=$("$here/fetch-kernel.sh" "${TESTS_CACHE:-$build}")
krc=$?
set -e
case $krc in
0) ;;
77) say "SKIP: no kernel >= 6.19 can be had (see above)"; exit 77 ;;
*) say "FAIL: fetch-kernel.sh exited $krc"; exit 1 ;;
esac
kernel=$(echo "$kout" | tail -n1)
say "$(echo "$kout" | head -n1)"

# memacct and neighbour: static, rebuilt when a source changes
static_prog() {
	local out="$vm/$1" src
	shift
	for src in "$@" "$here/vmnet.h"; do
		[ -x "$out" ] && [ ! "$src" -nt "$out" ] && continue
		${CC:-gcc} -static -O2 -Wall -Wextra -Werror -o "$out.tmp" "$@"
		mv "$out.tmp" "$out"
		return
	done
}
static_prog memacct "$here/memacct.c" "$here/vmnet.c"
static_prog neighbour "$here/neighbour.c" "$here/vmnet.c"

# the guest scripts print TAP with the tests' own library
extras=("$vm/memacct:/bin/memacct" "$vm/neighbour:/bin/neighbour"
	"$top/tests/lib/tap.sh:/guest/tap.sh")
# runc for the noisy-neighbour containers: the host's (Debian's), with the
# shared libraries mkinitramfs finds for it
runc=$(command -v runc || true)
if [ -n "$runc" ]; then
	extras+=("$runc:/usr/sbin/runc")
else
	say "runc not installed: the noisy-neighbour benchmark skips"
fi
if [ -x "$build/oci-sockopt-hook" ]; then
	extras+=("$build/oci-sockopt-hook:/bin/oci-sockopt-hook")
	say "hook: $build/oci-sockopt-hook"
else
	say "hook: $build/oci-sockopt-hook not built, hook scenarios skip"
fi
# bpftool, when installed, shows the attached programs in the guest
bpftool=$(command -v bpftool || true)
[ -z "$bpftool" ] || extras+=("$bpftool:/bin/bpftool")
# sockcheck (tests/progs) for the restricted policy, when built; its
# -mx32 and -m32 builds and escape for the compat boot (compat.sh)
for p in sockcheck sockcheckx32 sockcheck32 escape; do
	[ ! -x "$build/tests/$p" ] || extras+=("$build/tests/$p:/bin/$p")
done
extras+=("$top/examples/seccomp-no-compat.json:/guest/seccomp-no-compat.json")
# operator config: the example plus "bypass-marked" (bypass + mark/priority)
gcfg="$vm/guest-config.json"
if [ -r "$top/examples/config.json" ]; then
	if command -v jq >/dev/null; then
		jq '.policies["bypass-marked"] = {"bypass_prot_mem": true,
			"socket": {"mark": 7, "priority": 2}} |
		    .annotations.allow_policies += ["bypass-marked"]' \
			"$top/examples/config.json" >"$gcfg"
		# the same with bypass-marked's bypass off, for `apply`
		jq '.policies["bypass-marked"].bypass_prot_mem = false' "$gcfg" \
			>"$vm/guest-config-nobypass.json"
		extras+=("$vm/guest-config-nobypass.json:/guest/config-nobypass.json")
	else
		say "jq missing: the guest gets examples/config.json as it is"
		cp "$top/examples/config.json" "$gcfg"
	fi
	extras+=("$gcfg:/guest/config.json")
fi
# shellcheck disable=SC2206
[ -z "${VM_EXTRA:-}" ] || extras+=($VM_EXTRA)

"$here/mkinitramfs.sh" -o "$vm/initramfs.cpio" -g "$here/guest" "${extras[@]}"

log="$vm/console.log"
results="$vm/results.tap"
set +e
"$here/boot.sh" -k "$kernel" -i "$vm/initramfs.cpio" -l "$log" -r "$results" -t "$secs" -p "$idle"
brc=$?
set -e
if [ $brc -ge 2 ]; then
	say "FAIL: the VM rig failed (boot.sh exit $brc); console log: $log"
	exit 1
fi

# The compat boot: Debian's amd64 flavour builds x32 in but off (the cloud
# one has none), syscall.x32=y turns it on; guest/compat.sh alone runs.
# Its TAP follows the first boot's, numbered on.
x32_results="$vm/results-x32.tap"
rm -f "$x32_results"
set +e
kout=$(VM_KERNEL_FLAVOUR=amd64 "$here/fetch-kernel.sh" "${TESTS_CACHE:-$build}")
krc=$?
set -e
if [ $krc = 0 ]; then
	say "compat boot: $(echo "$kout" | head -n1), syscall.x32=y"
	set +e
	"$here/boot.sh" -k "$(echo "$kout" | tail -n1)" -i "$vm/initramfs.cpio" \
		-l "$vm/console-x32.log" -r "$x32_results" -t "$secs" -p "$idle" \
		-a "syscall.x32=y VM_SCRIPT=/guest/compat.sh"
	xrc=$?
	set -e
	if [ $xrc -ge 2 ]; then
		say "FAIL: the compat boot failed (boot.sh exit $xrc); console log: $vm/console-x32.log"
		brc=$xrc
	fi
elif [ $krc = 77 ]; then
	say "the compat boot skips: no kernel of Debian's amd64 flavour can be had (see above)"
	printf '%s\n' "ok 1 # SKIP the compat boot: no kernel of Debian's amd64 flavour can be had" \
		"1..1" >"$x32_results"
else
	say "FAIL: no amd64 kernel for the compat boot (fetch-kernel.sh exit $krc)"
	printf '%s\n' "not ok 1 - the compat boot: fetch-kernel.sh exit $krc" "1..1" >"$x32_results"
fi
# one TAP stream: every result numbered in order, one plan at the end
plans=$(cat "$results" "$x32_results" 2>/dev/null | grep -c '^1\.\.[0-9]' || true)
awk '/^1\.\.[0-9]/ { next }
	/^(not )?ok / { n++; sub(/^ok( [0-9]+)?/, "ok " n); sub(/^not ok( [0-9]+)?/, "not ok " n) }
	{ print }
	END { print "1.." n }' "$results" "$x32_results" >"$results.all" 2>/dev/null
mv "$results.all" "$results"

grep -v '^FIGURE ' "$results" || true
if grep -q '^FIGURE ' "$results"; then
	echo "# figures (memory_allocated growth in pages; pressure counts; noisy neighbour):"
	sed -n 's/^FIGURE /#   /p' "$results"
fi
pass=$(grep -c '^ok ' "$results" || true)
fail=$(grep -c '^not ok ' "$results" || true)
say "results: $results, console: $log, $(($(date +%s) - t0))s in all"
if [ "$plans" != 2 ]; then
	say "FAIL: a boot's guest printed no TAP plan ($plans of 2)"
	fail=$((fail + 1))
fi
echo "vm: $pass passed, $fail failed"
[ "$fail" = 0 ] && [ $brc = 0 ]
