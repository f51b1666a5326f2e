#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `make image`: the DaemonSet's image from Debian's tools only.
#  - it builds with no network at all (a network namespace with no
#    interface), into build/image/oci-sockopt-hook-VERSION-COMMIT.tar,
#    VERSION from hook/lib/version.h, COMMIT the tree's (-dirty when changed);
#  - the archive is an OCI image skopeo reads: tagged VERSION-COMMIT,
#    labelled with the version and the revision, one layer, this
#    machine's architecture; a second build gives the same bytes;
#  - its files: the hook (the very binary built), its hooks.d file and
#    config under /dist, busybox with /bin/sh and nsenter;
#  - it runs: under runc, the image's own /bin/sh runs nsenter and the
#    hook's --version (a static binary: the image has no libc);
#  - the docs' push: `skopeo copy oci-archive:... docker://REGISTRY/...`
#    into a registry of Debian's (docker-registry, downloaded, not
#    installed, on a loopback port), and the registry serves the same
#    manifest and layer.
#
# Modules: (`scripts/build-image.sh`)
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_require runc
tap_require_cmd umoci skopeo busybox unshare jq
ct_init
REG_PID=
# shellcheck disable=SC2317 # the EXIT trap calls it
cleanup()
{
	[ -z "$REG_PID" ] || { kill "$REG_PID" 2>/dev/null; wait "$REG_PID" 2>/dev/null; }
	ct_cleanup
}
trap cleanup EXIT

version=$(sed -n 's/^#define SH_VERSION "\(.*\)"/\1/p' "$CT_TOP/hook/lib/version.h")
# As the Makefile's IMAGE_COMMIT: "unknown" outside a git tree.
if commit=$(git -C "$CT_TOP" rev-parse --short=12 HEAD 2>/dev/null); then
	git -C "$CT_TOP" diff --quiet HEAD 2>/dev/null || commit=$commit-dirty
else
	commit=unknown
fi
TAG=$version-$commit
ARCHIVE=$CT_BUILD/image/oci-sockopt-hook-$TAG.tar

# --- the build, offline ------------------------------------------------------

rm -f "$ARCHIVE"
out=$(unshare -n make -C "$CT_TOP" -s BUILD="$CT_BUILD" -o "$CT_BUILD/oci-sockopt-hook" image 2>&1)
rc=$?
tap_is "$rc:$(tail -n1 <<<"$out")" "0:$ARCHIVE" \
	"make image in a network namespace with no interface: $(basename "$ARCHIVE")" || tap_diag "$out"
sum1=$(sha256sum <"$ARCHIVE" | cut -d' ' -f1)
inspect=$(skopeo inspect "oci-archive:$ARCHIVE" 2>&1)
tap_is "$(jq -c '[.Labels["org.opencontainers.image.version"], .Labels["org.opencontainers.image.revision"], (.Layers | length), .Os, .Architecture]' <<<"$inspect")" \
	"[\"$version\",\"$commit\",1,\"linux\",\"$(dpkg --print-architecture)\"]" \
	"skopeo inspect: version and revision labels, one layer, linux/$(dpkg --print-architecture)" ||
	tap_diag "$inspect"
tap_is "$(tar -xOf "$ARCHIVE" index.json | jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"]')" \
	"$TAG" "index.json tags it $TAG"
# The first archive kept aside: the second build must write its own.
FIRST=$CT_TMP/first.tar
mv "$ARCHIVE" "$FIRST"
out=$(unshare -n make -C "$CT_TOP" -s BUILD="$CT_BUILD" -o "$CT_BUILD/oci-sockopt-hook" image 2>&1)
rc=$?
tap_is "$rc:$(tail -n1 <<<"$out")" "0:$ARCHIVE" "a second make image succeeds" || tap_diag "$out"
cmp "$FIRST" "$ARCHIVE" >/dev/null 2>&1
tap_ok $? "a second build gives the same bytes ($sum1)" ||
	tap_diag "$(cmp "$FIRST" "$ARCHIVE" 2>&1)"

# --- what it holds -------------------------------------------------------------

