#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run-node-suite.sh [-B BUILD_DIR] [-t SECS]
#
# The node suite: boot a Debian unstable node (systemd as PID 1,
# cgroup v2 only, the VM suite's kernel, runc 1.3, crun 1.2x, podman 5,
# containerd 2.x) under qemu (TCG) and run tests/node/scenarios/ in it
# against the hook built in BUILD_DIR (default: build/ of this repository),
# installed there with `make install`.
#
#   BUILD_DIR/node/image-KEY/  the cached image (image/build-image.sh)
#   BUILD_DIR/node/guest-G/    one per node booted (NODE_GUESTS):
#     payload.img, the per-run payload disk (/dev/vdb): run.sh, lib.sh,
#     tap.sh, scenarios/ (00-node and this node's share), bin/
#     (sockcheck, memacct, pause, sandbox_ptrace, static), images/
#     (76-examples' servers image, apps/build-apps.sh), src/ (the
#     repository's files and BUILD_DIR/oci-sockopt-hook),
#     image/oci-sockopt-hook.tar (`make image`, for 70-daemonset),
#     kubernetes/NAME.yaml (`kubectl kustomize` of kustomize/NAME, for
#     70-daemonset; scripts/k8s-tools.sh fetches kubectl);
#     console.log, results.tap, boot.err (boot.sh's lines)
#   BUILD_DIR/node/results.tap every node's results
#
# Environment: TESTS_CACHE (a directory for the kernel and the image
# instead of BUILD_DIR, e.g. one a CI system keeps between runs);
# NODE_GUESTS (nodes booted side by side, 2: each runs 00-node and a
# share of the other scenarios by their budgets; 1 runs all in one);
# NODE_SCENARIOS="pattern..." runs only the scenarios whose
# file name contains one of the patterns (00-node always runs: it
# installs the hook); NODE_SCENARIO_TIMEOUT (each scenario's budget on
# the reference node, 300; a scenario that needs more says so in a line
# "# node-timeout: SECS"; the node scales them by its own speed and
# stops a scenario only when it has been silent for its budget or has run
# three times it, guest/run.sh), NODE_BOOT_MAX (seconds to reach the suite's unit, 300),
# VM_VERBOSE=1 (the console live), VM_TCG_THREAD (single);
# NODE_BENCH_CALLS and NODE_BENCH_ROUNDS (82-nri-plugin's figures);
# NODE_NRI_CREATIONS (80-nri's creations for its memory, 100; 500 the
# full count).
#
# Budgets follow the work, not a wall clock: the VM is stopped when its
# console has been silent for longer than the largest selected
# scenario's budget, scaled by this machine's speed (a reference step
# timed here first), plus the time to restore the node after it
# (NODE_IDLE overrides it); NODE_TIMEOUT (or -t) is only a ceiling for
# the whole boot, default CI's 90 minutes.
#
# Ends with "node: N passed, N failed". Exit: 0 all passed; 1 a test or the
# rig failed; 77 qemu, mmdebstrap, the mirror or the kernel cannot be had
# (the reason is printed).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build="$top/build"
secs=${NODE_TIMEOUT:-5400}
while getopts "B:t:" opt; do
	case $opt in
	B) build=$OPTARG ;;
	t) secs=$OPTARG ;;
	*) echo "usage: $0 [-B BUILD_DIR] [-t SECS]" >&2; exit 2 ;;
	esac
done
mkdir -p "$build/node"
build=$(cd "$build" && pwd)
node="$build/node"

say() { echo "node-suite: $*" >&2; }
skip() { say "SKIP: $*"; echo "node: SKIP: $*"; exit 77; }
rigfail() { say "FAIL: $*"; echo "node: 0 passed, 1 failed"; exit 1; }
t0=$(date +%s)

command -v qemu-system-x86_64 >/dev/null ||
	skip "qemu-system-x86_64 not installed (apt-get install qemu-system-x86)"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed (e2fsprogs)"
[ -x "$build/oci-sockopt-hook" ] || rigfail "$build/oci-sockopt-hook missing (make all)"
[ -x "$build/tests/sockcheck" ] || rigfail "$build/tests/sockcheck missing (make test-progs)"

