#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""An OCI image archive made from a directory, with no registry and no network.

    mkimage.py [-p PATH] OUT.tar NAME ROOTFS-DIR [ENTRYPOINT...]

writes OUT.tar, an OCI image layout (oci-layout, index.json, blobs/sha256/)
holding one image for linux/<this machine's architecture>: ROOTFS-DIR as a
single uncompressed layer (owned by root, mtime 0), PATH=/bin (or the
-p PATH, for an image whose programs are also in /usr/sbin), and
ENTRYPOINT as its entrypoint. index.json names it NAME
(io.containerd.image.name, which `ctr images import` takes as the image's
name, and org.opencontainers.image.ref.name), so

    ctr -a SOCKET -n k8s.io images import OUT.tar

makes NAME an image that containerd's CRI can run: the tests' busybox
image, and the pause image that containerd's sandbox_image names.
"""
import hashlib
import io
import json
import os
import platform
import sys
import tarfile

ARCH = {"x86_64": "amd64", "aarch64": "arm64", "i686": "386",
        "armv7l": "arm", "ppc64le": "ppc64le", "s390x": "s390x",
        "riscv64": "riscv64"}


def root_owned(info):
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mtime = 0
    return info


def layer_tar(rootfs):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name in sorted(os.listdir(rootfs)):
            t.add(os.path.join(rootfs, name), arcname=name,
                  filter=root_owned)
    return buf.getvalue()


def descriptor(media_type, data):
    return {"mediaType": media_type,
            "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
            "size": len(data)}


def add_bytes(t, name, data):
    info = root_owned(tarfile.TarInfo(name))
    info.size = len(data)
    info.mode = 0o644
    t.addfile(info, io.BytesIO(data))


def main(argv):
    path = "/bin"
    if len(argv) > 2 and argv[1] == "-p":
        path, argv = argv[2], argv[:1] + argv[3:]
    if len(argv) < 4:
        sys.exit(__doc__)
    out, name, rootfs, entrypoint = argv[1], argv[2], argv[3], argv[4:]
    arch = ARCH.get(platform.machine(), platform.machine())
    layer = layer_tar(rootfs)
    layer_desc = descriptor("application/vnd.oci.image.layer.v1.tar", layer)
    config = json.dumps({
        "architecture": arch, "os": "linux",
        "config": {"Env": ["PATH=" + path], "Entrypoint": entrypoint or None,
                   "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": [layer_desc["digest"]]},
    }, sort_keys=True).encode()
    config_desc = descriptor("application/vnd.oci.image.config.v1+json",
                             config)
    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": config_desc, "layers": [layer_desc],
    }, sort_keys=True).encode()
    manifest_desc = descriptor("application/vnd.oci.image.manifest.v1+json",
                               manifest)
    manifest_desc["platform"] = {"architecture": arch, "os": "linux"}
    manifest_desc["annotations"] = {
        "io.containerd.image.name": name,
        "org.opencontainers.image.ref.name": name.rsplit(":", 1)[-1],
    }
    index = json.dumps({"schemaVersion": 2,
                        "mediaType": "application/vnd.oci.image.index.v1+json",
                        "manifests": [manifest_desc]}).encode()
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as t:
        add_bytes(t, "oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        add_bytes(t, "index.json", index)
        for blob in (layer, config, manifest):
            add_bytes(t, "blobs/sha256/" + hashlib.sha256(blob).hexdigest(),
                      blob)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
