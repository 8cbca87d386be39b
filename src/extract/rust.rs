//! Rust rules: impl names (the implemented type, generics stripped), `///` and `/** */`
//! docs above attributes, `pub`/`pub(crate)` visibility, headers up to the body.

use tree_sitter::Node;

use super::{Def, RawDef, block_doc, header, leading_comments, text};
use crate::model::SymbolKind;
use crate::model::sites::Step;

pub(super) fn refine<'t>(raw: RawDef<'t>, src: &str) -> Option<Def<'t>> {
    let node = raw.node;
    let kind = match raw.tag.as_str() {
        "fn" => SymbolKind::Fn,
        "struct" => SymbolKind::Struct,
        "enum" => SymbolKind::Enum,
        "trait" => SymbolKind::Trait,
        "impl" => SymbolKind::Impl,
        "mod" => SymbolKind::Mod,
        "type" => SymbolKind::Type,
        "const" => SymbolKind::Const,
        "static" => SymbolKind::Static,
        "macro" => SymbolKind::Macro,
        "variant" => SymbolKind::Variant,
        _ => return None,
    };
    let name = if kind == SymbolKind::Impl {
        type_name(raw.name_node, src)
    } else {
        text(raw.name_node, src).to_string()
    };
    if name.is_empty() {
        return None;
    }
    let body = node.child_by_field_name("body");
    let signature = if kind == SymbolKind::Variant {
        // `Malformed(String)`, `Moved { from: u32 }`, `Done = 3`: the variant's
        // first line without the separating comma.
        let first = text(node, src).lines().next().unwrap_or("");
        first.trim().trim_end_matches(',').trim_end().to_string()
    } else {
        header(node, body, src)
    };
    let visibility = match kind {
        // Trait items and trait-impl items are as visible as the trait; inherent impls
        // have no visibility of their own. Empty means "inherit from the parent".
        SymbolKind::Impl => {
            if node.child_by_field_name("trait").is_some() {
                "public".to_string()
            } else {
                String::new()
            }
        }
        SymbolKind::Macro if exported_macro(node, src) => "public".to_string(),
        // A variant is as visible as its enum.
        SymbolKind::Variant => String::new(),
        _ => visibility(node, src),
    };
    Some(Def {
        name,
        kind,
        range_node: node,
        signature,
        doc: doc(node, src),
        visibility,
        receiver: None,
    })
}

/// `#[macro_export]` among the attributes right above a `macro_rules!`.
fn exported_macro(node: Node<'_>, src: &str) -> bool {
    let mut cur = node.prev_sibling();
    while let Some(n) = cur {
        match n.kind() {
            "attribute_item" if text(n, src).contains("macro_export") => return true,
            "attribute_item" | "line_comment" | "block_comment" => cur = n.prev_sibling(),
            _ => return false,
        }
    }
    false
}

/// `Foo<T>` → `Foo`, `&'a mut Foo` → `Foo`, `crate::a::Foo` → `Foo`, `[T]` → `[T]`.
fn type_name(node: Node<'_>, src: &str) -> String {
    match node.kind() {
        "generic_type" => node
            .child_by_field_name("type")
            .map(|t| type_name(t, src))
            .unwrap_or_default(),
        "reference_type" | "pointer_type" => node
            .child_by_field_name("type")
            .map(|t| type_name(t, src))
            .unwrap_or_default(),
        "scoped_type_identifier" => node
            .child_by_field_name("name")
            .map(|t| text(t, src).to_string())
            .unwrap_or_default(),
        _ => crate::model::normalize_ws(text(node, src)),
    }
}

