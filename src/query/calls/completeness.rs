//! One completeness rule for every graph answer (CONTRACT section 3): an
//! answer is `exact` only when no site that could reach one of its nodes was
//! left unproven. An agent told "exact" stops looking, so every way a caller
//! or user can hide counts:
//!
//! - `unresolved`: a call (or use) of the same name that no tier proved (a
//!   receiver of unknown type, an ambiguous name), kept as `UNRESOLVED`;
//! - `name_only`: a call the `name` tier alone found, when the answer follows
//!   stronger tiers only (below `min_confidence`);
//! - `function_value`: the symbol used as a value (passed, stored, returned):
//!   what calls it through that value is not seen;
//! - `outside_override`: a method that implements or overrides one of a type
//!   outside the repository (a Rust trait impl of a library trait, a class
//!   with a library base, a Python dunder the runtime calls): its callers may
//!   be the library's;
//! - `accessor`: a getter or setter (TS `get x()`, a Python `@property`),
//!   run by reading or writing a property: no call site names it;
//! - `macro_items`: a Rust macro whose templates write items (`fn $name()`):
//!   what an invocation writes has no symbol, nor do the calls of it;
//! - `macro_shared_name`: a Rust macro whose name another macro shares:
//!   other crates' invocations of either are proven by neither.
//!
//! Callees have their own: the calls of the answer's nodes that no tier
//! proved, or only the `name` tier did. The count is exact; the first sites
//! are listed with where they are.

use std::collections::BTreeSet;

use super::super::answers::{FromSymbol, UnprovenSite};
use super::super::error::ToolError;
use super::super::view::View;
use super::Lines;
use crate::model::names::last_segment;
use crate::store::catalog::Catalog;

/// Sites listed at most (the count covers them all).
pub(super) const LISTED: usize = 10;

/// What an answer left unproven: how many sites, and the first of them.
#[derive(Debug, Default)]
pub(super) struct Unproven {
    pub count: usize,
    pub sites: Vec<UnprovenSite>,
}

impl Unproven {
    pub fn is_exact(&self) -> bool {
        self.count == 0
    }

    pub fn completeness(&self) -> &'static str {
        if self.is_exact() {
            "exact"
        } else {
            "lower_bound"
        }
    }

    /// One line for `notes` (why the answer is a lower bound), if it is one.
    pub fn note(&self) -> Option<String> {
        (self.count > 0).then(|| {
            let mut why: BTreeSet<&str> = BTreeSet::new();
            why.extend(self.sites.iter().map(|s| s.reason.as_str()));
            format!(
                "{} site(s) could reach this answer's symbols but were not proven ({}): see unproven_sites",
                self.count,
                why.into_iter().collect::<Vec<_>>().join(", ")
            )
        })
    }

    /// Adds what another question left unproven.
    pub fn merge(&mut self, other: Unproven) {
        self.add(other.count, other.sites);
    }

    fn add(&mut self, count: usize, sites: impl IntoIterator<Item = UnprovenSite>) {
        self.count += count;
        for s in sites {
            if self.sites.len() < LISTED {
                self.sites.push(s);
            }
        }
    }
}

/// What an answer's question reaches along: the uses of its nodes (callers,
/// references, impact) or their calls (callees).
#[derive(Debug, Clone, Copy)]
pub(super) struct Into<'k> {
    /// The `UNRESOLVED` kinds that count: `call` for callers, every kind for
    /// references.
    pub kinds: &'k [&'k str],
    /// The answer leaves out `name`-tier edges (they count as unproven).
    pub name_tier_left_out: bool,
    /// Uses as a value hide calls (callers, impact; not references, which
    /// list those uses).
    pub values_hide_calls: bool,
}

