#!/usr/bin/env python3
"""Cross-check a Rust oracle (SCIP index + edges.jsonl) against syntactic call sites.

    rust_coverage.py CRATE_DIR index.scip edges.jsonl [--annotate out.jsonl]

Uses tree-sitter-rust only to enumerate syntactic call sites (call_expression whose
callee has a name token) and fn items, to measure:
  * what fraction of syntactic call sites the oracle resolved to a fn/method,
  * why the rest are not edges (SCIP symbol kind at the name token, or no symbol),
  * how many oracle edges lie inside macro invocations (token trees that
    tree-sitter does not parse as expressions),
  * fn items that have no SCIP definition (typically cfg-inactive code).
With --annotate, re-writes the edges with "in_macro": true/false.
"""
import argparse
import collections
import json
import os
import sys

import tree_sitter_rust
from tree_sitter import Language, Parser

import scip_min as scip

LANG = Language(tree_sitter_rust.language())


def name_node(fn):
    t = fn.type
    if t == "identifier":
        return fn
    if t == "scoped_identifier":
        return fn.child_by_field_name("name")
    if t == "field_expression":
        return fn.child_by_field_name("field")
    if t == "generic_function":
        return name_node(fn.child_by_field_name("function"))
    return None


def walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("index")
    ap.add_argument("edges")
    ap.add_argument("--annotate")
    ap.add_argument("--samples", type=int, default=8)
    a = ap.parse_args()
    parser = Parser(LANG)
    ix = scip.load(a.index)
    kinds = {}
    for d in ix.documents:
        for s in d.symbols:
            kinds[s.symbol] = s.kind
    occ_at = {}   # (path, line0, col0) -> (symbol, roles)
    def_lines = collections.defaultdict(set)
    for d in ix.documents:
        for o in d.occurrences:
            sl, sc, el, ec = o.r4
            occ_at.setdefault((d.relative_path, sl, sc), (o.symbol, o.roles))
            if o.roles & 1:
                def_lines[d.relative_path].add((sl, sc))
    edges = [json.loads(l) for l in open(a.edges)]
    edge_sites = {(e["site_path"], e["site_line"] - 1, e["site_col"] - 1) for e in edges}

    st = collections.Counter()
    why = collections.Counter()
    samples = collections.defaultdict(list)
    macro_sites = set()
    ts_sites = set()
    for d in ix.documents:
        p = os.path.join(a.root, d.relative_path)
        src = open(p, "rb").read()
        tree = parser.parse(src)
        inactive = []  # byte ranges of fn items that have no SCIP definition (cfg-inactive)
        for n in walk(tree.root_node):
            if n.type == "function_item":
                nm = n.child_by_field_name("name")
                if (nm.start_point[0], nm.start_point[1]) not in def_lines[d.relative_path]:
                    inactive.append((n.start_byte, n.end_byte))
        for n in walk(tree.root_node):
            if n.type == "macro_invocation":
                tt = n.children[-1]
                macro_sites.add((d.relative_path, tt.start_point, tt.end_point))
            elif n.type == "function_item" or n.type == "function_signature_item":
                st["ts_fn_items"] += 1
                nm = n.child_by_field_name("name")
                if (nm.start_point[0], nm.start_point[1]) not in def_lines[d.relative_path]:
                    st["ts_fn_items_without_scip_def"] += 1
                    if len(samples["fn_without_def"]) < a.samples:
                        samples["fn_without_def"].append(f"{d.relative_path}:{nm.start_point[0]+1} {nm.text.decode()}")
            elif n.type == "call_expression":
                st["ts_call_expressions"] += 1
                nn = name_node(n.child_by_field_name("function"))
                if nn is None:
                    st["ts_calls_without_name"] += 1
                    continue
                k = (d.relative_path, nn.start_point[0], nn.start_point[1])
                ts_sites.add(k)
                st["ts_named_call_sites"] += 1
                if k in edge_sites:
                    st["ts_sites_with_oracle_edge"] += 1
                    continue
                occ = occ_at.get(k)
                if any(s0 <= n.start_byte < e0 for s0, e0 in inactive):
                    r = "inside fn without SCIP definition (cfg-inactive)"
                elif occ is None:
                    r = "no SCIP occurrence (unresolved)"
                else:
                    sym, roles = occ
                    kd = kinds.get(sym)
                    if sym.startswith("local "):
                        r = "local symbol (closure/fn-pointer variable)"
                    elif kd is None:
                        r = "external non-fn symbol (type/variant ctor, e.g. Some/Ok)"
                    else:
                        r = "symbol kind " + scip.KIND_NAMES.get(kd, str(kd))
                why[r] += 1
                if len(samples[r]) < a.samples:
                    samples[r].append(f"{d.relative_path}:{k[1]+1}:{k[2]+1} {nn.text.decode()}")

    def in_macro(path, line0, col0):
        for mp, s, e in macro_sites:
            if mp == path and s <= (line0, col0) < e:
                return True
        return False

    by_path = collections.defaultdict(list)
    for mp, s, e in macro_sites:
        by_path[mp].append((s, e))
    for e in edges:
        pos = (e["site_line"] - 1, e["site_col"] - 1)
        e["in_macro"] = any(s <= pos < en for s, en in by_path[e["site_path"]])
        st["oracle_edges"] += 1
        if e["in_macro"]:
            st["oracle_edges_in_macro_token_trees"] += 1
        elif (e["site_path"], pos[0], pos[1]) not in ts_sites:
            st["oracle_edges_not_a_ts_call_site"] += 1
            if len(samples["oracle_not_ts"]) < a.samples:
                samples["oracle_not_ts"].append(f"{e['site_path']}:{e['site_line']}:{e['site_col']} {e['callee_name']}")
    if a.annotate:
        with open(a.annotate, "w") as f:
            for e in edges:
                f.write(json.dumps(e) + "\n")
    res = {"counts": dict(sorted(st.items())), "unmatched_ts_call_sites_by_reason": dict(why.most_common()),
           "samples": samples}
    if st["ts_named_call_sites"]:
        res["frac_ts_named_call_sites_resolved"] = round(st["ts_sites_with_oracle_edge"] / st["ts_named_call_sites"], 4)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
