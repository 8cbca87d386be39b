#!/usr/bin/env python3
"""Second-opinion Python oracle: ask pyright-langserver (LSP, stdio) for
textDocument/definition at every call site's callee-name position that
py_oracle.py recorded, and compare with jedi.

Usage:
  venv/bin/python pyright_xcheck.py ROOT JEDI_EDGES.jsonl [--out xcheck.jsonl]

Needs `pyright-langserver` on PATH (pip install pyright; it bundles the JS and
runs it with the system `node`).
"""
import argparse
import re
import collections
import json
import os
import subprocess
import sys
import threading
import time
from urllib.parse import quote, unquote, urlparse


class LSP:
    def __init__(self, cmd):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.pending = {}
        self.lock = threading.Lock()
        self.t = threading.Thread(target=self._reader, daemon=True)
        self.t.start()

    def _send(self, msg):
        b = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b)
        self.p.stdin.flush()

    def _reader(self):
        f = self.p.stdout
        while True:
            hdr = {}
            while True:
                line = f.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                k, v = line.split(b":", 1)
                hdr[k.lower()] = v.strip()
            body = json.loads(f.read(int(hdr[b"content-length"])))
            if "id" in body and "method" in body:  # server->client request
                res = None
                if body["method"] == "workspace/configuration":
                    res = [None for _ in body["params"]["items"]]
                self._send({"jsonrpc": "2.0", "id": body["id"], "result": res})
            elif "id" in body:
                with self.lock:
                    ev, slot = self.pending.pop(body["id"])
                slot.append(body)
                ev.set()

    def request(self, method, params):
        with self.lock:
            self.next_id += 1
            i = self.next_id
            ev, slot = threading.Event(), []
            self.pending[i] = (ev, slot)
        self._send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        return ev, slot

    def call(self, method, params, timeout=120):
        ev, slot = self.request(method, params)
        if not ev.wait(timeout):
            raise TimeoutError(method)
        return slot[0]

    def notify(self, method, params):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})


def uri(path):
    return "file://" + quote(os.path.abspath(path))


def byte_to_utf16(line_b, bcol):
    s = line_b[:bcol].decode("utf-8", errors="replace")
    return len(s.encode("utf-16-le")) // 2


DEF_HDR = re.compile(r"^\s*(async\s+)?(def|class)\s+$")
_src_cache = {}


def is_def_location(path, line0, char):
    """True if the LSP location points at the name of a def/class header.
    (pyright's definition of a parameter/variable points elsewhere.)"""
    if path not in _src_cache:
        try:
            _src_cache[path] = open(path, encoding="utf-8").read().split("\n")
        except OSError:
            _src_cache[path] = None
    src = _src_cache[path]
    if src is None or line0 >= len(src):
        return False
    return bool(DEF_HDR.match(src[line0][:char]))  # char: utf-16, ok for ASCII headers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("edges")
    ap.add_argument("--out", default=None)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    recs = [json.loads(l) for l in open(args.edges)]

    t0 = time.time()
    lsp = LSP(["pyright-langserver", "--stdio"])
    lsp.call("initialize", {
        "processId": os.getpid(), "rootUri": uri(root),
        "workspaceFolders": [{"uri": uri(root), "name": "root"}],
        "capabilities": {"textDocument": {"definition": {"linkSupport": False}}},
    })
    lsp.notify("initialized", {})
    files = {}
    for r in recs:
        p = os.path.join(root, r["caller_path"])
        if p not in files:
            files[p] = open(p, "rb").read()
            lsp.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri(p), "languageId": "python", "version": 1,
                "text": files[p].decode("utf-8")}})
    lines = {p: b.split(b"\n") for p, b in files.items()}

    todo = [r for r in recs if r["status"] != "unsupported"]
    results = {}
    for i in range(0, len(todo), args.batch):
        chunk = todo[i:i + args.batch]
        waits = []
        for r in chunk:
            p = os.path.join(root, r["caller_path"])
            ch = byte_to_utf16(lines[p][r["site_line"] - 1], r["site_col"])
            waits.append((r, lsp.request("textDocument/definition", {
                "textDocument": {"uri": uri(p)},
                "position": {"line": r["site_line"] - 1, "character": ch}})))
        for r, (ev, slot) in waits:
            ev.wait(300)
            res = slot[0].get("result") if slot else None
            if isinstance(res, dict):
                res = [res]
            locs = []
            for loc in res or []:
                u = loc.get("uri") or loc.get("targetUri")
                rng = loc.get("range") or loc.get("targetSelectionRange")
                path = unquote(urlparse(u).path)
                inproj = path.startswith(root + os.sep)
                locs.append({"path": os.path.relpath(path, root) if inproj else path,
                             "line": rng["start"]["line"] + 1, "in_project": inproj,
                             "is_def": is_def_location(path, rng["start"]["line"],
                                                       rng["start"]["character"])})
            results[(r["caller_path"], r["site_line"], r["site_col"])] = locs
    assert len(results) == len(todo), "site keys not unique"
    t_total = time.time() - t0
    try:
        lsp.call("shutdown", None, timeout=10)
        lsp.notify("exit", None)
    except Exception:
        pass
    lsp.p.wait(timeout=10)

    # compare, in-project only (both oracles' targets restricted to ROOT)
    c = collections.Counter()
    out = open(args.out, "w") if args.out else None
    for r in recs:
        key = (r["caller_path"], r["site_line"], r["site_col"])
        locs = results.get(key, [])
        pr = {(l["path"], l["line"]) for l in locs if l["in_project"] and l["is_def"]}
        jd = set()
        if r["callee_in_project"]:
            jd.add((r["callee_path"], r["callee_line"]))
        for a in r.get("alt", []):
            if a["in_project"]:
                jd.add((a["path"], a["line"]))
        # packages that ship foo.pyi next to foo.py: pyright returns both; keep .py
        if any(not p.endswith(".pyi") for p, _ in pr):
            pr = {(p, l) for p, l in pr if not p.endswith(".pyi")}
        if any(not p.endswith(".pyi") for p, _ in jd):
            jd = {(p, l) for p, l in jd if not p.endswith(".pyi")}
        if not pr and not jd:
            c["both_no_project_target"] += 1
            verdict = "none"
        elif pr == jd:
            c["agree"] += 1
            verdict = "agree"
        elif pr & jd:
            c["overlap"] += 1
            verdict = "overlap"
        elif jd and not pr:
            c["jedi_only"] += 1
            verdict = "jedi_only"
        elif pr and not jd:
            c["pyright_only"] += 1
            verdict = "pyright_only"
        else:
            c["disagree"] += 1
            verdict = "disagree"
        if out:
            out.write(json.dumps({"site": key, "verdict": verdict, "jedi": sorted(jd),
                                  "pyright": sorted(pr), "jedi_status": r["status"]}) + "\n")
    stats = dict(c)
    stats["sites_queried"] = len(todo)
    stats["pyright_total_s"] = round(t_total, 2)
    stats["pyright_s_per_1k"] = round(1000 * t_total / max(1, len(todo)), 2)
    print(json.dumps(stats, indent=1))


if __name__ == "__main__":
    main()
