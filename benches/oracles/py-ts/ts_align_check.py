#!/usr/bin/env python3
"""Check that oracle call sites line up with tree-sitter call nodes.

For every tree-sitter call node (python: `call`; typescript: `call_expression`,
`new_expression`) compute the same "site" key as the oracles (the callee name
token: identifier / attribute name / property_identifier / `super`), then report
how many oracle sites have a tree-sitter twin and vice versa.

Usage: venv/bin/python ts_align_check.py ROOT EDGES.jsonl [py|ts]
"""
import json
import os
import sys

import tree_sitter as T

lang_name = sys.argv[3]
if lang_name == "py":
    import tree_sitter_python as tsp
    LANG = T.Language(tsp.language())
    CALLS = {"call"}
else:
    import tree_sitter_typescript as tst
    LANG = T.Language(tst.language_typescript())
    LANG_TSX = T.Language(tst.language_tsx())
    CALLS = {"call_expression", "new_expression"}


def site_of(node):
    """(line1, bytecol) of the callee-name token, mirroring the oracles."""
    f = node.child_by_field_name("function") or node.child_by_field_name("constructor")
    if f is None:
        return None
    while f.type == "non_null_expression":  # TS foo!()
        f = f.named_children[0]
    if f.type in ("identifier", "super", "this"):
        n = f
    elif f.type == "attribute":
        n = f.child_by_field_name("attribute")
    elif f.type == "member_expression":
        n = f.child_by_field_name("property")
    elif f.type == "subscript_expression":
        n = f.child_by_field_name("index")
    else:
        # non-name callee: oracles use the end of the callee expression
        return (f.end_point[0] + 1, f.end_point[1])
    return (n.start_point[0] + 1, n.start_point[1])


def main():
    root, edges = sys.argv[1], sys.argv[2]
    recs = [json.loads(l) for l in open(edges)]
    files = sorted({r["caller_path"] for r in recs})
    oracle = {(r["caller_path"], r["site_line"], r["site_col"]) for r in recs}
    tsites = set()
    for rel in files:
        src = open(os.path.join(root, rel), "rb").read()
        lang = LANG
        if lang_name == "ts" and rel.endswith(".tsx"):
            lang = LANG_TSX
        tree = T.Parser(lang).parse(src)
        stack = [tree.root_node]
        while stack:
            n = stack.pop()
            if n.type in CALLS:
                s = site_of(n)
                if s:
                    tsites.add((rel,) + s)
            stack.extend(n.children)
    both = oracle & tsites
    print(json.dumps({"oracle_sites": len(oracle), "treesitter_sites": len(tsites),
                      "matched": len(both), "oracle_only": len(oracle - tsites),
                      "treesitter_only": len(tsites - oracle),
                      "oracle_only_examples": sorted(oracle - tsites)[:5],
                      "treesitter_only_examples": sorted(tsites - oracle)[:5]}))


if __name__ == "__main__":
    main()
