#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# fetch-cel.sh BUILD_DIR
#
# Test-only toolchain for tests/cel/vapcheck.go: a Go compiler and Google's
# cel-go (the CEL implementation Kubernetes uses) with its Go dependencies,
# all as Debian packages from the unstable suite of the mirror that this
# machine's apt sources name (tests/vm/unstable-apt.sh), extracted with
# `dpkg-deb -x` into BUILD_DIR/cel/root. Nothing is installed on the system.
# Then builds BUILD_DIR/cel/vapcheck, offline (GOPROXY=off, GOPATH mode over
# the usr/share/gocode/src tree of Debian's -dev packages).
#
# Prints the path of vapcheck on the last line of stdout. A vapcheck newer
# than its source is reused without network access.
#
# Exit: 0 ready; 77 cannot be had here (no mirror, no package); 1 otherwise.
set -euo pipefail

say() { echo "fetch-cel: $*" >&2; }
skip() { say "SKIP: $*"; exit 77; }

[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
build=$(mkdir -p "$1" && cd "$1" && pwd)
cel="$build/cel"
root="$cel/root"
src="$here/vapcheck.go"
bin="$cel/vapcheck"

if [ -x "$bin" ] && [ "$bin" -nt "$src" ]; then
	echo "$bin"
	exit 0
fi

go_bin() { ls -d "$root"/usr/lib/go-1.*/bin/go 2>/dev/null | sort -V | tail -n1; }

if [ -z "$(go_bin)" ] || [ ! -d "$root/usr/share/gocode/src/github.com/google/cel-go" ]; then
	command -v apt-get >/dev/null || skip "apt-get not found"
	command -v dpkg-deb >/dev/null || skip "dpkg-deb not found"
	# shellcheck source=tests/vm/unstable-apt.sh
	. "$here/../vm/unstable-apt.sh"
	[ -r "$unstable_keyring" ] || skip "$unstable_keyring missing (debian-archive-keyring)"
	unstable_apt_init "$build/vm/apt" || skip "cannot read the unstable suite (see above)"

	# The newest golang-1.NN-go the suite has.
	gopkg=$(apt-cache "${apt_opts[@]}" pkgnames golang-1. 2>/dev/null |
		grep -E '^golang-1\.[0-9]+-go$' | sort -V | tail -n1)
	[ -n "$gopkg" ] || skip "no golang-1.NN-go in the suite"

	# cel-go and the closure of its golang-*-dev Depends (source trees only).
	declare -A seen=()
	queue=(golang-github-google-cel-go-dev)
	pkgs=("$gopkg" "${gopkg%-go}-src")
	while [ ${#queue[@]} -gt 0 ]; do
		p=${queue[0]}
		queue=("${queue[@]:1}")
		[ -z "${seen[$p]:-}" ] || continue
		seen[$p]=1
		if [ -z "$(unstable_field "$p" Version)" ]; then
			# A virtual or dropped -dev package: the build says if it mattered.
			[ "$p" != golang-github-google-cel-go-dev ] || skip "no cel-go in the suite"
			say "no package $p in the suite, skipped"
			continue
		fi
		pkgs+=("$p")
		for d in $(unstable_field "$p" Depends | tr ',' '\n' |
			sed -E 's/\|.*//; s/\(.*\)//; s/:any//; s/[[:space:]]//g' |
			grep -E '^golang-.*-dev$' || true); do
			queue+=("$d")
		done
	done
	debs="$cel/debs"
	mkdir -p "$debs" "$root"
	for p in "${pkgs[@]}"; do
		if ! ls "$debs/${p}_"*.deb >/dev/null 2>&1; then
			say "apt-get download $p"
			(cd "$debs" && apt-get "${apt_opts[@]}" download "$p" >&2) ||
				skip "cannot download $p"
		fi
	done
	for f in "$debs"/*.deb; do
		dpkg-deb -x "$f" "$root"
	done
fi

go=$(go_bin)
[ -n "$go" ] || skip "no Go compiler after extraction"
goroot=$(dirname "$(dirname "$go")")
# golang-1.NN-src ships the standard library under usr/share/go-1.NN;
# golang-1.NN-go links usr/lib/go-1.NN/src to it with an absolute path.
ver=${goroot##*/}
if [ ! -d "$goroot/src/fmt" ]; then
	rm -rf "$goroot/src"
	ln -s "$root/usr/share/$ver/src" "$goroot/src"
fi
[ -d "$goroot/pkg/tool" ] || {
	[ -d "$root/usr/share/$ver/pkg" ] || true
}
gopath="$cel/gopath"
mkdir -p "$gopath" "$cel/cache"
rm -f "$gopath/src"
ln -s "$root/usr/share/gocode/src" "$gopath/src"
say "build vapcheck with $("$go" version 2>/dev/null || echo go)"
env -i PATH=/usr/bin:/bin HOME="$cel" GOROOT="$goroot" GOPATH="$gopath" \
	GO111MODULE=off GOPROXY=off GOFLAGS= GOTOOLCHAIN=local \
	GOCACHE="$cel/cache" CGO_ENABLED=0 \
	"$go" build -o "$bin.tmp" "$src" >&2 || { say "go build failed"; exit 1; }
mv "$bin.tmp" "$bin"
echo "$bin"
