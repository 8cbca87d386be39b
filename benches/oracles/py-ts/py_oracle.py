#!/usr/bin/env python3
"""Python call-graph oracle: stdlib `ast` finds call sites, jedi resolves callees.

Usage:
  venv/bin/python py_oracle.py ROOT [--out edges.jsonl] [--stats stats.json]
                               [--limit-files N] [--no-infer-fallback]

ROOT is the directory that is put on sys.path (i.e. the directory *containing*
the top-level package), so `import pkg` inside the project resolves to the copy
under ROOT.

One JSON line per call site (ast.Call), resolved or not:
  caller_path      path relative to ROOT of the file containing the call
  caller_line      1-based line of the enclosing def/class (the `def`/`class`
                   keyword line, decorators excluded, like ast); for module-level
                   code: 0
  caller_qualname  dotted module + enclosing def/class chain, e.g.
                   "dateutil.parser._parser.parser.parse"; module level:
                   "<module>" appended to the module name
  callee_path      definition file (relative to ROOT if inside it, else absolute)
                   or null
  callee_line      1-based line of the callee's `def`/`class` name or null
  callee_qualname  for defs inside ROOT: dotted qualname computed from ast (same
                   scheme as caller_qualname); else jedi's full_name
  callee_kind      "function" | "class" | ... (jedi type) or null
  callee_in_project  bool: definition lies under ROOT
  site_line        1-based line of the callee *name token* that was queried:
                   `foo` in foo(), `baz` in a.b.baz(), i.e. tree-sitter's
                   call.function (identifier) or call.function.attribute
  site_col         0-based UTF-8 *byte* column of that token (ast columns and
                   tree-sitter start_point columns are both byte offsets).
                   The name token is unique per call; the Call node start is
                   NOT (a.f().g() has two calls starting at `a`).
                   For "unsupported" callee expressions (f()(), x[0](), (lambda:0)())
                   the position is the end of the callee expression (where `(`
                   normally is).
  call_line/call_col  start of the whole Call node (1-based line, byte col)
  status           "resolved" | "ambiguous" | "unresolved" | "non_def" |
                   "unsupported" (callee expr is not Name/Attribute, e.g. f()())
  n_defs           number of distinct definitions returned
  alt              for ambiguous: the other definitions [{path,line,qualname,kind}]
"""
import argparse
import ast
import json
import os
import sys
import time

import jedi

DEF_KINDS = {"function", "class"}


def module_name(root, path):
    rel = os.path.relpath(path, root)[:-3]
    parts = rel.split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


class Collector(ast.NodeVisitor):
    """Collect call sites with enclosing scope, and def positions -> qualname."""

    def __init__(self, modname):
        self.modname = modname
        self.stack = []  # list of (name, lineno)
        self.calls = []  # (call_node, caller_qualname, caller_line)
        self.defs = {}  # (line, col_of_name_char) -> qualname ; keyed by line

    def _qual(self, extra=None):
        parts = [self.modname] + [n for n, _ in self.stack]
        if extra:
            parts.append(extra)
        return ".".join(p for p in parts if p)

    def _scope(self, node):
        qual = self._qual(node.name)
        self.defs.setdefault(node.lineno, []).append(qual)
        # decorators, default args, bases are evaluated in the enclosing scope
        for d in node.decorator_list:
            self.visit(d)
        if isinstance(node, ast.ClassDef):
            for b in node.bases:
                self.visit(b)
            for k in node.keywords:
                self.visit(k)
        else:
            self.visit(node.args)
            if node.returns:
                self.visit(node.returns)
        self.stack.append((node.name, node.lineno))
        for stmt in node.body:
            self.visit(stmt)
        self.stack.pop()

    visit_FunctionDef = _scope
    visit_AsyncFunctionDef = _scope
    visit_ClassDef = _scope

    def visit_Call(self, node):
        if self.stack:
            cq, cl = self._qual(), self.stack[-1][1]
        else:
            cq, cl = self._qual("<module>"), 0
        self.calls.append((node, cq, cl))
        self.generic_visit(node)


def byte_to_char_col(line_bytes, byte_col):
    return len(line_bytes[:byte_col].decode("utf-8", errors="replace"))


def query_pos(func):
    """(line, byte_col) of the identifier token to ask jedi about, or None."""
    if isinstance(func, ast.Name):
        return func.lineno, func.col_offset
    if isinstance(func, ast.Attribute):
        # attribute name is the last token of the Attribute node
        return func.end_lineno, func.end_col_offset - len(func.attr.encode("utf-8"))
    return None


