#!/usr/bin/env python3
"""Import recall and resolution accuracy of cruxe on real code, against references
that do not use tree-sitter:

- python:     Python's own `ast` module (every Import/ImportFrom alias, its line),
              and a re-implementation of Python's module lookup for the targets;
- typescript: the TypeScript compiler (`ts.preProcessFile` for the imports,
              `ts.resolveModuleName` for the targets) run with node;
- go:         a plain-text parser of `import` declarations and the Go rule that a
              package is a directory (module `std`, vendor/ and go.mod modules);
- rust:       a token-level parser of `use` trees, `extern crate` and `mod x;`,
              with targets checked by name.

Usage: import_recall.py LANG CORPUS_DIR [CRUXE_BIN]
It indexes CORPUS_DIR into a scratch data dir with CRUXE_BIN, dumps the IMPORTS
edges with `cruxe cypher --json`, and prints recall and resolution figures.
"""

import ast
import json
import os
import re
import subprocess
import sys
import tempfile

LANG_EXT = {
    "python": (".py",),
    "typescript": (".ts", ".tsx", ".mts", ".cts"),
    "go": (".go",),
    "rust": (".rs",),
}


def cruxe_edges(cruxe, corpus, data):
    subprocess.run([cruxe, "index", corpus, "--data", data, "--repo", "corpus", "--ref", "r"],
                   check=True, stdout=subprocess.DEVNULL)
    out = subprocess.run(
        [cruxe, "cypher", "--data", data, "--json", "--limit", "10000000",
         "MATCH (f:File)-[e:IMPORTS]->(t) RETURN f.path AS path, e.line AS line, "
         "e.to_name AS to_name, label(t) AS label, t.path AS tpath, t.name AS tname, "
         "t.qualified_name AS tqn, t.kind AS tkind"],
        check=True, capture_output=True, text=True).stdout
    edges = json.loads(out)
    files = json.loads(subprocess.run(
        [cruxe, "cypher", "--data", data, "--json", "--limit", "10000000",
         "MATCH (f:File) RETURN f.path AS path"],
        check=True, capture_output=True, text=True).stdout)
    return edges, {f["path"] for f in files}


def pct(a, b):
    return f"{100.0 * a / b:.2f}% ({a}/{b})" if b else "n/a (0 items)"


# ---------------------------------------------------------------- python

def python_reference(corpus, indexed):
    """(path, line, to_name) of every import item, and the module table."""
    items = []
    modules = {}  # dotted module -> path
    for path in indexed:
        if path.endswith(".py"):
            mod = path[:-3].replace("/", ".")
            if mod.endswith(".__init__"):
                mod = mod[: -len(".__init__")]
            modules[mod] = path
    trees = {}
    for path in sorted(indexed):
        if not path.endswith(".py"):
            continue
        try:
            with open(os.path.join(corpus, path), "rb") as fh:
                tree = ast.parse(fh.read())
        except (SyntaxError, ValueError):
            continue
        trees[path] = tree
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    items.append((path, a.lineno, a.name, None, a.name, 0))
            elif isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for a in node.names:
                    sep = "" if module.endswith(".") else "."
                    items.append((path, a.lineno, module + sep + a.name, a.name,
                                  node.module or "", node.level))
    return items, modules, trees


def python_toplevel_names(tree):
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = "def"
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names.setdefault(t.id, "def")
    return names


