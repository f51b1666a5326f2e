# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh disable=SC2016,SC2086
#
# The noisy-neighbour benchmark, sourced by run.sh last. Real
# runc containers (the host's runc in the image, pure cgroup v2 here), each
# with a network namespace of its own, the hook in their config.json as
# every runtime test has it (prestart, poststop), tcp_mem at the series'
# "1000 1000 1000" for the whole scenario. Per round, three phases:
#   alone     the victim container alone;
#   noisy     a hog container fills 200 connections x 256 KiB without
#             reading (no annotation: the hook runs, nothing to attach),
#             then the victim runs beside it;
#   bypassed  the same hog with sockopt-hook.io/bypass-prot-mem: "true".
# The victim (neighbour victim) streams TCP over its own loopback at a
# steady NB_RATE MB/s and reports the throughput it got and its send
# latency (from when a chunk was due to when send() returned). The table
# holds each phase's median over NB_ROUNDS rounds and, per round, each
# phase's throughput over the same round's "alone", as figures; the checks
# are the kernel's: memory pressure entered without the bypass, never
# alone or with it.

NB_RATE=${NB_RATE:-16}
NB_CHUNK=${NB_CHUNK:-65536}
NB_READ_MS=${NB_READ_MS:-10}
NB_SECS=${NB_SECS:-2}
NB_ROUNDS=${NB_ROUNDS:-3}
NB_TCP_MEM="1000 1000 1000"
NB_DIR=/tmp/nb
NB_CG=/sys/fs/cgroup/noisy
TCP_MEM=/proc/sys/net/ipv4/tcp_mem

# nb_bundle ID ANNOTATIONS ARGS: NB_DIR/ID/config.json, a runc bundle on
# the shared read-only rootfs, with the hook as prestart and poststop
nb_bundle() {
	mkdir -p "$NB_DIR/$1"
	cat >"$NB_DIR/$1/config.json" <<EOF
{"ociVersion":"1.0.2",
 "process":{"terminal":false,"user":{"uid":0,"gid":0},"args":[$3],
  "env":["PATH=/bin"],"cwd":"/","noNewPrivileges":true,
  "rlimits":[{"type":"RLIMIT_NOFILE","hard":4096,"soft":4096}]},
 "root":{"path":"$NB_DIR/rootfs","readonly":true},
 "hostname":"$1",
 "mounts":[{"destination":"/proc","type":"proc","source":"proc"},
  {"destination":"/dev","type":"tmpfs","source":"tmpfs","options":["nosuid","mode=755"]}],
 "hooks":{
  "prestart":[{"path":"$HOOK","args":["oci-sockopt-hook","--config","$HOOK_CFG","prestart"]}],
  "poststop":[{"path":"$HOOK","args":["oci-sockopt-hook","--config","$HOOK_CFG","poststop"]}]},
 "annotations":{$2},
 "linux":{"namespaces":[{"type":"pid"},{"type":"network"},{"type":"ipc"},
  {"type":"uts"},{"type":"mount"}],"cgroupsPath":"/noisy/$1"}}
EOF
}

