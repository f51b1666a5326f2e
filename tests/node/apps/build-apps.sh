#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# build-apps.sh BUILD_DIR
#
# The image that the node scenario 76-examples.sh runs the example pods'
# workloads with: Debian unstable's essential packages plus `packages`
# beside this script (nginx, redis-server), made with mmdebstrap from the
# mirror this machine's apt sources name (tests/vm/unstable-apt.sh), the
# packages' maintainer scripts run as on any Debian system (nginx's default
# site with its `listen [::]:80`, the redis user). Its configuration is
# Debian's, untouched: what the example pods change, they change in their
# own YAML. It lands in BUILD_DIR/node/apps-KEY/ as
#   servers.tar   an OCI archive (tests/cri/mkimage.py) named
#                 localhost/sockopt-hook-examples/servers:1, no entrypoint
#                 (the example pods give their commands)
#   versions      the installed packages and versions
# KEY hashes this script and the package list; a cached build does no
# network access. Older builds are removed.
#
# Prints the directory on the last line of stdout.
# Exit: 0 ready; 77 mmdebstrap or the mirror cannot be had; 1 otherwise.
set -euo pipefail

say() { echo "node-apps: $*" >&2; }
skip() { say "SKIP: $*"; exit 77; }

[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
build=$(mkdir -p "$1/node" && cd "$1" && pwd)
node="$build/node"
name=localhost/sockopt-hook-examples/servers:1

key=$( (cd "$here" && cat build-apps.sh packages) | sha256sum | cut -c1-16)
out="$node/apps-$key"
if [ -s "$out/servers.tar" ]; then
	say "cached ($out), no network access"
	echo "$out"
	exit 0
fi

command -v mmdebstrap >/dev/null || skip "mmdebstrap not installed"
# shellcheck source=tests/vm/unstable-apt.sh
. "$top/tests/vm/unstable-apt.sh"
mirror=$(unstable_mirror) || skip "no Debian mirror in this machine's apt sources"
[ -r "$unstable_keyring" ] || skip "$unstable_keyring missing"

root=$(mktemp -d "$node/apps-root.XXXXXX")
tmp="$out.tmp"
trap 'rm -rf "$root" "$tmp"' EXIT
rm -rf "$tmp" && mkdir -p "$tmp"

# as build-image.sh: this machine's view of the mirror's Release dates
aptopts=()
for opt in Acquire::Check-Valid-Until Acquire::Check-Date; do
	val=$(apt-config dump "$opt" 2>/dev/null | sed -n "s/^$opt \"\(.*\)\";$/\1/p")
	[ -z "$val" ] || aptopts+=("--aptopt=$opt \"$val\"")
done

pkgs=$(grep -v '^#' "$here/packages" | tr '\n' ',' | sed 's/,$//')
say "mmdebstrap --variant=essential unstable from $mirror with $pkgs"
start=$(date +%s)
mmdebstrap --mode=root --variant=essential --format=directory \
	--aptopt='APT::Install-Recommends "false"' "${aptopts[@]}" \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--include="$pkgs" unstable "$root" \
	"deb [signed-by=$unstable_keyring] $mirror unstable main" >&2 ||
	{ say "mmdebstrap failed"; exit 1; }
# shellcheck disable=SC2016 # dpkg-query's format
chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' >"$tmp/versions"
python3 "$top/tests/cri/mkimage.py" -p /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$tmp/servers.tar" "$name" "$root"
used=$(du -sm "$root" | cut -f1)
rm -rf "$root"
for old in "$node"/apps-*; do
	[ "$old" = "$tmp" ] || rm -rf "$old"
done
mv "$tmp" "$out"
say "built in $(($(date +%s) - start))s: ${used} MB, $name"
echo "$out"