/// Everything no tier proved that could reach the catalog entries `nodes`
/// (whose callers or users the answer lists).
pub(super) fn into(
    c: &View,
    cat: &Catalog,
    nodes: &[usize],
    how: Into<'_>,
) -> Result<Unproven, ToolError> {
    let mut out = Unproven::default();
    let mut lines = Lines::new(c);
    let mut names: Vec<String> = nodes
        .iter()
        .map(|&i| cat.entry(i).name().to_string())
        .collect();
    names.sort();
    names.dedup();
    let count = c
        .graph
        .unproven_count(&c.repo, &c.ref_name, &names, how.kinds)
        .map_err(ToolError::internal)?;
    if count > 0 {
        let rows = c
            .graph
            .unproven_sites(&c.repo, &c.ref_name, &names, how.kinds, LISTED)
            .map_err(ToolError::internal)?;
        let sites: Vec<UnprovenSite> = rows
            .into_iter()
            .map(|(name, _, is_file, from, path, line, col)| {
                site(
                    cat,
                    &mut lines,
                    (&name, "unresolved"),
                    (is_file, &from),
                    (path, line, col),
                )
            })
            .collect();
        out.add(count, sites);
    }
    let ids: Vec<String> = nodes.iter().map(|&i| cat.entry(i).id()).collect();
    let loose = c.graph.loose_into(&ids).map_err(ToolError::internal)?;
    let mut kept = Vec::new();
    for (to, is_call, is_file, from, path, line, col) in loose {
        if (is_call && !how.name_tier_left_out) || (!is_call && !how.values_hide_calls) {
            continue;
        }
        let reason = if is_call {
            "name_only"
        } else {
            "function_value"
        };
        // A value use of a type (a class passed around) calls nothing.
        let Some(t) = cat.by_id(&to) else { continue };
        if !is_call && !matches!(cat.entry(t).kind(), "fn" | "method") {
            continue;
        }
        kept.push(site(
            cat,
            &mut lines,
            (cat.entry(t).name(), reason),
            (is_file, &from),
            (path, line, col),
        ));
    }
    out.add(kept.len(), kept);
    for &i in nodes {
        if let Some(s) = outside_override(cat, &mut lines, i) {
            out.add(1, [s]);
        }
        if let Some(s) = accessor(cat, &mut lines, i) {
            out.add(1, [s]);
        }
        if let Some(s) = macro_site(cat, &mut lines, i) {
            out.add(1, [s]);
        }
    }
    Ok(out)
}

/// A Rust `macro_rules!` whose invocations cannot all be seen: one whose
/// templates write items (`fn $name()`, an `impl`: what an invocation writes
/// has no symbol, nor the calls of it), or one whose name another macro of
/// the repository shares (another crate's invocations of either are proven
/// by neither: `debug!` of `log` and of `tracing`).
fn macro_site(cat: &Catalog, lines: &mut Lines, i: usize) -> Option<UnprovenSite> {
    let e = cat.entry(i);
    if e.kind() != "macro" {
        return None;
    }
    let shared = || {
        cat.named(e.name())
            .into_iter()
            .any(|j| j != i && cat.entry(j).kind() == "macro")
    };
    const ITEMS: [&str; 9] = [
        "fn", "impl", "mod", "struct", "enum", "trait", "static", "const", "type",
    ];
    // A long macro is read up to this many lines.
    let end = e.line_end().min(e.line_start() + 2000);
    let writes_items = (e.line_start() + 1..=end).any(|n| {
        lines
            .raw(e.path(), n)
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| ITEMS.contains(&w))
    });
    let reason = if writes_items {
        "macro_items"
    } else if shared() {
        "macro_shared_name"
    } else {
        return None;
    };
    Some(UnprovenSite {
        text: lines.line(e.path(), e.line_start()),
        path: e.path().to_string(),
        line: e.line_start(),
        col: 1,
        name: e.name().to_string(),
        reason: reason.to_string(),
        from: None,
    })
}

/// A getter or setter, which reading or writing the property runs (`get
/// element()`, `@property def name(self)`, as the signature says): its
/// readers are not call sites, so its callers cannot all be listed.
fn accessor(cat: &Catalog, lines: &mut Lines, i: usize) -> Option<UnprovenSite> {
    let e = cat.entry(i);
    is_accessor(cat, i).then(|| UnprovenSite {
        text: lines.line(e.path(), e.line_start()),
        path: e.path().to_string(),
        line: e.line_start(),
        col: 1,
        name: e.name().to_string(),
        reason: "accessor".to_string(),
        from: None,
    })
}

