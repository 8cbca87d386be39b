"""A server under hostile load (issue 51's goals), measured from outside:

    python3 benches/hostile.py CRUXE_BIN [SESSIONS]

1. Session flood. `cruxe serve` of fixtures/rust with `--session-idle-secs 20`;
   SESSIONS (default 50,000) `initialize` requests from 4 threads over
   keep-alive connections, while a fifth thread times `GET /health` every 20 ms.
   Prints the server's RSS before, at its peak, at the end of the flood and
   once the sessions have expired (and 5 s after), and /health p50/p95/max.
2. Deep impacts. A Go package of 5 layers x 60 functions, each calling every
   function of the next (14,400 edges); 8 threads loop `analyze_impact` over
   all five files at depth 5 for 30 s while one times `locate_symbol` every
   50 ms. Prints locate p50/p95/max, the impacts' outcomes and the server's
   RSS before and at its peak.
3. SIGTERM. Two run_cypher queries that would run for minutes and two deep
   impacts in flight (their clients gone); the time from SIGTERM to exit.

The goals: RSS +<=100 MB during the flood and back within 20 MB after
expiry; /health p95 <= 50 ms; locate p95 <= 100 ms and RSS +<=200 MB under
the impacts; exit <= 2 s.
"""

import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from tool_latency import Session, connect, rss_mib, start_server  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "flood", "version": "1"}}})
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
ENDLESS = ("UNWIND range(1, 100000) AS x UNWIND range(1, 100000) AS y "
           "UNWIND range(1, 100) AS z RETURN sum(x + y + z) AS s")


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round((len(xs) - 1) * q))]


def health_times(host, port, stop, out):
    conn = http.client.HTTPConnection(host, port)
    while not stop.is_set():
        t = time.perf_counter()
        conn.request("GET", "/health")
        body = json.loads(conn.getresponse().read())
        out.append(((time.perf_counter() - t) * 1000, body.get("sessions", {}).get("open")))
        time.sleep(0.02)


def sessions_open(host, port):
    conn = http.client.HTTPConnection(host, port)
    conn.request("GET", "/health")
    return json.loads(conn.getresponse().read()).get("sessions", {}).get("open")


def knows(cruxe, flag):
    """Whether this build of `cruxe serve` takes `flag` (an older one, measured
    for comparison, may not)."""
    out = subprocess.run([cruxe, "serve", "--help"], capture_output=True, text=True).stdout
    return flag in out


