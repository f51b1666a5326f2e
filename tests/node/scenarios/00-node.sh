#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The node itself, then the hook installed as an operator installs it.
#  - the rig: kernel >= 6.19 with the bypass, systemd as PID 1, cgroup v2
#    only, no failed unit, the runtimes' versions (runc 1.3, crun 1.2x,
#    podman 5, containerd 2.x);
#  - `make install` from the repository (the hook built on the host, not
#    rebuilt: -o), the example config, the hooks.d file in
#    /usr/share/containers/oci/hooks.d (podman 5's default directory, and
#    CRI-O's),
#    the preload units enabled and run by systemd;
#  - the probe rootfs (busybox-static and the static probes) for the
#    bundles, imported into podman as localhost/node-probe.
# shellcheck source=tests/node/guest/lib.sh
. "$NODE_PAYLOAD/lib.sh"

# jq ARGS... with no output (a tap_check command)
# shellcheck disable=SC2317 # called through tap_check
jq_quiet() { jq "$@" >/dev/null; }

# the rig
kver=$(uname -r)
tap_diag "kernel $kver, $(systemctl --version | head -n1)" "$(systemd-analyze 2>&1 | head -n1)" "$(systemd-analyze blame 2>&1 | head -n8)"
tap_check "kernel $kver has net.core.bypass_prot_mem (>= 6.19)" \
	test -e /proc/sys/net/core/bypass_prot_mem
tap_is "$(cat /proc/1/comm)" systemd "PID 1 is systemd"
tap_is "$(stat -fc %T /sys/fs/cgroup)" cgroup2fs "/sys/fs/cgroup is cgroup2"
tap_is "$(awk '$3 == "cgroup" { print $2 }' /proc/mounts)" "" "no cgroup v1 hierarchy mounted"
tap_check "no hybrid layout (/sys/fs/cgroup/unified)" test ! -e /sys/fs/cgroup/unified
tap_like "$(grep -c '' <(systemctl --failed --plain --no-legend))" '^0$' \
	"no failed systemd unit" || systemctl --failed --plain --no-legend | sed 's/^/# /'
tap_like "$(runc --version | head -n1)" '^runc version 1\.3\.' "runc 1.3"
tap_like "$(crun --version | head -n1)" '^crun version 1\.2[0-9]' "crun 1.2x"
tap_like "$(podman --version)" '^podman version 5\.' "podman 5"
tap_like "$(containerd --version)" ' v?2\.[0-9]+' "containerd 2.x"
tap_check "python3 with grpc and grpc_tools (for the CRI client)" \
	python3 -c 'import grpc, grpc_tools.protoc, google.protobuf'

# install as an operator: the repository's `make install`, the binary and
# the man pages from the build host (-o: make does not try to rebuild them
# here; no compiler, no go-md2man)
out=$(cd "$NODE_PAYLOAD/src" &&
	make -o build/oci-sockopt-hook -o build/man/oci-sockopt-hook.1 \
		-o build/man/oci-sockopt-hook.json.5 install HOOKSD="$NODE_HOOKSD" 2>&1)
tap_ok $? "make install HOOKSD=$NODE_HOOKSD" || tap_diag "$out"
tap_diag "$out"
tap_check "the hook is installed at $NODE_HOOK" test -x "$NODE_HOOK"
tap_check "the example config at $NODE_CONFIG" \
	cmp -s "$NODE_PAYLOAD/src/examples/config.json" "$NODE_CONFIG"
hd="$NODE_HOOKSD/oci-sockopt-hook.json"
tap_is "$(jq -r .hook.path "$hd" 2>&1)" "$NODE_HOOK" "$hd runs the installed binary"
tap_is "$(jq -r '.stages | join(" ")' "$hd" 2>&1)" "prestart poststop" "$hd: prestart and poststop"
tap_check "the hooks.d file runs the hook only for annotated containers (example config: no defaults)" \
	jq_quiet -e '.when.annotations | length > 0' "$hd"
tap_is "$(systemctl is-enabled oci-sockopt-hook-preload.path 2>&1)" enabled \
	"oci-sockopt-hook-preload.path enabled"
tap_is "$(systemctl show -P Result oci-sockopt-hook-preload.service)" success \
	"the preload ran under systemd"
tap_check "$NODE_HOOK validate $NODE_CONFIG" "$NODE_HOOK" validate "$NODE_CONFIG"
probe=$("$NODE_HOOK" probe --json 2>&1)
tap_diag "$probe"
tap_is "$(jq -c '[.hybrid, .cgroup2_mount, .bypass_prot_mem]' <<<"$probe" 2>&1)" \
	'[false,"/sys/fs/cgroup",true]' "probe --json: cgroup v2 only at /sys/fs/cgroup, bypass-prot-mem supported"
tap_like "$(jq -r .preloaded_programs <<<"$probe" 2>&1)" '^[1-9][0-9]*$' \
	"probe --json: the preload unit pinned programs"

# the probe rootfs: busybox and the static probes
rm -rf "$NODE_ROOTFS" && mkdir -p "$NODE_ROOTFS/bin" "$NODE_ROOTFS/proc" \
	"$NODE_ROOTFS/sys" "$NODE_ROOTFS/dev" "$NODE_ROOTFS/tmp" "$NODE_ROOTFS/etc"
cp /bin/busybox "$NODE_ROOTFS/bin/busybox"
for a in $(/bin/busybox --list); do
	[ -e "$NODE_ROOTFS/bin/$a" ] || ln -s busybox "$NODE_ROOTFS/bin/$a"
done
cp "$NODE_PAYLOAD/bin/sockcheck" "$NODE_PAYLOAD/bin/memacct" "$NODE_ROOTFS/bin/"
[ ! -x "$NODE_PAYLOAD/bin/sandbox_ptrace" ] ||
	cp "$NODE_PAYLOAD/bin/sandbox_ptrace" "$NODE_ROOTFS/bin/"
cat >"$NODE_ROOTFS/probe" <<'PROBE'
#!/bin/sh
# what a workload observes: the restricted policy (sockcheck) and the TCP
# memory accounting (memacct, from /proc/net/sockstat). 1024 pages, as
# memacct chooses from net.core.mem_pcpu_rsv (256) where it can read it:
# a container's netns does not show that sysctl.
sockcheck all
echo "memacct=$(memacct measure -p tcp -f 4 -P 1024 2>&1 | tail -n1)"
PROBE
chmod 0755 "$NODE_ROOTFS/probe"
echo 'root:x:0:0:root:/:/bin/sh' >"$NODE_ROOTFS/etc/passwd"
echo 'root:x:0:' >"$NODE_ROOTFS/etc/group"
tar -C "$NODE_ROOTFS" -cf "$NODE_VAR/rootfs.tar" .
tap_ok $? "probe rootfs $NODE_ROOTFS (busybox-static, sockcheck, memacct)"
podman rmi -f "$NODE_IMAGE" >/dev/null 2>&1
out=$(podman import --change 'CMD ["/probe"]' "$NODE_VAR/rootfs.tar" "$NODE_IMAGE" 2>&1)
tap_ok $? "podman import of the rootfs tarball as $NODE_IMAGE" || tap_diag "$out"
tap_done
