#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""make check-mutants: the hook built with one mutation at a time, and the
suites that claim to cover what it breaks run against it; each mutant must
make them fail, and the unmutated tree must pass them.

Each mutant is a file tests/mutants/NAME.mutant (format in README.md): a
literal text ("find") that must occur exactly once in the files of hook/,
bpf/, scripts/ and examples/ (wherever a file has moved to), the text that
replaces it, and the suites that must catch it. A find that occurs nowhere
or more than once is an error ("mutant NAME does not apply"), never a
silent pass.

The work is done on a copy of the tree (git's files, tracked and
untracked but not ignored) in BUILD/mutants/src, never on the sources:

  1. build the copy (make all test-progs unit-progs hook-dyn), run every mutant's
     suites on it once: all must pass (the baseline);
  2. per mutant: write the mutated file into the copy, build, run its
     suites (tests/run.sh of the copy), put the file back.

Prints one line per mutant, then "mutants: K caught, S survived".
Exit 0 when every mutant applied, built and was caught, and the
baseline passed. MUTANTS="pattern..." runs only the mutants whose name
contains one of the patterns; -B BUILD names the build directory.
"""
import argparse
import fcntl
import os
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
SEARCH_DIRS = ("hook", "bpf", "scripts", "examples")


class MutantError(Exception):
    pass


def parse(path):
    """The mutant in PATH: dict with name, what, suites, env, find, replace."""
    name = os.path.basename(path)[: -len(".mutant")]
    m = {"name": name, "what": "", "suites": [], "env": {}, "path": path}
    section = None
    body = {"find": [], "replace": []}
    with open(path) as f:
        for line in f.read().split("\n"):
            if line.startswith("--- "):
                section = line[4:].strip()
                if section not in body:
                    raise MutantError("%s: unknown section '%s'" % (path, section))
                continue
            if section:
                body[section].append(line)
            elif line.startswith("# SPDX") or not line.strip():
                continue
            elif line.startswith("#"):
                m["what"] += (" " if m["what"] else "") + line[1:].strip()
            elif line.startswith("suites:"):
                m["suites"] = line.split(":", 1)[1].split()
            elif line.startswith("env:"):
                for kv in shlex.split(line.split(":", 1)[1]):
                    k, v = kv.split("=", 1)
                    m["env"][k] = v
            else:
                raise MutantError("%s: cannot read line '%s'" % (path, line))
    # The sections end at the file's last newline: drop that empty line.
    for k in body:
        while body[k] and body[k][-1] == "":
            body[k].pop()
        m[k] = "\n".join(body[k])
    if not m["find"] or not m["suites"]:
        raise MutantError("%s: needs a find section and a suites line" % path)
    if m["find"] == m["replace"]:
        raise MutantError("%s: replace is the same text as find" % path)
    return m


def locate(src, find):
    """The one file under src's SEARCH_DIRS holding find exactly once."""
    hits = []
    for d in SEARCH_DIRS:
        for root, _, files in os.walk(os.path.join(src, d)):
            for fn in files:
                p = os.path.join(root, fn)
                try:
                    with open(p, encoding="utf-8") as f:
                        n = f.read().count(find)
                except (UnicodeDecodeError, OSError):
                    continue
                if n:
                    hits.append((os.path.relpath(p, src), n))
    if len(hits) != 1 or hits[0][1] != 1:
        where = ", ".join("%s (%d)" % h for h in hits) or "nowhere"
        raise MutantError("its find text is not there exactly once: found in %s" % where)
    return hits[0][0]