# nb_wait_line FILE PATTERN SECS: until FILE has a line matching PATTERN
nb_wait_line() {
	_n=$(($3 * 10))
	while [ $_n -gt 0 ]; do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

# nb_hog_start ID ANNOTATIONS: a detached hog container, buffers filled.
# Sets NB_HOG (its "filled" line).
nb_hog_start() {
	nb_bundle "$1" "$2" '"/bin/neighbour","hog","-n","200","-b","262144","-t","10"'
	(cd "$NB_DIR/$1" && runc run -d "$1" >"$NB_DIR/$1.out" 2>&1 </dev/null)
	if ! nb_wait_line "$NB_DIR/$1.out" '^neighbour hog filled' 30; then
		sed 's/^/#   /' "$NB_DIR/$1.out"
		NB_HOG=""
		return 1
	fi
	NB_HOG=$(grep '^neighbour hog filled' "$NB_DIR/$1.out")
	echo "# $1: $NB_HOG"
}

# nb_hog_stop ID: SIGTERM, its "done" line, runc delete (poststop)
nb_hog_stop() {
	runc kill "$1" TERM 2>/dev/null
	nb_wait_line "$NB_DIR/$1.out" '^neighbour hog done' 20 &&
		echo "# $1: $(grep '^neighbour hog done' "$NB_DIR/$1.out")"
	_n=100
	while [ $_n -gt 0 ] && ! runc state "$1" 2>/dev/null | grep -q '"status": "stopped"'; do
		sleep 0.1
		_n=$((_n - 1))
	done
	runc delete --force "$1" 2>&1 | sed 's/^/#   runc delete: /'
}

# nb_victim ID: one victim run in the foreground. Sets NB_LINE.
nb_victim() {
	nb_bundle "$1" "" "\"/bin/neighbour\",\"victim\",\"-r\",\"$NB_RATE\",\"-c\",\"$NB_CHUNK\",\"-R\",\"$NB_READ_MS\",\"-t\",\"$NB_SECS\""
	NB_LINE=$(cd "$NB_DIR/$1" && runc run "$1" 2>"$NB_DIR/$1.err" </dev/null)
	sed 's/^/#   /' "$NB_DIR/$1.err"
	runc delete --force "$1" 2>/dev/null
	echo "# $1: ${NB_LINE:-no result}"
}

# nb_phase PHASE ROUND: one phase of one round; appends one line to
# NB_DIR/results: PHASE ROUND, then the victim's mbps p99_ms p50_ms and
# TCPMemoryPressures in its netns, the hog's TCPMemoryPressures (0 without
# a hog), and sockstat's TCP mem in pages when the victim ended
nb_phase() {
	_hog="" _hp=0 _t0=$(cut -d' ' -f1 /proc/uptime)
	case $1 in
	noisy) _hog=hog-$2-noisy _ann="" ;;
	bypassed) _hog=hog-$2-bypassed _ann='"sockopt-hook.io/bypass-prot-mem":"true"' ;;
	esac
	if [ -n "$_hog" ] && ! nb_hog_start "$_hog" "$_ann"; then
		echo "$1 $2 error error error error error error" >>"$NB_DIR/results"
		nb_hog_stop "$_hog"
		return
	fi
	[ -z "$_hog" ] || nb_hog_programs "$_hog" "$2"
	nb_victim "victim-$2-$1"
	if [ -n "$_hog" ]; then
		nb_hog_stop "$_hog"
		_hp=$(kv pressures "$(grep '^neighbour hog done' "$NB_DIR/$_hog.out")")
	fi
	echo "$1 $2 $(kv mbps "$NB_LINE") $(kv p99_ms "$NB_LINE")" \
		"$(kv p50_ms "$NB_LINE") $(kv pressures "$NB_LINE") ${_hp:-error}" \
		"$(kv mem "$NB_LINE")" >>"$NB_DIR/results"
	echo "# $1, round $2: $(awk -v a="$_t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }') s"
}

# nb_hog_programs ID ROUND: in round 1, what the hook attached to the
# hog's cgroup (a sock_create program with the bypass, nothing without)
nb_hog_programs() {
	[ "$2" = 1 ] || return 0
	_st=$("$HOOK" --config "$HOOK_CFG" status "$1" 2>&1)
	echo "$_st" | sed 's/^/#   status: /'
	case $1 in
	*bypassed) tap_check "noisy neighbour: the bypassed hog's status says bypass-prot-mem applied" \
		sh -c 'echo "$0" | grep -q "bypass-prot-mem: *applied"' "$_st" ;;
	*) tap_check "noisy neighbour: the other hog is not policed (no record)" \
		sh -c '! echo "$0" | grep -q "bypass-prot-mem: *applied"' "$_st" ;;
	esac
}

# nb_median PHASE FIELD: the median (lower middle) of FIELD (3 mbps,
# 4 p99_ms, 5 p50_ms, 8 mem) over the rounds
nb_median() {
	awk -v p="$1" -v f="$2" '$1 == p { print $f }' "$NB_DIR/results" |
		sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "error") }'
}

# nb_ratios PHASE: per round, PHASE's throughput over the same round's
# "alone", two decimals, space separated
nb_ratios() {
	awk -v p="$1" '
		$1 == "alone" { a[$2] = $3 }
		$1 == p { t[$2] = $3 }
		END {
			for (r = 1; r in t; r++) {
				if (a[r] + 0 > 0 && t[r] ~ /^[0-9.]+$/)
					printf "%.2f ", t[r] / a[r]
				else
					printf "error "
			}
		}' "$NB_DIR/results"
}