fn visibility(node: Node<'_>, src: &str) -> String {
    let mut cursor = node.walk();
    let vis = node
        .children(&mut cursor)
        .find(|c| c.kind() == "visibility_modifier")
        .map(|c| text(c, src).replace(' ', ""));
    match vis.as_deref() {
        None => {
            // Items inside a trait or trait impl inherit (empty), the rest are private.
            match node.parent().and_then(|p| p.parent()).map(|g| g.kind()) {
                Some("trait_item") => String::new(),
                Some("impl_item")
                    if node
                        .parent()
                        .and_then(|p| p.parent())
                        .and_then(|g| g.child_by_field_name("trait"))
                        .is_some() =>
                {
                    String::new()
                }
                _ => "private".to_string(),
            }
        }
        Some("pub") => "public".to_string(),
        Some("pub(crate)") => "crate".to_string(),
        Some(_) => "restricted".to_string(),
    }
}

/// Outer doc comments (`///`, `/** */`) above the item; attributes may sit between.
fn doc(node: Node<'_>, src: &str) -> String {
    leading_comments(node, src, &["attribute_item"], |n, t| match n.kind() {
        "line_comment" if t.starts_with("///") && !t.starts_with("////") => Some(
            t.trim_start_matches("///")
                .trim_end()
                .trim_start_matches(' ')
                .to_string(),
        ),
        "block_comment" if t.starts_with("/**") && !t.starts_with("/***") => Some(block_doc(t)),
        _ => None,
    })
}

/// The source with everything blanked (newlines kept) except the bodies of
/// item-level macro invocations with `{…}` bodies, so that parsing it finds the
/// items inside those bodies at their original positions. `None` when there are
/// no such bodies. Bodies with `$` (macro templates) are left out. Applied again to
/// its own parse, it reaches macros inside macros.
pub(super) fn macro_bodies_only(root: Node<'_>, src: &str) -> Option<String> {
    let mut bodies = Vec::new();
    collect_macro_bodies(root, src, &mut bodies);
    if bodies.is_empty() {
        return None;
    }
    let mut out: Vec<u8> = src
        .bytes()
        .map(|b| if b == b'\n' { b'\n' } else { b' ' })
        .collect();
    for (start, end) in bodies {
        out[start..end].copy_from_slice(&src.as_bytes()[start..end]);
    }
    String::from_utf8(out).ok()
}

/// A `cfg_if!`-style body: `{ if #[cfg(…)] { … } else … }`.
fn is_cfg_if(body: &str) -> bool {
    body[1..]
        .trim_start()
        .strip_prefix("if")
        .is_some_and(|rest| rest.trim_start().starts_with('#'))
}

/// The `(…)`, `[…]` or `{…}` of a macro invocation.
fn token_tree(invocation: Node<'_>) -> Option<Node<'_>> {
    let mut c = invocation.walk();
    invocation
        .named_children(&mut c)
        .find(|n| n.kind() == "token_tree")
}

fn collect_macro_bodies(node: Node<'_>, src: &str, out: &mut Vec<(usize, usize)>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "macro_invocation" => {
                let Some(tt) = token_tree(child) else {
                    continue;
                };
                let body = text(tt, src);
                if !(body.starts_with('{') && body.ends_with('}')) || body.contains('$') {
                    continue;
                }
                if is_cfg_if(body) {
                    // `cfg_if! { if #[cfg(a)] { items } else { items } }`: the items
                    // of every branch, without the `if #[cfg(…)]`/`else` around them.
                    let mut c = tt.walk();
                    for branch in tt.named_children(&mut c) {
                        if branch.kind() == "token_tree" && text(branch, src).starts_with('{') {
                            out.push((branch.start_byte() + 1, branch.end_byte() - 1));
                        }
                    }
                } else {
                    out.push((tt.start_byte() + 1, tt.end_byte() - 1));
                }
            }
            "mod_item" => {
                if let Some(body) = child.child_by_field_name("body") {
                    collect_macro_bodies(body, src, out);
                }
            }
            "expression_statement" => collect_macro_bodies(child, src, out),
            _ => {}
        }
    }
}

/// What opens the function `macro_args_only` writes over the blanked start.
const ARGS_FN: &[u8] = b"fn _m(){";

