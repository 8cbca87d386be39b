#!/usr/bin/env python3
"""Turn one corpus's raw oracle output into the common per-site format.

    normalize_oracle.py LANG CORPUS_DIR        (LANG: rust | go | py | ts)

Reads CORPUS_DIR/oracle.raw.jsonl (+ oracle.nonedges.jsonl for Go, oracle.xcheck.jsonl
for Python), the sources under CORPUS_DIR/tree, and writes CORPUS_DIR/oracle.jsonl with
one line per call site the oracle saw:

  path, line, col   the callee's name token; 1-based line, 1-based UTF-8 byte column
                    (Rust/Go oracles are 1-based already; Python/TS ones are 0-based)
  token             the identifier at that position in the source ("" if none)
  kind              edge       resolved into the project (targets non-empty)
                    external   resolved, but only to code outside the project
                    unresolved the oracle found nothing (missing module, untyped receiver, ...)
                    nonedge    the oracle proved it is not a call of a definition: builtin,
                               conversion, func value (Go); parameter/variable/signature (py/ts)
                    excluded   not scored: Rust callee_ambiguous (SCIP symbol clash), Python
                               lambdas, callee expressions that are not names
  targets           in-project definitions: [{path, line, name}] (line of the name token;
                    name = the definition's own name, None if the oracle gives none)
  ambiguous         several targets (any of them counts as correct)
  in_macro          Rust: the site is inside a macro's token tree
  caller_line       line of the enclosing fn/def (0/None: top level)
  why               detail for nonedge/excluded/unresolved, xcheck verdict for Python
Also writes CORPUS_DIR/oracle.summary.json (counts by kind).
"""
import collections
import json
import os
import re
import sys

IDENT = re.compile(rb"[A-Za-z_$\x80-\xff][A-Za-z0-9_$\x80-\xff]*")


class Src:
    def __init__(self, root):
        self.root, self.cache = root, {}

    def line(self, path, line):
        if path not in self.cache:
            try:
                with open(os.path.join(self.root, path), "rb") as f:
                    self.cache[path] = f.read().split(b"\n")
            except OSError:
                self.cache[path] = []
        ls = self.cache[path]
        return ls[line - 1] if 0 < line <= len(ls) else b""

    def token(self, path, line, col):
        m = IDENT.match(self.line(path, line), col - 1)
        return m.group(0).decode("utf-8", "replace") if m else ""


def rel_inside(p):
    return bool(p) and not os.path.isabs(p)


def rust_name(r):
    m = re.search(r"(`[^`]*`|[A-Za-z0-9_]+)\([^)]*\)\.$", r.get("callee") or "")
    if m:
        return m.group(1).strip("`")
    return r.get("callee_name")


def go_name(r):
    ids = re.findall(r"[A-Za-z_]\w*", re.sub(r"\[[^\]]*\]", "", r.get("callee") or ""))
    return ids[-1] if ids else r.get("callee_name")


def qual_name(q, lang):
    if not q:
        return None
    if lang == "ts":
        q = q.split(":")[-1]
    n = q.split(".")[-1]
    return None if n.startswith("<") else n


