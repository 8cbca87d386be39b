#!/usr/bin/env python3
"""Rust call-graph oracle: turn a rust-analyzer SCIP index into call edges.

    rust-analyzer scip CRATE_DIR --output index.scip
    extract_rust_calls.py index.scip [--root CRATE_DIR] [-o edges.jsonl] [--stats stats.json]
                          [--internal-only]

One JSON line per call site whose callee identifier rust-analyzer resolved to a
function/method symbol:

  {"caller_path": "src/lib.rs", "caller_line": 12, "caller": "<scip symbol>",
   "callee_path": "src/lib.rs", "callee_line": 40, "callee": "<scip symbol>",
   "callee_name": "grow", "callee_kind": "Method",
   "site_path": "src/lib.rs", "site_line": 20, "site_col": 9, "site_end_col": 13,
   "callee_ambiguous": false}

Conventions
  * paths are relative to the SCIP project root (the crate dir);
  * lines are 1-based; columns are 1-based UTF-8 byte columns;
  * site = the callee *name token* (`foo` in `a::foo(x)`, `bar` in `x.bar::<T>(y)`);
  * caller_line / callee_line = line of the fn *name token* of the definition;
  * caller = innermost fn/method definition (SCIP enclosing_range) containing the site;
    calls inside closures are attributed to the enclosing fn; sites outside any fn
    (const/static initialisers, ...) get caller_path/caller_line = null;
  * callee_path/callee_line = null when the callee is defined outside the index
    (std, dependency crates); use --internal-only to drop those rows.

A reference occurrence counts as a call when its symbol has a callable kind
(Function, Method, StaticMethod, TraitMethod, ...), the source text at the
occurrence is an identifier, and the next non-blank text is `(` (optionally after a
turbofish `::<...>`).  Function values passed without a call (`map(Foo::new)`),
tuple-struct/variant constructors, closures/fn-pointer calls, operator/`?`/Deref
desugarings are NOT edges.
"""
import argparse
import bisect
import collections
import json
import os
import re
import sys
import urllib.parse

import scip_min as scip

IDENT = re.compile(rb"(?:r#)?[A-Za-z_][A-Za-z0-9_]*\Z")


