#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Audit lines: every refusal and every fallback is one
# structured line naming the container id, namespace, pod, container, the
# annotation and setting involved and a stable reason token.
#  - validate checks log_format, and warns about json without log_file;
#  - 40 hooks refusing at once into one JSON log_file: every line whole;
#  - log_format "json": for each refusal class (policy not allowed,
#    unknown policy, bad annotation value, bypass not allowed,
#    require_annotations, shared cgroup under crun without a cgroup
#    manager) exactly one JSON audit line in log_file with those fields,
#    every line of the file a JSON object, and runc's error still the one
#    plain line;
#  - log_format "text" (the default): the audit line is a text line;
#  - a fallback (bypass-prot-mem on a kernel without it, on_unsupported
#    "warn") is one "fallback" line, the container runs;
#  - journald: in a mount namespace where /run/systemd/journal/socket is
#    a datagram socket of the test's own, the event arrives there in the
#    native protocol with the OCI_SOCKOPT_HOOK_* fields (a value with a
#    newline in the binary-safe form), and the log file still gets its
#    line.
#
# Modules: `events.c`, `log.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
# shellcheck source=../lib/refuse.sh
. "$here/../lib/refuse.sh"

PY=/usr/bin/python3
tap_require_cmd unshare "$PY"
ct_setup runc crun

LOG=$CT_TMP/audit.log
# json_config NAME [FILTER]: an example config with log_file LOG in JSON,
# and FILTER.
json_config()
{
	ct_config "$1" ".log_file = \$log | .log_format = \"json\" | ${2:-.}" \
		--arg log "$LOG"
}

JSON=$(json_config json)
TEXT=$(ct_config text ".log_file = \$log" --arg log "$LOG")

# validate: log_format is checked, and json without log_file warned about.
NOFILE=$(ct_config nofile '.log_format = "json"')
BADFMT=$(ct_config badfmt '.log_format = "xml"')
out=$("$HOOK" validate "$JSON" 2>&1)
tap_ok $? "validate: log_format json with a log_file is valid" || tap_diag "$out"
[ "$(grep -v 'TCP autotuning' <<<"$out" | grep -c warning)" = 0 ]
tap_ok $? "validate: no warning about it" || tap_diag "$out"
err=$("$HOOK" validate "$NOFILE" 2>&1 >/dev/null | grep -v 'TCP autotuning')
tap_like "$err" "^oci-sockopt-hook: warning: log_format is 'json' but no log_file is set" \
	"validate: log_format json without log_file is one warning"
rc=0
err=$("$HOOK" validate "$BADFMT" 2>&1 >/dev/null) || rc=$?
[ "$rc" != 0 ] && [ "$(grep -c . <<<"$err")" = 1 ] && [[ $err == *"log_format: unknown value 'xml'"* ]]
tap_ok $? "validate: log_format xml is refused, in one line naming it" || tap_diag "$err"

# Concurrent hooks (here refusing a state whose bundle is gone) never
# interleave their lines: each is one write(2) on an O_APPEND fd.
N=40
: >"$LOG"
for ((i = 0; i < N; i++)); do
	jq -cn --arg id "$(ct_id "par-$i")" \
		'{ociVersion: "1.0.2", id: $id, status: "creating", pid: 1,
		  bundle: "/nonexistent/bundle"}' |
		"$HOOK" --config "$JSON" prestart 2>/dev/null &
done
wait
tap_is "$(jq -c . "$LOG" 2>/dev/null | grep -c .)/$(grep -c . "$LOG")" "$((2 * N))/$((2 * N))" \
	"$N hooks at once: $((2 * N)) lines (an error and an audit line each), every one a JSON object"
tap_is "$(jq -r 'select(.event == "refused" and .reason == "state_invalid") | .container_id' "$LOG" | sort -u | grep -c .)" "$N" \
	"$N hooks at once: one state_invalid audit line per container"
tap_is "$(jq -r 'select(.level == "error") | .context + ": " + .message' "$LOG" | grep -c '^container .*-par-[0-9]*: bundle /nonexistent/bundle')" "$N" \
	"$N hooks at once: the error lines keep context and message apart"

# CRI (containerd) identity: namespace shop, pod web-0, container app.
CRI=(-a io.kubernetes.cri.container-type=container
	-a io.kubernetes.cri.container-name=app
	-a io.kubernetes.cri.sandbox-name=web-0
	-a io.kubernetes.cri.sandbox-namespace=shop)

# audit_lines: the log file's audit lines, as compact JSON.
audit_lines()
{
	jq -c 'select(has("event"))' "$LOG" 2>/dev/null
}