def normalize(lang, d):
    src = Src(os.path.join(d, "tree"))
    sites = {}

    def add(path, line, col, rec):
        key = (path, line, col)
        old = sites.get(key)
        if old is None:
            rec.update(path=path, line=line, col=col, token=src.token(path, line, col))
            sites[key] = rec
            return
        # a second record for one site: keep the union of targets
        seen = {(t["path"], t["line"]) for t in old["targets"]}
        for t in rec["targets"]:
            if (t["path"], t["line"]) not in seen:
                old["targets"].append(t)
        if old["targets"]:
            old["kind"] = "edge"
            old["ambiguous"] = len(old["targets"]) > 1

    raw = [json.loads(l) for l in open(os.path.join(d, "oracle.raw.jsonl"))]
    if lang in ("rust", "go"):
        for r in raw:
            inside = rel_inside(r.get("callee_path"))
            rec = {"caller_line": r.get("caller_line"), "in_macro": bool(r.get("in_macro")),
                   "targets": [], "ambiguous": False, "why": None}
            if lang == "rust" and r.get("callee_ambiguous"):
                rec.update(kind="excluded", why="callee_ambiguous")
            elif inside:
                name = rust_name(r) if lang == "rust" else go_name(r)
                rec["targets"] = [{"path": r["callee_path"], "line": r["callee_line"], "name": name}]
                rec["kind"] = "edge"
                rec["why"] = r.get("callee_kind")
            else:
                rec["kind"] = "external"
            add(r["site_path"], r["site_line"], r["site_col"], rec)
        ne = os.path.join(d, "oracle.nonedges.jsonl")
        if lang == "go" and os.path.exists(ne):
            for l in open(ne):
                r = json.loads(l)
                k = "unresolved" if r["kind"] == "unresolved" else "nonedge"
                add(r["site_path"], r["site_line"], r["site_col"],
                    {"caller_line": None, "in_macro": False, "targets": [], "ambiguous": False,
                     "kind": k, "why": r["kind"]})
    else:
        verdicts = {}
        xc = os.path.join(d, "oracle.xcheck.jsonl")
        if os.path.exists(xc):
            for l in open(xc):
                x = json.loads(l)
                verdicts[tuple(x["site"])] = x["verdict"]
        for r in raw:
            cands = []
            if r.get("callee_path") is not None:
                cands.append({"path": r["callee_path"], "line": r["callee_line"],
                              "qualname": r.get("callee_qualname"), "kind": r.get("callee_kind"),
                              "in_project": r.get("callee_in_project")})
            cands += r.get("alt") or []
            inproj = [c for c in cands if c.get("in_project") and rel_inside(c["path"])]
            # a stub next to its module (.pyi beside .py): keep the module
            if any(not c["path"].endswith(".pyi") for c in inproj):
                inproj = [c for c in inproj if not c["path"].endswith(".pyi")]
            st = r["status"]
            rec = {"caller_line": r.get("caller_line"), "in_macro": False, "targets": [],
                   "ambiguous": False, "why": None}
            if lang == "py":
                rec["why"] = verdicts.get((r["caller_path"], r["site_line"], r["site_col"]))
            if st in ("resolved", "ambiguous") and inproj:
                if all(c.get("kind") == "lambda" for c in inproj):
                    rec.update(kind="excluded", why="lambda")
                else:
                    rec["kind"] = "edge"
                    rec["targets"] = [{"path": c["path"], "line": c["line"],
                                       "name": qual_name(c.get("qualname"), lang)}
                                      for c in inproj if c.get("kind") != "lambda"]
                    rec["ambiguous"] = len(rec["targets"]) > 1
            elif st in ("resolved", "ambiguous"):
                rec["kind"] = "external"
            elif st == "non_def":
                rec.update(kind="nonedge", why=r.get("callee_kind") or "non_def")
            elif st == "unsupported":
                rec.update(kind="excluded", why="unsupported callee expression")
            else:
                rec["kind"] = "unresolved"
            add(r["caller_path"], r["site_line"], r["site_col"] + 1, rec)

    out = sorted(sites.values(), key=lambda s: (s["path"], s["line"], s["col"]))
    with open(os.path.join(d, "oracle.jsonl"), "w") as f:
        for s in out:
            f.write(json.dumps(s, sort_keys=True) + "\n")
    summ = collections.Counter(s["kind"] for s in out)
    summ["sites"] = len(out)
    summ["files"] = len({s["path"] for s in out})
    summ["in_macro_edges"] = sum(1 for s in out if s["kind"] == "edge" and s["in_macro"])
    summ["ambiguous_edges"] = sum(1 for s in out if s["kind"] == "edge" and s["ambiguous"])
    summ["token_mismatch"] = sum(1 for s in out if s["kind"] == "edge" and s["targets"][0]["name"]
                                 and s["token"] != s["targets"][0]["name"])
    with open(os.path.join(d, "oracle.summary.json"), "w") as f:
        json.dump(dict(summ), f, indent=1, sort_keys=True)
    print(os.path.basename(d.rstrip("/")), json.dumps(dict(summ), sort_keys=True), file=sys.stderr)


if __name__ == "__main__":
    normalize(sys.argv[1], sys.argv[2])
