#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# gen-stubs.sh BUILD_DIR
#
# Generates the Python modules of the CRI API (runtime.v1, the API that
# kubelet speaks to containerd and CRI-O) into BUILD_DIR/cri/: api_pb2.py
# (the messages) and api_pb2_grpc.py, with this machine's own
# python3 -m grpc_tools.protoc, so that the modules match this machine's
# python3-protobuf (Debian 12's protoc 3.5 writes code that Debian 12's
# protobuf reads; unstable's grpc-tools writes code for unstable's). The
# node VM guest runs this script itself for that reason.
#
# api.proto comes from Debian's golang-k8s-cri-api-dev:
#   - CRI_API_PROTO=FILE names it, or
#   - the installed package's copy, or
#   - the .deb that tests/vm/fetch-deb.sh downloads (cached in
#     BUILD_DIR/vm/debs; CRI_API_DEB=FILE names a .deb to use instead).
# Prints the output directory on the last line of stdout.
#
# Exit: 0 ready; 77 no api.proto or no grpc_tools here (with a reason on
# stderr); 1 anything else.
set -euo pipefail

say() { echo "gen-stubs: $*" >&2; }
skip() { say "SKIP: $*"; exit 77; }

[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
build=$(mkdir -p "$1" && cd "$1" && pwd)
out=$build/cri
python=${PYTHON:-/usr/bin/python3}
rel=usr/share/gocode/src/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto

"$python" -c 'import grpc_tools.protoc' 2>/dev/null ||
	skip "$python has no grpc_tools (python3-grpc-tools)"

proto=${CRI_API_PROTO:-}
[ -z "$proto" ] && [ -r "/$rel" ] && proto=/$rel
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$proto" ]; then
	deb=${CRI_API_DEB:-}
	if [ -z "$deb" ]; then
		rc=0
		deb=$("$here/../vm/fetch-deb.sh" "$build" golang-k8s-cri-api-dev | tail -n1) || rc=$?
		[ "$rc" = 77 ] && skip "golang-k8s-cri-api-dev cannot be had (see above)"
		[ "$rc" = 0 ] || exit 1
	fi
	dpkg-deb -x "$deb" "$tmp/deb"
	proto=$tmp/deb/$rel
fi
[ -r "$proto" ] || skip "no api.proto at $proto"

# debug_redact (protobuf >= 22) only tells loggers to hide a field; the
# protoc of Debian 12's grpc-tools (3.5) rejects the option it does not
# know. The messages on the wire are the same without it.
sed -E 's/ *\[debug_redact *= *true\]//' "$proto" >"$tmp/api.proto"
mkdir -p "$tmp/out"
(cd "$tmp" && "$python" -m grpc_tools.protoc -I. --python_out=out \
	--grpc_python_out=out api.proto) || { say "protoc failed on $proto"; exit 1; }
"$python" -c 'import sys; sys.path.insert(0, sys.argv[1]); import api_pb2' \
	"$tmp/out" || { say "the generated api_pb2 does not import with $python"; exit 1; }
mkdir -p "$out"
cp "$tmp/out/api_pb2.py" "$tmp/out/api_pb2_grpc.py" "$out/"
say "$(grep -o 'version [0-9.]*' "$proto" | head -n1 || true)CRI runtime.v1 stubs from $proto"
echo "$out"
