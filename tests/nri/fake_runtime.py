#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The runtime's side of an NRI connection, for tests of `oci-sockopt-hook nri`.

    fake_runtime.py --stubs DIR serve SOCKET KIND...
    fake_runtime.py --stubs DIR exec KIND -- PLUGIN [ARGS...]
    fake_runtime.py --stubs DIR bench N -- PLUGIN [ARGS...]

serve listens on SOCKET (as containerd's NRI listener does) and handles one
plugin connection per KIND, in order; exec runs the plugin as containerd
runs a pre-registered one (/opt/nri/plugins: a socketpair, the plugin's end
as fd 3, NRI_PLUGIN_SOCKET=3, NRI_PLUGIN_NAME and NRI_PLUGIN_IDX, nothing
else in its environment), handles one KIND, closes the connection and
waits for the plugin to exit. Each connection prints one JSON line.

bench: the plugin run as exec does, registered and synchronized, then N
CreateContainer requests of the size containerd sends (a pod of 20
annotations and 8 labels, a container with containerd's annotations, 12
environment variables, 6 mounts): prints {"us": [each round trip]}, the
time from the request's first byte sent to the reply's last byte read.

KIND:
  ok                 RegisterPlugin answered, Configure, Synchronize (split
                     in two parts), then CreateContainer of container "web"
                     in a pod with $FAKE_POD_ANNOTATIONS (JSON): prints the
                     registration, the subscription and the adjustment
  hold               ok, then the connection kept open while the file
                     $FAKE_HOLD exists (at most 60 s)
  malformed          registered, then a ttrpc request that is not protobuf
  oversized-frame    registered, then a mux frame header of 5 MiB
  oversized-message  registered, then a ttrpc header announcing 8 MiB
  refused            RegisterPlugin answered with an error status
  start              as containerd 2.1 starts containers: registered as
                     runtime $FAKE_RUNTIME (default containerd), then for
                     each {"id", "pid", "name", "before"} of $FAKE_START
                     (JSON list) the shell command "before" if any, then
                     CreateContainer, then the StartContainer event (a
                     StateChange) with the task's pid: prints the
                     subscription, and per container the hooks added and
                     the reply (ok, or the status code and message)
and for each of the last four, whether and how soon the plugin closed the
connection.

The wire (containerd/nri pkg/net/multiplex, containerd/ttrpc channel.go):
frames of a 4-byte connection id and a 4-byte length, big endian;
connection 1 carries the runtime's requests to the plugin, 2 the plugin's
to the runtime; on each, ttrpc messages of a 10-byte header (length,
stream id, type 1 request / 2 response, flags) and a protobuf payload. The
messages are NRI's and ttrpc's own, from stubs that grpc_tools.protoc made
of the .proto files the plugin is built from (DIR: api_pb2.py,
request_pb2.py). Exit 0 when every connection went as its KIND expects.
"""
import argparse
import json
import os
import socket
import struct
import subprocess
import sys
import time

PLUGIN, RUNTIME = 1, 2
REQUEST, RESPONSE = 1, 2
EVENTS = {1: "RunPodSandbox", 3: "RemovePodSandbox", 4: "CreateContainer",
          6: "StartContainer"}
START_CONTAINER = 6


class Wire:
    """One connection: frames out, ttrpc messages in."""

    def __init__(self, sock):
        self.sock = sock
        self.raw = b""
        self.streams = {PLUGIN: b"", RUNTIME: b""}

    def send(self, conn, stream, mtype, payload):
        msg = struct.pack(">IIBB", len(payload), stream, mtype, 0) + payload
        self.sock.sendall(struct.pack(">II", conn, len(msg)) + msg)

    def send_raw(self, data):
        self.sock.sendall(data)

    def _frames(self):
        while len(self.raw) >= 8:
            conn, n = struct.unpack(">II", self.raw[:8])
            if len(self.raw) < 8 + n:
                return
            if conn in self.streams:
                self.streams[conn] += self.raw[8:8 + n]
            self.raw = self.raw[8 + n:]

    def _message(self):
        for conn, buf in self.streams.items():
            if len(buf) >= 10:
                n, stream, mtype, _ = struct.unpack(">IIBB", buf[:10])
                if len(buf) >= 10 + n:
                    self.streams[conn] = buf[10 + n:]
                    return conn, stream, mtype, buf[10:10 + n]
        return None

    def recv(self, timeout=5.0):
        """The next message, or None when the plugin closed."""
        end = time.monotonic() + timeout
        while True:
            msg = self._message()
            if msg:
                return msg
            self.sock.settimeout(max(0.01, end - time.monotonic()))
            data = self.sock.recv(65536)
            if not data:
                return None
            self.raw += data
            self._frames()

    def closed_within(self, timeout):
        """Seconds until the plugin closed the connection, or None."""
        t0 = time.monotonic()
        try:
            while self.recv(timeout - (time.monotonic() - t0)):
                pass
        except (socket.timeout, OSError):
            return None
        return round(time.monotonic() - t0, 3)


class Runtime:
    def __init__(self, stubs):
        sys.path.insert(0, stubs)
        import api_pb2
        import request_pb2
        self.api, self.rq = api_pb2, request_pb2
        self.stream = 1

    def register(self, wire, refuse=False):
        conn, stream, mtype, payload = wire.recv()
        assert conn == RUNTIME and mtype == REQUEST, (conn, mtype)
        req = self.rq.Request.FromString(payload)
        assert req.service == "nri.pkg.api.v1alpha1.Runtime", req.service
        assert req.method == "RegisterPlugin", req.method
        reg = self.api.RegisterPluginRequest.FromString(req.payload)
        rsp = self.rq.Response()
        if refuse:
            rsp.status.code = 3  # InvalidArgument, as for a bad index
        else:
            rsp.payload = self.api.Empty().SerializeToString()
        wire.send(RUNTIME, stream, RESPONSE, rsp.SerializeToString())
        return {"name": reg.plugin_name, "idx": reg.plugin_idx}

    def call_status(self, wire, method, msg):
        """The reply's status code and message (field 2, which the
        status.proto the stubs come from leaves out), or (0, "")."""
        rsp = self.request(wire, method, msg)
        if not rsp.status.code:
            return 0, ""
        raw = rsp.status.SerializeToString()
        message = ""
        i = 0
        while i < len(raw):
            tag = raw[i]
            i += 1
            if tag & 7 == 0:
                while raw[i] & 0x80:
                    i += 1
                i += 1
                continue
            n, shift = 0, 0
            while True:
                b = raw[i]
                i += 1
                n |= (b & 0x7f) << shift
                shift += 7
                if not b & 0x80:
                    break
            if tag == 0x12:
                message = raw[i:i + n].decode()
            i += n
        return rsp.status.code, message

    def start(self, wire):
        api = self.api
        out = {"kind": "start", "register": self.register(wire)}
        cfg = self.call(wire, "Configure", api.ConfigureRequest(
            runtime_name=os.environ.get("FAKE_RUNTIME", "containerd"),
            runtime_version="2.1.9", registration_timeout=5000,
            request_timeout=2000), api.ConfigureResponse)
        out["events"] = sorted(name for bit, name in EVENTS.items()
                               if cfg.events & (1 << (bit - 1)))
        self.call(wire, "Synchronize", api.SynchronizeRequest(more=False),
                  api.SynchronizeResponse)
        out["containers"] = []
        for c in json.loads(os.environ.get("FAKE_START", "[]")):
            if c.get("before"):
                subprocess.run(c["before"], shell=True, check=True)
            name = c.get("name", "web")
            ctr = api.Container(id=c["id"], pod_sandbox_id="f" * 64,
                                name=name, annotations={
                                    "io.kubernetes.cri.container-name":
                                    name})
            rsp = self.call(wire, "CreateContainer",
                            api.CreateContainerRequest(pod=self.pod(),
                                                       container=ctr),
                            api.CreateContainerResponse)
            hooks = {stage: [h.args[-1] for h in getattr(rsp.adjust.hooks,
                                                          stage)]
                     for stage in ("create_runtime", "poststop")}
            ctr.pid = int(c["pid"])
            ctr.state = api.CONTAINER_CREATED
            code, message = self.call_status(
                wire, "StateChange", api.StateChangeEvent(
                    event=START_CONTAINER, pod=self.pod(), container=ctr))
            out["containers"].append({"id": c["id"], "hooks": hooks,
                                      "code": code, "message": message})
        return out

    def request(self, wire, method, msg):
        """Sends method(msg) to the plugin; its Response, on our stream."""
        req = self.rq.Request(service="nri.pkg.api.v1alpha1.Plugin",
                              method=method,
                              payload=msg.SerializeToString(),
                              timeout_nano=2 * 10**9)
        stream = self.stream
        self.stream += 2
        wire.send(PLUGIN, stream, REQUEST, req.SerializeToString())
        reply = wire.recv()
        assert reply, "the plugin closed the connection at %s" % method
        conn, rstream, mtype, payload = reply
        assert (conn, rstream, mtype) == (PLUGIN, stream, RESPONSE), reply
        return self.rq.Response.FromString(payload)

    def call(self, wire, method, msg, reply_type):
        rsp = self.request(wire, method, msg)
        assert not rsp.status.code, "%s: status %d" % (method,
                                                       rsp.status.code)
        return reply_type.FromString(rsp.payload)

    def pod(self):
        api = self.api
        ann = json.loads(os.environ.get("FAKE_POD_ANNOTATIONS", "{}"))
        return api.PodSandbox(id="f" * 64, name="web-0", uid="u-1",
                              namespace="shop", annotations=ann,
                              runtime_handler="")

    def ok(self, wire):
        api = self.api
        out = {"kind": "ok", "register": self.register(wire)}
        cfg = self.call(wire, "Configure", api.ConfigureRequest(
            runtime_name="fake", runtime_version="0.8.0",
            registration_timeout=5000, request_timeout=2000),
            api.ConfigureResponse)
        out["events"] = sorted(name for bit, name in EVENTS.items()
                               if cfg.events & (1 << (bit - 1)))
        out["other_events"] = cfg.events & ~sum(1 << (b - 1) for b in EVENTS)
        part = self.call(wire, "Synchronize", api.SynchronizeRequest(
            pods=[self.pod()], more=True), api.SynchronizeResponse)
        last = self.call(wire, "Synchronize", api.SynchronizeRequest(
            more=False), api.SynchronizeResponse)
        out["sync_more"] = [part.more, last.more]
        ctr = api.Container(id="c" * 64, pod_sandbox_id="f" * 64, name="web",
                            annotations={"io.kubernetes.cri.container-name":
                                         "web"})
        rsp = self.call(wire, "CreateContainer", api.CreateContainerRequest(
            pod=self.pod(), container=ctr), api.CreateContainerResponse)
        adj = rsp.adjust
        out["annotations"] = dict(adj.annotations)
        out["hooks"] = {stage: [[h.path] + list(h.args)
                                for h in getattr(adj.hooks, stage)]
                        for stage in ("prestart", "create_runtime",
                                      "poststop")}
        out["hook_env"] = {stage: [list(h.env) for h in getattr(adj.hooks, stage)]
                           for stage in ("create_runtime", "poststop")}
        return out

    def bad(self, wire, kind):
        out = {"kind": kind}
        if kind == "refused":
            out["register"] = self.register(wire, refuse=True)
        else:
            out["register"] = self.register(wire)
            if kind == "malformed":
                wire.send(PLUGIN, 1, REQUEST, b"\xff\xff\xff\xff")
            elif kind == "oversized-frame":
                wire.send_raw(struct.pack(">II", PLUGIN, 5 << 20))
            elif kind == "oversized-message":
                hdr = struct.pack(">IIBB", 8 << 20, 1, REQUEST, 0)
                wire.send_raw(struct.pack(">II", PLUGIN, len(hdr)) + hdr)
        out["closed_after"] = wire.closed_within(5.0)
        return out

    def hold(self, wire):
        out = self.ok(wire)
        end = time.monotonic() + 60
        while os.path.exists(os.environ["FAKE_HOLD"]) and \
                time.monotonic() < end:
            time.sleep(0.1)
        out["kind"] = "hold"
        return out

    def handle(self, sock, kind):
        wire = Wire(sock)
        try:
            if kind in ("ok", "hold", "start"):
                return getattr(self, kind)(wire)
            return self.bad(wire, kind)
        except (AssertionError, OSError, socket.timeout) as e:
            return {"kind": kind, "error": str(e)}
        finally:
            sock.close()


def serve(rt, path, kinds):
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.exists(path):
        os.unlink(path)
    lsock.bind(path)
    lsock.listen(4)
    lsock.settimeout(20)
    good = True
    for kind in kinds:
        sock, _ = lsock.accept()
        out = rt.handle(sock, kind)
        print(json.dumps(out), flush=True)
        good &= "error" not in out
    lsock.close()
    os.unlink(path)
    return good


def run_plugin(rt, kind, cmd):
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    os.set_inheritable(theirs.fileno(), True)
    env = {"NRI_PLUGIN_SOCKET": "3", "NRI_PLUGIN_NAME": "oci-sockopt-hook",
           "NRI_PLUGIN_IDX": "50"}
    env.update(json.loads(os.environ.get("FAKE_PLUGIN_ENV", "{}")))
    # close_fds would close fd 3 after preexec_fn made it: Python's own
    # fds are not inheritable anyway, only the plugin's end is passed.
    proc = subprocess.Popen(cmd, env=env, close_fds=False,
                            preexec_fn=lambda: os.dup2(theirs.fileno(), 3))
    theirs.close()
    out = rt.handle(ours, kind)
    try:
        out["exit"] = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        out["exit"] = "still running 10 s after the connection closed"
    print(json.dumps(out), flush=True)
    return "error" not in out


def realistic(rt):
    """A CreateContainerRequest the size of containerd's for a small pod."""
    api = rt.api
    ann = {"kubernetes.io/config.source": "api",
           "kubernetes.io/config.seen": "2026-12-01T14:00:00.000000000Z",
           "sockopt-hook.io/policy": "restricted"}
    ann.update(("example.com/key-%d" % i, "value-%d" % i) for i in range(17))
    labels = {"app": "web", "pod-template-hash": "5d8f7c9b6d",
              "io.kubernetes.pod.name": "web-5d8f7c9b6d-x2x9q",
              "io.kubernetes.pod.namespace": "shop",
              "io.kubernetes.pod.uid": "2e3ccfc1-ff0e-471b-8f7e-356269630d0c",
              "tier": "front", "team": "checkout", "env": "prod"}
    pod = api.PodSandbox(id="f" * 64, name="web-5d8f7c9b6d-x2x9q",
                         uid="2e3ccfc1-ff0e-471b-8f7e-356269630d0c",
                         namespace="shop", annotations=ann, labels=labels)
    cann = {"io.kubernetes.cri.container-type": "container",
            "io.kubernetes.cri.container-name": "web",
            "io.kubernetes.cri.image-name": "registry.example.com/web:1.2.3",
            "io.kubernetes.cri.sandbox-id": "f" * 64,
            "io.kubernetes.cri.sandbox-name": "web-5d8f7c9b6d-x2x9q",
            "io.kubernetes.cri.sandbox-namespace": "shop",
            "io.kubernetes.cri.sandbox-uid": "2e3ccfc1"}
    ctr = api.Container(
        id="c" * 64, pod_sandbox_id="f" * 64, name="web", annotations=cann,
        labels=labels, args=["/usr/sbin/nginx", "-g", "daemon off;"],
        env=["VAR_%d=%s" % (i, "x" * 24) for i in range(12)],
        mounts=[api.Mount(destination="/m%d" % i, type="bind",
                          source="/var/lib/kubelet/pods/x/volumes/v%d" % i,
                          options=["rbind", "rprivate", "rw"])
                for i in range(6)])
    return api.CreateContainerRequest(pod=pod, container=ctr)


