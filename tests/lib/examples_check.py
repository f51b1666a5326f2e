#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Static checks of the examples that a JSON Schema cannot express.

    examples_check.py TOP HOOKS_DIR

TOP is the source tree, HOOKS_DIR where `make install` put the hooks.d
file (without DESTDIR). Prints TAP lines without a plan ("ok - ..." /
"not ok - ... # reason"); the calling shell script numbers them.
"""
import glob
import json
import os
import re
import sys
import tomllib

import yaml

TOP = sys.argv[1]
HOOKS_DIR = sys.argv[2]
EX = os.path.join(TOP, "examples")
KEYS = ["sockopt-hook.io/policy", "sockopt-hook.io/bypass-prot-mem",
        "sockopt-hook.io/policy.web", "sockopt-hook.io/bypass-prot-mem.web",
        "sockopt-hook.io/containers.policy",
        "sockopt-hook.io/containers.bypass-prot-mem",
        "sockopt-hook.io/record", "sockopt-hook.io/record.web",
        "sockopt-hook.io/containers.record"]
# Keys the hooks.d file must not react to.
NOT_KEYS = ["example.com/policy", "sockopt-hook.io/policyx",
            "xsockopt-hook.io/policy", "sockopt-hook.io/policy/web",
            "sockopt-hook.io/containers.policyx", "sockopt-hook.io/containers",
            "sockopt-hook.io/recordx", "sockopt-hook.io/mode",
            "io.kubernetes.container.name"]
# Keys containerd must not pass on for us (the handler key is the node's).
UNRELATED = ["example.com/policy", "xsockopt-hook.io/policy",
             "io.kubernetes.container.name",
             "node.sockopt-hook.io/runtime-handler"]
# Where a runtime handler's own config names the handler (hook/policy/require.h).
HANDLER_KEY = "node.sockopt-hook.io/runtime-handler"
# Where NFD's local source reads feature files.
NFD_DIR = "/etc/kubernetes/node-feature-discovery/features.d"
LABEL_PREFIX = "sockopt-hook.io/"


def check(ok, desc, why=""):
    print("%s - %s%s" % ("ok" if ok else "not ok", desc,
                         "" if ok or not why else "\n# " + str(why)))


def load_yaml(path):
    with open(path) as f:
        return list(yaml.safe_load_all(f))


def load_toml(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


def checked_toml(name):
    """examples/NAME as TOML, one check that it parses; None if not."""
    try:
        data = load_toml(os.path.join(EX, name))
    except (OSError, tomllib.TOMLDecodeError) as e:
        check(False, "%s parses as TOML" % name, e)
        return None
    check(True, "%s parses as TOML" % name)
    return data


def hooks_d_matches(when, annotations):
    """containers/common pkg/hooks When.Match, for the annotations part:
    every (key regex, value regex) pair must match some annotation."""
    if when.get("always"):
        return True
    for kpat, vpat in when.get("annotations", {}).items():
        if not any(re.search(kpat, k) and re.search(vpat, v)
                   for k, v in annotations.items()):
            return False
    return True


def go_glob(pattern, key):
    """Go filepath.Match: '*' does not match '/'."""
    rx = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c)
                 for c in pattern)
    return re.fullmatch(rx, key) is not None


def yaml_examples():
    files = sorted(glob.glob(os.path.join(EX, "**", "*.yaml"), recursive=True))
    check(len(files) >= 4, "at least 4 YAML examples (%d)" % len(files))
    docs = {}
    for path in files:
        name = os.path.relpath(path, EX)
        # a kustomization is no object (tests/integration/28-kustomize.sh
        # renders and checks what it makes)
        if os.path.basename(path) == "kustomization.yaml":
            continue
        try:
            items = load_yaml(path)
        except yaml.YAMLError as e:
            check(False, "%s parses as YAML" % name, e)
            continue
        check(True, "%s parses as YAML (%d documents)" % (name, len(items)))
        bad = [i for i, d in enumerate(items)
               if not isinstance(d, dict) or not d.get("apiVersion")
               or not d.get("kind") or not d.get("metadata", {}).get("name")]
        check(not bad, "%s: every document has apiVersion, kind and "
              "metadata.name" % name, "documents %s" % bad)
        docs[name] = items
    return docs


def runtime_classes(docs):
    rcs = {d["metadata"]["name"]: d for d in docs["kubernetes/overlays/runtimeclass/runtimeclass.yaml"]}
    check(sorted(rcs) == ["sockopt", "sockopt-bypass"] and
          all(d["kind"] == "RuntimeClass" and d["apiVersion"] == "node.k8s.io/v1"
              for d in rcs.values()),
          "runtimeclass.yaml: node.k8s.io/v1 RuntimeClasses sockopt and "
          "sockopt-bypass", sorted(rcs))
    ctrd = load_toml(os.path.join(EX, "containerd", "config.toml"))
    runtimes = ctrd["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]
    for rc in rcs.values():
        check(rc["handler"] in runtimes,
              "RuntimeClass %s: its handler '%s' is a runtime of the "
              "containerd example" % (rc["metadata"]["name"], rc["handler"]),
              sorted(runtimes))
    sel = {n: d.get("scheduling", {}).get("nodeSelector", {})
           for n, d in rcs.items()}
    check(sel.get("sockopt") == {LABEL_PREFIX + "installed": "true"},
          "RuntimeClass sockopt schedules on nodes labelled "
          "sockopt-hook.io/installed=true", sel.get("sockopt"))
    check(sel.get("sockopt-bypass") == {LABEL_PREFIX + "installed": "true",
                                        LABEL_PREFIX + "bypass-prot-mem": "true"},
          "RuntimeClass sockopt-bypass also needs "
          "sockopt-hook.io/bypass-prot-mem=true", sel.get("sockopt-bypass"))
    return rcs


def kubernetes(docs):
    rcs = runtime_classes(docs)
    rc = rcs["sockopt"]
    for name in ("kubernetes/pod-restricted.yaml",
                 "kubernetes/pod-per-container.yaml",
                 "kubernetes/pod-redis.yaml"):
        pod = docs[name][0]
        ann = pod["metadata"].get("annotations", {})
        check(pod["kind"] == "Pod" and
              pod["spec"].get("runtimeClassName") == rc["metadata"]["name"],
              "%s: a Pod of RuntimeClass %s" % (name, rc["metadata"]["name"]))
        check(all(isinstance(v, str) for v in ann.values()),
              "%s: annotation values are strings" % name, ann)
        names = {c["name"] for c in pod["spec"]["containers"]}
        scoped = {k.split(".", 2)[2] for k in ann
                  if re.fullmatch(r"sockopt-hook\.io/[a-z-]+\.[A-Za-z0-9_.-]+", k)}
        check(scoped <= names, "%s: per-container keys name containers of "
              "the pod" % name, scoped - names)
        maps = {d["metadata"]["name"] for d in docs[name][1:]
                if d["kind"] == "ConfigMap"}
        used = {v["configMap"]["name"]
                for v in pod["spec"].get("volumes") or [] if "configMap" in v}
        check(used <= maps, "%s: the ConfigMaps its volumes name are in "
              "the file" % name, used - maps)
    two = docs["kubernetes/pod-per-container.yaml"][0]
    check(len(two["spec"]["containers"]) == 2 and
          any(k.startswith("sockopt-hook.io/policy.") for k in
              two["metadata"]["annotations"]),
          "pod-per-container.yaml: two containers and a per-container key")


def admission_shape(vap, binding):
    check(vap["kind"] == "ValidatingAdmissionPolicy" and
          binding["kind"] == "ValidatingAdmissionPolicyBinding" and
          vap["apiVersion"] == binding["apiVersion"] ==
          "admissionregistration.k8s.io/v1",
          "admission policy: a v1 ValidatingAdmissionPolicy and its binding")
    check(binding["spec"]["policyName"] == vap["metadata"]["name"] and
          "Deny" in binding["spec"]["validationActions"],
          "admission policy: the binding denies with the policy")
    mc = vap["spec"]["matchConstraints"]
    rules = mc["resourceRules"]
    check(vap["spec"].get("failurePolicy") == "Fail" and
          any(r["apiGroups"] == [""] and "pods" in r["resources"] and
              "CREATE" in r["operations"] for r in rules),
          "admission policy: pod CREATE in the core group, failing closed")
    want = {("apps", k) for k in ("deployments", "statefulsets", "daemonsets",
                                  "replicasets")} | \
        {("batch", k) for k in ("jobs", "cronjobs")}
    got = {(g, k) for r in rules if {"CREATE", "UPDATE"} <= set(r["operations"])
           for g in r["apiGroups"] for k in r["resources"]}
    check(want <= got, "admission policy: the pod templates of Deployments, "
          "StatefulSets, DaemonSets, ReplicaSets, Jobs and CronJobs, on "
          "CREATE and UPDATE", sorted(want - got))
    exprs = mc.get("namespaceSelector", {}).get("matchExpressions", [])
    check({"key": "kubernetes.io/metadata.name", "operator": "NotIn",
           "values": ["kube-system", "oci-sockopt-hook"]} in exprs,
          "admission policy: namespaces kube-system and oci-sockopt-hook "
          "(the DaemonSet's) left out", exprs)
    check(any("sockopt-hook.io/" in c["expression"]
              for c in vap["spec"].get("matchConditions", [])),
          "admission policy: only objects with our keys are looked at "
          "(matchConditions)")


def admission(docs):
    """examples/kubernetes/overlays/admission/admission-sockopt-hook.yaml: its shape. Its CEL
    is compiled and run by tests/cel/vapcheck.go (65-cluster.sh)."""
    items = docs["kubernetes/overlays/admission/admission-sockopt-hook.yaml"]
    vaps = {d["metadata"]["name"]: d for d in items
            if d["kind"] == "ValidatingAdmissionPolicy"}
    bindings = {d["spec"]["policyName"]: d for d in items
                if d["kind"] == "ValidatingAdmissionPolicyBinding"}
    cms = {(d["metadata"].get("namespace"), d["metadata"]["name"]): d
           for d in items if d["kind"] == "ConfigMap"}
    check(sorted(vaps) == ["sockopt-hook-namespaces",
                           "sockopt-hook-runtimeclass"] and
          sorted(bindings) == sorted(vaps),
          "admission policy: two policies, each with its binding",
          (sorted(vaps), sorted(bindings)))
    for name in sorted(set(vaps) & set(bindings)):
        admission_shape(vaps[name], bindings[name])
        vals = vaps[name]["spec"]["validations"]
        check(all(v.get("messageExpression") and v.get("reason") for v in vals),
              "%s: every validation has a messageExpression and a reason"
              % name)
    rc = vaps.get("sockopt-hook-runtimeclass")
    if rc:
        check("paramKind" not in rc["spec"] and
              "paramRef" not in bindings[rc["metadata"]["name"]]["spec"],
              "sockopt-hook-runtimeclass takes no parameters (it holds "
              "whatever happens to the ConfigMap)")
        text = " ".join(v["expression"] for v in rc["spec"]["validations"])
        names = [d["metadata"]["name"]
                 for d in docs["kubernetes/overlays/runtimeclass/runtimeclass.yaml"]]
        check(all("'%s'" % n in text for n in names),
              "sockopt-hook-runtimeclass names every RuntimeClass of "
              "runtimeclass.yaml", names)
    ns = vaps.get("sockopt-hook-namespaces")
    if ns:
        ref = bindings[ns["metadata"]["name"]]["spec"].get("paramRef", {})
        check(ns["spec"].get("paramKind") == {"apiVersion": "v1",
                                              "kind": "ConfigMap"} and
              (ref.get("namespace"), ref.get("name")) in cms and
              ref.get("parameterNotFoundAction") == "Allow",
              "sockopt-hook-namespaces: ConfigMap parameters, the one in "
              "the file; without it, no pod is refused for it (the node's "
              "config still decides)", ref)
        data = cms.get((ref.get("namespace"), ref.get("name")), {}).get("data", {})
        check({"bypass-namespaces", "policies"} <= set(data),
              "the parameter ConfigMap has bypass-namespaces and policies",
              sorted(data))


def daemonset(docs):
    items = docs["kubernetes/base/daemonset.yaml"]
    kinds = {d["kind"]: d for d in items}
    check(set(kinds) == {"DaemonSet"},
          "base/daemonset.yaml holds the DaemonSet (its ConfigMap is the "
          "kustomization's configMapGenerator)", sorted(kinds))
    ds = kinds["DaemonSet"]
    # the ConfigMap as base/kustomization.yaml's generator makes it
    kust = load_yaml(os.path.join(EX, "kubernetes", "base",
                                  "kustomization.yaml"))[0]
    gen = kust["configMapGenerator"][0]
    cm = {"metadata": {"name": gen["name"]},
          "data": dict(lit.split("=", 1) for lit in gen.get("literals", []))}
    with open(os.path.join(EX, "config.json")) as f:
        want = json.load(f)
    try:
        with open(os.path.join(EX, "kubernetes", "base", "config.json")) as f:
            got = json.load(f)
    except (OSError, ValueError) as e:
        got = e
    check(got == want, "the ConfigMap's config.json (base/config.json) is "
          "examples/config.json")
    check(ds["apiVersion"] == "apps/v1", "an apps/v1 DaemonSet")
    spec = ds["spec"]["template"]["spec"]
    check(ds["spec"]["selector"]["matchLabels"].items() <=
          ds["spec"]["template"]["metadata"]["labels"].items(),
          "the selector matches the pod template's labels")
    vols = {v["name"]: v for v in spec["volumes"]}
    host = sorted(v["hostPath"]["path"] for v in vols.values() if "hostPath" in v)
    install_dirs = ["/etc/oci-sockopt-hook", "/usr/local/libexec/oci/hooks.d",
                    "/usr/share/containers/oci/hooks.d"]
    agent_dirs = [NFD_DIR, "/var/lib/prometheus/node-exporter"]
    nri_dirs = ["/var/run/nri", "/run/oci-sockopt-hook"]
    check(host == sorted(install_dirs + agent_dirs + nri_dirs),
          "hostPath volumes: the three install directories (the hooks.d "
          "file where CRI-O, podman 5 and NRI look by default), NFD's "
          "features.d and node_exporter's textfile directory, NRI's socket "
          "directory and the hook's state directory", host)
    install = spec["initContainers"][0]
    check(install["securityContext"].get("seLinuxOptions", {}).get("type")
          == "spc_t", "the install container runs as spc_t on SELinux nodes")
    cms = [v["configMap"]["name"] for v in vols.values() if "configMap" in v]
    check(cms == [cm["metadata"]["name"]],
          "the config volume is the ConfigMap", cms)
    init = spec.get("initContainers", [])
    check([c["name"] for c in init] == ["install", "configure", "preload"] and
          all(c["command"][0] == "/bin/sh" for c in init),
          "three init containers, shell scripts: install, configure, preload")
    check(spec.get("hostNetwork") is True,
          "the pod uses the node's network (none needed; no CNI on a new node)")
    configure(spec, cm)
    mounts = {m["name"] for m in init[0]["volumeMounts"]}
    want = {n for n, v in vols.items()
            if v.get("hostPath", {}).get("path") in install_dirs or
            "configMap" in v}
    check(mounts == want, "the install container mounts the install "
          "directories and the ConfigMap", sorted(want ^ mounts))
    pre = init[-1]
    script = " ".join(pre["args"])
    check(spec.get("hostPID") is True and
          pre.get("securityContext", {}).get("privileged") is True and
          "nsenter --target 1 --mount" in script and
          "/usr/local/libexec/oci/hooks.d/oci-sockopt-hook" in script and
          "--config /etc/oci-sockopt-hook/config.json preload" in script,
          "the preload container runs the installed hook's preload in the "
          "node's mount namespace (hostPID, privileged, nsenter)")
    check(all(c.get("image") for c in spec["containers"] + init),
          "every container names an image")
    names = [c["name"] for c in spec["containers"]]
    check(names == ["nri", "agent"], "two containers: nri and the agent",
          names)
    nri(spec, vols, cm)
    agent(spec, vols)


def nri(spec, vols, cm):
    """The DaemonSet's NRI plugin container."""
    c = next((c for c in spec["containers"] if c["name"] == "nri"), None)
    if not c:
        return
    script = "\n".join(c["args"])
    mounts = {vols[m["name"]].get("hostPath", {}).get("path"): m
              for m in c.get("volumeMounts", [])}
    check(sorted(mounts) == ["/etc/oci-sockopt-hook", "/run/oci-sockopt-hook",
                             "/var/run/nri"] and
          all(m["mountPath"] == p for p, m in mounts.items()) and
          mounts["/etc/oci-sockopt-hook"].get("readOnly") is True,
          "nri: the runtime's NRI socket directory, the node's config "
          "(read-only) and state directory (its lock and status, which "
          "`features` on the node reads), each at the node's path",
          sorted(mounts))
    env = {e["name"]: e.get("valueFrom", {}).get("configMapKeyRef", {})
           for e in c.get("env", [])}
    check(env.get("NRI") == {"name": cm["metadata"]["name"], "key": "nri",
                             "optional": True} and
          cm["data"].get("nri") == "pod",
          "nri: NRI from the ConfigMap's key nri, pod by default", env)
    check(re.search(r'^\s*exec "\$hook" --config "\$config" nri$', script,
                    re.M) and
          re.search(r"^hook=/dist/usr/local/libexec/oci/hooks.d/"
                    r"oci-sockopt-hook$", script, re.M) and
          re.search(r"^config=/etc/oci-sockopt-hook/config.json$", script,
                    re.M) and
          '[ "$NRI" != pod ]' in script,
          "nri: runs the image's hook as `nri` with the node's config, only "
          "when the ConfigMap's nri is pod")
    check('validate --json "$config"' in script and
          """*'"nri":true'*)""" in script and
          re.search(r"require_annotations\.nri.*\n\s*exit 1", script),
          "nri: refuses to run the plugin only from a pod when the config "
          "has require_annotations.nri (its own pod would be refused while "
          "it is down)")
    sc = c.get("securityContext", {})
    check(not sc.get("privileged") and
          sc.get("capabilities", {}).get("drop") == ["ALL"] and
          sc.get("readOnlyRootFilesystem") is True and
          sc.get("allowPrivilegeEscalation") is False,
          "nri: unprivileged, no capabilities, read-only root", sc)


