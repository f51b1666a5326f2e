#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# mmdebstrap's customize hook for the node image ($1: the root directory).
# Environment: NODE_KVER (the kernel), NODE_IMAGE_DIR (this directory).
set -eu
root=$1

echo node >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 node\n::1 localhost\n' >"$root/etc/hosts"
# the kernel command line mounts / read-write; no fsck (the image is a
# pristine snapshot each boot)
echo '/dev/vda / ext4 defaults,noatime 0 0' >"$root/etc/fstab"

# TCG is slow: nothing that is not needed at boot, no timers, no gettys
chroot "$root" systemctl mask \
	apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer \
	e2scrub_all.timer e2scrub_reap.service fstrim.timer \
	systemd-tmpfiles-clean.timer systemd-firstboot.service \
	systemd-timesyncd.service systemd-networkd-wait-online.service \
	getty@tty1.service serial-getty@ttyS0.service console-getty.service \
	podman-auto-update.timer podman-clean-transient.service \
	podman-restart.service >/dev/null
# dockerd only where a scenario starts it (72-docker), not at every boot
chroot "$root" systemctl disable docker.service docker.socket 2>/dev/null
mkdir -p "$root/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\n' >"$root/etc/systemd/journald.conf.d/node.conf"

# the suite's runner: mounts the payload disk and runs it after boot
install -m 0755 "$NODE_IMAGE_DIR/node-suite" "$root/usr/local/sbin/node-suite"
install -m 0644 "$NODE_IMAGE_DIR/node-suite.service" \
	"$root/etc/systemd/system/node-suite.service"
chroot "$root" systemctl enable node-suite.service >/dev/null

# a small initramfs: the disk and its file system are all it needs
echo MODULES=list >"$root/etc/initramfs-tools/conf.d/node.conf"
printf 'virtio_pci\nvirtio_blk\next4\n' >>"$root/etc/initramfs-tools/modules"
chroot "$root" update-initramfs -u -k "$NODE_KVER" >&2
