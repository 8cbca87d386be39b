#!/usr/bin/env python3
"""Recall of cruxe top-level symbols vs TypeScript-compiler exported declarations.

Usage: python3 recall.py ts_decls.jsonl cruxe_syms.json [cruxe_all.json]
  ts_decls.jsonl : output of `node ts_decls.js <repo>`
  cruxe_syms.json: `cruxe cypher --json "MATCH (f:File)-[:CONTAINS]->(s:Symbol) RETURN f.path AS path,
                    s.name AS name, s.kind AS kind, s.line_start AS line, s.visibility AS vis"`
  cruxe_all.json : (optional) same for every Symbol (s.path), to tell "missing" from "nested wrongly".
Join key: (file, name). Main figure = declarations exported with the `export` modifier (named);
anonymous `export default` and list-exported (`export { x }`) declarations are reported separately.
"""
import json
import sys
from collections import defaultdict, Counter

ts_rows = [json.loads(l) for l in open(sys.argv[1])]
top = json.load(open(sys.argv[2]))
allsyms = json.load(open(sys.argv[3])) if len(sys.argv) > 3 else []

top_by = defaultdict(list)
for s in top:
    top_by[(s["path"], s["name"])].append(s)
any_by = defaultdict(list)
for s in allsyms:
    any_by[(s["path"], s["name"])].append(s)


def section(title, rows):
    found, missed, nested = [], [], []
    for r in rows:
        key = (r["file"], r["name"])
        if key in top_by:
            found.append((r, top_by[key]))
        elif key in any_by:
            nested.append((r, any_by[key]))
        else:
            missed.append(r)
    n = len(rows)
    print(f"== {title}")
    print(f"total {n}  found(top-level) {len(found)}  recall {100.0 * len(found) / n if n else 0:.1f}%"
          f"  | present-but-not-top-level {len(nested)}  | absent {len(missed)}")
    lost = missed + [r for r, _ in nested]
    if lost:
        print(f"missed by file ({len(lost)}):")
        by_file = defaultdict(list)
        for r in lost:
            by_file[r["file"]].append(r)
        for f in sorted(by_file):
            print(f"  {f} ({len(by_file[f])})")
            for r in sorted(by_file[f], key=lambda r: r["line"]):
                tag = ""
                if (r["file"], r["name"]) in any_by:
                    tag = "  [nested as " + ",".join(
                        f"{s['kind']}@{s['line']}" for s in any_by[(r["file"], r["name"])]) + "]"
                print(f"    L{r['line']:<5} {r['kind']:<10} {r['name']}{tag}")
    # secondary quality checks on the found ones
    line_off = [(r, c) for r, c in found if not any(abs((s["line"] or 0) - r["line"]) <= 1 for s in c)]
    not_public = [(r, c) for r, c in found if not any(s.get("vis") == "public" for s in c)]
    kinds = Counter((r["kind"], "/".join(sorted({s["kind"] for s in c}))) for r, c in found)
    print(f"found: tsc-kind -> cruxe-kind {dict(kinds)}")
    print(f"found but line differs by >1: {len(line_off)}; found but visibility != public: {len(not_public)}")
    for r, c in not_public[:20]:
        print(f"    not public: {r['file']}:{r['line']} {r['name']} -> {[s.get('vis') for s in c]}")
    print()


main = [r for r in ts_rows if r["via"] == "modifier" and not r.get("anon")]
anon = [r for r in ts_rows if r.get("anon")]
lst = [r for r in ts_rows if r["via"] == "list"]
section("exported declarations (`export <decl>`, named)", main)
print(f"== anonymous `export default` declarations: {len(anon)} (no name to join on)")
for r in anon:
    print(f"    {r['file']}:{r['line']} {r['kind']}")
print()
section("declarations exported via a local `export { x }` list (not counted above)", lst)
