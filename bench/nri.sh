#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/nri.sh [--smoke]: what the NRI plugin (`oci-sockopt-hook nri`) adds
# to a container's creation through the CRI, on this machine, natively:
# a private containerd 2.1.9 (Debian unstable's .deb, tests/vm/fetch-deb.sh,
# unpacked under $BUILD/bench/nri/) with NRI on a socket of ours, driven by
# tests/cri/cri.py as kubelet drives it. One running pod whose annotation
# the plugin copies (sockopt-hook.io/policy: restricted); then, in rounds
# that alternate, CreateContainer of a new container of that pod, each
# removed before the next (never started: no hook runs, so what differs
# is the plugin's round trip alone), without the plugin and with it. Then
# the plugin's VmRSS over 1,000 more creations.
#
# Then CreateContainer + StartContainer of a new container of that pod
# (each stopped and removed, untimed, before the next), in rounds that
# rotate three variants: no plugin (the container unpoliced), the plugin
# giving it the hook (nri.attach "hook": the createRuntime hook runs
# under runc) and the plugin attaching itself at StartContainer
# (nri.attach "plugin": no hook exec), both preloaded (a bpffs of ours)
# and policing it with "restricted"; the plugin's own StartContainer
# steps (OCI_SOCKOPT_HOOK_TIMING) show where its time goes.
#
# Then the plugin's own round trip for a CreateContainer request the
# size of containerd's, from tests/nri/fake_runtime.py (5,000 calls).
#
# Prints a table and writes $BUILD/bench/nri.json. --smoke: two short
# rounds and 60 creations, no verdicts. Environment: BUILD, HOOK,
# BENCH_NRI_ROUNDS (6), BENCH_NRI_CALLS (100 per round and variant),
# BENCH_NRI_START_ROUNDS (6), BENCH_NRI_START_CALLS (30 per round and
# variant).
#
# Needs root, runc and the CRI stubs (python3-grpc-tools); takes the tests'
# lock. Everything lives in one temp dir; at exit the pod is removed,
# containerd and its shims stopped, the pod cgroups it made and its mounts
# removed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
BUILD=$(cd "$BUILD" && pwd)
HOOK=${HOOK:-$BUILD/oci-sockopt-hook}
SMOKE=0
[ "${1:-}" = --smoke ] && SMOKE=1
ROUNDS=${BENCH_NRI_ROUNDS:-6}
CALLS=${BENCH_NRI_CALLS:-100}
MEM_CALLS=500
START_ROUNDS=${BENCH_NRI_START_ROUNDS:-6}
START_CALLS=${BENCH_NRI_START_CALLS:-30}
if [ "$SMOKE" = 1 ]; then
	ROUNDS=2 CALLS=10 MEM_CALLS=20 START_ROUNDS=1 START_CALLS=2
fi