def configure(spec, cm):
    """The init container that runs `runtime configure` when asked."""
    conf = next((c for c in spec.get("initContainers", [])
                 if c["name"] == "configure"), None)
    if not conf:
        return
    script = " ".join(conf["args"])
    env = {e["name"]: e.get("valueFrom", {}).get("configMapKeyRef", {})
           for e in conf.get("env", [])}
    check(env.get("RUNTIME") == {"name": cm["metadata"]["name"],
                                 "key": "runtime", "optional": True} and
          cm["data"].get("runtime") == "",
          "configure: RUNTIME from the ConfigMap's key runtime, empty by "
          "default (not asked)", env)
    check(env.get("NRI") == {"name": cm["metadata"]["name"], "key": "nri",
                             "optional": True},
          "configure: NRI from the ConfigMap's key nri", env)
    check(conf.get("securityContext", {}).get("privileged") is True and
          "nsenter --target 1 --mount" in script and
          'runtime configure --runtime "$RUNTIME" "$@"' in script and
          "configure --restart $add || exit 1" in script and
          '[ "$ADD_IMPORT" != true ] || add=--add-import' in script and
          '[ -z "$NRI" ] || configure --nri "$NRI" --restart' in script and
          '[ -z "$RUNTIME" ]' in script,
          "configure: the installed hook's `runtime configure --restart` in "
          "the node's mount namespace, only when asked, then with --nri "
          "MODE when the ConfigMap names one")


