#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# shellcheck disable=SC2016,SC2020,SC2153 # apt format strings; KVER.. from kernel.env
#
# fetch-kernel.sh BUILD_DIR
#
# Get a Debian kernel that carries the 6.19 series (SK_BPF_BYPASS_PROT_MEM)
# from the *unstable* suite of the mirror that this machine's apt sources
# already name. apt runs on a private configuration under BUILD_DIR/vm/apt,
# so the system's own lists and state are never touched. The kernel image is
# extracted to BUILD_DIR/vm/cache/; once it is there, a later run does no
# network access at all.
#
# The version is resolved at run time: the flavour's meta package
# (linux-image-cloud-amd64) names the current ABI, and whichever of that
# ABI's packages holds vmlinuz is used (linux-binary-<abi>-cloud-amd64 in
# the current layout, linux-image-<abi>-cloud-amd64[-unsigned] before it).
#
# Prints "kernel: VERSION (PACKAGE VERSION)" and, on the last line of stdout,
# the path of the kernel image.
#
# Environment:
#   VM_KERNEL_MIN      lowest acceptable upstream version (6.19)
#   VM_KERNEL_FLAVOUR  Debian kernel flavour (cloud-amd64); another
#                      flavour's kernel is cached beside it, under its own
#                      kernel-FLAVOUR.env (kernel.env is cloud-amd64's)
#   VM_KERNEL_SUITE    suite to take it from (unstable)
#   VM_KERNEL_REFRESH  1: ignore the cache and resolve again
#   VM_APT_MIRROR      mirror URI to use instead of the one apt names
#
# Exit: 0 kernel ready; 77 no kernel can be had (no mirror, no network, no
# such package); 1 anything else.
set -euo pipefail

prog=fetch-kernel
say() { echo "$prog: $*" >&2; }
skip() { say "SKIP: $*"; exit 77; }
die() { say "error: $*"; exit 1; }

[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
build=$(mkdir -p "$1" && cd "$1" && pwd)
vm="$build/vm"
cache="$vm/cache"
aptdir="$vm/apt"
min=${VM_KERNEL_MIN:-6.19}
flavour=${VM_KERNEL_FLAVOUR:-cloud-amd64}
suite=${VM_KERNEL_SUITE:-unstable}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
stamp="$cache/kernel.env"
[ "$flavour" = cloud-amd64 ] || stamp="$cache/kernel-$flavour.env"

# version_ge A B: upstream version A >= B ("7.2.13+deb14-cloud-amd64" >= 6.19)
version_ge() {
	local a=${1%%[-+]*}
	[ "$(printf '%s\n%s\n' "$2" "$a" | sort -V | head -n1)" = "$2" ]
}

report() {
	# shellcheck disable=SC1090
	. "$stamp"
	echo "kernel: $KVER ($PKG $PKGVER)"
	echo "$cache/$VMLINUZ"
}

if [ "${VM_KERNEL_REFRESH:-0}" != 1 ] && [ -s "$stamp" ]; then
	# shellcheck disable=SC1090
	. "$stamp"
	if [ -s "$cache/$VMLINUZ" ] && version_ge "$KVER" "$min"; then
		say "cached, no network access"
		report
		exit 0
	fi
fi

command -v apt-get >/dev/null || skip "apt-get not found"
command -v dpkg-deb >/dev/null || skip "dpkg-deb not found"
[ -r "$keyring" ] || skip "$keyring missing (debian-archive-keyring)"

# shellcheck source=tests/vm/unstable-apt.sh
. "$(dirname "$0")/unstable-apt.sh"
mkdir -p "$cache"
unstable_apt_init "$aptdir" || skip "cannot read the $suite suite (see above)"
field() { unstable_field "$@"; }

# ABI from the meta package's dependency on linux-image-<abi>-<flavour>
abi=$(field "linux-image-$flavour" Depends | tr ',|' '\n\n' |
	sed -n "s/^ *linux-image-\(.*\)-$flavour\( .*\)\{0,1\}$/\1/p" | head -n1)
if [ -z "$abi" ]; then
	# no meta package: the newest ABI that has any image package
	abi=$(apt-cache "${apt_opts[@]}" pkgnames linux-image- |
		sed -n "s/^linux-image-\([0-9].*\)-$flavour\(-unsigned\)\{0,1\}$/\1/p" |
		sort -V | tail -n1)
fi
[ -n "$abi" ] || skip "no linux-image-*-$flavour package in $suite"
version_ge "$abi" "$min" || skip "newest $flavour kernel in $suite is $abi, need >= $min"

kver="$abi-$flavour"
deb=""
for pkg in "linux-binary-$kver" "linux-binary-unsigned-$kver" \
	"linux-image-$kver" "linux-image-$kver-unsigned"; do
	pkgver=$(field "$pkg" Version)
	[ -n "$pkgver" ] || continue
	rm -f "$aptdir/dl/"*.deb
	say "apt-get download $pkg ($pkgver)"
	(cd "$aptdir/dl" && apt-get "${apt_opts[@]}" download "$pkg" >&2) ||
		skip "cannot download $pkg"
	deb=$(ls "$aptdir/dl/"*.deb)
	image=$(dpkg-deb -c "$deb" | awk '{ print $NF }' |
		grep -E '/vmlinu[xz](-[^/]*)?$' | head -n1 || true)
	[ -n "$image" ] && break
	say "$pkg holds no vmlinuz, trying the next candidate"
	deb=""
done
[ -n "$deb" ] || skip "no package of $kver holds a kernel image"

rm -rf "$aptdir/x"
mkdir -p "$aptdir/x"
dpkg-deb -x "$deb" "$aptdir/x"
install -m 0644 "$aptdir/x/${image#./}" "$cache/vmlinuz-$kver"
rm -rf "$aptdir/x" "$aptdir/dl/"*.deb
cat >"$stamp.tmp" <<EOF
KVER='$kver'
PKG='$pkg'
PKGVER='$pkgver'
VMLINUZ='vmlinuz-$kver'
EOF
mv "$stamp.tmp" "$stamp"
report
