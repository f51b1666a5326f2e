#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Install, from the machine's own apt sources, whatever the build, the demo
# and the tests need and is not installed yet. Both `make demo` and
# `make check` call this; nothing else installs packages.
set -eu

# go-md2man: the man pages are generated from docs/man/*.md, as crun's are.
BUILD_PKGS="make gcc clang llvm pkg-config bpftool libbpf-dev libjson-c-dev
libcgroup-dev libelf-dev zlib1g-dev linux-libc-dev go-md2man
libprotobuf-c-dev protobuf-c-compiler"
RUNTIME_PKGS="runc crun busybox-static iproute2 jq"
# `make image`: umoci writes the OCI layout, busybox-static is the image's
# shell and tools (nsenter for the DaemonSet's preload step).
IMAGE_PKGS="umoci busybox-static jq"
# Debian's shellcheck: make shellcheck, over every shell script (make check).
# python3-pkg-resources: Debian 12's grpc_tools/protoc.py imports
# pkg_resources without depending on it (found by make check-fresh).
TEST_PKGS="shellcheck podman python3 python3-jsonschema python3-yaml libclang-rt-14-dev valgrind
qemu-system-x86 cpio xz-utils zstd clang-format gcc-multilib man-db strace linux-perf
iptables containerd python3-grpc-tools python3-pkg-resources mmdebstrap e2fsprogs procps
umoci skopeo nodejs"

case "${1:-build}" in
build) want="$BUILD_PKGS" ;;
demo) want="$BUILD_PKGS $RUNTIME_PKGS" ;;
check) want="$BUILD_PKGS $RUNTIME_PKGS $TEST_PKGS $IMAGE_PKGS" ;;
image) want="$BUILD_PKGS $IMAGE_PKGS" ;;
*) echo "deps.sh: unknown set '$1' (build, demo, check, image)" >&2; exit 2 ;;
esac

# nodejs: npm, for the Kubernetes API schemas (its nodejs brings npm).
# check also wants kubectl (Debian unstable's) and the Kubernetes API
# schemas (npm), under the build directory: scripts/k8s-tools.sh.
tools()
{
	[ "${1:-build}" = check ] || return 0
	"$(dirname "$0")/k8s-tools.sh" "${BUILD:-build}"
}

missing=""
for pkg in $want; do
	if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $pkg"
	fi
done
if [ -z "$missing" ]; then
	tools "${1:-build}"
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
tools "${1:-build}"