# nb_sum PHASE FIELD: the sum of FIELD (6 victim's netns pressures, 7 the
# hog's) over the rounds
nb_sum() {
	awk -v p="$1" -v f="$2" '$1 == p { s += $f } END { print s + 0 }' "$NB_DIR/results"
}

noisy_scenario() {
	for _need in runc neighbour "$HOOK"; do
		if ! command -v "$_need" >/dev/null; then
			tap_skip "noisy-neighbour benchmark" "$_need not in the image"
			return
		fi
	done
	rm -rf "$NB_DIR"
	mkdir -p "$NB_DIR/rootfs/bin" "$NB_DIR/rootfs/proc" "$NB_DIR/rootfs/dev"
	cp /bin/neighbour "$NB_DIR/rootfs/bin/neighbour"
	: >"$NB_DIR/results"
	_nb_t0=$(cut -d' ' -f1 /proc/uptime)
	_old_mem=$(cat "$TCP_MEM")
	echo "$NB_TCP_MEM" >"$TCP_MEM"
	tap_diag "noisy neighbour: tcp_mem $(cat "$TCP_MEM") (was $_old_mem)," \
		"victim at $NB_RATE MB/s for $NB_SECS s, $NB_ROUNDS rounds"
	_r=1
	while [ $_r -le "$NB_ROUNDS" ]; do
		for _p in alone noisy bypassed; do
			nb_phase $_p $_r
		done
		_r=$((_r + 1))
	done
	echo "$_old_mem" >"$TCP_MEM"
	sed 's/^/# results: /' "$NB_DIR/results"
	figure "noisy-neighbour took $(awk -v a="$_nb_t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }') s" \
		"($NB_ROUNDS rounds of alone, noisy, bypassed)"

	for _p in alone noisy bypassed; do
		figure "noisy-neighbour $_p: victim mbps=$(nb_median $_p 3)" \
			"p50_ms=$(nb_median $_p 5) p99_ms=$(nb_median $_p 4)" \
			"pressures victim=$(nb_sum $_p 6) hog=$(nb_sum $_p 7)" \
			"tcp_mem_pages=$(nb_median $_p 8) ratios=$(nb_ratios $_p)"
	done
	# Throughput and latency are timings of this guest on a shared host:
	# figures, never checks (a loaded host once gave the bypassed p99 at
	# 412 ms against 1584 ms). What the kernel did is checked below.
	_rb=$(nb_ratios bypassed) _rn=$(nb_ratios noisy)
	_pb=$(nb_median bypassed 4) _pn=$(nb_median noisy 4)
	figure "noisy-neighbour against alone, per round: bypassed ($_rb)," \
		"not bypassed ($_rn); median p99 bypassed ${_pb:-error} ms," \
		"not bypassed ${_pn:-error} ms; alone $(nb_median alone 3) of $NB_RATE MB/s"
	tap_check "noisy neighbour: alone, no TCP memory pressure ($(nb_sum alone 6))" \
		test "$(nb_sum alone 6)" -eq 0
	tap_check "noisy neighbour, not bypassed: TCP memory pressure entered ($(nb_sum noisy 6) + $(nb_sum noisy 7) times)" \
		test $(($(nb_sum noisy 6) + $(nb_sum noisy 7))) -gt 0
	tap_check "noisy neighbour, bypassed: no TCP memory pressure ($(nb_sum bypassed 6) + $(nb_sum bypassed 7))" \
		test $(($(nb_sum bypassed 6) + $(nb_sum bypassed 7))) -eq 0
	tap_check "noisy neighbour: tcp_mem restored ($(cat "$TCP_MEM"))" \
		test "$(cat "$TCP_MEM")" = "$_old_mem"
	rmdir "$NB_CG" 2>/dev/null
	tap_check "noisy neighbour: no container, cgroup or record left" \
		sh -c '[ -z "$(runc list -q)" ] && [ ! -e "$0" ] &&
			! ls /run/oci-sockopt-hook/ | grep -q -e hog -e victim' "$NB_CG"
}

[ -n "${NB_NO_RUN:-}" ] || noisy_scenario