def agent(spec, vols):
    """The DaemonSet's agent container."""
    ag = next((c for c in spec["containers"] if c["name"] == "agent"), None)
    if not ag:
        return
    script = "\n".join(ag["args"])
    mounts = ag.get("volumeMounts", [])
    made = sorted(vols[m["name"]]["hostPath"]["path"] for m in mounts
                  if "hostPath" in vols[m["name"]])
    check(made == sorted([NFD_DIR, "/var/lib/prometheus/node-exporter",
                          "/etc/oci-sockopt-hook",
                          "/usr/share/containers/oci/hooks.d"]),
          "the agent's host volumes: features.d and the textfile directory "
          "(made by the kubelet; the repairs counter), the hooks.d "
          "directory (a removed hooks.d file put back), the node's config "
          "directory (apply)",
          made)
    config = [m for m in mounts if "configMap" in vols[m["name"]]]
    check(len(config) == 1 and config[0].get("readOnly") is True,
          "the agent reads the ConfigMap read-only", config)
    check(re.search(r'^host="nsenter --target 1 --mount --'
                    r'( /usr/bin/nsenter --target 1 --cgroup --)?"$', script,
                    re.M)
          and '$host "$hook"' in script and
          re.search(r"^hook=/usr/local/libexec/oci/hooks.d/oci-sockopt-hook$",
                    script, re.M),
          "the agent runs the installed hook in the node's mount namespace")
    nfd = re.search(r"^nfd=(\S+)$", script, re.M)
    prom = re.search(r"^prom=(\S+)$", script, re.M)
    check(nfd is not None and os.path.dirname(nfd.group(1)) == NFD_DIR and
          not os.path.basename(nfd.group(1)).startswith(".") and
          'features --nfd-file "$nfd"' in script,
          "the agent runs `features --nfd-file` into NFD's features.d "
          "(a name NFD does not skip)")
    check(prom is not None and prom.group(1) ==
          "/var/lib/prometheus/node-exporter/oci-sockopt-hook.prom" and
          'metrics --output "$prom"' in script,
          "the agent runs `metrics --output` into node_exporter's textfile "
          "directory")
    check(re.search(r"^\s*every=15$", script, re.M) is not None and
          re.search(r'^\s*sleep "\$every"', script, re.M) is not None and
          "while :" in script,
          "the agent repeats every 15 s")
    check('"$image_hook" validate "$configmap"' in script and
          re.search(r'mv -f "\$installed.new" "\$installed"', script) and
          '$host "$hook" --config "$config" preload' in script and
          '$host "$hook" --config "$config" apply' in script,
          "a changed ConfigMap is validated before it is installed (in one "
          "rename), then preloaded and applied on the node")
    check(re.search(r"trap '\$host rm -f \"\$nfd\"", script) is not None,
          "the agent removes the feature file when it is stopped")
    check(ag.get("securityContext", {}).get("privileged") is True,
          "the agent is privileged (the kernel probe loads a BPF program)")