say() { echo "bench-nri: $*" >&2; }
die() { say "$*"; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
command -v runc >/dev/null || die "runc not installed"
[ -x "$HOOK" ] || die "$HOOK missing (make)"
[ -x "$BUILD/tests/pause" ] || die "$BUILD/tests/pause missing (make test-progs)"

# shellcheck source=tests/lib/host.sh
. "$top/tests/lib/host.sh"
host_lock || die "cannot take the tests' lock"

# containerd 2.1.9, unpacked once
deb=$("$top/tests/vm/fetch-deb.sh" "$BUILD" containerd | tail -n1) ||
	die "cannot get containerd's .deb from Debian's unstable suite"
CTD_BIN=$BUILD/bench/nri/$(basename "$deb" .deb)
if [ ! -x "$CTD_BIN/usr/bin/containerd" ]; then
	rm -rf "$CTD_BIN.tmp"
	mkdir -p "$CTD_BIN.tmp"
	dpkg-deb -x "$deb" "$CTD_BIN.tmp" || die "cannot unpack $deb"
	mv "$CTD_BIN.tmp" "$CTD_BIN"
fi
export PATH="$CTD_BIN/usr/bin:$PATH"
CRI_STUBS=$("$top/tests/cri/gen-stubs.sh" "$BUILD" 2>/dev/null | tail -n1)
[ -d "$CRI_STUBS" ] || die "no CRI stubs (tests/cri/gen-stubs.sh)"

D=$(mktemp -d /tmp/sockopt-bench-nri.XXXXXX)
CRI_SOCK=$D/containerd.sock
CRI_DIR=$D/cri
CRI_DRIVER=cgroupfs
# shellcheck source=tests/lib/cri.sh
. "$top/tests/lib/cri.sh"
CTD_PID='' PLUGIN_PID='' POD_UID='' SANDBOX='' KEYS_CG=''
KUBEPODS_OURS=()
for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
	[ -d "$h/kubepods" ] || KUBEPODS_OURS+=("$h")
done

cleanup() {
	local pid h m

	[ -n "$SANDBOX" ] && cri remove-pod "$SANDBOX" >/dev/null 2>&1
	[ -n "$PLUGIN_PID" ] && kill "$PLUGIN_PID" 2>/dev/null && wait "$PLUGIN_PID" 2>/dev/null
	# the preload's pins and the static keys' cgroup of the start rounds
	[ -z "$KEYS_CG" ] || "$HOOK" --config "$CFG" preload --unpin >/dev/null 2>&1
	if [ -n "$CTD_PID" ]; then
		kill "$CTD_PID" 2>/dev/null
		wait "$CTD_PID" 2>/dev/null
	fi
	grep -lsF -- "$D" /proc/[0-9]*/cmdline | cut -d/ -f3 |
		while read -r pid; do kill -KILL "$pid" 2>/dev/null; done
	awk -v t="$D" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo |
		sort -r | while read -r m; do umount -l "$m"; done
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -n "$POD_UID" ] && [ -d "$h/kubepods/besteffort/pod$POD_UID" ] &&
			find "$h/kubepods/besteffort/pod$POD_UID" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	for h in "${KUBEPODS_OURS[@]}"; do
		[ -d "$h/kubepods" ] && find "$h/kubepods" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	[ -n "$KEYS_CG" ] && [ -d "$KEYS_CG" ] &&
		find "$KEYS_CG" -depth -type d -exec rmdir {} \; 2>/dev/null
	rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$D"/{root,state,opt,runc,cni/bin,cni/conf.d,hook-state} "$CRI_DIR"
chmod 700 "$D/hook-state"
cat >"$D/config.toml" <<EOF
version = 3
root = "$D/root"
state = "$D/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.erofs"]

[grpc]
  address = "$CRI_SOCK"
[ttrpc]
  address = "$CRI_SOCK.ttrpc"

[plugins.'io.containerd.internal.v1.opt']
  path = "$D/opt"
[plugins.'io.containerd.nri.v1.nri']
  disable = false
  socket_path = "$D/nri.sock"
  plugin_path = "$D/nri-plugins"
  plugin_config_path = "$D/nri-plugins.d"