/// Whether method `i` is a getter or setter: TS `get x()`, `set x(v)`; a
/// decorated Python method (`@property`, `@x.setter`; the signature keeps
/// the decorator).
pub(super) fn is_accessor(cat: &Catalog, i: usize) -> bool {
    let e = cat.entry(i);
    let sig = e.signature();
    e.kind() == "method"
        && match e.language() {
            "python" => sig.starts_with('@'),
            // `get element()`, `static set value(v)`: the word before the name.
            _ => {
                let head: Vec<&str> = sig
                    .split('(')
                    .next()
                    .unwrap_or("")
                    .split_whitespace()
                    .collect();
                matches!(head.as_slice(), [.., "get" | "set", n] if *n == e.name())
            }
        }
}

/// The calls of the catalog entries `owners` that no tier proved (and those
/// only the `name` tier did, when the answer leaves that tier out).
pub(super) fn out_of(
    c: &View,
    cat: &Catalog,
    owners: &[usize],
    name_tier_left_out: bool,
) -> Result<Unproven, ToolError> {
    let mut out = Unproven::default();
    let mut lines = Lines::new(c);
    let ids: Vec<String> = owners.iter().map(|&i| cat.entry(i).id()).collect();
    let mut rows = c.graph.loose_out(&ids).map_err(ToolError::internal)?;
    rows.retain(|r| !r.1 || name_tier_left_out);
    rows.sort_by(|a, b| (&a.4, a.5, a.6).cmp(&(&b.4, b.5, b.6)));
    let count = rows.len();
    let sites: Vec<UnprovenSite> = rows
        .into_iter()
        .take(LISTED)
        .map(|(name, by_name, is_file, from, path, line, col)| {
            let reason = if by_name { "name_only" } else { "unresolved" };
            site(
                cat,
                &mut lines,
                (&name, reason),
                (is_file, &from),
                (path, line, col),
            )
        })
        .collect();
    out.add(count, sites);
    Ok(out)
}

/// The supertypes the headers of `types` name that the repository does not
/// define: a supertypes answer cannot list them.
pub(super) fn outside_supertypes(c: &View, cat: &Catalog, types: &[usize]) -> Unproven {
    let mut out = Unproven::default();
    let mut lines = Lines::new(c);
    for &t in types {
        let e = cat.entry(t);
        // A Rust type's supertraits come from its impl blocks' headers.
        let mut heads = vec![t];
        if e.language() == "rust" {
            heads.extend(cat.named(e.name()).into_iter().filter(|&j| {
                cat.entry(j).kind() == "impl" && cat.entry(j).qualified_name() == e.qualified_name()
            }));
        }
        for h in heads {
            let he = cat.entry(h);
            for written in supertypes_written(he.language(), he.kind(), he.signature()) {
                if !defined_type(cat, &written, h) {
                    out.add(
                        1,
                        [UnprovenSite {
                            text: lines.line(he.path(), he.line_start()),
                            path: he.path().to_string(),
                            line: he.line_start(),
                            col: 1,
                            name: written,
                            reason: "outside_type".to_string(),
                            from: None,
                        }],
                    );
                }
            }
        }
    }
    out
}

/// An unproven site as the answer lists it.
fn site(
    cat: &Catalog,
    lines: &mut Lines,
    (name, reason): (&str, &str),
    (is_file, from): (bool, &str),
    (path, line, col): (String, i64, i64),
) -> UnprovenSite {
    let from = (!is_file)
        .then(|| cat.by_id(from))
        .flatten()
        .map(|i| FromSymbol::from(cat.entry(i)));
    UnprovenSite {
        text: lines.line(&path, line),
        path,
        line,
        col,
        name: name.to_string(),
        reason: reason.to_string(),
        from,
    }
}

