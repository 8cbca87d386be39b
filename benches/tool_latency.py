"""Per-tool latency of `cruxe serve` over HTTP, measured at the client. (Throughput under
32 concurrent clients: `benches/load.rs`, a Rust client that leaves the CPU to
the server.)

    python3 benches/tool_latency.py CRUXE_BIN CORPUS [CALLS_PER_TOOL]

(How long a change takes to be answered: `benches/freshness.py`.)

Indexes CORPUS into a temporary data dir (`cruxe index`), starts `cruxe serve` on it,
opens one MCP session over a keep-alive HTTP/1.1 connection (stdlib http.client,
so client overhead stays small and the figure is what the server costs), picks
random symbols, files and directories from the graph, warms up, then times
CALLS_PER_TOOL (default 300) `tools/call` requests per tool and prints p50/p95/max
in milliseconds. A call that returns an error counts as a failure and is reported.
`CRUXE_BENCH_TOOLS=get_node,get_code_context` times only the tools whose labels
start so.

    CRUXE_BENCH_DIFF=1 python3 benches/tool_latency.py CRUXE_BIN CORPUS [CALLS]

times `analyze_impact` with `diff_base: HEAD` instead: CORPUS is copied into a
temporary dir and committed there as a git repository (removed at the end), indexed
and served like CORPUS but with `--no-watch` (the call answers the diff; no
re-index races it), and for each of CALLS random fn/method symbols one comment
line is written into its body on disk, `analyze_impact {"diff_base": "HEAD"}`
is timed, and the file is restored (`git checkout`). An answer whose `changed`
has no symbol of the edited file counts as a failure.
"""

import http.client
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    cruxe, corpus = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    diff = os.environ.get("CRUXE_BENCH_DIFF") == "1"
    data = tempfile.mkdtemp(prefix="cruxe-bench-")
    copy = git_copy(corpus) if diff else None
    root = copy or corpus
    try:
        t = time.time()
        subprocess.run([cruxe, "index", root, "--data", data, "--repo", "bench", "--ref", "bench"],
                       check=True, stderr=subprocess.DEVNULL)
        print(f"indexed in {time.time() - t:.1f} s", file=sys.stderr)
        server, host, port = start_server(cruxe, [root, "--data", data, "--repo", "bench",
                                                  "--ref", "bench", *(["--no-watch"] if diff else [])])
        try:
            run_diff(host, port, n, root) if diff else run(host, port, n)
            print(f"server RSS after the run: {rss_mib(server.pid)} MiB")
        finally:
            server.kill()
    finally:
        if copy:
            shutil.rmtree(os.path.dirname(copy), ignore_errors=True)


def git_copy(corpus):
    """CORPUS copied into a temporary dir and committed there as a git repository."""
    t = time.time()
    copy = os.path.join(tempfile.mkdtemp(prefix="cruxe-bench-git-"), "corpus")
    shutil.copytree(corpus, copy, symlinks=True)
    git = ["git", "-C", copy]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
                    "commit", "-q", "--no-verify", "--no-gpg-sign", "-m", "bench"], check=True)
    # Refreshes the index's stat data, as a user's `git status` would have.
    subprocess.run([*git, "status", "--porcelain"], check=True, stdout=subprocess.DEVNULL)
    print(f"git copy made in {time.time() - t:.1f} s", file=sys.stderr)
    return copy


def start_server(cruxe, args):
    server = subprocess.Popen([cruxe, "serve", *args, "--listen", "127.0.0.1:0"],
                              stderr=subprocess.PIPE, text=True)
    addr = None
    for line in server.stderr:
        if "serving MCP at http://" in line:
            addr = line.split("http://")[1].strip().removesuffix("/mcp")
            break
    import threading
    # CRUXE_BENCH_SERVER_LOG=file keeps the server's log (with CRUXE_LOG=cruxe=debug:
    # where each change's time went).
    log_path = os.environ.get("CRUXE_BENCH_SERVER_LOG")
    log = open(log_path, "a", buffering=1) if log_path else None  # line-buffered: the run ends with a kill
    threading.Thread(target=lambda: [log and log.write(l) for l in server.stderr], daemon=True).start()
    host, port = addr.rsplit(":", 1)
    return server, host, int(port)


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(next(l for l in f if l.startswith("VmRSS")).split()[1]) // 1024


