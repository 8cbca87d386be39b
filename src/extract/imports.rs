//! Import collection: the statements found by `queries/<lang>/imports.scm`, turned
//! into one `RawImport` per imported item (Rust use trees are flattened to their
//! leaves, Python `from a import b, c` gives two items). Resolution against the
//! repository happens later, in `crate::resolve`.

use tree_sitter::Node;

use super::text;
use crate::model::{ImportSpec, RawImport};

fn line(n: Node<'_>) -> u32 {
    n.start_position().row as u32 + 1
}

fn unquote(s: &str) -> String {
    let t = s.trim();
    let t = t
        .strip_prefix(['"', '\'', '`'])
        .and_then(|x| x.strip_suffix(['"', '\'', '`']))
        .unwrap_or(t);
    t.to_string()
}

// ---------------------------------------------------------------- Rust

pub(super) fn rust(capture: &str, node: Node<'_>, src: &str, out: &mut Vec<RawImport>) {
    match capture {
        "use" => {
            let reexport = {
                let mut c = node.walk();
                node.children(&mut c)
                    .any(|ch| ch.kind() == "visibility_modifier")
            };
            if let Some(arg) = node.child_by_field_name("argument") {
                let mut leaves = Vec::new();
                rust_use_tree(arg, src, &mut Vec::new(), &mut leaves);
                let inline = inline_modules(node, src);
                let scope = if in_block(node) {
                    // Bound inside a function body: no module sees it.
                    let mut s = inline.join("::");
                    s.push_str("{}");
                    s
                } else {
                    inline.join("::")
                };
                for (written, alias, at) in leaves {
                    let to_name = written.join("::");
                    let segments = relative_to_file(written, &inline);
                    out.push(RawImport {
                        scope: scope.clone(),
                        line: line(at),
                        to_name,
                        alias,
                        reexport,
                        spec: ImportSpec::RustUse(segments),
                    });
                }
            }
        }
        "extern_crate" => {
            if let Some(name) = node.child_by_field_name("name") {
                let name = text(name, src).to_string();
                // `pub extern crate grep_searcher as searcher;` re-exports the
                // crate under another name: lookups through `grep::searcher::…`
                // follow it as they follow a `pub use`.
                let public = {
                    let mut c = node.walk();
                    node.children(&mut c)
                        .any(|ch| ch.kind() == "visibility_modifier")
                };
                out.push(RawImport {
                    scope: String::new(),
                    line: line(node),
                    to_name: name.clone(),
                    alias: node
                        .child_by_field_name("alias")
                        .map(|a| text(a, src).to_string())
                        .unwrap_or_default(),
                    reexport: public,
                    spec: if public {
                        ImportSpec::RustUse(vec![name])
                    } else {
                        ImportSpec::RustExternCrate(name)
                    },
                });
            }
        }
        "mod" => {
            if let Some(name) = node.child_by_field_name("name") {
                let name = text(name, src).to_string();
                out.push(RawImport {
                    scope: String::new(),
                    line: line(node),
                    to_name: name.clone(),
                    alias: String::new(),
                    reexport: false,
                    spec: ImportSpec::RustMod {
                        paths: path_attributes(node, src),
                        name,
                    },
                });
            }
        }
        _ => {}
    }
}

/// Names of the inline `mod name { … }` blocks around `node`, outermost first.
fn inline_modules(node: Node<'_>, src: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut cur = node.parent();
    while let Some(n) = cur {
        if n.kind() == "mod_item"
            && let Some(name) = n.child_by_field_name("name")
        {
            names.push(text(name, src).to_string());
        }
        cur = n.parent();
    }
    names.reverse();
    names
}

/// Whether `node` sits in a block (a function body, a `const` block…) rather than
/// directly in a module.
fn in_block(node: Node<'_>) -> bool {
    let mut cur = node.parent();
    while let Some(n) = cur {
        match n.kind() {
            "block" => return true,
            "mod_item" | "source_file" => return false,
            _ => cur = n.parent(),
        }
    }
    false
}

