#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `make install DESTDIR=...` puts exactly the binary, the hooks.d file, the
# example operator config, both man pages, the preload units, the
# metrics service and timer and the NRI plugin's unit in place (paths
# without DESTDIR inside the hooks.d file and the units; NRI=plugin adds
# the link in /opt/nri/plugins, NRI=bad stops), never
# overwrites an operator's config,
# and `make uninstall DESTDIR=...` leaves the tree empty. `man -l` renders
# both pages without warnings. The hooks.d file runs the hook for every
# container when the config in place (else the example) has defaults, and
# only for annotated containers otherwise; HOOKS_D overrides the choice, an
# invalid config stops the install, and validate --hooks-dir agrees with
# what was installed.
#
# Modules: (`scripts/install.sh`)
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/host.sh
. "$here/../lib/host.sh"
top=$TESTS_TOP BUILD=$TESTS_BUILD
BIN=$BUILD/oci-sockopt-hook
tap_require_cmd make jq man cmp
[ -x "$BIN" ] || tap_skip_all "hook not built: $BIN (run make)"

# make install rewrites $BUILD/hooks.d-*.json: one test run at a time.
host_lock || tap_bail "cannot take $HOST_LOCK"
T=$(mktemp -d /tmp/sockopt-hook-install.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
D=$T/dest

# mk TARGET [VAR=VALUE...]: make in the source tree, never rebuilding the
# binary (it is what the other suites test). Sets OUT.
mk()
{
	OUT=$(make -C "$top" BUILD="$BUILD" -o "$BIN" "$@" 2>&1)
}

mk install DESTDIR="$D"
tap_ok $? "make install DESTDIR=\$tmp" || tap_diag "$OUT"
want="0644 etc/oci-sockopt-hook/config.json
0644 usr/local/share/containers/oci/hooks.d/oci-sockopt-hook.json
0644 usr/local/share/man/man1/oci-sockopt-hook.1
0644 usr/local/share/man/man5/oci-sockopt-hook.json.5
0644 usr/local/lib/systemd/system/oci-sockopt-hook-preload.service
0644 usr/local/lib/systemd/system/oci-sockopt-hook-preload.path
0644 usr/local/lib/systemd/system/oci-sockopt-hook-metrics.service
0644 usr/local/lib/systemd/system/oci-sockopt-hook-metrics.timer
0644 usr/local/lib/systemd/system/oci-sockopt-hook-nri.service
0755 usr/local/libexec/oci/hooks.d/oci-sockopt-hook"
tap_is "$(cd "$D" && find . -type f -printf '%m %P\n' | sed 's/^644/0644/; s/^755/0755/' | sort -k2)" \
	"$(sort -k2 <<<"$want")" "exactly the ten files, with modes 0755/0644"
cmp -s "$BIN" "$D/usr/local/libexec/oci/hooks.d/oci-sockopt-hook"
tap_ok $? "the installed binary is the built one"
cmp -s "$top/examples/config.json" "$D/etc/oci-sockopt-hook/config.json"
tap_ok $? "the installed config is examples/config.json"

H=$D/usr/local/share/containers/oci/hooks.d/oci-sockopt-hook.json
tap_is "$(jq -c '[.version, .hook.path, .hook.args, .hook.env, .stages]' "$H" 2>&1)" \
	'["1.0.0","/usr/local/libexec/oci/hooks.d/oci-sockopt-hook",["oci-sockopt-hook","hook"],["OCI_SOCKOPT_HOOK_CONFIG=/etc/oci-sockopt-hook/config.json"],["prestart","poststop"]]' \
	"hooks.d file: schema 1.0.0, the installed path (no DESTDIR in it), the config, prestart+poststop"
U=$D/usr/local/lib/systemd/system
tap_is "$(sed -n 's/^ExecStart=//p' "$U/oci-sockopt-hook-preload.service")" \
	"/usr/local/libexec/oci/hooks.d/oci-sockopt-hook --config /etc/oci-sockopt-hook/config.json preload
/usr/local/libexec/oci/hooks.d/oci-sockopt-hook --config /etc/oci-sockopt-hook/config.json cdi refresh
/usr/local/libexec/oci/hooks.d/oci-sockopt-hook --config /etc/oci-sockopt-hook/config.json apply" \
	"the preload service runs the installed binary's preload, cdi refresh, then apply, with the installed config"
tap_is "$(sed -n 's/^\(PathChanged\|Unit\)=//p' "$U/oci-sockopt-hook-preload.path" | tr '\n' ' ')" \
	"/etc/oci-sockopt-hook/config.json oci-sockopt-hook-preload.service " \
	"the preload path unit starts it again when the config changes"
tap_is "$(sed -n 's/^ExecStart=//p' "$U/oci-sockopt-hook-metrics.service")" \
	"/usr/local/libexec/oci/hooks.d/oci-sockopt-hook metrics --output /var/lib/prometheus/node-exporter/oci-sockopt-hook.prom" \
	"the metrics service writes the installed binary's metrics into Debian's node_exporter textfile directory"
tap_is "$(sed -n 's/^\(OnUnitActiveSec\|WantedBy\)=//p' "$U/oci-sockopt-hook-metrics.timer" | tr '\n' ' ')" \
	"15s timers.target " \
	"the metrics timer runs it every 15 s, enabled under timers.target"
tap_is "$(sed -n 's/^\(ExecStart\|Restart\)=//p' "$U/oci-sockopt-hook-nri.service" | tr '\n' ' ')" \
	"/usr/local/libexec/oci/hooks.d/oci-sockopt-hook --config /etc/oci-sockopt-hook/config.json nri always " \
	"the NRI unit runs the installed binary's nri with the installed config, restarted if it dies"
tap_is "$(jq -r '.when.annotations | to_entries[] | select((.key | test("^\\^.*\\$$")) and (.value | test("^\\^.*\\$$")) | not) | .key' "$H")" "" \
	"hooks.d file: every when.annotations regex is anchored (^...\$)"
[[ $OUT == *"hooks.d file (annotations): "* ]]
tap_ok $? "the example config has no defaults: install says it picked the annotation-conditioned file" ||
	tap_diag "$OUT"
[[ $OUT != *"NRI plugin:"* ]]
tap_ok $? "NRI=none (the default): the unit is installed, nothing enabled or linked"
D2=$T/dest-plugin
mk install DESTDIR="$D2" NRI=plugin
tap_is "$(readlink "$D2/opt/nri/plugins/50-oci-sockopt-hook")" "/usr/local/libexec/oci/hooks.d/oci-sockopt-hook" \
	"NRI=plugin: /opt/nri/plugins/50-oci-sockopt-hook links the installed binary" || tap_diag "$OUT"
mk uninstall DESTDIR="$D2"
tap_is "$(find "$D2" -mindepth 1)" "" "NRI=plugin: uninstall removes the link and the directories"
mk install DESTDIR="$T/dest-bad" NRI=bad
rc=$?
[ $rc != 0 ] && [[ $OUT == *"NRI must be none, service or plugin, not 'bad'"* ]]
tap_ok $? "NRI=bad: the install stops with one line" || tap_diag "$OUT"

out=$("$D/usr/local/libexec/oci/hooks.d/oci-sockopt-hook" validate "$D/etc/oci-sockopt-hook/config.json" 2>&1)
tap_ok $? "the installed binary validates the installed config" || tap_diag "$out"

for page in usr/local/share/man/man1/oci-sockopt-hook.1 usr/local/share/man/man5/oci-sockopt-hook.json.5; do
	name=$(basename "$page")
	text=$(MANWIDTH=80 man -l "$D/$page" 2>"$T/man.err")
	rc=$?
	[ "$rc" = 0 ] && [[ $text == *$'\nNAME\n'* ]] && [[ $text == *"SEE ALSO"* ]]
	tap_ok $? "man -l renders $name (NAME and SEE ALSO sections)" ||
		tap_diag "exit $rc" "$(head -20 <<<"$text")" "$(cat "$T/man.err")"
	warn=$(MANWIDTH=80 man --warnings -l "$D/$page" 2>&1 >/dev/null)
	tap_is "$warn" "" "man --warnings -l $name: no groff warnings"
done

# variant: "always" or "annotations", from the installed hooks.d file.
variant()
{
	case $(jq -c .when "$H" 2>&1) in
	'{"always":true}') echo always ;;
	'{"annotations":'*) echo annotations ;;
	*) jq -c .when "$H" 2>&1 ;;
	esac
}
C=$D/etc/oci-sockopt-hook/config.json
jq '.defaults.policy = "restricted"' "$top/examples/config.json" >"$C"
mk install DESTDIR="$D"
[ "$(variant)" = always ] && [[ $OUT == *"keeping existing $C"* ]] &&
	[[ $OUT == *"hooks.d file (always): runs the hook for every container"* ]]
