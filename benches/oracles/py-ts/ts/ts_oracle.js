#!/usr/bin/env node
// TypeScript call-graph oracle using the compiler API (type checker).
//
// Usage:
//   node ts_oracle.js --project path/to/tsconfig.json [--root DIR] [--out edges.jsonl]
//   node ts_oracle.js --root DIR [--exclude REGEX] [--out edges.jsonl]
//        (no tsconfig: all .ts/.tsx under DIR except .d.ts and node_modules,
//         with built-in default options, see DEFAULT_OPTIONS)
//   --diagnostics   also count semantic diagnostics (slow: full type check)
//
// One JSON line per CallExpression / NewExpression in a project source file:
//   caller_path/caller_line/caller_qualname: enclosing function-like/class chain
//     (caller_line = line of the declaration's *name* token; anonymous functions:
//      node start; top level: 0 and "<module>")
//   callee_path/callee_line/callee_qualname/callee_kind/callee_in_project
//     callee_line = line of the callee declaration's name token; for overloaded
//     functions/methods the implementation (declaration with a body) if it exists.
//     `new C()` and `C()` on a class resolve to the class (kind "class").
//   site_line/site_col: position of the callee *name token* (identifier, the
//     property name in a.b.c(), `super`, the element in a[k]()), 1-based line,
//     0-based UTF-8 BYTE column (tree-sitter convention; TS itself uses UTF-16).
//   call_line/call_col: start of the whole call node.
//   status: resolved | ambiguous | unresolved | non_def | unsupported
//   how: "signature" | "symbol" (which API produced the answer)
"use strict";
const ts = require("typescript");
const fs = require("fs");
const path = require("path");

function parseArgs() {
  const a = process.argv.slice(2);
  const o = { diagnostics: false };
  for (let i = 0; i < a.length; i++) {
    if (a[i] === "--project") o.project = a[++i];
    else if (a[i] === "--root") o.root = a[++i];
    else if (a[i] === "--out") o.out = a[++i];
    else if (a[i] === "--exclude") o.exclude = new RegExp(a[++i]);
    else if (a[i] === "--diagnostics") o.diagnostics = true;
    else throw new Error("unknown arg " + a[i]);
  }
  return o;
}

const DEFAULT_OPTIONS = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  strict: true,
  skipLibCheck: true,
  allowJs: false,
  noEmit: true,
  jsx: ts.JsxEmit.Preserve,
  allowImportingTsExtensions: true,
  resolveJsonModule: true,
  esModuleInterop: true,
};

function walkFiles(dir, out, exclude) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name === "node_modules" || e.name.startsWith(".")) continue;
      walkFiles(p, out, exclude);
    } else if (/\.(ts|tsx|mts|cts)$/.test(e.name) && !/\.d\.(ts|mts|cts)$/.test(e.name)) {
      if (!exclude || !exclude.test(p)) out.push(p);
    }
  }
  return out;
}