[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = "$CRI_PAUSE"
[plugins.'io.containerd.cri.v1.runtime']
  restrict_oom_score_adj = true
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["$D/cni/bin"]
    conf_dir = "$D/cni/conf.d"
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
      SystemdCgroup = false
      Root = "$D/runc"
EOF
containerd --config "$D/config.toml" >"$D/containerd.log" 2>&1 &
CTD_PID=$!
version=$(cri --wait 30 version 2>&1) ||
	{ tail -n 20 "$D/containerd.log" >&2; die "containerd did not answer CRI"; }
say "$version (native, NRI socket $D/nri.sock)"

# the images: busybox-static as the workload, the static pause program
mkdir -p "$D/rootfs/bin"
cp /bin/busybox "$D/rootfs/bin/busybox" 2>/dev/null || die "busybox-static not installed"
for a in sh sleep; do ln -s busybox "$D/rootfs/bin/$a"; done
cri_images "$CRI_DIR/images" "$D/rootfs" "$BUILD/tests/pause" || die "cannot build the images"
for img in busybox pause; do
	ctr -a "$CRI_SOCK" -n k8s.io images import "$CRI_DIR/images/$img.tar" >/dev/null ||
		die "cannot import $img"
done

# the pod, started before the plugin: its container runs no hook
POD=$(cri_pod bench "" '{"sockopt-hook.io/policy": "restricted"}' \
	'[{"name": "c", "command": ["sleep", "3600"]}]')
POD_UID=$(jq -r .metadata.uid "$POD")
out=$(cri run-pod "$POD" 2>&1) || { echo "$out" >&2; die "the pod did not start"; }
SANDBOX=$(jq -r .sandbox <<<"$out")

CFG=$D/hook-config.json
jq '.nri = {hook_path: "/nonexistent/never-run"}' "$top/examples/config.json" >"$CFG"
export OCI_SOCKOPT_HOOK_STATE_DIR=$D/hook-state
# plugin_start [ENV...]: the plugin on $CFG, registered
plugin_start() {
	env "$@" "$HOOK" --config "$CFG" nri --socket "$D/nri.sock" 2>>"$D/plugin.log" &
	PLUGIN_PID=$!
	local i
	for ((i = 0; i < 100; i++)); do
		"$HOOK" --config "$CFG" features 2>/dev/null | grep -qx 'sockopt-hook.io/nri=true' && return 0
		sleep 0.1
	done
	die "the plugin did not register: $(cat "$D/plugin.log")"
}
plugin_stop() {
	kill "$PLUGIN_PID" && wait "$PLUGIN_PID"
	PLUGIN_PID=
	# containerd drops the plugin when the connection closes
	sleep 0.2
}
loop() {
	cri create-loop "$POD" "$SANDBOX" "$1" | jq -c .create_us ||
		die "create-loop failed"
}

mkdir -p "$BUILD/bench"
raw=$D/raw.jsonl
: >"$raw"
loop 5 >/dev/null # warm up containerd's caches
for ((r = 1; r <= ROUNDS; r++)); do
	# alternate which variant goes first
	if ((r % 2)); then order="without with"; else order="with without"; fi
	for v in $order; do
		if [ "$v" = with ]; then plugin_start; else [ -z "$PLUGIN_PID" ] || plugin_stop; fi
		echo "{\"round\": $r, \"variant\": \"$v\", \"us\": $(loop "$CALLS")}" >>"$raw"
	done
	[ -z "$PLUGIN_PID" ] || plugin_stop
done
# whether the plugin really adjusted those containers: its log's count
[ -n "$PLUGIN_PID" ] || plugin_start
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$PLUGIN_PID/status"; }
loop 50 >/dev/null
rss0=$(rss)
loop "$MEM_CALLS" >/dev/null
rss1=$(rss)
loop "$MEM_CALLS" >/dev/null
rss2=$(rss)
plugin_stop
seen=$(grep -o '[0-9]* containers seen, [0-9]* given the hook' "$D/plugin.log" | tail -n1)

# --- CreateContainer + StartContainer: no plugin, hook, plugin --------------

# preloaded, as a node's hook is: the pins in a bpffs of ours, the static
# keys on in a cgroup of ours (the hook and the plugin get the same
# directories: the plugin passes them on to the hooks it delivers)
mkdir -p "$D/bpffs"
if ! mount -t bpf -o mode=0700 sockopt-bench-nri "$D/bpffs" || ! mount --make-private "$D/bpffs"; then
	die "cannot mount a bpffs at $D/bpffs"
fi
export OCI_SOCKOPT_HOOK_PIN_DIR=$D/bpffs/pins
CG2=$(host_cgroup2_mount)
KEYS_CG=$CG2/sockopt-bench-nri-$$
mkdir "$KEYS_CG" || die "cannot make $KEYS_CG"
export OCI_SOCKOPT_HOOK_KEYS_CGROUP=${KEYS_CG#"$CG2"/}/keys
BUNDLES=$D/state/io.containerd.runtime.v2.task/k8s.io
jq --arg h "$HOOK" '.nri = {hook_path: $h, attach: "hook"}' "$top/examples/config.json" >"$D/hook-mode.json"
jq --arg h "$HOOK" --arg b "$BUNDLES" '.nri = {hook_path: $h, attach: "plugin", bundle_dir: $b}' \
	"$top/examples/config.json" >"$D/plugin-mode.json"
"$HOOK" --config "$D/hook-mode.json" preload >/dev/null 2>>"$D/plugin.log" ||
	die "hook preload failed: $(tail -n 1 "$D/plugin.log")"
sraw=$D/start.jsonl
: >"$sraw"
start_loop() {
	cri start-loop "$POD" "$SANDBOX" "$1" ||
		die "start-loop failed (see $D/plugin.log)"
}
: >"$D/plugin.log"
for ((r = 0; r < START_ROUNDS; r++)); do
	order=(none hook plugin none hook)
	for v in "${order[@]:$((r % 3)):3}"; do
		[ -z "$PLUGIN_PID" ] || plugin_stop
		case $v in
		hook) CFG=$D/hook-mode.json plugin_start ;;
		plugin) CFG=$D/plugin-mode.json plugin_start OCI_SOCKOPT_HOOK_TIMING=1 ;;
		esac
		[ "$r" != 0 ] || start_loop 2 >/dev/null # warm up this variant
		echo "{\"round\": $r, \"variant\": \"$v\", \"us\": $(start_loop "$START_CALLS")}" >>"$sraw"
	done