B=$CT_TMP/bundle
umoci unpack --image "$CT_BUILD/image/layout:$TAG" "$B" >/dev/null 2>&1
tap_ok $? "umoci unpacks it into a runtime bundle"
R=$B/rootfs
cmp -s "$R/dist/usr/local/libexec/oci/hooks.d/oci-sockopt-hook" "$CT_BUILD/oci-sockopt-hook"
tap_ok $? "/dist/usr/local/libexec/oci/hooks.d/oci-sockopt-hook is the hook built here"
tap_is "$(jq -r .hook.path "$R/dist/usr/local/share/containers/oci/hooks.d/oci-sockopt-hook.json")" \
	/usr/local/libexec/oci/hooks.d/oci-sockopt-hook "its hooks.d file names the node path of the hook"
tap_check "the example config at /dist/etc/oci-sockopt-hook/config.json" \
	cmp -s "$R/dist/etc/oci-sockopt-hook/config.json" "$CT_TOP/examples/config.json"
tap_is "$(readlink "$R/bin/sh") $(readlink "$R/usr/bin/nsenter")" "/bin/busybox /bin/busybox" \
	"/bin/sh and nsenter are busybox's"
tap_is "$(stat -c %U:%G "$R/bin/busybox" "$R/dist/usr/local/libexec/oci/hooks.d/oci-sockopt-hook" | sort -u)" \
	"root:root" "its files are root's"

# --- it runs ---------------------------------------------------------------------

jq --arg hook /dist/usr/local/libexec/oci/hooks.d/oci-sockopt-hook '
	.process.terminal = false |
	.process.args = ["/bin/sh", "-c", "nsenter --help >/dev/null 2>&1; echo nsenter=$?; \($hook) --version"] |
	.root.readonly = true' "$B/config.json" >"$B/config.json.new" && mv "$B/config.json.new" "$B/config.json"
out=$(runc run -b "$B" "${CT_PREFIX}-image" 2>&1 </dev/null)
tap_like "$out" "nsenter=[01]"$'\n'"oci-sockopt-hook $version" \
	"under runc, the image's shell runs busybox's nsenter and the static hook" || tap_diag "$out"
runc delete -f "${CT_PREFIX}-image" >/dev/null 2>&1

# --- pushed as the docs say ------------------------------------------------------

REG_DIR=$CT_BUILD/registry
REGISTRY_BIN=$REG_DIR/root/usr/bin/docker-registry
if ! [ -x "$REGISTRY_BIN" ]; then
	mkdir -p "$REG_DIR/debs"
	(cd "$REG_DIR/debs" && timeout 300 apt-get download docker-registry >/dev/null 2>&1) &&
		dpkg-deb -x "$REG_DIR"/debs/docker-registry_*.deb "$REG_DIR/root"
fi
if ! [ -x "$REGISTRY_BIN" ]; then
	tap_skip "skopeo copy into a registry" "Debian's docker-registry cannot be had here"
else
	port=$(shuf -i 20000-29999 -n 1)
	cat >"$CT_TMP/registry.yml" <<EOF
version: 0.1
storage:
  filesystem:
    rootdirectory: $CT_TMP/registry
http:
  addr: 127.0.0.1:$port
EOF
	"$REGISTRY_BIN" serve "$CT_TMP/registry.yml" >"$CT_TMP/registry.log" 2>&1 &
	REG_PID=$!
	for _ in $(seq 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		sleep 0.1
	done
	REF=127.0.0.1:$port/oci-sockopt-hook:$TAG
	out=$(skopeo copy --dest-tls-verify=false "oci-archive:$ARCHIVE" "docker://$REF" 2>&1)
	tap_ok $? "skopeo copy oci-archive:$(basename "$ARCHIVE") docker://$REF" || tap_diag "$out"
	pushed=$(skopeo inspect --tls-verify=false "docker://$REF" 2>&1)
	tap_is "$(jq -c '[.Layers, .Labels["org.opencontainers.image.revision"]]' <<<"$pushed")" \
		"$(jq -c '[.Layers, .Labels["org.opencontainers.image.revision"]]' <<<"$inspect")" \
		"the registry serves the same layer and labels" || tap_diag "$pushed"
fi
tap_done
