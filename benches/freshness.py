"""How long a change to the working tree takes to reach the index: as a `cruxe index`
process (the CLI), and as save -> visible in a watching `cruxe serve`.

    python3 benches/freshness.py CRUXE_BIN CORPUS [CHANGES_PER_KIND]

CORPUS is copied to a temporary directory and indexed. Then, per kind of change,
CHANGES_PER_KIND (default 20) changes, half in the most imported packages/modules
of the corpus (the fan-in that made adding a file to Go's `strings` cost a minute)
and half in random files:

- edit:   a function appended to a file
- add:    a new file with a function, beside an existing one
- delete: a file removed (one that defines a name nothing else defines)
- rename: a file moved to a new name in its directory
- branch: hundreds of files at once, as a branch switch does: 200 edited,
          50 added, 50 deleted (3 times)

CLI: each change is made, then `cruxe index` runs (wall time of the process).
Serve: each change is made while `cruxe serve` watches, and get_symbol_hierarchy is
polled every 10 ms until the answer shows it (the new name found, the deleted name
gone, the renamed file's path). Prints p50/p95/max per kind.
"""

import datetime
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tool_latency import connect, start_server, wait_ready  # noqa: E402

EXT = {".go": "go", ".py": "python", ".rs": "rust", ".ts": "typescript"}


