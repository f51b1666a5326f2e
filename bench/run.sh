#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/run.sh [--smoke]: the benchmarks behind `make bench` (bench-run)
# and `make bench-smoke`. Every line of the table compares variants
# measured in this run, interleaved trial by trial (A B C, B C A, ...), as
# the median of the trials and the ratio of the medians. The table goes to
# stdout and $BUILD/bench/table.txt, the results to
# $BUILD/bench/results.json (raw trials in $BUILD/bench/raw/).
#
# --smoke runs every benchmark for a few iterations and judges nothing:
# it exits non-zero only when something is broken (a program does not
# attach, a call returns what the policy says it must not, the hook fails,
# something is left behind).
#
# Environment: BUILD, HOOK, BENCH_TRIALS, BENCH_CALLS, BENCH_ROUNDS,
# BENCH_SCALE ("1 100 1000"), BENCH_CPU, BENCH_ONLY (names of benchmarks
# to run: datapath rules host hook scale).
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

B_SMOKE=0
[ "${1:-}" = --smoke ] && B_SMOKE=1
if [ "$B_SMOKE" = 1 ]; then
	T=1 CALLS=2000 BATCHES=2 ROUNDS=3 RUNC_ROUNDS=2 SCALE="1 10" SCALE_ROUNDS=3
else
	T=11 CALLS=50000 BATCHES=5 ROUNDS=15 RUNC_ROUNDS=150 SCALE="1 100 1000" SCALE_ROUNDS=40
fi
T=${BENCH_TRIALS:-$T}
CALLS=${BENCH_CALLS:-$CALLS}
ROUNDS=${BENCH_ROUNDS:-$ROUNDS}
SCALE=${BENCH_SCALE:-$SCALE}
HOOK_ROUNDS=$((ROUNDS * 10))
B_CPU=${BENCH_CPU:-$(($(nproc) - 1))}
ONLY=${BENCH_ONLY:-datapath rules host hook scale}

# b_run KEY [SOCKBENCH-ARGS...]: one trial; appends its value to KEY.
b_run()
{
	local key=$1 out

	shift
	out=$("$SB" -C "$B_CPU" -b "$BATCHES" "$@" 2>>"$B_TMP/sb.err") || {
		b_fail "sockbench $*: $(tail -n 1 "$B_TMP/sb.err")"
		return 1
	}
	b_add "$key" "$out"
}

# b_trials CALLS SPEC...: SPEC is "KEY|SOCKBENCH-ARGS"; T trials, the
# variants' order rotated each trial.
b_trials()
{
	local calls=$1 t k n spec args

	shift
	n=$#
	for ((t = 0; t < T; t++)); do
		for ((k = 0; k < n; k++)); do
			spec=${*:$(((t + k) % n + 1)):1}
			read -ra args <<<"${spec#*|}"
			b_run "${spec%%|*}" -n "$calls" "${args[@]}" || return 1
		done
	done
}

# b_exec PREFIX ROUNDS STDIN KEY... -- CMD... [:: CMD...]: sockbench exec;
# column i of its output goes to PREFIX.KEY_i.
b_exec()
{
	local prefix=$1 rounds=$2 in=$3 keys=() line vals i

	shift 3
	while [ "$1" != -- ]; do
		keys+=("$1")
		shift
	done
	"$SB" exec -r "$rounds" -i "$in" -e "$B_TMP/exec.err" "$@" \
		>"$B_TMP/exec.out" || {
		b_fail "timed exec ($prefix): $(tail -n 2 "$B_TMP/exec.err" | tr '\n' ' ')"
		return 1
	}
	while read -r line; do
		read -ra vals <<<"$line"
		for i in "${!keys[@]}"; do
			b_add "$prefix.${keys[$i]}" "${vals[$i]}"
		done
	done <"$B_TMP/exec.out"
}

# b_ms NS: nanoseconds as milliseconds, 3 decimals.
b_ms()
{
	[ -n "$1" ] && awk -v n="$1" 'BEGIN { printf "%.3f\n", n / 1e6 }'
}

# ---- 2, 3, 4, 7: datapath and the seccomp peer -------------------------

