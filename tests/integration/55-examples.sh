#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The examples beyond their JSON Schemas (05-schema.sh): every YAML file
# parses and has apiVersion/kind, the TOML files parse, and the pieces fit
# together: the CRI-O hooks_dir holds the directory `make install` uses,
# containerd's pod_annotations let the hook's keys through, the
# RuntimeClass names the containerd handler, the DaemonSet's ConfigMap is
# the example config and its hostPaths are the install directories, and
# the hooks.d file's when.annotations runs the hook for each key alone
# (podman and CRI-O require every pattern there to match). The runtimes'
# real runs of these examples are in 50-podman.sh and 56-examples-run.sh.
#
# Modules: (the examples)
# Root: no
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/host.sh
. "$here/../lib/host.sh"
top=$TESTS_TOP BUILD=$TESTS_BUILD
PY=/usr/bin/python3
tap_require_cmd make
$PY -c 'import yaml, tomllib' 2>/dev/null ||
	tap_skip_all "python3 with yaml (python3-yaml) and tomllib (3.11) is needed"
[ -x "$BUILD/oci-sockopt-hook" ] || tap_skip_all "hook not built (run make)"

# Where `make install` puts the hooks.d file, by default. It rewrites
# $BUILD/hooks.d-*.json: one test run at a time.
host_lock || tap_bail "cannot take $HOST_LOCK"
T=$(mktemp -d /tmp/sockopt-hook-examples.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
out=$(make -C "$top" BUILD="$BUILD" -o "$BUILD/oci-sockopt-hook" install DESTDIR="$T" 2>&1)
tap_ok $? "make install DESTDIR=\$tmp, to find the default hooks.d directory" || tap_diag "$out"
hooksd=$(cd "$T" && find . -name oci-sockopt-hook.json -path '*hooks.d*' -printf '/%P\n')
hooksd=${hooksd%/*}
tap_diag "make install puts the hooks.d file in $hooksd"

out=$($PY "$here/../lib/examples_check.py" "$top" "$hooksd" 2>&1)
tap_relay examples_check.py $? <<<"$out"

tap_done