def python_expected(item, modules, trees, depth=0):
    """The node Python's import system would bind: ('File', path),
    ('Symbol', path, name) or None when outside the corpus."""
    path, _line, _to, name, module, level = item
    if level:
        pkg = path[:-3].replace("/", ".")
        parts = pkg.split(".")
        parts = parts[:-1] if not path.endswith("__init__.py") else parts[:-1]
        if level > 1:
            parts = parts[: len(parts) - (level - 1)] if len(parts) >= level - 1 else None
        if parts is None:
            return None
        base = ".".join(parts + ([module] if module else []))
    else:
        base = module
    if name is None:
        return ("File", modules[base]) if base in modules else None
    if name == "*":
        return ("File", modules[base]) if base in modules else None
    full = f"{base}.{name}" if base else name
    mpath = modules.get(base)
    if mpath and mpath in trees:
        if name in python_toplevel_names(trees[mpath]):
            return ("Symbol", mpath, name)
    if full in modules:
        return ("File", modules[full])
    if mpath and mpath in trees and depth < 8:
        for node in ast.walk(trees[mpath]):
            if isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if (a.asname or a.name) == name and a.name != "*":
                        sub = (mpath, 0, "", a.name, node.module or "", node.level)
                        return python_expected(sub, modules, trees, depth + 1)
    return None


def run_python(corpus, edges, indexed):
    items, modules, trees = python_reference(corpus, indexed)
    by_key = {}
    for e in edges:
        by_key.setdefault((e["path"], e["line"], e["to_name"]), []).append(e)
    found = [it for it in items if (it[0], it[1], it[2]) in by_key]
    inside = right = 0
    for it in items:
        exp = python_expected(it, modules, trees)
        if exp is None:
            continue
        inside += 1
        for e in by_key.get((it[0], it[1], it[2]), []):
            if exp[0] == "File" and e["label"] == "File" and e["tpath"] == exp[1]:
                right += 1
                break
            if (exp[0] == "Symbol" and e["label"] == "Symbol" and e["tpath"] == exp[1]
                    and e["tname"] == exp[2]):
                right += 1
                break
    return len(found), len(items), right, inside


# ---------------------------------------------------------------- typescript

TS_SCRIPT = r"""
const ts = require(process.argv[2]);
const fs = require('fs'), path = require('path');
const root = process.argv[3];
const files = JSON.parse(fs.readFileSync(0, 'utf8'));
const opts = { moduleResolution: ts.ModuleResolutionKind.Node10, allowJs: true };
const host = ts.sys;
const out = [];
for (const f of files) {
  const text = fs.readFileSync(path.join(root, f), 'utf8');
  const info = ts.preProcessFile(text, true, true);
  const sf = ts.createSourceFile(f, text, ts.ScriptTarget.Latest);
  for (const imp of info.importedFiles) {
    const line = sf.getLineAndCharacterOfPosition(imp.pos).line + 1;
    const r = ts.resolveModuleName(imp.fileName, path.join(root, f), opts, host);
    let target = null;
    if (r.resolvedModule && !path.relative(root, r.resolvedModule.resolvedFileName).startsWith('..')) {
      target = path.relative(root, r.resolvedModule.resolvedFileName).split(path.sep).join('/');
    }
    out.push([f, line, imp.fileName, target]);
  }
}
process.stdout.write(JSON.stringify(out));
"""


def run_typescript(corpus, edges, indexed, ts_module):
    files = sorted(p for p in indexed if p.endswith(LANG_EXT["typescript"]))
    with tempfile.NamedTemporaryFile("w", suffix=".js", delete=False) as fh:
        fh.write(TS_SCRIPT)
        script = fh.name
    ref = json.loads(subprocess.run(["node", script, ts_module, corpus], input=json.dumps(files),
                                    capture_output=True, text=True, check=True).stdout)
    by_file = {}
    for e in edges:
        spec = e["to_name"].rsplit(":", 1)[0] if ":" in e["to_name"] else e["to_name"]
        by_file.setdefault((e["path"], spec), []).append(e)
    found = inside = right = 0
    for path, line, spec, target in ref:
        cands = [e for e in by_file.get((path, spec), []) if line - 30 <= e["line"] <= line]
        if cands:
            found += 1
        if target is None or target.endswith(".d.ts") and target not in indexed:
            continue
        inside += 1
        if any((e["label"] == "File" and e["tpath"] == target)
               or (e["label"] == "Symbol" and e["tpath"] == target) for e in cands):
            right += 1
    return found, len(ref), right, inside


# ---------------------------------------------------------------- go

