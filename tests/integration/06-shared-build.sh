#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# STATIC=0, the build distribution packages use: it builds in its own
# directory against the system's shared libbpf, libelf, zlib, json-c,
# libcgroup and libprotobuf-c, with the NRI .proto files from a directory
# (NRI_PROTO_DIR, as a distribution names its -dev packages' copies: here
# the default build's); ldd/readelf and `--version` agree on what is shared, and on
# what the default STATIC=1 build holds inside; and the shared binary
# polices a real runc container.
#
# Modules: `version.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/host.sh
. "$here/../lib/host.sh"
top=$TESTS_TOP BUILD=$TESTS_BUILD
STATIC_BIN=$BUILD/oci-sockopt-hook
SHARED_BUILD=$BUILD/shared
SHARED_BIN=$SHARED_BUILD/oci-sockopt-hook
LIBS="libbpf libelf zlib json-c libcgroup libprotobuf-c"
tap_require_cmd make ldd readelf jq
[ -x "$STATIC_BIN" ] || tap_skip_all "hook not built: $STATIC_BIN (run make)"

out=$(make -C "$top" -j2 STATIC=0 BUILD="$SHARED_BUILD" \
	NRI_PROTO_DIR="$BUILD/nri/src" "$SHARED_BIN" 2>&1)
tap_ok $? "make STATIC=0 BUILD=$SHARED_BUILD builds the hook" || {
	tap_diag "$out"
	tap_done
}

# needed BINARY: its DT_NEEDED libraries, one per line.
needed()
{
	readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort
}

tap_is "$(needed "$SHARED_BIN" | grep -cE '^lib(bpf|json-c|cgroup|z|protobuf-c)\.so\.')" 5 \
	"STATIC=0: readelf lists libbpf, json-c, libcgroup, zlib and libprotobuf-c as needed"
tap_is "$(needed "$STATIC_BIN")" "" \
	"STATIC=1 (default): a static PIE, no shared library needed"
tap_is "$(readelf -l "$STATIC_BIN" | grep -c 'INTERP')" 0 \
	"STATIC=1: no dynamic loader runs"
lddout=$(ldd "$SHARED_BIN" 2>&1)
grep -E '^\s*lib(bpf|json-c|cgroup|elf|z|protobuf-c)\.so' <<<"$lddout" | grep -q 'not found'
tap_ok $((!$?)) "STATIC=0: ldd resolves every library" || tap_diag "$lddout"

# version BINARY: --version --json
shared_json=$("$SHARED_BIN" --version --json)
static_json=$("$STATIC_BIN" --version --json)
for bin in "$SHARED_BIN" "$STATIC_BIN"; do
	tap_like "$("$bin" --version | head -n 1)" '^oci-sockopt-hook [0-9]+\.[0-9]+\.[0-9]+$' \
		"--version starts with 'oci-sockopt-hook <version>' ($bin)"
done
for lib in $LIBS; do
	got=$(jq -r --arg l "$lib" '.libraries[] | select(.name == $l) |
		"\(.linked) \(.built_against)"' <<<"$static_json")
	tap_is "$got" "static $(pkg-config --modversion "$lib")" \
		"STATIC=1: --version says $lib is linked in, and the version pkg-config gave"
	file=$(jq -r --arg l "$lib" '.libraries[] | select(.name == $l) |
		select(.linked == "shared") | .file' <<<"$shared_json")
	# ldd prints the soname's path; --version the file it resolves to.
	want=$(awk -v l="$lib" 'BEGIN { if (l == "zlib") l = "libz"
		sub(/^lib/, "", l); re = "^lib" l "\\.so" }
		$1 ~ re { print $3 }' <<<"$lddout")
	[ -n "$file" ] && [ "$file" = "$(readlink -f "$want")" ]
	tap_ok $? "STATIC=0: --version says $lib is shared, from $file (ldd: $want)"
done
tap_is "$(jq -r '.libraries[] | select(.name == "glibc") | .linked' <<<"$static_json") $(jq -r '.libraries[] | select(.name == "glibc") | .linked' <<<"$shared_json")" \
	"static shared" "--version says glibc is linked in (STATIC=1), shared (STATIC=0)"
tap_is "$(jq -r '.libraries[] | select(.name == "libbpf") | .version' <<<"$shared_json")" \
	"v$(pkg-config --modversion libbpf | cut -d. -f1-2)" \
	"STATIC=0: libbpf_version_string() of the loaded library matches pkg-config"
text=$("$SHARED_BIN" --version)
tap_like "$text" $'\njson-c +shared +[0-9.]+ +[0-9.]+ +/[^ ]*libjson-c\\.so[^ ]*(\n|$)' \
	"STATIC=0: the text form says the same" || tap_diag "$text"

# The shared binary at work: probe, then one real container.
[ "$(id -u)" = 0 ] || {
	tap_skip "the shared binary in a container" "needs root"
	tap_done
}
HOOK=$SHARED_BIN
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"
ct_setup runc
BASE=$(ct_snapshot)
out=$("$SHARED_BIN" probe --json 2>&1)
tap_like "$(jq -r .verdict <<<"$out" 2>&1)" '^ready' \
	"STATIC=0: probe loads the real programs (verdict ready)" || tap_diag "$out"
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
b=$(ct_bundle -a sockopt-hook.io/policy=restricted shared -- sockcheck set-mark 5)
ct_run runc "$(ct_id shared)" "$b"
tap_is "$CT_RC $(cat "$CT_OUT")" "0 setsockopt=EPERM" \
	"STATIC=0: the shared hook polices a runc container (SO_MARK gives EPERM)" ||
	tap_diag "$(cat "$CT_ERR")"
ct_delete runc "$(ct_id shared)"
ct_check_same "nothing is left behind" "$BASE"
tap_done
