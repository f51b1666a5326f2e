#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Docker Engine's wiring without a Docker: `runtime configure --runtime
# docker` on a daemon.json of the test's own, and the runtime it
# registers run as dockerd's shim runs it. daemon.json: every operator key
# kept, runtimes.sockopt and (--default-runtime) default-runtime added, the
# file as it was kept; --dry-run shows the diff and writes nothing; a
# second run changes nothing; a file that is not JSON, a default-runtime
# of another tool and features.cdi false are refused in one line, the
# file left alone; unconfigure leaves it byte-identical, also for a file
# that was not there; a file the operator changed since keeps the change.
# The runtime: its path and runtimeArgs as dockerd's wrapper runs them,
# with runc's global options, create --bundle (a bundle with no hook of
# its own, annotated sockopt-hook.io/policy=restricted), start, delete:
# SO_MARK refused, the clamp read back, reno forced inside; a bundle
# whose config.json is not JSON fails the create in one line; nothing
# left after delete.
#
# Modules: `wiring_docker.c`, `wiring_spec.c`, `cmd_runtime_exec.c`, `cmd_runtime_config.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup runc
BASE=$(ct_snapshot)
D=$CT_TMP/docker
mkdir -p "$D" || exit 1
DJ=$D/daemon.json
printf '{\n    "log-driver": "journald",\n    "runtimes": {"other": {"path": "/usr/bin/other"}},\n    "features": {"buildkit": true}\n}\n' >"$DJ"
cp "$DJ" "$D/orig.json"

conf() { "$HOOK" --config "$CT_EXAMPLE_CONFIG" runtime "$@" --runtime docker --docker-config "$DJ"; }
configure()
{
	conf configure --default-runtime \
		--hook-env "OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR" \
		--hook-env "$CT_HOOK_PATH_ENV" "$@"
}

out=$(configure --dry-run 2>&1)
tap_like "$?:$out" "^0:.*$DJ: would update" "--dry-run: says it would update daemon.json" || tap_diag "$out"
[[ $out == *'+    "sockopt": {'* ]]
tap_ok $? "--dry-run: the diff adds runtimes.sockopt" || tap_diag "$out"
cmp -s "$DJ" "$D/orig.json" && [ ! -e "$D/oci-sockopt-hook" ]
tap_ok $? "--dry-run wrote nothing"

out=$(configure 2>&1)
tap_like "$?:$out" "^0:$D/oci-sockopt-hook/daemon.json.before: created" \
	"configure keeps the file as it was" || tap_diag "$out"
cmp -s "$D/oci-sockopt-hook/daemon.json.before" "$D/orig.json"
tap_ok $? "byte for byte"
tap_is "$(jq -c '[.["log-driver"], .runtimes.other, .features.buildkit, .["default-runtime"]]' "$DJ")" \
	'["journald",{"path":"/usr/bin/other"},true,"sockopt"]' \
	"every operator key kept; default-runtime sockopt"
tap_is "$(jq -c '.runtimes.sockopt | [.path, .runtimeArgs[0:3], .runtimeArgs[-1]]' "$DJ")" \
	"[\"$HOOK\",[\"runtime-exec\",\"--config\",\"$CT_EXAMPLE_CONFIG\"],\"--\"]" \
	"runtimes.sockopt runs this binary's runtime-exec with the config"
[[ $out == *"systemctl restart docker"* ]]
tap_ok $? "it says what to run for dockerd to load it" || tap_diag "$out"
out=$(configure 2>&1)
tap_like "$out" "docker: nothing to change" "a second run changes nothing" || tap_diag "$out"

# --- the runtime, as dockerd's shim runs it ------------------------------
mapfile -t RT < <(jq -r '.runtimes.sockopt | .path, .runtimeArgs[]' "$DJ")
b=$(ct_bundle -a sockopt-hook.io/policy=restricted docker -- /bin/sockcheck all)
jq 'del(.hooks)' "$b/config.json" >"$b/c.new" && mv "$b/c.new" "$b/config.json"
id=$(ct_id docker)
CT_IDS+=("runc $id")
"${RT[@]}" --log "$CT_TMP/runc.log" --log-format json create --bundle "$b" "$id" \
	</dev/null >"$CT_TMP/docker.out" 2>"$CT_TMP/docker.err"