done
[ -z "$PLUGIN_PID" ] || plugin_stop
CFG=$D/hook-mode.json
# (the pod sandbox's record, sandbox_policy's, stays while the pod runs)
left=$(find "$OCI_SOCKOPT_HOOK_STATE_DIR" -maxdepth 1 -name '*.json' ! -name "$SANDBOX*" -printf '%f ')
[ -z "$left" ] || die "records left after the start rounds: $left"
grep -q 'this session: the plugin attaches at StartContainer' "$D/plugin.log" ||
	die "the plugin never attached at StartContainer: $(tail -n 5 "$D/plugin.log")"
# the plugin's StartContainer steps, one line per container
grep -o 'timing: StartContainer: .* (us)' "$D/plugin.log" >"$D/start-steps.txt"

# The plugin's own share, without containerd's noise: the round trip of a
# CreateContainer request of containerd's size, from a runtime played by
# tests/nri/fake_runtime.py (Python encodes and decodes on its side, so
# this bounds the plugin's time from above).
PROTOS=$BUILD/nri/src
mkdir -p "$D/nri-py"
/usr/bin/python3 -m grpc_tools.protoc -I "$PROTOS/nri/pkg/api" --python_out="$D/nri-py" \
	api.proto || die "no NRI stubs"
/usr/bin/python3 -m grpc_tools.protoc -I "$PROTOS/ttrpc" --python_out="$D/nri-py" \
	request.proto proto/status.proto || die "no ttrpc stubs"
RTT_CALLS=$((SMOKE ? 50 : 5000))
FAKE_PLUGIN_ENV="{\"OCI_SOCKOPT_HOOK_CONFIG\": \"$CFG\", \"OCI_SOCKOPT_HOOK_STATE_DIR\": \"$D/hook-state\"}" \
	/usr/bin/python3 "$top/tests/nri/fake_runtime.py" --stubs "$D/nri-py" bench "$RTT_CALLS" -- "$HOOK" \
	>"$D/rtt.json" 2>>"$D/plugin.log" || die "the round-trip bench failed: $(tail -n 3 "$D/plugin.log")"

python3 - "$raw" "$rss0" "$rss1" "$rss2" "$((50 + 2 * MEM_CALLS))" "$seen" \
	"$version" "$BUILD/bench/nri.json" "$SMOKE" "$D/rtt.json" "$sraw" "$D/start-steps.txt" <<'EOF'
import json, statistics, sys
raw, rss0, rss1, rss2, n, seen, version, out, smoke, rtt_file, sraw, steps_file = sys.argv[1:]
rtt = json.load(open(rtt_file))
rows = [json.loads(l) for l in open(raw)]
def med(v): return statistics.median(v)
by = {"with": [], "without": []}
diffs = []
for r in sorted({x["round"] for x in rows}):
    m = {x["variant"]: med(x["us"]) for x in rows if x["round"] == r}
    diffs.append(m["with"] - m["without"])
    for v in by:
        by[v] += [x for x in rows if x["round"] == r and x["variant"] == v][0]["us"]
    print("round %d: median CreateContainer without %.0f us, with %.0f us, added %+.0f us"
          % (r, m["without"], m["with"], m["with"] - m["without"]))