GO_IMPORT = re.compile(r'^\s*(?:[\w.]+\s+)?"([^"]+)"')


def strip_go_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def go_reference(corpus, indexed):
    items = []
    for path in sorted(p for p in indexed if p.endswith(".go")):
        with open(os.path.join(corpus, path), encoding="utf-8", errors="replace") as fh:
            lines = strip_go_comments(fh.read()).split("\n")
        i = 0
        in_block = False
        while i < len(lines):
            l = lines[i]
            s = l.strip()
            if in_block:
                if s.startswith(")"):
                    in_block = False
                else:
                    m = GO_IMPORT.match(l)
                    if m:
                        items.append((path, i + 1, m.group(1)))
            elif s.startswith("import ("):
                in_block = True
            elif s.startswith("import "):
                m = GO_IMPORT.match(s[len("import "):])
                if m:
                    items.append((path, i + 1, m.group(1)))
            elif s.startswith(("func ", "type ", "var ", "const ")):
                break  # imports come first in a Go file
            i += 1
    return items


def go_module_dirs(corpus):
    mods = {}
    for dirpath, _dirs, files in os.walk(corpus):
        if "go.mod" in files:
            with open(os.path.join(dirpath, "go.mod")) as fh:
                for line in fh:
                    if line.startswith("module "):
                        rel = os.path.relpath(dirpath, corpus)
                        mods[line.split()[1].strip('"')] = "" if rel == "." else rel
    return mods


def run_go(corpus, edges, indexed):
    items = go_reference(corpus, indexed)
    mods = go_module_dirs(corpus)
    # A package is the non-test .go files of a directory.
    dirs = {}
    for p in indexed:
        if p.endswith(".go") and not p.endswith("_test.go"):
            dirs.setdefault(os.path.dirname(p), set()).add(p)
    by_key = {}
    for e in edges:
        by_key.setdefault((e["path"], e["line"], e["to_name"]), []).append(e)
    found = inside = right = 0
    for path, line, ip in items:
        es = by_key.get((path, line, ip), [])
        if es:
            found += 1
        # Where the go tool would look: vendor dirs, then modules (std: GOROOT/src).
        expect = None
        d = os.path.dirname(path)
        while True:
            cand = os.path.join(d, "vendor", ip) if d else os.path.join("vendor", ip)
            if cand in dirs:
                expect = dirs[cand]
                break
            if not d:
                break
            d = os.path.dirname(d)
        if expect is None:
            for mod, mdir in mods.items():
                if mod == "std" and "." not in ip.split("/")[0]:
                    cand = os.path.join(mdir, ip) if mdir else ip
                elif ip == mod or ip.startswith(mod + "/"):
                    rel = ip[len(mod):].lstrip("/")
                    cand = os.path.join(mdir, rel) if mdir else rel
                else:
                    continue
                if cand in dirs:
                    expect = dirs[cand]
                    break
        if expect is None:
            continue
        inside += 1
        # One edge to the package (schema 2); its files are the directory's.
        got = {e["tpath"] for e in es if e["label"] == "Package"}
        if got and {p for p in indexed if os.path.dirname(p) in got
                    and p.endswith(".go") and not p.endswith("_test.go")} == expect:
            right += 1
    return found, len(items), right, inside


# ---------------------------------------------------------------- rust

RUST_TOKEN = re.compile(r"""
    (?P<ws>\s+) | (?P<lc>//[^\n]*) | (?P<bc>/\*.*?\*/) |
    (?P<str>b?"(?:\\.|[^"\\])*") | (?P<raw>b?r(?P<h>\#*)".*?"(?P=h)) |
    (?P<chr>'(?:\\.|[^'\\])') | (?P<life>'[A-Za-z_]\w*) |
    (?P<id>[A-Za-z_]\w*|\$crate) | (?P<p>::|[{}();,*\#\[\]=!<>&.]) | (?P<o>.)
""", re.S | re.X)