def after_is_call(lines, line, col):
    """True if text after (line, col) is `(` possibly preceded by ws and `::<...>`."""
    n = len(lines)

    def chars():
        l, c = line, col
        while l < n:
            s = lines[l]
            while c < len(s):
                yield s[c:c + 1], s[c - 1:c] if c else b""
                c += 1
            l += 1
            c = 0
            yield b"\n", b""

    it = chars()
    state = "start"  # start -> (':' ':' '<' ... '>') -> '('
    depth = 0
    for ch, prev in it:
        if state == "start":
            if ch in b" \t\r\n":
                continue
            if ch == b"(":
                return True
            if ch == b":":
                state = "colon1"
                continue
            return False
        if state == "colon1":
            if ch == b":":
                state = "colon2"
                continue
            return False
        if state == "colon2":
            if ch in b" \t\r\n":
                continue
            if ch == b"<":
                state = "generic"
                depth = 1
                continue
            return False
        if state == "generic":
            if ch == b"<":
                depth += 1
            elif ch == b">" and prev != b"-":
                depth -= 1
                if depth == 0:
                    state = "start"
            elif ch in b";{}":
                return False
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("index")
    ap.add_argument("--root", help="source root (default: SCIP metadata project_root)")
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--stats", help="write statistics JSON here")
    ap.add_argument("--internal-only", action="store_true",
                    help="only emit edges whose callee is defined inside the index")
    args = ap.parse_args()

    ix = scip.load(args.index)
    root = args.root
    if not root:
        root = urllib.parse.unquote(urllib.parse.urlparse(ix.project_root).path)

    # symbol kinds (document symbols + external)
    kind = {}
    for d in ix.documents:
        for s in d.symbols:
            kind[(d.relative_path, s.symbol) if s.symbol.startswith("local ") else s.symbol] = s.kind
    for s in ix.external_symbols:
        kind.setdefault(s.symbol, s.kind)

    def key(doc, sym):
        return (doc.relative_path, sym) if sym.startswith("local ") else sym

    def symkind(doc, sym):
        k = kind.get(key(doc, sym))
        if k is None:
            # external symbols carry no SymbolInformation: infer from descriptor suffix
            if sym.endswith(")."):
                return 17
            return 0
        return k

    # definitions: symbol -> list of (path, name_line0, name_col0, enclosing4)
    defs = collections.defaultdict(list)
    fn_ranges = {}  # path -> list of (start4, end4, symbol, name_line0)
    for d in ix.documents:
        fr = []
        for o in d.occurrences:
            if not (o.roles & scip.ROLE_DEFINITION):
                continue
            sl, sc, el, ec = o.r4
            defs[key(d, o.symbol)].append((d.relative_path, sl, sc, o.e4))
            if symkind(d, o.symbol) in scip.CALLABLE_KINDS and o.e4:
                e = o.e4
                fr.append(((e[0], e[1]), (e[2], e[3]), o.symbol, sl))
        fn_ranges[d.relative_path] = fr

    def enclosing_fn(path, line, col):
        best = None
        for start, end, sym, nl in fn_ranges.get(path, ()):
            if start <= (line, col) < end:
                if best is None or start >= best[0]:
                    best = (start, end, sym, nl)
        return best

    st = collections.Counter()
    out = sys.stdout if args.output == "-" else open(args.output, "w")
    srcs = {}
    for d in ix.documents:
        p = os.path.join(root, d.relative_path)
        try:
            with open(p, "rb") as f:
                lines = f.read().split(b"\n")
        except OSError:
            st["docs_missing_source"] += 1
            continue
        srcs[d.relative_path] = lines
        for o in d.occurrences:
            if o.roles & (scip.ROLE_DEFINITION | scip.ROLE_IMPORT):
                continue
            st["refs"] += 1
            sk = symkind(d, o.symbol)
            if sk not in scip.CALLABLE_KINDS:
                continue
            st["refs_to_callables"] += 1
            sl, sc, el, ec = o.r4
            text = lines[sl][sc:ec] if sl == el and sl < len(lines) else b""
            if not IDENT.match(text):
                st["callable_refs_non_ident_token"] += 1  # `?`, operators, macro-mapped
                continue
            if not after_is_call(lines, sl, ec):
                st["callable_refs_not_called"] += 1
                continue
            st["call_sites"] += 1
            cands = defs.get(key(d, o.symbol), [])
            caller = enclosing_fn(d.relative_path, sl, sc)
            if caller is None:
                st["call_sites_outside_fn"] += 1
            if cands:
                st["call_sites_internal_callee"] += 1
                if len(cands) > 1:
                    # SCIP symbols are not unique for e.g. nested `fn test()` items in
                    # different fns of one module, or cfg-alternative items.  Prefer a
                    # candidate nested inside the caller, then same file & nearest line.
                    st["call_sites_ambiguous_callee"] += 1

                    def score(c):
                        cp, cl, cc, ce = c
                        inside = (caller is not None and cp == d.relative_path
                                  and caller[0] <= (cl, cc) < caller[1])
                        return (not inside, cp != d.relative_path, abs(cl - sl))
                    cands = sorted(cands, key=score)
                cpath, cline, _, _ = cands[0]
            else:
                st["call_sites_external_callee"] += 1
                if args.internal_only:
                    continue
                cpath, cline = None, None
            rec = {
                "caller_path": d.relative_path if caller else None,
                "caller_line": caller[3] + 1 if caller else None,
                "caller": caller[2] if caller else None,
                "callee_path": cpath,
                "callee_line": cline + 1 if cline is not None else None,
                "callee": o.symbol,
                "callee_name": text.decode(errors="replace"),
                "callee_kind": scip.KIND_NAMES.get(sk, str(sk)),
                "site_path": d.relative_path,
                "site_line": sl + 1,
                "site_col": sc + 1,
                "site_end_col": ec + 1,
                "callee_ambiguous": len(cands) > 1,
            }
            out.write(json.dumps(rec) + "\n")
            st["edges_written"] += 1
    if out is not sys.stdout:
        out.close()
    st["documents"] = len(ix.documents)
    st["definitions"] = sum(len(v) for v in defs.values())
    st["fn_definitions"] = sum(len(v) for v in fn_ranges.values())
    stats = dict(sorted(st.items()))
    stats["tool"] = f"{ix.tool_name} {ix.tool_version}"
    print(json.dumps(stats, indent=1), file=sys.stderr)
    if args.stats:
        with open(args.stats, "w") as f:
            json.dump(stats, f, indent=1)


if __name__ == "__main__":
    main()