def bench(rt, n, cmd):
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    os.set_inheritable(theirs.fileno(), True)
    env = {"NRI_PLUGIN_SOCKET": "3"}
    env.update(json.loads(os.environ.get("FAKE_PLUGIN_ENV", "{}")))
    proc = subprocess.Popen(cmd, env=env, close_fds=False,
                            preexec_fn=lambda: os.dup2(theirs.fileno(), 3))
    theirs.close()
    wire = Wire(ours)
    api = rt.api
    rt.register(wire)
    rt.call(wire, "Configure", api.ConfigureRequest(runtime_name="fake"),
            api.ConfigureResponse)
    rt.call(wire, "Synchronize", api.SynchronizeRequest(),
            api.SynchronizeResponse)
    req = realistic(rt)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        rt.call(wire, "CreateContainer", req, api.CreateContainerResponse)
        times.append(round((time.perf_counter() - t0) * 1e6, 1))
    ours.close()
    proc.wait(timeout=10)
    print(json.dumps({"request_bytes": req.ByteSize(), "us": times}))
    return True


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--stubs", required=True)
    p.add_argument("mode", choices=["serve", "exec", "bench"])
    p.add_argument("args", nargs=argparse.REMAINDER)
    opts = p.parse_args(argv[1:])
    rt = Runtime(opts.stubs)
    if opts.mode == "serve":
        good = serve(rt, opts.args[0], opts.args[1:])
    elif opts.mode == "bench":
        assert opts.args[1] == "--"
        good = bench(rt, int(opts.args[0]), opts.args[2:])
    else:
        kind, sep, cmd = opts.args[0], opts.args[1], opts.args[2:]
        assert sep == "--" and cmd
        good = run_plugin(rt, kind, cmd)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
