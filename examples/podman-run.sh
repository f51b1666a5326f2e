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
# hooks_dir in containers.conf). The hooks.d file runs the hook only for
# containers that carry a sockopt-hook.io/ annotation, so the annotation
# is what turns the policy on:
#
#   SOCKOPT_POLICY=restricted podman-run.sh alpine sh -c 'ip -d link'
#   SOCKOPT_BYPASS=true podman-run.sh --network host my/bulk-transfer
#
# Environment:
#   SOCKOPT_POLICY  a policy named in /etc/oci-sockopt-hook/config.json
#                   (default "restricted"; empty: no policy annotation)
#   SOCKOPT_BYPASS  "true" or "false" (default: no bypass annotation)
#   HOOKS_DIR       default /usr/local/share/containers/oci/hooks.d
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
# shellcheck disable=SC2086 # PODMAN is a command line on purpose
exec ${PODMAN:-podman} --hooks-dir "$HOOKS_DIR" run --rm "$@"