def copy_tree(src):
    if os.path.isdir(src):
        shutil.rmtree(src)
    os.makedirs(src)
    inside_git = subprocess.run(["git", "-C", TOP, "rev-parse", "--git-dir"],
                                capture_output=True).returncode == 0
    if inside_git:
        files = subprocess.run(["git", "-C", TOP, "ls-files", "-co", "--exclude-standard", "-z"],
                               capture_output=True, check=True).stdout.split(b"\0")
        files = [f for f in files if f and os.path.lexists(os.path.join(TOP.encode(), f))]
        tar = subprocess.Popen(["tar", "-C", TOP, "--null", "-T", "-", "-cf", "-"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        untar = subprocess.Popen(["tar", "-C", src, "-xf", "-"], stdin=tar.stdout)
        tar.stdout.close()
        tar.communicate(b"\0".join(files))
        if untar.wait() or tar.returncode:
            sys.exit("check-mutants: cannot copy the tree to %s" % src)
    else:
        shutil.copytree(TOP, src, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("build", ".git"))


def build(src, log):
    jobs = str(os.cpu_count() or 1)
    with open(log, "w") as out:
        return subprocess.run(["make", "-C", src, "-j" + jobs, "all", "test-progs", "unit-progs", "hook-dyn"],
                              stdout=out, stderr=subprocess.STDOUT).returncode


def host_lock():
    """Takes the tests' machine-wide lock (tests/lib/host.sh) for the
    whole run, as bench/run.sh does: the suites under it inherit it
    (HOST_LOCK_FD), and other runs wait for the run, not for each of its
    suites. Returns the fd, or exits."""
    path = os.environ.get("TESTS_LOCK", "/run/lock/oci-sockopt-hook-tests.lock")
    fd = os.environ.get("HOST_LOCK_FD")
    if fd and fd.isdigit():
        try:
            if os.readlink("/proc/self/fd/" + fd) == os.path.realpath(path):
                fcntl.flock(int(fd), fcntl.LOCK_EX | fcntl.LOCK_NB)
                return int(fd)
        except OSError:
            pass
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
    except OSError as e:
        sys.exit("check-mutants: cannot open %s: %s" % (path, e))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print("check-mutants: waiting for %s (a test run or benchmark holds it)" % path, flush=True)
        fcntl.flock(fd, fcntl.LOCK_EX)
    os.set_inheritable(fd, True)
    os.environ["HOST_LOCK_FD"] = str(fd)
    return fd


def run_suites(src, suites, env, log):
    """tests/run.sh of the copy on suites; (exit status, failed suites)."""
    e = dict(os.environ)
    e.pop("HOOK", None)
    e.update(env)
    e["TESTS"] = " ".join(suites)
    e["BUILD"] = "build"
    e["TESTS_BACKGROUND"] = ""
    with open(log, "w") as out:
        rc = subprocess.run([os.path.join(src, "tests", "run.sh")], cwd=src, env=e,
                            stdout=out, stderr=subprocess.STDOUT, close_fds=False).returncode
    failed = []
    ran = 0
    with open(log) as f:
        for line in f:
            if line.startswith(("PASS ", "FAIL ", "SKIP ")):
                ran += 1
            if line.startswith("FAIL "):
                failed.append(line.split()[1])
    return rc, failed, ran


def main():
    ap = argparse.ArgumentParser(description="make check-mutants")
    ap.add_argument("-B", "--build", default=os.path.join(TOP, "build"))
    args = ap.parse_args()
    out = os.path.join(os.path.abspath(args.build), "mutants")
    src = os.path.join(out, "src")
    logs = os.path.join(out, "logs")
    pats = os.environ.get("MUTANTS", "").split()
    t0 = time.time()

    mutants, errors = [], 0
    for fn in sorted(os.listdir(HERE)):
        if not fn.endswith(".mutant"):
            continue
        if pats and not any(p in fn for p in pats):
            continue
        try:
            mutants.append(parse(os.path.join(HERE, fn)))
        except MutantError as e:
            print("ERROR %s" % e)
            errors += 1
    if not mutants:
        sys.exit("check-mutants: no mutant selected in %s" % HERE)

    copy_tree(src)
    os.makedirs(logs, exist_ok=True)
    print("check-mutants: %d mutant(s), on a copy of the tree in %s" % (len(mutants), src), flush=True)
    if build(src, os.path.join(logs, "build-baseline.log")):
        sys.exit("check-mutants: the unmutated copy does not build (%s)"
                 % os.path.join(logs, "build-baseline.log"))
    host_lock()
    # The baseline: each suite as the mutants run it (their env), once.
    groups = {}
    for m in mutants:
        key = tuple(sorted(m["env"].items()))
        groups.setdefault(key, set()).update(m["suites"])
    nsuites = 0
    for n, (key, suites) in enumerate(sorted(groups.items())):
        suites = sorted(suites)
        nsuites += len(suites)
        blog = os.path.join(logs, "baseline-%d.log" % n)
        rc, failed, ran = run_suites(src, suites, dict(key), blog)
        if rc or ran < len(suites):
            print("baseline FAILED: without a mutant, %s (%s; log %s)"
                  % (" ".join(failed) or "tests/run.sh exit %d, %d of %d suites ran" % (rc, ran, len(suites)),
                     " ".join("%s=%s" % kv for kv in key) or "no env", blog))
            print("mutants: 0 caught, 0 survived (no baseline)")
            return 1
    print("baseline: %d suite run(s) pass without a mutant (%ds)" % (nsuites, time.time() - t0), flush=True)

    caught = survived = 0
    for m in mutants:
        t = time.time()
        try:
            rel = locate(src, m["find"])
        except MutantError as e:
            print("ERROR mutant %s does not apply: %s" % (m["name"], e), flush=True)
            errors += 1
            continue
        path = os.path.join(src, rel)
        with open(path, encoding="utf-8") as f:
            orig = f.read()
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(orig.replace(m["find"], m["replace"], 1))
            blog = os.path.join(logs, "build-%s.log" % m["name"])
            if build(src, blog):
                print("ERROR mutant %s does not build (%s): a mutant must compile to prove anything"
                      % (m["name"], blog), flush=True)
                errors += 1
                continue
            rlog = os.path.join(logs, "%s.log" % m["name"])
            rc, failed, ran = run_suites(src, m["suites"], m["env"], rlog)
        finally:
            with open(path, "w", encoding="utf-8") as f:
                f.write(orig)
        secs = time.time() - t
        if rc != 0 and failed:
            caught += 1
            print("caught   %-28s %s: by %s (%ds)" % (m["name"], m["what"], ", ".join(failed), secs), flush=True)
        else:
            survived += 1
            print("SURVIVED %-28s %s (%s): %s should have caught it (log %s, %ds)"
                  % (m["name"], m["what"], rel, ", ".join(m["suites"]), rlog, secs), flush=True)
    # The copy's build back to the unmutated tree, for a rerun.
    build(src, os.path.join(logs, "build-final.log"))
    print("mutants: %d caught, %d survived%s (%ds)"
          % (caught, survived, ", %d error(s)" % errors if errors else "", time.time() - t0))
    return 0 if survived == 0 and errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
