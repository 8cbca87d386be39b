#!/usr/bin/env python3
"""Score cruxe's CALLS edges against the compiler-grade oracles, per language and tier.

    score.py CRUXE_BINARY [CORPUS...] [--cache DIR] [--data DIR] [--out DIR] [--reuse]
    score.py --dump-dir DIR [CORPUS...]      score saved dumps (no cruxe run): DIR/NAME.{calls,symbols,files}.json

Needs `setup.sh` first (corpora + oracle.jsonl under the cache). For each corpus it indexes
CACHE/corpora/NAME/tree with `CRUXE index --force --data DATA/NAME`, dumps CALLS, Symbol and
File rows with `cruxe cypher --json` (paged), aligns both sides on the site (file, line,
byte column of the callee's name token) and prints markdown tables; JSON goes to
OUT/accuracy.json and per-corpus details (wrong edges, missed sites, with source lines) to
OUT/NAME.details.md (+ full lists in OUT/NAME.wrong.jsonl / OUT/NAME.missed.jsonl).

Definitions (a "site" is one call, keyed by the callee's name token):
  oracle edge     a site the oracle resolves to a definition inside the corpus
  correct         a cruxe edge at an oracle-edge site whose target symbol is in the oracle
                  target's file, spans its line (the definition's name line) and has its name
                  (when the oracle gives no name, e.g. an anonymous default export: the
                  innermost symbol spanning the line); with several oracle targets
                  (ambiguous), any of them. TS/Python only: another declaration right next to an
                  accepted symbol, with its file, qualified name and kind, also counts (overload
                  signatures, @overload stubs; the oracles name the implementation):
                  counted as correct_same_qname
  wrong           any other cruxe edge at an oracle-edge site, and any cruxe edge at a site the
                  oracle resolved outside the corpus (a same-named library method)
  precision       correct / (correct + wrong)
  recall          oracle-edge sites with a correct cruxe edge / oracle-edge sites in files cruxe indexed
  unknown         cruxe edges at sites the oracle did not resolve at all: not scored, counted
  nonedge         cruxe edges at sites the oracle proved are no call of a definition (Go
                  conversions/builtins/func values, py/ts parameters and variables): counted apart
  unseen          cruxe edges at positions where the oracle has no call site at all
  via library     cruxe edges at a site the oracle resolved outside the corpus whose target is
                  not the name called: what the library's callee runs in the corpus (Rust
                  `it.collect()`, std's, runs the corpus's `Iterator::next`), which the oracle
                  does not say: counted apart
  cfg twin        Rust/Go: a cruxe edge to another definition of the oracle's target's qualified
                  name and kind, at a site where cruxe's edge to the oracle's target is there
                  too: a `#[cfg]`/build-tag alternative the oracle's one configuration does not
                  build (cruxe gives a call of such a name an edge to each); TypeScript: the
                  method of a value merged with the interface whose declaration the oracle
                  names (what runs; cruxe gives the call an edge to both): counted apart
Per tier: precision of the edges of that tier; recall = share of all oracle-edge sites found by
an edge of that tier. "first4" = scope+import+self+qualified together.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TIERS = ["scope", "import", "self", "qualified", "typed", "dispatch", "name"]
FIRST4 = {"scope", "import", "self", "qualified"}
LANG_NAMES = {"rust": "Rust", "go": "Go", "py": "Python", "ts": "TypeScript"}

CALLS_Q = ("MATCH (a)-[c:CALLS]->(b:Symbol) RETURN a.path AS from_path, label(a) AS from_label, "
           "c.line AS line, c.col AS col, c.confidence AS confidence, c.to_name AS to_name, "
           "b.id AS to_id, b.path AS to_path, b.line_start AS to_line, b.line_end AS to_line_end, "
           "b.name AS to_name_sym, b.kind AS to_kind, b.qualified_name AS to_qname "
           "ORDER BY from_path, line, col, to_id")
SYMS_Q = ("MATCH (s:Symbol) RETURN s.id AS id, s.path AS path, s.name AS name, s.kind AS kind, "
          "s.line_start AS line_start, s.line_end AS line_end, s.qualified_name AS qname ORDER BY id")
FILES_Q = "MATCH (f:File) RETURN f.path AS path, f.language AS language ORDER BY path"


# ----------------------------------------------------------------------------- cruxe side
def runs_through(e):
    """Whether edge `e` names another symbol than the one called: what the
    called (library) function runs, not that function."""
    called = re.findall(r"[A-Za-z_$][\w$]*", e.get("to_name") or "")
    return bool(called) and bool(e.get("to_name_sym")) and called[-1] != e["to_name_sym"]


def cypher(binary, data, query, page=50000):
    """All rows of QUERY (which must end in ORDER BY), paged with SKIP/LIMIT."""
    rows, skip = [], 0
    while True:
        q = f"{query} SKIP {skip} LIMIT {page}"
        r = subprocess.run([binary, "cypher", "--data", data, "--json", "--limit", str(page + 1),
                            "--timeout-ms", "0", "--memory-mb", "4096", q],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"cypher failed: {r.stderr.strip()[:500]}")
        got = json.loads(r.stdout or "[]")
        rows += got
        if len(got) < page:
            return rows
        skip += page


def run_cruxe(binary, tree, data, reuse):
    t = {}
    if not (reuse and os.path.isdir(data)):
        t0 = time.time()
        r = subprocess.run([binary, "index", tree, "--data", data, "--force"],
                           capture_output=True, text=True)
        t["index_s"] = round(time.time() - t0, 2)
        if r.returncode != 0:
            raise RuntimeError(f"cruxe index failed: {r.stderr.strip()[-800:]}")
        t["index_log"] = (r.stdout + r.stderr).strip().splitlines()[-3:]
    t0 = time.time()
    files = cypher(binary, data, FILES_Q)
    syms = cypher(binary, data, SYMS_Q)
    try:
        calls = cypher(binary, data, CALLS_Q)
    except RuntimeError as e:   # binary without the CALLS table
        t["calls_error"] = str(e)[:300]
        calls = []
    t["dump_s"] = round(time.time() - t0, 2)
    return files, syms, calls, t


# ----------------------------------------------------------------------------- helpers
class Src:
    def __init__(self, root):
        self.root, self.cache = root, {}

    def line(self, path, line):
        if path not in self.cache:
            try:
                with open(os.path.join(self.root, path), "rb") as f:
                    self.cache[path] = f.read().decode("utf-8", "replace").split("\n")
            except OSError:
                self.cache[path] = []
        ls = self.cache[path]
        return ls[line - 1] if 0 < line <= len(ls) else ""

    def line_bytes_prefix(self, path, line, col):
        """Text of the line before the 1-based byte column."""
        b = self.line(path, line).encode("utf-8")
        return b[:col - 1].decode("utf-8", "replace")


def site_form(src, path, line, col, token):
    """Syntactic shape of the call at a site, from the text before the name token."""
    pre = src.line_bytes_prefix(path, line, col).rstrip()
    if token in ("super",):
        return "super"
    if re.search(r"\bnew\s*$", pre):
        return "new X"
    if re.search(r"\b(self|this|cls)\s*[.]\s*$", pre) or re.search(r"\bself\s*::\s*$", pre):
        return "self.m"
    if re.search(r"\bSelf\s*::\s*$", pre):
        return "Self::f"
    if pre.endswith("::"):
        return "path::f"
    if pre.endswith(".") or pre.endswith("?.") or pre.endswith("!."):
        m = re.search(r"([A-Za-z_$][\w$]*)\s*[?!]?\.$", pre)
        if m and m.group(1)[0].isupper():
            return "Name.m"
        if re.search(r"[)\]]\s*[?!]?\.$", pre):
            return "expr().m"
        return "x.m"
    return "f()"


class SymIndex:
    """Cruxe symbols per path, to map an oracle target (path, line, name) to cruxe's symbols."""

    def __init__(self, syms):
        self.by_path = collections.defaultdict(list)
        self.by_id = {s["id"]: s for s in syms}
        for s in syms:
            if s.get("line_start") is None:
                continue
            self.by_path[s["path"]].append(s)

    def adjacent_redeclaration(self, a, b_id):
        """b is another declaration of a: same file, qualified name and kind, and no other
        symbol starts between them (overload signatures sit right before the body)."""
        b = self.by_id.get(b_id)
        if not b or b["path"] != a["path"] or b.get("qname") != a.get("qname") or b["kind"] != a["kind"]:
            return False
        lo, hi = sorted((a, b), key=lambda s: s["line_start"])
        return not any(lo["line_end"] < s["line_start"] < hi["line_start"] and s.get("qname") != a.get("qname")
                       for s in self.by_path[a["path"]])

    def spanning(self, path, line):
        return [s for s in self.by_path.get(path, ()) if s["line_start"] <= line <= s["line_end"]]

    def match_ids(self, t):
        """Ids of cruxe symbols that count as the oracle target t, and how it was matched."""
        span = self.spanning(t["path"], t["line"])
        if not span:
            return set(), "no_symbol"
        if t.get("name"):
            named = [s for s in span if s["name"] == t["name"]]
            if named:
                return {s["id"] for s in named}, "name"
            # the definition has a name but cruxe has no symbol of that name there (e.g. a
            # class field `static create = () => …`): the enclosing class would be wrong
            return set(), "no_symbol"
        inner = min(span, key=lambda s: (s["line_end"] - s["line_start"], -s["line_start"]))
        return {inner["id"]}, "innermost"


