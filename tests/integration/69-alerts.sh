#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The alerts and the dashboard, against Prometheus itself. The rule file
# is the spec of examples/kubernetes/overlays/monitoring/prometheusrule.yaml (one source):
# `promtool check rules` and `promtool test rules`
# (tests/alerts/oci-sockopt-hook.test.yml) pass, and the same tests fail
# on the naive rule that counts a refusal with increase() alone. Then
# Debian's Prometheus 2.42 (unpacked with promtool, never installed)
# scrapes node_exporter's textfile collector every second while runc
# containers with containerd's names make socket calls and a loop writes
# `metrics --output` every second, as the DaemonSet's agent does every
# 15 s. Two jobs scrape the same exporter with the target labels
# prometheus-operator gives a ServiceMonitor's targets (namespace, pod,
# container, service, endpoint; instance = the node, as kube-prometheus
# relabels it): one as the operator's default (honor_labels false), one
# with honorLabels: true. Checked: what each does to our namespace, pod
# and container labels (docs/cluster.md, Metrics); every query and
# variable of examples/kubernetes/overlays/monitoring/oci-sockopt-hook-dashboard.json returns
# data with honorLabels, and the per-pod panel names the workload's pod
# only with it; a refusal and a fallback made while Prometheus runs fire
# their alerts (those counted before it started do not).
#
# Modules: `metrics.c`, `stats.c`
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
tap_require_cmd curl jq /usr/bin/python3
/usr/bin/python3 -c 'import yaml' 2>/dev/null ||
	tap_skip_all "python3-yaml is needed to read the PrometheusRule"
promtools_require
PROMETHEUS=$PROMTOOLS_DIR/root/usr/bin/prometheus
[ -x "$PROMETHEUS" ] || tap_skip_all "the prometheus package holds no $PROMETHEUS"
ct_init
BASE=$(ct_snapshot progs cgroups)
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
RULE=$TESTS_TOP/examples/kubernetes/overlays/monitoring/prometheusrule.yaml
DASH=$TESTS_TOP/examples/kubernetes/overlays/monitoring/oci-sockopt-hook-dashboard.json
NODE=node-1

# --- the rules, offline ---------------------------------------------------

# rules_from_spec OUT [PYTHON]: the PrometheusRule's spec as a rule file;
# PYTHON may edit `spec` first.
rules_from_spec()
{
	/usr/bin/python3 -c '
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
assert doc["kind"] == "PrometheusRule", doc["kind"]
spec = doc["spec"]
exec(sys.argv[3])
yaml.safe_dump(spec, open(sys.argv[2], "w"), sort_keys=False)
' "$RULE" "$1" "${2:-pass}"
}

R=$CT_TMP/rules
mkdir -p "$R" "$CT_TMP/naive"
rules_from_spec "$R/oci-sockopt-hook.rules.yml"
tap_ok $? "the rule file is the PrometheusRule's spec"
cp "$TESTS_TOP/tests/alerts/oci-sockopt-hook.test.yml" "$R/"
out=$("$PROMTOOL" check rules "$R/oci-sockopt-hook.rules.yml" 2>&1)
tap_ok $? "promtool check rules" || tap_diag "$out"
tap_like "$out" "SUCCESS: 6 rules found" "6 rules: refusals, fallbacks, collect_errors, a stale file, a wiring repaired, a repair failed"
out=$("$PROMTOOL" test rules "$R/oci-sockopt-hook.test.yml" 2>&1)
tap_ok $? "promtool test rules" || tap_diag "$out"

# The same tests on the naive refusal rule (increase() alone) must fail:
# the first refusal of a reason on a node would go unseen.
rules_from_spec "$CT_TMP/naive/oci-sockopt-hook.rules.yml" '
for r in spec["groups"][0]["rules"]:
    if r["alert"] == "OciSockoptHookContainersRefused":
        r["expr"] = r["expr"].split("\nor\n")[0]
'
cp "$R/oci-sockopt-hook.test.yml" "$CT_TMP/naive/"
out=$("$PROMTOOL" test rules "$CT_TMP/naive/oci-sockopt-hook.test.yml" 2>&1)
rc=$?
[ "$rc" != 0 ] && [[ $out == *"OciSockoptHookContainersRefused, time: 22m"* ]]
tap_ok $? "the tests fail on increase() alone: the first refusal at 22m is missed" ||
	tap_diag "exit $rc" "$out"

# --- real containers, metrics, node_exporter, Prometheus ---------------------

WARN=$(ct_config warn '.on_unsupported = "warn"')
ONLYBULK=$(ct_config onlybulk \
	'.annotations.allow_policies = ["bulk"] | .on_unsupported = "warn"')