/// The source blanked (newlines kept) but for the arguments of the macro
/// invocations whose `token_trees` (`calls.scm`'s `@macro` matches) may hold
/// calls (`assert_eq!(a.f(), b)`, `vec![g(x); n]`,
/// `write!(f, "{}", self.name())`), each kept as a parenthesized or array
/// expression statement of one function written over the blanked start, so
/// that parsing it finds the calls written there at their original byte,
/// line and column. `None` when there are none. Applied again to its own
/// parse, it reaches macros inside macro arguments.
///
/// With it come the ranges that hold anything but blanks: parsed with those as
/// its included ranges (`Parser::set_included_ranges`), the parser skips the
/// blanks instead of reading through a whole file of them (on Rust crates that
/// read was a fifth of the extraction's time).
pub(super) fn macro_args_only<'t>(
    token_trees: impl Iterator<Item = Node<'t>>,
    src: &str,
) -> Option<(String, Vec<tree_sitter::Range>)> {
    let mut args: Vec<(usize, usize)> = token_trees
        .filter(|tt| may_call(text(*tt, src)))
        .map(|tt| (tt.start_byte(), tt.end_byte()))
        .collect();
    args.sort_unstable();
    args.dedup();
    let first = args.first()?.0;
    let mut out: Vec<u8> = src
        .bytes()
        .map(|b| if b == b'\n' { b'\n' } else { b' ' })
        .collect();
    // The function's head goes over a blank stretch of one line before the
    // first argument (over no newline: lines keep their numbers).
    let head = out[..first]
        .windows(ARGS_FN.len())
        .position(|w| w.iter().all(|&b| b == b' '))?;
    out[head..head + ARGS_FN.len()].copy_from_slice(ARGS_FN);
    let mut kept = Vec::with_capacity(args.len() + 2);
    kept.push(head..head + ARGS_FN.len());
    for (start, end) in args {
        out[start..end].copy_from_slice(&src.as_bytes()[start..end]);
        // Ends the statement (the byte after is blank: token trees hold no
        // macro invocations, so kept ranges never touch).
        let mut end = end;
        if end < out.len() && out[end] == b' ' {
            out[end] = b';';
            end += 1;
        }
        kept.push(start..end);
    }
    let close = out.len();
    out.extend_from_slice(b"\n}");
    kept.push(close..out.len());
    let text = String::from_utf8(out).ok()?;
    let ranges = included_ranges(&text, &kept);
    Some((text, ranges))
}

/// What opens each function `macro_templates_only` writes over the blanked
/// text before a template.
const TEMPLATE_FN: &[u8] = b"fn _m()";