SCRIPT_EXT = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")


def is_test_file(path):
    """cruxe's own rule (src/query/calls/tests.rs): under test/, tests/ or __tests__/, or
    named test_*.py, *_test.py, conftest.py, *_test.go, *.test.* or *.spec.*."""
    parts = path.split("/")
    name = parts.pop()
    if any(d in ("test", "tests", "__tests__") for d in parts):
        return True
    stem, _, ext = name.rpartition(".")
    if ext == "py":
        return stem.startswith("test_") or stem.endswith("_test") or stem == "conftest"
    if ext == "go":
        return stem.endswith("_test")
    if name.endswith(SCRIPT_EXT):
        return stem.endswith(".test") or stem.endswith(".spec")
    return False


def is_test_module(name):
    """cruxe's rule for a Rust test module: `tests`, `test`, `tests_*`, `test_*`."""
    return name in ("tests", "test") or name.startswith(("tests_", "test_"))


class Parts:
    """Which call sites are test code: a test file, or (Rust) inside a test module
    (`mod tests`, `mod test`, `mod tests_avx2`: the `#[cfg(test)]` convention), or
    the file `tests.rs` of `mod tests;`, or benches/ and examples/."""

    def __init__(self, syms):
        self.spans = collections.defaultdict(list)
        for s in syms:
            if s["path"].endswith(".rs") and s["kind"] == "module" and is_test_module(s["name"]) \
                    and s.get("line_start") is not None:
                self.spans[s["path"]].append((s["line_start"], s["line_end"]))

    def of(self, path, line):
        if is_test_file(path) or path.split("/")[0] in ("benches", "examples"):
            return "test"
        if path.endswith(".rs") and path.rsplit("/", 1)[-1] in ("tests.rs", "test.rs"):
            return "test"
        return "test" if any(a <= line <= b for a, b in self.spans.get(path, ())) else "lib"