def nfd_master():
    """A fragment to merge into nfd-master.conf, never an object that
    kubectl apply could put in place of the whole ConfigMap."""
    path = os.path.join(EX, "kubernetes", "nfd-master-sockopt-hook.conf")
    try:
        with open(path) as f:
            conf = yaml.safe_load(f)
        ns = conf["extraLabelNs"]
    except (OSError, KeyError, TypeError, yaml.YAMLError) as e:
        conf, ns = {}, e
    check(isinstance(ns, list) and LABEL_PREFIX.rstrip("/") in ns and
          set(conf) == {"extraLabelNs"},
          "nfd-master-sockopt-hook.conf: only extraLabelNs, with "
          "sockopt-hook.io, to merge into nfd-master.conf", conf)
    check(not any(k in conf for k in ("apiVersion", "kind", "metadata")),
          "nfd-master-sockopt-hook.conf is no Kubernetes object (kubectl "
          "apply cannot replace NFD's config with it)")


def crio_handler():
    """The optional handler block of the CRI-O example, uncommented."""
    with open(os.path.join(EX, "crio", "99-sockopt-hook.conf")) as f:
        lines = f.read().splitlines()
    start = lines.index("# [crio.runtime.runtimes.sockopt]")
    end = lines.index("#", start)
    try:
        rt = tomllib.loads("\n".join(ln[2:] for ln in lines[start:end]))
        rt = rt["crio"]["runtime"]["runtimes"]["sockopt"]
    except (tomllib.TOMLDecodeError, KeyError) as e:
        rt = {"error": str(e)}
    check(rt.get("default_annotations") == {HANDLER_KEY: "sockopt"},
          "CRI-O example handler, uncommented: its default_annotations name "
          "it in %s" % HANDLER_KEY, rt)