/// Rewrites `self::`/`super::` paths written inside inline modules so they are
/// relative to the file's own module, which is what resolution knows: inside
/// `mod tests { use super::X; }` of module `a::b`, `super` is `a::b` itself.
fn relative_to_file(segments: Vec<String>, inline: &[String]) -> Vec<String> {
    if inline.is_empty() {
        return segments;
    }
    let first = segments.first().map(String::as_str);
    match first {
        Some("self") => {
            let mut out = vec!["self".to_string()];
            out.extend(inline.iter().cloned());
            out.extend(segments[1..].iter().cloned());
            out
        }
        Some("super") => {
            let ups = segments.iter().take_while(|s| *s == "super").count();
            let rest = &segments[ups..];
            if ups <= inline.len() {
                let mut out = vec!["self".to_string()];
                out.extend(inline[..inline.len() - ups].iter().cloned());
                out.extend(rest.iter().cloned());
                out
            } else {
                let mut out = vec!["super".to_string(); ups - inline.len()];
                out.extend(rest.iter().cloned());
                out
            }
        }
        _ => segments,
    }
}

/// The files of `#[path = "x.rs"]` and `#[cfg_attr(cond, path = "x.rs")]` right
/// above a `mod` declaration, nearest first.
fn path_attributes(node: Node<'_>, src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = node.prev_sibling();
    while let Some(n) = cur {
        if n.kind() != "attribute_item" {
            if n.kind() == "line_comment" || n.kind() == "block_comment" {
                cur = n.prev_sibling();
                continue;
            }
            break;
        }
        let t = text(n, src);
        let body = t.trim_start_matches("#[").trim_start();
        if body.starts_with("path") || body.starts_with("cfg_attr") {
            // `path = "…"` as a whole word: not `#[cfg_attr(x, doc = "a path")]`.
            let mut rest = body;
            while let Some(at) = rest.find("path") {
                let before = rest[..at].chars().next_back();
                let after = rest[at + 4..].trim_start();
                if !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    && let Some(value) = after.strip_prefix('=')
                    && let Some(v) = value.trim_start().strip_prefix('"')
                    && let Some((v, _)) = v.split_once('"')
                {
                    out.push(v.to_string());
                }
                rest = &rest[at + 4..];
            }
        }
        cur = n.prev_sibling();
    }
    out
}

/// Segments of a path node (`crate::a::b` → [crate, a, b]).
fn rust_path(n: Node<'_>, src: &str, out: &mut Vec<String>) {
    match n.kind() {
        "scoped_identifier" => {
            if let Some(p) = n.child_by_field_name("path") {
                rust_path(p, src, out);
            }
            if let Some(name) = n.child_by_field_name("name") {
                out.push(text(name, src).to_string());
            }
        }
        "generic_type" => {
            if let Some(t) = n.child_by_field_name("type") {
                rust_path(t, src, out);
            }
        }
        _ => out.push(text(n, src).to_string()),
    }
}

fn rust_use_tree<'t>(
    n: Node<'t>,
    src: &str,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, String, Node<'t>)>,
) {
    match n.kind() {
        "scoped_use_list" => {
            let before = prefix.len();
            if let Some(p) = n.child_by_field_name("path") {
                rust_path(p, src, prefix);
            }
            if let Some(list) = n.child_by_field_name("list") {
                rust_use_tree(list, src, prefix, out);
            }
            prefix.truncate(before);
        }
        "use_list" => {
            let mut c = n.walk();
            for child in n.named_children(&mut c) {
                rust_use_tree(child, src, prefix, out);
            }
        }
        "use_as_clause" => {
            let mut segs = prefix.clone();
            if let Some(p) = n.child_by_field_name("path") {
                rust_path(p, src, &mut segs);
            }
            let alias = n
                .child_by_field_name("alias")
                .map(|a| text(a, src).to_string())
                .unwrap_or_default();
            push_self_leaf(&mut segs);
            out.push((segs, alias, n));
        }
        "use_wildcard" => {
            let mut segs = prefix.clone();
            let mut c = n.walk();
            if let Some(p) = n.named_children(&mut c).next() {
                rust_path(p, src, &mut segs);
            }
            segs.push("*".to_string());
            out.push((segs, String::new(), n));
        }
        "line_comment" | "block_comment" => {}
        _ => {
            let mut segs = prefix.clone();
            rust_path(n, src, &mut segs);
            push_self_leaf(&mut segs);
            out.push((segs, String::new(), n));
        }
    }
}