def pct(a, b):
    return None if not b else round(100.0 * a / b, 1)


def fmt(p):
    return "–" if p is None else f"{p:.1f}"


# ----------------------------------------------------------------------------- scoring
def score_corpus(name, lang, cdir, files, syms, calls, top):
    src = Src(os.path.join(cdir, "tree"))
    oracle = {}
    with open(os.path.join(cdir, "oracle.jsonl")) as f:
        for l in f:
            s = json.loads(l)
            oracle[(s["path"], s["line"], s["col"])] = s
    by_line = collections.defaultdict(list)
    for k, s in oracle.items():
        by_line[(k[0], k[1])].append(s)
    indexed = {f["path"] for f in files}
    symidx = SymIndex(syms)
    parts = Parts(syms)
    target_ids = {}

    def targets_of(site):
        k = (site["path"], site["line"], site["col"])
        if k not in target_ids:
            ids, how = set(), []
            for t in site["targets"]:
                i, h = symidx.match_ids(t)
                ids |= i
                how.append(h)
            target_ids[k] = (ids, how)
        return target_ids[k]

    c = collections.Counter()
    tier = collections.defaultdict(collections.Counter)
    found_by = {}              # oracle site key -> tier of its correct edge (first tier in TIERS order)
    wrong_at = collections.defaultdict(list)
    wrong, unseen_ex, nonedge_ex = [], [], []
    # Each site's cruxe targets (for `cfg twin`).
    at_site = collections.defaultdict(set)
    for e in calls:
        at_site[(e["from_path"], e["line"], e["col"])].add(e["to_id"])
    for e in calls:
        conf = e.get("confidence") or "?"
        c["cruxe_edges"] += 1
        tier[conf]["edges"] += 1
        if e.get("from_label") == "File":
            c["cruxe_edges_from_file"] += 1
        key = (e["from_path"], e["line"], e["col"])
        site = oracle.get(key)
        if site is None:
            # fallback: the only oracle site on that line whose token is the callee's last name
            last = re.findall(r"[A-Za-z_$][\w$]*", e.get("to_name") or "")
            cands = [s for s in by_line.get((key[0], key[1]), ()) if last and s["token"] == last[-1]]
            if len(cands) == 1:
                site = cands[0]
                c["aligned_by_name_not_col"] += 1
        if site is None:
            c["unseen"] += 1
            tier[conf]["unseen"] += 1
            unseen_ex.append(e)
            continue
        kind = site["kind"]
        if kind == "edge":
            ids, _ = targets_of(site)
            ok = e["to_id"] in ids
            if not ok and lang in ("ts", "py") and e.get("to_qname"):
                # another declaration of the same function: a TS overload signature or a
                # Python @overload stub (the oracles name the implementation). Not for
                # Rust/Go: there one qualified name can be two impls (TryFrom<u16>/<u32>)
                if any(symidx.adjacent_redeclaration(symidx.by_id[i], e["to_id"]) for i in ids):
                    ok = True
                    c["correct_same_qname"] += 1
                    tier[conf]["correct_same_qname"] += 1
            mates = at_site[(e["from_path"], e["line"], e["col"])]
            twin_of = lambda m: (symidx.by_id.get(m, {}).get("qname") == e.get("to_qname")
                                 and symidx.by_id.get(m, {}).get("kind") == e.get("to_kind"))
            if not ok and lang in ("rust", "go", "ts") and (
                    any(twin_of(i) for i in ids & mates)
                    # TS: beside cruxe's edge to another overload of the oracle's target
                    or (lang == "ts" and any(
                        m != e["to_id"] and twin_of(m)
                        and any(symidx.adjacent_redeclaration(symidx.by_id[i], m) for i in ids)
                        for m in mates))):
                c["cfg_twin"] += 1
                tier[conf]["cfg_twin"] += 1
                continue
            skey = (site["path"], site["line"], site["col"])
            if site["why"] == "agree":   # Python: jedi and pyright agree on the target
                c["correct_agree" if ok else "wrong_agree"] += 1
            part = parts.of(e["from_path"], e["line"])
            c[f"{part}_correct" if ok else f"{part}_wrong"] += 1
            if ok:
                c["correct"] += 1
                tier[conf]["correct"] += 1
                prev = found_by.get(skey)
                if prev is None or (TIERS.index(conf) if conf in TIERS else 99) < \
                        (TIERS.index(prev) if prev in TIERS else 99):
                    found_by[skey] = conf
            else:
                c["wrong"] += 1
                tier[conf]["wrong"] += 1
                wrong.append((e, site))
                wrong_at[skey].append(e)
        elif kind == "external" and runs_through(e):
            c["via_library"] += 1
            tier[conf]["via_library"] += 1
        elif kind == "external":
            # The oracle resolved the call outside the corpus (a library's or
            # the language's method of the same name): an edge into the
            # corpus there is a false edge.
            c["wrong"] += 1
            c["wrong_external"] += 1
            c[parts.of(e["from_path"], e["line"]) + "_wrong"] += 1
            tier[conf]["wrong"] += 1
            wrong.append((e, site))
        elif kind == "unresolved":
            c["unknown_" + kind] += 1
            tier[conf]["unknown"] += 1
        elif kind == "nonedge":
            c["nonedge"] += 1
            tier[conf]["nonedge"] += 1
            nonedge_ex.append((e, site))
        else:
            c["excluded"] += 1
            tier[conf]["excluded"] += 1

    # recall side
    missed = []
    no_sym = 0
    oracle_edges = [s for s in oracle.values() if s["kind"] == "edge"]
    c["oracle_sites"] = len(oracle)
    c["oracle_edges_all"] = len(oracle_edges)
    c["oracle_edges_not_indexed"] = sum(1 for s in oracle_edges if s["path"] not in indexed)
    scored = [s for s in oracle_edges if s["path"] in indexed]
    c["oracle_edges"] = len(scored)
    for s in scored:
        k = (s["path"], s["line"], s["col"])
        ids, how = targets_of(s)
        part = parts.of(s["path"], s["line"])
        c[part + "_oracle_edges"] += 1
        c[part + "_found"] += k in found_by
        reachable = bool(ids) and not s["in_macro"]
        c["oracle_edges_reachable"] += reachable
        if not ids:
            no_sym += 1
        c["target_match_" + ("name" if "name" in how else "innermost" if "innermost" in how
                             else "none")] += 1
        if s["in_macro"]:
            c["oracle_edges_in_macro"] += 1
        if s["why"] == "agree":
            c["oracle_edges_agree"] += 1
        if k in found_by:
            c["found"] += 1
            tier[found_by[k]]["found"] += 1
            if not s["in_macro"]:
                c["found_nomacro"] += 1
            c["found_reachable"] += reachable
            if s["why"] == "agree":
                c["found_agree"] += 1
        else:
            missed.append(s)
    c["oracle_target_no_cruxe_symbol"] = no_sym

    res = {
        "corpus": name, "lang": lang,
        "files_indexed": len(indexed), "symbols": len(syms),
        "counts": dict(c),
        "precision": pct(c["correct"], c["correct"] + c["wrong"]),
        "recall": pct(c["found"], c["oracle_edges"]),
        "recall_nomacro": pct(c["found_nomacro"], c["oracle_edges"] - c["oracle_edges_in_macro"]),
        "recall_reachable": pct(c["found_reachable"], c["oracle_edges_reachable"]),
        "tiers": {t: dict(v) for t, v in tier.items()},
    }
    details = write_details(name, lang, src, wrong, wrong_at, missed, unseen_ex, nonedge_ex,
                            symidx, targets_of, top)
    res["missed_by_form"] = details["missed_by_form"]
    res["wrong_by_tier_form"] = details["wrong_by_tier_form"]
    return res, details