def runtime_configs():
    crio = checked_toml("crio/99-sockopt-hook.conf") or {}
    dirs = crio.get("crio", {}).get("runtime", {}).get("hooks_dir", [])
    check(HOOKS_DIR in dirs, "CRI-O hooks_dir lists %s, where make install "
          "puts the hooks.d file" % HOOKS_DIR, dirs)
    check("/usr/share/containers/oci/hooks.d" in dirs,
          "CRI-O hooks_dir keeps CRI-O's default directory", dirs)
    crio_handler()

    for name, version, plugin in (
            ("containerd/config.toml", 2, "io.containerd.grpc.v1.cri"),
            ("containerd/config-v3.toml", 3, "io.containerd.cri.v1.runtime")):
        cfg = checked_toml(name)
        if cfg is not None:
            containerd_handler(name, cfg, version, plugin)


def containerd_handler(name, cfg, version, plugin):
    check(cfg.get("version") == version,
          "%s: containerd config version %d" % (name, version))
    rt = cfg["plugins"][plugin]["containerd"]["runtimes"]["sockopt"]
    check(rt.get("options", {}).get("SystemdCgroup") is True,
          "%s: the handler's runc uses the systemd cgroup driver" % name)
    check(rt.get("runtime_type") == "io.containerd.runc.v2",
          "the handler runs runc (io.containerd.runc.v2)")
    base = rt.get("base_runtime_spec", "")
    check(os.path.isabs(base) and os.path.exists(
        os.path.join(EX, "containerd", os.path.basename(base))),
        "base_runtime_spec names the example base spec (%s)" % base)
    globs = rt.get("pod_annotations", [])
    check(all(any(go_glob(g, k) for g in globs) for k in KEYS),
          "pod_annotations lets every hook key through, pod-level and "
          "per-container", globs)
    check(not any(go_glob(g, k) for g in globs for k in UNRELATED),
          "pod_annotations lets no unrelated key through", globs)
    with open(os.path.join(EX, "containerd", os.path.basename(base))) as f:
        spec = json.load(f)
    paths = {h["path"] for hl in spec.get("hooks", {}).values() for h in hl}
    stages = sorted(spec.get("hooks", {}))
    check(paths == {"/usr/local/libexec/oci/hooks.d/oci-sockopt-hook"} and
          stages == ["poststop", "prestart"],
          "the base spec runs the installed hook at prestart and poststop",
          (paths, stages))
    rc = load_yaml(os.path.join(EX, "kubernetes", "overlays", "runtimeclass",
                                "runtimeclass.yaml"))[0]
    check(spec.get("annotations", {}).get(HANDLER_KEY) == rc["handler"],
          "the base spec names its handler (%s) in %s, for "
          "require_annotations" % (rc["handler"], HANDLER_KEY))
    check("rlimits" not in spec.get("process", {}),
          "the base spec sets no process.rlimits (containerd keeps a base "
          "spec's, and ctr oci spec caps open files at 1024)")