/// The site that says a method may be called from outside the repository:
/// the header of the impl or class that ties it to a type outside it, or the
/// method itself when the language's runtime calls it by its name.
fn outside_override(cat: &Catalog, lines: &mut Lines, i: usize) -> Option<UnprovenSite> {
    let e = cat.entry(i);
    if !matches!(e.kind(), "method" | "fn") {
        return None;
    }
    let runtime_calls = runtime_calls(cat, i);
    let parent = cat.parent(i)?;
    let p = cat.entry(parent);
    let outside = runtime_calls
        || supertypes_written(p.language(), p.kind(), p.signature())
            .iter()
            .any(|t| !defined_type(cat, t, parent));
    if !outside {
        return None;
    }
    let at = if runtime_calls { e } else { p };
    Some(UnprovenSite {
        text: lines.line(at.path(), at.line_start()),
        path: at.path().to_string(),
        line: at.line_start(),
        col: 1,
        name: e.name().to_string(),
        reason: "outside_override".to_string(),
        from: None,
    })
}

/// Whether the language's runtime or a library calls function or method `i`
/// by its name: a Python dunder (`__call__`, `__iter__`; not `__init__` or
/// `__new__`, which a construction runs) or a protocol method (`read`,
/// `write`, `next`).
pub(super) fn runtime_calls(cat: &Catalog, i: usize) -> bool {
    let e = cat.entry(i);
    (e.language() == "python"
        && e.name().len() > 4
        && e.name().starts_with("__")
        && e.name().ends_with("__")
        && !matches!(e.name(), "__init__" | "__new__"))
        || (e.kind() == "method" && protocol_method(e.language(), e.name()))
}

/// Whether the repo defines a type (trait, interface, class, struct…) named
/// as the last segment of `written`.
fn defined_type(cat: &Catalog, written: &str, own: usize) -> bool {
    // Not the type itself: `class TextWrapper(textwrap.TextWrapper)` extends
    // the standard library's.
    cat.named(last_segment(written)).into_iter().any(|j| {
        j != own
            && matches!(
                cat.entry(j).kind(),
                "trait" | "interface" | "class" | "struct" | "enum" | "type"
            )
    })
}

/// The supertypes a type's header names, as written: a Rust `impl Trait for
/// Type`'s trait, a Python class's bases, a TypeScript class's `extends` and
/// `implements` (generic arguments dropped). Empty for anything else.
fn supertypes_written(language: &str, kind: &str, signature: &str) -> Vec<String> {
    let plain = |t: &str| -> String {
        let t = t.trim();
        let t = t.split('<').next().unwrap_or(t);
        let t = t.split('[').next().unwrap_or(t);
        t.trim_start_matches(['&', '!', '?']).trim().to_string()
    };
    match (language, kind) {
        ("rust", "impl") => {
            // `impl<T: X> fmt::Display for Foo<T>`: the part before ` for `,
            // past the impl's own generics.
            let Some((head, _)) = signature.split_once(" for ") else {
                return Vec::new();
            };
            let head = head
                .trim_start_matches("unsafe ")
                .trim_start_matches("impl");
            let head = skip_generics(head);
            vec![plain(head)]
                .into_iter()
                .filter(|t| !t.is_empty())
                .collect()
        }
        ("python", "class") => {
            let Some(open) = signature.find('(') else {
                return Vec::new();
            };
            let inner = signature[open + 1..]
                .trim_end_matches(':')
                .trim_end_matches(')');
            inner
                .split(',')
                .map(str::trim)
                .filter(|b| !b.is_empty() && !b.contains('='))
                .map(plain)
                .filter(|b| !inert_base(b))
                .collect()
        }
        ("typescript" | "tsx" | "javascript", "class") => {
            // Past `class Name<…>`, with every generic argument list gone.
            let Some((_, rest)) = signature.split_once("class ") else {
                return Vec::new();
            };
            let rest = rest.trim_start();
            let name_end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                .unwrap_or(rest.len());
            let rest = without_generics(&rest[name_end..]);
            let rest = rest.split('{').next().unwrap_or("");
            let mut out = Vec::new();
            let mut listing = false;
            for w in rest.split(|c: char| c.is_whitespace() || c == ',') {
                match w {
                    "" => {}
                    "extends" | "implements" => listing = true,
                    w if listing => out.push(plain(w)),
                    _ => {}
                }
            }
            out.retain(|t| t.chars().next().is_some_and(char::is_alphabetic) && !inert_base(t));
            out
        }
        _ => Vec::new(),
    }
}

