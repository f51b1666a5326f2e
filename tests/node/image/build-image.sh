#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# build-image.sh BUILD_DIR KVER
#
# The node image: a Debian unstable root file system made with mmdebstrap
# from the mirror this machine's apt sources name (tests/vm/unstable-apt.sh),
# with systemd as PID 1, the kernel KVER (the VM suite's, from
# linux-image-KVER) and its initramfs, the runtimes and the packages listed
# in `packages` beside this script. It lands in BUILD_DIR/node/image-KEY/ as
#   root.img   raw ext4 (mkfs.ext4 -d, no loop mount), sparse
#   vmlinuz    the image's /boot/vmlinuz-KVER
#   initrd.img the image's /boot/initrd.img-KVER
#   versions   the installed packages and versions
# KEY hashes this directory's files and KVER: a change to the package list,
# this script or the baked units rebuilds, anything else reuses the image
# with no network access. Older images are removed once a new one is built.
#
# Prints the image directory on the last line of stdout.
# Exit: 0 ready; 77 mmdebstrap or the mirror cannot be had; 1 otherwise.
set -euo pipefail

say() { echo "node-image: $*" >&2; }
skip() { say "SKIP: $*"; exit 77; }

[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR KVER" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
build=$(mkdir -p "$1/node" && cd "$1" && pwd)
kver=$2
node="$build/node"

key=$( (cd "$here" && cat build-image.sh customize.sh packages node-suite \
	node-suite.service && echo "$kver") | sha256sum | cut -c1-16)
out="$node/image-$key"
if [ -s "$out/root.img" ] && [ -s "$out/vmlinuz" ] && [ -s "$out/initrd.img" ]; then
	say "cached ($out), no network access"
	echo "$out"
	exit 0
fi

command -v mmdebstrap >/dev/null || skip "mmdebstrap not installed"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed (e2fsprogs)"
# shellcheck source=tests/vm/unstable-apt.sh
. "$here/../../vm/unstable-apt.sh"
mirror=$(unstable_mirror) || skip "no Debian mirror in this machine's apt sources"
[ -r "$unstable_keyring" ] || skip "$unstable_keyring missing"

# the suite must be readable (77 when it is not), as for the kernel
unstable_apt_init "$node/apt" ||
	{ rm -rf "$node/apt"; skip "cannot read the unstable suite from $mirror (see above)"; }
rm -rf "$node"/rootfs.* "$node/apt"
root=$(mktemp -d "$node/rootfs.XXXXXX")
tmp="$out.tmp"
trap 'rm -rf "$root" "$tmp"' EXIT
mkdir -p "$tmp"

# mmdebstrap's apt reads no configuration of this machine: pass on what
# this machine's apt says about the mirror's Release dates (a mirror that
# serves a frozen snapshot needs Check-Valid-Until "false")
aptopts=()
for opt in Acquire::Check-Valid-Until Acquire::Check-Date; do
	val=$(apt-config dump "$opt" 2>/dev/null | sed -n "s/^$opt \"\(.*\)\";$/\1/p")
	[ -z "$val" ] || aptopts+=("--aptopt=$opt \"$val\"")
done

pkgs=$(grep -v '^#' "$here/packages" | tr '\n' ',')"linux-image-$kver"
say "mmdebstrap unstable from $mirror (linux-image-$kver and $(grep -vc '^#' "$here/packages") packages)"
start=$(date +%s)
# NODE_KVER and NODE_IMAGE_DIR reach the customize hook via the environment
NODE_KVER=$kver NODE_IMAGE_DIR=$here mmdebstrap --mode=root --variant=apt \
	--format=directory \
	--aptopt='APT::Install-Recommends "false"' "${aptopts[@]}" \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--include="$pkgs" \
	--customize-hook="$here/customize.sh" \
	unstable "$root" \
	"deb [signed-by=$unstable_keyring] $mirror unstable main" >&2 ||
	{ say "mmdebstrap failed"; exit 1; }

install -m 0644 "$root/boot/vmlinuz-$kver" "$tmp/vmlinuz"
install -m 0644 "$root/boot/initrd.img-$kver" "$tmp/initrd.img"
# shellcheck disable=SC2016 # dpkg-query's format
chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' >"$tmp/versions"
used=$(du -sm "$root" | cut -f1)
# room for container images, podman's and containerd's state
size=$((used * 5 / 4 + 1536))
mkfs.ext4 -q -F -L noderoot -E root_owner=0:0 -d "$root" "$tmp/root.img" "${size}M" >&2
rm -rf "$root"
# the new image replaces the older ones
for old in "$node"/image-*; do
	[ "$old" = "$tmp" ] || rm -rf "$old"
done
mv "$tmp" "$out"
say "built in $(($(date +%s) - start))s: ${used} MB used, ${size} MB image"
echo "$out"