def rust_tokens(text):
    line = 1
    for m in RUST_TOKEN.finditer(text):
        kind = m.lastgroup
        tok = m.group(0)
        if kind not in ("ws", "lc", "bc", "str", "raw", "chr", "life", "h"):
            yield tok, line
        line += tok.count("\n")


def rust_use_leaves(toks, i, prefix, out):
    """Parse a use tree starting at toks[i]; append (segments, line); return index."""
    segs = list(prefix)
    line = toks[i][1] if i < len(toks) else 0
    first = True
    while i < len(toks):
        t, l = toks[i]
        if t == "::":
            i += 1
            continue
        if t == "{":
            i += 1
            while i < len(toks) and toks[i][0] != "}":
                i = rust_use_leaves(toks, i, segs, out)
                if i < len(toks) and toks[i][0] == ",":
                    i += 1
            return i + 1
        if t == "*":
            out.append((segs + ["*"], l))
            return i + 1
        if t in (",", "}", ";"):
            break
        if t == "as":
            i += 2
            continue
        if first:
            line = l
            first = False
        segs.append(t)
        i += 1
    if segs and segs != list(prefix):
        if segs[-1] == "self" and len(segs) > 1:
            segs = segs[:-1]
        out.append((segs, line))
    return i


def rust_reference(corpus, indexed):
    items = []
    for path in sorted(p for p in indexed if p.endswith(".rs")):
        with open(os.path.join(corpus, path), encoding="utf-8", errors="replace") as fh:
            toks = list(rust_tokens(fh.read()))
        i = 0
        depth_attr = 0
        while i < len(toks):
            t, l = toks[i]
            if t == "use" and (i == 0 or toks[i - 1][0] in (";", "}", "{", "]", ")", "pub")):
                out = []
                rust_use_leaves(toks, i + 1, [], out)
                items.extend((path, line, "::".join(segs)) for segs, line in out)
            elif t == "extern" and i + 2 < len(toks) and toks[i + 1][0] == "crate":
                items.append((path, l, toks[i + 2][0]))
            elif (t == "mod" and i + 2 < len(toks) and toks[i + 2][0] == ";"
                  and (i == 0 or toks[i - 1][0] in (";", "}", "{", "]", ")", "pub"))):
                items.append((path, l, toks[i + 1][0]))
            i += 1
    return items


