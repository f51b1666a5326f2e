# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh disable=SC1091,SC2086
#
# Guest test script, run by /init between the results markers. Prints TAP.
#  1. the rig: kernel version, the bypass sysctl, sockstat;
#  2. memacct validated without any BPF: net.core.bypass_prot_mem=1 makes
#     memory_allocated growth drop to <= 10 pages from > 32 pages;
#  3. the pressure scenario (tcp_mem "1000 1000 1000") with and without
#     the sysctl;
#  4. the hook scenarios (hook.sh) when the hook binary is in the image;
#  5. the noisy-neighbour benchmark (noisy.sh): runc containers, one
#     streaming, one filling buffers, with and without the bypass.
. /guest/lib.sh

MIN_KERNEL=6.19
BYPASS=/proc/sys/net/core/bypass_prot_mem

# ver_ge A B: dotted version A >= B, on the leading numbers only
ver_ge() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		split(a, x, /[^0-9]+/); split(b, y, /[^0-9]+/)
		for (i = 1; i <= 3; i++) {
			if (x[i] + 0 > y[i] + 0) exit 0
			if (x[i] + 0 < y[i] + 0) exit 1
		}
		exit 0
	}'
}

rig_checks() {
	kr=$(uname -r)
	tap_diag "uname -r: $kr"
	tap_diag "cpus: $(nproc), mem: $(awk '/MemTotal/ { print $2 " kB" }' /proc/meminfo)"
	tap_check "kernel $kr >= $MIN_KERNEL" ver_ge "$kr" "$MIN_KERNEL"
	tap_check "$BYPASS exists" test -e "$BYPASS"
	tap_check "cgroup2 is mounted at /sys/fs/cgroup" \
		grep -q '^cgroup2 /sys/fs/cgroup cgroup2' /proc/mounts
	tap_check "bpffs is mounted at /sys/fs/bpf" \
		grep -q '^bpf /sys/fs/bpf bpf' /proc/mounts
	tap_check "lo is up" sh -c 'ip -o link show up dev lo | grep -q lo'
	tap_diag "/proc/net/sockstat:"
	sed 's/^/#   /' /proc/net/sockstat
}

# sysctl_checks: memacct against the per-netns sysctl, no BPF anywhere.
# Per case two sizes: the series' 32 pages read exactly (kcore), and
# 4 * mem_pcpu_rsv pages read from sockstat alone.
sysctl_checks() {
	if [ ! -w "$BYPASS" ]; then
		tap_skip "memacct against the sysctl" "no $BYPASS"
		return
	fi
	each_case sysctl_case
}

# sysctl_case NAME MEMACCT-ARGS...
sysctl_case() {
	_n=$1
	shift
	echo 0 >"$BYPASS"
	mboth "$@"
	x_off=$M_X s_off=$M_S pages=$M_PAGES
	echo 1 >"$BYPASS"
	mboth "$@"
	x_on=$M_X s_on=$M_S
	echo 0 >"$BYPASS"
	figure "sysctl $_n: 32 pages exact off=${x_off:-na} on=${x_on:-na};" \
		"${pages:-?} pages sockstat off=${s_off:-error} on=${s_on:-error}"
	if [ -n "$x_off$x_on" ]; then
		check_charged "$_n, 32 pages, exact, no bypass" "$x_off"
		check_bypassed "$_n, 32 pages, exact, sysctl bypass" "$x_on"
	else
		tap_skip "$_n, 32 pages, exact" "kcore not readable, no exact counter"
	fi
	check_charged "$_n, ${pages:-?} pages, sockstat, no bypass" "$s_off"
	check_bypassed "$_n, ${pages:-?} pages, sockstat, sysctl bypass" "$s_on"
}

# pressure_checks: many senders, tcp_mem tiny, with and without the sysctl
pressure_checks() {
	if [ ! -w "$BYPASS" ]; then
		tap_skip "pressure scenario" "no $BYPASS"
		return
	fi
	for b in 0 1; do
		echo $b >"$BYPASS"
		line=$(memacct pressure -n 200 -b 262144 -t 5 -m "1000 1000 1000")
		echo 0 >"$BYPASS"
		echo "# $line" >&2
		p=$(kv pressures "$line")
		figure "pressure sysctl=$b pressures=${p:-error} mem=$(kv mem "$line") queued=$(kv queued "$line") sent=$(kv sent "$line")"
		if [ $b = 0 ]; then
			tap_check "pressure without bypass: TCPMemoryPressures ${p:-error} > 0" \
				test "${p:-0}" -gt 0
		else
			tap_check "pressure with sysctl bypass: TCPMemoryPressures ${p:-error} = 0" \
				test -n "$p" -a "${p:-1}" -eq 0
		fi
	done
}

# per-CPU caches of the protocol counters: see memacct.c
tap_diag "net.core.mem_pcpu_rsv: $(cat /proc/sys/net/core/mem_pcpu_rsv 2>/dev/null || echo none)"
rig_checks
sysctl_checks
pressure_checks 2>&1
if [ -r /guest/hook.sh ]; then
	. /guest/hook.sh
fi
. /guest/noisy.sh
tap_done