A=$(ct_id a) B=$(ct_id b) E=$(ct_id e) F=$(ct_id f) G=$(ct_id g)
# A: restricted, denied SO_MARK sets all along (5 a second).
ct_cri ns-a web-1 app
b=$(ct_bundle -c "$WARN" "${CRI[@]}" -a sockopt-hook.io/policy=restricted a -- \
	sh -c 'echo READY; while :; do sockcheck set-mark 5 >/dev/null; sleep 0.2; done')
ct_start_ok "A (restricted, ns-a/web-1/app) runs, its SO_MARK sets denied" \
	runc "$A" "$b" '^READY$' || tap_done
# B: bulk with bypass-prot-mem on this kernel: a fallback, before
# Prometheus starts.
ct_cri ns-b batch-1 worker
b=$(ct_bundle -c "$WARN" "${CRI[@]}" -a sockopt-hook.io/policy=bulk \
	-a sockopt-hook.io/bypass-prot-mem=true b -- sh -c 'echo READY; exec sleep 600')
ct_start_ok "B (bulk + bypass-prot-mem, ns-b/batch-1/worker) starts (fallback)" \
	runc "$B" "$b" '^READY$' || tap_done
# E: a policy the config does not allow: refused, before Prometheus
# starts, and once more (G) while it runs.
ct_cri ns-c denied app
b=$(ct_bundle -c "$ONLYBULK" "${CRI[@]}" -a sockopt-hook.io/policy=restricted e -- \
	sh -c 'exec sleep 600')
ct_start runc "$E" "$b"
[ "$CT_RC" != 0 ]
tap_ok $? "E (restricted, not in allow_policies) is refused" || ct_diag_run "$b"

TF=$CT_TMP/textfile
mkdir -p "$TF" && chmod 0755 "$TF"
(while :; do
	"$HOOK" metrics --output "$TF/oci-sockopt-hook.prom" || echo "metrics failed"
	sleep 1
done) >"$CT_TMP/writer.log" 2>&1 &
CT_PIDS+=("$!")