bench_datapath()
{
	local none=$B_CG/dp-none empty=$B_CG/dp-empty ours=$B_CG/dp-ours n

	b_log "bench: datapath (setsockopt, getsockopt, socket, seccomp)"
	mkdir -p "$none" "$empty" || return 1
	b_attach_empty "$empty" || return 1
	b_container dp-ours restricted && b_attach dp-ours || return 1
	n=$(b_attached_progs "$ours")
	[ "$n" = 3 ] || { b_fail "restricted attached $n programs, not 3"; return 1; }
	b_trials "$CALLS" \
		"set.a|-c $none set SOL_SOCKET SO_KEEPALIVE 1" \
		"set.b|-c $empty set SOL_SOCKET SO_KEEPALIVE 1" \
		"set.c|-c $ours set SOL_SOCKET SO_KEEPALIVE 1" \
		"set.a2|-c $none set SOL_SOCKET SO_RCVBUF 1048576" \
		"set.b2|-c $empty set SOL_SOCKET SO_RCVBUF 1048576" \
		"set.d|-c $ours set SOL_SOCKET SO_RCVBUF 1048576" \
		"set.seccomp|-s -c $none set SOL_SOCKET SO_KEEPALIVE 1" || return 1
	b_trials "$CALLS" \
		"get.a|-c $none get SOL_SOCKET SO_KEEPALIVE" \
		"get.b|-c $empty get SOL_SOCKET SO_KEEPALIVE" \
		"get.c|-c $ours get SOL_SOCKET SO_KEEPALIVE" \
		"get.b2|-c $empty get SOL_SOCKET SO_MARK" \
		"get.d|-c $ours get SOL_SOCKET SO_MARK EPERM" \
		"zc.a|-c $none zerocopy" \
		"zc.b|-c $empty zerocopy" \
		"zc.c|-c $ours zerocopy" || return 1
	b_trials "$((CALLS / 10))" \
		"sock.a|-c $none socket tcp" \
		"sock.b|-c $empty socket tcp" \
		"sock.c|-c $ours socket tcp" \
		"usock.a|-c $none socket udp" \
		"usock.b|-c $empty socket udp" \
		"usock.c|-c $ours socket udp" || return 1
	b_trials "$CALLS" \
		"deny.allowed|-c $none set SOL_SOCKET SO_MARK 5" \
		"deny.seccomp|-s -c $none set SOL_SOCKET SO_MARK 5 EPERM" \
		"deny.ours|-c $ours set SOL_SOCKET SO_MARK 5 EPERM" \
		"ppid.a|-c $none getppid" \
		"ppid.seccomp|-s -c $none getppid" \
		"ppid.ours|-c $ours getppid" || return 1
	b_detach dp-ours
	b_detach_empty "$empty"
	report_datapath
}

report_datapath()
{
	local s="2. setsockopt ns/call: a none, b empty program, c/d ours"

	b_row_median "$s" "a  no program, SO_KEEPALIVE" set.a ns
	b_row_median "$s" "b  empty program, SO_KEEPALIVE" set.b ns
	b_row_median "$s" "c  ours, option without rule (SO_KEEPALIVE)" set.c ns
	b_row_median "$s" "a' no program, SO_RCVBUF 1 MiB" set.a2 ns
	b_row_median "$s" "b' empty program, SO_RCVBUF 1 MiB" set.b2 ns
	b_row_median "$s" "d  ours, SO_RCVBUF 1 MiB clamped to 64 KiB" set.d ns
	b_row_ratio "$s" "b/a  the kernel's hook" set.b set.a
	b_row_ratio "$s" "c/b  no rule" set.c set.b "<= 1.10"
	b_row_ratio "$s" "d/b' clamp (rewrites)" set.d set.b2 "<= 1.25"
	s="3. getsockopt ns/call: a none, b empty program, c/d ours"
	b_row_median "$s" "a  no program, SO_KEEPALIVE" get.a ns
	b_row_median "$s" "b  empty program, SO_KEEPALIVE" get.b ns
	b_row_median "$s" "c  ours, option without rule (SO_KEEPALIVE)" get.c ns
	b_row_median "$s" "b' empty program, SO_MARK" get.b2 ns
	b_row_median "$s" "d  ours, SO_MARK denied (EPERM)" get.d ns
	b_row_median "$s" "TCP_ZEROCOPY_RECEIVE, no program" zc.a ns
	b_row_median "$s" "TCP_ZEROCOPY_RECEIVE, empty program" zc.b ns
	b_row_median "$s" "TCP_ZEROCOPY_RECEIVE, ours" zc.c ns
	b_row_ratio "$s" "b/a  the kernel's hook" get.b get.a
	b_row_ratio "$s" "c/b  no rule" get.c get.b "<= 1.10"
	b_row_ratio "$s" "d/b' deny rule" get.d get.b2 "<= 1.25"
	b_row_ratio "$s" "ZEROCOPY ours/none" zc.c zc.a "<= 1.05"
	b_row_ratio "$s" "ZEROCOPY ours/empty" zc.c zc.b
	s="4. socket()+close() ns/call"
	b_row_median "$s" "TCP: no program" sock.a ns
	b_row_median "$s" "TCP: empty sock_create" sock.b ns
	b_row_median "$s" "TCP: ours (deny rules, mark, priority)" sock.c ns
	b_row_median "$s" "UDP: no program" usock.a ns
	b_row_median "$s" "UDP: empty sock_create" usock.b ns
	b_row_median "$s" "UDP: ours" usock.c ns
	b_row_ratio "$s" "TCP ours/empty" sock.c sock.b "<= 1.10"
	b_row_ratio "$s" "UDP ours/empty" usock.c usock.b "<= 1.10"
	b_row_ratio "$s" "TCP empty/none" sock.b sock.a
	s="7. peer: seccomp filter denying setsockopt(SOL_SOCKET, SO_MARK), ns/call"
	b_row_median "$s" "setsockopt(SO_MARK) allowed, nothing" deny.allowed ns
	b_row_median "$s" "setsockopt(SO_MARK) denied by seccomp" deny.seccomp ns
	b_row_median "$s" "setsockopt(SO_MARK) denied by our rule" deny.ours ns
	b_row_median "$s" "getppid, nothing" ppid.a ns
	b_row_median "$s" "getppid under the seccomp filter" ppid.seccomp ns
	b_row_median "$s" "getppid in our policed cgroup" ppid.ours ns
	b_row_median "$s" "setsockopt(SO_KEEPALIVE) under seccomp" set.seccomp ns
	b_row_ratio "$s" "denied: ours/seccomp" deny.ours deny.seccomp
	b_row_ratio "$s" "denied: seccomp/allowed" deny.seccomp deny.allowed
	b_row_ratio "$s" "getppid: seccomp/none" ppid.seccomp ppid.a
	b_row_ratio "$s" "getppid: ours/none" ppid.ours ppid.a
	b_row_ratio "$s" "KEEPALIVE: seccomp/none" set.seccomp set.a
	b_row_ratio "$s" "KEEPALIVE: ours/none" set.c set.a
}