def hooks_d():
    with open(os.path.join(EX, "hooks.d-oci-sockopt-hook.json")) as f:
        when = json.load(f)["when"]
    for key in KEYS:
        check(hooks_d_matches(when, {key: "x", "io.container.manager": "libpod"}),
              "hooks.d file: the annotation %s alone runs the hook" % key)
    for key in NOT_KEYS:
        check(not hooks_d_matches(when, {key: "restricted"}),
              "hooks.d file: the annotation %s alone does not" % key)
    check(not hooks_d_matches(when, {}),
          "hooks.d file: no annotation, no hook")
    with open(os.path.join(EX, "hooks.d-oci-sockopt-hook-always.json")) as f:
        check(hooks_d_matches(json.load(f)["when"], {}),
              "hooks.d -always file: runs for every container")
    with open(os.path.join(EX, "hooks.d-oci-sockopt-hook-handler.json")) as f:
        when = json.load(f)["when"]
    for ann, want in (({HANDLER_KEY: "sockopt"}, True),
                      ({HANDLER_KEY: "sockopt", "example.com/x": "1"}, True),
                      ({HANDLER_KEY: "sockopt-x"}, False),
                      ({HANDLER_KEY: "runc"}, False),
                      ({"sockopt-hook.io/policy": "restricted"}, False),
                      ({}, False)):
        check(hooks_d_matches(when, ann) == want,
              "hooks.d -handler file: %s %s the hook" %
              (ann, "runs" if want else "does not run"))


