#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A state record is only what the hook writes: the trusted.* attribute of
# an empty file, which takes CAP_SYS_ADMIN. A uid 0 process with every
# capability dropped (setpriv: empty bounding set, as the DaemonSet's nri
# container, which mounts the state directory rw, could be) may write the
# directory, but:
#  - it cannot set the attribute (EPERM);
#  - the record it plants as a file's content, naming a running restricted
#    container's cgroup and programs under another id with a dead init, is
#    ignored with one warning: `status` and `apply` do not list it, and a
#    poststop for its id leaves the running container's programs and
#    record as they were.
# Under real runc.
#
# Modules: `fileio.c`, `state.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup runc
command -v setpriv >/dev/null || tap_skip_all "setpriv (util-linux) not installed"
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
cfg=$CT_EXAMPLE_CONFIG
BEFORE=$(ct_snapshot)

# cg_ids: the ids of our programs on the victim's cgroup, sorted.
cg_ids()
{
	timeout 20 bpftool -j cgroup show "$CG" 2>/dev/null |
		jq '.[]? | select(.name | startswith("sh_")) | .id' | sort -n | xargs
}

# capless CMD...: CMD as uid 0 with no capability at all.
capless()
{
	setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- "$@"
}

b=$(ct_bundle -a sockopt-hook.io/policy=restricted victim -- /bin/sh -c 'sleep 120')
victim=$(ct_id victim)
ct_start_ok "victim: a restricted container starts" runc "$victim" "$b"
CG=$CT_CG
ids=$(cg_ids)
tap_ok "$([ -n "$ids" ]; echo $?)" "it has programs on its cgroup ($ids)"
rec=$(ct_record "$victim")

planted=$(ct_id planted)
file=$CT_STATE_DIR/$planted.json
json=$(jq -c --arg id "$planted" '.id = $id | .pid = 1 | .pid_start = 1' <<<"$rec")
tap_is "$(capless grep '^CapEff' /proc/self/status | tr -d '\t')" "CapEff:0000000000000000" \
	"the planter is uid 0 with no capability"
out=$(capless /usr/bin/python3 -c '
import os, sys
path, text = sys.argv[1], sys.argv[2]
with open(path, "w") as f:
    f.write(text)
try:
    os.setxattr(path, "trusted.oci-sockopt-hook.record", text.encode(), follow_symlinks=False)
    print("xattr=ok")
except OSError as e:
    print("xattr=" + os.strerror(e.errno))
' "$file" "$json" 2>&1)
tap_is "$out" "xattr=Operation not permitted" \
	"it writes a record as the file's content into the state directory, but cannot set the attribute" ||
	tap_diag "$(ls -la "$CT_STATE_DIR")"
tap_is "$(jq -r .id "$file" 2>/dev/null)" "$planted" "the planted file holds the record"

err=$CT_TMP/status.err
st=$("$HOOK" --config "$cfg" status --json 2>"$err")
tap_is "$(jq -r '[.[].id] | sort | join(" ")' <<<"$st")" "$victim" \
	"status lists the victim only, not the planted record" || tap_diag "$st"
tap_like "$(cat "$err")" "ignoring state record '$planted\\.json' in .*: it has no record attribute \\(trusted\\.oci-sockopt-hook\\.record\\)" \
	"and says in one line why it ignores the planted one"
out=$("$HOOK" --config "$cfg" apply --all 2>&1)
tap_ok "$(! grep -q "$planted" <<<"$(grep -v 'ignoring state record' <<<"$out")"; echo $?)" \
	"apply does not act on it" || tap_diag "$out"
"$HOOK" --config "$cfg" poststop 2>"$err" <<EOF
{"ociVersion": "1.0.2", "id": "$planted", "status": "stopped", "pid": 0, "bundle": "$CT_TMP"}
EOF
tap_is "$(cg_ids)" "$ids" "a poststop for the planted id leaves the victim's programs" ||
	tap_diag "$(cat "$err")"
tap_is "$(ct_record "$victim" | jq -c .programs)" "$(jq -c .programs <<<"$rec")" \
	"and its record"
rm -f "$file"
ct_delete runc "$victim"
ct_check_same "BPF programs, hook state and cgroups are as before" "$BEFORE"
tap_done
