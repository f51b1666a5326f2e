#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `metrics`, scraped for real: runc containers with CRI names run policed
# (restricted, setonly), with bypass asked on a kernel without it
# (fallback), unpoliced, and refused; their workloads make known socket
# calls. `metrics --output DIR/oci-sockopt-hook.prom` writes the file,
# Debian's node_exporter (textfile collector, unpacked from its package,
# not installed) serves it on loopback, and the scrape holds exactly the
# expected series: per-container info and socket calls by program and
# action, hook runs by stage/outcome/reason, the duration histogram.
# `promtool check metrics` finds nothing to say about our file or the
# scrape. Concurrent metrics runs never show a scrape or a reader half a
# file; hostile label values (a record naming a pod with quotes, a
# backslash and a newline) come out escaped and read back intact; after
# delete the container's series are gone and its release is counted, and
# so is a release by gc.
#
# Modules: `metrics.c`, `stats.c`, `cmd_metrics.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
# shellcheck source=../lib/promtools.sh
. "$here/../lib/promtools.sh"

ct_require runc
tap_require_cmd curl
promtools_require
ct_init
BASE=$(ct_snapshot progs cgroups)
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
P=oci_sockopt_hook_

# bypass-prot-mem is refused by this kernel: "warn" starts the container
# without it (outcome fallback) rather than refuse it.
WARN=$(ct_config warn '.on_unsupported = "warn"')
ONLYBULK=$(ct_config onlybulk \
	'.annotations.allow_policies = ["bulk"] | .on_unsupported = "warn"')

# workload CALL...: sockcheck runs (each "a b" is one run of sockcheck
# a b), then READY, then sleep.
workload()
{
	local script='' call

	for call in "$@"; do
		script+="sockcheck $call; "
	done
	echo "${script}echo READY; exec sleep 600"
}

A=$(ct_id a) B=$(ct_id b) C=$(ct_id c) D=$(ct_id d) E=$(ct_id e)

# A: restricted: 3 SO_MARK sets denied, 2 rcvbuf clamped, 1 get denied;
# 6 sockets.
ct_cri ns-a web-1 app
b=$(ct_bundle -c "$WARN" "${CRI[@]}" -a sockopt-hook.io/policy=restricted a -- \
	sh -c "$(workload 'set-mark 5' 'set-mark 5' 'set-mark 5' \
		'rcvbuf 4194304' 'rcvbuf 4194304' get-mark)")
ct_start_ok "A (restricted, ns-a/web-1/app) runs its calls" runc "$A" "$b" '^READY$' ||
	tap_done
tap_is "$(grep -c '^setsockopt=EPERM$' "$CT_OUT") $(grep -c '^rcvbuf=131072$' "$CT_OUT") $(grep -c '^mark=EPERM$' "$CT_OUT")" \
	"3 2 1" "A: the policy denied 3 SO_MARK, clamped 2 SO_RCVBUF, denied 1 get" ||
	tap_diag "$(cat "$CT_OUT")"

# B: setonly: 4 SO_MARK sets denied; 4 sockets.
ct_cri ns-a web-2 sidecar
b=$(ct_bundle -c "$WARN" "${CRI[@]}" -a sockopt-hook.io/policy=setonly b -- \
	sh -c "$(workload 'set-mark 7' 'set-mark 7' 'set-mark 7' 'set-mark 7')")
ct_start_ok "B (setonly, ns-a/web-2/sidecar) runs its calls" runc "$B" "$b" '^READY$' ||
	tap_done
tap_is "$(grep -c '^setsockopt=EPERM$' "$CT_OUT")" 4 "B: the policy denied 4 SO_MARK sets"

# C: bulk with bypass-prot-mem, which this kernel lacks: fallback.
ct_cri ns-b batch-1 worker
b=$(ct_bundle -c "$WARN" "${CRI[@]}" -a sockopt-hook.io/policy=bulk \
	-a sockopt-hook.io/bypass-prot-mem=true c -- \
	sh -c "$(workload 'socket inet stream' 'socket inet stream')")