tap_ok $? "an existing config with defaults.policy: install keeps it and picks the always hooks.d file" ||
	tap_diag "$OUT" "$(cat "$H")"
tap_is "$(jq -c '[.hook.path, .hook.args, .hook.env, .stages]' "$H" 2>&1)" \
	'["/usr/local/libexec/oci/hooks.d/oci-sockopt-hook",["oci-sockopt-hook","hook"],["OCI_SOCKOPT_HOOK_CONFIG=/etc/oci-sockopt-hook/config.json"],["prestart","poststop"]]' \
	"the always hooks.d file: the installed path, the config, prestart+poststop"
HD=$D/usr/local/share/containers/oci/hooks.d
# (The node's TCP autotuning warning about restricted's clamp is the
# kernel's business: 85-sysctls.sh.)
out=$("$BIN" validate "$C" --hooks-dir "$HD" 2>&1 >/dev/null | grep -v 'TCP autotuning')
tap_is "$out" "" "validate --hooks-dir on what was installed: no warning"
mk install DESTDIR="$D" HOOKS_D=annotations
tap_is "$(variant)" annotations "HOOKS_D=annotations overrides the choice"
out=$("$BIN" validate "$C" --hooks-dir "$HD" 2>&1 >/dev/null)
tap_like "$out" "^oci-sockopt-hook: warning: the defaults of $C .* will not reach unannotated containers" \
	"validate --hooks-dir warns about the overridden choice"
