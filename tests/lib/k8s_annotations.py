#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The OCI annotations a Kubernetes pod's container gets from a runtime.

    k8s_annotations.py POD.yaml crio CONTAINER
    k8s_annotations.py POD.yaml containerd CONTAINER CONTAINERD-CONFIG.toml

prints, as one JSON object, the annotations that CRI-O or containerd put
into the OCI config.json of CONTAINER (a name from spec.containers, or
"POD" for the pod's sandbox container), which is what the hook reads:

  CRI-O       every pod annotation, io.kubernetes.container.name and
              io.kubernetes.cri-o.ContainerType (container or sandbox);
  containerd  only the pod annotations whose key matches one of the
              pod_annotations globs of the runtime handler that the pod's
              runtimeClassName names (Go filepath.Match: '*' does not
              match '/'), plus io.kubernetes.cri.container-type and
              io.kubernetes.cri.container-name (containers only).

Exits 1 with a message if the pod or the handler is not usable.
"""
import json
import re
import sys
import tomllib

import yaml


def glob_re(pattern):
    """Go filepath.Match on a key: '*' and '?' never match '/'."""
    out = ""
    for ch in pattern:
        if ch == "*":
            out += "[^/]*"
        elif ch == "?":
            out += "[^/]"
        else:
            out += re.escape(ch)
    return re.compile(out + r"\Z")


def handler_globs(config_path, handler):
    with open(config_path, "rb") as f:
        cfg = tomllib.load(f)
    runtimes = cfg["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]
    if handler not in runtimes:
        sys.exit("containerd config has no runtime handler '%s'" % handler)
    return runtimes[handler].get("pod_annotations", [])


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        pod = yaml.safe_load(f)
    runtime, name = argv[2], argv[3]
    meta = pod["metadata"]
    pod_ann = meta.get("annotations") or {}
    names = [c["name"] for c in pod["spec"]["containers"]]
    sandbox = name == "POD"
    if not sandbox and name not in names:
        sys.exit("pod %s has no container '%s'" % (meta["name"], name))
    if runtime == "crio":
        ann = dict(pod_ann)
        ann["io.kubernetes.pod.name"] = meta["name"]
        ann["io.kubernetes.pod.namespace"] = meta.get("namespace", "default")
        ann["io.kubernetes.container.name"] = name
        ann["io.kubernetes.cri-o.ContainerType"] = (
            "sandbox" if sandbox else "container")
    elif runtime == "containerd":
        handler = pod["spec"].get("runtimeClassName", "runc")
        globs = [glob_re(g) for g in handler_globs(argv[4], handler)]
        ann = {k: v for k, v in pod_ann.items()
               if any(g.match(k) for g in globs)}
        ann["io.kubernetes.cri.sandbox-name"] = meta["name"]
        ann["io.kubernetes.cri.sandbox-namespace"] = meta.get(
            "namespace", "default")
        ann["io.kubernetes.cri.container-type"] = (
            "sandbox" if sandbox else "container")
        if not sandbox:
            ann["io.kubernetes.cri.container-name"] = name
    else:
        sys.exit("unknown runtime '%s' (crio, containerd)" % runtime)
    json.dump(ann, sys.stdout, sort_keys=True)
    print()


if __name__ == "__main__":
    main(sys.argv)