def runc_snippet():
    with open(os.path.join(EX, "runc-crun-hooks.json")) as f:
        snip = json.load(f)
    args = {s: [h["args"][1:] for h in snip["hooks"][s]] for s in snip["hooks"]}
    check(args == {"prestart": [["prestart"]], "poststop": [["poststop"]]},
          "runc/crun snippet: prestart runs 'prestart', poststop 'poststop'",
          args)


def podman_script():
    path = os.path.join(EX, "podman-run.sh")
    with open(path) as f:
        text = f.read()
    check(os.access(path, os.X_OK), "podman-run.sh is executable")
    check("--hooks-dir" in text and "--annotation" in text,
          "podman-run.sh uses --hooks-dir and --annotation")


def spdx():
    bad = []
    for path in sorted(glob.glob(os.path.join(EX, "**", "*"), recursive=True)):
        if os.path.isdir(path) or path.endswith(".json"):
            continue
        with open(path) as f:
            if "SPDX-License-Identifier:" not in f.read(400):
                bad.append(os.path.relpath(path, EX))
    check(not bad, "every non-JSON example has an SPDX header", bad)


def main():
    docs = yaml_examples()
    kubernetes(docs)
    admission(docs)
    daemonset(docs)
    nfd_master()
    runtime_configs()
    hooks_d()
    runc_snippet()
    podman_script()
    spdx()


if __name__ == "__main__":
    main()