ct_start_ok "C (bulk + bypass-prot-mem, ns-b/batch-1/worker) starts" runc "$C" "$b" '^READY$' ||
	tap_done

# D: no policy: unpoliced.
ct_cri ns-b batch-1 idle
b=$(ct_bundle -c "$WARN" "${CRI[@]}" d -- sh -c "$(workload)")
ct_start_ok "D (no policy, ns-b/batch-1/idle) starts" runc "$D" "$b" '^READY$' ||
	tap_done

# E: a policy the config does not allow: refused.
ct_cri ns-c denied app
b=$(ct_bundle -c "$ONLYBULK" "${CRI[@]}" -a sockopt-hook.io/policy=restricted e -- \
	sh -c "$(workload)")
ct_start runc "$E" "$b"
[ "$CT_RC" != 0 ]
tap_ok $? "E (restricted, not in allow_policies) is refused" || ct_diag_run "$b"
# A refusal's reason is its error_reason() token: here a policy not in
# allow_policies.
REFUSED_REASON=${REFUSED_REASON:-policy_not_allowed}

OUT=$CT_TMP/textfile
mkdir -p "$OUT" && chmod 0755 "$OUT"
F=$OUT/oci-sockopt-hook.prom
err=$("$HOOK" metrics --output "$F" 2>&1)
tap_ok $? "metrics --output DIR/oci-sockopt-hook.prom exits 0" || tap_diag "$err"
tap_is "$err" "" "metrics says nothing when all is well"
tap_is "$(stat -c %a "$F")" 644 "the file is readable by node_exporter's user (0644)"
tap_is "$(ls -A "$OUT")" oci-sockopt-hook.prom "no temp file is left beside it"
stdout=$("$HOOK" metrics 2>&1)
tap_is "$stdout" "$(cat "$F")" "metrics without --output prints the same on stdout"
lint=$("$PROMTOOL" check metrics <"$F" 2>&1)
tap_ok $? "promtool check metrics: our file is clean" || tap_diag "$lint"
tap_is "$lint" "" "promtool check metrics: not one remark on our file"

# node_exporter DIR: serves DIR's *.prom on a free loopback port, with
# only the textfile collector. Sets NE_PID and NE_URL.
node_exporter()
{
	local port

	port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$NODE_EXPORTER" --web.listen-address="127.0.0.1:$port" \
		--collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$1" >"$CT_TMP/ne.log" 2>&1 &
	NE_PID=$!
	CT_PIDS+=("$NE_PID")
	NE_URL=http://127.0.0.1:$port/metrics
	for _ in $(seq 1 100); do
		curl -sf -o /dev/null "$NE_URL" && return 0
		sleep 0.1
	done
	tap_diag "node_exporter did not answer:" "$(cat "$CT_TMP/ne.log")"
	return 1
}

scrape()
{
	curl -sf --max-time 10 "$NE_URL"
}

node_exporter "$OUT"
tap_ok $? "node_exporter (textfile collector on $OUT) answers on loopback" || tap_done
S=$(scrape)
tap_ok $? "scrape /metrics"
lint=$("$PROMTOOL" check metrics <<<"$S" 2>&1)
tap_ok $? "promtool check metrics: the scrape is clean" || tap_diag "$lint"
tap_like "$S" $'\nnode_textfile_scrape_error 0\n' \
	"node_exporter read our file without error"
ours=$(promtools_series "$P" <"$F")
tap_ok $? "our file parses, with no series twice" || tap_diag "$ours"
served=$(promtools_series "$P" <<<"$S")
tap_ok $? "the scrape parses, with no series twice"
tap_is "$served" "$ours" "node_exporter serves exactly our series, with our values"