# the kernel of the VM suite, then the image for it
set +e
# The kernel and the image in TESTS_CACHE when it names a directory that
# outlives the build directory (a CI cache): both keyed by their inputs.
cache=${TESTS_CACHE:-$build}
kout=$("$top/tests/vm/fetch-kernel.sh" "$cache")
rc=$?
set -e
case $rc in
0) ;;
77) skip "no kernel >= 6.19 can be had (see above)" ;;
*) rigfail "fetch-kernel.sh exited $rc" ;;
esac
say "$(echo "$kout" | head -n1)"
# shellcheck disable=SC1091,SC2153 # KVER comes from kernel.env
kver=$(. "$cache/vm/cache/kernel.env" && echo "$KVER")
set +e
iout=$("$here/image/build-image.sh" "$cache" "$kver")
rc=$?
set -e
case $rc in
0) ;;
77) skip "the node image cannot be built here (see above)" ;;
*) rigfail "image/build-image.sh exited $rc" ;;
esac
image=$(echo "$iout" | tail -n1)
t_image=$(date +%s)

# memacct: static, rebuilt when a source changes (vmnet.c: its sockets)
memacct="$node/memacct"
if [ ! -x "$memacct" ] || [ "$top/tests/vm/memacct.c" -nt "$memacct" ] ||
	[ "$top/tests/vm/vmnet.c" -nt "$memacct" ] || [ "$top/tests/vm/vmnet.h" -nt "$memacct" ]; then
	${CC:-gcc} -static -O2 -Wall -Wextra -o "$memacct.tmp" "$top/tests/vm/memacct.c" "$top/tests/vm/vmnet.c"
	mv "$memacct.tmp" "$memacct"
fi

# selected NAME: NAME matches $NODE_SCENARIOS, or it is empty
selected() {
	local pat

	[ -n "${NODE_SCENARIOS:-}" ] || return 0
	case $1 in 00-*) return 0 ;; esac
	for pat in $NODE_SCENARIOS; do
		# shellcheck disable=SC2053
		[[ $1 == *$pat* ]] && return 0
	done
	return 1
}

# The guests: NODE_GUESTS nodes (default 2, at most one per scenario
# besides 00-node) boot side by side, each running 00-node (it installs
# the hook) and its share of the other scenarios. A guest's work is
# serial on one host core (single-threaded TCG), so a second guest puts
# the other core to work; the scenarios are shared out by their declared
# budgets, the largest first, each to the guest with the least so far.
budget_of() {
	local b

	b=$(sed -n 's/^# node-timeout: \([0-9][0-9]*\)$/\1/p' "$1" | head -n1)
	echo "${b:-${NODE_SCENARIO_TIMEOUT:-300}}"
}
guests=${NODE_GUESTS:-2}
case $guests in
'' | *[!0-9]* | 0) echo "node-suite: NODE_GUESTS must be a positive number, not '$guests'" >&2; exit 2 ;;
esac
others=()
for s in "$here"/scenarios/*.sh; do
	n=$(basename "$s")
	case $n in 00-*) continue ;; esac
	if selected "$n"; then others+=("$n"); fi
done
[ "$guests" -le "${#others[@]}" ] || guests=${#others[@]}
[ "$guests" -ge 1 ] || guests=1
declare -A guest_of=()
load=()
for ((g = 1; g <= guests; g++)); do load[g]=0; done
while read -r b n; do
	[ -n "$n" ] || continue
	best=1
	for ((g = 2; g <= guests; g++)); do
		[ "${load[g]}" -ge "${load[best]}" ] || best=$g
	done
	guest_of[$n]=$best
	load[best]=$((load[best] + b))
done < <(for n in "${others[@]}"; do echo "$(budget_of "$here/scenarios/$n") $n"; done | sort -k1,1nr -k2,2)
# on GUEST NAME: the scenario NAME runs on that guest (00-node on each)
on() {
	case $2 in 00-*) return 0 ;; esac
	[ "${guest_of[$2]:-0}" = "$1" ]
}
# anywhere NAME: some guest runs the scenario NAME
anywhere() { [ -n "${guest_of[$1]:-}" ]; }

# What the payloads carry beyond the scenarios, made once: the servers
# image of the example pods (76-examples), built here once
apps="" apps_none=""
if anywhere 76-examples.sh; then
	set +e
	aout=$("$here/apps/build-apps.sh" "$build")
	rc=$?
	set -e
	case $rc in
	0) apps=$(echo "$aout" | tail -n1) ;;
	77) why=$(tail -n1 <<<"$aout")
	    say "no servers image: 76-examples will skip ($why)"
	    apps_none="no servers image: ${why:-tests/node/apps/build-apps.sh cannot get its packages here}" ;;
	*) rigfail "apps/build-apps.sh exited $rc" ;;
	esac
fi
# the DaemonSet's image (make image) of this very hook, for 70-daemonset:
# a machine without umoci cannot build it (70-daemonset skips, saying
# so); a build that was tried and failed fails the suite.
img="" img_none=""
if anywhere 70-daemonset.sh; then
	if command -v umoci >/dev/null; then
		set +e
		img=$(make -s -C "$top" BUILD="$build" -o "$build/oci-sockopt-hook" image 2>"$node/image.err" | tail -n1)
		set -e
		if [ -z "$img" ] || [ ! -r "$img" ]; then
			rigfail "make image failed: $(tail -n 3 "$node/image.err")"
		fi
	else
		img_none="umoci not installed: make image cannot build the DaemonSet's image"
	fi
fi
# the DaemonSet's objects as `kubectl kustomize` renders the overlays of
# tests/node/kustomize/ (over examples/kubernetes/), for 70-daemonset:
# the node runs what an operator would apply, not a copy
kube="$node/kubernetes"
rm -rf "$kube"
if anywhere 70-daemonset.sh && [ -x "$build/k8s/kubectl" ]; then
	mkdir -p "$kube"
	for k in "$here"/kustomize/*/; do
		"$build/k8s/kubectl" kustomize "$k" >"$kube/$(basename "$k").yaml" ||
			rigfail "kubectl kustomize $k failed"
	done
