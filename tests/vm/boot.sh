#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# boot.sh -k KERNEL -i INITRD -l LOG [-r RESULTS] [-t SECS] [-p SECS]
#         [-m MEM] [-s SMP] [-a APPEND] [-d DISK[,OPTS]]...
#
# Boot KERNEL with INITRD under qemu-system-x86_64 (KVM when it runs the
# kernel, else TCG; no NIC), the serial console going to LOG. Each -d attaches a raw virtio disk
# (/dev/vda, /dev/vdb, ... in order; OPTS are more -drive options, such as
# snapshot=on); without -d there is none. The guest (the VM suite's /init,
# the node's node-suite) prints
#   @@VM-BOOTED uptime=S@@
#   @@VM-RESULTS-BEGIN@@ ... @@VM-RESULTS-END rc=N uptime=S@@
# and the lines between the two results markers are written to RESULTS
# (default LOG with .results instead of .log). -t bounds the whole run;
# -p bounds progress instead: the guest is stopped when its console has
# printed nothing for that many seconds (a guest that keeps working is
# never cut off by the wall clock of a slower machine).
#
# Environment: VM_VERBOSE=1 shows the console while it runs; VM_BOOT_MAX
# (seconds, default 30): a slower boot to /init is a failure; VM_ACCEL:
# auto (default: kvm when a short boot of KERNEL under KVM works, else
# tcg; VM_KVM_PROBE_SECS bounds that boot, 20), kvm or tcg.
#
# Exit: 0 the guest script passed; 1 it reported failures (rc != 0);
# 3 the rig failed: qemu error, timeout, kernel panic, slow boot or a
# missing marker. Each failure prints one clear line and the log's tail.
set -euo pipefail

prog=boot
usage() {
	echo "usage: $0 -k KERNEL -i INITRD -l LOG [-r RESULTS] [-t SECS] [-p SECS] [-m MEM] [-s SMP] [-a APPEND] [-d DISK[,OPTS]]..." >&2
	exit 2
}

kernel="" initrd="" log="" results="" secs=240 idle="" mem=1G smp=2 append=""
drives=()
while getopts "k:i:l:r:t:p:m:s:a:d:" opt; do
	case $opt in
	k) kernel=$OPTARG ;;
	i) initrd=$OPTARG ;;
	l) log=$OPTARG ;;
	r) results=$OPTARG ;;
	t) secs=$OPTARG ;;
	p) idle=$OPTARG ;;
	m) mem=$OPTARG ;;
	s) smp=$OPTARG ;;
	a) append=$OPTARG ;;
	d) drives+=(-drive "file=$OPTARG,format=raw,if=virtio") ;;
	*) usage ;;
	esac
done
{ [ -n "$kernel" ] && [ -n "$initrd" ] && [ -n "$log" ]; } || usage
[ -n "$results" ] || results="${log%.log}.results"
[ "$results" != "$log" ] || results="$log.results"
boot_max=${VM_BOOT_MAX:-30}

fail() {
	echo "$prog: FAIL: $*" >&2
	if [ -s "$log" ]; then
		echo "$prog: last console lines ($log):" >&2
		tail -n 40 "$log" | sed 's/^/  | /' >&2
	fi
	exit 3
}

qemu=$(command -v qemu-system-x86_64 || true)
[ -n "$qemu" ] || fail "qemu-system-x86_64 not found"
[ -r "$kernel" ] || fail "kernel $kernel not readable"
[ -r "$initrd" ] || fail "initramfs $initrd not readable"
mkdir -p "$(dirname "$log")" "$(dirname "$results")"
: >"$log"
rm -f "$results"

cmdline="console=ttyS0 panic=-1 quiet mitigations=off $append"
tailpid=""
if [ "${VM_VERBOSE:-0}" = 1 ]; then
	tail -n +1 -f "$log" &
	tailpid=$!
fi