def flood(cruxe, n):
    data = tempfile.mkdtemp(prefix="cruxe-hostile-")
    repo = os.path.join(data, "rust")
    shutil.copytree(os.path.join(HERE, "..", "fixtures", "rust"), repo)
    idle = ["--session-idle-secs", "20"] if knows(cruxe, "--session-idle-secs") else []
    server, host, port = start_server(cruxe, [repo, "--data", os.path.join(data, "d"), *idle])
    try:
        s = connect(host, port)
        while s.call("index_status", {})[0]["repos"][0]["indexing_status"] != "ready":
            time.sleep(0.2)
        s.call("locate_symbol", {"name": "Claims"})
        time.sleep(1)
        before = rss_mib(server.pid)
        peak = [before]
        stop = threading.Event()
        times = []
        poller = threading.Thread(target=health_times, args=(host, port, stop, times))
        poller.start()
        refused = [0]

        def worker(count):
            conn = http.client.HTTPConnection(host, port)
            for _ in range(count):
                conn.request("POST", "/mcp", INIT, HEADERS)
                r = conn.getresponse()
                r.read()
                if r.status != 200:
                    refused[0] += 1

        def sampler():
            while not stop.is_set():
                peak[0] = max(peak[0], rss_mib(server.pid))
                time.sleep(0.1)

        threading.Thread(target=sampler, daemon=True).start()
        t = time.time()
        threads = [threading.Thread(target=worker, args=(n // 4,)) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        took = time.time() - t
        end = rss_mib(server.pid)
        stop.set()
        poller.join()
        ms = [x for x, _ in times]
        most = max((o or 0) for _, o in times) if idle else "?"
        print(f"session flood: {n} initialize in {took:.1f} s ({n / took:.0f}/s), {refused[0]} refused; "
              f"sessions open at most {most}")
        print(f"  RSS before {before} MiB, peak {peak[0]} MiB (+{peak[0] - before}), end of flood {end} MiB")
        print(f"  /health during the flood: p50 {pct(ms, .5):.1f} ms, p95 {pct(ms, .95):.1f} ms, "
              f"max {max(ms):.1f} ms ({len(ms)} samples)")
        t = time.time()
        # An older build says nothing of its sessions: its expiry (5 min) is waited for.
        while (sessions_open(host, port) or 0) > 0 and time.time() - t < 120 if idle else time.time() - t < 330:
            time.sleep(0.5)
        time.sleep(3)
        expired = rss_mib(server.pid)
        time.sleep(5)
        later = rss_mib(server.pid)
        print(f"  after expiry ({time.time() - t:.0f} s): RSS {expired} MiB, 5 s later {later} MiB "
              f"({later - before:+d} MiB against before)")
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(data, ignore_errors=True)


def mesh(root):
    os.makedirs(root)
    with open(os.path.join(root, "go.mod"), "w") as f:
        f.write("module mesh\n\ngo 1.21\n")
    for layer in range(5):
        src = ["package mesh\n"]
        for i in range(60):
            src.append(f"func F{layer}x{i}() {{")
            if layer < 4:
                src.extend(f"\tF{layer + 1}x{j}()" for j in range(60))
            src.append("}\n")
        with open(os.path.join(root, f"l{layer}.go"), "w") as f:
            f.write("\n".join(src))


def serve_mesh(cruxe, extra=()):
    data = tempfile.mkdtemp(prefix="cruxe-mesh-")
    root = os.path.join(data, "mesh")
    mesh(root)
    server, host, port = start_server(cruxe, [root, "--data", os.path.join(data, "d"), *extra])
    s = connect(host, port)
    while s.call("index_status", {})[0]["repos"][0]["indexing_status"] != "ready":
        time.sleep(0.2)
    return data, server, host, port, s


def impacts(cruxe, seconds=30):
    data, server, host, port, s = serve_mesh(cruxe)
    try:
        s.call("locate_symbol", {"name": "F2x7"})
        time.sleep(1)
        before = rss_mib(server.pid)
        peak = [before]
        stop = threading.Event()
        outcomes = []
        args = {"paths": [f"l{i}.go" for i in range(5)], "depth": 5, "max_tokens": 2000}

        def hostile():
            c = connect(host, port)
            while not stop.is_set():
                t = time.perf_counter()
                v, err = c.call("analyze_impact", args)
                outcomes.append((time.perf_counter() - t, err, v.get("truncated") if v else None))

        def sampler():
            while not stop.is_set():
                peak[0] = max(peak[0], rss_mib(server.pid))
                time.sleep(0.1)

        threads = [threading.Thread(target=hostile) for _ in range(8)]
        threads.append(threading.Thread(target=sampler))
        for th in threads:
            th.start()
        time.sleep(1)
        lookups = []
        failed = 0
        end = time.time() + seconds
        i = 0
        while time.time() < end:
            t = time.perf_counter()
            v, err = s.call("locate_symbol", {"name": f"F{i % 5}x{i % 60}"})
            lookups.append((time.perf_counter() - t) * 1000)
            failed += bool(err)
            i += 1
            time.sleep(0.05)
        stop.set()
        for th in threads:
            th.join()
        walls = [o[0] for o in outcomes]
        errors = sum(1 for o in outcomes if o[1])
        print(f"8 deep impacts for {seconds} s: {len(outcomes)} answered ({errors} errors), "
              f"each p50 {statistics.median(walls):.2f} s, max {max(walls):.2f} s")
        print(f"  locate_symbol meanwhile: p50 {pct(lookups, .5):.1f} ms, p95 {pct(lookups, .95):.1f} ms, "
              f"max {max(lookups):.1f} ms ({len(lookups)} calls, {failed} failed)")
        print(f"  RSS before {before} MiB, peak {peak[0]} MiB (+{peak[0] - before})")
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(data, ignore_errors=True)


def sigterm(cruxe):
    data, server, host, port, s = serve_mesh(cruxe, ["--query-timeout-ms", "120000"])
    # Until both queries run (their workers exist).
    try:
        def call(tool, args):
            try:
                connect(host, port).call(tool, args)
            except Exception:
                pass

        for tool, args in [("run_cypher", {"query": ENDLESS}), ("run_cypher", {"query": ENDLESS}),
                           ("analyze_impact", {"paths": ["l3.go", "l4.go"], "depth": 5}),
                           ("analyze_impact", {"paths": ["l3.go", "l4.go"], "depth": 5})]:
            threading.Thread(target=call, args=(tool, args), daemon=True).start()
        time.sleep(2)
        t = time.perf_counter()
        server.send_signal(signal.SIGTERM)
        code = server.wait()
        print(f"SIGTERM with 2 endless queries and 2 impacts in flight: exit {code} after "
              f"{(time.perf_counter() - t) * 1000:.0f} ms")
    finally:
        if server.poll() is None:
            server.kill()
        shutil.rmtree(data, ignore_errors=True)


def main():
    cruxe = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 50_000
    flood(cruxe, n)
    impacts(cruxe)
    sigterm(cruxe)


if __name__ == "__main__":
    main()
