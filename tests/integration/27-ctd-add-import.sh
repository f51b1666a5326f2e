#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `runtime configure --runtime containerd --add-import` on the main configs
# containerd comes with, copied into a directory of the test's own (the
# host's real config is only read): Debian 12's shipped
# /etc/containerd/config.toml (checked against dpkg's checksum: no imports
# key) and `containerd config default` of this host's 1.6 (`imports = []`).
# For each:
#  - without --add-import: refused in one line that names --add-import,
#    nothing written;
#  - --add-import --dry-run: the main config's diff (our imports line),
#    nothing written;
#  - --add-import: the main config is the old one plus our line (in place
#    of `imports = []`), a byte-identical copy of the old one beside the
#    base specs, and containerd's own `config dump` of the result has the
#    handlers sockopt and sockopt-bypass and otherwise the config it had;
#    a second run (with or without --add-import): nothing to change;
#  - unconfigure: the main config byte-identical to the original, and
#    nothing of ours left (no copy, drop-in, base specs, conf.d).
# And what --add-import refuses or leaves: a conf.d that already holds
# another file (the import would load it too), a main config that imports
# a file of its own (edited by hand), another runtime; a main config
# rewritten after configure (node tooling) is left as it is by
# unconfigure, which says so and removes only files of ours.
#
# Modules: `wiring_ctd.c`, `cmd_runtime_config.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_require_host
tap_require_cmd containerd ctr dpkg-query md5sum
ct_init_host
HOOK_CONFIG=$(ct_config plain)
DEBIAN=/etc/containerd/config.toml