# ---- 5: rule count -----------------------------------------------------

bench_rules()
{
	local cfg k specs=()

	b_log "bench: rule count"
	# SO_RCVBUF clamped, plus k-1 deny rules on numeric SOL_SOCKET options.
	cfg=$(b_config rules '
		def rules(k): [{level: "SOL_SOCKET", option: "SO_RCVBUF",
				action: "clamp", max: 65536}] +
			[range(1; k) | {level: "SOL_SOCKET", option: (3000 + .),
					action: "deny"}];
		.annotations.allow_policies += ["rules1", "rules16", "rules256"] |
		.policies += {rules1: {setsockopt: rules(1)},
			      rules16: {setsockopt: rules(16)},
			      rules256: {setsockopt: rules(256)}}') || return 1
	for k in 1 16 256; do
		b_container "rules$k" "rules$k" && b_attach "rules$k" "$cfg" ||
			return 1
		specs+=("rules.$k.hit|-c $B_CG/rules$k set SOL_SOCKET SO_RCVBUF 4096"
			"rules.$k.miss|-c $B_CG/rules$k set SOL_SOCKET SO_KEEPALIVE 1")
	done
	# The last rule is in the map: its option is refused.
	b_run rules.check -n 10 -c "$B_CG/rules256" set SOL_SOCKET 3255 1 EPERM ||
		return 1
	b_trials "$CALLS" "${specs[@]}" || return 1
	for k in 1 16 256; do
		b_detach "rules$k" "$cfg"
	done
	local s="5. rule count: setsockopt ns/call with 1, 16, 256 rules"
	for k in 1 16 256; do
		b_row_median "$s" "$k rule(s): SO_RCVBUF (rule, within the clamp)" "rules.$k.hit" ns
		b_row_median "$s" "$k rule(s): SO_KEEPALIVE (no rule)" "rules.$k.miss" ns
	done
	b_row_ratio "$s" "256/1, option with a rule" rules.256.hit rules.1.hit "<= 1.05"
	b_row_ratio "$s" "256/1, option, no rule" rules.256.miss rules.1.miss "<= 1.05"
	b_row_ratio "$s" "16/1, option with a rule" rules.16.hit rules.1.hit "<= 1.05"
}

# ---- 6: host impact ----------------------------------------------------

# host_keys STATE: the static-key counts (sockbench keys), once per state.
host_keys()
{
	local keys

	keys=$("$SB" keys "$B_CG/host-scratch" 2>>"$B_TMP/sb.err") || {
		b_fail "sockbench keys: $(tail -n 1 "$B_TMP/sb.err")"
		return 1
	}
	[ -f "$B_TMP/keys.$1" ] || echo "$keys" >"$B_TMP/keys.$1"
}

host_trial()
{
	local state=$1 by=$B_CG/host-bystander

	case $state in
	setonly) b_attach host-setonly || return 1 ;;
	restricted) b_attach host-restricted || return 1 ;;
	esac
	host_keys "$state" &&
		b_run "host.$state.set" -n "$CALLS" -c "$by" set SOL_SOCKET SO_KEEPALIVE 1 &&
		b_run "host.$state.get" -n "$CALLS" -c "$by" get SOL_SOCKET SO_KEEPALIVE &&
		b_run "host.$state.sock" -n "$((CALLS / 10))" -c "$by" socket tcp
	local r=$?
	case $state in
	setonly) b_detach host-setonly ;;
	restricted) b_detach host-restricted ;;
	esac
	return "$r"
}

key_of()
{
	sed -n "s/.*$2=\([a-z]*\).*/\1/p" "$B_TMP/keys.$1" 2>/dev/null
}