# json_audit NAME EVENT REASON ANNOTATION SETTING [CONTAINER]: the log
# file is JSON lines, one of them the audit line with these fields.
json_audit()
{
	local name=$1 event=$2 reason=$3 ann=$4 setting=$5 ctr=${6:-app}
	local lines want got

	[ "$(grep -c . "$LOG")" = "$(jq -c . "$LOG" 2>/dev/null | grep -c .)" ] &&
		! grep -qv '^{' "$LOG"
	tap_ok $? "$name: every line of log_file is a JSON object" ||
		tap_diag "log:" "$(cat "$LOG")"
	lines=$(audit_lines)
	tap_is "$(grep -c . <<<"$lines")" 1 "$name: exactly one audit line" ||
		tap_diag "log:" "$(cat "$LOG")"
	want=$(jq -cn --arg e "$event" --arg r "$reason" --arg a "$ann" \
		--arg s "$setting" --arg c "$ctr" --arg id "$(ct_id "$name")" \
		'{event: $e, reason: $r, container_id: $id, namespace: "shop",
		  pod: "web-0", container: $c, annotation: $a, setting: $s}')
	got=$(jq -c '{event, reason, container_id, namespace, pod, container,
		      annotation, setting}' <<<"$lines" 2>/dev/null)
	tap_is "$got" "$want" "$name: $event, $reason, the pod's names, annotation '$ann', setting '$setting'"
	[ -n "$(jq -r 'select(.message != "" and .stage != "" and .time != "")' <<<"$lines")" ]
	tap_ok $? "$name: with a message, the stage and the time"
}

# refused_json RUNTIME NAME REASON ANNOTATION SETTING BUNDLE-ARGS...
refused_json()
{
	local rt=$1 name=$2 reason=$3 ann=$4 setting=$5 b

	shift 5
	: >"$LOG"
	b=$(ct_bundle -r "$rt" "$@" "$name" -- sockcheck all)
	refused "$rt" "$name" "$b"
	json_audit "$name" refused "$reason" "$ann" "$setting"
}

ONLYBULK=$(json_config onlybulk \
	'.annotations.allow_policies = ["bulk"]')
NOBYPASS=$(json_config nobypass \
	'.annotations.allow_bypass_prot_mem = false | .on_unsupported = "warn"')
REQUIRE=$(json_config require \
	'.require_annotations = {runtime_handlers: ["sockopt"]}')
SHARED=$(json_config shared \
	'.on_shared_cgroup = "refuse"')

refused_json runc not-allowed policy_not_allowed sockopt-hook.io/policy restricted \
	-c "$ONLYBULK" "${CRI[@]}" -a sockopt-hook.io/policy=restricted
refused_json runc unknown policy_unknown sockopt-hook.io/policy nope \
	-c "$JSON" "${CRI[@]}" -a sockopt-hook.io/policy=nope
refused_json runc bad-value annotation_invalid sockopt-hook.io/bypass-prot-mem.app yes \
	-c "$JSON" "${CRI[@]}" -a sockopt-hook.io/bypass-prot-mem.app=yes
refused_json runc no-bypass bypass_not_allowed sockopt-hook.io/bypass-prot-mem true \
	-c "$NOBYPASS" "${CRI[@]}" -a sockopt-hook.io/bypass-prot-mem=true
refused_json runc missing annotations_missing node.sockopt-hook.io/runtime-handler sockopt \
	-c "$REQUIRE" "${CRI[@]}" -a node.sockopt-hook.io/runtime-handler=sockopt
refused_json crun-nocg shared cgroup_shared "" on_shared_cgroup=refuse \
	-c "$SHARED" "${CRI[@]}" -a sockopt-hook.io/policy=restricted

# Untrusted text stays on its line, escaped.
: >"$LOG"
b=$(ct_bundle -c "$JSON" "${CRI[@]}" -a "sockopt-hook.io/policy=no$(printf '\t')pe\"é" \
	escaped -- sockcheck all)
refused runc escaped "$b"
json_audit escaped refused policy_unknown sockopt-hook.io/policy 'no\x09pe"\xc3\xa9'

# Text: the audit line is text, with the same fields.
: >"$LOG"
b=$(ct_bundle -c "$TEXT" "${CRI[@]}" -a sockopt-hook.io/policy=nope text -- sockcheck all)
refused runc text "$b"
! grep -q '^{' "$LOG" && [ "$(grep -c 'event=refused' "$LOG")" = 1 ]
tap_ok $? "text: log_file stays text, with one audit line" || tap_diag "log:" "$(cat "$LOG")"
grep -q "event=refused reason=policy_unknown container_id='$(ct_id text)' namespace='shop' pod='web-0' container='app' annotation='sockopt-hook.io/policy' setting='nope' stage=prestart" "$LOG"
tap_ok $? "text: the audit line names reason, container, pod, annotation and setting" ||
	tap_diag "log:" "$(cat "$LOG")"