def main():
    cruxe, corpus = sys.argv[1], sys.argv[2]
    per_kind = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    work = tempfile.mkdtemp(prefix="cruxe-fresh-")
    try:
        bench(cruxe, corpus, per_kind, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def bench(cruxe, corpus, per_kind, work):
    repo = os.path.join(work, "repo")
    shutil.copytree(corpus, repo, symlinks=True, ignore=shutil.ignore_patterns(".git", ".cruxe"))
    data = os.path.join(work, "data")
    args = ["--data", data, "--repo", "bench", "--ref", "bench"]
    t = time.perf_counter()
    out = subprocess.run([cruxe, "index", repo, *args], check=True, capture_output=True, text=True)
    print(f"full index: {time.perf_counter() - t:.1f} s  ({out.stdout.strip().splitlines()[-1]})")
    edges = cypher(cruxe, data, "MATCH (:File)-[i:IMPORTS]->() RETURN count(i) AS n")[0]["n"]
    print(f"import edges: {edges}")
    plan = Plan(cruxe, data, repo, per_kind)
    results = {}
    # CRUXE_BENCH_MODES=serve measures one side alone (default: cli,serve).
    modes = os.environ.get("CRUXE_BENCH_MODES", "cli,serve").split(",")
    for mode in ("cli", "serve"):
        results[mode] = {}
        if mode not in modes:
            continue
        changes = plan.changes(mode)
        # CRUXE_BENCH_KINDS=delete,rename measures some kinds alone (the
        # changes picked are the same as in a whole run).
        kinds = os.environ.get("CRUXE_BENCH_KINDS")
        if kinds:
            changes = [c for c in changes if c[0] in kinds.split(",")]
        if mode == "cli":
            results[mode] = run_cli(cruxe, repo, args, changes)
        else:
            results[mode] = run_serve(cruxe, repo, args, changes)
    print()
    print("| change | `cruxe index` p50 / p95 / max | `cruxe serve` save -> visible p50 / p95 / max |")
    print("|---|---|---|")
    for kind in ("edit", "add", "delete", "rename", "branch"):
        cells = [summary(sorted(results[mode].get(kind, []))) for mode in ("cli", "serve")]
        n = max(len(results[m].get(kind, [])) for m in ("cli", "serve"))
        print(f"| {kind} ({n}) | {cells[0]} | {cells[1]} |")


def summary(ms):
    if not ms:
        return "-"
    p = lambda q: ms[min(len(ms) - 1, max(0, int(round(len(ms) * q)) - 1))]
    fmt = lambda v: f"{v / 1000:.2f} s" if v >= 1000 else f"{v:.0f} ms"
    return f"{fmt(p(0.5))} / {fmt(p(0.95))} / {fmt(ms[-1])}"


def cypher(cruxe, data, query):
    out = subprocess.run([cruxe, "cypher", "--data", data, "--json", "--limit", "100000", query],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


class Plan:
    """Which files the changes touch: half in the most imported places."""

    def __init__(self, cruxe, data, repo, per_kind):
        self.repo, self.per_kind = repo, per_kind
        self.rng = random.Random(21)
        files = [r["p"] for r in cypher(cruxe, data, "MATCH (f:File) RETURN f.path AS p")
                 if os.path.splitext(r["p"])[1] in EXT and not r["p"].endswith("_test.go")
                 and "/testdata/" not in r["p"] and "/vendor/" not in r["p"]]
        self.files = sorted(files)
        # The targets most imported: a package dir (Go), a file, or a symbol's file.
        top = cypher(cruxe, data,
                     "MATCH (:File)-[:IMPORTS]->(t) WHERE label(t) <> 'External' "
                     "RETURN label(t) AS l, t.path AS p, count(*) AS n ORDER BY n DESC LIMIT 400")
        popular_dirs = []
        for r in top:
            d = r["p"] if r["l"] == "Package" else os.path.dirname(r["p"])
            if d not in popular_dirs:
                popular_dirs.append(d)
        by_dir = {}
        for f in self.files:
            by_dir.setdefault(os.path.dirname(f), []).append(f)
        self.popular_all = [d for d in popular_dirs if len(by_dir.get(d, [])) >= 3]
        self.popular = self.popular_all[:10]
        self.by_dir = by_dir
        print("most imported: " + ", ".join(self.popular[:10]))
        # Names defined exactly once, by file: a deleted or renamed file is seen
        # through one of them.
        unique = cypher(cruxe, data,
                        "MATCH (s:Symbol) WITH s.name AS n, count(*) AS c, min(s.path) AS p "
                        "WHERE c = 1 RETURN n, p")
        self.unique = {}
        for r in unique:
            if r["n"].isidentifier():
                self.unique.setdefault(r["p"], r["n"])
        self.used = set()
        self.counter = 0

    def pick(self, popular, need_unique=False):
        for attempt in range(10000):
            # Both modes change files of their own: when the most imported
            # places run out of them, the next most imported join.
            if popular and attempt and attempt % 1000 == 0:
                self.popular = self.popular_all[:len(self.popular) + 10]
            if popular:
                d = self.popular[self.rng.randrange(len(self.popular))]
                f = self.rng.choice(self.by_dir[d])
            else:
                f = self.rng.choice(self.files)
            if f in self.used or (need_unique and f not in self.unique):
                continue
            if not os.path.exists(os.path.join(self.repo, f)):
                continue
            self.used.add(f)
            return f
        raise RuntimeError("no file left to change")

    def name(self):
        self.counter += 1
        return f"cruxe_fresh_{self.counter}"

    def changes(self, mode):
        """Per kind, a list of changes; each is a list of (op, path, arg) and
        what shows it: ("found", name) / ("gone", name) / ("at", name, path)."""
        out = []
        for kind in ("edit", "add", "delete", "rename"):
            for i in range(self.per_kind):
                popular = i % 2 == 0 and self.popular
                if kind == "edit":
                    f, n = self.pick(popular), self.name()
                    out.append((kind, [("append", f, n)], [("found", n)]))
                elif kind == "add":
                    f, n = self.pick(popular), self.name()
                    new = os.path.join(os.path.dirname(f), f"{n}{os.path.splitext(f)[1]}")
                    out.append((kind, [("create", new, (f, n))], [("found", n)]))
                elif kind == "delete":
                    f = self.pick(popular, need_unique=True)
                    out.append((kind, [("delete", f, None)], [("gone", self.unique[f])]))
                else:
                    f = self.pick(popular, need_unique=True)
                    base = os.path.basename(f)
                    new = os.path.join(os.path.dirname(f), f"moved_{self.counter}_{base}")
                    self.counter += 1
                    out.append((kind, [("rename", f, new)], [("at", self.unique[f], new)]))
        # 200 + 50 + 50 files per switch (fewer in a small corpus).
        edits, adds, deletes = (max(1, int(n * min(1.0, len(self.files) / 3000)))
                                for n in (200, 50, 50))
        for _ in range(3):
            ops, checks = [], []
            for _ in range(edits):
                f, n = self.pick(False), self.name()
                ops.append(("append", f, n))
            checks.append(("found", n))
            for _ in range(adds):
                f, n = self.pick(False), self.name()
                ops.append(("create", os.path.join(os.path.dirname(f), f"{n}{os.path.splitext(f)[1]}"), (f, n)))
            checks.append(("found", n))
            for _ in range(deletes):
                f = self.pick(False, need_unique=True)
                ops.append(("delete", f, None))
            checks.append(("gone", self.unique[f]))
            out.append(("branch", ops, checks))
        return out


def definition(lang, name, sibling_text):
    if lang == "go":
        pkg = next((l.split()[1] for l in sibling_text.splitlines() if l.startswith("package ")), "main")
        return f"package {pkg}\n\nfunc {name}() int {{ return 1 }}\n"
    return {"python": f"def {name}():\n    return 1\n",
            "rust": f"pub fn {name}() -> u32 {{ 1 }}\n",
            "typescript": f"export function {name}(): number {{ return 1; }}\n"}[lang]


def apply(repo, ops):
    for op, path, arg in ops:
        full = os.path.join(repo, path)
        lang = EXT[os.path.splitext(path)[1]]
        if op == "append":
            text = definition(lang, arg, "")
            if lang == "go":
                text = text.split("\n", 2)[2]
            with open(full, "a") as f:
                f.write("\n" + text)
        elif op == "create":
            sibling, name = arg
            with open(os.path.join(repo, sibling), errors="replace") as f:
                head = f.read(4096)
            with open(full, "w") as f:
                f.write(definition(lang, name, head))
        elif op == "delete":
            os.remove(full)
        elif op == "rename":
            os.rename(full, os.path.join(repo, arg))


def what(ops):
    """The change, for the log: its one path, or how many files it touched."""
    return ops[0][1] if len(ops) == 1 else f"{len(ops)} files"


def run_cli(cruxe, repo, args, changes):
    # CRUXE_BENCH_LOG=FILE keeps each run's log (run with CRUXE_LOG=cruxe=debug
    # for its phases), headed by the change.
    log = os.environ.get("CRUXE_BENCH_LOG")
    times = {}
    for kind, ops, _ in changes:
        apply(repo, ops)
        t = time.perf_counter()
        out = subprocess.run([cruxe, "index", repo, *args], check=True, capture_output=True, text=True)
        times.setdefault(kind, []).append((time.perf_counter() - t) * 1000)
        print(f"  cli {kind}: {times[kind][-1]:.0f} ms  {what(ops)}", file=sys.stderr)
        if log:
            with open(log, "a") as f:
                f.write(f"=== cli {kind} {times[kind][-1]:.0f} ms {what(ops)}\n{out.stderr}")
    return times


def shown(s, check):
    out, is_error = s.call("get_symbol_hierarchy", {"symbol_name": check[1]})
    if check[0] == "found":
        return not is_error
    if check[0] == "gone":
        return is_error
    return not is_error and check[2] in json.dumps(out)


def run_serve(cruxe, repo, args, changes):
    server, host, port = start_server(cruxe, [repo, *args])
    times = {}
    try:
        s = connect(host, port)
        wait_ready(s)
        pause = random.Random(12)
        for kind, ops, checks in changes:
            while s.call("index_status", {})[0]["metadata"]["freshness_status"] != "fresh":
                time.sleep(0.01)
            # Changes land in every phase of the server's work after a run.
            time.sleep(pause.uniform(0.1, 1.5))
            t = time.perf_counter()
            # When it was made, to find it in the server's log (UTC, as the log).
            made = datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M:%S.%f")[:-3]
            apply(repo, ops)
            for check in checks:
                while not shown(s, check):
                    if time.perf_counter() - t > 300:
                        raise RuntimeError(f"{kind}: {check} never shown")
                    time.sleep(0.01)
            times.setdefault(kind, []).append((time.perf_counter() - t) * 1000)
            print(f"  serve {kind}: {times[kind][-1]:.0f} ms  {what(ops)}  (made {made})",
                  file=sys.stderr)
    finally:
        server.kill()
    return times


if __name__ == "__main__":
    main()