fi
# the repository as an operator has it: its files (no build products)
# and the hook built here
src="$node/src"
rm -rf "$src"
mkdir -p "$src/build"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$top" ls-files -co --exclude-standard |
		while read -r f; do [ -e "$top/$f" ] && echo "$f"; done |
		tar -C "$top" -cf - -T - | tar -C "$src" -xf -
else
	tar -C "$top" --exclude=./build --exclude=./.git -cf - . | tar -C "$src" -xf -
fi
install -m 0755 "$build/oci-sockopt-hook" "$src/build/oci-sockopt-hook"
# and the man pages make install installs (generated here: the node has no
# go-md2man)
cp -pr "$build/man" "$src/build/" || rigfail "$build/man missing (make all)"

# The progress budget: the largest selected scenario's budget, scaled by
# how much slower than the reference machine this one runs the
# reference step (50000 rounds of a shell loop, HOST_REF_MS there), plus
# the restore of the node after it.
HOST_REF_MS=400
t=$(date +%s%N)
i=0
while [ $i -lt 50000 ]; do i=$((i + 1)); done
ref_ms=$((($(date +%s%N) - t) / 1000000))
factor=$((ref_ms * 100 / HOST_REF_MS))
[ "$factor" -ge 100 ] || factor=100
max_budget=0
for n in 00-node.sh "${others[@]}"; do
	b=$(budget_of "$here/scenarios/$n")
	[ "$b" -le "$max_budget" ] || max_budget=$b
done
idle=${NODE_IDLE:-$(((max_budget + 300) * factor / 100))}
say "reference step ${ref_ms} ms (${HOST_REF_MS} ms on the reference machine): a silent console for ${idle}s stops a node (ceiling ${secs}s)"