tap_ok $? "runtime-exec ... create --bundle B ID: runc created it" || tap_diag "$(cat "$CT_TMP/docker.err")"
tap_is "$(jq -c '[.hooks.createRuntime[0].args, .hooks.poststop[0].args]' "$b/config.json")" \
	'[["oci-sockopt-hook","createRuntime"],["oci-sockopt-hook","poststop"]]' \
	"the bundle got the hook's createRuntime and poststop"
"${RT[@]}" start "$id" >/dev/null 2>&1
for _ in $(seq 1 100); do
	[ "$(runc state "$id" 2>/dev/null | jq -r .status)" = stopped ] && break
	sleep 0.1
done
val() { sed -n "s/^$1=//p" "$CT_TMP/docker.out" | head -n1; }
tap_is "$(val setsockopt)" EPERM "inside: setsockopt(SO_MARK) gives EPERM" || tap_diag "$(cat "$CT_TMP/docker.out")"
rcv=$(val rcvbuf)
[[ $rcv =~ ^[0-9]+$ ]] && [ "$rcv" -le 131072 ]
tap_ok $? "inside: SO_RCVBUF of 4 MiB reads back <= 131072 (got $rcv)"
tap_is "$(val cc)" reno "inside: TCP_CONGESTION cubic reads back reno"
"${RT[@]}" delete -f "$id" >/dev/null 2>&1
tap_ok $? "runtime-exec ... delete: runc deleted it"
ct_check_same "after delete, BPF programs, hook state and cgroups are as before" "$BASE"

b2=$(ct_bundle broken -- /bin/true)
echo 'not json' >"$b2/config.json"
out=$("${RT[@]}" create --bundle "$b2" "$(ct_id broken)" 2>&1 </dev/null)
rc=$?
CT_IDS+=("runc $(ct_id broken)")
[ "$rc" != 0 ] && [ "$(grep -c . <<<"$out")" = 1 ] && [[ $out == *"$b2/config.json is not a JSON object"* ]]
tap_ok $? "a bundle that cannot be edited: create fails in one line" || tap_diag "$rc: $out"

# --- refusals: the file left alone ---------------------------------------
cp "$DJ" "$D/configured.json"
for bad in 'not json' '[1, 2]' '{"default-runtime": "nvidia"}' '{"features": {"cdi": false}}'; do
	echo "$bad" >"$D/bad.json"
	out=$("$HOOK" --config "$CT_EXAMPLE_CONFIG" runtime configure --runtime docker \
		--docker-config "$D/bad.json" --default-runtime 2>&1)
	rc=$?
	[ "$rc" != 0 ] && [ "$(grep -c . <<<"$out")" = 1 ] && [ "$(cat "$D/bad.json")" = "$bad" ] &&
		[ ! -e "$D/oci-sockopt-hook/bad.json.before" ]
	tap_ok $? "daemon.json '$bad': refused in one line, left alone: $out"
done

# --- unconfigure ----------------------------------------------------------
out=$(conf unconfigure 2>&1)
tap_ok $? "unconfigure" || tap_diag "$out"
cmp -s "$DJ" "$D/orig.json"
tap_ok $? "daemon.json is byte-identical to before" || tap_diag "$(diff "$D/orig.json" "$DJ")"
tap_ok "$([ ! -e "$D/oci-sockopt-hook" ]; echo $?)" "the kept copy and its directory are gone"

rm -f "$DJ"
configure >/dev/null 2>&1
tap_is "$(jq -r '.["default-runtime"]' "$DJ" 2>&1)" sockopt "no daemon.json: configure writes one"
conf unconfigure >/dev/null 2>&1
tap_ok "$([ ! -e "$DJ" ]; echo $?)" "and unconfigure removes it again"

cp "$D/orig.json" "$DJ"
configure >/dev/null 2>&1
jq '. + {"debug": true}' "$DJ" >"$DJ.new" && mv "$DJ.new" "$DJ"
out=$(conf unconfigure 2>&1)
tap_is "$(jq -c '[.debug, .runtimes, .["default-runtime"], .features]' "$DJ")" \
	'[true,{"other":{"path":"/usr/bin/other"}},null,{"buildkit":true}]' \
	"a file changed since: the change kept, only our keys taken out" || tap_diag "$out"
tap_done