def spread(items, key, n):
    """Up to n items, round-robin over key (so examples come from many files)."""
    groups = collections.OrderedDict()
    for it in items:
        groups.setdefault(key(it), []).append(it)
    out = []
    while len(out) < n and groups:
        for k in list(groups):
            out.append(groups[k].pop(0))
            if not groups[k]:
                del groups[k]
            if len(out) >= n:
                break
    return out


def write_details(name, lang, src, wrong, wrong_at, missed, unseen_ex, nonedge_ex, symidx,
                  targets_of, top):
    def code(p, l):
        return src.line(p, l).strip()[:160]

    def sym_at(t):
        ids, how = targets_of({"path": t["path"], "line": t["line"], "col": -t["line"],
                               "targets": [t]})
        return how[0]

    missed_rows = []
    for s in missed:
        k = (s["path"], s["line"], s["col"])
        form = site_form(src, s["path"], s["line"], s["col"], s["token"])
        at = wrong_at.get(k, [])
        missed_rows.append({
            "site": f"{s['path']}:{s['line']}:{s['col']}", "token": s["token"], "form": form,
            "why": "wrong edge" if at else "no edge",
            "oracle": [f"{t['path']}:{t['line']} {t['name']}" for t in s["targets"]],
            "target_in_cruxe": [sym_at(t) for t in s["targets"]],
            "in_macro": s["in_macro"], "code": code(s["path"], s["line"])})
    wrong_rows = []
    for e, s in wrong:
        form = site_form(src, s["path"], s["line"], s["col"], s["token"])
        wrong_rows.append({
            "site": f"{s['path']}:{s['line']}:{s['col']}", "tier": e.get("confidence"),
            "to_name": e.get("to_name"), "form": form,
            "cruxe": f"{e['to_path']}:{e['to_line']}-{e['to_line_end']} {e['to_kind']} {e['to_name_sym']}",
            "oracle": [f"{t['path']}:{t['line']} {t['name']}" for t in s["targets"]] or ["(outside the corpus)"],
            "code": code(s["path"], s["line"])})
    missed_by_form = collections.Counter((r["form"], r["why"]) for r in missed_rows)
    wrong_by = collections.Counter((r["tier"], r["form"]) for r in wrong_rows)
    return {"missed": missed_rows, "wrong": wrong_rows,
            "missed_by_form": {f"{a} / {b}": n for (a, b), n in missed_by_form.most_common()},
            "wrong_by_tier_form": {f"{a} / {b}": n for (a, b), n in wrong_by.most_common()},
            "unseen_by_kind_tier": {f"{a} / {b}": n for (a, b), n in collections.Counter(
                (e.get("to_kind"), e.get("confidence")) for e in unseen_ex).most_common()},
            "unseen": [{"site": f"{e['from_path']}:{e['line']}:{e['col']}", "tier": e.get("confidence"),
                        "to_name": e.get("to_name"),
                        "cruxe": f"{e['to_path']}:{e['to_line']} {e['to_name_sym']}",
                        "code": code(e["from_path"], e["line"])} for e in unseen_ex],
            "nonedge": [{"site": f"{s['path']}:{s['line']}:{s['col']}", "tier": e.get("confidence"),
                         "oracle": s["why"], "cruxe": f"{e['to_path']}:{e['to_line']} {e['to_name_sym']}",
                         "code": code(s["path"], s["line"])} for e, s in nonedge_ex]}