/// The source blanked (newlines kept) but for the templates of its
/// `macro_rules!` (the `token_tree`s right of `=>`), each kept as the body of
/// a function written over the blanked text before it, so that parsing it
/// finds the calls a template writes (`run_search_tests(…)`,
/// `$crate::util::f(x)`) at their original byte, line and column. A
/// metavariable is written as a name (`$name` → `_name`, `$crate` → `crate`),
/// a repetition's `$(`…`)*` as its contents; the bytes of metavariables come
/// with it, so that what a template reads from its arguments is left out.
/// `None` when there are no templates. As `macro_args_only`, with the ranges
/// that hold anything but blanks.
pub(super) fn macro_templates_only<'t>(
    templates: impl Iterator<Item = Node<'t>>,
    src: &str,
) -> Option<Template> {
    let mut trees: Vec<Node<'t>> = templates.filter(|t| text(*t, src).contains('(')).collect();
    trees.sort_unstable_by_key(|t| t.start_byte());
    trees.dedup_by_key(|t| t.start_byte());
    if trees.is_empty() {
        return None;
    }
    let mut out: Vec<u8> = src
        .bytes()
        .map(|b| if b == b'\n' { b'\n' } else { b' ' })
        .collect();
    let mut kept = Vec::with_capacity(2 * trees.len());
    let mut metavariables = Vec::new();
    let mut free = 0;
    for tt in trees {
        let (start, end) = (tt.start_byte(), tt.end_byte());
        if start < free || end - start < 2 {
            continue;
        }
        // The function's head: the nearest blank stretch of one line before
        // the template, past what was kept before (a rule's matcher is).
        let Some(head) = out[free..start]
            .windows(TEMPLATE_FN.len())
            .rposition(|w| w.iter().all(|&b| b == b' '))
            .map(|at| free + at)
        else {
            continue;
        };
        out[head..head + TEMPLATE_FN.len()].copy_from_slice(TEMPLATE_FN);
        out[start..end].copy_from_slice(&src.as_bytes()[start..end]);
        out[start] = b'{';
        out[end - 1] = b'}';
        unmeta(tt, &mut out, &mut metavariables);
        kept.push(head..head + TEMPLATE_FN.len());
        kept.push(start..end);
        free = end;
    }
    if kept.is_empty() {
        return None;
    }
    let text = String::from_utf8(out).ok()?;
    let ranges = included_ranges(&text, &kept);
    metavariables.sort_unstable();
    Some(Template {
        text,
        ranges,
        metavariables,
    })
}

/// The templates of `macro_rules!` definitions (the token trees right of
/// each rule's `=>`).
pub(super) fn templates_of<'t>(macros: impl Iterator<Item = Node<'t>>) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    for m in macros {
        let mut c = m.walk();
        for rule in m.named_children(&mut c) {
            if rule.kind() == "macro_rule"
                && let Some(right) = rule.child_by_field_name("right")
            {
                out.push(right);
            }
        }
    }
    out
}

/// The items a template writes (`defs`, found in its parse): not the
/// function `macro_templates_only` wraps it in, nor one a metavariable names
/// (`fn $name`, `impl Trait for $t`: the invocation's to say), nor what is
/// inside one of those.
pub(super) fn template_items<'t>(defs: Vec<super::Def<'t>>, t: &Template) -> Vec<super::Def<'t>> {
    let wrapper = |d: &super::Def<'_>| {
        let at = d.range_node.start_byte();
        t.text.as_bytes().get(at..at + TEMPLATE_FN.len()) == Some(TEMPLATE_FN)
    };
    let named_by_metavariable = |d: &super::Def<'_>| {
        let n = d.range_node;
        let Some(name) = n
            .child_by_field_name("name")
            .or_else(|| n.child_by_field_name("type"))
        else {
            return true;
        };
        let (start, end) = (name.start_byte(), name.start_byte() + d.name.len());
        let at = t.metavariables.partition_point(|&b| b < start);
        t.metavariables.get(at).is_some_and(|&b| b < end)
    };
    let dropped: Vec<(usize, usize)> = (defs.iter())
        .filter(|d| !wrapper(d) && named_by_metavariable(d))
        .map(|d| (d.range_node.start_byte(), d.range_node.end_byte()))
        .collect();
    defs.into_iter()
        .filter(|d| !wrapper(d))
        .filter(|d| {
            let (s, e) = (d.range_node.start_byte(), d.range_node.end_byte());
            !dropped.iter().any(|&(ds, de)| ds <= s && e <= de)
        })
        .collect()
}

/// A source blanked but for its macro templates (`macro_templates_only`).
pub(super) struct Template {
    pub text: String,
    pub ranges: Vec<tree_sitter::Range>,
    /// Where metavariables were written (sorted bytes): a call or value
    /// there is the invocation's, not the template's.
    pub metavariables: Vec<usize>,
}

