//! TypeScript / TSX / JavaScript rules: `export` belongs to the definition's range
//! and makes it public, JSDoc `/** */` above is the doc, member accessibility
//! (`private`, `protected`, `#name`) sets visibility, a top-level variable whose
//! value is an arrow function or function expression is a `fn`, and a class
//! field holding one is a `method` (other class fields are `field`s).

use tree_sitter::Node;

use super::{Def, RawDef, block_doc, header, leading_comments, text};
use crate::model::SymbolKind;

pub(super) fn refine<'t>(raw: RawDef<'t>, src: &str) -> Option<Def<'t>> {
    let node = raw.node;
    let name = strip_quotes(text(raw.name_node, src)).to_string();
    if name.is_empty() {
        return None;
    }
    let (kind, decl, body) = match raw.tag.as_str() {
        "fn" => (SymbolKind::Fn, node, node.child_by_field_name("body")),
        "class" => (SymbolKind::Class, node, node.child_by_field_name("body")),
        "interface" => (
            SymbolKind::Interface,
            node,
            node.child_by_field_name("body"),
        ),
        "type" => (SymbolKind::Type, node, None),
        "enum" => (SymbolKind::Enum, node, node.child_by_field_name("body")),
        "method" => (SymbolKind::Method, node, node.child_by_field_name("body")),
        "field" => {
            // A field holding a function is called like a method.
            let value = node.child_by_field_name("value");
            let func = value.filter(|v| {
                matches!(
                    v.kind(),
                    "arrow_function" | "function_expression" | "function"
                )
            });
            match func {
                Some(f) => (SymbolKind::Method, node, f.child_by_field_name("body")),
                None => (SymbolKind::Field, node, None),
            }
        }
        "namespace" => (
            SymbolKind::Namespace,
            node,
            node.child_by_field_name("body"),
        ),
        "variable" => {
            // `node` is the variable_declarator; the declaration statement carries
            // `const`/`let`/`var` and, with a single declarator, is the range.
            let statement = node.parent()?;
            let value = node.child_by_field_name("value");
            let is_fn = value.is_some_and(|v| {
                matches!(
                    v.kind(),
                    "arrow_function" | "function_expression" | "function"
                )
            });
            let keyword = statement.child(0).map(|k| text(k, src)).unwrap_or("");
            let kind = if is_fn {
                SymbolKind::Fn
            } else if keyword == "const" {
                SymbolKind::Const
            } else {
                SymbolKind::Var
            };
            let single = statement.named_child_count() == 1;
            let decl = if single { statement } else { node };
            // A value's text is part of the header only up to the first line.
            let body = if is_fn {
                value.and_then(|v| v.child_by_field_name("body"))
            } else {
                None
            };
            (kind, decl, body)
        }
        _ => return None,
    };
    let range_node = match decl.parent() {
        Some(p) if p.kind() == "export_statement" => p,
        _ => decl,
    };
    let exported = range_node.kind() == "export_statement"
        || node
            .parent()
            .and_then(|p| p.parent())
            .is_some_and(|g| g.kind() == "export_statement");
    let visibility = member_visibility(node, src).unwrap_or_else(|| {
        if matches!(kind, SymbolKind::Method | SymbolKind::Field) || exported {
            "public".to_string()
        } else if range_node.parent().is_some_and(|p| p.kind() == "program") {
            "private".to_string()
        } else {
            String::new()
        }
    });
    let mut signature = header(range_node, body, src);
    if kind == SymbolKind::Type || (body.is_none() && signature.is_empty()) {
        signature = crate::model::normalize_ws(text(range_node, src).lines().next().unwrap_or(""));
    }
    Some(Def {
        doc: jsdoc(range_node, src),
        name,
        kind,
        range_node,
        signature,
        visibility,
        receiver: None,
    })
}

fn strip_quotes(s: &str) -> &str {
    s.trim_matches(|c| c == '"' || c == '\'' || c == '`')
}

/// `private`/`protected`/`public` modifiers and `#private` names of class members.
fn member_visibility(node: Node<'_>, src: &str) -> Option<String> {
    if node
        .child_by_field_name("name")
        .is_some_and(|n| n.kind() == "private_property_identifier")
    {
        return Some("private".to_string());
    }
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .find(|c| c.kind() == "accessibility_modifier")
        .map(|c| text(c, src).to_string())
}

/// The `/** … */` block directly above the definition (or above its decorators).
fn jsdoc(node: Node<'_>, src: &str) -> String {
    leading_comments(node, src, &["decorator"], |n, t| {
        if n.kind() == "comment" && t.starts_with("/**") {
            Some(block_doc(t))
        } else {
            None
        }
    })
}
