#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# build-image.sh BUILD_DIR VERSION COMMIT
#
# The DaemonSet's image (examples/kubernetes/base/daemonset.yaml), built here
# from Debian's tools alone and offline: `make image` calls it after
# `make all`. It holds
#   /dist/         the tree of `make install DESTDIR=/dist` (PREFIX
#                  /usr/local): the static hook, its hooks.d file, the
#                  example config, units and man pages;
#   /bin/busybox   Debian's busybox-static and a link per applet (/bin/sh,
#                  cp, mv, sleep, nsenter for the preload step, ...), with
#                  its copyright file;
# in one layer, every file owned by root with the commit's time, so that
# the same commit makes the same layer. umoci (a Debian package; no daemon,
# no registry) writes the OCI layout; the archive is that layout as a tar,
# what `skopeo copy oci-archive:FILE docker://REGISTRY/...` pushes and
# `ctr images import` reads:
#   BUILD_DIR/image/oci-sockopt-hook-VERSION-COMMIT.tar
# tagged VERSION-COMMIT (index.json's org.opencontainers.image.ref.name),
# labelled org.opencontainers.image.version and .revision. Prints the
# archive's path on the last line.
set -euo pipefail

[ $# -eq 3 ] || { echo "usage: $0 BUILD_DIR VERSION COMMIT" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
version=$2
commit=$3
tag=$version-$commit
say() { echo "build-image: $*" >&2; }

for tool in umoci busybox tar; do
	command -v "$tool" >/dev/null || { say "$tool not found (scripts/deps.sh image)"; exit 1; }
done
busybox=$(command -v busybox)
file -b "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$busybox" 2>&1 | grep -q 'not a dynamic executable' ||
	{ say "$busybox is not static (install busybox-static)"; exit 1; }

# The commit's time, else now: the files' times and the image's created.
epoch=$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)

dir=$build/image
stage=$dir/stage
layout=$dir/layout
archive=$dir/oci-sockopt-hook-$tag.tar
rm -rf "$stage" "$layout"
mkdir -p "$stage/bin" "$stage/usr/share/doc/busybox-static"

# make install into /dist, as the DaemonSet expects it; quietly, but its
# errors (and the hooks.d choice) are shown.
make -C "$top" -s BUILD="$build" -o "$build/oci-sockopt-hook" install DESTDIR="$stage/dist" PREFIX=/usr/local >&2
install -m 0755 "$busybox" "$stage/bin/busybox"
cp /usr/share/doc/busybox-static/copyright "$stage/usr/share/doc/busybox-static/" 2>/dev/null ||
	say "busybox-static's copyright file not found"
# A link per applet where busybox would install it (bin/sh, usr/bin/nsenter).
"$busybox" --list-full | while read -r applet; do
	mkdir -p "$stage/$(dirname "$applet")"
	[ -e "$stage/$applet" ] || ln -s /bin/busybox "$stage/$applet"
done
[ -L "$stage/bin/sh" ] && [ -e "$stage/usr/bin/nsenter" ] || [ -e "$stage/bin/nsenter" ] ||
	{ say "busybox has no sh or nsenter applet"; exit 1; }
mkdir -p "$stage/tmp" "$stage/etc"
chmod 1777 "$stage/tmp"
find "$stage" -exec touch -h -d "@$epoch" {} +

umoci init --layout "$layout"
umoci new --image "$layout:$tag"
umoci insert --image "$layout:$tag" --history.created "$created" \
	--history.created_by "make image ($commit)" "$stage" /
umoci config --image "$layout:$tag" --created "$created" \
	--history.created "$created" --history.created_by "make image ($commit)" \
	--architecture "$(dpkg --print-architecture 2>/dev/null || echo amd64)" --os linux \
	--config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	--config.workingdir / --config.cmd /bin/sh \
	--config.label "org.opencontainers.image.version=$version" \
	--config.label "org.opencontainers.image.revision=$commit" \
	--config.label "org.opencontainers.image.title=oci-sockopt-hook" \
	--config.label "org.opencontainers.image.licenses=GPL-2.0-only"
umoci gc --layout "$layout"

# The layout as one tar, in a fixed order with fixed owners and times.
(cd "$layout" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort |
	tar --no-recursion --owner=0 --group=0 --numeric-owner \
		--mtime="@$epoch" -cf "$archive.tmp" -T -)
mv "$archive.tmp" "$archive"
rm -rf "$stage"
say "image $tag: $(du -h "$archive" | cut -f1) ($(umoci stat --image "$layout:$tag" --json | jq -r '.history | length') history entries)"
echo "$archive"