impl Template {
    /// Whether a callee (or a value) is named by a metavariable: `$f`,
    /// `self.$field.m`, `$t::new`, `MatchKind::$kind`; not by one only in
    /// the arguments of a call on the way (`b.kind($k).build`).
    pub fn reads_arguments(&self, node: Node<'_>) -> bool {
        // Down the callee's receivers, without recursion, as far as a
        // chain is read (`sites::MAX_CHAIN_DEPTH`): a callee deeper names
        // nothing anyway, and walking each of a generated chain's thousands
        // of calls to its end took time squared.
        let mut at = node;
        for _ in 0..64 {
            match at.kind() {
                "call_expression" | "generic_function" => {
                    match at.child_by_field_name("function") {
                        Some(f) => at = f,
                        None => return false,
                    }
                }
                "field_expression" => {
                    if at
                        .child_by_field_name("field")
                        .is_some_and(|f| self.holds_metavariable(f))
                    {
                        return true;
                    }
                    match at.child_by_field_name("value") {
                        Some(v) => at = v,
                        None => return false,
                    }
                }
                _ => return self.holds_metavariable(at),
            }
        }
        true
    }

    fn holds_metavariable(&self, node: Node<'_>) -> bool {
        let at = self
            .metavariables
            .partition_point(|&b| b < node.start_byte());
        self.metavariables
            .get(at)
            .is_some_and(|&b| b < node.end_byte())
    }
}

/// How deep `unmeta` goes into nested token trees: a hostile file's
/// thousands of nested brackets must not take the stack (deeper, a
/// metavariable stays `$x` and the parse reads an error there).
const UNMETA_DEPTH: usize = 128;

/// Writes a template's metavariables as names and its repetitions as their
/// contents (`macro_templates_only`), noting where metavariables were.
fn unmeta(tree: Node<'_>, out: &mut [u8], metavariables: &mut Vec<usize>) {
    unmeta_in(tree, out, metavariables, 0);
}

fn unmeta_in(tree: Node<'_>, out: &mut [u8], metavariables: &mut Vec<usize>, depth: usize) {
    if depth > UNMETA_DEPTH {
        return;
    }
    let mut c = tree.walk();
    for n in tree.children(&mut c) {
        match n.kind() {
            "metavariable" => {
                let at = n.start_byte();
                if &out[at..n.end_byte()] == b"$crate" {
                    out[at] = b' ';
                } else {
                    out[at] = b'_';
                    metavariables.push(at);
                }
            }
            "token_repetition" => {
                // `$(` … `)` then a separator and `*`, `+` or `?`.
                let mut cc = n.walk();
                let close = n
                    .children(&mut cc)
                    .filter(|k| k.kind() == ")")
                    .last()
                    .map_or(n.end_byte(), |k| k.start_byte());
                let open = (n.start_byte() + 2).min(close);
                out[n.start_byte()..open].fill(b' ');
                out[close..n.end_byte()].fill(b' ');
                unmeta_in(n, out, metavariables, depth + 1);
            }
            "token_tree" => unmeta_in(n, out, metavariables, depth + 1),
            _ => {}
        }
    }
}

/// Whether a macro's token tree may hold calls written as expressions: `(…)`
/// and `[…]` read as a tuple or an array (`{…}` bodies are items or
/// statements: `macro_bodies_only`); a body without a `(` calls nothing; one
/// with `$` is a macro template.
fn may_call(body: &str) -> bool {
    let inner = body
        .get(1..body.len().saturating_sub(1))
        .unwrap_or_default();
    (body.starts_with('(') || body.starts_with('[')) && inner.contains('(') && !body.contains('$')
}

/// `kept` (sorted byte ranges of `text`) as tree-sitter ranges, with their
/// rows and (byte) columns.
fn included_ranges(text: &str, kept: &[std::ops::Range<usize>]) -> Vec<tree_sitter::Range> {
    let bytes = text.as_bytes();
    let (mut row, mut line_start, mut at) = (0usize, 0usize, 0usize);
    let mut point = |to: usize| {
        for (i, &b) in bytes[at..to].iter().enumerate() {
            if b == b'\n' {
                row += 1;
                line_start = at + i + 1;
            }
        }
        at = to;
        tree_sitter::Point::new(row, to - line_start)
    };
    kept.iter()
        .map(|r| {
            let start_point = point(r.start);
            let end_point = point(r.end);
            tree_sitter::Range {
                start_byte: r.start,
                end_byte: r.end,
                start_point,
                end_point,
            }
        })
        .collect()
}

