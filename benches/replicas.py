#!/usr/bin/env python3
"""Replicas benchmark (`make bench-replicas CORPUS=dir`): a publisher serving a
copy of CORPUS into a `file://` store, and a replica of it.

    python3 benches/replicas.py CRUXE_BIN CORPUS [EDITS]

Prints, each against the goal of the issue that asked for it:
1. the first generation: its bytes, and how long after the publisher's start;
2. a replica started on an empty disk: seconds until it answers (`/health` ready);
3. EDITS single-file edits (a new function appended to a file, one at a time):
   save -> answered by the replica (`get_symbol_hierarchy` finds the function),
   p50 / p95 / max;
4. one edit of 10 files at once: the bytes its generation uploaded (blobs not in
   the store before), against the whole generation's bytes;
5. the replica's RSS at the end.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tool_latency import connect, rss_mib, start_server  # noqa: E402

SOURCE = (".rs", ".py", ".go", ".ts")


def health(host, port):
    with urllib.request.urlopen(f"http://{host}:{port}/health", timeout=10) as r:
        return json.loads(r.read())


def blobs(store):
    d = os.path.join(store, "blobs")
    return {n: os.path.getsize(os.path.join(d, n)) for n in os.listdir(d)} if os.path.isdir(d) else {}


def generations(store):
    d = os.path.join(store, "generations")
    return sorted(n for n in os.listdir(d) if n.endswith(".json")) if os.path.isdir(d) else []


def manifest_bytes(store, name):
    m = json.load(open(os.path.join(store, "generations", name)))
    return sum(f["size"] for f in m["files"])


def wait(cond, timeout, what):
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > timeout:
            sys.exit(f"bench-replicas: {what} did not happen within {timeout} s")
        time.sleep(0.05)
    return time.monotonic() - t0


def source_files(root, n):
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in (".git", ".cruxe", "target"))
        out += [os.path.join(d, f) for f in sorted(files) if f.endswith(SOURCE)]
    step = max(1, len(out) // n)
    return out[step // 2::step][:n]


def append_fn(path, name):
    text = open(path, encoding="utf-8", errors="replace").read()
    if path.endswith(".py"):
        add = f"\n\ndef {name}():\n    return 1\n"
    elif path.endswith(".go"):
        add = f"\n\nfunc {name}() int {{ return 1 }}\n"
    elif path.endswith(".ts"):
        add = f"\n\nexport function {name}(): number {{ return 1; }}\n"
    else:
        add = f"\n\npub fn {name}() -> u32 {{ 1 }}\n"
    tmp = path + ".cruxe-tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text + add)
    os.replace(tmp, path)


def answered(session, name):
    r = session.request("tools/call", {"name": "get_symbol_hierarchy",
                                       "arguments": {"symbol_name": name}})
    res = (r or {}).get("result", {})
    return not res.get("isError", True)


def main():
    cruxe, corpus = sys.argv[1], sys.argv[2]
    edits = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    work = tempfile.mkdtemp(prefix="cruxe-replicas-")
    try:
        run(cruxe, corpus, edits, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(cruxe, corpus, edits, work):
    repo, store = os.path.join(work, "repo"), os.path.join(work, "store")
    shutil.copytree(corpus, repo, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", ".cruxe", "target"))
    t0 = time.monotonic()
    pub, _, _ = start_server(cruxe, [repo, "--data", os.path.join(work, "data"),
                                     "--publish", f"file://{store}"])
    try:
        wait(lambda: generations(store), 3600, "a first generation")
        first = generations(store)[-1]
        full = manifest_bytes(store, first)
        print(f"first generation: {full / 1e6:.1f} MB, {time.monotonic() - t0:.1f} s after the publisher started")
        t1 = time.monotonic()
        rep, host, port = start_server(cruxe, ["--replica", f"file://{store}",
                                              "--data", os.path.join(work, "replica")])
        try:
            wait(lambda: health(host, port)["ready"], 3600, "a ready replica")
            print(f"replica ready from an empty disk: {time.monotonic() - t1:.1f} s (goal <= 30 s on the 10k-file Rust corpus)")
            session = connect(host, port)
            times = []
            for i, path in enumerate(source_files(repo, edits)):
                name = f"cruxe_replica_probe_{i}"
                start = time.monotonic()
                append_fn(path, name)
                wait(lambda: answered(session, name), 300, f"edit {i} on the replica")
                times.append((time.monotonic() - start) * 1000)
                print(f"  edit {i}: {times[-1]:.0f} ms  {os.path.relpath(path, repo)}", file=sys.stderr)
            times.sort()
            p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
            print(f"save -> answered by the replica, {len(times)} edits: p50 {statistics.median(times):.0f} ms, "
                  f"p95 {p95:.0f} ms, max {times[-1]:.0f} ms (goal p95 <= 5000 ms)")
            # Generations past the retention count are removed: compare numbers.
            before, newest = blobs(store), generations(store)[-1]
            for i, path in enumerate(source_files(repo, 10)):
                append_fn(path, f"cruxe_replica_batch_{i}")
            wait(lambda: generations(store)[-1] > newest
                 and health(host, port)["generation"] >= int(generations(store)[-1][:20]), 600,
                 "the 10-file edit's generation")
            added = sum(size for n, size in blobs(store).items() if n not in before)
            whole = manifest_bytes(store, generations(store)[-1])
            print(f"a 10-file edit uploaded {added / 1e6:.2f} MB of a {whole / 1e6:.1f} MB generation: "
                  f"{100 * added / whole:.2f}% (goal <= 10%)")
            print(f"replica RSS at the end: {rss_mib(rep.pid):.0f} MiB")
        finally:
            rep.kill()
    finally:
        pub.kill()


if __name__ == "__main__":
    main()