# A fallback: bypass-prot-mem on a kernel without it, on_unsupported warn.
has=$(timeout 30 "$HOOK" probe --json 2>/dev/null | jq -r .bypass_prot_mem)
if [ "$has" = false ]; then
	WARN=$(json_config warn \
		'.on_unsupported = "warn"')
	: >"$LOG"
	b=$(ct_bundle -c "$WARN" "${CRI[@]}" -a sockopt-hook.io/bypass-prot-mem=true \
		fallback -- sockcheck all)
	started runc fallback "$b"
	json_audit fallback fallback bypass_prot_mem_unsupported \
		sockopt-hook.io/bypass-prot-mem true
else
	tap_ok 0 "# SKIP fallback: this kernel has SK_BPF_BYPASS_PROT_MEM"
fi

# journal_listen SOCKET OUT SECONDS: binds a datagram socket at SOCKET and
# writes the fields of the first journald message it gets within SECONDS
# to OUT as a JSON object ({} when none came). Sets JPID.
journal_listen()
{
	$PY - "$1" "$2" "$3" <<'PYEOF' &
import socket, struct, sys, json
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(float(sys.argv[3]))
fields = {}
try:
    data = s.recv(65536)
except socket.timeout:
    data = b""
while data:
    nl = data.index(b"\n")
    line = data[:nl]
    if b"=" in line:
        k, v = line.split(b"=", 1)
        data = data[nl + 1:]
    else:
        k = line
        n = struct.unpack("<Q", data[nl + 1:nl + 9])[0]
        v = data[nl + 9:nl + 9 + n]
        data = data[nl + 10 + n:]
    fields[k.decode()] = v.decode("utf-8", "replace")
open(sys.argv[2], "w").write(json.dumps(fields))
PYEOF
	JPID=$!
	CT_PIDS+=("$JPID")
	for ((i = 0; i < 100; i++)); do
		[ -S "$1" ] && break
		sleep 0.1
	done
}

