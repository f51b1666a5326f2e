#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""A CRI client that runs a pod the way kubelet does (tests/cri/).

    cri.py [-a SOCKET] [--stubs DIR] COMMAND ...

    version                      the runtime's name and version
    image-id REF                 the image's id (kubelet's EnsureImageExists)
    run-pod POD.json             RunPodSandbox, then each init container to
                                 its exit, then CreateContainer and
                                 StartContainer for each container; prints
                                 {"sandbox": ID, "init": {NAME: ID},
                                  "containers": {NAME: ID}}
    logs CONTAINER-ID            the container's log (the CRI log file)
    state CONTAINER-ID           ContainerStatus: the state and exit code
                                 ("CONTAINER_EXITED 1")
    exec CONTAINER-ID CMD...     ExecSync: the command's stdout and stderr,
                                 and its exit code as ours
    inspect CONTAINER-ID         ContainerStatus verbose info (pid, runtimeSpec)
    inspect-pod SANDBOX-ID       PodSandboxStatus verbose info
    pod-ip SANDBOX-ID            the pod's IP (PodSandboxStatus network.ip)
    remove-pod SANDBOX-ID        StopContainer and RemoveContainer for each of
                                 the pod's containers, StopPodSandbox,
                                 RemovePodSandbox
    pods                         the ids of all pod sandboxes, one a line
    debug POD.json SANDBOX-ID    what kubelet does for each of
                                 spec.ephemeralContainers (kubectl debug
                                 --target): CreateContainer with the pid
                                 namespace of the container named by
                                 targetContainerName (NamespaceMode TARGET,
                                 target_id), StartContainer; prints
                                 {"ephemeral": {NAME: ID}}
    create-loop POD.json SANDBOX-ID N
                                 N times CreateContainer of the pod's first
                                 container in its running sandbox, each
                                 removed before the next (never started);
                                 prints {"create_us": [each call's time]}
    start-loop POD.json SANDBOX-ID N
                                 the same, each container also started
                                 (StartContainer), then stopped and
                                 removed (untimed) before the next; prints
                                 {"create_us": [...], "start_us": [...]}
    run-sandbox POD.json         RunPodSandbox only; prints its id
    create POD.json SANDBOX-ID NAME
                                 CreateContainer of the pod's container
                                 NAME in its running sandbox; prints its id
    start CONTAINER-ID           StartContainer

POD.json is a Kubernetes Pod (what `kubectl get pod -o json` shows) with
the fields used here: metadata.name, namespace, uid, labels, annotations;
spec.runtimeClassName (taken as the RuntimeClass's handler, as in
examples/kubernetes/overlays/runtimeclass/runtimeclass.yaml), spec.hostNetwork (false: the
runtime's CNI sets up the pod's network), spec.hostPID,
spec.shareProcessNamespace, spec.securityContext.runAsUser and runAsGroup
(the sandbox's and every container's), spec.terminationGracePeriodSeconds,
spec.volumes (hostPath, with type DirectoryOrCreate; configMap), and for
spec.initContainers (run one after the other, each to a 0 exit, before
the containers) and spec.containers: name, image, command, args, env
(value, valueFrom.configMapKeyRef), volumeMounts (mountPath, readOnly),
resources (requests and limits of cpu and memory: the pod's QoS class,
its cgroup and the containers' shares, memory limit and oom_score_adj),
securityContext (capabilities add and drop, privileged, runAsUser,
readOnlyRootFilesystem, allowPrivilegeEscalation). The ConfigMaps that
volumes and env name come from --configmaps FILE.json (a list of
ConfigMap objects), or from POD.json itself when it is a List (kind: List,
items: the Pod and its ConfigMaps, as an example file holds them);
volumeMounts may name a subPath of a configMap volume (one key as a file).
--cdi-device CONTAINER=DEVICE gives that container a CDI device in its
ContainerConfig's CDI_devices, as a device plugin's Allocate or a DRA
driver makes kubelet do. Options kubelet takes from its own flags:
--cgroup-driver (cgroupfs or systemd), --log-root (its --pod-logs-dir,
/var/log/pods), --pod-root (its root dir's pods/, for the files it mounts).

The stubs (api_pb2.py) are the ones tests/cri/gen-stubs.sh made with this
machine's grpc_tools: only the messages are used, the methods are called by
name, so that the client works with Debian 12's python3-grpcio and
protobuf and with unstable's, whatever grpc_tools wrote the _grpc module.
Exit: 0 done; 1 an RPC or the pod failed; 2 usage; exec: the command's code.
"""
import argparse
import json
import os
import sys
import time
import zlib

SERVICE = "/runtime.v1.RuntimeService/"
IMAGES = "/runtime.v1.ImageService/"

# The paths kubelet masks and makes read-only in every container that is
# not privileged (pkg/securitycontext/util.go, defaultMaskedPaths and
# defaultReadonlyPaths, ProcMount Default).
MASKED_PATHS = ["/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys",
                "/proc/latency_stats", "/proc/timer_list",
                "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
                "/sys/firmware", "/sys/devices/virtual/powercap"]
READONLY_PATHS = ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                  "/proc/sysrq-trigger"]
# cm.MinShares (pkg/kubelet/cm/helpers_linux.go): a BestEffort pod's CPU
# shares; the CFS period kubelet sends with them (quotaPeriod).
MIN_SHARES = 2
CFS_PERIOD = 100000
# BestEffort's oom_score_adj (pkg/kubelet/qos/policy.go).
BESTEFFORT_OOM_SCORE_ADJ = 1000
# Guaranteed's (qos/policy.go guaranteedOOMScoreAdj).
GUARANTEED_OOM_SCORE_ADJ = -997
SUFFIXES = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "k": 1000,
            "M": 1000 ** 2, "G": 1000 ** 3}


def quantity(q):
    """A resource quantity: bytes for memory, millicores for cpu ('5m')."""
    q = str(q)
    for suffix, mult in SUFFIXES.items():
        if q.endswith(suffix):
            return int(float(q[:-len(suffix)]) * mult)
    if q.endswith("m"):
        return int(q[:-1])
    return int(float(q) * 1000) if "." in q else int(q)


def millicpu(q):
    q = str(q)
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def qos_class(containers):
    """pkg/apis/core/v1/helper/qos GetPodQOS, for cpu and memory."""
    requests, limits, guaranteed = False, False, True
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        requests |= bool(req)
        limits |= bool(lim)
        for r in ("cpu", "memory"):
            if r not in lim or req.get(r, lim[r]) != lim[r]:
                guaranteed = False
    if not requests and not limits:
        return "besteffort"
    return "guaranteed" if guaranteed else "burstable"


def memory_capacity():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return 1 << 30


def load_stubs(stubs):
    sys.path.insert(0, stubs)
    try:
        import api_pb2
    except ImportError as e:
        sys.exit("cri.py: no CRI stubs in %s (tests/cri/gen-stubs.sh): %s"
                 % (stubs, e))
    return api_pb2


class Cri:
    """A connection to a CRI runtime's unix socket."""

    def __init__(self, address, stubs, timeout=60):
        import grpc
        self.grpc = grpc
        self.pb = load_stubs(stubs)
        self.timeout = timeout
        self.channel = grpc.insecure_channel("unix://" + address)

    def call(self, path, method, request, deadline=None):
        rpc = self.channel.unary_unary(
            path + method,
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=getattr(self.pb, method + "Response").FromString)
        return rpc(request, timeout=deadline or self.timeout)

    # "deadline", not "timeout": StopContainer and ExecSync have a field
    # of that name.
    def runtime(self, method, deadline=None, **fields):
        request = getattr(self.pb, method + "Request")(**fields)
        return self.call(SERVICE, method, request, deadline)

    def images(self, method, **fields):
        request = getattr(self.pb, method + "Request")(**fields)
        return self.call(IMAGES, method, request)

    def wait_ready(self, seconds):
        """Version until it answers: the runtime is up."""
        end = time.monotonic() + seconds
        while True:
            try:
                return self.runtime("Version", deadline=2)
            except self.grpc.RpcError:
                if time.monotonic() > end:
                    raise
                time.sleep(0.2)

    def image_id(self, ref):
        """kuberuntime_image.go EnsureImageExists -> GetImageRef: the id of
        the image the runtime has for the reference (kubelet never pulls
        here: imagePullPolicy IfNotPresent and the image is present)."""
        resp = self.images("ImageStatus", image=self.pb.ImageSpec(image=ref))
        if not resp.image.id:
            raise LookupError("image %s is not in the runtime's store" % ref)
        return resp.image.id


def enum(pb, enum_name, value):
    return getattr(pb, enum_name).Value(value)


def cgroup_parent(driver, uid, qos="besteffort"):
    """The pod's cgroup, as kubelet's pod container manager names it
    (pkg/kubelet/cm/pod_container_manager_linux.go GetPodContainerName,
    cgroup_manager_linux.go ToSystemd/ToCgroupfs): Guaranteed pods sit
    right under kubepods."""
    if driver == "systemd":
        mid = "" if qos == "guaranteed" else qos + "-"
        return "kubepods-%spod%s.slice" % (mid, uid.replace("-", "_"))
    mid = "" if qos == "guaranteed" else qos + "/"
    return "/kubepods/%spod%s" % (mid, uid)


def host_dns():
    """A host-network pod with dnsPolicy ClusterFirst gets the node's
    resolv.conf (pkg/kubelet/network/dns/dns.go, podDNSHost)."""
    servers, searches, options = [], [], []
    try:
        with open("/etc/resolv.conf") as f:
            for line in f:
                words = line.split()
                if len(words) < 2 or words[0].startswith(("#", ";")):
                    continue
                if words[0] == "nameserver":
                    servers.append(words[1])
                elif words[0] == "search":
                    searches = words[1:]
                elif words[0] == "options":
                    options += words[1:]
    except OSError:
        pass
    return servers, searches, options


def hugepage_sizes():
    """The sizes kubelet sends a limit of 0 for in a pod without hugepages
    requests (kuberuntime_container_linux.go GetHugepageLimitsFromResources,
    from the machine's /sys/kernel/mm/hugepages). containerd drops them
    where the hugetlb controller is missing (disable_hugetlb_controller)."""
    sizes = []
    try:
        names = os.listdir("/sys/kernel/mm/hugepages")
    except OSError:
        return []
    for name in sorted(names):
        kb = int(name[len("hugepages-"):-len("kB")])
        if kb % 1048576 == 0:
            sizes.append("%dGB" % (kb // 1048576))
        elif kb % 1024 == 0:
            sizes.append("%dMB" % (kb // 1024))
        else:
            sizes.append("%dKB" % kb)
    return sizes


class Pod:
    """A Pod manifest and the CRI messages kubelet makes of it."""

    def __init__(self, cri, manifest, opts, configmaps=None):
        self.cri, self.pb, self.opts = cri, cri.pb, opts
        self.meta = manifest["metadata"]
        self.spec = manifest["spec"]
        self.uid = self.meta["uid"]
        self.namespace = self.meta.get("namespace", "default")
        self.host_network = bool(self.spec.get("hostNetwork"))
        self.pod_security = self.spec.get("securityContext") or {}
        self.grace = int(self.spec.get("terminationGracePeriodSeconds", 30))
        # pkg/kubelet/kuberuntime/kuberuntime_manager.go BuildPodLogsDirectory.
        self.log_dir = os.path.join(opts.log_root, "%s_%s_%s" % (
            self.namespace, self.meta["name"], self.uid))
        self.pod_dir = os.path.join(opts.pod_root, self.uid)
        self.configmaps = configmaps or {}
        self.volumes = {v["name"]: v for v in self.spec.get("volumes") or []}
        self.init = self.spec.get("initContainers") or []
        self.qos = qos_class(self.init + self.spec["containers"])

    def namespaces(self):
        """runtimeutil.NamespacesForPod (kuberuntime/util/util.go): the
        node's network or the pod's own, a pod-wide IPC namespace, a PID
        namespace per container, or the node's with hostPID, or the pod's
        with shareProcessNamespace."""
        pb = self.pb
        network = "NODE" if self.host_network else "POD"
        pid = ("NODE" if self.spec.get("hostPID") else
               "POD" if self.spec.get("shareProcessNamespace") else "CONTAINER")
        return pb.NamespaceOption(network=enum(pb, "NamespaceMode", network),
                                  pid=enum(pb, "NamespaceMode", pid),
                                  ipc=enum(pb, "NamespaceMode", "POD"))

    def privileged(self):
        """A sandbox is privileged when any container is
        (kuberuntime_sandbox_linux.go, podutil.HasPrivilegedContainer)."""
        return any(((c.get("securityContext") or {}).get("privileged"))
                   for c in self.init + self.spec["containers"])

    def run_as(self, security):
        """securitycontext/util.go: the pod's runAsUser and runAsGroup,
        on the sandbox's and each container's security context (a
        container's own runAsUser wins: security() sets it after)."""
        pb = self.pb
        if "runAsUser" in self.pod_security:
            security.run_as_user.CopyFrom(
                pb.Int64Value(value=int(self.pod_security["runAsUser"])))
        if "runAsGroup" in self.pod_security:
            security.run_as_group.CopyFrom(
                pb.Int64Value(value=int(self.pod_security["runAsGroup"])))
        return security

    def sandbox_resources(self):
        return self.pb.LinuxContainerResources(cpu_period=CFS_PERIOD,
                                               cpu_shares=MIN_SHARES)

    def container_resources(self, container):
        """kuberuntime_container_linux.go generateLinuxContainerResources:
        shares from the cpu request, the memory limit, the QoS class's
        oom_score_adj (qos/policy.go GetContainerOOMScoreAdjust)."""
        res = container.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        cpu = millicpu(req.get("cpu", lim.get("cpu", 0)))
        out = self.pb.LinuxContainerResources(
            cpu_period=CFS_PERIOD,
            cpu_shares=max(MIN_SHARES, cpu * 1024 // 1000))
        if "memory" in lim:
            out.memory_limit_in_bytes = quantity(lim["memory"])
        if "cpu" in lim:
            out.cpu_quota = millicpu(lim["cpu"]) * CFS_PERIOD // 1000
        if self.qos == "besteffort":
            out.oom_score_adj = BESTEFFORT_OOM_SCORE_ADJ
        elif self.qos == "guaranteed":
            out.oom_score_adj = GUARANTEED_OOM_SCORE_ADJ
        else:
            adj = 1000 - (1000 * quantity(req.get("memory", 0))) // memory_capacity()
            out.oom_score_adj = min(max(adj, 3), 999)
        return out

    def sandbox_config(self):
        """kuberuntime_sandbox.go generatePodSandboxConfig and
        generatePodSandboxLinuxConfig; labels.go newPodLabels and
        newPodAnnotations."""
        pb = self.pb
        labels = dict(self.meta.get("labels") or {})
        labels["io.kubernetes.pod.name"] = self.meta["name"]
        labels["io.kubernetes.pod.namespace"] = self.namespace
        labels["io.kubernetes.pod.uid"] = self.uid
        servers, searches, options = host_dns()
        profile = pb.SecurityProfile.ProfileType
        security = self.run_as(pb.LinuxSandboxSecurityContext(
            namespace_options=self.namespaces(), privileged=self.privileged(),
            # "Forcing sandbox to run as runtime/default"
            # (kubernetes/kubernetes#84623).
            seccomp=pb.SecurityProfile(
                profile_type=profile.Value("RuntimeDefault"))))
        linux = pb.LinuxPodSandboxConfig(
            cgroup_parent=cgroup_parent(self.opts.cgroup_driver, self.uid,
                                        self.qos),
            security_context=security, sysctls={},
            # applySandboxResources (kuberuntime_sandbox_linux.go).
            resources=self.sandbox_resources())
        return pb.PodSandboxConfig(
            metadata=pb.PodSandboxMetadata(name=self.meta["name"],
                                           namespace=self.namespace,
                                           uid=self.uid, attempt=0),
            # A hostNetwork pod keeps the node's hostname.
            hostname="" if self.host_network else self.meta["name"],
            log_directory=self.log_dir,
            dns_config=pb.DNSConfig(servers=servers, searches=searches,
                                    options=options),
            labels=labels,
            annotations=self.meta.get("annotations") or {},
            linux=linux)

    def configmap_dir(self, volume):
        """A configMap volume as kubelet lays it out: the keys as files
        under the pod's volumes directory (pkg/volume/configmap)."""
        name = volume["configMap"]["name"]
        data = (self.configmaps.get(name) or {}).get("data")
        if data is None:
            raise LookupError("ConfigMap %s is not in --configmaps" % name)
        path = os.path.join(self.pod_dir, "volumes",
                            "kubernetes.io~configmap", volume["name"])
        os.makedirs(path, mode=0o755, exist_ok=True)
        for key, text in data.items():
            with open(os.path.join(path, key), "w") as f:
                f.write(text)
        return path

    def volume_mounts(self, container):
        """kubelet_pods.go makeMounts: each volumeMount's host path."""
        pb, mounts = self.pb, []
        for m in container.get("volumeMounts") or []:
            vol = self.volumes[m["name"]]
            if "hostPath" in vol:
                host = vol["hostPath"]["path"]
                if vol["hostPath"].get("type") == "DirectoryOrCreate":
                    os.makedirs(host, mode=0o755, exist_ok=True)
                ro = bool(m.get("readOnly"))
            elif "configMap" in vol:
                host, ro = self.configmap_dir(vol), True
                if m.get("subPath"):
                    host = os.path.join(host, m["subPath"])
            else:
                raise ValueError("volume %s: only hostPath and configMap"
                                 % m["name"])
            mounts.append(pb.Mount(container_path=m["mountPath"],
                                   host_path=host, readonly=ro,
                                   selinux_relabel=False))
        return mounts

    def container_mounts(self, name):
        """The two files kubelet mounts into every container of a pod
        (hostNetwork or not): its managed /etc/hosts and the termination message
        file (kubelet_pods.go makeMounts, kuberuntime_container.go
        makeMounts)."""
        pb = self.pb
        hosts = os.path.join(self.pod_dir, "etc-hosts")
        if not os.path.exists(hosts):
            with open(hosts, "w") as f:
                f.write("127.0.0.1\tlocalhost\n::1\tlocalhost\n")
        term_dir = os.path.join(self.pod_dir, "containers", name)
        os.makedirs(term_dir, exist_ok=True)
        term = os.path.join(term_dir, "%08x" % zlib.crc32(os.urandom(8)))
        open(term, "w").close()
        return [pb.Mount(container_path="/etc/hosts", host_path=hosts,
                         selinux_relabel=True),
                pb.Mount(container_path="/dev/termination-log",
                         host_path=term, selinux_relabel=True)]

    def envs(self, container):
        """kubelet_pods.go makeEnvironmentVariables: value, or a key of a
        ConfigMap (an optional one that is missing sets nothing)."""
        out = []
        for e in container.get("env") or []:
            ref = (e.get("valueFrom") or {}).get("configMapKeyRef")
            if ref is None:
                out.append(self.key_value(e["name"], e.get("value", "")))
                continue
            data = (self.configmaps.get(ref["name"]) or {}).get("data") or {}
            if ref["key"] in data:
                out.append(self.key_value(e["name"], data[ref["key"]]))
            elif not ref.get("optional"):
                raise LookupError("env %s: no key %s in ConfigMap %s"
                                  % (e["name"], ref["key"], ref["name"]))
        return out

    def key_value(self, key, value):
        """A KeyValue: some api.proto versions type its value as bytes."""
        field = self.pb.KeyValue.DESCRIPTOR.fields_by_name["value"]
        if field.type == field.TYPE_BYTES:
            value = value.encode()
        return self.pb.KeyValue(key=key, value=value)

    def security(self, container):
        """security_context.go determineEffectiveSecurityContext and
        convertToRuntimeSecurityContext."""
        pb = self.pb
        sc = container.get("securityContext") or {}
        caps = sc.get("capabilities") or {}
        profile = pb.SecurityProfile.ProfileType
        privileged = bool(sc.get("privileged"))
        security = self.run_as(pb.LinuxContainerSecurityContext(
            namespace_options=self.namespaces(), privileged=privileged,
            # A privileged container gets no masked or read-only paths.
            masked_paths=[] if privileged else MASKED_PATHS,
            readonly_paths=[] if privileged else READONLY_PATHS,
            readonly_rootfs=bool(sc.get("readOnlyRootFilesystem")),
            no_new_privs=sc.get("allowPrivilegeEscalation") is False,
            # The kubelet's seccompDefault is false: Unconfined.
            seccomp=pb.SecurityProfile(
                profile_type=profile.Value("Unconfined"))))
        if "runAsUser" in sc:
            security.run_as_user.value = int(sc["runAsUser"])
        # As the pod spec has them (convertToRuntimeCapabilities): the
        # runtime adds the CAP_ prefix itself (containerd's CRI
        # WithCapabilities), so "CAP_NET_RAW" here would name nothing.
        security.capabilities.add_capabilities.extend(caps.get("add") or [])
        security.capabilities.drop_capabilities.extend(caps.get("drop") or [])
        return security

    def container_config(self, container, image_id):
        """kuberuntime_container.go generateContainerConfig,
        kuberuntime_container_linux.go generateLinuxContainerConfig,
        labels.go newContainerLabels and newContainerAnnotations."""
        pb = self.pb
        name = container["name"]
        labels = {"io.kubernetes.container.name": name,
                  "io.kubernetes.pod.name": self.meta["name"],
                  "io.kubernetes.pod.namespace": self.namespace,
                  "io.kubernetes.pod.uid": self.uid}
        # kubecontainer.HashContainer: a hash of the container's spec.
        spec_hash = zlib.crc32(json.dumps(container, sort_keys=True).encode())
        annotations = {
            "io.kubernetes.container.hash": "%x" % spec_hash,
            "io.kubernetes.container.restartCount": "0",
            "io.kubernetes.container.terminationMessagePath": "/dev/termination-log",
            "io.kubernetes.container.terminationMessagePolicy": "File",
            "io.kubernetes.pod.terminationGracePeriod": str(self.grace),
        }
        resources = self.container_resources(container)
        for size in hugepage_sizes():
            resources.hugepage_limits.add(page_size=size, limit=0)
        if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            # cgroup v2: the whole container is killed on OOM unless the
            # kubelet's singleProcessOOMKill says otherwise.
            resources.unified["memory.oom.group"] = "1"
        return pb.ContainerConfig(
            metadata=pb.ContainerMetadata(name=name, attempt=0),
            image=pb.ImageSpec(image=image_id,
                               user_specified_image=container["image"]),
            command=container.get("command") or [],
            args=container.get("args") or [],
            working_dir=container.get("workingDir", ""),
            envs=self.envs(container),
            mounts=self.volume_mounts(container) +
            self.container_mounts(name),
            labels=labels, annotations=annotations,
            log_path=os.path.join(name, "0.log"),
            linux=pb.LinuxContainerConfig(
                resources=resources, security_context=self.security(container)),
            CDI_devices=[pb.CDIDevice(name=d) for d in self.cdi_devices(name)])

    def cdi_devices(self, name):
        """The CDI devices a device plugin's Allocate (CDIDevices) or a DRA
        driver's claim hands kubelet for container NAME: --cdi-device."""
        return [d.split("=", 1)[1] for d in self.opts.cdi_device
                if d.split("=", 1)[0] == name]

    def start(self, sandbox, config, container):
        image_id = self.cri.image_id(container["image"])
        os.makedirs(os.path.join(self.log_dir, container["name"]),
                    mode=0o755, exist_ok=True)
        cid = self.cri.runtime(
            "CreateContainer", pod_sandbox_id=sandbox,
            config=self.container_config(container, image_id),
            sandbox_config=config).container_id
        self.cri.runtime("StartContainer", container_id=cid)
        return cid

    def wait_exit(self, cid, name, seconds):
        """kubelet waits for each init container to exit 0 before the
        next one (kuberuntime_container.go computeInitContainerActions);
        a CRI that restarts meanwhile (runtime configure --restart) is
        asked again until it answers."""
        exited = enum(self.pb, "ContainerState", "CONTAINER_EXITED")
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                st = self.cri.runtime("ContainerStatus", container_id=cid,
                                      deadline=5).status
            except self.cri.grpc.RpcError:
                time.sleep(0.5)
                continue
            if st.state == exited:
                if st.exit_code:
                    raise ValueError("init container %s exited %d: %s" % (
                        name, st.exit_code, tail(st.log_path)))
                return
            time.sleep(0.2)
        raise ValueError("init container %s did not exit in %d s"
                         % (name, seconds))

    def run(self):
        """kuberuntime_manager.go SyncPod: the sandbox first, then each init
        container to its exit, then each container
        (kuberuntime_container.go startContainer)."""
        handler = self.spec.get("runtimeClassName") or ""
        os.makedirs(self.log_dir, mode=0o755, exist_ok=True)
        os.makedirs(self.pod_dir, mode=0o750, exist_ok=True)
        config = self.sandbox_config()
        sandbox = self.cri.runtime("RunPodSandbox", config=config,
                                   runtime_handler=handler).pod_sandbox_id
        init, ids = {}, {}
        for container in self.init:
            init[container["name"]] = cid = self.start(sandbox, config,
                                                       container)
            self.wait_exit(cid, container["name"], self.opts.timeout)
        for container in self.spec["containers"]:
            ids[container["name"]] = self.start(sandbox, config, container)
        return {"sandbox": sandbox, "init": init, "containers": ids}


    def debug(self, sandbox):
        """kuberuntime_container.go startContainer for an ephemeral
        container: its config as a container's, the pid namespace the
        target's (generateContainerConfig sets NamespaceOptions.Pid to
        TARGET and TargetId when targetContainerName is set)."""
        pb = self.pb
        config = self.sandbox_config()
        by_name = {}
        for c in self.cri.runtime("ListContainers", filter=pb.ContainerFilter(
                pod_sandbox_id=sandbox)).containers:
            by_name[c.labels.get("io.kubernetes.container.name")] = c.id
        ids = {}
        for container in self.spec.get("ephemeralContainers") or []:
            image_id = self.cri.image_id(container["image"])
            cfg = self.container_config(container, image_id)
            target = container.get("targetContainerName")
            if target:
                if target not in by_name:
                    raise LookupError("no container %s in the pod" % target)
                ns = cfg.linux.security_context.namespace_options
                ns.pid = enum(pb, "NamespaceMode", "TARGET")
                ns.target_id = by_name[target]
            os.makedirs(os.path.join(self.log_dir, container["name"]),
                        mode=0o755, exist_ok=True)
            cid = self.cri.runtime("CreateContainer", pod_sandbox_id=sandbox,
                                   config=cfg,
                                   sandbox_config=config).container_id
            self.cri.runtime("StartContainer", container_id=cid)
            ids[container["name"]] = cid
        return {"ephemeral": ids}

    def run_sandbox(self):
        """RunPodSandbox as run() does it, and no container."""
        handler = self.spec.get("runtimeClassName") or ""
        os.makedirs(self.log_dir, mode=0o755, exist_ok=True)
        os.makedirs(self.pod_dir, mode=0o750, exist_ok=True)
        return self.cri.runtime("RunPodSandbox", config=self.sandbox_config(),
                                runtime_handler=handler).pod_sandbox_id

    def create(self, sandbox, name):
        """CreateContainer of the container NAME, as start() makes it, in
        the pod's running sandbox; not started."""
        for container in self.spec["containers"]:
            if container["name"] == name:
                break
        else:
            raise LookupError("no container %s in the pod" % name)
        os.makedirs(os.path.join(self.log_dir, name), mode=0o755,
                    exist_ok=True)
        return self.cri.runtime(
            "CreateContainer", pod_sandbox_id=sandbox,
            config=self.container_config(
                container, self.cri.image_id(container["image"])),
            sandbox_config=self.sandbox_config()).container_id

    def start_loop(self, count, sandbox):
        """count times what kubelet does to run the pod's first container:
        CreateContainer and StartContainer (where the OCI hooks and the NRI
        plugin's StartContainer run), each timed; then StopContainer and
        RemoveContainer, untimed, before the next. Microseconds."""
        config = self.sandbox_config()
        container = self.spec["containers"][0]
        image_id = self.cri.image_id(container["image"])
        os.makedirs(os.path.join(self.log_dir, container["name"]),
                    mode=0o755, exist_ok=True)
        create, start = [], []
        for _ in range(count):
            cfg = self.container_config(container, image_id)
            cfg.metadata.attempt = 1
            t0 = time.monotonic()
            cid = self.cri.runtime("CreateContainer", pod_sandbox_id=sandbox,
                                   config=cfg,
                                   sandbox_config=config).container_id
            t1 = time.monotonic()
            self.cri.runtime("StartContainer", container_id=cid)
            t2 = time.monotonic()
            create.append(round((t1 - t0) * 1e6))
            start.append(round((t2 - t1) * 1e6))
            self.cri.runtime("StopContainer", container_id=cid, timeout=0)
            self.cri.runtime("RemoveContainer", container_id=cid)
        return {"create_us": create, "start_us": start}

    def create_loop(self, count, sandbox):
        """count times what kubelet does to create the pod's first
        container (CreateContainer, the call NRI plugins see), each removed
        again before the next (never started: no OCI hook runs); the
        sandbox must be this manifest's, already running. The time of each
        CreateContainer call, in microseconds."""
        config = self.sandbox_config()
        container = self.spec["containers"][0]
        image_id = self.cri.image_id(container["image"])
        times = []
        for _ in range(count):
            cfg = self.container_config(container, image_id)
            # attempt 0 is the running container's: its name is reserved
            cfg.metadata.attempt = 1
            t0 = time.monotonic()
            cid = self.cri.runtime("CreateContainer", pod_sandbox_id=sandbox,
                                   config=cfg,
                                   sandbox_config=config).container_id
            times.append(round((time.monotonic() - t0) * 1e6))
            self.cri.runtime("RemoveContainer", container_id=cid)
        return times


def tail(path, lines=5):
    """The last lines of a CRI log file, for an error message."""
    try:
        with open(path) as f:
            return " | ".join(f.read().splitlines()[-lines:])
    except OSError:
        return "(no log)"


def containers_of(cri, sandbox):
    """The pod's containers, each with the grace period kubelet gave it
    (the io.kubernetes.pod.terminationGracePeriod annotation)."""
    found = cri.runtime("ListContainers", filter=cri.pb.ContainerFilter(
        pod_sandbox_id=sandbox)).containers
    return [(c.id, int(c.annotations.get(
        "io.kubernetes.pod.terminationGracePeriod", "30"))) for c in found]


def remove_pod(cri, sandbox):
    """kuberuntime_manager.go killPodWithSyncResult: stop every container
    with the grace period, stop the sandbox; then the garbage collector
    (kuberuntime_gc.go) removes the containers and the sandbox."""
    containers = containers_of(cri, sandbox)
    for cid, grace in containers:
        cri.runtime("StopContainer", container_id=cid, timeout=grace,
                    deadline=grace + 30)
    cri.runtime("StopPodSandbox", pod_sandbox_id=sandbox)
    for cid, _ in containers:
        cri.runtime("RemoveContainer", container_id=cid)
    cri.runtime("RemovePodSandbox", pod_sandbox_id=sandbox)


def verbose_info(resp):
    """containerd's verbose status: {"info": "<json>"}."""
    return {k: json.loads(v) if v[:1] in "{[" else v
            for k, v in resp.info.items()}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-a", "--address", default="/run/containerd/containerd.sock")
    p.add_argument("--stubs", default=os.environ.get("CRI_STUBS", "build/cri"))
    p.add_argument("--timeout", type=int, default=60)
    p.add_argument("--cgroup-driver", choices=["cgroupfs", "systemd"],
                   default="cgroupfs")
    p.add_argument("--log-root", default="/var/log/pods")
    p.add_argument("--pod-root", default="/var/lib/kubelet/pods")
    p.add_argument("--configmaps", help="a JSON list of ConfigMaps that "
                   "the pods' volumes and env name")
    p.add_argument("--cdi-device", action="append", default=[],
                   metavar="CONTAINER=VENDOR/CLASS=NAME",
                   help="a CDI device for that container (CDIDevices, as a "
                   "device plugin or a DRA driver gives it); repeatable")
    p.add_argument("--wait", type=float, default=0,
                   help="wait up to this many seconds for the runtime")
    p.add_argument("command")
    p.add_argument("args", nargs=argparse.REMAINDER)
    opts = p.parse_args(argv[1:])
    cri = Cri(opts.address, opts.stubs, opts.timeout)
    import grpc
    try:
        if opts.wait:
            cri.wait_ready(opts.wait)
        return run_command(cri, opts)
    except grpc.RpcError as e:
        print("cri.py: %s: %s: %s" % (opts.command, e.code().name,
                                      e.details()), file=sys.stderr)
    except (OSError, ValueError, LookupError, KeyError) as e:
        print("cri.py: %s: %s" % (opts.command, e), file=sys.stderr)
    return 1


def run_command(cri, opts):
    cmd, args = opts.command, opts.args
    if cmd == "version" and not args:
        v = cri.runtime("Version")
        print(v.runtime_name, v.runtime_version, v.runtime_api_version)
    elif cmd == "image-id" and len(args) == 1:
        print(cri.image_id(args[0]))
    elif cmd == "run-pod" and len(args) == 1:
        with open(args[0]) as f:
            manifest = json.load(f)
        configmaps = {}
        if manifest.get("kind") == "List":
            items = manifest.get("items") or []
            configmaps = {c["metadata"]["name"]: c for c in items
                          if c.get("kind") == "ConfigMap"}
            pods = [i for i in items if i.get("kind") == "Pod"]
            if len(pods) != 1:
                raise ValueError("%d Pods in the List, not one" % len(pods))
            manifest = pods[0]
        if opts.configmaps:
            with open(opts.configmaps) as f:
                configmaps.update({c["metadata"]["name"]: c for c in json.load(f)})
        print(json.dumps(Pod(cri, manifest, opts, configmaps).run()))
    elif cmd == "state" and len(args) == 1:
        st = cri.runtime("ContainerStatus", container_id=args[0]).status
        print(cri.pb.ContainerState.Name(st.state), st.exit_code)
    elif cmd == "logs" and len(args) == 1:
        r = cri.runtime("ContainerStatus", container_id=args[0])
        with open(r.status.log_path) as f:
            sys.stdout.write(f.read())
    elif cmd == "exec" and len(args) >= 2:
        # The prober's ExecSync (pkg/kubelet/prober): a timeout per call.
        r = cri.runtime("ExecSync", container_id=args[0], cmd=args[1:],
                        timeout=opts.timeout, deadline=opts.timeout + 10)
        sys.stdout.write(r.stdout.decode(errors="replace"))
        sys.stderr.write(r.stderr.decode(errors="replace"))
        return r.exit_code
    elif cmd == "inspect" and len(args) == 1:
        r = cri.runtime("ContainerStatus", container_id=args[0], verbose=True)
        print(json.dumps(verbose_info(r)))
    elif cmd == "inspect-pod" and len(args) == 1:
        r = cri.runtime("PodSandboxStatus", pod_sandbox_id=args[0],
                        verbose=True)
        print(json.dumps(verbose_info(r)))
    elif cmd == "pod-ip" and len(args) == 1:
        r = cri.runtime("PodSandboxStatus", pod_sandbox_id=args[0])
        print(r.status.network.ip)
    elif cmd == "remove-pod" and len(args) == 1:
        remove_pod(cri, args[0])
    elif cmd == "debug" and len(args) == 2:
        with open(args[0]) as f:
            manifest = json.load(f)
        print(json.dumps(Pod(cri, manifest, opts).debug(args[1])))
    elif cmd == "create-loop" and len(args) == 3:
        with open(args[0]) as f:
            manifest = json.load(f)
        times = Pod(cri, manifest, opts).create_loop(int(args[2]), args[1])
        print(json.dumps({"create_us": times}))
    elif cmd == "start-loop" and len(args) == 3:
        with open(args[0]) as f:
            manifest = json.load(f)
        print(json.dumps(Pod(cri, manifest, opts).start_loop(int(args[2]),
                                                             args[1])))
    elif cmd == "run-sandbox" and len(args) == 1:
        with open(args[0]) as f:
            print(Pod(cri, json.load(f), opts).run_sandbox())
    elif cmd == "create" and len(args) == 3:
        with open(args[0]) as f:
            print(Pod(cri, json.load(f), opts).create(args[1], args[2]))
    elif cmd == "start" and len(args) == 1:
        cri.runtime("StartContainer", container_id=args[0])
    elif cmd == "pods" and not args:
        for s in cri.runtime("ListPodSandbox").items:
            print(s.id)
    else:
        print("cri.py: bad command: %s" % " ".join([cmd] + args),
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
