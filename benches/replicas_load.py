#!/usr/bin/env python3
"""Replicas under load (`make bench-replicas-load CORPUS=dir`): a publisher of
a copy of CORPUS into a `file://` store, two replicas, and HAProxy in front of
them with docs/DEPLOY.md's configuration; `make bench-load`'s client
(benches/load.rs, CLIENTS sessions for SECONDS each) through HAProxy, three
times:

1. one replica behind HAProxy;
2. two replicas behind HAProxy;
3. two replicas, one killed a third of the way in and started again (same
   port, same data dir) at two thirds.

    python3 benches/replicas_load.py CRUXE_BIN CORPUS [CLIENTS] [SECONDS]

Prints each run's calls/s, latencies, failed calls (a call that failed again
after its client started a new session) and sessions started again, and the
replicas' RSS after the runs.
"""

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from replicas import generations, health, wait  # noqa: E402
from tool_latency import rss_mib, start_server  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def replica(cruxe, store, data, port):
    """A replica on a fixed port (the balancer's configuration names it)."""
    p = subprocess.Popen([cruxe, "serve", "--replica", f"file://{store}", "--data", data,
                          "--listen", f"127.0.0.1:{port}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait(lambda: ready(port), 3600, f"the replica on port {port}")
    return p


def ready(port):
    try:
        return health("127.0.0.1", port)["ready"]
    except OSError:
        return False


def haproxy(work, front, ports):
    """HAProxy with DEPLOY.md's configuration, for the replicas on `ports`."""
    doc = open(os.path.join(ROOT, "docs", "DEPLOY.md")).read()
    config = "global" + doc.split("```\nglobal")[1].split("```")[0]
    servers = "".join(f"    server r{i + 1} 127.0.0.1:{p}\n" for i, p in enumerate(ports))
    config = re.sub(r"(    server r\d+ [^\n]*\n)+", servers, config)
    config = config.replace("bind :7411", f"bind 127.0.0.1:{front}")
    path = os.path.join(work, f"haproxy-{len(ports)}.cfg")
    open(path, "w").write(config)
    exe = shutil.which("haproxy") or "/usr/sbin/haproxy"
    lb = subprocess.Popen([exe, "-f", path, "-db"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait(lambda: ready(front), 60, "HAProxy")
    return lb


def load(front, pids, clients, seconds):
    env = dict(os.environ, CRUXE_LOAD_URL=f"127.0.0.1:{front}",
               CRUXE_LOAD_PIDS=",".join(str(p) for p in pids))
    # The Makefile's build cache (a checkout's own target/ would build Kuzu again).
    env.setdefault("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/cruxe-target"))
    r = subprocess.run(["cargo", "bench", "-q", "--profile", "dev", "--bench", "load", "--",
                        ".", str(clients), str(seconds)], cwd=ROOT, env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench-replicas-load: the load client failed:\n{r.stderr[-2000:]}")
    for line in r.stderr.splitlines():
        if "error:" in line:
            print(f"    {line.strip()}")
    return r.stdout


def main():
    cruxe, corpus = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    clients = int(sys.argv[3]) if len(sys.argv) > 3 else 32
    seconds = int(sys.argv[4]) if len(sys.argv) > 4 else 60
    work = tempfile.mkdtemp(prefix="cruxe-replicas-load-")
    procs = []
    try:
        run(cruxe, corpus, clients, seconds, work, procs)
    finally:
        for p in procs:
            p.kill()
        shutil.rmtree(work, ignore_errors=True)


def run(cruxe, corpus, clients, seconds, work, procs):
    repo, store = os.path.join(work, "repo"), os.path.join(work, "store")
    shutil.copytree(corpus, repo, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", ".cruxe", "target"))
    pub, _, _ = start_server(cruxe, [repo, "--data", os.path.join(work, "data"),
                                     "--publish", f"file://{store}"])
    procs.append(pub)
    wait(lambda: generations(store), 3600, "a first generation")
    ports = [free_port(), free_port()]
    reps = [replica(cruxe, store, os.path.join(work, f"replica{i}"), p) for i, p in enumerate(ports)]
    procs.extend(reps)
    print(f"corpus {corpus}: {clients} clients, {seconds} s a run, through HAProxy")

    front = free_port()
    lb = haproxy(work, front, ports[:1])
    print("1. one replica:")
    print(indent(load(front, [reps[0].pid], clients, seconds)))
    lb.kill()
    lb.wait()

    lb = haproxy(work, front, ports)
    procs.append(lb)
    print("2. two replicas:")
    print(indent(load(front, [r.pid for r in reps], clients, seconds)))

    # 3: replica 2 killed at a third of the run, started again at two thirds.
    def chaos():
        time.sleep(seconds / 3)
        reps[1].kill()
        reps[1].wait()
        print(f"    replica 2 killed at {seconds / 3:.0f} s", flush=True)
        time.sleep(seconds / 3)
        t0 = time.monotonic()
        reps[1] = replica(cruxe, store, os.path.join(work, "replica1"), ports[1])
        procs.append(reps[1])
        print(f"    replica 2 started again at {2 * seconds / 3:.0f} s, ready in "
              f"{time.monotonic() - t0:.1f} s", flush=True)
    t = threading.Thread(target=chaos)
    t.start()
    print("3. two replicas, one killed and started again:")
    out = load(front, [reps[0].pid], clients, seconds)
    t.join()
    print(indent(out))
    print(f"replicas' RSS after the runs: {rss_mib(reps[0].pid)} MiB (up through all three runs), "
          f"{rss_mib(reps[1].pid)} MiB (started again)")


def indent(text):
    return "\n".join("    " + line for line in text.strip().splitlines())


if __name__ == "__main__":
    main()
