#!/usr/bin/env python3
"""Cross-check the Go oracle against syntactic call sites (tree-sitter-go).

    go_coverage.py ROOT edges.jsonl nonedges.jsonl skipped.txt

Enumerates call_expression nodes in every .go file under ROOT (same dir filter as
gocallgraph: no testdata/, vendor/, dot- or underscore-dirs) and classifies each named
call site by what the oracle says at the callee name position: edge, builtin,
conversion, func_value, unresolved, ..., or "file skipped by build constraints" /
"not seen".  Also counts oracle edges that tree-sitter does not see as a named call.
"""
import collections
import json
import os
import sys

import tree_sitter_go
from tree_sitter import Language, Parser

LANG = Language(tree_sitter_go.language())


def name_node(fn):
    t = fn.type
    if t == "identifier":
        return fn
    if t == "selector_expression":
        return fn.child_by_field_name("field")
    if t == "parenthesized_expression" and fn.named_child_count == 1:
        return name_node(fn.named_children[0])
    if t in ("index_expression", "generic_type"):  # f[T](x) in some grammar versions
        c = fn.named_children[0] if fn.named_child_count else None
        return name_node(c) if c is not None else None
    return None


def main():
    root, edges_p, nonedges_p, skipped_p = sys.argv[1:5]
    parser = Parser(LANG)
    at = {}
    edges = [json.loads(l) for l in open(edges_p)]
    for e in edges:
        at[(e["site_path"], e["site_line"], e["site_col"])] = "edge:" + e["callee_kind"]
    for l in open(nonedges_p):
        r = json.loads(l)
        at.setdefault((r["site_path"], r["site_line"], r["site_col"]), r["kind"])
    skipped = {l.strip() for l in open(skipped_p) if l.strip()}
    st = collections.Counter()
    why = collections.Counter()
    samples = collections.defaultdict(list)
    ts_sites = set()
    for d, subdirs, files in os.walk(root):
        subdirs[:] = [s for s in subdirs if s not in ("testdata", "vendor") and not s.startswith((".", "_"))]
        for fn in files:
            if not fn.endswith(".go"):
                continue
            p = os.path.join(d, fn)
            rp = os.path.relpath(p, root)
            tree = parser.parse(open(p, "rb").read())
            stack = [tree.root_node]
            while stack:
                n = stack.pop()
                stack.extend(n.children)
                if n.type != "call_expression":
                    continue
                st["ts_call_expressions"] += 1
                nn = name_node(n.child_by_field_name("function"))
                if nn is None:
                    st["ts_calls_without_name"] += 1
                    continue
                k = (rp, nn.start_point[0] + 1, nn.start_point[1] + 1)
                ts_sites.add(k)
                st["ts_named_call_sites"] += 1
                if rp in skipped:
                    r = "file skipped (build constraints)"
                else:
                    r = at.get(k, "not seen by oracle")
                why[r] += 1
                if len(samples[r]) < 6 and not r.startswith("edge"):
                    samples[r].append(f"{rp}:{k[1]}:{k[2]} {nn.text.decode()}")
    for e in edges:
        if (e["site_path"], e["site_line"], e["site_col"]) not in ts_sites:
            st["oracle_edges_not_ts_named_call"] += 1
            if len(samples["oracle_not_ts"]) < 6:
                samples["oracle_not_ts"].append(f"{e['site_path']}:{e['site_line']}:{e['site_col']} {e['callee_name']}")
    st["oracle_edges"] = len(edges)
    n_edge = sum(v for k, v in why.items() if k.startswith("edge"))
    res = {"counts": dict(sorted(st.items())), "ts_named_call_sites_by_oracle_verdict": dict(why.most_common()),
           "frac_ts_named_call_sites_with_edge": round(n_edge / max(1, st["ts_named_call_sites"]), 4),
           "samples": samples}
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