function main() {
  const args = parseArgs();
  const t0 = Date.now();
  let rootNames, options;
  if (args.project) {
    const cfgPath = path.resolve(args.project);
    const cfg = ts.readConfigFile(cfgPath, ts.sys.readFile);
    if (cfg.error) throw new Error(ts.flattenDiagnosticMessageText(cfg.error.messageText, "\n"));
    const parsed = ts.parseJsonConfigFileContent(cfg.config, ts.sys, path.dirname(cfgPath));
    rootNames = parsed.fileNames;
    options = Object.assign({}, parsed.options, { noEmit: true, skipLibCheck: true, incremental: false });
    delete options.tsBuildInfoFile;
    if (args.exclude) rootNames = rootNames.filter((f) => !args.exclude.test(f));
  } else {
    rootNames = walkFiles(path.resolve(args.root), [], args.exclude);
    options = DEFAULT_OPTIONS;
  }
  const root = path.resolve(args.root || path.dirname(path.resolve(args.project)));
  const program = ts.createProgram({ rootNames, options });
  const checker = program.getTypeChecker();
  const tProgram = Date.now() - t0;

  const inProject = (f) => f.startsWith(root + path.sep) && !f.includes(path.sep + "node_modules" + path.sep);
  const rel = (f) => (inProject(f) ? path.relative(root, f) : f);
  const sourceFiles = program.getSourceFiles().filter((sf) => !sf.isDeclarationFile && inProject(path.resolve(sf.fileName)));

  const out = args.out ? fs.createWriteStream(args.out) : process.stdout;
  const stats = { files: sourceFiles.length, sites: 0, resolved: 0, ambiguous: 0, unresolved: 0,
    non_def: 0, unsupported: 0, in_project: 0, via_symbol: 0, calls: 0, news: 0 };
  const lineCache = new Map();

  // UTF-16 column -> UTF-8 byte column
  function byteCol(sf, line0, ch) {
    let lines = lineCache.get(sf.fileName);
    if (!lines) { lines = sf.text.split("\n"); lineCache.set(sf.fileName, lines); }
    return Buffer.byteLength(lines[line0].slice(0, ch), "utf8");
  }
  function pos(node) {
    const sf = node.getSourceFile();
    const lc = sf.getLineAndCharacterOfPosition(node.getStart(sf));
    return { line: lc.line + 1, col: byteCol(sf, lc.line, lc.character), file: path.resolve(sf.fileName) };
  }

  // ---- naming ----
  function declName(d) {
    if (d.name && (ts.isIdentifier(d.name) || ts.isPrivateIdentifier(d.name) || ts.isStringLiteral(d.name) || ts.isNumericLiteral(d.name))) return d.name.text;
    if (d.name && ts.isComputedPropertyName(d.name)) return "[" + d.name.expression.getText() + "]";
    if (ts.isConstructorDeclaration(d)) return "constructor";
    if ((ts.isArrowFunction(d) || ts.isFunctionExpression(d) || ts.isClassExpression(d)) && d.parent) {
      const p = d.parent;
      if ((ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) && p.initializer === d) return declName(p);
      if (ts.isExportAssignment(p)) return "default";
    }
    return null;
  }
  function nameNode(d) {
    if (d.name) return d.name;
    if (ts.isConstructorDeclaration(d)) return d.getChildren().find((c) => c.kind === ts.SyntaxKind.ConstructorKeyword) || d;
    if ((ts.isArrowFunction(d) || ts.isFunctionExpression(d) || ts.isClassExpression(d)) && d.parent) {
      const p = d.parent;
      if ((ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) && p.initializer === d && p.name) return p.name;
    }
    return d;
  }
  const isScope = (n) => ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isConstructorDeclaration(n) ||
    ts.isGetAccessorDeclaration(n) || ts.isSetAccessorDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n) ||
    ts.isClassDeclaration(n) || ts.isClassExpression(n) || ts.isModuleDeclaration(n) ||
    ts.isInterfaceDeclaration(n) || ts.isTypeAliasDeclaration(n);
  function modName(file) {
    return rel(file).replace(/\.(d\.)?(ts|tsx|mts|cts)$/, "").split(path.sep).join("/");
  }
  function qualname(d) {
    // chain of enclosing scopes (outermost first), "module:A.b.<anon@L>"
    const parts = [];
    if (!isScope(d)) parts.push(declName(d) != null ? declName(d) : "<anon@" + pos(d).line + ">");
    for (let n = d; n && !ts.isSourceFile(n); n = n.parent) {
      if (isScope(n)) {
        const nm = declName(n);
        parts.unshift(nm != null ? nm : "<anon@" + pos(n).line + ">");
      }
    }
    return modName(path.resolve(d.getSourceFile().fileName)) + ":" + parts.join(".");
  }
  function enclosingScope(node) {
    for (let n = node.parent; n && !ts.isSourceFile(n); n = n.parent) {
      // parameter default values / decorators are evaluated outside the body, ignore that subtlety
      if (ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isConstructorDeclaration(n) ||
          ts.isGetAccessorDeclaration(n) || ts.isSetAccessorDeclaration(n) || ts.isArrowFunction(n) ||
          ts.isFunctionExpression(n) || ts.isClassDeclaration(n) || ts.isClassExpression(n) || ts.isModuleDeclaration(n)) return n;
    }
    return null;
  }

  // ---- callee classification ----
  const FUNC_KINDS = new Set([ts.SyntaxKind.FunctionDeclaration, ts.SyntaxKind.MethodDeclaration,
    ts.SyntaxKind.MethodSignature, ts.SyntaxKind.Constructor, ts.SyntaxKind.ArrowFunction,
    ts.SyntaxKind.FunctionExpression, ts.SyntaxKind.GetAccessor, ts.SyntaxKind.SetAccessor,
    ts.SyntaxKind.ClassDeclaration, ts.SyntaxKind.ClassExpression]);
  function kindOf(d) {
    if (ts.isClassDeclaration(d) || ts.isClassExpression(d)) return "class";
    if (ts.isMethodDeclaration(d) || ts.isMethodSignature(d)) return d.body ? "method" : (ts.isMethodSignature(d) ? "method_signature" : "method_overload_or_abstract");
    if (ts.isConstructorDeclaration(d)) return "constructor";
    if (ts.isFunctionDeclaration(d)) return d.body ? "function" : "function_overload_or_declare";
    if (ts.isArrowFunction(d) || ts.isFunctionExpression(d)) return "function_expr";
    return ts.SyntaxKind[d.kind];
  }
  // normalise a declaration to a "definition" node or null
  function toDef(d) {
    if (!d) return null;
    if (ts.isConstructorDeclaration(d)) return d.parent; // ctor -> class
    if (ts.isVariableDeclaration(d) || ts.isPropertyDeclaration(d) || ts.isPropertyAssignment(d)) {
      const init = d.initializer;
      if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init) || ts.isClassExpression(init))) return init;
      return null;
    }
    if (FUNC_KINDS.has(d.kind)) return d;
    return null;
  }
  // for overloads: prefer the implementation (has body) among the symbol's declarations
  function implOf(d) {
    if ((ts.isFunctionDeclaration(d) || ts.isMethodDeclaration(d)) && !d.body && d.symbol) {
      const impl = (d.symbol.declarations || []).find((x) => x.kind === d.kind && x.body);
      if (impl) return impl;
    }
    return d;
  }
  function followAlias(sym) {
    if (sym && sym.flags & ts.SymbolFlags.Alias) {
      try { return checker.getAliasedSymbol(sym); } catch (e) { return sym; }
    }
    return sym;
  }
  function describe(d) {
    const nn = nameNode(d);
    const p = pos(nn);
    return { path: rel(p.file), line: p.line, qualname: qualname(d), kind: kindOf(d), in_project: inProject(p.file) };
  }
  function siteNode(call) {
    let e = call.expression;
    while (e && ts.isNonNullExpression(e)) e = e.expression; // foo!() / a.b!()
    if (ts.isIdentifier(e) || e.kind === ts.SyntaxKind.SuperKeyword || e.kind === ts.SyntaxKind.ThisKeyword) return e;
    if (ts.isPropertyAccessExpression(e)) return e.name;
    if (ts.isElementAccessExpression(e)) return e.argumentExpression;
    return null;
  }

  function resolveCall(call) {
    const sn = siteNode(call);
    let defs = [], how = null, nonDef = null, nonDefDecl = null;
    // 1) symbol at the callee name (alias-followed): classes for `new C()`, unions, overload sets
    let sym = null;
    if (sn) {
      sym = followAlias(checker.getSymbolAtLocation(sn));
    }
    // 2) resolved signature
    let sigDecl = null;
    try {
      const sig = checker.getResolvedSignature(call);
      sigDecl = sig && sig.declaration;
    } catch (e) { /* checker crash on weird code */ }
    if (sigDecl && !ts.isJSDocSignature(sigDecl)) {
      const d = toDef(sigDecl);
      if (d) { defs = [d]; how = "signature"; }
      else { nonDef = ts.SyntaxKind[sigDecl.kind]; nonDefDecl = sigDecl; } // FunctionType / CallSignature / ConstructSignature ...
    }
    if (ts.isNewExpression(call) && sym && (sym.flags & ts.SymbolFlags.Class)) {
      // spec: `new C()` -> class C (not the inherited/explicit constructor)
      const cd = (sym.declarations || []).find((x) => ts.isClassDeclaration(x) || ts.isClassExpression(x));
      if (cd) { defs = [cd]; how = "symbol"; }
    }
    // union receivers (a: A | B; a.m()): one definition per member type -> ambiguous
    const e = call.expression;
    if (ts.isPropertyAccessExpression(e) && !ts.isNewExpression(call)) {
      let rt = null;
      try { rt = checker.getNonNullableType(checker.getTypeAtLocation(e.expression)); } catch (err) {}
      if (rt && rt.isUnion()) {
        const ds = [];
        for (const t of rt.types) {
          const p = checker.getPropertyOfType(checker.getApparentType(t), e.name.text);
          for (const d of (p && p.declarations) || []) { const x = toDef(d); if (x) ds.push(implOf(x)); }
        }
        const keys = new Set(ds.map((d) => d.getSourceFile().fileName + ":" + d.pos));
        if (keys.size > 1) { defs = ds; how = "symbol_union"; }
      }
    }
    if (!defs.length && sym) {
      const ds = (sym.declarations || []).map(toDef).filter(Boolean);
      if (ds.length) { defs = ds; how = "symbol"; }
      else if (sym.declarations && sym.declarations.length && !nonDef) nonDef = ts.SyntaxKind[sym.declarations[0].kind];
    }
    // overload sets collapse to their implementation; dedupe
    const seen = new Set(), uniq = [];
    for (let d of defs) {
      d = implOf(d);
      const k = d.getSourceFile().fileName + ":" + d.pos;
      if (!seen.has(k)) { seen.add(k); uniq.push(d); }
    }
    return { defs: uniq, how, nonDef, nonDefDecl };
  }

  const tWalk0 = Date.now();
  for (const sf of sourceFiles) {
    const file = path.resolve(sf.fileName);
    const visit = (node) => {
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        stats.sites++;
        ts.isCallExpression(node) ? stats.calls++ : stats.news++;
        const scope = enclosingScope(node);
        const cp = pos(node);
        const sn = siteNode(node);
        let site;
        if (sn) site = pos(sn);
        else { // callee is not a name: position of the end of the callee expression
          const e = node.expression || node;
          const lc = sf.getLineAndCharacterOfPosition(e.getEnd());
          site = { line: lc.line + 1, col: byteCol(sf, lc.line, lc.character) };
        }
        const rec = {
          caller_path: rel(file),
          caller_line: scope ? pos(nameNode(scope)).line : 0,
          caller_qualname: scope ? qualname(scope) : modName(file) + ":<module>",
          callee_path: null, callee_line: null, callee_qualname: null, callee_kind: null, callee_in_project: false,
          site_line: site.line, site_col: site.col, call_line: cp.line, call_col: cp.col,
          node: ts.isCallExpression(node) ? "call" : "new",
          status: null, n_defs: 0, how: null,
        };
        const r = resolveCall(node);
        const ds = r.defs.map(describe);
        ds.sort((a, b) => (b.in_project - a.in_project) || String(a.path).localeCompare(String(b.path)) || a.line - b.line);
        rec.n_defs = ds.length;
        rec.how = r.how;
        if (ds.length) {
          const p = ds[0];
          Object.assign(rec, { callee_path: p.path, callee_line: p.line, callee_qualname: p.qualname,
            callee_kind: p.kind, callee_in_project: p.in_project });
          if (p.in_project) stats.in_project++;
          if (r.how && r.how.startsWith("symbol")) stats.via_symbol++;
          rec.status = ds.length === 1 ? "resolved" : "ambiguous";
          if (ds.length > 1) rec.alt = ds.slice(1);
        } else if (r.nonDef) {
          rec.status = "non_def"; rec.callee_kind = r.nonDef;
          if (r.nonDefDecl) { // where the (function-typed) signature is declared; not a definition
            const p = pos(r.nonDefDecl);
            rec.sig_path = rel(p.file); rec.sig_line = p.line; rec.sig_in_project = inProject(p.file);
          }
        } else if (!sn) {
          rec.status = "unsupported";
        } else {
          rec.status = "unresolved";
        }
        stats[rec.status]++;
        out.write(JSON.stringify(rec) + "\n");
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  const tWalk = Date.now() - tWalk0;
  if (args.diagnostics) {
    const t = Date.now();
    const diags = ts.getPreEmitDiagnostics(program);
    const byCode = {};
    for (const d of diags) byCode[d.code] = (byCode[d.code] || 0) + 1;
    stats.diagnostics = diags.length;
    stats.diagnostics_top = Object.entries(byCode).sort((a, b) => b[1] - a[1]).slice(0, 8);
    stats.t_diagnostics_s = (Date.now() - t) / 1000;
  }
  stats.t_program_s = tProgram / 1000;
  stats.t_resolve_s = tWalk / 1000;
  stats.s_per_1k_sites = +(1000 * tWalk / 1000 / Math.max(1, stats.sites)).toFixed(3);
  stats.typescript = ts.version;
  stats.rss_mb = Math.round(process.memoryUsage().rss / 1e6);
  const done = () => process.stderr.write(JSON.stringify(stats, null, 1) + "\n");
  if (args.out) out.end(done); else done();
}

main();
