//! Python rules: decorators belong to the definition's range, docstrings are the
//! first string of the body, `_name` is private (dunders are public), module-level
//! ALL_CAPS assignments are `const`, other module-level assignments `var`.

use tree_sitter::Node;

use super::{Def, RawDef, header, text};
use crate::model::SymbolKind;

pub(super) fn refine<'t>(raw: RawDef<'t>, src: &str) -> Option<Def<'t>> {
    let node = raw.node;
    let name = text(raw.name_node, src).to_string();
    let kind = match raw.tag.as_str() {
        "fn" => SymbolKind::Fn,
        "class" => SymbolKind::Class,
        "type" => SymbolKind::Type,
        "var" => {
            if name.chars().any(|c| c.is_ascii_alphabetic())
                && name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                SymbolKind::Const
            } else {
                SymbolKind::Var
            }
        }
        _ => return None,
    };
    let range_node = match node.parent() {
        Some(p) if p.kind() == "decorated_definition" => p,
        _ => node,
    };
    let body = node.child_by_field_name("body");
    let mut signature = header(node, body, src);
    // A property's getter, setter or deleter says so: reading the property
    // runs it, where no call site names it (completeness: `accessor`).
    if range_node.kind() == "decorated_definition" {
        let mut cursor = range_node.walk();
        let marks: Vec<&str> = range_node
            .named_children(&mut cursor)
            .filter(|d| d.kind() == "decorator")
            .map(|d| text(d, src).trim())
            .filter(|d| is_property_decorator(d))
            .collect();
        if !marks.is_empty() {
            signature = format!("{} {signature}", marks.join(" "));
        }
    }
    Some(Def {
        doc: body.map(|b| docstring(b, src)).unwrap_or_default(),
        visibility: visibility(&name),
        name,
        kind,
        range_node,
        signature,
        receiver: None,
    })
}

/// `@property`, `@functools.cached_property`, `@x.setter` and the like.
fn is_property_decorator(d: &str) -> bool {
    let name = d.trim_start_matches('@');
    let last = name.rsplit('.').next().unwrap_or(name);
    matches!(
        last,
        "property" | "cached_property" | "setter" | "getter" | "deleter"
    )
}

fn visibility(name: &str) -> String {
    if name.starts_with("__") && name.ends_with("__") {
        "public"
    } else if name.starts_with('_') {
        "private"
    } else {
        "public"
    }
    .to_string()
}

/// The first statement of the body when it is a string literal, without quotes.
fn docstring(body: Node<'_>, src: &str) -> String {
    let Some(first) = body.named_child(0) else {
        return String::new();
    };
    if first.kind() != "expression_statement" {
        return String::new();
    }
    let Some(s) = first.named_child(0) else {
        return String::new();
    };
    if s.kind() != "string" {
        return String::new();
    }
    let mut cursor = s.walk();
    let content: String = s
        .named_children(&mut cursor)
        .filter(|c| c.kind() == "string_content")
        .map(|c| text(c, src))
        .collect();
    dedent(&content)
}

/// Strips the common indentation of a docstring's continuation lines (PEP 257).
fn dedent(doc: &str) -> String {
    let mut lines = doc.lines();
    let first = lines.next().unwrap_or("").trim().to_string();
    let rest: Vec<&str> = lines.collect();
    let indent = rest
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = vec![first];
    out.extend(
        rest.iter()
            .map(|l| l.get(indent..).unwrap_or("").trim_end().to_string()),
    );
    out.join("\n").trim().to_string()
}