free_port()
{
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_url URL: up to 10 s for URL to answer
wait_url()
{
	local _

	for _ in $(seq 1 100); do
		curl -sf -o /dev/null "$1" && return 0
		sleep 0.1
	done
	return 1
}

NE_PORT=$(free_port)
"$NODE_EXPORTER" --web.listen-address="127.0.0.1:$NE_PORT" \
	--collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$TF" >"$CT_TMP/ne.log" 2>&1 &
CT_PIDS+=("$!")
wait_url "http://127.0.0.1:$NE_PORT/metrics"
tap_ok $? "node_exporter (textfile collector) answers" || tap_diag "$(cat "$CT_TMP/ne.log")"

# The labels prometheus-operator relabels onto a ServiceMonitor's targets
# (pkg/prometheus/promcfg.go: namespace, service, pod, container, and the
# endpoint's port name); instance as kube-prometheus' node-exporter
# ServiceMonitor sets it (the node's name).
PROM_PORT=$(free_port)
cat >"$CT_TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $R/oci-sockopt-hook.rules.yml
scrape_configs:
EOF
for job in operator-default:false honor:true; do
	cat >>"$CT_TMP/prometheus.yml" <<EOF
  - job_name: ${job%:*}
    honor_labels: ${job#*:}
    static_configs:
      - targets: ["127.0.0.1:$NE_PORT"]
        labels:
          instance: $NODE
          namespace: monitoring
          service: node-exporter
          pod: node-exporter-7xk2p
          container: node-exporter
          endpoint: https
EOF
done
out=$("$PROMTOOL" check config "$CT_TMP/prometheus.yml" 2>&1)
tap_ok $? "promtool check config: the Prometheus config with our rules" || tap_diag "$out"
"$PROMETHEUS" --config.file="$CT_TMP/prometheus.yml" \
	--storage.tsdb.path="$CT_TMP/tsdb" \
	--web.listen-address="127.0.0.1:$PROM_PORT" >"$CT_TMP/prometheus.log" 2>&1 &
CT_PIDS+=("$!")
PROM=http://127.0.0.1:$PROM_PORT
wait_url "$PROM/-/ready"
tap_ok $? "Prometheus is ready" || tap_diag "$(tail -20 "$CT_TMP/prometheus.log")"

# pq EXPR: the instant query's result, one line per series: its labels
# sorted (k=v, comma separated), a space, its value
pq()
{
	curl -sfG --max-time 10 --data-urlencode "query=$1" "$PROM/api/v1/query" |
		jq -r '.data.result[] |
			([.metric | to_entries[] | "\(.key)=\(.value)"] | sort | join(","))
			+ " " + .value[1]'
}

# wait_pq EXPR [SECS]: until EXPR returns something (default 30 s)
wait_pq()
{
	local _

	for _ in $(seq 1 "$((${2:-30} * 5))"); do
		[ -n "$(pq "$1")" ] && return 0
		sleep 0.2
	done
	return 1
}

wait_pq 'count(count_over_time(up[1m]) >= 8) == 2'
tap_ok $? "both jobs scraped node_exporter 8 times" || tap_diag "$(pq up)"
tap_is "$(pq 'sum by (job) (up)' | sort)" "job=honor 1
job=operator-default 1" "up is 1 for both jobs"

# --- honorLabels ---------------------------------------------------------------

info=$(pq 'oci_sockopt_hook_container_info{job="operator-default", policy="restricted"}')
[[ $info == *"namespace=monitoring"* && $info == *"exported_namespace=ns-a"* &&
	$info == *"exported_pod=web-1"* && $info == *"exported_container=app"* &&
	$info == *"pod=node-exporter-7xk2p"* ]]
tap_ok $? "honor_labels false (the operator's default): our namespace/pod/container become exported_*, the exporter's pod takes their place" ||
	tap_diag "$info"
info=$(pq 'oci_sockopt_hook_container_info{job="honor", policy="restricted"}')
[[ $info == *"namespace=ns-a"* && $info == *"pod=web-1"* &&
	$info == *",container=app,"* && $info != *exported_* ]]
tap_ok $? "honorLabels true: namespace=ns-a, pod=web-1, container=app, no exported_*" ||
	tap_diag "$info"
runs=$(pq 'oci_sockopt_hook_runs_total{job="honor", outcome="fallback"}')
[[ $runs == *"namespace=monitoring"* && $runs == *"pod=node-exporter-7xk2p"* ]]
tap_ok $? "honorLabels true: series without our pod labels (runs_total) still get the exporter's: never group them by namespace or pod" ||
	tap_diag "$runs"
# The query the docs had: refusals "by namespace" are by the exporter's.
old=$(pq 'sum by (namespace, reason) (oci_sockopt_hook_runs_total{job="honor", outcome="refused"})')
tap_is "$old" "namespace=monitoring,reason=policy_not_allowed 1" \
	"the old 'sum by (namespace, reason)' of runs_total groups by the exporter's namespace"
ne=$(pq 'node_textfile_scrape_error{job="honor"}')
[[ $ne == *"namespace=monitoring"* && $ne == *"pod=node-exporter-7xk2p"* && $ne == *" 0" ]]
tap_ok $? "honorLabels true leaves node_exporter's own series as they were" || tap_diag "$ne"

# --- alerts on live data ------------------------------------------------------

# firing ALERT: its firing instances as "instance reason" lines
firing()
{
	curl -sf --max-time 10 "$PROM/api/v1/alerts" |
		jq -r --arg a "$1" '.data.alerts[] | select(.labels.alertname == $a and .state == "firing") |
			"\(.labels.instance) \(.labels.reason)"'
}

tap_is "$(firing OciSockoptHookFallbacks)$(firing OciSockoptHookContainersRefused)" "" \
	"no alert for B's fallback and E's refusal, counted before Prometheus started"
ct_cri ns-c denied app-2
b=$(ct_bundle -c "$ONLYBULK" "${CRI[@]}" -a sockopt-hook.io/policy=restricted g -- \
	sh -c 'exec sleep 600')
ct_start runc "$G" "$b"
[ "$CT_RC" != 0 ]
tap_ok $? "G (restricted, not in allow_policies) is refused" || ct_diag_run "$b"
ct_cri ns-b batch-2 worker
b=$(ct_bundle -c "$WARN" "${CRI[@]}" -a sockopt-hook.io/bypass-prot-mem=true f -- \
	sh -c 'echo READY; exec sleep 600')
ct_start_ok "F (bypass-prot-mem) starts without it (fallback)" runc "$F" "$b" '^READY$'
for alert in "OciSockoptHookContainersRefused $NODE policy_not_allowed" \
	"OciSockoptHookFallbacks $NODE bypass_prot_mem_unsupported"; do
	got=""
	for _ in $(seq 1 100); do
		got=$(firing "${alert%% *}")
		[ "$got" = "${alert#* }" ] && break
		sleep 0.2
	done
	tap_is "$got" "${alert#* }" "${alert%% *} fires for $NODE, ${alert##* }, within 20 s"
done

# --- the dashboard -------------------------------------------------------------

jq -e '.uid and .title and (.panels | length) > 0 and
	all(.panels[]; (.targets | length) > 0 and all(.targets[]; .expr != ""))' \
	"$DASH" >/dev/null
tap_ok $? "the dashboard parses; every panel has queries"

# dash_expr EXPR JOB: the query as Grafana sends it with job=JOB, every
# node and namespace, a 10 s rate interval (ten scrapes)
dash_expr()
{
	local e=$1

	e=${e//\$__rate_interval/10s}
	e=${e//\$job/$2}
	e=${e//\$instance/.+}
	e=${e//\$namespace/.+}
	echo "$e"
}

# The rate() panels need the counters to move: A's denials do; wait until
# its rate over 10 s is above 0 with honorLabels.
wait_pq 'sum(rate(oci_sockopt_hook_socket_calls_total{job="honor", action="denied"}[10s])) > 0'
tap_ok $? "A's denials show as a rate"

empty=()
n=0
while IFS=$'\t' read -r title expr; do
	n=$((n + 1))
	q=$(dash_expr "$expr" honor)
	res=$(curl -sfG --max-time 10 --data-urlencode "query=$q" "$PROM/api/v1/query")
	if [ "$(jq -r '.status' <<<"$res")" != success ] ||
		[ "$(jq '.data.result | length' <<<"$res")" = 0 ]; then
		empty+=("$title: $q -> $res")
	fi
done < <(jq -r '.panels[] | .title as $t | .targets[] | [$t, .expr] | @tsv' "$DASH")
tap_is "${#empty[@]}" 0 "all $n dashboard queries return data (job=honor)" ||
	tap_diag "${empty[@]}"

# the variables: label_values(SELECTOR, LABEL) through the series API
vars=()
while IFS=$'\t' read -r name query; do
	[[ $query =~ ^label_values\((.*),\ *([a-z_]+)\)$ ]] || {
		vars+=("$name: not label_values(): $query")
		continue
	}
	sel=$(dash_expr "${BASH_REMATCH[1]}" honor)
	label=${BASH_REMATCH[2]}
	vals=$(curl -sfG --max-time 10 --data-urlencode "match[]=$sel" "$PROM/api/v1/series" |
		jq -r --arg l "$label" '[.data[][$l] // empty] | unique | join(" ")')
	vars+=("$name=$vals")
done < <(jq -r '.templating.list[] | select(.type == "query") | [.name, .definition] | @tsv' "$DASH")
tap_is "${vars[*]}" "job=honor operator-default instance=$NODE namespace=ns-a ns-b" \
	"the dashboard's variables list the jobs, the node, the workloads' namespaces"

denied=$(jq -r '.panels[] | select(.title == "Denied socket calls by pod") | .targets[0].expr' "$DASH")
# moving: the rows whose rate is above 0
moving()
{
	awk '$2 > 0 { print $1 }'
}
rows=$(pq "$(dash_expr "$denied" honor)")
tap_is "$(moving <<<"$rows")" "namespace=ns-a,pod=web-1,program=setsockopt" \
	"'Denied socket calls by pod' with honorLabels: ns-a/web-1's setsockopt, nothing else" ||
	tap_diag "$rows"
rows=$(pq "$(dash_expr "$denied" operator-default)")
tap_is "$(moving <<<"$rows")" "namespace=monitoring,pod=node-exporter-7xk2p,program=setsockopt" \
	"the same panel without honorLabels: the exporter's pod, not the workload's" ||
	tap_diag "$rows"
table=$(jq -r '.panels[] | select(.title == "Policed containers by policy") | .targets[0].expr' "$DASH")
rows=$(pq "$(dash_expr "$table" honor)" | sort)
tap_is "$rows" "bypass=false,mode=enforce,namespace=ns-a,policy=restricted 1
bypass=true,mode=enforce,namespace=ns-b 1
bypass=true,mode=enforce,namespace=ns-b,policy=bulk 1" \
	"'Policed containers by policy': restricted in ns-a; bulk and F's bypass alone (no policy label) in ns-b"
# stat PANEL-TITLE: the stat panel's value with honorLabels
stat()
{
	pq "$(dash_expr "$(jq -r --arg t "$1" '.panels[] | select(.title == $t) | .targets[0].expr' "$DASH")" honor)" |
		sed 's/^[^ ]* //'
}
tap_is "$(stat "Policed containers") $(stat "Refused starts") $(stat "Fallbacks")" "3 2 2" \
	"the stats: 3 policed (A, B, F), 2 refused (E, G), 2 fallbacks (B, F)"
age=$(pq "$(dash_expr "$(jq -r '.panels[] | select(.title == "Metrics age") | .targets[0].expr' "$DASH")" honor)")
awk -v a="${age#* }" 'BEGIN { exit !(a >= 0 && a < 10) }'
tap_ok $? "'Metrics age': the file is fresh (${age#* } s)"


tap_is "$(firing OciSockoptHookMetricsStale)$(firing OciSockoptHookCollectErrors)" "" \
	"no stale-file or collect_errors alert while the writer runs"
tap_is "$(cat "$CT_TMP/writer.log")" "" "the metrics loop never failed"

for id in "$A" "$B" "$E" "$F" "$G"; do ct_delete runc "$id"; done
ct_check_same "after delete, BPF programs and cgroups are as before" "$BASE" progs cgroups

tap_done