bench_host()
{
	local states=(none setonly restricted) t k s

	b_log "bench: host impact"
	mkdir -p "$B_CG/host-bystander" "$B_CG/host-scratch" || return 1
	b_container host-setonly setonly && b_container host-restricted restricted ||
		return 1
	for ((t = 0; t < T; t++)); do
		for ((k = 0; k < 3; k++)); do
			host_trial "${states[$(((t + k) % 3))]}" || return 1
		done
	done
	s="6. host impact: calls in a cgroup with NO program, ns/call"
	b_row "$s" "keys, nothing of ours: $(cat "$B_TMP/keys.none")" "" -
	b_row "$s" "keys, setonly elsewhere: $(cat "$B_TMP/keys.setonly")" "" -
	b_row "$s" "keys, restricted elsewhere: $(cat "$B_TMP/keys.restricted")" "" -
	b_row "$s" "getsockopt key, setonly attached elsewhere" \
		"$(key_of setonly getsockopt)" state "== off"
	b_row_median "$s" "setsockopt: no program anywhere" host.none.set ns
	b_row_median "$s" "setsockopt: setonly elsewhere" host.setonly.set ns
	b_row_median "$s" "setsockopt: restricted elsewhere" host.restricted.set ns
	b_row_median "$s" "getsockopt: no program anywhere" host.none.get ns
	b_row_median "$s" "getsockopt: setonly elsewhere (key off)" host.setonly.get ns
	b_row_median "$s" "getsockopt: restricted elsewhere (key on)" host.restricted.get ns
	b_row_median "$s" "socket()+close(): no program anywhere" host.none.sock ns
	b_row_median "$s" "socket()+close(): restricted elsewhere" host.restricted.sock ns
	b_row_ratio "$s" "set: restricted/nowhere" host.restricted.set host.none.set
	b_row_ratio "$s" "get: setonly/nowhere" host.setonly.get host.none.get
	b_row_ratio "$s" "get: restricted/nowhere" host.restricted.get host.none.get
	b_row_ratio "$s" "socket: restricted/nowhere" host.restricted.sock host.none.sock
}

# ---- 1: hook latency ---------------------------------------------------

runc_bundle()
{
	local v=$1 dir=$B_TMP/runc-$1 hooks=null ann='{}'
	local env="[\"PATH=/usr/sbin:/usr/bin:/sbin:/bin\", \"OCI_SOCKOPT_HOOK_STATE_DIR=$B_TMP/state\"]"

	mkdir -p "$dir" && (cd "$dir" && runc spec) || return 1
	case $v in
	true) hooks='{"prestart": [{"path": "/bin/true"}],
		      "poststop": [{"path": "/bin/true"}]}' ;;
	ours)
		ann='{"sockopt-hook.io/policy": "restricted"}'
		hooks=$(jq -n --arg h "$HOOK" --arg c "$B_CONFIG" --argjson env "$env" '
			{prestart: [{path: $h, args: [$h, "--config", $c, "prestart"], env: $env}],
			 poststop: [{path: $h, args: [$h, "--config", $c, "poststop"], env: $env}]}')
		;;
	esac
	jq --arg root "$B_TMP/rootfs" --argjson hooks "$hooks" --argjson ann "$ann" '
		.process.terminal = false | .process.args = ["/bin/true"] |
		.root = {path: $root, readonly: true} | .annotations = $ann |
		if $hooks == null then del(.hooks) else .hooks = $hooks end' \
		"$dir/config.json" >"$dir/config.json.new" &&
		mv "$dir/config.json.new" "$dir/config.json" && echo "$dir"
}

# hook_runc OTHER-STATE: runc run of a container that exits at once, with
# no hook, /bin/true hooks, ours (fresh) and ours while another container
# shares the policy (OTHER-STATE attached just before, released after).
hook_runc()
{
	local v dirs=() cmds=() h=("$HOOK" --config "$B_CONFIG") opk oup

	mkdir -p "$B_TMP/rootfs/bin" "$B_TMP/rootfs/proc" "$B_TMP/rootfs/dev" &&
		cp /bin/busybox "$B_TMP/rootfs/bin/" &&
		ln -s busybox "$B_TMP/rootfs/bin/true" || return 1
	for v in none true ours; do
		dirs+=("$(runc_bundle "$v")") || return 1
		B_RUNC_IDS+=("sb$$-runc-$v")
		cmds+=(runc run --bundle "${dirs[-1]}" "sb$$-runc-$v" :::)
	done
	B_RUNC_IDS+=("sb$$-runc-shared")
	read -ra opk <<<"$(b_park hook-other)"
	read -ra oup <<<"$(b_unpark hook-other)"
	cmds+=("<$1" "${h[@]}" prestart :: runc run --bundle "${dirs[-1]}"
		"sb$$-runc-shared" :: "${opk[@]}" :: "<$1" "${h[@]}" poststop ::
		"${oup[@]}")
	b_exec runc "$RUNC_ROUNDS" /dev/null none true ours other_on shared \
		opk other_off oup -- "${cmds[@]}"
}

