#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `make install` and `make uninstall` (docs/install.md): the Makefile builds
# the files and passes where they go in the environment.
#
#   install.sh install|uninstall
#
# BIN             the built binary
# BUILD           the build directory: hooks.d-*.json, systemd/*, man/*
# HOOKDIR         where the binary goes ($(PREFIX)/libexec/oci/hooks.d)
# HOOKSD          where the hooks.d file goes
# MANDIR          the man page tree ($(PREFIX)/share/man)
# SYSTEMDDIR      where the units go ($(PREFIX)/lib/systemd/system)
# CONFDIR         the config's directory ($(SYSCONFDIR)/oci-sockopt-hook)
# PREFIX, SYSCONFDIR  where uninstall stops removing empty directories
# DESTDIR         a staging root (empty: this machine, which also starts
#                 the preload and metrics units)
# HOOKS_D         auto (default), always or annotations: which hooks.d file
# NRI             none (default), service or plugin: the NRI plugin's
#                 unit enabled and started, or the binary linked into the
#                 runtime's plugin directory (not both: a second copy
#                 refuses to register)
# NRI_PLUGIN_DIR  that directory (/opt/nri/plugins)
# EXAMPLE_CONFIG  the config installed when none exists
set -eu

PRELOAD_UNITS="oci-sockopt-hook-preload.service oci-sockopt-hook-preload.path"
METRICS_UNITS="oci-sockopt-hook-metrics.service oci-sockopt-hook-metrics.timer"
NRI_UNIT=oci-sockopt-hook-nri.service
MAN_PAGES="man1/oci-sockopt-hook.1 man5/oci-sockopt-hook.json.5"

die() { echo "install.sh: $*" >&2; exit 1; }

need="is not set (run it through make install or make uninstall)"
: "${BIN:?$need}" "${BUILD:?$need}" "${HOOKDIR:?$need}" "${HOOKSD:?$need}"
: "${MANDIR:?$need}" "${SYSTEMDDIR:?$need}" "${CONFDIR:?$need}" "${PREFIX:?$need}"
: "${SYSCONFDIR:?$need}" "${EXAMPLE_CONFIG:?$need}"
DESTDIR=${DESTDIR:-}
HOOKS_D=${HOOKS_D:-auto}
NRI=${NRI:-none}
NRI_PLUGIN_DIR=${NRI_PLUGIN_DIR:-/opt/nri/plugins}
NRI_PLUGIN_LINK=$NRI_PLUGIN_DIR/50-oci-sockopt-hook
CONFIG=$DESTDIR$CONFDIR/config.json
INSTALLED_BIN=$HOOKDIR/oci-sockopt-hook

# run CMD...: show a command, as make would, then run it.
run()
{
	echo "$*"
	"$@"
}

have_systemd() { [ -z "$DESTDIR" ] && [ -d /run/systemd/system ]; }

# hooksd_variant: always or annotations. podman and CRI-O run the hook
# only where its hooks.d file says so, and the operator's defaults
# (defaults.policy, defaults.bypass_prot_mem) must reach every container:
# a config with defaults (the one in place, else the example) gets the
# "when": {"always": true} file, any other the one that runs the hook only
# for containers with our annotations. The built binary tells.
hooksd_variant()
{
	case $HOOKS_D in
	always | annotations)
		echo "$HOOKS_D"
		return
		;;
	auto) ;;
	*) die "HOOKS_D must be auto, always or annotations, not '$HOOKS_D'" ;;
	esac
	if ! json=$("$BIN" validate --json "$CONFIG" 2>/dev/null); then
		"$BIN" validate "$CONFIG" >/dev/null || true
		die "cannot tell whether $CONFIG sets defaults:" \
			"fix it, or choose with HOOKS_D=always or HOOKS_D=annotations"
	fi
	case $json in
	*'"has_defaults":true'* | *'"has_defaults": true'*) echo always ;;
	*) echo annotations ;;
	esac
}

# start_units: on this machine, the preload units (else one preload and
# one apply, now) and the metrics timer, which does nothing where
# node_exporter's textfile directory is missing. A failure is only a
# warning: prestart loads what is not pinned, and apply says which running
# container it left as it was.
start_units()
{
	[ -z "$DESTDIR" ] || return 0
	if have_systemd; then
		# shellcheck disable=SC2086
		systemctl daemon-reload && systemctl enable --now $PRELOAD_UNITS ||
			echo "warning: cannot start $PRELOAD_UNITS: prestart loads the programs itself" >&2
		systemctl enable --now oci-sockopt-hook-metrics.timer ||
			echo "warning: cannot start oci-sockopt-hook-metrics.timer" >&2
	else
		"$INSTALLED_BIN" --config "$CONFDIR/config.json" preload ||
			echo "warning: preload failed: prestart loads the programs itself" >&2
		"$INSTALLED_BIN" --config "$CONFDIR/config.json" apply ||
			echo "warning: apply left some running containers as they were (see above)" >&2
	fi
}