/// `use a::b::{self}` imports `a::b` itself.
fn push_self_leaf(segs: &mut Vec<String>) {
    if segs.len() > 1 && segs.last().is_some_and(|s| s == "self") {
        segs.pop();
    }
}

// ---------------------------------------------------------------- Python

pub(super) fn python(capture: &str, node: Node<'_>, src: &str, out: &mut Vec<RawImport>) {
    let mut c = node.walk();
    match capture {
        "import" => {
            for item in node.children_by_field_name("name", &mut c) {
                let (name_node, alias) = split_alias(item, src);
                let module = text(name_node, src).to_string();
                out.push(RawImport {
                    scope: String::new(),
                    line: line(item),
                    to_name: module.clone(),
                    alias,
                    reexport: false,
                    spec: ImportSpec::Python { module, name: None },
                });
            }
        }
        "from" | "future" => {
            let module = if capture == "future" {
                "__future__".to_string()
            } else {
                node.child_by_field_name("module_name")
                    .map(|m| crate::model::normalize_ws(text(m, src)).replace(' ', ""))
                    .unwrap_or_default()
            };
            let names: Vec<Node<'_>> = node.children_by_field_name("name", &mut c).collect();
            if names.is_empty() {
                // `from x import *`
                let mut c2 = node.walk();
                if let Some(w) = node
                    .children(&mut c2)
                    .find(|n| n.kind() == "wildcard_import")
                {
                    out.push(RawImport {
                        scope: String::new(),
                        line: line(w),
                        to_name: join_py(&module, "*"),
                        alias: String::new(),
                        reexport: false,
                        spec: ImportSpec::Python {
                            module,
                            name: Some("*".into()),
                        },
                    });
                }
                return;
            }
            for item in names {
                let (name_node, alias) = split_alias(item, src);
                let name = text(name_node, src).to_string();
                out.push(RawImport {
                    scope: String::new(),
                    line: line(item),
                    to_name: join_py(&module, &name),
                    alias,
                    reexport: false,
                    spec: ImportSpec::Python {
                        module: module.clone(),
                        name: Some(name),
                    },
                });
            }
        }
        _ => {}
    }
}

fn join_py(module: &str, name: &str) -> String {
    if module.ends_with('.') {
        format!("{module}{name}")
    } else {
        format!("{module}.{name}")
    }
}

fn split_alias<'t>(item: Node<'t>, src: &str) -> (Node<'t>, String) {
    if item.kind() == "aliased_import" {
        let name = item.child_by_field_name("name").unwrap_or(item);
        let alias = item
            .child_by_field_name("alias")
            .map(|a| text(a, src).to_string())
            .unwrap_or_default();
        (name, alias)
    } else {
        (item, String::new())
    }
}

// ---------------------------------------------------------------- TypeScript

pub(super) fn typescript(
    capture: &str,
    node: Node<'_>,
    source: Option<Node<'_>>,
    src: &str,
    out: &mut Vec<RawImport>,
) {
    match capture {
        "import" => ts_import(node, src, out),
        "reexport" => ts_reexport(node, src, out),
        "require" | "dynamic" => {
            if let Some(s) = source {
                ts_push(
                    out,
                    node,
                    &unquote(text(s, src)),
                    Some("*".into()),
                    String::new(),
                    false,
                );
            }
        }
        _ => {}
    }
}

/// One TypeScript import item: `spec:name` (`*` for a namespace, `default`).
fn ts_push(
    out: &mut Vec<RawImport>,
    at: Node<'_>,
    spec: &str,
    name: Option<String>,
    alias: String,
    reexport: bool,
) {
    let to_name = match &name {
        Some(n) => format!("{spec}:{n}"),
        None => spec.to_string(),
    };
    out.push(RawImport {
        scope: String::new(),
        line: line(at),
        to_name,
        alias,
        reexport,
        spec: ImportSpec::Ts {
            specifier: spec.to_string(),
            name,
        },
    });
}

