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

# The packages whose Go trees vapcheck imports (`go list -deps`, each
# import path mapped to the package that ships it). Not the closure of
# cel-go's Depends, which reaches 170 packages and 2 GB (cloud SDKs, ...).
# When Debian moves an import elsewhere, the build names it: add the
# package that now ships it.
CEL_PKGS=(
	golang-github-google-cel-go-dev
	golang-cel-expr-dev
	golang-github-antlr4-go-antlr-dev
	golang-golang-x-exp-dev
	golang-golang-x-text-dev
	golang-google-genproto-dev
	golang-google-protobuf-dev
	golang-gopkg-yaml.v3-dev
)

# newest PATTERN...: the newest (sort -V) of the files that exist.
newest() {
	local f

	for f in "$@"; do if [ -e "$f" ]; then echo "$f"; fi; done | sort -V | tail -n1
}
go_bin() { newest "$root"/usr/lib/go-1.*/bin/go; }

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

	pkgs=("$gopkg" "${gopkg%-go}-src" "${CEL_PKGS[@]}")
	debs="$cel/debs"
	mkdir -p "$debs" "$root"
	for p in "${pkgs[@]}"; do
		if [ -z "$(newest "$debs/${p}_"*.deb)" ]; then
			say "apt-get download $p"
			(cd "$debs" && apt-get "${apt_opts[@]}" download "$p" >&2) ||
				skip "cannot download $p"
		fi
	done
	for p in "${pkgs[@]}"; do
		dpkg-deb -x "$(newest "$debs/${p}_"*.deb)" "$root"
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
gopath="$cel/gopath"
mkdir -p "$gopath" "$cel/cache"
rm -f "$gopath/src"
ln -s "$root/usr/share/gocode/src" "$gopath/src"
say "build vapcheck with $("$go" version 2>/dev/null || echo go)"
env -i PATH=/usr/bin:/bin HOME="$cel" GOROOT="$goroot" GOPATH="$gopath" \
	GO111MODULE=off GOPROXY=off GOFLAGS= GOTOOLCHAIN=local \
	GOCACHE="$cel/cache" CGO_ENABLED=0 \
	"$go" build -o "$bin.tmp" "$src" >&2 ||
	{ say "go build failed (an import not found: add its package to CEL_PKGS)"; exit 1; }
mv "$bin.tmp" "$bin"
rm -rf "$cel/cache" # 130 MB, only worth it while vapcheck.go changes
echo "$bin"