def details_md(res, d, top):
    L = [f"# {res['corpus']} ({LANG_NAMES[res['lang']]})", ""]
    c = res["counts"]
    L.append(f"precision {fmt(res['precision'])} % ({c.get('correct', 0)}/{c.get('correct', 0) + c.get('wrong', 0)}), "
             f"recall {fmt(res['recall'])} % ({c.get('found', 0)}/{c.get('oracle_edges', 0)})")
    L.append("")
    L.append("## Missed oracle edges by call form / reason")
    L.append("")
    L += [f"- {k}: {n}" for k, n in d["missed_by_form"].items()] or ["- none"]
    L.append("")
    L.append("## Wrong edges by tier / call form")
    L.append("")
    L += [f"- {k}: {n}" for k, n in d["wrong_by_tier_form"].items()] or ["- none"]

    def table(title, rows, cols):
        L.extend(["", f"## {title}", ""])
        if not rows:
            L.append("none")
            return
        L.append("| " + " | ".join(cols) + " |")
        L.append("|" + "---|" * len(cols))
        for r in rows:
            vals = []
            for col in cols:
                v = r.get(col)
                if isinstance(v, list):
                    v = "; ".join(map(str, v))
                vals.append(str(v).replace("|", "\\|").replace("\n", " ") if v is not None else "")
            L.append("| " + " | ".join(vals) + " |")

    site_file = lambda r: r["site"].rsplit(":", 2)[0]
    table(f"Wrong edges (first {top} of {len(d['wrong'])}, spread over files)",
          spread(d["wrong"], site_file, top), ["site", "tier", "form", "to_name", "cruxe", "oracle", "code"])
    table(f"Missed sites (first {top} of {len(d['missed'])}, spread over files)",
          spread(d["missed"], site_file, top),
          ["site", "token", "form", "why", "oracle", "target_in_cruxe", "code"])
    table(f"Edges at oracle non-call sites (first 10 of {len(d['nonedge'])})",
          spread(d["nonedge"], site_file, 10), ["site", "tier", "oracle", "cruxe", "code"])
    L.extend(["", "## Edges where the oracle has no call site, by target kind / tier", ""])
    L += [f"- {k}: {n}" for k, n in d["unseen_by_kind_tier"].items()] or ["- none"]
    table(f"Edges where the oracle has no call site (first 10 of {len(d['unseen'])})",
          spread(d["unseen"], site_file, 10), ["site", "tier", "to_name", "cruxe", "code"])
    return "\n".join(L) + "\n"