# KVM where the machine offers it (CI machines often do not): the guest
# runs at native speed instead of emulated. A /dev/kvm that opens is not
# enough: a nested, emulating one (kvm-pvm) cannot run a stock kernel, so
# the kernel is booted under KVM once, briefly, without its initramfs: it
# must get as far as panicking for want of a root file system.
kvm_runs_kernel() {
	local plog rc

	[ -w /dev/kvm ] || return 1
	plog=$(mktemp) || return 1
	# in a subshell: the shell's own note of an aborted QEMU goes nowhere
	(timeout --kill-after=5 "${VM_KVM_PROBE_SECS:-20}" "$qemu" \
		-nodefaults -no-user-config -nographic -monitor none \
		-machine pc -accel kvm -cpu host -m 256M -smp 1 -no-reboot \
		-chardev "file,id=con,path=$plog" -serial chardev:con \
		-kernel "$kernel" -append "console=ttyS0 panic=-1" \
		</dev/null; true) >/dev/null 2>&1
	grep -q 'Kernel panic' "$plog"
	rc=$?
	rm -f "$plog"
	return $rc
}
tcg=(-accel "tcg,thread=${VM_TCG_THREAD:-single}" -cpu max)
case ${VM_ACCEL:-auto} in
auto) if kvm_runs_kernel; then accel=(-accel kvm -cpu host); else accel=("${tcg[@]}"); fi ;;
kvm) accel=(-accel kvm -cpu host) ;;
tcg) accel=("${tcg[@]}") ;;
*) echo "$prog: VM_ACCEL must be auto, kvm or tcg" >&2; exit 2 ;;
esac

start=$(date +%s.%N)
rm -f "$log.idle"
set +e
timeout --kill-after=10 "$secs" "$qemu" \
	-nodefaults -no-user-config -nographic -monitor none \
	-machine pc "${accel[@]}" -m "$mem" -smp "$smp" -no-reboot \
	-chardev "file,id=con,path=$log" -serial chardev:con \
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline" "${drives[@]}" \
	</dev/null >"$log.qemu" 2>&1 &
qpid=$!
dogpid=""
if [ -n "$idle" ]; then
	# the progress watchdog: the console's size, every 5 s
	(
		last=-1 quiet=0
		while kill -0 "$qpid" 2>/dev/null; do
			now=$(stat -c %s "$log" 2>/dev/null || echo 0)
			if [ "$now" = "$last" ]; then quiet=$((quiet + 5)); else quiet=0 last=$now; fi
			if [ "$quiet" -ge "$idle" ]; then
				echo "$quiet" >"$log.idle"
				kill -TERM "$qpid" 2>/dev/null
				break
			fi
			sleep 5
		done
	) &
	dogpid=$!
fi
wait "$qpid"
qrc=$?
[ -z "$dogpid" ] || { kill "$dogpid" 2>/dev/null; wait "$dogpid" 2>/dev/null; }
set -e
end=$(date +%s.%N)
[ -z "$tailpid" ] || kill "$tailpid" 2>/dev/null || true
wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')

if grep -q 'Kernel panic' "$log"; then
	grep -m1 -A3 'Kernel panic' "$log" | sed 's/^/  | /' >&2
	fail "kernel panic (after ${wall}s)"
fi
[ ! -s "$log.idle" ] ||
	fail "no progress: the guest's console printed nothing for $(cat "$log.idle")s (limit -p ${idle}s)"
case $qrc in
0) ;;
124 | 137) fail "timeout: the guest did not power off within ${secs}s" ;;
*)
	sed 's/^/  | /' "$log.qemu" >&2
	fail "qemu exited with status $qrc"
	;;
esac

booted=$(sed -n 's/.*@@VM-BOOTED uptime=\([0-9.]*\)@@.*/\1/p' "$log" | head -n1)
[ -n "$booted" ] || fail "no boot marker: /init never ran"
if awk -v b="$booted" -v m="$boot_max" 'BEGIN { exit !(b > m) }'; then
	fail "slow boot: /init started after ${booted}s (limit ${boot_max}s)"
fi
grep -q '@@VM-RESULTS-BEGIN@@' "$log" || fail "no results begin marker"
endline=$(grep -a -m1 '@@VM-RESULTS-END rc=' "$log" || true)
[ -n "$endline" ] || fail "no results end marker: the guest script died or hung"
grc=$(echo "$endline" | sed -n 's/.*rc=\([0-9]*\).*/\1/p')
gup=$(echo "$endline" | sed -n 's/.*uptime=\([0-9.]*\).*/\1/p')

sed -n '/@@VM-RESULTS-BEGIN@@/,/@@VM-RESULTS-END/{/@@VM-RESULTS-/d;p}' "$log" |
	tr -d '\r' >"$results"
echo "$prog: kernel up to /init in ${booted}s, guest script done at ${gup}s, ${wall}s wall (${accel[1]%%,*})" >&2
[ "$grc" = 0 ] || { echo "$prog: guest script exit status $grc" >&2; exit 1; }
exit 0