class Session:
    def __init__(self, host, port):
        self.conn = http.client.HTTPConnection(host, port)
        self.sid = None
        self.next_id = 0

    def post(self, message):
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        }
        if self.sid:
            headers["Mcp-Session-Id"] = self.sid
        self.conn.request("POST", "/mcp", json.dumps(message), headers)
        resp = self.conn.getresponse()
        body = resp.read().decode()
        self.sid = resp.getheader("mcp-session-id") or self.sid
        for line in body.splitlines():
            if line.startswith("data: {"):
                return json.loads(line[6:])
        return None

    def request(self, method, params):
        self.next_id += 1
        return self.post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})

    def call(self, tool, args):
        reply = self.request("tools/call", {"name": tool, "arguments": args})
        result = reply.get("result", {})
        return result.get("structuredContent"), bool(result.get("isError"))


def query_of(row):
    """A search query an agent might type: the words of a symbol's name and of its
    qualified name's parent segment (`jwt validate token`)."""
    qn = row[3].replace("::", " ").replace(".", " ").replace(":", " ").replace("/", " ").split()
    return " ".join(qn[-2:]) if len(qn) > 1 else row[0]


def connect(host, port):
    s = Session(host, port)
    s.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "bench", "version": "1"}})
    s.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return s


def wait_ready(s):
    while True:
        status, _ = s.call("index_status", {})
        if all(r["indexing_status"] == "ready" for r in status["repos"]):
            return status
        time.sleep(0.2)


def graph_sample(s):
    syms, _ = s.call("run_cypher", {"query": "MATCH (s:Symbol) WHERE s.repo = $repo AND s.ref = $ref "
                                    "RETURN s.name, s.path, s.kind, s.qualified_name", "limit": 10000})
    files, _ = s.call("run_cypher", {"query": "MATCH (f:File) WHERE f.repo = $repo AND f.ref = $ref "
                                     "RETURN f.path", "limit": 10000})
    file_paths = [r[0] for r in files["rows"]]
    dirs = sorted({p.rsplit("/", 1)[0] for p in file_paths if "/" in p})
    return syms["rows"], dirs


def run(host, port, n):
    s = connect(host, port)
    status = wait_ready(s)
    counts = status["repos"][0]["refs"][0]
    print(f"corpus: {counts['files']} files, {counts['symbols']} symbols", file=sys.stderr)

    rng = random.Random(7)
    sym_rows, dirs = graph_sample(s)
    picks = [rng.choice(sym_rows) for _ in range(n)]
    # The warm-up's own symbols (after the timed ones), from another generator.
    warm = random.Random(8)
    picks += [warm.choice(sym_rows) for _ in range(50)]
    tools = {
        "get_symbol_hierarchy": lambda i: {"symbol_name": picks[i][0], "path": picks[i][1]},
        "get_symbol_hierarchy (descendants)": lambda i: {"symbol_name": picks[i][0], "path": picks[i][1],
                                                         "direction": "descendants"},
        "find_related_symbols": lambda i: {"symbol_name": picks[i][0], "path": picks[i][1], "scope": "module"},
        "locate_symbol": lambda i: {"name": picks[i][0]},
        "get_file_outline": lambda i: {"path": picks[i][1]},
        "explore_tree": lambda i: {"pattern": rng.choice(dirs) if dirs else ".", "max_depth": 2},
        "explore_tree (root)": lambda i: {"pattern": ".", "max_depth": 2},
        "get_node": lambda i: {"node_id": f"file:{picks[i][1]}"},
        "search_code": lambda i: {"query": query_of(picks[i])},
        "get_code_context (breadth)": lambda i: {"query": query_of(picks[i]), "max_tokens": 2000},
        "get_code_context (depth)": lambda i: {"query": query_of(picks[i]), "max_tokens": 4000,
                                               "strategy": "depth"},
        # The call graph: a symbol's uses, its callers 3 calls deep, what a
        # change to it (or to its whole file) can break.
        "find_references": lambda i: {"symbol_name": picks[i][0], "path": picks[i][1]},
        "get_call_graph (callers, depth 3)": lambda i: {"symbol_name": picks[i][0], "path": picks[i][1],
                                                        "depth": 3},
        "get_call_graph (both, depth 3)": lambda i: {"symbol_name": picks[i][0], "path": picks[i][1],
                                                     "depth": 3, "direction": "both"},
        "find_implementations": lambda i: {"symbol_name": picks[i][0], "path": picks[i][1]},
        "analyze_impact (a symbol)": lambda i: {"symbol_name": picks[i][0], "path": picks[i][1]},
        "analyze_impact (a whole file)": lambda i: {"paths": [picks[i][1]]},
        # As test selection asks (`cruxe impact --depth 30`).
        "analyze_impact (a symbol, depth 30)": lambda i: {"symbol_name": picks[i][0], "path": picks[i][1],
                                                          "depth": 30},
        # Ad hoc Cypher runs in a sandboxed worker process behind the plan guard.
        "run_cypher (a file's symbols)": lambda i: {
            "query": "MATCH (f:File)-[:CONTAINS]->(s:Symbol) WHERE f.repo = $repo AND f.ref = $ref "
                     "AND f.path = $path RETURN s.name, s.kind, s.line_start",
            "params": {"path": picks[i][1]}},
    }
    # The first search call builds the ref's search index: time it separately.
    t0 = time.perf_counter()
    s.call("search_code", {"query": "x"})
    print(f"search index built on first use in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    print(f"{'tool':38} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'errors':>7}")
    # CRUXE_BENCH_TOOLS=get_node,get_code_context: only the tools named (by prefix).
    only = [t for t in os.environ.get("CRUXE_BENCH_TOOLS", "").split(",") if t]
    for label, args in tools.items():
        if only and not any(label.startswith(t) for t in only):
            continue
        tool = label.split(" ")[0]
        # Warm-up on other arguments than the timed calls: the server keeps
        # answers for repeated calls, and the figure is the first call's cost.
        for i in range(min(50, n)):
            s.call(tool, args(n + i))
        times, errors = [], 0
        for i in range(n):
            a = args(i)
            t0 = time.perf_counter()
            out, is_error = s.call(tool, a)
            times.append((time.perf_counter() - t0) * 1000)
            # find_implementations of what is no type or method: invalid_input.
            if is_error and out["error"]["code"] not in ("ambiguous_symbol", "invalid_input"):
                errors += 1
                if errors <= 3:
                    print(f"  {tool} {a}: {out['error']}", file=sys.stderr)
        report(label, times, errors)