def q(v, p): return sorted(v)[int(p * (len(v) - 1))]
res = {
    "runtime": version,
    "calls_per_variant": len(by["with"]),
    "median_us": {v: med(by[v]) for v in by},
    "p90_us": {v: q(by[v], 0.9) for v in by},
    "added_us_median_of_rounds": med(diffs),
    "added_us_rounds": diffs,
    "plugin_rss_kb": {"after_50": int(rss0), "after_%d" % (50 + (int(n) - 50) // 2): int(rss1),
                      "after_%s" % n: int(rss2)},
    "plugin_log": seen,
}
print("CreateContainer through CRI (%s, native), %d calls each: median without %.0f us, with %.0f us; "
      "p90 without %.0f us, with %.0f us; added (median of the rounds' differences) %+.0f us"
      % (version, len(by["with"]), res["median_us"]["without"], res["median_us"]["with"],
         res["p90_us"]["without"], res["p90_us"]["with"], res["added_us_median_of_rounds"]))
print("plugin VmRSS: %s kB after 50 creations, %s kB after %d, %s kB after %s (%s)"
      % (rss0, rss1, 50 + (int(n) - 50) // 2, rss2, n, seen))
v = sorted(rtt["us"])
res["plugin_round_trip_us"] = {"calls": len(v), "request_bytes": rtt["request_bytes"],
                               "p50": q(v, 0.5), "p90": q(v, 0.9), "p99": q(v, 0.99)}
print("the plugin's round trip for a %d-byte CreateContainer (%d calls, fake runtime): "
      "p50 %.0f us, p90 %.0f us, p99 %.0f us"
      % (rtt["request_bytes"], len(v), q(v, 0.5), q(v, 0.9), q(v, 0.99)))
# CreateContainer + StartContainer, three variants
srows = [json.loads(l) for l in open(sraw)]
tot = {v: [] for v in ("none", "hook", "plugin")}
starts = {v: [] for v in tot}
added = {"hook": [], "plugin": []}
for r in sorted({x["round"] for x in srows}):
    m = {}
    for x in srows:
        if x["round"] == r:
            t = [c + s for c, s in zip(x["us"]["create_us"], x["us"]["start_us"])]
            tot[x["variant"]] += t
            starts[x["variant"]] += x["us"]["start_us"]
            m[x["variant"]] = med(t)
    for v in added:
        added[v].append(m[v] - m["none"])
    print("start round %d: median CreateContainer+StartContainer no plugin %.0f us, hook %.0f us, "
          "plugin %.0f us" % (r, m["none"], m["hook"], m["plugin"]))
st = {v: {"calls": len(tot[v]), "p50_us": q(tot[v], 0.5), "p90_us": q(tot[v], 0.9),
          "start_p50_us": q(starts[v], 0.5)} for v in tot}
for v in added:
    st[v]["added_us_median_of_rounds"] = med(added[v])
    st[v]["added_us_rounds"] = added[v]
ratio = (st["plugin"]["added_us_median_of_rounds"] / st["hook"]["added_us_median_of_rounds"]
         if st["hook"]["added_us_median_of_rounds"] > 0 else None)
st["plugin_over_hook_added"] = ratio
steps = {}
for line in open(steps_file):
    f = line.split(": ", 2)[2].replace(" (us)", "").split()
    for k, val in zip(f[::2], f[1::2]):
        steps.setdefault(k, []).append(int(val))
st["plugin_steps_us_p50"] = {k: q(v, 0.5) for k, v in steps.items()}
res["start"] = st
print("CreateContainer+StartContainer through CRI (native), %d calls each:" % st["none"]["calls"])
for v, name in (("none", "no plugin"), ("hook", "plugin gives the hook"),
                ("plugin", "plugin attaches")):
    extra = ("" if v == "none" else "; added (median of the rounds' differences) %+.0f us"
             % st[v]["added_us_median_of_rounds"])
    print("  %-22s p50 %.0f us, p90 %.0f us (StartContainer alone p50 %.0f us)%s"
          % (name, st[v]["p50_us"], st[v]["p90_us"], st[v]["start_p50_us"], extra))
print("  the plugin's added cost over the hook's: %s; its StartContainer steps (p50, us): %s"
      % ("%.2f" % ratio if ratio is not None else "n/a",
         " ".join("%s %d" % kv for kv in st["plugin_steps_us_p50"].items())))
json.dump(res, open(out, "w"), indent=1)
if smoke == "1":
    sys.exit(0)
EOF