def run_rust(corpus, edges, indexed):
    items = rust_reference(corpus, indexed)
    by_key = {}
    edges_by_path = {}
    for e in edges:
        edges_by_path.setdefault(e["path"], []).append(e)
    for e in edges:
        by_key.setdefault((e["path"], e["line"], e["to_name"]), []).append(e)
    found = inside = right = outside = 0
    dump = open(os.environ["RECALL_DUMP"], "w") if os.environ.get("RECALL_DUMP") else None

    # The crate of a file: its nearest Cargo.toml. What each crate's `use` items
    # name as written: an in-crate path that a `pub use` carries out of the crate
    # is right as an External of that outside path, when the crate imports that
    # path, a module of it (`use core::convert;`) or a glob over one.
    def crate_of(path):
        d = os.path.dirname(path)
        while d and not os.path.exists(os.path.join(corpus, d, "Cargo.toml")):
            d = os.path.dirname(d)
        return d
    crate_cache = {}
    written = {}
    for path, _, name in items:
        c = crate_cache.setdefault(os.path.dirname(path), crate_of(path))
        written.setdefault(c, set()).add(name)

    # `#[path = "x.rs"] mod name;` (also in `cfg_attr`): (crate, name) → the
    # file names it may point at, read from the source with a regular expression.
    path_value = re.compile(r'\bpath\s*=\s*"([^"]+)"')
    mod_decl = re.compile(r'^\s*(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(\w+)\s*;')
    path_mods = {}
    for p in sorted(indexed):
        if not p.endswith(".rs"):
            continue
        with open(os.path.join(corpus, p), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().split("\n")
        c = None
        for i, text in enumerate(lines):
            m = mod_decl.match(text)
            if not m:
                continue
            # The attribute lines right above the declaration.
            j = i - 1
            while j >= 0 and lines[j].strip().startswith(("#[", "//", ")]", "path")):
                for v in path_value.findall(lines[j]):
                    if c is None:
                        c = crate_cache.setdefault(os.path.dirname(p), crate_of(p))
                    path_mods.setdefault((c, m.group(1)), set()).add(v.split("/")[-1])
                j -= 1

    def outside_ok(path, name, target):
        segs = target.split("::")
        if segs[0] in ("crate", "self", "super", "$crate") or segs[-1] != name.split("::")[-1]:
            return False
        names = written.get(crate_cache[os.path.dirname(path)], ())
        if target in names:
            return True
        # Through an imported outside module (`use core::convert;`) or a glob.
        for k in range(len(segs) - 1, 0, -1):
            prefix = "::".join(segs[:k])
            if (k >= 2 and prefix in names) or prefix + "::*" in names:
                return True
        return False

    for path, line, name in items:
        es = by_key.get((path, line, name), [])
        if es:
            found += 1
        elif dump:
            near = [e["to_name"] for e in edges_by_path.get(path, []) if abs(e["line"] - line) <= 1]
            dump.write(f"MISS {path}:{line} {name} near={near[:3]}\n")
        first = name.split("::")[0]
        if first not in ("crate", "self", "super"):
            continue
        # In-crate path: must resolve, to a node carrying the imported name.
        inside += 1
        last = name.split("::")[-1]
        ok = False
        for e in es:
            if e["label"] == "Symbol" and e["tname"] == last:
                ok = True
                break
            # A glob over an enum (`use Ordering::*`) stands for its variants.
            segs = name.split("::")
            if (e["label"] == "Symbol" and last == "*" and len(segs) > 1
                    and e["tname"] == segs[-2]):
                ok = True
                break
            # A glob over an inline `mod x { … }` of the same file (`use super::*;`
            # in `mod tests { mod inner { … } }`): the module's node.
            if (e["label"] == "Symbol" and last == "*" and e.get("tkind") == "mod"
                    and e["tpath"] == path):
                ok = True
                break
            if (e["label"] == "File" and e["tpath"].split("/")[-1] in
                    path_mods.get((crate_cache[os.path.dirname(path)], last), ())):
                ok = True
                break
            if e["label"] == "File" and (last == "*" or e["tpath"].split("/")[-1] in
                                         (last + ".rs", "mod.rs", "lib.rs", "main.rs")):
                ok = True
                break
            if e["label"] == "External" and outside_ok(path, name, e["tname"]):
                ok = True
                outside += 1
                break
        if ok:
            right += 1
        elif dump and es:
            dump.write(f"WRONG {path}:{line} {name} -> {es[0]['label']} {es[0]['tpath'] or es[0]['tname']}\n")
    print(f"rust: {outside} of the right ones are re-exports of another crate's items, "
          f"found as an External of that crate's path")
    return found, len(items), right, inside


def main():
    lang, corpus = sys.argv[1], os.path.abspath(sys.argv[2])
    cruxe = sys.argv[3] if len(sys.argv) > 3 else "cruxe"
    with tempfile.TemporaryDirectory() as tmp:
        edges, indexed = cruxe_edges(cruxe, corpus, os.path.join(tmp, "data"))
    indexed = {p for p in indexed if p.endswith(LANG_EXT[lang])}
    if lang == "python":
        r = run_python(corpus, edges, indexed)
    elif lang == "typescript":
        r = run_typescript(corpus, edges, indexed, os.environ.get("TS_MODULE", "typescript"))
    elif lang == "go":
        r = run_go(corpus, edges, indexed)
    else:
        r = run_rust(corpus, edges, indexed)
    found, total, right, inside = r
    print(f"{lang}: {len(indexed)} files | import items found at the right line: "
          f"{pct(found, total)} | in-repo targets resolved to the right node: {pct(right, inside)}")


if __name__ == "__main__":
    main()