/// `import … from 'x'`, `import 'x'`, `import x = require('x')`.
fn ts_import(node: Node<'_>, src: &str, out: &mut Vec<RawImport>) {
    let Some(source) = node.child_by_field_name("source") else {
        // `import x = require('y')`
        let mut c = node.walk();
        if let Some(req) = node
            .children(&mut c)
            .find(|n| n.kind() == "import_require_clause")
            && let Some(s) = req.child_by_field_name("source")
        {
            ts_push(
                out,
                req,
                &unquote(text(s, src)),
                Some("*".into()),
                String::new(),
                false,
            );
        }
        return;
    };
    let spec = unquote(text(source, src));
    let mut c = node.walk();
    let clause = node.children(&mut c).find(|n| n.kind() == "import_clause");
    let Some(clause) = clause else {
        ts_push(out, node, &spec, None, String::new(), false);
        return;
    };
    let mut c = clause.walk();
    for part in clause.named_children(&mut c) {
        match part.kind() {
            "identifier" => {
                let local = text(part, src).to_string();
                ts_push(out, part, &spec, Some("default".into()), local, false);
            }
            "namespace_import" => {
                let mut c3 = part.walk();
                let local = part
                    .named_children(&mut c3)
                    .next()
                    .map(|i| text(i, src).to_string())
                    .unwrap_or_default();
                ts_push(out, part, &spec, Some("*".into()), local, false);
            }
            "named_imports" => {
                let mut c3 = part.walk();
                for s in part.named_children(&mut c3) {
                    if s.kind() != "import_specifier" {
                        continue;
                    }
                    let Some(name) = s.child_by_field_name("name") else {
                        continue;
                    };
                    let alias = s
                        .child_by_field_name("alias")
                        .map(|a| text(a, src).to_string())
                        .unwrap_or_default();
                    ts_push(out, s, &spec, Some(unquote(text(name, src))), alias, false);
                }
            }
            _ => {}
        }
    }
}

/// `export { a as b } from 'x'`, `export * as ns from 'x'`, `export * from 'x'`.
fn ts_reexport(node: Node<'_>, src: &str, out: &mut Vec<RawImport>) {
    let Some(source) = node.child_by_field_name("source") else {
        return;
    };
    let spec = unquote(text(source, src));
    let mut c = node.walk();
    let mut any = false;
    for part in node.named_children(&mut c) {
        match part.kind() {
            "export_clause" => {
                let mut c3 = part.walk();
                for s in part.named_children(&mut c3) {
                    if s.kind() != "export_specifier" {
                        continue;
                    }
                    let Some(name) = s.child_by_field_name("name") else {
                        continue;
                    };
                    let alias = s
                        .child_by_field_name("alias")
                        .map(|a| unquote(text(a, src)))
                        .unwrap_or_default();
                    ts_push(out, s, &spec, Some(unquote(text(name, src))), alias, true);
                    any = true;
                }
            }
            "namespace_export" => {
                let mut c3 = part.walk();
                let alias = part
                    .named_children(&mut c3)
                    .next()
                    .map(|i| unquote(text(i, src)))
                    .unwrap_or_default();
                ts_push(out, part, &spec, Some("*".into()), alias, true);
                any = true;
            }
            _ => {}
        }
    }
    if !any {
        // `export * from './x'`
        ts_push(out, node, &spec, Some("*".into()), String::new(), true);
    }
}

// ---------------------------------------------------------------- Go

pub(super) fn go(capture: &str, node: Node<'_>, src: &str, out: &mut Vec<RawImport>) {
    if capture != "import" {
        return;
    }
    let Some(path) = node.child_by_field_name("path") else {
        return;
    };
    let path = unquote(text(path, src));
    out.push(RawImport {
        scope: String::new(),
        line: line(node),
        to_name: path.clone(),
        alias: node
            .child_by_field_name("name")
            .map(|a| text(a, src).to_string())
            .unwrap_or_default(),
        reexport: false,
        spec: ImportSpec::Go { path },
    });
}
