#!/usr/bin/env node
// Usage: node ts_decls.js <repo-dir>  > ts_decls.jsonl
// Prints one JSON line {file, name, kind, line, via} per top-level exported declaration
// of every .ts/.tsx/.mts/.cts file under <repo-dir> (skips node_modules/ and .git/; .d.ts files ARE
// included and marked dts:true, since hand-written ambient files are source too).
//   via = "modifier": `export <decl>` / `export default <named decl>` / `export declare ...`
//   via = "list":     a top-level declaration exported by a local `export { x }` / `export default x`
//                     (no `from`); reported separately, not part of the main recall figure.
// `export default function () {}` / `export default class {}` (anonymous) -> name "default", anon:true.
// Re-exports (`export {x} from`, `export * from`), `export =`, `export import x = ...` are excluded.
// Lines are 1-based (line of the declaration name, falling back to the statement start).
const ts = require('typescript');
const fs = require('fs');
const path = require('path');

const root = path.resolve(process.argv[2] || '.');
const files = [];
(function walk(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === '.git') continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.isFile() && /\.(ts|tsx|mts|cts)$/.test(e.name)) files.push(p);
  }
})(root);
files.sort();

const has = (node, k) => (ts.canHaveModifiers(node) && ts.getModifiers(node) || []).some(m => m.kind === k);
const KIND = {
  [ts.SyntaxKind.FunctionDeclaration]: 'function',
  [ts.SyntaxKind.ClassDeclaration]: 'class',
  [ts.SyntaxKind.InterfaceDeclaration]: 'interface',
  [ts.SyntaxKind.TypeAliasDeclaration]: 'type',
  [ts.SyntaxKind.EnumDeclaration]: 'enum',
  [ts.SyntaxKind.ModuleDeclaration]: 'namespace',
};

function bindingNames(name, out) {
  if (ts.isIdentifier(name)) out.push(name);
  else for (const el of name.elements) if (!ts.isOmittedExpression(el)) bindingNames(el.name, out);
  return out;
}

for (const abs of files) {
  const rel = path.relative(root, abs).split(path.sep).join('/');
  const text = fs.readFileSync(abs, 'utf8');
  const kindScript = abs.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(abs, text, ts.ScriptTarget.Latest, true, kindScript);
  const lineOf = n => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
  const dts = abs.endsWith('.d.ts');
  const emit = (name, kind, node, extra = {}) =>
    process.stdout.write(JSON.stringify({ file: rel, name, kind, line: lineOf(node), dts, ...extra }) + '\n');

  const localDecls = new Map(); // name -> [kind, node, declared]
  const exportedByList = new Set();
  const emitted = new Set();

  for (const st of sf.statements) {
    const exp = has(st, ts.SyntaxKind.ExportKeyword);
    const def = has(st, ts.SyntaxKind.DefaultKeyword);
    const decl = has(st, ts.SyntaxKind.DeclareKeyword);
    const abstract = has(st, ts.SyntaxKind.AbstractKeyword);
    if (KIND[st.kind]) {
      let kind = KIND[st.kind];
      if (kind === 'namespace' && st.flags & ts.NodeFlags.GlobalAugmentation) continue; // declare global
      if (kind === 'namespace' && ts.isStringLiteral(st.name)) kind = 'module-augmentation';
      const nameNode = st.name;
      const name = nameNode ? nameNode.text : null;
      const extra = { declare: decl || undefined, abstract: abstract || undefined, default: def || undefined };
      if (exp) {
        if (!name) emit('default', kind, st, { ...extra, anon: true, via: 'modifier' });
        else {
          // function overloads: emit once per (name, kind)
          const key = name + '\0' + kind;
          if (emitted.has(key)) continue;
          emitted.add(key);
          emit(name, kind, nameNode, { ...extra, via: 'modifier' });
        }
      } else if (name) localDecls.set(name, [kind, nameNode, decl]);
    } else if (ts.isVariableStatement(st)) {
      const flags = st.declarationList.flags;
      const kind = flags & ts.NodeFlags.Const ? 'const' : flags & ts.NodeFlags.Let ? 'let' : 'var';
      for (const d of st.declarationList.declarations)
        for (const id of bindingNames(d.name, [])) {
          if (exp) emit(id.text, kind, id, { declare: decl || undefined, via: 'modifier' });
          else localDecls.set(id.text, [kind, id, decl]);
        }
    } else if (ts.isExportDeclaration(st) && !st.moduleSpecifier && st.exportClause && ts.isNamedExports(st.exportClause)) {
      for (const el of st.exportClause.elements) exportedByList.add((el.propertyName || el.name).text);
    } else if (ts.isExportAssignment(st) && !st.isExportEquals && ts.isIdentifier(st.expression)) {
      exportedByList.add(st.expression.text);
    }
  }
  for (const n of exportedByList) {
    const d = localDecls.get(n);
    if (d) emit(n, d[0], d[1], { via: 'list' });
  }
}
