#!/usr/bin/env python3
"""Self-test of score.py on a synthetic cruxe dump (no CALLS pipeline needed).

    selftest.py [CORPUS...] [--cache DIR] [--binary CRUXE]

For each corpus (default: every prepared one) it takes cruxe's real File and Symbol rows
(indexing the tree with CRUXE, default /tmp/cruxe-acc, into /tmp/acc-data/selftest-NAME) and
builds CALLS rows from the oracle with known perturbations: 10 % of oracle edges dropped,
5 % pointed at another symbol, 3 % written at a column that is not the name token's (must
still align by name), edges at 20 % of external/unresolved sites (unknown), at 20 % of
non-call sites (nonedge) and at 5 made-up positions (unseen). It then checks that
score_corpus() counts exactly what was planted.
"""
import argparse
import collections
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import score  # noqa: E402


def synth(oracle, syms, rng):
    idx = score.SymIndex(syms)
    by_path = collections.defaultdict(list)
    for s in syms:
        by_path[s["path"]].append(s)
    calls, exp = [], collections.Counter()
    found_sites = set()

    def edge(path, line, col, sym, tier, to_name):
        calls.append({"from_path": path, "from_label": "Symbol", "line": line, "col": col,
                      "confidence": tier, "to_name": to_name, "to_id": sym["id"],
                      "to_path": sym["path"], "to_line": sym["line_start"],
                      "to_line_end": sym["line_end"], "to_name_sym": sym["name"],
                      "to_kind": sym["kind"], "to_qname": sym.get("qname")})

    any_syms = [s for s in syms if s.get("line_start") is not None]
    for s in oracle:
        k = s["kind"]
        r = rng.random()
        tier = rng.choice(score.TIERS)
        if k == "edge":
            ids, _ = idx.match_ids(s["targets"][0])
            good = [x for x in any_syms if x["id"] in ids]
            if not good:
                continue
            if r < 0.10:
                continue
            col = s["col"]
            if 0.10 <= r < 0.13:
                col = max(1, s["col"] - 3)   # e.g. the call expression's start
                # only unambiguous when no other oracle site on the line has this token
            if r < 0.15 and r >= 0.13:
                all_ids = set()
                for t in s["targets"]:
                    all_ids |= idx.match_ids(t)[0]
                bad = [x for x in by_path[s["targets"][0]["path"]] if x["id"] not in all_ids
                       and x.get("line_start") is not None
                       and not any(idx.adjacent_redeclaration(idx.by_id[i], x["id"]) for i in all_ids)]
                if not bad:
                    continue
                edge(s["path"], s["line"], col, rng.choice(bad), tier, s["token"])
                exp["wrong"] += 1
                continue
            edge(s["path"], s["line"], col, good[0], tier, s["token"])
            exp["correct_planned"] += 1
            exp["shifted"] += col != s["col"]
            found_sites.add((s["path"], s["line"], s["col"]))
        elif k in ("external", "unresolved") and r < 0.2:
            edge(s["path"], s["line"], s["col"], rng.choice(any_syms), tier, s["token"])
            exp["unknown"] += 1
        elif k == "nonedge" and r < 0.2:
            edge(s["path"], s["line"], s["col"], rng.choice(any_syms), tier, s["token"])
            exp["nonedge"] += 1
    for i in range(5):
        edge("no/such/file.x", 10 + i, 1, rng.choice(any_syms), "name", "zz")
        exp["unseen"] += 1
    return calls, exp, found_sites


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpora", nargs="*")
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/cruxe-accuracy"))
    ap.add_argument("--binary", default="/tmp/cruxe-acc")
    a = ap.parse_args()
    names = a.corpora or [n for n, _, _ in score.read_corpora()
                          if os.path.exists(os.path.join(a.cache, "corpora", n, "oracle.jsonl"))]
    langs = {n: l for n, l, _ in score.read_corpora()}
    failed = 0
    for name in names:
        cdir = os.path.join(a.cache, "corpora", name)
        files, syms, _calls, _t = score.run_cruxe(a.binary, os.path.join(cdir, "tree"),
                                                  f"/tmp/acc-data/selftest-{name}", reuse=False)
        oracle = [json.loads(l) for l in open(os.path.join(cdir, "oracle.jsonl"))]
        indexed = {f["path"] for f in files}
        oracle = [s for s in oracle if s["path"] in indexed]
        calls, exp, found = synth(oracle, syms, random.Random(name))
        res, _det = score.score_corpus(name, langs[name], cdir, files, syms, calls, 5)
        c = res["counts"]
        # a shifted column may align to nothing (another site on the line has the same token):
        # then it is "unseen" instead of correct
        lost = exp["correct_planned"] - c.get("correct", 0)
        checks = {
            "wrong": (c.get("wrong", 0), exp["wrong"]),
            "unknown": (c.get("unknown_external", 0) + c.get("unknown_unresolved", 0), exp["unknown"]),
            "nonedge": (c.get("nonedge", 0), exp["nonedge"]),
            "unseen": (c.get("unseen", 0), exp["unseen"] + lost),
            "found": (c.get("found", 0), len(found) - lost),
            "aligned_by_name": (c.get("aligned_by_name_not_col", 0), exp["shifted"] - lost),
        }
        bad = {k: v for k, v in checks.items() if v[0] != v[1]}
        ok = not bad and 0 <= lost <= exp["shifted"]
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: P {res['precision']} R {res['recall']} "
              f"planted {dict(exp)} shifted-but-unalignable {lost}" + (f" MISMATCH {bad}" if bad else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