# hook_strace STATE: which system calls prestart makes, by count (strace
# makes every call far slower, so its times are not shown).
hook_strace()
{
	local st=$1 i

	command -v strace >/dev/null || { b_log "bench: no strace: no syscall breakdown"; return 0; }
	for ((i = 0; i < 3; i++)); do
		# shellcheck disable=SC2015 # b_fail when either fails
		strace -f -o "$B_TMP/strace.pre.$i" \
			"$HOOK" --config "$B_CONFIG" prestart <"$st" 2>>"$B_TMP/hook.err" &&
			b_parked hook "$HOOK" --config "$B_CONFIG" poststop <"$st" \
				2>>"$B_TMP/hook.err" ||
			{ b_fail "hook under strace"; return 1; }
	done
	# "PID name(args) = R"; bpf() is split by its command.
	cat "$B_TMP"/strace.pre.* | awk '
		$2 ~ /^[a-z_0-9]+\(/ {
			s = $2; sub(/\(.*/, "", s)
			if (s == "bpf") { s = $2; sub(/^bpf\(BPF_/, "", s); sub(/,.*/, "", s); s = "bpf " s }
			n[s]++; calls++
		}
		/\/sys\/kernel\/btf\/vmlinux/ { btf++ }
		END {
			printf "%d syscalls; vmlinux BTF opened %d time(s)\n", calls / 3, btf / 3
			for (s in n) printf "%d %s\n", n[s] / 3, s
		}' >"$B_TMP/strace.sum"
	{
		head -n 1 "$B_TMP/strace.sum"
		tail -n +2 "$B_TMP/strace.sum" | sort -k1,1 -n -r | head -n 10 |
			awk '{ c = $1; $1 = ""; printf "%s%s x%d", (NR > 1 ? ", " : ""), substr($0, 2), c }'
		echo
	} >"$B_OUT/strace.txt"
}

# hook_perf STATE: where prestart+poststop's CPU time goes, as a share of
# the hook process's samples, if perf works here.
hook_perf()
{
	local st=$1 total

	command -v perf >/dev/null && [ "$B_SMOKE" = 0 ] || return 0
	# shellcheck disable=SC2016 # expanded by the inner bash
	perf record -q -F 10000 -g -o "$B_TMP/perf.data" -- bash -c '
		for i in $(seq 1 "$3"); do
			"$0" --config "$1" prestart <"$2" && $4 &&
				"$0" --config "$1" poststop <"$2" && $5
		done' "$HOOK" "$B_CONFIG" "$st" "$ROUNDS" "$(b_park hook)" \
		"$(b_unpark hook)" >/dev/null 2>&1 || return 0
	# comm is cut to 15 characters; perf 6.1's --comm filter drops DSOs.
	perf report -i "$B_TMP/perf.data" --no-children --sort comm,dso \
		--stdio -g none 2>/dev/null |
		awk '$2 == "oci-sockopt-hoo" { sub(/%/, "", $1); print $1, $3 }' \
		>"$B_TMP/perf.dso"
	total=$(awk '{ t += $1 } END { print t + 0 }' "$B_TMP/perf.dso")
	[ "$total" != 0 ] || return 0
	perf report -i "$B_TMP/perf.data" --children --sort comm,sym --stdio \
		-g none 2>/dev/null |
		awk '$3 == "oci-sockopt-hoo" { sub(/%/, "", $1); print $1, $5 }' \
		>"$B_TMP/perf.sym"
	# Three lines: self time by DSO; the bpf() path; the rest.
	awk -v t="$total" 'NR <= 4 { gsub(/[][]/, "", $2); sub(/-x86-64\.so\.2|\.so\.6/, "", $2)
		printf "%s%s %.0f%%", (NR > 1 ? ", " : "by DSO: "), $2, 100 * $1 / t }
		END { print "" }' "$B_TMP/perf.dso" >"$B_OUT/perf.txt"
	awk -v t="$total" '{ p[$2] = 100 * $1 / t }
		END {
			printf "bpf() %.0f%%: prog load %.0f%% (verifier %.0f%%, JIT %.0f%%), BTF load %.0f%%, map create %.0f%%, attach %.1f%%\n",
				p["__x64_sys_bpf"], p["bpf_prog_load"], p["bpf_check"],
				p["bpf_int_jit_compile"], p["btf_new_fd"], p["map_create"],
				p["__cgroup_bpf_attach"]
			printf "libbpf memcg probe %.0f%%, openat %.0f%%, close %.0f%%, JSON %.1f%%; perf'"'"'s BPF events %.0f%% (artifact)\n",
				p["probe_memcg_account"], p["__x64_sys_openat"],
				p["__x64_sys_close"], p["json_tokener_parse_ex"],
				p["perf_event_bpf_event"]
		}' "$B_TMP/perf.sym" >>"$B_OUT/perf.txt"
}

# bench_hook: the hook alone in three host states, interleaved round by
# round (the states' order rotating); then runc; then the breakdown.
#   cold:   nothing else attached anywhere: prestart turns the three
#           static keys on and poststop turns them off (text patching);
#   fresh:  empty programs elsewhere keep the keys on, as on any host with
#           a policed container, but nothing shares our policy's programs;
#   shared: another container with the same policy is attached too.
bench_hook()
{
	local st rst cfg_empty scratch=$B_CG/hook-keys h=("$HOOK" --config "$B_CONFIG")
	local pk up opk oup

	b_log "bench: hook latency"
	mkdir -p "$scratch" || return 1
	B_EMPTY+=("$scratch")
	b_container hook restricted && b_container hook-other restricted || return 1
	st=$(b_state hook)
	rst=$(b_state hook-other)
	read -ra pk <<<"$(b_park hook)"
	read -ra up <<<"$(b_unpark hook)"
	read -ra opk <<<"$(b_park hook-other)"
	read -ra oup <<<"$(b_unpark hook-other)"
	B_ATTACHED+=("hook $B_CONFIG" "hook-other $B_CONFIG")
	# poststop comes with the init parked out of its cgroup, as after a
	# real stop (the park/unpark steps are timed but not reported).
	b_exec alone "$HOOK_ROUNDS" "$st" \
		true cold_pre pk1 cold_post up1 \
		keys_on true2 pre pk2 post up2 keys_off \
		keys_on2 other_on true3 shared_pre pk3 shared_post up3 \
		opk other_off oup keys_off2 -- \
		/bin/true :: "${h[@]}" prestart :: "${pk[@]}" :: \
		"${h[@]}" poststop :: "${up[@]}" ::: \
		"$SB" attach-empty "$scratch" :: /bin/true :: \
		"${h[@]}" prestart :: "${pk[@]}" :: "${h[@]}" poststop :: \
		"${up[@]}" :: "$SB" detach-empty "$scratch" ::: \
		"$SB" attach-empty "$scratch" :: "<$rst" "${h[@]}" prestart :: \
		/bin/true :: "${h[@]}" prestart :: "${pk[@]}" :: \
		"${h[@]}" poststop :: "${up[@]}" :: "${opk[@]}" :: \
		"<$rst" "${h[@]}" poststop :: "${oup[@]}" :: \
		"$SB" detach-empty "$scratch" || return 1
	b_attach_empty "$scratch" || return 1
	hook_runc "$rst" || return 1
	# The same state and config, with the policy emptied: everything but
	# loading and attaching.
	cfg_empty=$(b_config empty '.policies.restricted = {}') || return 1
	b_exec parts "$HOOK_ROUNDS" "$st" true version validate noop pre pk post up -- \
		/bin/true ::: "$HOOK" --version ::: \
		"${h[@]}" validate "$B_CONFIG" ::: \
		"$HOOK" --config "$cfg_empty" prestart ::: \
		"${h[@]}" prestart :: "${pk[@]}" :: "${h[@]}" poststop :: \
		"${up[@]}" || return 1
	hook_strace "$st" || return 1
	hook_perf "$st"
	b_detach_empty "$scratch"
	report_hook
}

report_hook()
{
	local s="1. hook latency, ms" v p50 p99

	b_detail "$s" "runc run, no hook (p50)" "$(b_ms "$(b_stat runc.none 50)")" ms
	b_detail "$s" "runc run, /bin/true prestart+poststop (p50)" "$(b_ms "$(b_stat runc.true 50)")" ms
	b_detail "$s" "runc run, ours restricted, fresh (p50)" "$(b_ms "$(b_stat runc.ours 50)")" ms
	b_detail "$s" "runc run, ours restricted, shared (p50)" "$(b_ms "$(b_stat runc.shared 50)")" ms
	b_row "$s" "$(printf 'runc run p50: no hook %.1f, /bin/true %.1f, ours fresh %.1f, shared %.1f' \
		"$(b_ms "$(b_stat runc.none 50)")" "$(b_ms "$(b_stat runc.true 50)")" \
		"$(b_ms "$(b_stat runc.ours 50)")" "$(b_ms "$(b_stat runc.shared 50)")")" "" -
	b_row "$s" "runc: ours fresh - /bin/true (paired p50)" \
		"$(b_pair_ms runc.ours runc.true)" ms "<= 1"
	b_row "$s" "runc: ours shared - /bin/true (paired p50)" \
		"$(b_pair_ms runc.shared runc.true)" ms "<= 1"
	b_row "$s" "hook alone, fed a saved state (p50 / p99):" "" -
	for v in "true2:/bin/true" "cold_pre:prestart, cold host" \
		"pre:prestart, fresh" "shared_pre:prestart, shared" \
		"post:poststop, fresh"; do
		p50=$(b_ms "$(b_stat "alone.${v%%:*}" 50)")
		p99=$(b_ms "$(b_stat "alone.${v%%:*}" 99)")
		b_detail "$s" "hook alone: ${v#*:} (p50)" "$p50" ms
		b_detail "$s" "hook alone: ${v#*:} (p99)" "$p99" ms
		b_row "$s" "  ${v#*:}" "${p50:-?} / ${p99:-?}" ms
	done
	b_row "$s" "prestart fresh - /bin/true (paired p50)" \
		"$(b_pair_ms alone.pre alone.true2)" ms "<= 1"
	b_row "$s" "prestart shared - /bin/true (paired p50)" \
		"$(b_pair_ms alone.shared_pre alone.true3)" ms "<= 1"
	b_row "$s" "poststop fresh - /bin/true (paired p50)" \
		"$(b_pair_ms alone.post alone.true2)" ms
	b_row "$s" "cold - fresh prestart (turning the keys on)" \
		"$(b_pair_ms alone.cold_pre alone.pre)" ms
	s="1b. where a fresh prestart's time goes (ms, paired p50; keys on)"
	b_row "$s" "fork+exec+wait of /bin/true" "$(b_ms "$(b_stat parts.true 50)")" ms
	b_row "$s" "+ exec of the hook, ld.so, main: --version" \
		"$(b_pair_ms parts.version parts.true)" ms
	b_row "$s" "+ operator config: validate" \
		"$(b_pair_ms parts.validate parts.version)" ms
	b_row "$s" "+ state, bundle, policy: prestart, empty policy" \
		"$(b_pair_ms parts.noop parts.validate)" ms
	b_row "$s" "+ load, verify, attach, record: prestart" \
		"$(b_pair_ms parts.pre parts.noop)" ms
	b_row "$s" "= prestart" "$(b_ms "$(b_stat parts.pre 50)")" ms
	if [ -s "$B_OUT/strace.txt" ]; then
		b_row "$s" "strace: $(head -n 1 "$B_OUT/strace.txt")" "" -
		b_row "$s" "  $(tail -n +2 "$B_OUT/strace.txt")" "" -
	fi
	if [ -s "$B_OUT/perf.txt" ]; then
		while IFS= read -r v; do
			b_row "$s" "perf, hook CPU time: $v" "" -
		done <"$B_OUT/perf.txt"
	fi
}

# ---- 8: scale ----------------------------------------------------------

# scale_mem: "PROGS MAPS MEMLOCK JITED" summed over the sh_* programs
# loaded and the maps they use (each counted once, so shared copies too).
scale_mem()
{
	local progs maps

	progs=$(bpftool -j prog show) && maps=$(bpftool -j map show) || return 1
	jq -rn --argjson p "$progs" --argjson m "$maps" '
		[$p[] | select((.name // "") | startswith("sh_"))] as $ours |
		([$ours[] | .map_ids // [] | .[]] | unique |
		 map({key: tostring, value: true}) | from_entries) as $ids |
		[$m[] | select($ids[.id | tostring])] as $maps |
		[($ours | length), ($maps | length),
		 (($ours | map(.bytes_memlock // 0) | add // 0) +
		  ($maps | map(.bytes_memlock // 0) | add // 0)),
		 ($ours | map(.bytes_jited // 0) | add // 0)] |
		map(tostring) | join(" ")'
}

# scale_rows SIZE BASE-MEM MEM
scale_rows()
{
	local size=$1 s="8. scale: N policed containers (one sleeping process each)"
	local -a b m
	local pre50 pre99 post50 post99 true50 kib

	read -ra b <<<"$2"
	read -ra m <<<"$3"
	pre50=$(b_ms "$(b_stat "scale.$size.pre" 50)")
	pre99=$(b_ms "$(b_stat "scale.$size.pre" 99)")
	post50=$(b_ms "$(b_stat "scale.$size.post" 50)")
	post99=$(b_ms "$(b_stat "scale.$size.post" 99)")
	true50=$(b_ms "$(b_stat "scale.$size.true" 50)")
	kib=$(awk -v a="${m[2]}" -v z="${b[2]}" -v n="$size" \
		'BEGIN { printf "%.2f\n", (a - z) / n / 1024 }')
	b_detail "$s" "N=$size: prestart p50" "$pre50" ms
	b_detail "$s" "N=$size: prestart p99" "$pre99" ms
	b_detail "$s" "N=$size: poststop p50" "$post50" ms
	b_detail "$s" "N=$size: poststop p99" "$post99" ms
	b_detail "$s" "N=$size: /bin/true p50" "$true50" ms
	b_detail "$s" "N=$size: programs of ours loaded" "$((m[0] - b[0]))" count
	b_detail "$s" "N=$size: maps of ours loaded" "$((m[1] - b[1]))" count
	b_detail "$s" "N=$size: JIT code per container" \
		"$(awk -v a="${m[3]}" -v z="${b[3]}" -v n="$size" \
			'BEGIN { printf "%.2f\n", (a - z) / n / 1024 }')" KiB
	b_row "$s" "$(printf 'N=%-5s prestart %s/%s, poststop %s/%s, true %s ms; %d progs %d maps' \
		"$size" "$pre50" "$pre99" "$post50" "$post99" "$true50" \
		"$((m[0] - b[0]))" "$((m[1] - b[1]))")" "" -
	b_row "$s" "  N=$size: memlock per container (progs+maps)" "$kib" KiB \
		"$([ "$size" -ge 1000 ] && echo "<= 32" || echo -)"
}

# scale_ratio SECTION pre|post P FIRST LAST: P-th percentile at LAST / FIRST.
scale_ratio()
{
	local num den

	num=$(b_stat "scale.$5.$2" "$3")
	den=$(b_stat "scale.$4.$2" "$3")
	b_row "$1" "$(printf '%s p%s, N=%s / N=%s %9s / %s ms' "$2" "$3" "$5" "$4" \
		"$(b_ms "$num")" "$(b_ms "$den")")" "$(b_ratio "$num" "$den")" ratio "<= 1.20"
}

# N counts the probe, whose prestart and poststop are timed while N-1
# others stay attached. Empty programs on a scratch cgroup keep the static
# keys on throughout, so that N=1 does not pay for turning them on.
bench_scale()
{
	local size n=0 base mem st i first last sizes pk up
	local s="8. scale: N policed containers (one sleeping process each)"

	b_log "bench: scale ($SCALE)"
	mkdir -p "$B_CG/scale-keys" || return 1
	b_attach_empty "$B_CG/scale-keys" || return 1
	base=$(scale_mem) || { b_fail "bpftool prog/map show"; return 1; }
	b_container scale-probe restricted || return 1
	B_ATTACHED+=("scale-probe $B_CONFIG")
	st=$(b_state scale-probe)
	for size in $SCALE; do
		while [ $((n + 1)) -lt "$size" ]; do
			n=$((n + 1))
			b_container "scale/c$n" restricted && b_attach "scale/c$n" ||
				return 1
		done
		b_log "bench: scale: $size container(s)"
		read -ra pk <<<"$(b_park scale-probe)"
		read -ra up <<<"$(b_unpark scale-probe)"
		b_exec "scale.$size" "$SCALE_ROUNDS" "$st" true pre pk post up -- \
			/bin/true ::: "$HOOK" --config "$B_CONFIG" prestart :: \
			"${pk[@]}" :: "$HOOK" --config "$B_CONFIG" poststop :: \
			"${up[@]}" || return 1
		b_attach scale-probe || return 1
		mem=$(scale_mem) || { b_fail "bpftool prog/map show"; return 1; }
		b_detach scale-probe
		scale_rows "$size" "$base" "$mem"
	done
	first=${SCALE%% *} last=${SCALE##* }
	scale_ratio "$s" pre 50 "$first" "$last"
	scale_ratio "$s" pre 99 "$first" "$last"
	scale_ratio "$s" post 50 "$first" "$last"
	scale_ratio "$s" post 99 "$first" "$last"
	# N=1 is the only size whose prestart loads its own copy.
	read -ra sizes <<<"$SCALE"
	[ ${#sizes[@]} -ge 3 ] && scale_ratio "$s" pre 50 "${sizes[1]}" "$last"
	b_log "bench: scale: releasing $n container(s)"
	for ((i = n; i >= 1; i--)); do
		b_detach "scale/c$i"
	done
	b_detach_empty "$B_CG/scale-keys"
}

# ---- the table ---------------------------------------------------------

print_table()
{
	jq -r --argjson all "${BENCH_VERBOSE:-0}" '
		select($all == 1 or (.detail | not)) |
		[.section, .label, (.value // "" | tostring), .unit, .target,
		 .verdict] | @tsv' "$B_OUT/rows.jsonl" | awk -F '\t' '
		$1 != sec { sec = $1; printf "== %s\n", sec }
		{ unit = ($4 == "ratio" || $4 == "count" || $4 == "state" || $4 == "-") ? "" : $4
		  if ($3 == "") { printf "  %s\n", $2; next }
		  t = ($5 == "-") ? "" : $5; v = ($6 == "-") ? "" : $6
		  printf "  %-48s %13s %-3s %-8s %s\n", $2, $3, unit, t, v }'
}

write_results()
{
	local rev

	rev=$(git -C "$B_TOP" describe --always --dirty 2>/dev/null || echo unknown)
	jq -s --arg kernel "$(uname -r)" --arg cpus "$(nproc)" --arg rev "$rev" \
		--arg hook "$("$HOOK" --version 2>/dev/null)" --arg date "$(date -u +%FT%TZ)" \
		--argjson smoke "$B_SMOKE" --argjson trials "$T" --argjson calls "$CALLS" \
		--argjson rounds "$ROUNDS" --arg cpu "$B_CPU" '
		{date: $date, kernel: $kernel, cpus: ($cpus | tonumber),
		 pinned_cpu: ($cpu | tonumber), git: $rev, hook: $hook,
		 smoke: ($smoke == 1), trials: $trials, calls_per_batch: $calls,
		 runc_rounds: $rounds, rows: .}' "$B_OUT/rows.jsonl" \
		>"$B_OUT/results.json"
}

main()
{
	local name r t0 start=$SECONDS

	b_init
	r=$?
	if [ "$r" = 77 ] && [ "$B_SMOKE" = 1 ]; then
		echo "bench-smoke: SKIP (needs root)"
		exit 0
	fi
	[ "$r" = 0 ] || exit 1
	for name in datapath rules host hook scale; do
		case " $ONLY " in
		*" $name "*)
			t0=$SECONDS
			"bench_$name" || b_fail "benchmark $name"
			b_log "bench: $name took $((SECONDS - t0)) s"
			;;
		esac
	done
	if [ -s "$B_OUT/rows.jsonl" ]; then
		write_results
		print_table | tee "$B_OUT/table.txt"
	fi
	echo "bench: $((SECONDS - start)) s; results in $B_OUT/results.json$(
		[ "$B_SMOKE" = 1 ] && echo " (smoke run: no verdicts)")"
}

main "$@"
