#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# cdi-schema.sh BUILD_DIR
#
# CDI's JSON schema (schema.json and the defs.json it refers to), from the
# CDI reference that Debian's unstable suite packages
# (golang-tags.cncf-container-device-interface-dev, which the older name
# golang-github-container-orchestrated-devices-container-device-interface-dev
# now depends on), through tests/vm/fetch-deb.sh: the mirror this
# machine's apt sources name, the .deb checked against the suite's signed
# Release file and kept in BUILD_DIR/vm/debs/, so a second run needs no
# network. Extracted into BUILD_DIR/cdi-schema/; prints that directory.
#
# Exit 0; 77 when the suite cannot be had here; 1 anything else.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(mkdir -p "$1" && cd "$1" && pwd)
out=$build/cdi-schema
pkg=golang-tags.cncf-container-device-interface-dev
src=usr/share/gocode/src/tags.cncf.io/container-device-interface/schema

deb=$("$top/tests/vm/fetch-deb.sh" "$build" "$pkg" | tail -n1) || exit $?
tmp=$(mktemp -d "$build/cdi-schema.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp"
for f in schema.json defs.json; do
	[ -r "$tmp/$src/$f" ] || { echo "cdi-schema: $deb has no $src/$f" >&2; exit 1; }
done
mkdir -p "$out"
cp "$tmp/$src/schema.json" "$tmp/$src/defs.json" "$out/"
basename "$deb" .deb | cut -d_ -f1,2 | tr _ ' ' >"$out/VERSION"
echo "$out"