# configure ARGS...: the hook's runtime command on $T/config.toml; sets
# OUT (stdout and stderr) and RC.
configure()
{
	OUT=$("$HOOK" --config "$HOOK_CONFIG" runtime "$@" --runtime containerd \
		--ctd-config "$T/config.toml" 2>&1)
	RC=$?
}
tree() { (cd "$T" && find . -print0 | sort -z | xargs -0 stat -c '%n %s %a' && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
dump() { containerd --config "$T/config.toml" config dump 2>&1; }
# without_ours: a dump less our handlers and its imports list
without_ours()
{
	sed -e '/^imports = /d' -e '/runtimes\.sockopt/,/^$/d'
}

# new_root NAME: an empty directory $T for one main config
new_root()
{
	T=$CT_TMP/$1
	mkdir -p "$T"
}

want=$(dpkg-query -W -f='${Conffiles}\n' containerd | awk -v f="$DEBIAN" '$1 == f {print $2}')
tap_is "$(md5sum <"$DEBIAN" | cut -d' ' -f1)" "$want" "$DEBIAN is Debian's, as shipped (dpkg's checksum)"
tap_is "$(grep -c '^imports' "$DEBIAN")" 0 "it has no imports key"

for kind in debian default; do
	new_root "$kind"
	if [ "$kind" = debian ]; then
		cp "$DEBIAN" "$T/config.toml"
	else
		containerd config default >"$T/config.toml"
		tap_is "$(grep -c '^imports = \[\]$' "$T/config.toml")" 1 "containerd config default: imports = []"
	fi
	cp "$T/config.toml" "$CT_TMP/$kind.orig"
	DUMP_BEFORE=$(dump)
	before=$(tree)

	configure configure
	tap_is "$RC:$(wc -l <<<"$OUT")" "1:1" "$kind: configure without --add-import: refused, one line" || tap_diag "$OUT"
	tap_like "$OUT" "imports no directory .*run this again with --add-import$" "$kind: the line names --add-import"
	tap_is "$(tree)" "$before" "$kind: nothing written"

	configure configure --add-import --dry-run
	tap_is "$RC" 0 "$kind: --add-import --dry-run: exit 0" || tap_diag "$OUT"
	tap_like "$OUT" "$T/config.toml: would update.*"$'\n'"\+imports = \[\"$T/conf\.d/\*\.toml\"\]" \
		"$kind: --dry-run shows the imports line in the main config's diff"
	[ "$kind" = default ] && tap_like "$OUT" $'\n''-imports = \[\]' "$kind: in place of imports = []"
	tap_is "$(tree)" "$before" "$kind: --dry-run wrote nothing"

	configure configure --add-import
	tap_is "$RC" 0 "$kind: --add-import: exit 0" || tap_diag "$OUT"
	tap_like "$OUT" "conf\.d/99-oci-sockopt-hook\.toml: created.*main-config-before-import\.toml: created.*$T/config\.toml: updated" \
		"$kind: the drop-in, then the copy, then the main config" || tap_diag "$OUT"
	cmp -s "$T/oci-sockopt-hook/main-config-before-import.toml" "$CT_TMP/$kind.orig"
	tap_ok $? "$kind: the copy is the main config as it was, byte for byte"
	added=$(diff "$CT_TMP/$kind.orig" "$T/config.toml" | grep -c '^>')
	removed=$(diff "$CT_TMP/$kind.orig" "$T/config.toml" | grep '^<' | tr -d '\n')
	tap_is "$added:$removed" "2:$([ "$kind" = default ] && echo '< imports = []')" \
		"$kind: the main config gains our comment and imports line$([ "$kind" = default ] && echo ', in place of imports = []')"
	DUMP=$(dump)
	[[ $DUMP == *'runtimes.sockopt]'* && $DUMP == *'runtimes.sockopt-bypass]'* &&
		$DUMP == *"base_runtime_spec = \"$T/oci-sockopt-hook/sockopt-base-spec.json\""* ]]
	tap_ok $? "$kind: containerd's config dump has the handlers sockopt and sockopt-bypass with our base specs" ||
		tap_diag "$DUMP"
	tap_is "$(without_ours <<<"$DUMP")" "$(without_ours <<<"$DUMP_BEFORE")" \
		"$kind: and otherwise the config it had"
	files=$(tree)
	configure configure --add-import
	tap_like "$RC:$OUT" "^0:.*containerd: nothing to change" "$kind: --add-import again: nothing to change"
	configure configure
	tap_like "$RC:$OUT" "^0:.*containerd: nothing to change" "$kind: configure without it: nothing to change"
	tap_is "$(tree)" "$files" "$kind: neither changed a file"

	configure unconfigure
	tap_is "$RC" 0 "$kind: unconfigure: exit 0" || tap_diag "$OUT"
	cmp -s "$T/config.toml" "$CT_TMP/$kind.orig"
	tap_ok $? "$kind: unconfigure: the main config byte-identical to the original"
	tap_is "$(tree)" "$before" "$kind: nothing of ours left (copy, drop-in, base specs, conf.d)"
	tap_is "$(dump)" "$DUMP_BEFORE" "$kind: containerd's config dump as before"
done

# --- what --add-import refuses ---------------------------------------------------

new_root busy
cp "$DEBIAN" "$T/config.toml"
mkdir "$T/conf.d"
printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "other:1"\n' >"$T/conf.d/10-other.toml"
before=$(tree)
configure configure --add-import
tap_is "$RC:$(wc -l <<<"$OUT")" "1:1" "a conf.d holding another file: --add-import refused, one line" || tap_diag "$OUT"
tap_like "$OUT" "would load more than our drop-in \('plugins\.io\.containerd\.grpc\.v1\.cri\.sandbox_image' changes\): $T/conf\.d holds other files" \
	"it names what the import would change"
tap_is "$(tree)" "$before" "nothing written"

new_root own-imports
{
	echo "imports = [\"$T/extra.toml\"]"
	cat "$DEBIAN"
} >"$T/config.toml"
before=$(tree)
configure configure --add-import
tap_like "$RC:$OUT" "^1:.*imports files but no directory: --add-import edits only a config with no imports or \`imports = \[\]\`; add \"$T/conf\.d/\*\.toml\" to its imports by hand" \
	"a main config importing a file of its own: left to the operator, one line"
tap_is "$(tree)" "$before" "nothing written"

OUT=$("$HOOK" --config "$HOOK_CONFIG" runtime configure --runtime crio --add-import 2>&1)
tap_like "$?:$OUT" "^2:.*--add-import: containerd only, not crio" "--add-import with another runtime: usage error"

# --- node tooling rewrote the main config after configure ------------------------

new_root rewritten
cp "$DEBIAN" "$T/config.toml"
before=$(tree)
configure configure --add-import
tap_is "$RC" 0 "configure --add-import" || tap_diag "$OUT"
{
	cat "$T/config.toml"
	echo '# a line node tooling added'
} >"$T/rewritten.toml" && cp "$T/rewritten.toml" "$T/config.toml" && rm "$T/rewritten.toml"
cp "$T/config.toml" "$CT_TMP/rewritten.now"
configure unconfigure
tap_like "$RC:$OUT" "^0:.*$T/config\.toml changed since --add-import edited it: left as it is" \
	"unconfigure of a main config changed since: exit 0, says it leaves it" || tap_diag "$OUT"
cmp -s "$T/config.toml" "$CT_TMP/rewritten.now"
tap_ok $? "the main config as the tooling left it"
tap_is "$(find "$T" -mindepth 1 ! -name config.toml ! -path "$T/conf.d" | wc -l)" 0 \
	"every file of ours removed (the copy, the drop-in, the base specs)"

tap_done
