//! Go rules: a `type` spec is a struct, interface or type by its underlying type;
//! a method's receiver type becomes its parent (see `build_symbols`); capitalised
//! names are public; the `//` comment block directly above is the doc.

use tree_sitter::Node;

use super::{Def, RawDef, header, leading_comments, text};
use crate::model::SymbolKind;

pub(super) fn refine<'t>(raw: RawDef<'t>, src: &str) -> Option<Def<'t>> {
    let node = raw.node;
    let name = text(raw.name_node, src).to_string();
    if name.is_empty() || name == "_" {
        return None;
    }
    let mut receiver = None;
    let (kind, body) = match raw.tag.as_str() {
        "fn" => (SymbolKind::Fn, node.child_by_field_name("body")),
        "method" => {
            if node.kind() == "method_declaration" {
                receiver = node
                    .child_by_field_name("receiver")
                    .and_then(|r| receiver_type(r, src));
            }
            (SymbolKind::Method, node.child_by_field_name("body"))
        }
        "typespec" => {
            let ty = node.child_by_field_name("type");
            let kind = match ty.map(|t| t.kind()) {
                Some("struct_type") => SymbolKind::Struct,
                Some("interface_type") => SymbolKind::Interface,
                _ => SymbolKind::Type,
            };
            // The header is everything before the first `{`: `type Reader interface`.
            let body = None;
            (kind, body)
        }
        "type" => (SymbolKind::Type, None),
        "const" => (SymbolKind::Const, None),
        "var" => (SymbolKind::Var, None),
        _ => return None,
    };
    // `type X struct{…}` / `const X = 1` alone in its declaration: the declaration
    // (with its keyword) is the range; in a `( … )` group the spec is.
    let range_node = match node.parent() {
        Some(p)
            if matches!(
                p.kind(),
                "type_declaration" | "const_declaration" | "var_declaration"
            ) && p.named_child_count() == 1 =>
        {
            p
        }
        _ => node,
    };
    let signature = if raw.tag == "typespec" {
        let t = text(range_node, src);
        crate::model::normalize_ws(t.split('{').next().unwrap_or(t))
    } else {
        header(range_node, body, src)
    };
    let doc = leading_comments(range_node, src, &[], |n, t| {
        (n.kind() == "comment" && t.starts_with("//"))
            .then(|| t.trim_start_matches("//").trim().to_string())
    });
    let visibility = if name.starts_with(|c: char| c.is_uppercase()) {
        "public"
    } else {
        "private"
    };
    Some(Def {
        name,
        kind,
        range_node,
        signature,
        doc,
        visibility: visibility.to_string(),
        receiver,
    })
}

/// `(h *Handler)` → `Handler`, `(s Stack[T])` → `Stack`.
fn receiver_type(params: Node<'_>, src: &str) -> Option<String> {
    let mut cursor = params.walk();
    let param = params
        .named_children(&mut cursor)
        .find(|n| n.kind() == "parameter_declaration")?;
    let mut ty = param.child_by_field_name("type")?;
    loop {
        match ty.kind() {
            "pointer_type" => ty = ty.named_child(0)?,
            "generic_type" => ty = ty.child_by_field_name("type")?,
            "parenthesized_type" => ty = ty.named_child(0)?,
            _ => break,
        }
    }
    Some(text(ty, src).to_string())
}