/// A method name the standard library calls on values it is handed, whatever
/// their type (duck typing, Go's implicit interfaces): a file-like's
/// `readable` under `io.TextIOWrapper`, a Go `String` under `fmt`, a TS
/// `toJSON` under `JSON.stringify`. No edge in the repo shows those calls.
fn protocol_method(language: &str, name: &str) -> bool {
    let names: &[&str] = match language {
        "python" => &[
            "read",
            "read1",
            "readinto",
            "readline",
            "readlines",
            "write",
            "writelines",
            "flush",
            "close",
            "readable",
            "writable",
            "seekable",
            "seek",
            "tell",
            "fileno",
            "isatty",
            "run",
            "emit",
            "default",
            "handle",
            "setUp",
            "tearDown",
            "setUpClass",
            "tearDownClass",
            "keys",
        ],
        "go" => &[
            "Error",
            "String",
            "GoString",
            "Format",
            "Read",
            "Write",
            "Close",
            "ServeHTTP",
            "Len",
            "Less",
            "Swap",
            "Unwrap",
            "Is",
            "As",
            "ReadFrom",
            "WriteTo",
            "Seek",
            "Flush",
            "Header",
            "WriteHeader",
            "Hijack",
            "MarshalJSON",
            "UnmarshalJSON",
            "MarshalText",
            "UnmarshalText",
            "Lock",
            "Unlock",
            "Scan",
            "Value",
            "Push",
            "Pop",
            "RoundTrip",
            "Dial",
            "Accept",
            "Addr",
        ],
        "typescript" | "tsx" | "javascript" => &[
            "toString",
            "valueOf",
            "toJSON",
            "next",
            "return",
            "throw",
            "then",
            "handleEvent",
        ],
        _ => &[],
    };
    names.contains(&name)
}

/// A base outside the repository that calls no method of its subclasses by
/// name (dunders aside, which `outside_override` counts on their own): typing
/// markers, `object`, and exception classes (`ValueError`, TS `Error`).
fn inert_base(written: &str) -> bool {
    let name = last_segment(written);
    matches!(
        name,
        "object" | "Generic" | "Protocol" | "ABC" | "NamedTuple" | "TypedDict" | "Enum"
    ) || name.ends_with("Error")
        || name.ends_with("Exception")
        || name.ends_with("Warning")
}

/// `text` with every balanced `<…>` taken out.
fn without_generics(text: &str) -> String {
    let mut depth = 0usize;
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(ch),
            _ => {}
        }
    }
    out
}

/// `head` past a leading `<…>` (balanced).
fn skip_generics(head: &str) -> &str {
    let head = head.trim_start();
    if !head.starts_with('<') {
        return head;
    }
    let mut depth = 0;
    for (k, ch) in head.char_indices() {
        match ch {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return &head[k + 1..];
                }
            }
            _ => {}
        }
    }
    ""
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supertypes_are_read_from_headers() {
        assert_eq!(
            supertypes_written("rust", "impl", "impl<T: Clone> fmt::Display for Wrapper<T>"),
            vec!["fmt::Display"]
        );
        assert!(supertypes_written("rust", "impl", "impl Wrapper").is_empty());
        assert_eq!(
            supertypes_written("python", "class", "class App(Flask, metaclass=Meta):"),
            vec!["Flask"]
        );
        assert!(supertypes_written("python", "class", "class Plain:").is_empty());
        assert_eq!(
            supertypes_written(
                "typescript",
                "class",
                "export class Hono<E extends Env = Env> extends HonoBase<E> implements A, B {"
            ),
            vec!["HonoBase", "A", "B"]
        );
    }
}