# payload GUEST: that guest's payload disk, BUILD_DIR/node/guest-G/payload.img
payload() {
	local g=$1 stage="$node/guest-$1/payload" s v size

	rm -rf "$stage"
	mkdir -p "$stage/scenarios" "$stage/bin"
	install -m 0755 "$here/guest/run.sh" "$stage/run.sh"
	install -m 0644 "$here/guest/lib.sh" "$stage/lib.sh"
	install -m 0644 "$top/tests/lib/tap.sh" "$stage/tap.sh"
	for s in "$here"/scenarios/*.sh; do
		! on "$g" "$(basename "$s")" || install -m 0755 "$s" "$stage/scenarios/"
	done
	install -m 0755 "$build/tests/sockcheck" "$memacct" "$stage/bin/"
	# the pause program of the CRI scenario's sandbox image
	[ ! -x "$build/tests/pause" ] || install -m 0755 "$build/tests/pause" "$stage/bin/"
	# the sandbox attack of the CNI scenario (45-containerd-cni.sh)
	[ ! -x "$build/tests/attacks/sandbox_ptrace" ] ||
		install -m 0755 "$build/tests/attacks/sandbox_ptrace" "$stage/bin/"
	if on "$g" 76-examples.sh; then
		mkdir -p "$stage/images"
		if [ -n "$apps" ]; then
			ln "$apps/servers.tar" "$stage/images/" 2>/dev/null || cp "$apps/servers.tar" "$stage/images/"
			cp "$apps/versions" "$stage/images/"
		else
			echo "$apps_none" >"$stage/images/none"
		fi
	fi
	echo "NODE_SCENARIO_TIMEOUT=${NODE_SCENARIO_TIMEOUT:-300}" >"$stage/env"
	[ -z "${NODE_REF_MS:-}" ] || echo "NODE_REF_MS=$NODE_REF_MS" >>"$stage/env"
	# 82-nri-plugin's bench mode: more calls and rounds for its figures
	# and 80-nri's count of creations for its memory (500: the full count)
	for v in NODE_BENCH_CALLS NODE_BENCH_ROUNDS NODE_NRI_CREATIONS; do
		[ -z "${!v:-}" ] || echo "export $v=${!v}" >>"$stage/env"
	done
	cp -al "$src" "$stage/src"
	if on "$g" 70-daemonset.sh; then
		mkdir -p "$stage/image"
		if [ -n "$img" ]; then
			install -D -m 0644 "$img" "$stage/image/oci-sockopt-hook.tar"
		else
			echo "$img_none" >"$stage/image/none"
		fi
		[ ! -d "$kube" ] || cp -r "$kube" "$stage/kubernetes"
	fi
	rm -f "$node/guest-$g/payload.img"
	# 256 MB, more with the servers image
	size=$(($(du -sm "$stage" | cut -f1) * 5 / 4 + 64))
	[ "$size" -ge 256 ] || size=256
	mkfs.ext4 -q -F -L nodepayload -d "$stage" "$node/guest-$g/payload.img" "${size}M"
	rm -rf "$stage"
}

# boot GUEST: boots it (qemu's snapshot=on overlay in a temporary file
# under its directory); boot.sh's status goes to guest-G/boot.rc, its
# lines to guest-G/boot.err
boot() {
	local d="$node/guest-$1" rc=0

	mkdir -p "$d/tmp"
	TMPDIR="$d/tmp" VM_BOOT_MAX=${NODE_BOOT_MAX:-300} "$top/tests/vm/boot.sh" \
		-k "$image/vmlinuz" -i "$image/initrd.img" -l "$d/console.log" -r "$d/results.tap" \
		-t "$secs" -p "$idle" -m 3G -s 2 \
		-a "root=/dev/vda rw fsck.mode=skip systemd.getty_auto=0 systemd.show_status=error" \
		-d "$image/root.img,snapshot=on" -d "$d/payload.img" 2>"$d/boot.err" || rc=$?
	echo "$rc" >"$d/boot.rc"
	rm -rf "$d/tmp"
}

rm -rf "$node"/guest-*
for ((g = 1; g <= guests; g++)); do
	mkdir -p "$node/guest-$g"
	payload "$g"
	say "node $g: 00-node.sh$(for n in "${others[@]}"; do ! on "$g" "$n" || printf ' %s' "$n"; done)"
done
rm -rf "$src" "$kube"
pids=()
for ((g = 1; g <= guests; g++)); do
	boot "$g" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || true; done

# each node's boot lines, its status, and its results in one file: a
# second node's 00-node reported as 00-node@G
brc=0
results="$node/results.tap"
: >"$results"
for ((g = 1; g <= guests; g++)); do
	d="$node/guest-$g"
	sed "s/^boot: /boot: node $g: /" "$d/boot.err" >&2 || true
	rc=$(cat "$d/boot.rc" 2>/dev/null || echo 3)
	[ "$rc" -le "$brc" ] || brc=$rc
	[ "$rc" -lt 2 ] || say "FAIL: node $g's rig failed (boot.sh exit $rc); console log: $d/console.log"
	[ -s "$d/results.tap" ] || continue
	if [ "$g" = 1 ]; then
		sed "s/^FIGURE node reference step/FIGURE node $g reference step/" "$d/results.tap"
	else
		sed -e "s/^@@NODE-SCENARIO 00-node@@/@@NODE-SCENARIO 00-node@$g@@/" \
			-e "s/^@@NODE-SCENARIO-END 00-node /@@NODE-SCENARIO-END 00-node@$g /" \
			-e "s/^FIGURE node reference step/FIGURE node $g reference step/" "$d/results.tap"
	fi >>"$results"
done

# the figures and the per-scenario counts
[ -s "$results" ] || : >"$results"
grep -v '^FIGURE \|^@@NODE-SCENARIO' "$results" || true
if grep -q '^FIGURE ' "$results"; then
	echo "# figures (memory_allocated growth in pages for 1024 pages sent):"
	sed -n 's/^FIGURE /#   /p' "$results"
fi
summary=$(awk '
	/^@@NODE-SCENARIO [^ ]*@@/ { n = $2; sub(/@@$/, "", n); open = n; ok[n] = nok[n] = plan[n] = 0; order[++k] = n; next }
	/^@@NODE-SCENARIO-END / {
		rc[open] = $3; sub(/^rc=/, "", rc[open]); s = $4; gsub(/secs=|@@/, "", s); secs[open] = s; open = ""; next
	}
	open != "" && /^ok / { ok[open]++ }
	open != "" && /^not ok / { nok[open]++ }
	open != "" && /^1\.\.[0-9]/ { plan[open] = 1 }
	open != "" && /^1\.\.0 # SKIP / { w = $0; sub(/^1\.\.0 # SKIP /, "", w); skipwhy[open] = w }
	END {
		for (i = 1; i <= k; i++) {
			n = order[i]; extra = 0
			if (!(n in rc)) { why = "died (no end marker)"; extra = 1 }
			else if (rc[n] == 77) why = "skipped: " (skipwhy[n] != "" ? skipwhy[n] : "(no reason given)")
			else if (!plan[n]) { why = "no TAP plan"; extra = 1 }
			else if (rc[n] != 0 && nok[n] == 0) { why = "exit " rc[n] " with no failed test"; extra = 1 }
			else why = "exit " rc[n]
			printf "%s %d %d %s, %ss\n", n, ok[n], nok[n] + extra, why, secs[n]
		}
	}' "$results")
pass=0 fail=0 skipped=0
while read -r name p f rest; do
	[ -n "$name" ] || continue
	echo "# scenario $name: $p passed, $f failed ($rest)"
	pass=$((pass + p)) fail=$((fail + f))
	# a skipped scenario as one skipped check, for tests/run.sh's count
	case $rest in
	"skipped: "*)
		skipped=$((skipped + 1))
		why=${rest#skipped: }
		echo "ok - node scenario $name # SKIP ${why%, *s}"
		;;
	esac
done <<<"$summary"
ran=$(grep -c . <<<"$summary" || true)
# 00-node on each node, every other selected scenario on one
want=$((guests + ${#others[@]}))
if [ "$ran" != "$want" ]; then
	say "FAIL: $ran of $want scenarios reported"
	fail=$((fail + 1))
fi
[ "$brc" -lt 2 ] || fail=$((fail + 1))
say "image $image (ready in $((t_image - t0))s), results $results, consoles $node/guest-*/console.log, $(($(date +%s) - t0))s in all"
echo "node: $pass passed, $fail failed, $skipped scenario(s) skipped"
[ "$fail" = 0 ] && [ "$brc" = 0 ]