jq '.defaults.bypass_prot_mem = true' "$top/examples/config.json" >"$C"
mk install DESTDIR="$D"
tap_is "$(variant)" always "an existing config with defaults.bypass_prot_mem: the always hooks.d file"
cp "$top/examples/config.json" "$C"
mk install DESTDIR="$D" HOOKS_D=always
tap_is "$(variant)" always "HOOKS_D=always with a config without defaults: the always hooks.d file"
mk install DESTDIR="$D" HOOKS_D=sometimes
[ -n "$OUT" ] && [[ $OUT == *"HOOKS_D must be auto, always or annotations, not 'sometimes'"* ]] &&
	! make -s -C "$top" BUILD="$BUILD" -o "$BIN" install DESTDIR="$D" HOOKS_D=sometimes >/dev/null 2>&1
tap_ok $? "HOOKS_D=sometimes: install fails, naming the choices" || tap_diag "$OUT"
echo '{"log_level": "loud"}' >"$C"
if mk install DESTDIR="$D"; then rc=0; else rc=$?; fi
[ "$rc" != 0 ] && [[ $OUT == *"unknown level 'loud'"* ]] &&
	[[ $OUT == *"cannot tell whether $C sets defaults"* ]]
tap_ok $? "an invalid existing config: install stops, with validate's reason" || tap_diag "$OUT"
mk install DESTDIR="$D" HOOKS_D=annotations
tap_ok $? "an invalid existing config, HOOKS_D=annotations: install goes on" || tap_diag "$OUT"
mk uninstall DESTDIR="$D"
rm -rf "$D"
mk install DESTDIR="$D"
tap_is "$(variant)" annotations "a fresh install again: the example config, the annotation-conditioned file"

echo '{"log_level": "debug"}' >"$D/etc/oci-sockopt-hook/config.json"
mk install DESTDIR="$D" &&
	[ "$(cat "$D/etc/oci-sockopt-hook/config.json")" = '{"log_level": "debug"}' ]
tap_ok $? "a second install keeps the operator's modified config" || tap_diag "$OUT"
mk uninstall DESTDIR="$D" &&
	[ "$(cd "$D" && find . -type f -printf '%P\n')" = etc/oci-sockopt-hook/config.json ]
tap_ok $? "uninstall removes everything but the modified config" ||
	tap_diag "$OUT" "$(cd "$D" && find .)"
rm -rf "$D"

mk install DESTDIR="$D"
tap_ok $? "make install DESTDIR=\$tmp (fresh)" || tap_diag "$OUT"
mk uninstall DESTDIR="$D"
tap_ok $? "make uninstall DESTDIR=\$tmp" || tap_diag "$OUT"
tap_is "$(find "$D" -type f)" "" "after uninstall no file is left"
tap_is "$(find "$D" -mindepth 1)" "" "after uninstall no directory is left either"
mk uninstall DESTDIR="$D"
tap_ok $? "uninstall again, on an empty tree, succeeds" || tap_diag "$OUT"

tap_done