# ----------------------------------------------------------------------------- report
def aggregate(results):
    agg = {}
    for r in results:
        a = agg.setdefault(r["lang"], {"corpora": [], "counts": collections.Counter(),
                                       "tiers": collections.defaultdict(collections.Counter)})
        a["corpora"].append(r["corpus"])
        a["counts"].update(r["counts"])
        for t, v in r["tiers"].items():
            a["tiers"][t].update(v)
    out = {}
    for lang, a in agg.items():
        c = a["counts"]
        out[lang] = {"corpora": a["corpora"], "counts": dict(c),
                     "precision": pct(c["correct"], c["correct"] + c["wrong"]),
                     "recall": pct(c["found"], c["oracle_edges"]),
                     "recall_nomacro": pct(c["found_nomacro"], c["oracle_edges"] - c["oracle_edges_in_macro"]),
                     "recall_reachable": pct(c["found_reachable"], c["oracle_edges_reachable"]),
                     "tiers": {t: dict(v) for t, v in a["tiers"].items()}}
        if c["oracle_edges_agree"]:
            out[lang]["agree_subset"] = {
                "oracle_edges": c["oracle_edges_agree"],
                "recall": pct(c["found_agree"], c["oracle_edges_agree"]),
                "precision": pct(c["correct_agree"], c["correct_agree"] + c["wrong_agree"])}
    return out


def tier_rows(tiers, n_oracle):
    rows = []
    order = TIERS + sorted(t for t in tiers if t not in TIERS)
    tiers = collections.defaultdict(collections.Counter, tiers)
    groups = [(t, [t]) for t in order]
    groups.insert(sum(1 for t in order if t in FIRST4), ("first4", [t for t in order if t in FIRST4]))
    groups.append(("all", order))
    for label, ts in groups:
        v = collections.Counter()
        for t in ts:
            v.update(tiers[t])
        rows.append((label, v, pct(v["correct"], v["correct"] + v["wrong"]), pct(v["found"], n_oracle)))
    return rows