# journald: our own datagram socket at /run/systemd/journal/socket, in a
# mount namespace of the test's own.
JDIR=$CT_TMP/systemd
mkdir -p "$JDIR/journal"
JOUT=$CT_TMP/journal.txt
journal_listen "$JDIR/journal/socket" "$JOUT" 60
: >"$LOG"
b=$(ct_bundle -c "$JSON" "${CRI[@]}" -a "sockopt-hook.io/policy=no
pe" journald -- sockcheck all)
CT_IDS+=("runc $(ct_id journald)")
# shellcheck disable=SC2016 # expanded by sh -c
timeout -k 5 "$CT_TIMEOUT" unshare -m sh -c \
	'mount --bind "$0" /run/systemd && exec runc run --bundle "$1" "$2"' \
	"$JDIR" "$b" "$(ct_id journald)" </dev/null >"$CT_TMP/journald.out" 2>"$CT_TMP/journald.err"
tap_ok $((!$?)) "journald: the container does not start"
wait "$JPID"
want=$(jq -cn --arg id "$(ct_id journald)" '{
	PRIORITY: "5", SYSLOG_IDENTIFIER: "oci-sockopt-hook",
	OCI_SOCKOPT_HOOK_EVENT: "refused", OCI_SOCKOPT_HOOK_REASON: "policy_unknown",
	OCI_SOCKOPT_HOOK_CONTAINER_ID: $id, OCI_SOCKOPT_HOOK_NAMESPACE: "shop",
	OCI_SOCKOPT_HOOK_POD: "web-0", OCI_SOCKOPT_HOOK_CONTAINER: "app",
	OCI_SOCKOPT_HOOK_ANNOTATION: "sockopt-hook.io/policy",
	OCI_SOCKOPT_HOOK_SETTING: "no\npe", OCI_SOCKOPT_HOOK_STAGE: "prestart"}')
got=$(jq -c '{PRIORITY, SYSLOG_IDENTIFIER, OCI_SOCKOPT_HOOK_EVENT,
	OCI_SOCKOPT_HOOK_REASON, OCI_SOCKOPT_HOOK_CONTAINER_ID,
	OCI_SOCKOPT_HOOK_NAMESPACE, OCI_SOCKOPT_HOOK_POD, OCI_SOCKOPT_HOOK_CONTAINER,
	OCI_SOCKOPT_HOOK_ANNOTATION, OCI_SOCKOPT_HOOK_SETTING,
	OCI_SOCKOPT_HOOK_STAGE}' "$JOUT" 2>/dev/null)
tap_is "$got" "$want" "journald: the event's fields arrive, the setting with its newline (binary-safe form)" ||
	tap_diag "received:" "$(cat "$JOUT" 2>/dev/null)" "runc:" "$(cat "$CT_TMP/journald.err")"
[[ $(jq -r .MESSAGE "$JOUT" 2>/dev/null) == "refused (policy_unknown): annotation sockopt-hook.io/policy="*" refused: "* ]]
tap_ok $? "journald: MESSAGE says what happened"
tap_is "$(audit_lines | grep -c .)" 1 "journald: log_file still gets its one audit line"

# An oversized field is cut before it is added; the record is
# not dropped whole. The pod name, 9000 bytes (refused, and shown as it is
# in the record: it is what the refusal is about), is the pod field.
long=$(printf 'x%.0s' $(seq 9000))
rm -f "$JDIR/journal/socket"
journal_listen "$JDIR/journal/socket" "$JOUT" 20
b=$(ct_bundle -c "$JSON" -a io.kubernetes.cri.container-type=container \
	-a io.kubernetes.cri.container-name=app -a "io.kubernetes.cri.sandbox-name=$long" \
	-a io.kubernetes.cri.sandbox-namespace=shop jlong -- sockcheck all)
CT_IDS+=("runc $(ct_id jlong)")
# shellcheck disable=SC2016 # expanded by sh -c
timeout -k 5 "$CT_TIMEOUT" unshare -m sh -c \
	'mount --bind "$0" /run/systemd && exec runc run --bundle "$1" "$2"' \
	"$JDIR" "$b" "$(ct_id jlong)" </dev/null >"$CT_TMP/jlong.out" 2>"$CT_TMP/jlong.err"
wait "$JPID"
got=$(jq -c '{r: .OCI_SOCKOPT_HOOK_REASON, id: .OCI_SOCKOPT_HOOK_CONTAINER_ID,
	ns: .OCI_SOCKOPT_HOOK_NAMESPACE, n: (.OCI_SOCKOPT_HOOK_POD // "" | length),
	cut: (.OCI_SOCKOPT_HOOK_POD // "" | endswith("xxx..."))}' "$JOUT" 2>/dev/null)
tap_is "$got" "$(jq -cn --arg id "$(ct_id jlong)" '{r: "annotation_invalid", id: $id, ns: "shop", n: 259, cut: true}')" \
	"journald: a 9000-byte pod name arrives cut to 256 bytes and '...', with the other fields" ||
	tap_diag "received: $(head -c 600 "$JOUT" 2>/dev/null)"

# journald's socket is there but refuses the record (nobody
# reads it): the record goes to syslog. In a mount namespace of the
# test's own, /run/systemd is ours (a socket nobody listens on) and /dev
# a directory holding our syslog socket (log) and /dev/null; the hook
# runs as a runtime runs it, the state on stdin.
SDIR=$CT_TMP/dev
mkdir -p "$SDIR" "$CT_TMP/dead/journal"
touch "$SDIR/null"
$PY -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).bind(sys.argv[1])' \
	"$CT_TMP/dead/journal/socket"
SOUT=$CT_TMP/syslog.txt
ct_syslog_listener "$SDIR/log" "$SOUT" 60 || :
SPID=$CT_SYSLOG
: >"$LOG"
b=$(ct_bundle -c "$JSON" "${CRI[@]}" -a "sockopt-hook.io/policy=nope" jdead -- sockcheck all)
jq -cn --arg id "$(ct_id jdead)" --arg b "$b" \
	'{ociVersion: "1.0.2", id: $id, status: "creating", pid: 1, bundle: $b}' >"$CT_TMP/jdead.state"
# shellcheck disable=SC2016 # expanded by sh -c
timeout -k 5 "$CT_TIMEOUT" unshare -m --propagation private sh -c \
	'mount --bind /dev/null "$1/null" && mount --bind "$0" /run/systemd &&
	 mount --bind "$1" /dev && exec "$2" --config "$3" prestart <"$4"' \
	"$CT_TMP/dead" "$SDIR" "$HOOK" "$JSON" "$CT_TMP/jdead.state" \
	>"$CT_TMP/jdead.out" 2>"$CT_TMP/jdead.err"
rc=$?
# The datagram is queued when the hook exits; the listener may not have
# written it yet on a loaded machine: give it time before stopping it.
for ((i = 0; i < 100; i++)); do
	grep -q 'event=refused' "$SOUT" 2>/dev/null && break
	sleep 0.1
done
kill "$SPID" 2>/dev/null
wait "$SPID" 2>/dev/null
tap_ok "$([ "$rc" != 0 ]; echo $?)" "journald refusing: the hook still refuses the container (exit $rc)" ||
	tap_diag "$(cat "$CT_TMP/jdead.err")"
grep -q "oci-sockopt-hook\[[0-9]*\]: event=refused reason=policy_unknown container_id='$(ct_id jdead)'" "$SOUT"
tap_ok $? "journald refusing: the audit record goes to syslog instead" ||
	tap_diag "syslog got:" "$(cat "$SOUT" 2>/dev/null)"
tap_is "$(audit_lines | grep -c .)" 1 "journald refusing: log_file still gets its one audit line"

tap_done
