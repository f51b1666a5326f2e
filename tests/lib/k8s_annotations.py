#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The OCI annotations a Kubernetes pod's container gets from a runtime.

    k8s_annotations.py POD.yaml crio CONTAINER [CRIO-CONFIG.toml]
    k8s_annotations.py POD.yaml containerd CONTAINER CONTAINERD-CONFIG.toml

prints, as one JSON object, the annotations that CRI-O or containerd put
into the OCI config.json of CONTAINER (a name from spec.containers, or
"POD" for the pod's sandbox container), which is what the hook reads:

  CRI-O       the default_annotations of the pod's runtime handler in
              CRIO-CONFIG (if given; CRI-O 1.32+), overridden by every pod
              annotation, io.kubernetes.container.name and
              io.kubernetes.cri-o.ContainerType (container or sandbox);
  containerd  the annotations of the handler's base_runtime_spec (the
              file of that name next to CONTAINERD-CONFIG), then the pod
              annotations whose key matches one of the pod_annotations
              globs of the runtime handler that the pod's
              runtimeClassName names (Go filepath.Match: '*' does not
              match '/'), plus io.kubernetes.cri.container-type and
              io.kubernetes.cri.container-name (containers only).

Exits 1 with a message if the pod or the handler is not usable.
"""
import json
import os
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


def containerd_handler(config_path, handler):
    with open(config_path, "rb") as f:
        cfg = tomllib.load(f)
    runtimes = cfg["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]
    if handler not in runtimes:
        sys.exit("containerd config has no runtime handler '%s'" % handler)
    return runtimes[handler]


def base_spec_annotations(config_path, rt):
    """containerd starts a handler's containers from its base spec."""
    base = rt.get("base_runtime_spec")
    if not base:
        return {}
    path = os.path.join(os.path.dirname(config_path), os.path.basename(base))
    with open(path) as f:
        return dict(json.load(f).get("annotations") or {})


def crio_default_annotations(config_path, handler):
    with open(config_path, "rb") as f:
        cfg = tomllib.load(f)
    runtimes = cfg.get("crio", {}).get("runtime", {}).get("runtimes", {})
    return dict(runtimes.get(handler, {}).get("default_annotations", {}))


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        # the Pod of the file (an example may hold its ConfigMaps too)
        pod = next(d for d in yaml.safe_load_all(f) if d["kind"] == "Pod")
    runtime, name = argv[2], argv[3]
    meta = pod["metadata"]
    pod_ann = meta.get("annotations") or {}
    names = [c["name"] for c in pod["spec"]["containers"]]
    sandbox = name == "POD"
    if not sandbox and name not in names:
        sys.exit("pod %s has no container '%s'" % (meta["name"], name))
    if runtime == "crio":
        ann = {}
        if len(argv) > 4:
            ann = crio_default_annotations(
                argv[4], pod["spec"].get("runtimeClassName", "runc"))
        ann.update(pod_ann)
        ann["io.kubernetes.pod.name"] = meta["name"]
        ann["io.kubernetes.pod.namespace"] = meta.get("namespace", "default")
        ann["io.kubernetes.container.name"] = name
        ann["io.kubernetes.cri-o.ContainerType"] = (
            "sandbox" if sandbox else "container")
    elif runtime == "containerd":
        handler = pod["spec"].get("runtimeClassName", "runc")
        rt = containerd_handler(argv[4], handler)
        globs = [glob_re(g) for g in rt.get("pod_annotations", [])]
        ann = base_spec_annotations(argv[4], rt)
        ann.update({k: v for k, v in pod_ann.items()
                    if any(g.match(k) for g in globs)})
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
