#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs a podman container under an oci-sockopt-hook policy.
#
#   podman-run.sh [PODMAN-RUN-ARGS...] IMAGE [COMMAND...]
#
# podman reads hooks.d files only from its hooks directories; `make install`
# puts ours in /usr/local/share/containers/oci/hooks.d, which podman does
# not read by default, so name it with --hooks-dir (or add it to
# hooks_dir in containers.conf). A --hooks-dir replaces podman's default
# directories, which would hide the other hooks installed there (nvidia,
# seccomp recording): this script names them too, those that exist, after
# ours, so that one of theirs may still mask ours as it would by default.
# The hooks.d file runs the hook only for containers that carry a
# sockopt-hook.io/ annotation, so the annotation is what turns the policy
# on:
#
#   SOCKOPT_POLICY=restricted podman-run.sh alpine sh -c 'ip -d link'
#   SOCKOPT_BYPASS=true podman-run.sh --network host my/bulk-transfer
#
# Environment:
#   SOCKOPT_POLICY  a policy named in /etc/oci-sockopt-hook/config.json
#                   (default "restricted"; empty: no policy annotation)
#   SOCKOPT_BYPASS  "true" or "false" (default: no bypass annotation)
#   HOOKS_DIR       default /usr/local/share/containers/oci/hooks.d
#   PODMAN_HOOKS_DIRS  podman's own hooks directories, kept (default
#                   "/usr/share/containers/oci/hooks.d
#                   /etc/containers/oci/hooks.d", later ones winning)
#   PODMAN          the podman command and its global options
#                   (default "podman"; split on spaces)
#
# What the hook did to the container: `oci-sockopt-hook status` while it
# runs. crun (podman's default runtime) throws hook output away: set
# "log_file" in the operator config to keep the hook's reasons.
set -eu

HOOKS_DIR=${HOOKS_DIR:-/usr/local/share/containers/oci/hooks.d}
SOCKOPT_POLICY=${SOCKOPT_POLICY-restricted}
SOCKOPT_BYPASS=${SOCKOPT_BYPASS:-}

if [ -n "$SOCKOPT_BYPASS" ]; then
	set -- --annotation "sockopt-hook.io/bypass-prot-mem=$SOCKOPT_BYPASS" "$@"
fi
if [ -n "$SOCKOPT_POLICY" ]; then
	set -- --annotation "sockopt-hook.io/policy=$SOCKOPT_POLICY" "$@"
fi
dirs="--hooks-dir $HOOKS_DIR"
for d in ${PODMAN_HOOKS_DIRS-/usr/share/containers/oci/hooks.d /etc/containers/oci/hooks.d}; do
	[ -d "$d" ] && dirs="$dirs --hooks-dir $d"
done
# shellcheck disable=SC2086 # PODMAN and dirs are word lists on purpose
exec ${PODMAN:-podman} $dirs run --rm "$@"