stop_units()
{
	[ -z "$DESTDIR" ] || return 0
	if have_systemd; then
		# shellcheck disable=SC2086
		systemctl disable --now "$NRI_UNIT" oci-sockopt-hook-metrics.timer $PRELOAD_UNITS 2>/dev/null || true
	fi
	if [ -x "$INSTALLED_BIN" ]; then
		"$INSTALLED_BIN" preload --unpin || echo "warning: pins left in place" >&2
	fi
}

# nri_plugin: NRI=service starts the plugin's unit (on this machine),
# NRI=plugin links the binary where the runtime starts plugins itself.
nri_plugin()
{
	case $NRI in
	none) ;;
	service)
		if have_systemd; then
			systemctl daemon-reload || die "systemctl daemon-reload failed"
			systemctl enable --now "$NRI_UNIT" || die "cannot start $NRI_UNIT"
			echo "NRI plugin: $NRI_UNIT enabled and started"
		else
			echo "NRI plugin: enable $NRI_UNIT on the node"
		fi
		;;
	plugin)
		run install -d "$DESTDIR$NRI_PLUGIN_DIR"
		run ln -sfn "$INSTALLED_BIN" "$DESTDIR$NRI_PLUGIN_LINK"
		echo "NRI plugin: $NRI_PLUGIN_LINK: the runtime starts it at its next start"
		;;
	esac
}

do_install()
{
	case $NRI in
	none | service | plugin) ;;
	*) die "NRI must be none, service or plugin, not '$NRI'" ;;
	esac
	run install -D -m 0755 "$BIN" "$DESTDIR$HOOKDIR/oci-sockopt-hook"
	for unit in $PRELOAD_UNITS $METRICS_UNITS $NRI_UNIT; do
		run install -D -m 0644 "$BUILD/systemd/$unit" "$DESTDIR$SYSTEMDDIR/$unit"
	done
	for page in $MAN_PAGES; do
		run install -D -m 0644 "$BUILD/man/${page#*/}" "$DESTDIR$MANDIR/$page"
	done
	# Never overwrite an operator's config.
	if [ -e "$CONFIG" ]; then
		echo "keeping existing $CONFIG"
	else
		run install -D -m 0644 "$EXAMPLE_CONFIG" "$CONFIG"
	fi
	variant=$(hooksd_variant)
	case $variant in
	always)
		src=$BUILD/hooks.d-oci-sockopt-hook-always.json
		why="runs the hook for every container: the config has defaults"
		;;
	*)
		src=$BUILD/hooks.d-oci-sockopt-hook.json
		why="runs the hook for containers with sockopt-hook.io/ annotations"
		;;
	esac
	echo "hooks.d file ($variant): $why"
	run install -D -m 0644 "$src" "$DESTDIR$HOOKSD/oci-sockopt-hook.json"
	start_units
	nri_plugin
}

# prune DIR TOP: remove DIR and its parents while they are empty, up to TOP.
prune()
{
	p=$1
	while [ "$p" != "$2" ] && [ "$p" != / ] && rmdir "$p" 2>/dev/null; do
		p=$(dirname "$p")
	done
}

# Removes what install put there; the config only if it is still the
# unmodified example. Empty directories go too.
do_uninstall()
{
	stop_units
	# the plugin link, only if it is ours
	if [ "$(readlink "$DESTDIR$NRI_PLUGIN_LINK" 2>/dev/null)" = "$INSTALLED_BIN" ]; then
		run rm -f "$DESTDIR$NRI_PLUGIN_LINK"
		[ -z "$DESTDIR" ] || prune "$DESTDIR$NRI_PLUGIN_DIR" "$DESTDIR"
	fi
	files=""
	for unit in $PRELOAD_UNITS $METRICS_UNITS $NRI_UNIT; do
		files="$files $DESTDIR$SYSTEMDDIR/$unit"
	done
	for page in $MAN_PAGES; do
		files="$files $DESTDIR$MANDIR/$page"
	done
	# shellcheck disable=SC2086
	run rm -f "$DESTDIR$HOOKDIR/oci-sockopt-hook" "$DESTDIR$HOOKSD/oci-sockopt-hook.json" $files
	if cmp -s "$EXAMPLE_CONFIG" "$CONFIG"; then
		rm -f "$CONFIG"
	elif [ -e "$CONFIG" ]; then
		echo "keeping modified $CONFIG"
	fi
	for d in "$HOOKDIR" "$HOOKSD" "$MANDIR/man1" "$MANDIR/man5" "$SYSTEMDDIR"; do
		prune "$DESTDIR$d" "${DESTDIR:-$PREFIX}"
	done
	prune "$DESTDIR$CONFDIR" "${DESTDIR:-$SYSCONFDIR}"
}

case ${1:-} in
install) do_install ;;
uninstall) do_uninstall ;;
*) die "usage: install.sh install|uninstall" ;;
esac
