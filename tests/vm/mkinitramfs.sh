#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# mkinitramfs.sh -o OUT [-g GUEST_DIR] [-I INIT] [HOST[:GUEST]]...
#
# Build a newc cpio initramfs from busybox-static, tests/vm/init as /init,
# GUEST_DIR's contents under /guest (default tests/vm/guest) and each extra
# HOST file or directory at GUEST (default /bin/NAME for a file, /opt/NAME
# for a directory). Every dynamically linked ELF among the extras comes with
# the shared libraries that ldd resolves for it, at the same paths, and the
# program interpreter (ld-linux-x86-64.so.2).
#
# Environment: VM_INITRD_COMPRESS=none|gzip|zstd (none: the kernel unpacks
# it fastest under TCG).
set -euo pipefail

prog=mkinitramfs
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "$prog: error: $*" >&2; exit 1; }
usage() { echo "usage: $0 -o OUT [-g GUEST_DIR] [-I INIT] [HOST[:GUEST]]..." >&2; exit 2; }

out=""
guest="$here/guest"
init="$here/init"
while getopts "o:g:I:" opt; do
	case $opt in
	o) out=$OPTARG ;;
	g) guest=$OPTARG ;;
	I) init=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ -n "$out" ] || usage

busybox=$(command -v busybox || true)
[ -n "$busybox" ] || die "busybox not found (apt-get install busybox-static)"
if ldd "$busybox" >/dev/null 2>&1; then
	die "$busybox is dynamically linked; install busybox-static"
fi
[ -r "$init" ] || die "$init missing"
command -v cpio >/dev/null || die "cpio not found"

outdir=$(mkdir -p "$(dirname "$out")" && cd "$(dirname "$out")" && pwd)
out="$outdir/$(basename "$out")"
stage=$(mktemp -d "$outdir/initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,etc,proc,sys,dev,tmp,run,root,mnt,opt,guest,lib/x86_64-linux-gnu,lib64,var/tmp}
chmod 1777 "$stage/tmp" "$stage/var/tmp"

install -m 0755 "$busybox" "$stage/bin/busybox"
"$busybox" --list-full | while read -r applet; do
	[ -e "$stage/$applet" ] || [ -L "$stage/$applet" ] ||
		ln -s /bin/busybox "$stage/$applet"
done

install -m 0755 "$init" "$stage/init"
if [ -d "$guest" ]; then
	cp -a "$guest/." "$stage/guest/"
fi

cat >"$stage/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >"$stage/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
cat >"$stage/etc/hosts" <<'EOF'
127.0.0.1	localhost
::1	localhost ip6-localhost ip6-loopback
EOF

# copy_libs FILE: the shared libraries and interpreter of a dynamic ELF
copy_libs() {
	local lib
	[ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ] || return 0
	ldd "$1" >/dev/null 2>&1 || return 0 # static, or not for this host
	if ldd "$1" | grep -q 'not found'; then
		ldd "$1" >&2
		die "$1: unresolved shared libraries"
	fi
	ldd "$1" | awk '/=> \// { print $3 } /^[ \t]*\// { print $1 }' |
		while read -r lib; do
			[ -e "$stage$lib" ] && continue
			mkdir -p "$stage$(dirname "$lib")"
			cp -L "$lib" "$stage$lib"
		done
}

for spec in "$@"; do
	src=${spec%%:*}
	dst=${spec#*:}
	[ -e "$src" ] || die "$src does not exist"
	if [ "$dst" = "$spec" ]; then
		if [ -d "$src" ]; then
			dst=/opt/$(basename "$src")
		else
			dst=/bin/$(basename "$src")
		fi
	fi
	mkdir -p "$stage$(dirname "$dst")"
	if [ -d "$src" ]; then
		mkdir -p "$stage$dst"
		cp -a "$src/." "$stage$dst/"
		while IFS= read -r -d '' f; do
			copy_libs "$f"
		done < <(find "$src" -type f -perm -u+x -print0)
	else
		rm -f "$stage$dst" # may be a busybox link
		cp -L "$src" "$stage$dst"
		copy_libs "$src"
	fi
done

case ${VM_INITRD_COMPRESS:-none} in
none) compress=(cat) ;;
gzip) compress=(gzip -1) ;;
zstd) compress=(zstd -q -1 -T0) ;;
*) die "VM_INITRD_COMPRESS must be none, gzip or zstd" ;;
esac

(cd "$stage" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc -R 0:0 --quiet) | "${compress[@]}" >"$out.tmp"
mv "$out.tmp" "$out"
echo "$prog: $out ($(du -h "$out" | cut -f1))" >&2