def resolve(script, ln, ccol, args, stats, path):
    try:
        names = script.goto(ln, ccol, follow_imports=True)
        defs = [n for n in names if n.type in DEF_KINDS]
        if not defs and not args.no_infer_fallback:
            # e.g. `cb = foo; cb()` or instance attributes bound to functions
            inf = [n for n in script.infer(ln, ccol) if n.type in DEF_KINDS]
            if inf:
                stats["via_infer"] += 1
            defs = inf
    except Exception as e:  # jedi internal errors happen occasionally
        print(f"jedi error {path}:{ln}:{ccol}: {e!r}", file=sys.stderr)
        stats["errors"] += 1
        names, defs = [], []
    return names, defs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--out", default="-")
    ap.add_argument("--stats", default=None)
    ap.add_argument("--limit-files", type=int, default=0)
    ap.add_argument("--no-infer-fallback", action="store_true")
    ap.add_argument("--no-fresh-retry", action="store_true",
                    help="don't retry failed sites with a fresh jedi.Script")
    ap.add_argument("--fresh-always", action="store_true",
                    help="new jedi.Script for every call site (slow, order-independent)")
    args = ap.parse_args()

    root = os.path.abspath(args.root)
    files = []
    for d, dirs, fs in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in ("__pycache__", ".git", "venv", ".venv"))
        for f in sorted(fs):
            if f.endswith(".py"):
                files.append(os.path.join(d, f))
    if args.limit_files:
        files = files[: args.limit_files]

    project = jedi.Project(root)

    # pass 1: ast index of all project defs (path -> {line: [qualnames]})
    t0 = time.time()
    parsed = {}
    def_index = {}
    for path in files:
        src_bytes = open(path, "rb").read()
        try:
            tree = ast.parse(src_bytes, filename=path)
        except SyntaxError as e:
            print(f"skip {path}: {e}", file=sys.stderr)
            continue
        c = Collector(module_name(root, path))
        c.visit(tree)
        parsed[path] = (src_bytes, c)
        def_index[path] = c.defs
    t_ast = time.time() - t0

    out = sys.stdout if args.out == "-" else open(args.out, "w")
    stats = {"files": len(parsed), "sites": 0, "resolved": 0, "ambiguous": 0,
             "unresolved": 0, "non_def": 0, "unsupported": 0, "errors": 0,
             "in_project": 0, "via_infer": 0, "via_fresh_retry": 0}
    t1 = time.time()
    for path, (src_bytes, coll) in parsed.items():
        code = src_bytes.decode("utf-8")
        lines_b = src_bytes.split(b"\n")
        script = jedi.Script(code, path=path, project=project)
        for call, cq, cl in coll.calls:
            stats["sites"] += 1
            rec = {
                "caller_path": os.path.relpath(path, root),
                "caller_line": cl,
                "caller_qualname": cq,
                "callee_path": None, "callee_line": None, "callee_qualname": None,
                "callee_kind": None, "callee_in_project": False,
                "site_line": None, "site_col": None,
                "call_line": call.lineno, "call_col": call.col_offset,
                "status": None, "n_defs": 0,
            }
            qp = query_pos(call.func)
            if qp is None:
                rec["site_line"] = call.func.end_lineno
                rec["site_col"] = call.func.end_col_offset
                rec["status"] = "unsupported"
                stats["unsupported"] += 1
                out.write(json.dumps(rec) + "\n")
                continue
            ln, bcol = qp
            rec["site_line"], rec["site_col"] = ln, bcol
            ccol = byte_to_char_col(lines_b[ln - 1], bcol)
            if args.fresh_always:
                script = jedi.Script(code, path=path, project=project)
            names, defs = resolve(script, ln, ccol, args, stats, path)
            if not defs and not args.no_fresh_retry and not args.fresh_always:
                # jedi memoizes inference results per Script (InferenceState);
                # a result truncated by its recursion/execution limits during an
                # earlier query is cached as "nothing" -> order-dependent misses.
                # A fresh Script gets a fresh InferenceState.
                fresh = jedi.Script(code, path=path, project=project)
                names2, defs2 = resolve(fresh, ln, ccol, args, stats, path)
                if defs2:
                    stats["via_fresh_retry"] += 1
                    names, defs = names2, defs2
                elif names2 and not names:
                    names = names2
            # dedupe
            seen, uniq = set(), []
            for n in defs:
                key = (str(n.module_path), n.line, n.column)
                if key not in seen:
                    seen.add(key)
                    uniq.append(n)
            recs = []
            for n in uniq:
                mp = str(n.module_path) if n.module_path else None
                inproj = bool(mp) and os.path.abspath(mp).startswith(root + os.sep)
                qn = n.full_name
                if inproj and n.line in def_index.get(os.path.abspath(mp), {}):
                    qn = def_index[os.path.abspath(mp)][n.line][0]
                kind = n.type
                if n.name == "<lambda>" or (kind == "function" and qn is None):
                    kind, qn = "lambda", "<lambda>"
                recs.append({"path": os.path.relpath(mp, root) if inproj else mp,
                             "line": n.line, "qualname": qn, "kind": kind,
                             "in_project": inproj})
            # deterministic order: project defs first, then by path/line
            recs.sort(key=lambda d: (not d["in_project"], str(d["path"]), d["line"] or 0))
            rec["n_defs"] = len(recs)
            if recs:
                p = recs[0]
                rec.update(callee_path=p["path"], callee_line=p["line"],
                           callee_qualname=p["qualname"], callee_kind=p["kind"],
                           callee_in_project=p["in_project"])
                if p["in_project"]:
                    stats["in_project"] += 1
                if len(recs) == 1:
                    rec["status"] = "resolved"
                else:
                    rec["status"] = "ambiguous"
                    rec["alt"] = recs[1:]
            elif names:
                rec["status"] = "non_def"
                rec["callee_kind"] = names[0].type
                rec["callee_qualname"] = names[0].full_name
            else:
                rec["status"] = "unresolved"
            stats[rec["status"]] += 1
            out.write(json.dumps(rec) + "\n")
    t_jedi = time.time() - t1
    stats["t_ast_s"] = round(t_ast, 2)
    stats["t_jedi_s"] = round(t_jedi, 2)
    stats["s_per_1k_sites"] = round(1000 * t_jedi / max(1, stats["sites"]), 2)
    stats["jedi_version"] = jedi.__version__
    if out is not sys.stdout:
        out.close()
    js = json.dumps(stats, indent=1)
    print(js, file=sys.stderr)
    if args.stats:
        open(args.stats, "w").write(js)


if __name__ == "__main__":
    main()