def markdown(results, agg):
    L = ["## CALLS accuracy against the oracles", "",
         "| corpus | files | oracle edges | cruxe edges | correct | wrong | precision % | recall % | recall % (reachable) | in macro | no symbol | unknown | nonedge | unseen | via library | cfg twin |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def row(label, files, c, p, r, rn, bold=False):
        b = "**" if bold else ""
        unk = c.get("unknown_external", 0) + c.get("unknown_unresolved", 0)
        L.append(f"| {b}{label}{b} | {files} | {c.get('oracle_edges', 0)} | {c.get('cruxe_edges', 0)} | "
                 f"{c.get('correct', 0)} | {c.get('wrong', 0)} | {b}{fmt(p)}{b} | {b}{fmt(r)}{b} | {fmt(rn)} | "
                 f"{c.get('oracle_edges_in_macro', 0)} | {c.get('oracle_target_no_cruxe_symbol', 0)} | "
                 f"{unk} | {c.get('nonedge', 0)} | {c.get('unseen', 0)} | {c.get('via_library', 0)} | {c.get('cfg_twin', 0)} |")

    for lang in ["rust", "go", "py", "ts"]:
        rs = [r for r in results if r["lang"] == lang]
        if not rs:
            continue
        for r in rs:
            row(r["corpus"], r["files_indexed"], r["counts"], r["precision"], r["recall"], r["recall_reachable"])
        a = agg[lang]
        row(LANG_NAMES[lang], sum(r["files_indexed"] for r in rs), a["counts"], a["precision"], a["recall"],
            a["recall_reachable"], bold=True)
    L += ["", "oracle edges: sites the oracle resolves into the corpus, in files cruxe indexed. "
          "reachable: leaving out oracle edges inside Rust macro arguments (in macro) and those whose target "
          "has no cruxe symbol of its name spanning its line (no symbol). Not scored, counted: cruxe edges at "
          "sites the oracle did not resolve (unknown), at sites it proved are no call "
          "of a definition (nonedge: Go conversions/builtins/func values, py/ts parameters and variables), "
          "and where it has no call site (unseen); at a site the oracle resolved outside the corpus, an edge "
          "to what that library function runs in the corpus (via library: Rust `it.collect()` runs the corpus's "
          "`Iterator::next`; the target is not the name called); an edge to another `#[cfg]`/build-tag definition "
          "of the oracle's target's name beside cruxe's edge to that target (cfg twin: the oracle builds one "
          "configuration), or, TypeScript, to the method of a value merged with the interface the oracle "
          "names (what runs). Any other edge at a site the oracle resolved "
          "outside the corpus (a library's method of the same name) counts as wrong.", ""]
    L += ["### Per tier (precision of the tier's edges; recall = share of all oracle edges the tier found)", "",
          "| language | tier | edges | at oracle edges | correct | wrong | precision % | recall % |",
          "|---|---|---|---|---|---|---|---|"]
    for lang in ["rust", "go", "py", "ts"]:
        if lang not in agg:
            continue
        a = agg[lang]
        for label, v, p, r in tier_rows(a["tiers"], a["counts"].get("oracle_edges", 0)):
            b = "**" if label in ("first4", "all") else ""
            L.append(f"| {LANG_NAMES[lang]} | {b}{label}{b} | {v['edges']} | {v['correct'] + v['wrong']} | "
                     f"{v['correct']} | {v['wrong']} | {fmt(p)} | {fmt(r)} |")
    L += ["", "### Library code and test code (by the calling site: cruxe's test-file rule; Rust "
          "test modules (`mod tests`, `tests_*`, a `tests.rs`), benches/ and examples/ count as test code)", "",
          "| language | part | oracle edges | correct | wrong | precision % | recall % |",
          "|---|---|---|---|---|---|---|"]
    for lang in ["rust", "go", "py", "ts"]:
        if lang not in agg:
            continue
        c = agg[lang]["counts"]
        for part, label in (("lib", "library"), ("test", "test")):
            n, ok, bad = c.get(part + "_oracle_edges", 0), c.get(part + "_correct", 0), c.get(part + "_wrong", 0)
            L.append(f"| {LANG_NAMES[lang]} | {label} | {n} | {ok} | {bad} | {fmt(pct(ok, ok + bad))} | "
                     f"{fmt(pct(c.get(part + '_found', 0), n))} |")
    extra = [(l, a["agree_subset"]) for l, a in agg.items() if "agree_subset" in a]
    if extra:
        L += ["", "### Python, sites where jedi and pyright agree (high-confidence subset)", "",
              "| language | oracle edges | precision % | recall % |", "|---|---|---|---|"]
        for l, s in extra:
            L.append(f"| {LANG_NAMES[l]} | {s['oracle_edges']} | {fmt(s['precision'])} | {fmt(s['recall'])} |")
    return "\n".join(L) + "\n"


def read_corpora():
    rows = []
    for l in open(os.path.join(HERE, "corpora.tsv")):
        if l.startswith("#") or not l.strip():
            continue
        name, lang, srcspec = l.rstrip("\n").split("\t")[:3]
        rows.append((name, lang.removesuffix("ws"), srcspec))  # rustws: a Rust workspace
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary", nargs="?", help="cruxe binary (copy it out of the target dir first)")
    ap.add_argument("corpora", nargs="*", help="corpus names from corpora.tsv (default: all prepared)")
    ap.add_argument("--cache", default=os.environ.get("CRUXE_ACC_CACHE",
                                                       os.path.expanduser("~/.cache/cruxe-accuracy")))
    ap.add_argument("--data", default="/tmp/acc-data", help="parent of the per-corpus data dirs")
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    ap.add_argument("--reuse", action="store_true", help="reuse existing data dirs (no re-index)")
    ap.add_argument("--dump-dir", help="score saved dumps instead of running cruxe")
    ap.add_argument("--save-dumps", action="store_true", help="write OUT/dumps/NAME.*.json")
    ap.add_argument("--top", type=int, default=20)
    a = ap.parse_args()
    if a.binary and a.dump_dir:
        a.corpora.insert(0, a.binary)   # with --dump-dir every positional is a corpus name
        a.binary = None
    if not a.binary and not a.dump_dir:
        ap.error("give CRUXE_BINARY or --dump-dir")
    os.makedirs(a.out, exist_ok=True)
    known = read_corpora()
    want = a.corpora or [n for n, _, _ in known]
    unknown = set(want) - {n for n, _, _ in known}
    if unknown:
        ap.error(f"unknown corpora: {sorted(unknown)}")
    results, meta = [], {}
    for name, lang, spec in known:
        if name not in want:
            continue
        cdir = os.path.join(a.cache, "corpora", name)
        if not os.path.exists(os.path.join(cdir, "oracle.jsonl")):
            print(f"skip {name}: no oracle.jsonl (run setup.sh {name})", file=sys.stderr)
            continue
        if a.dump_dir:
            ld = lambda k: json.load(open(os.path.join(a.dump_dir, f"{name}.{k}.json")))
            files, syms, calls, t = ld("files"), ld("symbols"), ld("calls"), {}
        else:
            files, syms, calls, t = run_cruxe(a.binary, os.path.join(cdir, "tree"),
                                              os.path.join(a.data, name), a.reuse)
            if a.save_dumps:
                os.makedirs(os.path.join(a.out, "dumps"), exist_ok=True)
                for k, v in (("files", files), ("symbols", syms), ("calls", calls)):
                    json.dump(v, open(os.path.join(a.out, "dumps", f"{name}.{k}.json"), "w"))
        print(f"{name}: {len(files)} files, {len(syms)} symbols, {len(calls)} CALLS {t}", file=sys.stderr)
        res, det = score_corpus(name, lang, cdir, files, syms, calls, a.top)
        res["cruxe_run"] = t
        for k in ("oracle.version", "oracle.time"):
            p = os.path.join(cdir, k)
            if os.path.exists(p):
                res[k.replace(".", "_")] = open(p).read().strip()
        results.append(res)
        with open(os.path.join(a.out, f"{name}.details.md"), "w") as f:
            f.write(details_md(res, det, a.top))
        for k in ("wrong", "missed"):
            with open(os.path.join(a.out, f"{name}.{k}.jsonl"), "w") as f:
                for r in det[k]:
                    f.write(json.dumps(r) + "\n")
    agg = aggregate(results)
    md = markdown(results, agg)
    binary_info = {}
    if a.binary:
        binary_info = {"binary": os.path.abspath(a.binary),
                       "mtime": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.path.getmtime(a.binary)))}
    try:
        binary_info["git_head"] = subprocess.run(["git", "-C", HERE, "log", "--oneline", "-1"],
                                                 capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    with open(os.path.join(a.out, "accuracy.json"), "w") as f:
        json.dump({"run": binary_info, "languages": agg, "corpora": results}, f, indent=1, sort_keys=True)
    with open(os.path.join(a.out, "accuracy.md"), "w") as f:
        f.write(md)
    sys.stdout.write(md)


if __name__ == "__main__":
    main()
