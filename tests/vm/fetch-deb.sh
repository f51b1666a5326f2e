#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# fetch-deb.sh BUILD_DIR PACKAGE
#
# Download PACKAGE's candidate .deb from Debian's unstable suite (the mirror
# this machine's apt sources name, a private apt under BUILD_DIR/vm/apt, as
# fetch-kernel.sh does) into BUILD_DIR/vm/debs/ and print its path on the
# last line of stdout. A .deb already there is used without network access;
# VM_DEB_REFRESH=1 resolves again.
#
# Exit: 0 ready; 77 it cannot be had here (no mirror, no such package);
# 1 anything else.
set -euo pipefail

say() { echo "fetch-deb: $*" >&2; }
skip() { say "SKIP: $*"; exit 77; }

[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR PACKAGE" >&2; exit 2; }
build=$(mkdir -p "$1" && cd "$1" && pwd)
pkg=$2
debs="$build/vm/debs"
mkdir -p "$debs"

# newest PATTERN...: the newest (sort -V) of the files that exist.
newest() {
	local f

	for f in "$@"; do if [ -e "$f" ]; then echo "$f"; fi; done | sort -V | tail -n1
}
cached=$(newest "$debs/${pkg}_"*.deb)
if [ "${VM_DEB_REFRESH:-0}" != 1 ] && [ -n "$cached" ]; then
	say "cached, no network access"
	echo "$cached"
	exit 0
fi

command -v apt-get >/dev/null || skip "apt-get not found"
# shellcheck source=tests/vm/unstable-apt.sh
. "$(dirname "$0")/unstable-apt.sh"
[ -r "$unstable_keyring" ] || skip "$unstable_keyring missing (debian-archive-keyring)"
unstable_apt_init "$build/vm/apt" || skip "cannot read the unstable suite (see above)"
ver=$(unstable_field "$pkg" Version)
[ -n "$ver" ] || skip "no package $pkg in the suite"
tmp=$(mktemp -d "$debs/.dl.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
say "apt-get download $pkg ($ver)"
(cd "$tmp" && apt-get "${apt_opts[@]}" download "$pkg" >&2) || skip "cannot download $pkg"
rm -f "$debs/${pkg}_"*.deb
mv "$tmp"/*.deb "$debs/"
newest "$debs/${pkg}_"*.deb
