#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# nri-protos.sh BUILD_DIR [PROTO_DIR]
#
# The .proto files the NRI plugin (`oci-sockopt-hook nri`) is compiled from,
# copied into BUILD_DIR/nri/src/ for protoc-c, with their provenance in
# BUILD_DIR/nri/src/VERSIONS:
#
#   nri/pkg/api/api.proto       NRI's plugin API (containerd/nri)
#   ttrpc/request.proto         the ttrpc request/response envelope
#   ttrpc/proto/status.proto    its status (Debian's ttrpc keeps the code)
#
# PROTO_DIR (make NRI_PROTO_DIR=...) is a directory that holds nri/ and
# ttrpc/ as above: /usr/share/gocode/src/github.com/containerd where
# golang-github-containerd-nri-dev and golang-github-containerd-ttrpc-dev
# are installed (a distribution build names its own). Without it, both
# packages are downloaded from Debian's unstable suite through the mirror
# this machine's apt sources name (tests/vm/fetch-deb.sh: apt checks each
# .deb against the suite's signed Release file), once: the .debs stay in
# BUILD_DIR/vm/debs/. They are the sources Debian's containerd 2.1.9 is
# built from (NRI 0.8.0, ttrpc 1.2.7, as containerd's go.mod names), so the
# plugin speaks exactly the messages of the runtime the node suite runs.
#
# Exit 0, or 1 with one line saying what to do.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [PROTO_DIR]" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(mkdir -p "$1" && cd "$1" && pwd)
src_dir=${2:-}
out="$build/nri/src"
files=(nri/pkg/api/api.proto ttrpc/request.proto ttrpc/proto/status.proto)

fail() {
	echo "nri-protos: $*" >&2
	echo "nri-protos: give make NRI_PROTO_DIR=DIR, DIR holding ${files[*]}" \
		"(golang-github-containerd-nri-dev and golang-github-containerd-ttrpc-dev" \
		"install them under /usr/share/gocode/src/github.com/containerd)" >&2
	exit 1
}

tmp=$(mktemp -d "$build/nri-protos.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
versions=""
if [ -n "$src_dir" ]; then
	for f in "${files[@]}"; do
		[ -r "$src_dir/$f" ] || fail "$src_dir/$f: not found"
	done
	mkdir -p "$tmp/tree"
	(cd "$src_dir" && cp --parents "${files[@]}" "$tmp/tree/")
	versions="from $src_dir"
else
	for pkg in golang-github-containerd-nri-dev golang-github-containerd-ttrpc-dev; do
		deb=$("$top/tests/vm/fetch-deb.sh" "$build" "$pkg" 2>"$tmp/fetch.log" | tail -n1) ||
			{ cat "$tmp/fetch.log" >&2; fail "cannot download $pkg from Debian's unstable suite"; }
		dpkg-deb -x "$deb" "$tmp/deb"
		versions="$versions$(basename "$deb" .deb | cut -d_ -f1,2 | tr _ ' ')"$'\n'
	done
	base="$tmp/deb/usr/share/gocode/src/github.com/containerd"
	mkdir -p "$tmp/tree"
	for f in "${files[@]}"; do
		[ -r "$base/$f" ] || fail "the downloaded packages lack $f"
	done
	(cd "$base" && cp --parents "${files[@]}" "$tmp/tree/")
fi
printf '%s\n' "$versions" | sed '/^$/d' >"$tmp/tree/VERSIONS"
rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv "$tmp/tree" "$out"