/// Whether a path's qualifier named `name` is a type (`Chain::from`,
/// `Self::new`), not a module (`mem::take`) or a keyword (`crate::a`): types
/// are capitalised (rustc warns on any that is not), modules are not.
pub(super) fn names_a_type(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase())
}

/// `Some`, `None`, `Ok`, `Err`: the prelude's variants, which patterns name
/// most (`if let Some(x)`), no type of the repository.
pub(super) fn is_prelude_variant(name: &str) -> bool {
    matches!(name, "Some" | "None" | "Ok" | "Err")
}

/// Whether the token tree of a macro invocation is parsed again, so that what
/// it names is read from that parse, not from its tokens: arguments that may
/// hold calls (`macro_args_only`), or a `{…}` body of items where
/// `macro_bodies_only` looks (the file, a module, a statement there).
pub(super) fn is_read_again(invocation: Node<'_>, tree: Node<'_>, src: &str) -> bool {
    let body = text(tree, src);
    if may_call(body) {
        return true;
    }
    if !(body.starts_with('{') && body.ends_with('}')) || body.contains('$') {
        return false;
    }
    let mut up = invocation.parent();
    if up.is_some_and(|p| p.kind() == "expression_statement") {
        up = up.and_then(|p| p.parent());
    }
    match up {
        Some(p) if p.kind() == "source_file" => true,
        Some(p) if p.kind() == "declaration_list" => {
            p.parent().is_some_and(|m| m.kind() == "mod_item")
        }
        _ => false,
    }
}

/// The types a token tree names, read from its tokens (a `macro_rules!`
/// template, a macro's arguments no parse reads): each capitalised name with
/// the path written before it (`$crate::E::A` → `crate::E` at `E`, then
/// `crate::E::A` at `A`). `Self` and the prelude's variants are left out: a
/// template's `Self` is the expansion's.
pub(super) fn mentions<'t>(tree: Node<'t>, src: &str, found: &mut Vec<(Vec<Step>, Node<'t>)>) {
    let mut path: Vec<Step> = Vec::new();
    // Whether the last token was `::` after a path.
    let mut joined = false;
    let mut c = tree.walk();
    if !c.goto_first_child() {
        return;
    }
    loop {
        let n = c.node();
        let k = n.kind();
        if k == "token_tree" || k == "token_repetition" {
            path.clear();
            joined = false;
            if c.goto_first_child() {
                continue;
            }
        } else if k == "::" {
            joined = !path.is_empty();
        } else {
            let word = match k {
                "identifier" | "crate" | "self" | "super" => text(n, src),
                "metavariable" if text(n, src) == "$crate" => "crate",
                _ => "",
            };
            if word.is_empty() {
                path.clear();
            } else {
                if !joined {
                    path.clear();
                }
                path.push(match path.is_empty() {
                    true => Step::from(word),
                    false => compact_str::format_compact!("::{word}"),
                });
                if names_a_type(word)
                    && word != "Self"
                    && !(path.len() == 1 && is_prelude_variant(word))
                {
                    found.push((path.clone(), n));
                }
            }
            joined = false;
        }
        // Next in source order: a sibling, else up until one has a sibling.
        while !c.goto_next_sibling() {
            if !c.goto_parent() || c.node() == tree {
                return;
            }
        }
    }
}

/// Whether `name` is a generic parameter of an item around `at` (a `where`
/// clause's function, or the impl or trait around that function).
pub(super) fn is_type_parameter(at: Node<'_>, name: &str, src: &str) -> bool {
    let mut up = at.parent();
    for _ in 0..8 {
        let Some(n) = up else {
            return false;
        };
        if let Some(params) = n.child_by_field_name("type_parameters") {
            let mut c = params.walk();
            let declared = params.named_children(&mut c).any(|p| {
                let p = p.child_by_field_name("name").unwrap_or(p);
                text(p, src) == name
            });
            if declared {
                return true;
            }
        }
        up = n.parent();
    }
    false
}
