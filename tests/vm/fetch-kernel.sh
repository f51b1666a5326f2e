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
#   VM_KERNEL_FLAVOUR  Debian kernel flavour (cloud-amd64)
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

# The Debian archive (not the security one) that the system's apt already
# uses. First ask apt, which knows each source's Release labels once the
# system lists exist; otherwise read the sources files ourselves.
mirror_from_apt() {
	apt-get indextargets --format '$(LABEL)|$(ORIGIN)|$(TARGET_OF)|$(REPO_URI)' 2>/dev/null |
		awk -F'|' '$1 == "Debian" && $2 == "Debian" && $3 == "deb" { print $4; exit }'
}

mirror_from_files() {
	local f
	{
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -r "$f" ] || continue
			awk '$1 == "deb" {
				i = 2
				if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
				print $i "|" $(i + 1)
			}' "$f"
		done
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -r "$f" ] || continue
			# deb822: one stanza per paragraph
			awk 'function flush() {
				if (types ~ /(^| )deb( |$)/ && enabled !~ /^no$/)
					print uris "|" suites
				types = uris = suites = enabled = ""
			}
			/^[ \t]*$/ { flush(); next }
			/^#/ { next }
			tolower($1) == "types:" { $1 = ""; types = $0 }
			tolower($1) == "uris:" { $1 = ""; uris = $0 }
			tolower($1) == "suites:" { $1 = ""; suites = $0 }
			tolower($1) == "enabled:" { enabled = tolower($2) }
			END { flush() }' "$f"
		done
	} | awk -F'|' '{
		n = split($1, u, " ")
		for (i = 1; i <= n; i++)
			if (u[i] !~ /security/ && $2 !~ /security/ && u[i] ~ /^(https?|file):/) {
				print u[i]; exit
			}
	}'
}

mirror=${VM_APT_MIRROR:-}
[ -n "$mirror" ] || mirror=$(mirror_from_apt || true)
[ -n "$mirror" ] || mirror=$(mirror_from_files || true)
[ -n "$mirror" ] || skip "no Debian mirror found in the apt sources"
mirror=${mirror%/}

mkdir -p "$aptdir/etc/sources.list.d" "$aptdir/etc/preferences.d" \
	"$aptdir/state/lists/partial" "$aptdir/cache/archives/partial" \
	"$aptdir/dl" "$cache"
: >"$aptdir/state/status"
cat >"$aptdir/etc/sources.list" <<EOF
deb [signed-by=$keyring] $mirror $suite main
EOF

apt_opts=(
	-o "Dir::Etc::SourceList=$aptdir/etc/sources.list"
	-o "Dir::Etc::SourceParts=$aptdir/etc/sources.list.d"
	-o "Dir::Etc::Preferences=$aptdir/etc/preferences"
	-o "Dir::Etc::PreferencesParts=$aptdir/etc/preferences.d"
	-o "Dir::State=$aptdir/state"
	-o "Dir::State::status=$aptdir/state/status"
	-o "Dir::Cache=$aptdir/cache"
	-o "Dir::Cache::pkgcache=$aptdir/cache/pkgcache.bin"
	-o "Dir::Cache::srcpkgcache=$aptdir/cache/srcpkgcache.bin"
	-o "APT::Architecture=amd64"
	-o "APT::Architectures::=amd64"
	-o "Acquire::Languages=none"
	-o "APT::Sandbox::User=root"
	-q
)

say "apt-get update: $suite from $mirror"
if ! apt-get "${apt_opts[@]}" update >"$aptdir/update.log" 2>&1 ||
	grep -Eq '^(E:|W: Failed|Err:)' "$aptdir/update.log"; then
	cat "$aptdir/update.log" >&2
	skip "cannot read the $suite suite from $mirror"
fi

field() { # field PACKAGE FIELD: the candidate's FIELD
	apt-cache "${apt_opts[@]}" show "$1" 2>/dev/null |
		awk -v f="$2:" '$1 == f { $1 = ""; sub(/^ /, ""); print; exit } /^$/ { exit }'
}

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