# has LINE...: each canonical series line is in the scrape.
has()
{
	local line miss=()

	for line in "$@"; do
		grep -Fxq -- "$line" <<<"$served" || miss+=("$line")
	done
	[ ${#miss[@]} = 0 ] && return 0
	tap_diag "missing:" "${miss[@]}" "served:" "$served"
	return 1
}

# calls ID NS POD CONTAINER POLICY PROGRAM ACTION VALUE
calls()
{
	echo "${P}socket_calls_total{action=\"$7\",container=\"$4\",container_id=\"$1\",namespace=\"$2\",pod=\"$3\",policy=\"$5\",program=\"$6\"} $8"
}

version=$("$HOOK" --version 2>/dev/null | sed -n '1s/^oci-sockopt-hook \([^ ]*\).*/\1/p')
has "${P}build_info{version=\"$version\"} 1"
tap_ok $? "build_info{version=\"$version\"} 1 (what --version says)"
tap_is "$(grep -c "^${P}build_info" <<<"$served")" 1 "one build_info series"

has "${P}containers_attached{} 3"
tap_ok $? "containers_attached 3 (A, B, C: D is unpoliced, E refused)"

has "${P}container_info{bypass=\"false\",container=\"app\",container_id=\"$A\",mode=\"enforce\",namespace=\"ns-a\",pod=\"web-1\",policy=\"restricted\"} 1" \
	"${P}container_info{bypass=\"false\",container=\"sidecar\",container_id=\"$B\",mode=\"enforce\",namespace=\"ns-a\",pod=\"web-2\",policy=\"setonly\"} 1" \
	"${P}container_info{bypass=\"true\",container=\"worker\",container_id=\"$C\",mode=\"enforce\",namespace=\"ns-b\",pod=\"batch-1\",policy=\"bulk\"} 1"
tap_ok $? "container_info for A, B and C with their CRI names, policy and bypass"
tap_is "$(grep -c "^${P}container_info" <<<"$served")" 3 \
	"container_info: no series for the unpoliced D or the refused E"

has "$(calls "$A" ns-a web-1 app restricted setsockopt denied 3)" \
	"$(calls "$A" ns-a web-1 app restricted setsockopt clamped 2)" \
	"$(calls "$A" ns-a web-1 app restricted getsockopt denied 1)" \
	"$(calls "$A" ns-a web-1 app restricted sock_create allowed 6)" \
	"$(calls "$A" ns-a web-1 app restricted setsockopt forced 0)" \
	"$(calls "$A" ns-a web-1 app restricted sock_create denied 0)"
tap_ok $? "A's socket calls: 3 set denied, 2 clamped, 1 get denied, 6 sockets, the rest 0"
has "$(calls "$B" ns-a web-2 sidecar setonly setsockopt denied 4)" \
	"$(calls "$B" ns-a web-2 sidecar setonly setsockopt clamped 0)"
tap_ok $? "B's socket calls: 4 set denied, nothing clamped"
tap_is "$(grep -c "^${P}socket_calls_total{.*container_id=\"$A\"" <<<"$served")" 8 \
	"A: one series per (program, action) the programs count: 8"

runs()
{
	echo "${P}runs_total{outcome=\"$2\",reason=\"$3\",stage=\"$1\"} $4"
}
has "$(runs prestart attached '' 2)" "$(runs prestart unpoliced '' 1)" \
	"$(runs prestart fallback bypass_prot_mem_unsupported 1)" \
	"$(runs prestart refused "$REFUSED_REASON" 1)"
tap_ok $? "runs_total: prestart attached 2, unpoliced 1, fallback (bypass_prot_mem_unsupported) 1, refused ($REFUSED_REASON) 1"
tap_is "$(grep -c "^${P}runs_total" <<<"$served")" 4 "runs_total: those four rows and no other"
has "${P}run_duration_seconds_count{stage=\"prestart\"} 5" \
	"${P}run_duration_seconds_bucket{le=\"+Inf\",stage=\"prestart\"} 5" \
	"${P}run_duration_seconds_count{stage=\"poststop\"} 0"
tap_ok $? "run_duration_seconds: 5 prestart runs timed, in the +Inf bucket too"
sum=$(sed -n "s/^${P}run_duration_seconds_sum{stage=\"prestart\"} //p" <<<"$served")
awk -v s="$sum" 'BEGIN { exit !(s > 0 && s < 25) }'
tap_ok $? "run_duration_seconds_sum{prestart} is a plausible time ($sum s)"
le=$(grep "^${P}run_duration_seconds_bucket{le=\"[^\"]*\",stage=\"prestart\"}" <<<"$served" |
	sed 's/.*le="\([^"]*\)".* \([0-9]*\)$/\1 \2/' | sort -g | awk '{ print $2 }' | tr '\n' ' ')
awk -v l="$le" 'BEGIN { n = split(l, v, " "); for (i = 2; i <= n; i++) if (v[i] < v[i - 1]) exit 1 }'
tap_ok $? "the prestart buckets are cumulative ($le)"
has "${P}collect_errors{} 0"
tap_ok $? "collect_errors 0"

# Atomicity: 4 writers rewrite the file in a loop while node_exporter is
# scraped and the file read, 100 times: every scrape and read sees a
# whole file.
lines=$(wc -l <"$F")
stop=$CT_TMP/stop-writers
writers=()
for w in 1 2 3 4; do
	(runs=0
	while ! [ -e "$stop" ]; do
		"$HOOK" metrics --output "$F" || echo "writer $w failed"
		runs=$((runs + 1))
	done
	echo "$runs" >"$CT_TMP/writer$w.runs") >"$CT_TMP/writer$w.log" 2>&1 &
	CT_PIDS+=("$!")
	writers+=("$!")
done
bad=0
for n in $(seq 1 100); do
	s=$(scrape)
	if [[ $s != *$'\nnode_textfile_scrape_error 0\n'* ]] ||
		[ "$(promtools_series "$P" <<<"$s" 2>&1)" != "$served" ]; then
		bad=$((bad + 1))
		tap_diag "scrape $n differs:" "$(diff <(echo "$served") <(promtools_series "$P" <<<"$s" 2>&1) | head -5)"
	fi
	if [ "$(wc -l <"$F")" != "$lines" ] || [ "$(tail -1 "$F")" != "${P}collect_errors 0" ]; then
		bad=$((bad + 1))
		tap_diag "read $n: a partial file"
	fi
done
touch "$stop"
for w in "${writers[@]}"; do wait "$w"; done
total=$(cat "$CT_TMP"/writer*.runs | awk '{ t += $1 } END { print t + 0 }')
tap_is "$bad" 0 "4 writers, $total metrics runs, during 100 scrapes and reads: every one whole"
# Under valgrind a run takes about a second: a few runs per writer.
[ "$total" -ge 8 ]
tap_ok $? "the writers really ran meanwhile ($total runs, at least 8)"
tap_is "$(cat "$CT_TMP"/writer*.log)" "" "no concurrent run failed"
tap_is "$(ls -A "$OUT")" oci-sockopt-hook.prom "no temp file is left after them"

# --output must end in .prom (the collector reads nothing else).
out=$("$HOOK" metrics --output "$OUT/metrics.txt" 2>&1)
rc=$?
[ "$rc" = 1 ] && [ "$(grep -c . <<<"$out")" = 1 ] && [[ $out == *"does not end in .prom"* ]]
tap_ok $? "--output FILE not ending in .prom: exit 1, one line" || tap_diag "exit $rc: $out"
tap_is "$(ls -A "$OUT")" oci-sockopt-hook.prom "and nothing is written"

# Hostile label values: no runtime passes such names (container.c refuses
# them), but a record is read back as it is: a copy of the state with a
# record naming a pod 'we"ird\<newline>pod\' (A's cgroup, another id).
S2=$CT_TMP/state2 OUT2=$CT_TMP/textfile2
cp -a "$CT_STATE_DIR" "$S2" && mkdir -p "$OUT2" && chmod 0755 "$OUT2"
X=$A-x
ct_record "$A" "$S2" |
	jq --arg id "$X" --arg pod $'we"ird\\\npod\\' '.id = $id | .pod = $pod' |
	ct_write_record "$S2/$X.json"
OCI_SOCKOPT_HOOK_STATE_DIR=$S2 "$HOOK" metrics --output "$OUT2/x.prom"
tap_ok $? "metrics on a state with a hostile pod name"
grep -Fq -- 'pod="we\"ird\\\npod\\"' "$OUT2/x.prom"
tap_ok $? 'the pod name is escaped: \" \\ \n (one line per series)' ||
	tap_diag "$(grep -A1 "$X" "$OUT2/x.prom" | head -4)"
lint=$("$PROMTOOL" check metrics <"$OUT2/x.prom" 2>&1)
tap_ok $? "promtool check metrics: clean with the hostile name" || tap_diag "$lint"
kill "$NE_PID" && wait "$NE_PID" 2>/dev/null
node_exporter "$OUT2"
S=$(scrape)
[[ $S == *$'\nnode_textfile_scrape_error 0\n'* ]]
tap_ok $? "node_exporter reads the file with the hostile name without error"
served2=$(promtools_series "$P" <<<"$S")
# shellcheck disable=SC1003 # backslashes, no quote to escape
hostile='pod="we\"ird\\\npod\\"'
grep -Fxq "${P}container_info{bypass=\"false\",container=\"app\",container_id=\"$X\",mode=\"enforce\",namespace=\"ns-a\",$hostile,policy=\"restricted\"} 1" <<<"$served2"
tap_ok $? "the scrape reads the hostile pod name back intact" || tap_diag "$(grep "$X" <<<"$served2")"

# After delete: A's series are gone, and its release counts.
ct_delete runc "$A"
"$HOOK" metrics --output "$F"
tap_ok $? "metrics after A is deleted"
after=$(promtools_series "$P" <"$F")
tap_is "$(grep -c "container_id=\"$A\"" <<<"$after")" 0 "A's series are gone"
grep -Fxq "${P}containers_attached{} 2" <<<"$after" &&
	grep -Fxq "$(runs poststop released '' 1)" <<<"$after" &&
	grep -Fxq "${P}run_duration_seconds_count{stage=\"poststop\"} 1" <<<"$after"
tap_ok $? "containers_attached 2; poststop released 1, timed" ||
	tap_diag "$(grep -E 'attached|poststop' <<<"$after")"

# A release by gc counts too, without a time (it is no hook run).
G=$(ct_id g)
b=$(ct_bundle -c "$WARN" -P -a sockopt-hook.io/policy=setonly g -- sh -c "$(workload)")
ct_start_ok "G (setonly, no poststop hook) starts" runc "$G" "$b" '^READY$'
ct_delete runc "$G"
out=$("$HOOK" gc 2>&1)
tap_is "$out" "released 1 stale container record(s)" "gc releases G's record"
"$HOOK" metrics --output "$F"
after=$(promtools_series "$P" <"$F")
grep -Fxq "$(runs poststop released '' 2)" <<<"$after" &&
	grep -Fxq "${P}run_duration_seconds_count{stage=\"poststop\"} 1" <<<"$after" &&
	grep -Fxq "${P}containers_attached{} 2" <<<"$after"
tap_ok $? "gc's release counts: poststop released 2, still 1 timed" ||
	tap_diag "$(grep -E 'attached|poststop' <<<"$after")"

for id in "$B" "$C" "$D" "$E"; do ct_delete runc "$id"; done
ct_check_same "after delete, BPF programs and cgroups are as before" "$BASE" progs cgroups
tap_is "$(find "$CT_STATE_DIR" -mindepth 1 ! -name stats ! -name '*.lock' ! -name stats.log ! -name last-gc ! -name 'shared-*')" "" \
	"after delete, the state directory holds no record, only the stats"

tap_done