# A comment line's syntax by file extension (`//` for any other).
COMMENT = {".py": b"#", ".rb": b"#", ".sh": b"#", ".toml": b"#", ".yaml": b"#", ".yml": b"#"}


def run_diff(host, port, n, root):
    """`analyze_impact` of the working tree's diff against HEAD, one comment line
    inserted in one fn or method at a time."""
    s = connect(host, port)
    status = wait_ready(s)
    counts = status["repos"][0]["refs"][0]
    print(f"corpus: {counts['files']} files, {counts['symbols']} symbols", file=sys.stderr)
    rows, _ = s.call("run_cypher", {"query": "MATCH (s:Symbol) WHERE s.repo = $repo AND s.ref = $ref "
                                    "AND s.kind IN ['fn', 'method'] AND s.line_end > s.line_start "
                                    "RETURN s.name, s.path, s.line_start, s.line_end", "limit": 10000})
    rows = rows["rows"]
    rng = random.Random(7)
    picks = [rng.choice(rows) for _ in range(n)]
    warm = random.Random(8)
    warmup = [warm.choice(rows) for _ in range(min(20, n))]

    def one(row):
        """Edits row's file, times the call, restores the file: (ms, failure)."""
        name, path, line_start, _ = row
        full = os.path.join(root, path)
        with open(full, "rb") as f:
            lines = f.read().splitlines(keepends=True)
        eol = b"\r\n" if lines[line_start - 1].endswith(b"\r\n") else b"\n"
        comment = COMMENT.get(os.path.splitext(path)[1], b"//") + b" bench" + eol
        with open(full, "wb") as f:
            f.write(b"".join(lines[:line_start] + [comment] + lines[line_start:]))
        try:
            t0 = time.perf_counter()
            out, is_error = s.call("analyze_impact", {"diff_base": "HEAD"})
            ms = (time.perf_counter() - t0) * 1000
        finally:
            if subprocess.run(["git", "-C", root, "checkout", "-q", "--", path]).returncode:
                with open(full, "wb") as f:  # a file git does not track
                    f.write(b"".join(lines))
        if is_error:
            return ms, f"{name} in {path}: {out['error']}"
        if not any(c["path"] == path for c in out["changed"]):
            return ms, f"{name} in {path}: changed = {[(c['name'], c['path']) for c in out['changed']]}"
        return ms, None

    for row in warmup:
        one(row)
    times, errors = [], 0
    for row in picks:
        ms, failure = one(row)
        times.append(ms)
        if failure:
            errors += 1
            if errors <= 3:
                print(f"  analyze_impact {failure}", file=sys.stderr)
    print(f"{'tool':38} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'errors':>7}")
    report("analyze_impact (diff_base, one file)", times, errors)


def report(label, times, errors):
    """One table row: p50, p95 and max of `times` (ms), and the error count."""
    times = sorted(times)
    p50 = statistics.median(times)
    p95 = times[int(len(times) * 0.95) - 1]
    print(f"{label:38} {p50:8.2f} {p95:8.2f} {times[-1]:8.2f} {errors:7d}")


if __name__ == "__main__":
    main()
