//! Call and reference sites, and type facts, from `queries/<lang>/calls.scm`:
//! each capture's node becomes a chain (see `model::sites`), placed in the
//! symbol it belongs to by byte range.

use tree_sitter::Node;

use crate::model::sites::{
    ARGUMENT, BORROWED, CALLBACK, COLLECTED, COMPREHENDS, DYNAMIC, ELEMENT, EVERY, FIXTURE, Fact,
    FactKind, FileSites, HANDED, IN_FILE, ITERATES, PROPERTY, RETURNS_VALUE, RawSite, SELF_VALUE,
    SHAPE, SiteKind, Step, THEN, TUPLE_ELEMENT, TYPE_ARGS, VARIANT_FIELD, WRITTEN, YIELDS,
};
use crate::model::{Language, Symbol, SymbolKind};

use super::text;

/// Chains longer than this are cut (generated code chains hundreds of calls);
/// a cut chain resolves to nothing.
const MAX_CHAIN: usize = 12;
/// How deep `chain` walks into an expression's receivers and wrappers.
const MAX_CHAIN_DEPTH: usize = 64;

/// One match of a `calls.scm` pattern: what the outer capture names, its
/// node, the inner (`@callee`/`@ty`) node and the `@name` node if any.
pub(super) struct CallMatch<'t> {
    what: &'static str,
    node: Node<'t>,
    inner: Node<'t>,
    name: Option<Node<'t>>,
}

impl<'t> CallMatch<'t> {
    /// A use written in an expression (a call, construction, value, type or
    /// a macro's tokens; not a declaration's type or a fact), or a local
    /// bound there: what a macro's arguments, re-parsed as expressions, are
    /// read for.
    pub(super) fn is_expression_site(&self) -> bool {
        matches!(
            self.what,
            "call" | "new" | "construct" | "value" | "type" | "path" | "macro" | "invokes"
        ) || self.is_argument_local()
    }

    /// A local a macro's arguments bind: a closure's parameter (`|b: &mut
    /// Builder| b.kind(k)`), a `let` or a `for` in a block argument.
    fn is_argument_local(&self) -> bool {
        matches!(self.what, "fact.local" | "fact.iterates")
    }

    /// A Rust macro invocation's token tree (`@macro`).
    pub(super) fn macro_args(&self) -> Option<Node<'t>> {
        (self.what == "macro").then_some(self.inner)
    }

    /// What a macro template, parsed as a function's body, is read for:
    /// calls, functions named as values, macros invoked (and their
    /// arguments), and the locals those read. The types a template names are
    /// read from its tokens (`mentions`); the items it writes (an `impl` of a
    /// metavariable's type, a `fn` named by one) are the expansion's.
    /// What a template is read for besides (`in_template`) within an item
    /// it writes: an impl's trait, a function's parameters and result.
    pub(super) fn in_template_item(&self) -> bool {
        matches!(self.what, "implements" | "fact.params" | "fact.returns")
    }

    pub(super) fn in_template(&self) -> bool {
        matches!(
            self.what,
            "call" | "new" | "value" | "macro" | "invokes" | "fact.local" | "fact.iterates"
        )
    }

    /// A call, a macro invoked or a function named as a value: what a
    /// template does not call when a metavariable names it (`$f(x)`).
    pub(super) fn is_call_or_value(&self) -> bool {
        matches!(self.what, "call" | "new" | "value" | "invokes")
    }

    /// The expression, type or token tree the match is about.
    pub(super) fn inner_node(&self) -> Node<'t> {
        self.inner
    }
}

/// The outer capture names of `calls.scm`.
fn outer_name(n: &str) -> Option<&'static str> {
    const NAMES: [&str; 42] = [
        "call",
        "handed",
        "writes",
        "dynamic",
        "iterates",
        "invokes",
        "new",
        "construct",
        "value",
        "type",
        "path",
        "mentions",
        "extends",
        "implements",
        "requests",
        "enters",
        "fact.local",
        "fact.receiver",
        "fact.field",
        "fact.returns",
        "fact.bound",
        "fact.alias",
        "fact.export",
        "fact.returns_value",
        "fact.yields",
        "fact.decorator",
        "fact.iterates",
        "fact.comprehends",
        "fact.cast",
        "fact.caught",
        "fact.entered",
        "fact.params",
        "fact.variant",
        "fact.shape",
        "fact.unpacks",
        "fact.getter",
        "fact.impl_ref",
        "fact.impl_arg",
        "fact.impl_self",
        "fact.tuple_returns",
        "fact.tuple_let",
        "macro",
    ];
    NAMES.iter().find(|x| **x == n).copied()
}

/// A match of a `calls.scm` pattern from its captures, if it is whole.
pub(super) fn call_match<'t>(
    names: &[&str],
    captures: &[tree_sitter::QueryCapture<'t>],
) -> Option<CallMatch<'t>> {
    let mut outer = None;
    let mut inner = None;
    let mut name = None;
    for c in captures {
        match names[c.index as usize] {
            "callee" | "ty" => inner = Some(c.node),
            "name" => name = Some(c.node),
            n if n.starts_with('_') => {}
            n => outer = Some((outer_name(n)?, c.node)),
        }
    }
    let ((what, node), inner) = (outer?, inner?);
    Some(CallMatch {
        what,
        node,
        inner,
        name,
    })
}

/// The sites and facts of one tree's matches (the file's, or a re-parsed
/// macro body's, which keeps the file's byte positions), placed in the
/// symbols around them. `packages`: the names the file's imports bind (Go package
/// names, Python names).
pub(super) fn collect(
    language: Language,
    found: &[CallMatch<'_>],
    src: &str,
    symbols: &[Symbol],
    packages: &[&str],
    out: &mut FileSites,
) {
    let lang = Lang::of(language);
    let owners = Owners::new(symbols);
    // Facts first: a value site naming a local or receiver of its owner is
    // then left out before its chain is built (`drop_shadowed_values` drops
    // the same, once every tree of the file is in).
    let (facts, sites): (Vec<&CallMatch<'_>>, Vec<&CallMatch<'_>>) =
        found.iter().partition(|m| m.what.starts_with("fact."));
    let mut locals: Option<Locals> = None;
    // Read from the text when a Rust call first needs them (below).
    let mut held: Option<Vec<&str>> = None;
    let mut dynamic: Vec<Dynamic<'_, '_>> = Vec::new();
    // Names Rust `let`s take out of tuples: kept once the calls are known.
    let mut untupled: Vec<Fact> = Vec::new();
    for m in facts.into_iter().chain(sites) {
        let (what, node, inner) = (m.what, m.node, m.inner);
        if !what.starts_with("fact.") && locals.is_none() {
            locals = Some(Locals::of(&out.facts));
        }
        let shadowed = |owner: u32, name: &str| locals.as_ref().is_some_and(|l| l.has(owner, name));
        if what == "value"
            && kind_of(inner) == "identifier"
            && shadowed(owners.of(node.start_byte(), true), text(inner, src))
        {
            continue;
        }
        match what {
            "call" | "new" | "construct" | "value" => {
                if matches!(lang, Lang::Rust) && what == "call" {
                    out.sites.extend(rust_collect_site(node, src, &owners));
                }
                let mut chain = Vec::new();
                if what == "new" {
                    chain.push(Step::const_new("#new"));
                }
                let Some(token) = lang.chain(inner, src, &mut chain) else {
                    if what == "call" {
                        out.sites
                            .extend(unknown_receiver(lang, inner, src, &owners));
                    }
                    continue;
                };
                if chain.len() > MAX_CHAIN || chain.last().is_some_and(|l| is_marker(l)) {
                    continue;
                }
                if matches!(lang, Lang::Rust) && what == "call" {
                    rust_call_steps(node, src, &mut held, &mut chain);
                }
                let kind = match what {
                    "call" | "new" => SiteKind::Call,
                    "construct" => SiteKind::Construct,
                    _ => SiteKind::Value,
                };
                if kind == SiteKind::Value && chain.len() == 1 && is_self_word(&chain[0]) {
                    continue;
                }
                let owner = owners.of(node.start_byte(), true);
                if kind == SiteKind::Call && chain.first().is_some_and(|h| !shadowed(owner, h)) {
                    out.sites
                        .extend(head_value_site(lang, &chain, inner, owner, packages));
                }
                if kind == SiteKind::Call && owners.is_macro(owner) {
                    template_self(node, src, &mut chain);
                }
                out.sites.push(raw_site(kind, chain, token, owner));
            }
            "type" | "path" | "extends" | "implements" => {
                type_sites(lang, m, src, &owners, &mut out.sites);
            }
            // `for x in e`: a site at the `for` (no name is written for what
            // the loop calls), with `e`'s chain.
            "iterates" => {
                let mut chain = Vec::new();
                if lang.chain(inner, src, &mut chain).is_none() || chain.len() > MAX_CHAIN {
                    continue;
                }
                let owner = owners.of(node.start_byte(), true);
                out.sites
                    .push(raw_site(SiteKind::Iterates, chain, node, owner));
            }
            "enters" => out
                .sites
                .extend(with_sites(lang, node, inner, src, &owners)),
            "requests" => out.sites.push(fixture_site(inner, src, &owners)),
            "handed" => out
                .sites
                .extend(handed_sites(lang, node, inner, src, packages, &owners)),
            "writes" => out
                .sites
                .extend(written_site(lang, node, inner, src, &owners)),
            // `m!(…)`, `crate::m!(…)` (`invoke_site`).
            "invokes" => out.sites.extend(invoke_site(lang, m, src, &owners)),
            // Tokens no parse reads (a `macro_rules!` template, a macro's
            // arguments that are not parsed again): the types they name.
            "mentions" | "macro"
                if matches!(lang, Lang::Rust)
                    && (what == "mentions" || !super::rust::is_read_again(node, inner, src)) =>
            {
                let owner = owners.of_mention(inner.start_byte());
                let mut found = Vec::new();
                super::rust::mentions(inner, src, &mut found);
                for (chain, token) in found {
                    out.sites
                        .push(raw_site(SiteKind::Type, chain, token, owner));
                }
            }
            "dynamic" if !lang.is_literal(inner) => dynamic.push(Dynamic::of(m, &owners, src)),
            "fact.params" => {
                if let Some(owner) = signature_owner(node, inner, symbols, &owners) {
                    match lang {
                        Lang::Rust => rust_param_facts(node, inner, src, owner, &mut out.facts),
                        _ => param_facts(inner, src, owner, &mut out.facts),
                    }
                }
            }
            "fact.tuple_returns" => rust_tuple_returns(m, src, &owners, &mut out.facts),
            "fact.tuple_let" => rust_untupled_locals(m, src, &owners, &mut untupled),
            "fact.impl_ref" | "fact.impl_arg" | "fact.impl_self" => {
                out.facts.extend(rust_impl_fact(m, src, &owners))
            }
            fact if fact.starts_with("fact.") => {
                if let Some(f) = fact_of(lang, m, src, (symbols, &owners), &out.facts) {
                    out.facts.push(f);
                }
            }
            _ => {}
        }
    }
    dynamic_sites(&dynamic, src, &mut out.sites);
    keep_uncalled(untupled, out);
}

/// Adds the `locals` of `rust_untupled_locals` whose owner does not call
/// them by name. Locals go by owner, not by position: `let (w, rx) = w();`
/// would make the call in its own initialiser a call of the local; such a
/// name stays unknown, as before tuples were read.
fn keep_uncalled(mut locals: Vec<Fact>, out: &mut FileSites) {
    if locals.is_empty() {
        return;
    }
    let called: std::collections::HashSet<(u32, &str)> = called_by_name(&out.sites).collect();
    locals.retain(|f| !called.contains(&(f.owner, f.name.as_str())));
    out.facts.append(&mut locals);
}

/// The (owner, name) of each call of a bare name (`f(…)`).
fn called_by_name(sites: &[RawSite]) -> impl Iterator<Item = (u32, &str)> {
    sites.iter().filter_map(|s| match s.chain.as_slice() {
        [one] if s.kind == SiteKind::Call => Some((s.owner, one.as_str())),
        _ => None,
    })
}

/// A call's receiver named by a plain name (`DEFAULT.summary()`,
/// `report.flush()`): a use of that name as a value too, kept when it
/// resolves to a module-level value or function. A Go package name is never
/// a value (nothing in the package may share an imported name), and it heads
/// most Go calls.
fn head_value_site(
    lang: Lang,
    chain: &[Step],
    inner: Node<'_>,
    owner: u32,
    packages: &[&str],
) -> Option<RawSite> {
    let first = chain.first()?;
    let go_package = matches!(lang, Lang::Go) && packages.contains(&first.as_str());
    let named = chain.len() > 1
        && !is_marker(first)
        && !is_self_word(first)
        && !chain[1].starts_with("::")
        && !go_package;
    let h = head(inner).filter(|_| named)?;
    Some(raw_site(SiteKind::Value, vec![first.clone()], h, owner))
}

/// The steps a Rust call's chain takes from what is around it: the value a
/// pattern holding its receiver takes apart (`rust_held_receiver`), its one
/// argument's shape (`rust_argument`), its turbofish (`rust_turbofish`).
fn rust_call_steps<'s>(
    call: Node<'_>,
    src: &'s str,
    held: &mut Option<Vec<&'s str>>,
    chain: &mut Vec<Step>,
) {
    rust_held_receiver(call, src, held, chain);
    rust_argument(call, src, chain);
    rust_turbofish(call, src, chain);
}

/// The site of a macro invocation (`m!(…)`, `crate::m!(…)`): the macro's
/// name, marked with its `!` (a macro is no function of that name); none for
/// the standard library's.
fn invoke_site(lang: Lang, m: &CallMatch<'_>, src: &str, owners: &Owners<'_>) -> Option<RawSite> {
    let mut chain = Vec::new();
    let token = lang.chain(m.inner, src, &mut chain)?;
    if is_std_macro(&chain) {
        return None;
    }
    if let Some(last) = chain.last_mut() {
        last.push('!');
    }
    let owner = owners.of(m.node.start_byte(), true);
    Some(raw_site(SiteKind::Call, chain, token, owner))
}

/// A computed member called (`target[methodName](…)`), or bound to a local
/// (`const f = target[methodName]`, a call only if the file calls `f`).
struct Dynamic<'t, 's> {
    at: Node<'t>,
    owner: u32,
    bound: Option<&'s str>,
    /// The chain of the object indexed (`locales` in `locales[name]()`);
    /// empty when it has none (`f()[k]()`).
    object: Vec<Step>,
}

impl<'t, 's> Dynamic<'t, 's> {
    fn of(m: &CallMatch<'t>, owners: &Owners<'_>, src: &'s str) -> Dynamic<'t, 's> {
        let mut object = Vec::new();
        let indexed = m.inner.parent().and_then(|s| child(s, "object"));
        if indexed.is_none_or(|o| Lang::Ts.chain(o, src, &mut object).is_none()) {
            object.clear();
        }
        Dynamic {
            at: m.node,
            owner: owners.of(m.node.start_byte(), true),
            bound: m.name.map(|n| text(n, src)),
            object,
        }
    }
}

/// The sites of a file's computed member calls (`model::sites::DYNAMIC`): at
/// the first of each owner, one per name the file writes as an object key
/// or a string (`probeArgs = { ipv4: [], … }`, then `target[name](...args)`):
/// the names such a call is most often driven by. A name built elsewhere
/// (`Object.keys(proto)`) is not seen; nor are calls of a method passed as a
/// value (`function_value` covers those).
fn dynamic_sites(dynamic: &[Dynamic<'_, '_>], src: &str, out: &mut Vec<RawSite>) {
    let called = |name: &str| {
        out.iter()
            .any(|s| s.kind == SiteKind::Call && matches!(s.chain.as_slice(), [one] if one == name))
    };
    let live: Vec<&Dynamic<'_, '_>> = dynamic
        .iter()
        .filter(|d| d.bound.is_none_or(called))
        .collect();
    // Any member of the object: once per owner and object.
    let mut every: Vec<&Dynamic<'_, '_>> = live
        .iter()
        .copied()
        .filter(|d| !d.object.is_empty())
        .collect();
    every.sort_by(|a, b| {
        (a.owner, &a.object, a.at.start_byte()).cmp(&(b.owner, &b.object, b.at.start_byte()))
    });
    every.dedup_by(|a, b| a.owner == b.owner && a.object == b.object);
    for d in every {
        let chain = [d.object.as_slice(), &[Step::const_new(EVERY)]].concat();
        out.push(raw_site(SiteKind::Call, chain, d.at, d.owner));
    }
    let mut at: Vec<(u32, Node<'_>)> = live.iter().map(|d| (d.owner, d.at)).collect();
    at.sort_by_key(|(owner, n)| (*owner, n.start_byte()));
    at.dedup_by_key(|(owner, _)| *owner);
    let Some(&(_, first)) = at.first() else {
        return;
    };
    let mut root = first;
    while let Some(p) = root.parent() {
        root = p;
    }
    let mut names: Vec<&str> = Vec::new();
    let mut cursor = root.walk();
    'walk: loop {
        let n = cursor.node();
        let word = match kind_of(n) {
            "property_identifier" => n.parent().is_some_and(|p| kind_of(p) == "pair"),
            "shorthand_property_identifier" | "string_fragment" => true,
            _ => false,
        };
        let t = text(n, src);
        if word && is_identifier(t) {
            names.push(t);
        }
        if cursor.goto_first_child() || cursor.goto_next_sibling() {
            continue;
        }
        while cursor.goto_parent() {
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
        }
        break;
    }
    names.sort_unstable();
    names.dedup();
    for (owner, n) in at {
        for name in &names {
            let chain = vec![Step::const_new(DYNAMIC), Step::from(*name)];
            out.push(raw_site(SiteKind::Call, chain, n, owner));
        }
    }
}

/// A word that can name a method: `ipv4`, `$parse`, `_zod` (not `a b`, `2`).
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// The type sites of a `type`, `path`, `extends` or `implements` match: each
/// type the written type names (a supertype clause's first is the supertype,
/// its type arguments are types named).
fn type_sites(
    lang: Lang,
    m: &CallMatch<'_>,
    src: &str,
    owners: &Owners<'_>,
    out: &mut Vec<RawSite>,
) {
    let (what, node, inner) = (m.what, m.node, m.inner);
    let kind = match what {
        "type" | "path" => SiteKind::Type,
        "extends" => SiteKind::Extends,
        _ => SiteKind::Implements,
    };
    let owner = match kind {
        // The declaring type (or impl): the innermost symbol
        // around the clause.
        SiteKind::Type => owners.of(node.start_byte(), true),
        _ => owners.of(inner.start_byte(), false),
    };
    let mut found = Vec::new();
    lang.type_names(inner, src, &mut found, true);
    // Of a supertype or trait, only the first name is it: its
    // type arguments (`impl From<Chain> for T`) are types named.
    let mut first = None;
    if kind != SiteKind::Type {
        let mut it = Vec::new();
        lang.type_names(inner, src, &mut it, false);
        first = it.first().map(|(_, t)| t.start_byte());
    }
    for (chain, token) in found {
        let kind = match first {
            Some(at) if at != token.start_byte() => SiteKind::Type,
            _ => kind,
        };
        // A path's qualifier is a type when named as one (else a
        // module: `mem::take`); a pattern's `Some(x)` the prelude's.
        let keep = match what {
            "path" => super::rust::names_a_type(text(token, src)),
            _ => !(chain.len() == 1 && super::rust::is_prelude_variant(&chain[0])),
        };
        if keep {
            out.push(raw_site(kind, chain, token, owner));
        }
    }
}

/// Python `with e:` calls `e`'s `__enter__` and `__exit__` (`async with`:
/// `__aenter__`, `__aexit__`): two sites at the `with` (no name is written
/// for them).
fn with_sites(
    lang: Lang,
    statement: Node<'_>,
    item: Node<'_>,
    src: &str,
    owners: &Owners<'_>,
) -> Vec<RawSite> {
    let mut chain = Vec::new();
    if lang.chain(item, src, &mut chain).is_none() || chain.len() >= MAX_CHAIN {
        return Vec::new();
    }
    let owner = owners.of(statement.start_byte(), true);
    let methods = if is_async_with(statement) {
        ["__aenter__", "__aexit__"]
    } else {
        ["__enter__", "__exit__"]
    };
    methods
        .into_iter()
        .map(|method| {
            let mut called = chain.clone();
            called.push(Step::from(method));
            raw_site(SiteKind::Call, called, statement, owner)
        })
        .collect()
}

/// A pytest test's or fixture's parameter: the fixture it requests
/// (`[FIXTURE, name]`).
fn fixture_site(param: Node<'_>, src: &str, owners: &Owners<'_>) -> RawSite {
    let chain = vec![Step::const_new(FIXTURE), Step::from(text(param, src))];
    raw_site(
        SiteKind::Value,
        chain,
        param,
        owners.of(param.start_byte(), true),
    )
}

/// Objects handed to a call (`Signer(key, serializer=self.serializer)`,
/// `call`'s argument `arg`): `[HANDED, arg…, HANDED, callee…]` each. When
/// the callee is a library's, the library may call the objects' methods back
/// (`Resolver::handed`). `**options` hands what the function stores in the
/// dict (`options["loader"] = app.create_loader()`, `stored_in`).
fn handed_sites(
    lang: Lang,
    call: Node<'_>,
    arg: Node<'_>,
    src: &str,
    imported: &[&str],
    owners: &Owners<'_>,
) -> Vec<RawSite> {
    // Only a name an import binds can be a library's (`Resolver::handed`).
    let head = call.child_by_field_name("function").map(|f| {
        let mut at = f;
        while let Some(object) = at.child_by_field_name("object") {
            at = object;
        }
        text(at, src)
    });
    if !head.is_some_and(|h| imported.contains(&h)) {
        return Vec::new();
    }
    let args = match arg.parent() {
        Some(p) if kind_of(p) == "dictionary_splat" => stored_in(arg, src),
        _ => vec![arg],
    };
    args.into_iter()
        .filter_map(|a| handed_site(lang, call, a, src, owners))
        .collect()
}

/// The values a Python function stores in its dict `dict` (a name) by
/// subscript (`options["loader"] = x`), in the function `dict` is used in.
fn stored_in<'t>(dict: Node<'t>, src: &str) -> Vec<Node<'t>> {
    let name = text(dict, src);
    let mut scope = dict;
    while let Some(p) = scope.parent() {
        scope = p;
        if kind_of(p) == "function_definition" {
            break;
        }
    }
    let mut found = Vec::new();
    let mut cursor = scope.walk();
    let mut stack = vec![scope];
    while let Some(n) = stack.pop() {
        if kind_of(n) == "assignment"
            && let (Some(left), Some(right)) = (child(n, "left"), child(n, "right"))
            && kind_of(left) == "subscript"
            && child(left, "value")
                .is_some_and(|v| kind_of(v) == "identifier" && text(v, src) == name)
        {
            found.push(right);
        }
        stack.extend(n.named_children(&mut cursor));
    }
    found
}

/// One object handed to a call (`handed_sites`). `self` is left out:
/// handing itself over is how an object registers, and it would tie every
/// method of its class to the call.
fn handed_site(
    lang: Lang,
    call: Node<'_>,
    arg: Node<'_>,
    src: &str,
    owners: &Owners<'_>,
) -> Option<RawSite> {
    let mut chain = vec![Step::const_new(HANDED)];
    lang.chain(arg, src, &mut chain)?;
    if chain.len() == 2 && is_self_word(&chain[1]) {
        return None;
    }
    chain.push(Step::const_new(HANDED));
    lang.chain(call.child_by_field_name("function")?, src, &mut chain)?;
    if chain.len() > MAX_CHAIN || chain.iter().any(|c| c == "?") {
        return None;
    }
    let owner = owners.of(arg.start_byte(), true);
    Some(raw_site(SiteKind::Value, chain, arg, owner))
}

/// `o.p = v` (`attribute` of the assignment `node`): `[o…, p, WRITTEN]`, the
/// setter if `p` is a property.
fn written_site(
    lang: Lang,
    node: Node<'_>,
    attribute: Node<'_>,
    src: &str,
    owners: &Owners<'_>,
) -> Option<RawSite> {
    let mut chain = Vec::new();
    lang.chain(attribute, src, &mut chain)?;
    if !(2..MAX_CHAIN).contains(&chain.len()) || chain.iter().any(|c| c == "?") {
        return None;
    }
    chain.push(Step::const_new(WRITTEN));
    let owner = owners.of(node.start_byte(), true);
    Some(raw_site(SiteKind::Value, chain, attribute, owner))
}

/// What `x` is in `with e as x:` (`with_item` `node`): what `e.__enter__()`
/// returns (`async with`: what `__aenter__` gives once awaited).
fn entered(node: Node<'_>, chain: &mut Vec<Step>) {
    let statement = node.parent().and_then(|clause| clause.parent());
    let enter = if statement.is_some_and(is_async_with) {
        "__aenter__"
    } else {
        "__enter__"
    };
    chain.extend([Step::from(enter), Step::const_new("()")]);
}

/// Whether a Python `with_statement` is `async with`.
fn is_async_with(statement: Node<'_>) -> bool {
    statement.child(0).is_some_and(|c| c.kind() == "async")
}

/// A site at `at`'s name token (1-based line, byte column).
fn raw_site(kind: SiteKind, chain: Vec<Step>, at: Node<'_>, owner: u32) -> RawSite {
    let pos = at.start_position();
    RawSite {
        kind,
        chain: chain.into(),
        line: pos.row as u32 + 1,
        col: pos.column as u32 + 1,
        owner,
    }
}

/// The fact a `fact.*` match states (`collect`), if it holds one: a local's,
/// field's or alias's type or initialiser, a result, a bound, a decorator.
/// `facts`: the file's so far (a field assigned a parameter takes its type).
fn fact_of(
    lang: Lang,
    m: &CallMatch<'_>,
    src: &str,
    (symbols, owners): (&[Symbol], &Owners<'_>),
    facts: &[Fact],
) -> Option<Fact> {
    let (what, node, inner, name) = (m.what, m.node, m.inner, m.name);
    let kind = match &what[5..] {
        "local" | "iterates" | "comprehends" | "cast" | "caught" | "variant" | "unpacks"
        | "entered" => FactKind::Local,
        "receiver" => FactKind::Receiver,
        "field" | "shape" | "getter" => FactKind::Field,
        "alias" => FactKind::Alias,
        "export" => FactKind::Export,
        "returns" | "returns_value" | "yields" => FactKind::Returns,
        "decorator" => FactKind::Decorator,
        _ => FactKind::Bound,
    };
    // `where Chain: Show` bounds a type, not a parameter of that name: no
    // fact (it would make every `Chain` there the trait).
    if what == "fact.bound"
        && kind_of(node) == "where_predicate"
        && name.is_some_and(|n| !super::rust::is_type_parameter(node, text(n, src), src))
    {
        return None;
    }
    // An inferred result (Python `return X()`, a fixture's
    // `yield X()`) is an expression, not a type: marked so.
    let marker = match &what[5..] {
        "returns_value" | "getter" => Some(RETURNS_VALUE),
        "yields" => Some(YIELDS),
        _ => None,
    };
    let mut chain = Vec::new();
    // TS results that name no type: `min(n): this` (the receiver's,
    // `returns_this`), `_process(): { status: ParseStatus }` (the function's
    // own, `SHAPE`).
    let own = match kind_of(inner) {
        "this_type" => Some("this"),
        "object_type" if what == "fact.returns" => Some(SHAPE),
        _ => None,
    };
    if let Some(own) = own {
        return Some(Fact {
            kind,
            owner: owners.of(node.start_byte(), false),
            name: Step::default(),
            chain: vec![Step::const_new(own)].into(),
            byte: node.start_byte() as u32,
            owned: None,
        });
    }
    // `cast(T, v)`'s first argument, and the class `except T as e` catches,
    // are types written as expressions.
    let is_type = lang.is_type_node(inner) || what == "fact.cast" || what == "fact.caught";
    if is_type {
        chain = declared_chain(lang, inner, src);
    } else if lang.chain(inner, src, &mut chain).is_none() || chain.len() > MAX_CHAIN {
        // A literal (`[]`, `{}`, `"…"`, a closure, `vec![]`):
        // a value of a type the language has, kept so that the
        // name stays a local and its methods are not the repo's.
        if !lang.is_literal(inner) {
            return None;
        }
        chain = vec![Step::const_new("?")];
    }
    let mut owner = go_var_owner(kind, node, symbols, owners)?;
    // `self.x = …` / `this.x = …` in a method: a field of its class (a
    // property of a declared result is the function's own, as is a Go
    // field of a struct of no name in a function, `SHAPE`).
    if kind == FactKind::Field
        && what != "fact.shape"
        && !matches!(lang, Lang::Go)
        && owner != IN_FILE
        && symbols[owner as usize].kind.is_callable()
    {
        if let Some(typed) = parameter_type(facts, owner, &chain) {
            chain = typed;
        }
        owner = symbols[owner as usize].parent.map_or(IN_FILE, |p| p as u32);
        if owner == IN_FILE {
            return None;
        }
    }
    // A fact of the file (a module-level variable) has no owner
    // but the file; a field outside any type is not one.
    let name = fact_name(node, inner, name, src)?;
    if !matches!(
        kind,
        FactKind::Returns | FactKind::Alias | FactKind::Decorator
    ) && name.is_empty()
    {
        return None;
    }
    if let Some(m) = marker {
        chain.insert(0, Step::const_new(m));
    }
    // Go `cases := []struct{ … }{…}`: a struct of no name, the local's.
    if kind == FactKind::Local && chain.first().is_some_and(|c| c == SHAPE) {
        chain.insert(1, name.clone());
    }
    // An untyped TS parameter of a function passed as an argument: typed by
    // what the callee declares (contextual typing).
    let callback = match lang {
        Lang::Ts if what == "fact.local" => callback_of(node, src),
        Lang::Rust if what == "fact.local" && kind_of(node) == "closure_parameters" => {
            m.name.and_then(|n| rust_callback_of(node, n, src))
        }
        _ => None,
    };
    if let Some(callback) = callback {
        chain = callback;
    }
    match what {
        "fact.iterates" => chain.push(Step::const_new(ITERATES)),
        "fact.comprehends" => chain.push(Step::const_new(COMPREHENDS)),
        "fact.variant" => chain.push(Step::const_new(VARIANT_FIELD)),
        "fact.entered" => entered(node, &mut chain),
        // `{ ctx: c }` reads property `ctx`; `{ status }` property `status`;
        // of a parameter, the property of its declared type.
        "fact.unpacks" => {
            let named = m.name?;
            let pair = named.parent().filter(|p| kind_of(*p) == "pair_pattern");
            let key = pair.and_then(|p| child(p, "key")).unwrap_or(named);
            chain.push(Step::from(text(key, src)));
            if is_type {
                chain.push(Step::const_new(PROPERTY));
            }
        }
        _ => {}
    }
    let owned = match lang {
        Lang::Rust => rust_owned(what, inner, is_type, src),
        Lang::Python if kind == FactKind::Field => python_holds(node, inner, src, &mut chain),
        _ => None,
    };
    Some(Fact {
        kind,
        owner,
        name,
        chain: chain.into(),
        byte: node.start_byte() as u32,
        owned,
    })
}

/// Python: `Some(true)` when field `node` holds the class or function its
/// chain names, itself, not an instance of it: a class attribute assigned a
/// name (`response_class = Response`) or declared `type[T]` (`context_class:
/// type[Context] = Context`; the chain becomes `T`'s). Calling it through an
/// instance calls what it holds (`Resolver::held_callable`).
fn python_holds(node: Node<'_>, inner: Node<'_>, src: &str, chain: &mut Vec<Step>) -> Option<bool> {
    if kind_of(node) != "assignment"
        || child(node, "left").is_none_or(|l| kind_of(l) != "identifier")
    {
        return None;
    }
    if kind_of(inner) != "type" {
        let words = chain
            .iter()
            .all(|c| c.chars().all(|ch| ch.is_alphanumeric() || ch == '_'));
        return (words && !chain.is_empty()).then_some(true);
    }
    // `type[T]`, `t.Type[T]`, `type[T] | None`.
    let mut at = inner.named_child(0)?;
    if kind_of(at) == "binary_operator" {
        at = child(at, "left")?;
    }
    let (head, arg) = match kind_of(at) {
        "generic_type" => (at.named_child(0)?, at.named_child(1)?.named_child(0)?),
        "subscript" => (child(at, "value")?, child(at, "subscript")?),
        _ => return None,
    };
    let head = text(head, src);
    if !matches!(head.rsplit('.').next(), Some("type" | "Type")) {
        return None;
    }
    let held = declared_chain(Lang::Python, arg, src);
    if held == ["?"] {
        return None;
    }
    *chain = held;
    Some(true)
}

/// The fields of a member access in `lang`'s grammar, for node kind `k`: the
/// object's and the member's (`a.b`, a qualified type `pkg.T`).
fn member_fields(lang: Lang, k: &str) -> Option<(&'static str, &'static str)> {
    Some(match (lang, k) {
        (Lang::Rust, "field_expression") => ("value", "field"),
        (Lang::Python, "attribute") => ("object", "attribute"),
        (Lang::Ts, "member_expression") => ("object", "property"),
        (Lang::Ts, "nested_type_identifier") => ("module", "name"),
        (Lang::Go, "selector_expression") => ("operand", "field"),
        (Lang::Go, "qualified_type") => ("package", "name"),
        _ => return None,
    })
}

/// What a Go slice, array or map literal's type holds (`[]*T` → `*T`,
/// `map[K][]T` → `T`): its values' type, which iterating or indexing the
/// literal gives; any other type as it is. Go chains name a declared slice
/// by its element type too (`xs []T` → `T`).
fn go_element(mut ty: Node<'_>) -> Node<'_> {
    while let Some(element) = match kind_of(ty) {
        "slice_type" | "array_type" | "implicit_length_array_type" => child(ty, "element"),
        "map_type" => child(ty, "value"),
        _ => None,
    } {
        ty = element;
    }
    ty
}

/// Who owns a fact (`Owners::of`, which passes over vars: they own no
/// sites), but for two facts of a Go package-level var, which are the var's:
/// the result of the function value it holds (`var f = func() *T {…}`; none
/// elsewhere) and a field of a struct of no name it holds (`var cases =
/// []struct{ r *Replacer }{…}`, its `SHAPE`).
fn go_var_owner(
    kind: FactKind,
    node: Node<'_>,
    symbols: &[Symbol],
    owners: &Owners<'_>,
) -> Option<u32> {
    let owner = owners.of(node.start_byte(), false);
    let var = || {
        owners
            .innermost(node.start_byte() as u32)
            .filter(|&i| symbols[i].kind == SymbolKind::Var)
            .map(|i| i as u32)
    };
    match kind {
        FactKind::Returns if kind_of(node) == "var_spec" => var(),
        FactKind::Field if owner == IN_FILE && kind_of(node) == "field_declaration" => {
            Some(var().unwrap_or(owner))
        }
        _ => Some(owner),
    }
}

/// Whether a Rust local, field or result holds a value or a reference
/// (`Fact::owned`), when what is written says: a type (`v: SmallVec<A>`, `->
/// &T`; not a wrapper the chain looks into, `Option<T>`) or an initialiser
/// (`Point { … }`, `&x`).
fn rust_owned(what: &str, inner: Node<'_>, is_type: bool, src: &str) -> Option<bool> {
    if !matches!(what, "fact.local" | "fact.field" | "fact.returns") {
        return None;
    }
    match kind_of(inner) {
        "reference_type" | "reference_expression" => Some(false),
        "struct_expression" => Some(true),
        "type_identifier" | "scoped_type_identifier" if is_type => Some(true),
        "generic_type" if is_type => {
            (rust_unwrapped(inner, src).id() == inner.id()).then_some(true)
        }
        _ => None,
    }
}

/// The chain of a declared type (`fact_of`): the first type it names (`?` if
/// none: a function type), a Rust primitive by its name (the repo's extension
/// traits may give it methods, `impl U32 for u32`), a container's element after
/// `ELEMENT`.
fn declared_chain(lang: Lang, inner: Node<'_>, src: &str) -> Vec<Step> {
    let inner = match lang {
        Lang::Rust => rust_unwrapped(inner, src),
        _ => inner,
    };
    let mut found = Vec::new();
    lang.type_names(inner, src, &mut found, false);
    let mut chain = found
        .into_iter()
        .next()
        .map_or_else(|| vec![Step::const_new("?")], |(c, _)| c);
    if matches!(lang, Lang::Rust) {
        let mut t = Some(inner);
        while let Some(r) = t.filter(|t| kind_of(*t) == "reference_type") {
            t = child(r, "type");
        }
        if let Some(p) = t.filter(|t| kind_of(*t) == "primitive_type") {
            chain = vec![Step::from(text(p, src))];
        }
    }
    let element = match lang {
        Lang::Python => python_element(inner, src),
        Lang::Rust => rust_element(inner, src),
        _ => None,
    };
    if let Some(element) = element {
        chain.push(Step::const_new(ELEMENT));
        chain.extend(element);
    }
    chain
}

/// The name a fact binds: its `name` capture's text, or for a field of a
/// tuple struct its position (`0`), of a tuple variant the variant's name
/// and the position (`Teddy.0`). `None` when the field is not found.
fn fact_name(node: Node<'_>, inner: Node<'_>, name: Option<Node<'_>>, src: &str) -> Option<Step> {
    if kind_of(node) != "ordered_field_declaration_list" {
        return Some(name.map(|n| Step::from(text(n, src))).unwrap_or_default());
    }
    let mut c = node.walk();
    let i = node
        .children_by_field_name("type", &mut c)
        .position(|t| t.id() == inner.id())?;
    Some(match name {
        Some(v) => compact_str::format_compact!("{}.{i}", text(v, src)),
        None => compact_str::format_compact!("{i}"),
    })
}

/// The parameters of a TS parameter list that have positions: all but a
/// `this` parameter (a type annotation of the receiver).
fn positional<'t>(params: Node<'t>) -> impl Iterator<Item = Node<'t>> {
    let mut c = params.walk();
    let all: Vec<Node<'t>> = params.named_children(&mut c).collect();
    all.into_iter().filter(|p| {
        matches!(kind_of(*p), "required_parameter" | "optional_parameter")
            && child(*p, "pattern").is_none_or(|n| kind_of(n) != "this")
    })
}

/// The function type a TS parameter is declared with, if any: written
/// directly, in parentheses, or as one member of a union
/// (`((value: T) => void) | null`).
fn function_type(ty: Node<'_>) -> Option<Node<'_>> {
    match kind_of(ty) {
        "function_type" => Some(ty),
        "parenthesized_type" | "union_type" => {
            let mut c = ty.walk();
            let all: Vec<Node<'_>> = ty.named_children(&mut c).collect();
            all.into_iter().find_map(function_type)
        }
        _ => None,
    }
}

/// The symbol whose TS parameter list `params` is (`decl`: its declaration):
/// the innermost symbol around the list, when it is a function or an alias
/// declared in the same body as `decl` (not the function around an object
/// type's method signature, which declares no symbol).
fn signature_owner(
    decl: Node<'_>,
    params: Node<'_>,
    symbols: &[Symbol],
    owners: &Owners<'_>,
) -> Option<u32> {
    let i = owners.innermost(params.start_byte() as u32)?;
    let mut body = decl.parent();
    while let Some(b) = body {
        if matches!(
            kind_of(b),
            "statement_block"
                | "class_body"
                | "interface_body"
                | "object_type"
                | "program"
                | "block"
                | "declaration_list"
                | "source_file"
        ) {
            break;
        }
        body = b.parent();
    }
    let s = &symbols[i];
    let same_body = body.is_none_or(|b| s.byte_start as usize >= b.start_byte());
    (same_body && (s.kind.is_callable() || s.kind == SymbolKind::Type)).then_some(i as u32)
}

/// The `Param` facts of TS parameter list `params` owned by `owner`: each
/// parameter's declared type when it names one, and for a parameter declared
/// with a function type, that type's parameters' (`FactKind::Param`).
fn param_facts(params: Node<'_>, src: &str, owner: u32, out: &mut Vec<Fact>) {
    let declared = |p: Node<'_>| -> Option<Vec<Step>> {
        let ty = child(p, "type")?.named_child(0)?;
        let mut found = Vec::new();
        Lang::Ts.type_names(ty, src, &mut found, false);
        found.into_iter().next().map(|(chain, _)| chain)
    };
    let mut fact = |name: Step, chain: Vec<Step>, at: Node<'_>| {
        out.push(Fact {
            kind: FactKind::Param,
            owner,
            name,
            chain: chain.into(),
            byte: at.start_byte() as u32,
            owned: None,
        })
    };
    for (i, p) in positional(params).enumerate() {
        let ty = child(p, "type").and_then(|t| t.named_child(0));
        match ty.and_then(function_type) {
            Some(f) => {
                let Some(inner) = child(f, "parameters") else {
                    continue;
                };
                for (j, q) in positional(inner).enumerate() {
                    if let Some(chain) = declared(q) {
                        fact(compact_str::format_compact!("{i}.{j}"), chain, q);
                    }
                }
            }
            // A named type: perhaps an alias of a function type
            // (`handler: Handler`), read through when a callback needs it.
            None if ty.is_some_and(|t| {
                matches!(
                    kind_of(t),
                    "type_identifier" | "generic_type" | "nested_type_identifier"
                )
            }) =>
            {
                if let Some(chain) = declared(p) {
                    fact(compact_str::format_compact!("{i}"), chain, p);
                }
            }
            None => {}
        }
    }
}

/// The fact a Rust impl block states of itself (`imp`, `m.node`): that it is
/// for a reference type (`ImplForRef`: `impl<'a> IntoIterator for &'a mut V`),
/// or the shape of its trait's first type argument (`ImplTraitArg`: `impl
/// From<Vec<T>> for V`).
fn rust_impl_fact(m: &CallMatch<'_>, src: &str, owners: &Owners<'_>) -> Option<Fact> {
    let (imp, ty) = (m.node, m.inner);
    let at = imp.start_byte() as u32;
    let i = owners.innermost(at)?;
    let s = &owners.symbols[i];
    if s.kind != SymbolKind::Impl || s.byte_start != at {
        return None;
    }
    let (kind, name) = if m.what == "fact.impl_arg" {
        let params = type_parameters(imp, src);
        (FactKind::ImplTraitArg, type_shape(ty, src, &params, 0)?)
    } else if m.what == "fact.impl_self" {
        let params = type_parameters(imp, src);
        (
            FactKind::ImplSelfArgs,
            type_arguments_key(ty, src, &params)?,
        )
    } else {
        let mutable = child(ty, "mutable_specifier").is_some() || text(ty, src).starts_with("&mut");
        (
            FactKind::ImplForRef,
            String::from(if mutable { "&mut" } else { "&" }),
        )
    };
    Some(Fact {
        kind,
        owner: i as u32,
        name: Step::from(name),
        chain: Vec::new().into(),
        byte: at,
        owned: Some(false),
    })
}

/// Rust type arguments (`<V, 1>`, a turbofish's `::<2>`) as `TYPE_ARGS` and
/// `ImplSelfArgs` compare them: each argument's text without its spaces,
/// `_` for one of `params` (the impl's own, which any argument may be) or
/// one inferred, lifetimes left out, joined by `|` (which no type writes:
/// a `,` inside an argument, `HashMap<K, V>`, would part it).
fn type_arguments_key(args: Node<'_>, src: &str, params: &[&str]) -> Option<String> {
    let mut key = String::new();
    let mut c = args.walk();
    for a in args.named_children(&mut c) {
        let written = text(a, src);
        if kind_of(a) == "lifetime" {
            continue;
        }
        if !key.is_empty() {
            key.push('|');
        }
        if params.contains(&written) {
            key.push('_');
        } else {
            key.extend(written.chars().filter(|c| !c.is_whitespace()));
        }
    }
    (!key.is_empty() && key.len() <= 64).then_some(key)
}

/// A Rust call by path whose type has a turbofish (`ExactlyNDigits::<2>::
/// parse(x)`): its type arguments as a last step (`TYPE_ARGS`).
fn rust_turbofish(call: Node<'_>, src: &str, chain: &mut Vec<Step>) {
    let Some(f) = child(call, "function").filter(|f| kind_of(*f) == "scoped_identifier") else {
        return;
    };
    let Some(args) = child(f, "path")
        .filter(|p| kind_of(*p) == "generic_type")
        .and_then(|p| child(p, "type_arguments"))
    else {
        return;
    };
    if let Some(key) = type_arguments_key(args, src, &[]) {
        chain.push(compact_str::format_compact!("{TYPE_ARGS}{key}"));
    }
}

/// `fn f() -> (A, B)` (or a `Result`/`Option` of one, `m`): a `Returns`
/// fact per element, named by its position (`TUPLE_ELEMENT`).
fn rust_tuple_returns(m: &CallMatch<'_>, src: &str, owners: &Owners<'_>, out: &mut Vec<Fact>) {
    let at = m.node.start_byte() as u32;
    // What `?`, `.unwrap()` and the like take out: the tuple in a
    // `Result<(A, B), E>`, an `Option<(A, B)>`.
    let value = rust_unwrapped(m.inner, src);
    if kind_of(value) != "tuple_type" {
        return;
    }
    let Some(f) = owners.innermost(at).filter(|&i| {
        let s = &owners.symbols[i];
        s.byte_start == at && s.kind.is_callable()
    }) else {
        return;
    };
    let mut c = value.walk();
    for (i, element) in value.named_children(&mut c).enumerate() {
        out.push(Fact {
            kind: FactKind::Returns,
            owner: f as u32,
            name: compact_str::format_compact!("{i}"),
            chain: declared_chain(Lang::Rust, element, src).into(),
            byte: at,
            owned: rust_owned("fact.returns", element, true, src),
        });
    }
}

/// `let (a, mut b) = f();` (`m`): a `Local` per name, element i of the
/// call's result (`TUPLE_ELEMENT`), or of a tuple written there (`(x, y)`)
/// the element's own chain. A name whose element is not known gets none: a
/// local of `?` would say its value is the language's, and its calls none of
/// the repo's; nor does one its owner also binds by `Err(name)`. `collect`
/// then drops the names their owner calls (`keep_uncalled`).
fn rust_untupled_locals(m: &CallMatch<'_>, src: &str, owners: &Owners<'_>, out: &mut Vec<Fact>) {
    let (node, value) = (m.node, m.inner);
    let at = node.start_byte() as u32;
    let Some(pattern) = child(node, "pattern") else {
        return;
    };
    let mut c = value.walk();
    let written: Option<Vec<Node<'_>>> =
        (kind_of(value) == "tuple_expression").then(|| value.named_children(&mut c).collect());
    let mut whole = Vec::new();
    if written.is_none() && Lang::Rust.chain(value, src, &mut whole).is_none() {
        return;
    }
    let owner = owners.of(node.start_byte(), false);
    let mut p = pattern.walk();
    let names: Vec<Option<&str>> = pattern
        .named_children(&mut p)
        .map(|element| {
            let bound = match kind_of(element) {
                "identifier" => Some(element),
                "ref_pattern" | "mut_pattern" => (element
                    .named_child((element.named_child_count() as u32).saturating_sub(1)))
                .filter(|n| kind_of(*n) == "identifier"),
                _ => None,
            };
            bound.map(|b| text(b, src))
        })
        .collect();
    // Bindings go by owner, not by position, and must all agree: a value
    // made from a name the pattern binds again (`let (input, rest) =
    // input.split_at(i)`, `let (a, b) = (b, a)`) would make the earlier
    // binding's uses, this one's own initialiser among them, of no type.
    let rebinds = |chain: &[Step]| {
        chain
            .first()
            .is_some_and(|h| names.contains(&Some(h.as_str())))
    };
    if written.is_none() && rebinds(&whole) {
        return;
    }
    // A match arm's `Err(e)` binds no local (`rust_pattern_value` reads
    // `Some`/`Ok` only): the tuple's `e` would be taken for it.
    let errs = match owners.innermost(at) {
        Some(o) => {
            let s = &owners.symbols[o];
            rust_variant_names(&src[s.byte_start as usize..s.byte_end as usize], &["Err"])
        }
        None => Vec::new(),
    };
    for (i, name) in names.iter().enumerate() {
        let Some(name) = *name else { continue };
        if errs.binary_search(&name).is_ok() {
            continue;
        }
        let chain = match &written {
            Some(elements) => {
                let mut chain = Vec::new();
                let known = elements
                    .get(i)
                    .and_then(|e| Lang::Rust.chain(*e, src, &mut chain));
                if known.is_none()
                    || chain.len() > MAX_CHAIN
                    || chain.iter().any(|c| c == "?")
                    || rebinds(&chain)
                {
                    continue;
                }
                chain
            }
            None if whole.len() < MAX_CHAIN && whole.last().is_some_and(|l| l == "()") => {
                let mut chain = whole.clone();
                chain.push(compact_str::format_compact!("{TUPLE_ELEMENT}{i}"));
                chain
            }
            None => continue,
        };
        out.push(Fact {
            kind: FactKind::Local,
            owner,
            name: Step::from(name),
            chain: chain.into(),
            byte: at,
            owned: None,
        });
    }
}

/// The names of the type parameters of a Rust item (`impl<'a, A: Array>`: `A`).
fn type_parameters<'s>(item: Node<'_>, src: &'s str) -> Vec<&'s str> {
    let Some(tps) = child(item, "type_parameters") else {
        return Vec::new();
    };
    let mut c = tps.walk();
    let all: Vec<Node<'_>> = tps.named_children(&mut c).collect();
    all.into_iter()
        .filter_map(|tp| child(tp, "name").map(|n| text(n, src)))
        .collect()
}

/// The shape of a Rust type as `ARGUMENT` and `ImplTraitArg` compare them:
/// a reference's `&` before what it refers to, `[;]` an array, `[]` a slice,
/// a primitive (`str`), else the type's last name, `#T` for one of `params`.
fn type_shape(t: Node<'_>, src: &str, params: &[&str], depth: usize) -> Option<String> {
    if depth > 4 {
        return None;
    }
    match kind_of(t) {
        "reference_type" => Some(format!(
            "&{}",
            type_shape(child(t, "type")?, src, params, depth + 1)?
        )),
        "array_type" => Some(String::from(if child(t, "length").is_some() {
            "[;]"
        } else {
            "[]"
        })),
        "primitive_type" => Some(text(t, src).to_string()),
        "type_identifier" | "generic_type" | "scoped_type_identifier" => {
            let head = if kind_of(t) == "generic_type" {
                child(t, "type")?
            } else {
                t
            };
            let name = text(head, src).rsplit("::").next()?;
            Some(if params.contains(&name) {
                "#T".into()
            } else {
                name.to_string()
            })
        }
        _ => None,
    }
}

/// A Rust method call whose receiver is a name a pattern binds (`held`: the
/// file's, read from its text when a call first needs them): the value the
/// pattern takes apart, where `rust_pattern_value` finds it.
fn rust_held_receiver<'s>(
    call: Node<'_>,
    src: &'s str,
    held: &mut Option<Vec<&'s str>>,
    chain: &mut Vec<Step>,
) {
    if chain.len() >= 2
        && held
            .get_or_insert_with(|| rust_held_names(src))
            .binary_search(&chain[0].as_str())
            .is_ok()
        && let Some(value) = rust_pattern_value(call, &chain[0], src)
    {
        chain.splice(0..1, value);
    }
}

/// A call in a `macro_rules!` template (its owner is the macro, no method)
/// on `self` or `Self` inside an `impl` the template writes (`impl SearcherT
/// for SlimSSSE3<$len> { fn find(&self, …) { self.slim128.find(…) } }`):
/// `self` is a value of the impl's type (`["SlimSSSE3", SELF_VALUE, …]`),
/// `Self` that type. A type named by a metavariable
/// (`impl $t`) names nothing the repo defines.
fn template_self(call: Node<'_>, src: &str, chain: &mut Vec<Step>) {
    let value = match chain.first().map(|c| c.as_str()) {
        Some("self") => true,
        Some("Self") => false,
        _ => return,
    };
    let mut cur = call;
    let imp = loop {
        let Some(p) = cur.parent() else { return };
        if kind_of(p) == "impl_item" {
            break p;
        }
        cur = p;
    };
    let Some(ty) = child(imp, "type") else { return };
    let mut found = Vec::new();
    Lang::Rust.type_names(ty, src, &mut found, false);
    let Some((mut into, _)) = found.into_iter().next() else {
        return;
    };
    if value {
        into.push(Step::const_new(SELF_VALUE));
    }
    chain.splice(0..1, into);
}

/// A method called on what no chain names (`(a + b).reading()`, `(if c { a }
/// else { b }).m()`, `f(x)[0].m()` in Rust): a site on an unknown receiver
/// (`["?", name]`), never proven, so that answers about a repo's method of
/// that name say they are a lower bound rather than lose it. A literal's
/// methods are the language's (`", ".join(…)`, `[1, 2].map(…)`): none.
fn unknown_receiver(
    lang: Lang,
    callee: Node<'_>,
    src: &str,
    owners: &Owners<'_>,
) -> Option<RawSite> {
    let callee = match kind_of(callee) {
        "generic_function" => child(callee, "function")?,
        _ => callee,
    };
    let (object, member) = member_fields(lang, kind_of(callee))?;
    let (object, name) = (child(callee, object)?, child(callee, member)?);
    let mut object = object;
    while kind_of(object) == "parenthesized_expression" {
        object = object.named_child(0)?;
    }
    if lang.is_literal(object) {
        return None;
    }
    let chain = vec![Step::const_new("?"), Step::from(text(name, src))];
    let owner = owners.of(callee.start_byte(), true);
    Some(raw_site(SiteKind::Call, chain, name, owner))
}

/// A Rust `….collect()` call (`call`, any receiver: `(0..n).collect()`)
/// into a type the code writes (`rust_collected_type`): a site at `collect`
/// whose chain is that type's, then `COLLECTED`.
fn rust_collect_site(call: Node<'_>, src: &str, owners: &Owners<'_>) -> Option<RawSite> {
    let mut f = child(call, "function")?;
    if kind_of(f) == "generic_function" {
        f = child(f, "function")?;
    }
    let name = child(f, "field").filter(|_| kind_of(f) == "field_expression")?;
    if text(name, src) != "collect" {
        return None;
    }
    let mut into = declared_chain(Lang::Rust, rust_collected_type(call)?, src);
    if into.first().is_none_or(|c| c == "?") {
        return None;
    }
    into.push(Step::const_new(COLLECTED));
    let owner = owners.of(call.start_byte(), true);
    Some(raw_site(SiteKind::Call, into, name, owner))
}

/// The type a Rust `….collect()` call (`call`) makes, where the code writes
/// it: the turbofish's (`collect::<SmallVec<_>>()`), the `let`'s it
/// initialises (`let v: SmallVec<_> = ….collect()`), or the function's
/// return type when the call is its body's tail or a `return`'s value.
fn rust_collected_type(call: Node<'_>) -> Option<Node<'_>> {
    let f = child(call, "function")?;
    if kind_of(f) == "generic_function" {
        return child(f, "type_arguments")?.named_child(0);
    }
    let mut at = call;
    loop {
        let p = at.parent()?;
        match kind_of(p) {
            "let_declaration" if child(p, "value").is_some_and(|v| v.id() == at.id()) => {
                return child(p, "type");
            }
            "return_expression" => break,
            // The block's value: its last item, no `;` after it.
            "block" => {
                let mut c = p.walk();
                let last = p
                    .named_children(&mut c)
                    .filter(|k| !kind_of(*k).ends_with("comment"))
                    .last()?;
                if last.id() != at.id() {
                    return None;
                }
                match p.parent().map(kind_of) {
                    Some("function_item") => break,
                    Some("unsafe_block") => at = p.parent()?,
                    _ => return None,
                }
            }
            "parenthesized_expression" => at = p,
            _ => return None,
        }
    }
    // The enclosing function's return type (a closure's is not written).
    let mut cur = at;
    while let Some(p) = cur.parent() {
        match kind_of(p) {
            "function_item" => return child(p, "return_type"),
            "closure_expression" | "async_block" => return None,
            _ => cur = p,
        }
    }
    None
}

/// A Rust call by path with one argument (`SmallVec::from(vec)`): the
/// argument's shape as a last step (`ARGUMENT`), when the code says it.
fn rust_argument(call: Node<'_>, src: &str, chain: &mut Vec<Step>) {
    if !chain.last().is_some_and(|l| l.starts_with("::")) {
        return;
    }
    let Some(args) = child(call, "arguments").filter(|a| a.named_child_count() == 1) else {
        return;
    };
    if let Some(shape) = args.named_child(0).and_then(|a| arg_shape(a, src, 0)) {
        chain.push(compact_str::format_compact!("{ARGUMENT}{shape}"));
    }
}

/// The shape of a Rust expression's type (`type_shape`), where the code says
/// it: `&x` (`&` and `x`'s), an array literal (`[;]`), a range of one
/// (`[1, 2][..]`: `[]`), a string literal (`&str`), `vec![…]` (`Vec`), or a
/// local whose `let` (the nearest before it in the blocks around it) is
/// declared with a type or initialised so. A pattern around it that binds the
/// name again (`for`, `match`, `if let`, a closure's) hides the `let`: none.
fn arg_shape(n: Node<'_>, src: &str, depth: usize) -> Option<String> {
    if depth > 4 {
        return None;
    }
    match kind_of(n) {
        "reference_expression" => Some(format!(
            "&{}",
            arg_shape(child(n, "value")?, src, depth + 1)?
        )),
        "parenthesized_expression" => arg_shape(n.named_child(0)?, src, depth + 1),
        "array_expression" => Some("[;]".into()),
        "index_expression"
            if n.named_child(1)
                .is_some_and(|i| kind_of(i) == "range_expression")
                && arg_shape(n.named_child(0)?, src, depth + 1).is_some_and(|s| s == "[;]") =>
        {
            Some("[]".into())
        }
        "string_literal" | "raw_string_literal" => Some("&str".into()),
        "macro_invocation" if child(n, "macro").is_some_and(|m| text(m, src) == "vec") => {
            Some("Vec".into())
        }
        "identifier" => {
            let bound = rust_let_of(n, text(n, src), src)?;
            match child(bound, "type") {
                Some(t) => type_shape(t, src, &[], 0),
                None => arg_shape(child(bound, "value")?, src, depth + 1),
            }
        }
        _ => None,
    }
}

/// The `let` that binds local `name` where `at` reads it: the last one before
/// it in the nearest block around it that has one, else the function's
/// parameter of that name. `None` when a pattern around `at` binds the name
/// (the `let` is hidden) or none is found.
fn rust_let_of<'t>(at: Node<'t>, name: &str, src: &str) -> Option<Node<'t>> {
    let mut cur = at;
    while let Some(p) = cur.parent() {
        match kind_of(p) {
            // A parameter's declared type (`fn f(v: Vec<u8>)`).
            "function_item" => {
                let params = child(p, "parameters")?;
                let mut c = params.walk();
                let all: Vec<Node<'t>> = params.named_children(&mut c).collect();
                return all.into_iter().find(|x| {
                    kind_of(*x) == "parameter"
                        && child(*x, "pattern").is_some_and(|pat| {
                            kind_of(pat) == "identifier" && text(pat, src) == name
                        })
                });
            }
            "closure_expression" | "macro_definition" => return None,
            "for_expression" | "match_arm" | "let_condition"
                if child(p, "pattern").is_some_and(|pat| binds(pat, name, src)) =>
            {
                return None;
            }
            "block" => {
                let mut c = p.walk();
                let before: Vec<Node<'t>> = p
                    .named_children(&mut c)
                    .take_while(|s| s.end_byte() <= at.start_byte())
                    .collect();
                let found = before.into_iter().rev().find(|s| {
                    kind_of(*s) == "let_declaration"
                        && child(*s, "pattern").is_some_and(|pat| binds(pat, name, src))
                });
                if let Some(l) = found {
                    // `let (a, vec) = …`: no type of its own.
                    return child(l, "pattern")
                        .filter(|pat| kind_of(*pat) == "identifier")
                        .map(|_| l);
                }
            }
            _ => {}
        }
        cur = p;
    }
    None
}

/// Whether Rust pattern `pat` binds `name` (an identifier in it).
fn binds(pat: Node<'_>, name: &str, src: &str) -> bool {
    if kind_of(pat) == "identifier" {
        return text(pat, src) == name;
    }
    let mut c = pat.walk();
    let all: Vec<Node<'_>> = pat.named_children(&mut c).collect();
    all.into_iter().any(|k| binds(k, name, src))
}

/// The `Param` facts of a Rust function's parameter list `params` (`decl`:
/// the function item) owned by `owner`: for a parameter whose type is a
/// closure's (`impl FnMut(&mut LookSet)`, `&dyn Fn(u8)`, `Box<dyn Fn(u8)>`, or
/// a generic `F` bound by one, in `<F: Fn(u8)>` or a `where` clause), that
/// closure's parameters' types (`"i.j"`; `self` not counted).
fn rust_param_facts(decl: Node<'_>, params: Node<'_>, src: &str, owner: u32, out: &mut Vec<Fact>) {
    // `self`, `mut self`: not `&self`, `&'a mut self` (nor `self: Box<Self>`,
    // a `parameter`).
    let receiver = params
        .named_child(0)
        .filter(|p| kind_of(*p) == "self_parameter");
    if let Some(r) = receiver.filter(|r| !text(*r, src).starts_with('&')) {
        out.push(Fact {
            kind: FactKind::SelfByValue,
            owner,
            name: Step::const_new("self"),
            chain: Vec::new().into(),
            byte: r.start_byte() as u32,
            owned: Some(true),
        });
    }
    let mut c = params.walk();
    let all: Vec<Node<'_>> = params
        .named_children(&mut c)
        .filter(|p| kind_of(*p) == "parameter")
        .collect();
    for (i, p) in all.into_iter().enumerate() {
        let Some(f) = child(p, "type").and_then(|t| rust_fn_type(decl, t, src)) else {
            continue;
        };
        let Some(inner) = child(f, "parameters") else {
            continue;
        };
        let mut c = inner.walk();
        let types: Vec<Node<'_>> = inner.named_children(&mut c).collect();
        for (j, t) in types.into_iter().enumerate() {
            let t = child(t, "type").unwrap_or(t);
            let mut found = Vec::new();
            Lang::Rust.type_names(rust_unwrapped(t, src), src, &mut found, false);
            if let Some((chain, _)) = found.into_iter().next() {
                out.push(Fact {
                    kind: FactKind::Param,
                    owner,
                    name: compact_str::format_compact!("{i}.{j}"),
                    chain: chain.into(),
                    byte: t.start_byte() as u32,
                    owned: None,
                });
            }
        }
    }
}

/// The closure type (`function_type`) a Rust parameter type `t` is: written
/// (`impl Fn(A)`, `&dyn FnMut(A)`, `Box<dyn Fn(A)>`), or a generic parameter of
/// `decl` bound by one (`<F: FnMut(A)>`, `where F: Fn(A)`).
fn rust_fn_type<'t>(decl: Node<'t>, t: Node<'t>, src: &str) -> Option<Node<'t>> {
    match kind_of(t) {
        "function_type" => Some(t),
        "abstract_type" | "dynamic_type" => rust_fn_type(decl, child(t, "trait")?, src),
        "reference_type" => rust_fn_type(decl, child(t, "type")?, src),
        "generic_type" if text(child(t, "type")?, src) == "Box" => {
            rust_fn_type(decl, child(t, "type_arguments")?.named_child(0)?, src)
        }
        "type_identifier" => {
            let name = text(t, src);
            let bound = |n: Node<'t>| {
                let mut c = n.walk();
                let all: Vec<Node<'t>> = n.named_children(&mut c).collect();
                all.into_iter().find(|b| kind_of(*b) == "function_type")
            };
            let mut found = None;
            if let Some(tps) = child(decl, "type_parameters") {
                let mut c = tps.walk();
                for tp in tps.named_children(&mut c) {
                    if child(tp, "name").is_some_and(|n| text(n, src) == name) {
                        found = found.or_else(|| child(tp, "bounds").and_then(bound));
                    }
                }
            }
            let mut c = decl.walk();
            let wheres: Vec<Node<'t>> = decl
                .named_children(&mut c)
                .filter(|n| kind_of(*n) == "where_clause")
                .collect();
            for w in wheres {
                let mut c = w.walk();
                for pred in w.named_children(&mut c) {
                    if child(pred, "left").is_some_and(|l| text(l, src) == name) {
                        found = found.or_else(|| child(pred, "bounds").and_then(bound));
                    }
                }
            }
            found
        }
        _ => None,
    }
}

/// For an untyped TS parameter (`node`: the parameter, or an arrow function
/// whose one parameter is a bare name) of a function passed as an argument
/// of a call or `new` (`operate((source, subscriber) => …)`): the callee's
/// chain, `CALLBACK`, the argument's position and the parameter's.
fn callback_of(node: Node<'_>, src: &str) -> Option<Vec<Step>> {
    let (func, j) = match kind_of(node) {
        "arrow_function" => (node, 0),
        "required_parameter" | "optional_parameter" if child(node, "type").is_none() => {
            let params = node.parent()?;
            let j = positional(params).position(|p| p.id() == node.id())?;
            (params.parent()?, j)
        }
        _ => return None,
    };
    if !matches!(kind_of(func), "arrow_function" | "function_expression") {
        return None;
    }
    let args = func.parent().filter(|a| kind_of(*a) == "arguments")?;
    let mut c = args.walk();
    let i = args
        .named_children(&mut c)
        .filter(|a| kind_of(*a) != "comment")
        .position(|a| a.id() == func.id())?;
    let call = args.parent()?;
    let mut chain = Vec::new();
    match kind_of(call) {
        "call_expression" => Lang::Ts.chain(child(call, "function")?, src, &mut chain)?,
        "new_expression" => {
            chain.push(Step::const_new("#new"));
            Lang::Ts.chain(child(call, "constructor")?, src, &mut chain)?
        }
        _ => return None,
    };
    callback_chain(chain, i, j)
}

/// A callee's chain made a callback parameter's: `CALLBACK`, the argument's
/// position `i`, the parameter's `j`.
fn callback_chain(mut chain: Vec<Step>, i: usize, j: usize) -> Option<Vec<Step>> {
    if chain.len() > MAX_CHAIN {
        return None;
    }
    chain.push(Step::const_new(CALLBACK));
    chain.push(Step::from(i.to_string()));
    chain.push(Step::from(j.to_string()));
    Some(chain)
}

/// Every name a Rust `Some(name)` / `Ok(name)` pattern could bind in `src`,
/// sorted: read from the text, with `ref`, `mut`, whitespace and comments
/// allowed between the tokens, so it holds all that `rust_pattern_value`
/// can find (and more). Only a call whose head is one of them climbs the
/// tree for its binding: climbing for every call was ~2.5% of a cold index.
fn rust_held_names(src: &str) -> Vec<&str> {
    rust_variant_names(src, &["Some", "Ok"])
}

/// Every name a pattern of one of the `variants` could bind in `src`
/// (`Err(e)`: `e`), as `rust_held_names` reads them, sorted.
fn rust_variant_names<'s>(src: &'s str, variants: &[&str]) -> Vec<&'s str> {
    let mut names = Vec::new();
    for &word in variants {
        for (at, _) in src.match_indices(word) {
            let mut rest = skip_trivia(&src[at + word.len()..]);
            let Some(after) = rest.strip_prefix('(') else {
                continue;
            };
            rest = skip_trivia(after);
            loop {
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '#'))
                    .unwrap_or(rest.len());
                match &rest[..end] {
                    "" => break,
                    "ref" | "mut" => rest = skip_trivia(&rest[end..]),
                    name => {
                        names.push(name);
                        break;
                    }
                }
            }
        }
    }
    names.sort_unstable();
    names.dedup();
    names
}

/// `s` without the whitespace and Rust comments (nested block comments
/// included) it starts with.
fn skip_trivia(mut s: &str) -> &str {
    loop {
        s = s.trim_start();
        if let Some(line) = s.strip_prefix("//") {
            s = line.find('\n').map_or("", |e| &line[e..]);
        } else if s.starts_with("/*") {
            let mut depth = 0usize;
            let mut i = 0;
            let b = s.as_bytes();
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            s = &s[i.min(s.len())..];
        } else {
            return s;
        }
    }
}

/// The value a Rust name at `site` holds when an enclosing `if let`, `while
/// let` or match arm binds it by `Some(name)` / `Ok(name)` (`ref`, `mut` too):
/// that value's chain (its `Option`/`Result` is taken off where types are
/// written). A site in one branch of `if let Some(e) = a {…} else if let
/// Some(e) = b {…}` so names the `e` of its branch; a name bound several times
/// is of no one type otherwise (`Resolver::word_type`).
fn rust_pattern_value(site: Node<'_>, name: &str, src: &str) -> Option<Vec<Step>> {
    let binds = |pattern: Node<'_>| {
        kind_of(pattern) == "tuple_struct_pattern"
            && child(pattern, "type").is_some_and(|k| matches!(text(k, src), "Some" | "Ok"))
            && pattern.named_child(1).is_some_and(|b| {
                let b = match kind_of(b) {
                    "ref_pattern" | "mut_pattern" => {
                        b.named_child((b.named_child_count() as u32).saturating_sub(1))
                    }
                    _ => Some(b),
                };
                b.is_some_and(|b| kind_of(b) == "identifier" && text(b, src) == name)
            })
            && pattern.named_child_count() == 2
    };
    let mut at = site;
    for _ in 0..64 {
        let up = at.parent()?;
        let value = match kind_of(up) {
            // A new scope: what is bound outside is not the closure's or
            // the item's business here.
            "closure_expression" | "function_item" => return None,
            // In the block the binding holds for, not in the condition or
            // an `else`.
            "if_expression" | "while_expression"
                if child(up, "consequence")
                    .or_else(|| child(up, "body"))
                    .is_some_and(|b| b.id() == at.id()) =>
            {
                child(up, "condition")
                    .filter(|c| kind_of(*c) == "let_condition")
                    .filter(|c| child(*c, "pattern").is_some_and(binds))
                    .and_then(|c| child(c, "value"))
            }
            "match_arm" if child(up, "pattern").is_some_and(|p| p.id() != at.id()) => {
                let pattern = child(up, "pattern").and_then(|p| p.named_child(0));
                let scrutinee = up
                    .parent()
                    .and_then(|b| b.parent())
                    .and_then(|m| child(m, "value"));
                pattern.filter(|p| binds(*p)).and(scrutinee)
            }
            _ => None,
        };
        if let Some(v) = value {
            let mut chain = Vec::new();
            Lang::Rust.chain(v, src, &mut chain)?;
            return (!chain.iter().any(|c| c == "?")).then_some(chain);
        }
        at = up;
    }
    None
}

/// For `*self` / `**self` (`n`) in a method of an impl of a trait for a
/// pointer to a type parameter (`impl<A: Automaton + ?Sized> Automaton for
/// &A`, `Box<A>`, `Arc<A>`, `Rc<A>`): its trait's type node.
fn rust_deref_of_self<'t>(n: Node<'t>, src: &str) -> Option<Node<'t>> {
    let mut operand = n;
    while matches!(
        kind_of(operand),
        "unary_expression" | "parenthesized_expression"
    ) {
        operand = operand.named_child(0)?;
    }
    if kind_of(operand) != "self" {
        return None;
    }
    let mut imp = n.parent();
    while let Some(i) = imp {
        if kind_of(i) == "impl_item" {
            break;
        }
        if kind_of(i) == "closure_expression" {
            return None;
        }
        imp = i.parent();
    }
    let imp = imp?;
    let for_type = child(imp, "type")?;
    let pointer = match kind_of(for_type) {
        "reference_type" => true,
        "generic_type" => {
            child(for_type, "type").is_some_and(|t| matches!(text(t, src), "Box" | "Arc" | "Rc"))
        }
        _ => false,
    };
    let t = child(imp, "trait")?;
    pointer.then_some(t)
}

/// For an untyped parameter `name` of a Rust closure (`params`: its
/// parameter list) passed as an argument (`b.set_look_have(|have| …)`): the
/// callee's chain, `CALLBACK`, the argument's position and the parameter's.
fn rust_callback_of(params: Node<'_>, name: Node<'_>, src: &str) -> Option<Vec<Step>> {
    // Every parameter counts, `_` too (an unnamed node).
    let mut c = params.walk();
    let j = params
        .children(&mut c)
        .filter(|p| !matches!(kind_of(*p), "|" | ","))
        .position(|p| p.id() == name.id())?;
    let closure = params
        .parent()
        .filter(|n| kind_of(*n) == "closure_expression")?;
    let args = closure.parent().filter(|a| kind_of(*a) == "arguments")?;
    let mut c = args.walk();
    let i = args
        .named_children(&mut c)
        .filter(|a| {
            !matches!(
                kind_of(*a),
                "line_comment" | "block_comment" | "attribute_item"
            )
        })
        .position(|a| a.id() == closure.id())?;
    let call = args.parent().filter(|n| kind_of(*n) == "call_expression")?;
    let mut chain = Vec::new();
    Lang::Rust.chain(child(call, "function")?, src, &mut chain)?;
    callback_chain(chain, i, j)
}

/// What iterating a value of a Python container annotation gives, when it is
/// one type (`list[Parameter]`, `t.Iterator[Command]`, `Sequence["Option"]`):
/// that type's chain.
fn python_element(n: Node<'_>, src: &str) -> Option<Vec<Step>> {
    const CONTAINERS: [&str; 21] = [
        "list",
        "List",
        "set",
        "Set",
        "frozenset",
        "FrozenSet",
        "AbstractSet",
        "MutableSet",
        "Sequence",
        "MutableSequence",
        "Collection",
        "Iterable",
        "Iterator",
        "Generator",
        "AsyncIterable",
        "AsyncIterator",
        "AsyncGenerator",
        "Reversible",
        "Deque",
        "deque",
        "KeysView",
    ];
    let n = if kind_of(n) == "type" {
        n.named_child(0)?
    } else {
        n
    };
    // `list[P]` parses as a generic type, `a.Sequence[P]` as a subscript.
    let (container, first) = match kind_of(n) {
        "generic_type" => (n.named_child(0)?, n.named_child(1)?.named_child(0)?),
        "subscript" => {
            let mut c = n.walk();
            let first = n.children_by_field_name("subscript", &mut c).next()?;
            (child(n, "value")?, first)
        }
        _ => return None,
    };
    let container = text(container, src);
    let last = container.rsplit('.').next().unwrap_or(container);
    if !CONTAINERS.contains(&last) {
        return None;
    }
    let mut found = Vec::new();
    Lang::Python.type_names(first, src, &mut found, false);
    found.into_iter().next().map(|(chain, _)| chain)
}

/// The locals, parameters and Go receivers of each owner among the facts
/// found so far: a value site naming one names no symbol
/// (`drop_shadowed_values`).
struct Locals(std::collections::HashMap<Step, Vec<u32>>);

impl Locals {
    fn of(facts: &[Fact]) -> Locals {
        let mut by_name: std::collections::HashMap<Step, Vec<u32>> = Default::default();
        for f in facts {
            if matches!(f.kind, FactKind::Local | FactKind::Receiver) {
                by_name.entry(f.name.clone()).or_default().push(f.owner);
            }
        }
        Locals(by_name)
    }

    fn has(&self, owner: u32, name: &str) -> bool {
        !name.starts_with("::")
            && !is_self_word(name)
            && self
                .0
                .get(name)
                .is_some_and(|owners| owners.contains(&owner))
    }
}

/// `self.command = command` with `command: Command` a parameter of method
/// `owner`: the field has the parameter's type (the class the field belongs to
/// does not see the method's locals).
fn parameter_type(facts: &[Fact], owner: u32, chain: &[Step]) -> Option<Vec<Step>> {
    let [one] = chain else {
        return None;
    };
    facts
        .iter()
        .rev()
        .find(|f| {
            f.kind == FactKind::Local
                && f.owner == owner
                && f.name == one.as_str()
                && f.chain.as_slice() != std::slice::from_ref(one)
        })
        .map(|f| f.chain.to_vec())
}

/// Drops the value sites that name a local, parameter or Go receiver of their
/// owner (`f(x)`, and the `x` of `x.m()`): it shadows every other binding, so
/// they name no symbol (`resolve::calls`), and in Go they are most value
/// sites. Kept out, they cost neither the state nor a lookup.
/// Drops too a value site where a type site names the same token.
pub(super) fn drop_shadowed_values(out: &mut FileSites) {
    // A name a type site states already (`toBeInstanceOf(C)`, an argument
    // too): one use, of that kind. Most files of Rust and Go have no value
    // sites: nothing to do there.
    if !out.sites.iter().any(|s| s.kind == SiteKind::Value) {
        return;
    }
    let mut typed: Vec<(u32, u32)> = (out.sites.iter())
        .filter(|s| s.kind == SiteKind::Type)
        .map(|s| (s.line, s.col))
        .collect();
    typed.sort_unstable();
    let locals = Locals::of(&out.facts);
    out.sites.retain(|s| match (s.kind, s.chain.as_slice()) {
        (SiteKind::Value, [name]) => {
            !locals.has(s.owner, name) && typed.binary_search(&(s.line, s.col)).is_err()
        }
        _ => true,
    });
}

/// The body of the closure a Rust `map`/`and_then` call is given, when it is
/// an expression on the closure's one parameter (`x.and_then(|b| b.build())`:
/// `b.build()`), else `None`. What the call gives is that body on the value
/// `x` holds (`model::sites::THEN`).
fn rust_combinator_body<'t>(call: Node<'t>, src: &str) -> Option<Node<'t>> {
    let f = child(call, "function")?;
    if kind_of(f) != "field_expression"
        || !matches!(text(child(f, "field")?, src), "map" | "and_then")
    {
        return None;
    }
    let args = child(call, "arguments")?;
    let closure = args.named_child(0)?;
    if args.named_child_count() != 1 || kind_of(closure) != "closure_expression" {
        return None;
    }
    let params = child(closure, "parameters")?;
    let param = params.named_child(0)?;
    let param = match kind_of(param) {
        "parameter" => child(param, "pattern")?,
        _ => param,
    };
    if params.named_child_count() != 1 || kind_of(param) != "identifier" {
        return None;
    }
    let mut body = child(closure, "body")?;
    // `|b| { b.build() }`: the block's last expression, alone.
    if kind_of(body) == "block" {
        if body.named_child_count() != 1 {
            return None;
        }
        body = body.named_child(0)?;
    }
    let mut head = body;
    while let Some(inner) = match kind_of(head) {
        "call_expression" => child(head, "function"),
        "field_expression" => child(head, "value"),
        "try_expression" | "reference_expression" | "parenthesized_expression" => {
            head.named_child(0)
        }
        _ => None,
    } {
        head = inner;
    }
    (kind_of(head) == "identifier" && text(head, src) == text(param, src)).then_some(body)
}

/// The argument of a call of a std function that returns its argument's
/// type (`ptr::read(&self.data)` is a copy of `self.data`; `mem::take`,
/// `mem::replace`, `Box::new`, `Rc::new`, `Arc::new`, `ManuallyDrop`'s), else
/// `None`. Written with its module or type (`ptr::read`, `std::mem::take`):
/// a bare `read(…)` may be anything.
fn rust_passed_through<'t>(call: Node<'t>, src: &str) -> Option<Node<'t>> {
    const IDENTITIES: [&str; 11] = [
        "ptr::read",
        "ptr::read_unaligned",
        "ptr::read_volatile",
        "mem::replace",
        "mem::take",
        "Box::new",
        "Rc::new",
        "Arc::new",
        "ManuallyDrop::new",
        "ManuallyDrop::into_inner",
        "ManuallyDrop::take",
    ];
    let f = child(call, "function")?;
    if kind_of(f) != "scoped_identifier" {
        return None;
    }
    let path = text(f, src);
    let path = ["std::", "core::", "alloc::", "::std::", "::core::"]
        .iter()
        .find_map(|p| path.strip_prefix(p))
        .unwrap_or(path);
    if !IDENTITIES.contains(&path) {
        return None;
    }
    child(call, "arguments")?.named_child(0)
}

/// What iterating a value of a Rust type gives, when it is one type: the
/// element of a sequence or set (`Vec<State>`, `&[State]`, `[State; 4]`,
/// `VecDeque<State>`, `BTreeSet<State>`), references taken off.
fn rust_element(mut n: Node<'_>, src: &str) -> Option<Vec<Step>> {
    const SEQUENCES: [&str; 7] = [
        "Vec",
        "VecDeque",
        "HashSet",
        "BTreeSet",
        "BinaryHeap",
        "SmallVec",
        "LinkedList",
    ];
    while kind_of(n) == "reference_type" {
        n = child(n, "type")?;
    }
    let element = match kind_of(n) {
        "array_type" => child(n, "element")?,
        "generic_type" => {
            let name = text(child(n, "type")?, src);
            if !SEQUENCES.contains(&name.rsplit("::").next().unwrap_or(name)) {
                return None;
            }
            child(n, "type_arguments")?.named_child(0)?
        }
        _ => return None,
    };
    if kind_of(element) == "primitive_type" {
        return Some(vec![Step::from(text(element, src))]);
    }
    let mut found = Vec::new();
    Lang::Rust.type_names(element, src, &mut found, false);
    found.into_iter().next().map(|(chain, _)| chain)
}

/// A Rust type with the wrappers whose methods a value is used through
/// taken off: `Result<T, E>` and `Option<T>` (used after `?` or `.unwrap()`,
/// which resolution passes through), `Box<T>`, `Rc<T>`, `Arc<T>` (deref),
/// `RefCell<T>` (`.borrow()`, `.borrow_mut()`, passed through too) → `T`.
fn rust_unwrapped<'t>(mut n: Node<'t>, src: &str) -> Node<'t> {
    for _ in 0..4 {
        if kind_of(n) != "generic_type" {
            break;
        }
        let wrapper = child(n, "type").is_some_and(|t| {
            let name = text(t, src);
            matches!(
                name.rsplit("::").next().unwrap_or(name),
                "Result" | "Option" | "Box" | "Rc" | "Arc" | "RefCell"
            )
        });
        let first = child(n, "type_arguments").and_then(|a| a.named_child(0));
        match first {
            Some(arg) if wrapper => n = arg,
            _ => break,
        }
    }
    n
}

/// Whether Rust expression `n` is a method call's receiver, in parentheses
/// (`(&v).into_iter()`).
fn is_receiver(n: Node<'_>) -> bool {
    let mut at = n;
    while let Some(p) = at.parent() {
        match kind_of(p) {
            "parenthesized_expression" => at = p,
            "field_expression" => return child(p, "value").is_some_and(|v| v.id() == at.id()),
            _ => return false,
        }
    }
    false
}

/// A grammar's field ids by name and kind names by id, looked up once:
/// `Node::child_by_field_name` scans the grammar's field names on every call
/// (a quarter of placing a file's sites), and `Node::kind` measures and checks
/// the kind's C string on every call.
struct Grammar {
    language: tree_sitter::Language,
    fields: crate::resolve::FxMap<String, u16>,
    kinds: Vec<String>,
}

fn grammar(n: Node<'_>) -> Option<&'static Grammar> {
    static GRAMMARS: std::sync::OnceLock<Vec<Grammar>> = std::sync::OnceLock::new();
    let grammars = GRAMMARS.get_or_init(|| {
        let mut all: Vec<Grammar> = Vec::new();
        for language in super::LANGUAGES {
            let (language, _) = super::grammar_of(language);
            if all.iter().any(|g| g.language == language) {
                continue;
            }
            let fields = (1..=language.field_count() as u16)
                .filter_map(|id| Some((language.field_name_for_id(id)?.to_string(), id)))
                .collect();
            let kinds = (0..language.node_kind_count() as u16)
                .map(|id| {
                    language
                        .node_kind_for_id(id)
                        .unwrap_or_default()
                        .to_string()
                })
                .collect();
            all.push(Grammar {
                language,
                fields,
                kinds,
            });
        }
        all
    });
    let language = n.language();
    grammars.iter().find(|g| g.language == *language)
}

/// `n`'s child in field `name`.
fn child<'t>(n: Node<'t>, name: &str) -> Option<Node<'t>> {
    match grammar(n) {
        Some(g) => n.child_by_field_id(*g.fields.get(name)?),
        None => n.child_by_field_name(name),
    }
}

/// `n`'s kind, as `Node::kind` names it.
fn kind_of<'t>(n: Node<'t>) -> &'t str {
    match grammar(n).and_then(|g| g.kinds.get(usize::from(n.kind_id()))) {
        Some(k) => k,
        None => n.kind(),
    }
}

/// The leftmost name of an expression chain.
fn head(mut n: Node<'_>) -> Option<Node<'_>> {
    for _ in 0..=MAX_CHAIN {
        // `v.(T).m()`: the chain starts at `T`, not at `v`.
        if kind_of(n) == "type_assertion_expression" {
            return None;
        }
        if matches!(
            kind_of(n),
            "identifier" | "type_identifier" | "package_identifier"
        ) {
            return Some(n);
        }
        n = ["function", "object", "operand", "value", "constructor"]
            .iter()
            .find_map(|f| child(n, f))?;
    }
    None
}

fn is_marker(s: &str) -> bool {
    matches!(s, "()" | "{}" | "?" | "#new")
}

/// Receivers that name the enclosing object.
pub fn is_self_word(s: &str) -> bool {
    matches!(s, "self" | "this" | "cls" | "super" | "Self")
}

/// Where sites belong: the file's symbols (in source order, outer before
/// inner) and, for each, the nearest earlier symbol whose range holds its
/// start, so the innermost symbol around a byte is found by a binary search
/// and a short climb instead of a scan of every symbol per site.
struct Owners<'s> {
    symbols: &'s [Symbol],
    enclosing: Vec<Option<u32>>,
}

impl<'s> Owners<'s> {
    fn new(symbols: &'s [Symbol]) -> Owners<'s> {
        let mut enclosing: Vec<Option<u32>> = Vec::with_capacity(symbols.len());
        for (i, s) in symbols.iter().enumerate() {
            let mut c = i.checked_sub(1).map(|c| c as u32);
            while let Some(j) = c {
                if contains(&symbols[j as usize], s.byte_start) {
                    break;
                }
                c = enclosing[j as usize];
            }
            enclosing.push(c);
        }
        Owners { symbols, enclosing }
    }

    /// The innermost symbol whose range holds `byte`: the last symbol that
    /// starts at or before it, or the nearest one around that which holds it
    /// (any symbol holding `byte` holds the start of every later one up to it).
    fn innermost(&self, byte: u32) -> Option<usize> {
        let after = self.symbols.partition_point(|s| s.byte_start <= byte);
        let mut c = after.checked_sub(1).map(|c| c as u32);
        while let Some(j) = c {
            if contains(&self.symbols[j as usize], byte) {
                return Some(j as usize);
            }
            c = self.enclosing[j as usize];
        }
        None
    }

    /// Whether `owner` is a `macro_rules!` (the site is in its template).
    fn is_macro(&self, owner: u32) -> bool {
        self.symbols
            .get(owner as usize)
            .is_some_and(|s| s.kind == SymbolKind::Macro)
    }

    /// The symbol a site at `byte` belongs to: the innermost fn/method around
    /// it; else (or with `callable` false, at once) the innermost symbol around
    /// it that is type-like (struct, class, interface, trait, impl, enum); else
    /// the file.
    /// The symbol a type named in a macro's tokens at `byte` belongs to: the
    /// `macro_rules!` around it, else as `of`.
    fn of_mention(&self, byte: usize) -> u32 {
        match self.innermost(byte as u32) {
            Some(i) if self.symbols[i].kind == SymbolKind::Macro => i as u32,
            _ => self.of(byte, true),
        }
    }

    fn of(&self, byte: usize, callable: bool) -> u32 {
        let symbols = self.symbols;
        let mut cur = self.innermost(byte as u32);
        let mut first_type = None;
        let mut guard = 0;
        while let Some(i) = cur {
            let k = symbols[i].kind;
            // A `macro_rules!` calls what its templates call (`macro_templates_only`).
            if k == SymbolKind::Macro {
                return i as u32;
            }
            if callable && k.is_callable() {
                return i as u32;
            }
            if first_type.is_none()
                && (k.holds_methods()
                    || matches!(k, SymbolKind::Struct | SymbolKind::Enum | SymbolKind::Type))
            {
                first_type = Some(i);
                if !callable {
                    break;
                }
            }
            if !callable && k.is_callable() {
                return i as u32;
            }
            cur = symbols[i].parent;
            guard += 1;
            if guard > 64 {
                break;
            }
        }
        first_type.map_or(IN_FILE, |i| i as u32)
    }
}

/// Drops the locals macro arguments bind (the facts from `from` on) whose
/// owner binds or calls the name outside them too: a closure's `|v|` in an
/// `assert!` must not retype the function's own `v`, nor make a call of the
/// function `tool(…)` a call of a local (locals go by owner, not by scope).
pub(super) fn drop_argument_shadows(out: &mut FileSites, from: usize) {
    let FileSites { sites, facts } = out;
    if facts.len() == from {
        return;
    }
    let called = called_by_name(sites);
    let outside: std::collections::HashSet<(u32, &str)> = facts[..from]
        .iter()
        .filter(|f| f.kind == FactKind::Local)
        .map(|f| (f.owner, f.name.as_str()))
        .chain(called)
        .collect();
    let shadows: Vec<bool> = facts[from..]
        .iter()
        .map(|f| outside.contains(&(f.owner, f.name.as_str())))
        .collect();
    let mut at = 0;
    facts.retain(|_| {
        let keep = at < from || !shadows[at - from];
        at += 1;
        keep
    });
}

/// A macro of the standard library (`vec!`, `std::println!`), or a chain no
/// repo macro can be (`a::b::m!`): no site.
fn is_std_macro(chain: &[Step]) -> bool {
    match chain {
        [one] => crate::resolve::is_std_macro(one),
        [head, _] => matches!(head.as_str(), "std" | "core" | "alloc"),
        _ => true,
    }
}

fn contains(s: &Symbol, byte: u32) -> bool {
    s.byte_start <= byte && byte < s.byte_end
}

/// Per-language node kinds.
#[derive(Clone, Copy)]
enum Lang {
    Rust,
    Python,
    Ts,
    Go,
}

impl Lang {
    fn of(language: Language) -> Lang {
        match language {
            Language::Rust => Lang::Rust,
            Language::Python => Lang::Python,
            Language::TypeScript | Language::Tsx | Language::JavaScript => Lang::Ts,
            Language::Go => Lang::Go,
        }
    }

    fn is_type_node(self, n: Node<'_>) -> bool {
        let k = kind_of(n);
        match self {
            Lang::Rust => {
                k.ends_with("_type") || k == "type_identifier" || k == "scoped_type_identifier"
            }
            Lang::Python => k == "type",
            Lang::Ts => {
                k.ends_with("_type")
                    || k == "type_identifier"
                    || k == "nested_type_identifier"
                    || k == "predefined_type"
            }
            // A Go result list `(*T, error)` names the first value's type.
            Lang::Go => {
                k.ends_with("_type")
                    || k == "type_identifier"
                    || k == "qualified_type"
                    || k == "parameter_list"
            }
        }
    }

    /// Whether value `n` is a literal or a closure: its type is the
    /// language's own.
    fn is_literal(self, n: Node<'_>) -> bool {
        let k = kind_of(n);
        match self {
            Lang::Python => matches!(
                k,
                "list"
                    | "dictionary"
                    | "set"
                    | "tuple"
                    | "string"
                    | "concatenated_string"
                    | "integer"
                    | "float"
                    | "true"
                    | "false"
                    | "none"
                    | "list_comprehension"
                    | "dictionary_comprehension"
                    | "set_comprehension"
                    | "lambda"
            ),
            Lang::Ts => matches!(
                k,
                "array"
                    | "object"
                    | "string"
                    | "template_string"
                    | "number"
                    | "true"
                    | "false"
                    | "null"
                    | "regex"
                    | "arrow_function"
                    | "function_expression"
            ),
            Lang::Rust => matches!(
                k,
                "array_expression"
                    | "string_literal"
                    | "raw_string_literal"
                    | "integer_literal"
                    | "float_literal"
                    | "boolean_literal"
                    | "char_literal"
                    | "closure_expression"
                    | "tuple_expression"
                    | "macro_invocation"
            ),
            Lang::Go => matches!(
                k,
                "interpreted_string_literal"
                    | "raw_string_literal"
                    | "int_literal"
                    | "float_literal"
                    | "rune_literal"
                    | "func_literal"
                    | "composite_literal"
                    | "true"
                    | "false"
            ),
        }
    }

    /// Appends the chain of expression `n` to `out`; the node of its last
    /// name (the site's position), or `None` when it has no name at all.
    fn chain<'t>(self, n: Node<'t>, src: &str, out: &mut Vec<Step>) -> Option<Node<'t>> {
        self.chain_in(n, src, out, 0)
    }

    /// `chain`, `depth` nodes down: a receiver is walked before its name is
    /// appended, so `out` stays short down a long chain (`g().h().h()…`, a
    /// generated file's thousands), and the depth bounds the stack.
    fn chain_in<'t>(
        self,
        n: Node<'t>,
        src: &str,
        out: &mut Vec<Step>,
        depth: usize,
    ) -> Option<Node<'t>> {
        if out.len() > MAX_CHAIN || depth > MAX_CHAIN_DEPTH {
            return None;
        }
        let k = kind_of(n);
        let field = |f: &'static str| child(n, f);
        let name = |out: &mut Vec<Step>, s: &str| out.push(Step::from(s));
        let down = |m: Node<'t>, out: &mut Vec<Step>| self.chain_in(m, src, out, depth + 1);
        match (self, k) {
            (
                _,
                "identifier"
                | "type_identifier"
                | "field_identifier"
                | "property_identifier"
                | "package_identifier"
                | "shorthand_property_identifier",
            ) => {
                name(out, text(n, src));
                Some(n)
            }
            (_, "self" | "this" | "super" | "crate") => {
                name(out, k);
                Some(n)
            }
            (Lang::Rust, "scoped_identifier" | "scoped_type_identifier") => {
                let at = out.len();
                if let Some(p) = field("path") {
                    down(p, out)?;
                }
                let last = field("name")?;
                out.push(compact_str::format_compact!("::{}", text(last, src)));
                // `<T as Trait>::f` and other qualified paths start with "?".
                if out.len() == at + 1 && field("path").is_some() {
                    return None;
                }
                Some(last)
            }
            (Lang::Rust, "generic_function") => down(field("function")?, out),
            (Lang::Rust | Lang::Go | Lang::Ts, "generic_type") => {
                down(field("type").or_else(|| n.named_child(0))?, out)
            }
            // `a.b` in each grammar: the object's chain, then the member's name.
            _ if member_fields(self, k).is_some() => {
                let (object, member) = member_fields(self, k)?;
                down(field(object)?, out)?;
                let f = field(member)?;
                name(out, text(f, src));
                Some(f)
            }
            (Lang::Rust, "call_expression" | "unsafe_block" | "block") => {
                self.rust_value(n, src, out, depth)
            }
            (_, "call_expression" | "call") => {
                let t = down(field("function")?, out)?;
                out.push("()".into());
                Some(t)
            }
            (Lang::Ts, "new_expression") => {
                out.push("#new".into());
                let t = down(field("constructor")?, out)?;
                out.push("()".into());
                Some(t)
            }
            // Go `[]T{…}`, `map[K]T{…}`: its element's type (`go_element`);
            // `[]struct{ … }{…}`: a struct of no name (`SHAPE`).
            (Lang::Rust, "struct_expression") | (Lang::Go, "composite_literal") => {
                // Go's names its type `type`, Rust's `name`.
                let ty = go_element(field("type").or_else(|| field("name"))?);
                let t = if kind_of(ty) == "struct_type" {
                    out.push(SHAPE.into());
                    ty
                } else {
                    down(ty, out)?
                };
                out.push("{}".into());
                Some(t)
            }
            // Wrappers that keep the value's type.
            (
                Lang::Rust,
                "reference_expression" | "try_expression" | "parenthesized_expression",
            )
            | (
                Lang::Ts,
                "non_null_expression"
                | "parenthesized_expression"
                | "await_expression"
                | "as_expression",
            )
            | (Lang::Python, "parenthesized_expression" | "await")
            | (Lang::Go, "parenthesized_expression") => {
                let t = down(field("value").or_else(|| n.named_child(0))?, out)?;
                // `(&v).into_iter()`: a receiver written as a reference.
                if k == "reference_expression" && is_receiver(n) {
                    out.push(BORROWED.into());
                }
                Some(t)
            }
            (Lang::Rust, "await_expression") => down(n.named_child(0)?, out),
            (Lang::Rust, "unary_expression" | "index_expression") => self.rust_step(n, src, out),
            // `fns[i]` and `f[*T]` (a generic function instantiated): what
            // is indexed; `v.(T)`: a value of type `T`, written like `T{}`.
            (Lang::Go, "index_expression") => down(field("operand")?, out),
            (Lang::Go, "type_assertion_expression") => {
                let t = down(field("type")?, out)?;
                out.push("{}".into());
                Some(t)
            }
            (Lang::Go, "unary_expression")
                if field("operator").is_some_and(|o| text(o, src) == "&") =>
            {
                down(field("operand")?, out)
            }
            (Lang::Go, "pointer_type") | (Lang::Rust, "reference_type") => {
                down(field("type").or_else(|| n.named_child(0))?, out)
            }
            _ => {
                out.push("?".into());
                None
            }
        }
    }

    /// A Rust call's or block's value: a std identity's argument
    /// (`ptr::read(&self.data)`, `mem::take(&mut x)`, `Box::new(v)`), what a
    /// `map`/`and_then` closure makes of the value held (`THEN`), an `unsafe`
    /// block's or a block's last expression (one that ends in `;` is no
    /// value); else the call's result.
    fn rust_value<'t>(
        self,
        n: Node<'t>,
        src: &str,
        out: &mut Vec<Step>,
        depth: usize,
    ) -> Option<Node<'t>> {
        let down = |m: Node<'t>, out: &mut Vec<Step>| self.chain_in(m, src, out, depth + 1);
        match kind_of(n) {
            "unsafe_block" => return down(n.named_child(0)?, out),
            "block" => {
                let count = u32::try_from(n.named_child_count()).ok()?;
                let last = n.named_child(count.checked_sub(1)?)?;
                let k = kind_of(last);
                if k.ends_with("_statement") || k.ends_with("_declaration") || k.ends_with("_item")
                {
                    out.push("?".into());
                    return None;
                }
                return down(last, out);
            }
            _ => {}
        }
        if let Some(arg) = rust_passed_through(n, src) {
            return down(arg, out);
        }
        let f = child(n, "function")?;
        if let Some(body) = rust_combinator_body(n, src) {
            let mut closure = Vec::new();
            let token = down(body, &mut closure)?;
            down(child(f, "value")?, out)?;
            out.push(Step::from(text(child(f, "field")?, src)));
            out.push(Step::const_new(THEN));
            out.extend(closure.into_iter().skip(1));
            return Some(token);
        }
        let t = down(f, out)?;
        out.push("()".into());
        Some(t)
    }

    /// Rust steps of a chain: `(**self)` in a trait impl for a pointer, and
    /// `xs[i]` (`chain`).
    fn rust_step<'t>(self, n: Node<'t>, src: &str, out: &mut Vec<Step>) -> Option<Node<'t>> {
        match kind_of(n) {
            // `(**self).m()` in `impl<A: Trait> Trait for &A` (or `Box<A>`,
            // `Arc<A>`, `Rc<A>`): the pointee, an `A: Trait`, written as a
            // value of the trait (`Trait{}`), so `m` is a dispatch to it.
            "unary_expression" if text(n, src).starts_with('*') => {
                let Some(t) = rust_deref_of_self(n, src) else {
                    out.push("?".into());
                    return None;
                };
                let token = self.chain(t, src, out)?;
                out.push("{}".into());
                Some(token)
            }
            // `xs[i]`: an element of `xs`, as a loop over it gives (`#iter`);
            // `xs[a..b]` is a slice of it, of no element type.
            "index_expression" => {
                let (value, index) = (n.named_child(0)?, n.named_child(1)?);
                if kind_of(index) == "range_expression" {
                    out.push("?".into());
                    return None;
                }
                let t = self.chain(value, src, out)?;
                out.push(ITERATES.into());
                Some(t)
            }
            _ => {
                out.push("?".into());
                None
            }
        }
    }

    /// The named types written in type node `n`, each as a chain with its
    /// name token: `&dyn Shape` → `Shape`, `Vec<Circle>` → `Vec`, `Circle`,
    /// `a::b::C` → `a`, `::b`, `::C`. With `all`, type arguments too.
    fn type_names<'t>(
        self,
        n: Node<'t>,
        src: &str,
        found: &mut Vec<(Vec<Step>, Node<'t>)>,
        all: bool,
    ) {
        if found.len() > 32 {
            return;
        }
        let k = kind_of(n);
        match (self, k) {
            // `Iterator<Item = T>`: `T` (`Item` is the trait's).
            (Lang::Rust, "type_binding") => {
                if let Some(t) = child(n, "type") {
                    self.type_names(t, src, found, all);
                }
            }
            // `<T as Trait>`: both.
            (Lang::Rust, "qualified_type") => {
                for f in ["type", "alias"] {
                    if let Some(t) = child(n, f) {
                        self.type_names(t, src, found, all);
                    }
                }
            }
            (
                _,
                "type_identifier"
                | "scoped_type_identifier"
                | "nested_type_identifier"
                | "qualified_type"
                | "identifier"
                | "attribute"
                | "member_expression"
                | "scoped_identifier",
            ) => {
                // Python annotations are expressions: `a.B` is a type named by
                // path; so is TS `x instanceof ns.B`.
                let mut chain = Vec::new();
                if let Some(token) = self.chain(n, src, &mut chain)
                    && !chain.iter().any(|c| is_marker(c))
                {
                    found.push((chain, token));
                }
            }
            (Lang::Python, "string") => {
                // A forward reference `"Bar"`: only a plain dotted name.
                let inner = text(n, src).trim_matches(|c| c == '"' || c == '\'');
                if !inner.is_empty()
                    && inner.split('.').all(|p| {
                        !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_')
                    })
                {
                    found.push((inner.split('.').map(Step::from).collect(), n));
                }
            }
            // One result of a Go result list: its type, not its name.
            (Lang::Go, "parameter_declaration") => {
                if let Some(t) = child(n, "type") {
                    self.type_names(t, src, found, all);
                }
            }
            (_, "generic_type") => {
                if let Some(t) = child(n, "type").or_else(|| n.named_child(0)) {
                    self.type_names(t, src, found, all);
                }
                if all {
                    let args = child(n, "type_arguments").or_else(|| n.named_child(1));
                    if let Some(args) = args {
                        let mut c = args.walk();
                        for a in args.named_children(&mut c) {
                            self.type_names(a, src, found, all);
                        }
                    }
                }
            }
            (Lang::Python, "subscript") => {
                if let Some(v) = child(n, "value") {
                    self.type_names(v, src, found, all);
                }
                if all {
                    let mut c = n.walk();
                    for a in n.children_by_field_name("subscript", &mut c) {
                        self.type_names(a, src, found, all);
                    }
                }
            }
            (_, "primitive_type" | "predefined_type" | "literal_type" | "none" | "integer") => {}
            (Lang::Ts, "function_type" | "object_type") if !all => {}
            _ => {
                // Wrappers (`&T`, `*T`, `dyn T`, `impl T`, `[]T`, `T | U`,
                // `type`, bounds): the types inside. Without `all` only the
                // first, which is the value's type (`&dyn Shape` → `Shape`).
                let mut c = n.walk();
                for child in n.named_children(&mut c) {
                    if matches!(kind_of(child), "lifetime" | "mutable_specifier") {
                        continue;
                    }
                    self.type_names(child, src, found, all);
                    if !all && !found.is_empty() {
                        return;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(byte_start: u32, byte_end: u32) -> Symbol {
        Symbol {
            name: String::new(),
            kind: SymbolKind::Fn,
            qualified_name: String::new(),
            signature: String::new(),
            doc: String::new(),
            visibility: String::new(),
            line_start: 1,
            line_end: 1,
            byte_start,
            byte_end,
            parent: None,
        }
    }

    /// The innermost symbol around each byte is the last one (in source
    /// order) whose range holds it: what a scan of every symbol finds.
    #[test]
    fn the_innermost_symbol_is_the_last_that_holds_the_byte() {
        // Nested and side by side: a[0,100) holds b[10,40) (holding c[12,20)
        // and d[25,30)) and e[50,60); f[120,130) stands alone.
        let symbols = [
            sym(0, 100),
            sym(10, 40),
            sym(12, 20),
            sym(25, 30),
            sym(50, 60),
            sym(120, 130),
        ];
        let owners = Owners::new(&symbols);
        let scan = |byte: u32| symbols.iter().rposition(|s| contains(s, byte));
        for byte in 0..140 {
            assert_eq!(owners.innermost(byte), scan(byte), "byte {byte}");
        }
        assert_eq!(owners.innermost(35), Some(1));
        assert_eq!(owners.innermost(22), Some(1));
        assert_eq!(owners.innermost(70), Some(0));
        assert_eq!(owners.innermost(110), None);
    }

    /// Every name a `Some(…)`/`Ok(…)` pattern binds in the tree is among the
    /// names read from the text, however the tokens are spaced or commented.
    #[test]
    fn the_held_names_hold_every_name_a_pattern_binds() {
        let src = "fn f(a: A) {\n\
            if let Some(x) = a.x() { x.go(); }\n\
            while let Ok(ref y) = a.y() { y.go(); }\n\
            match a.z() { Some( mut z ) => z.go(), None => {} }\n\
            if let Some(ref mut w) = a.w() { w.go(); }\n\
            if let Ok /* why */ (\n // note\n r#type) = a.t() { r#type.go(); }\n\
            if let Some(/* c /* nested */ */ q) = a.q() { q.go(); }\n\
            if let Other(o) = a.o() { o.go(); }\n\
        }";
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_rust::LANGUAGE.into())
            .unwrap();
        let tree = parser.parse(src, None).unwrap();
        let mut bound = Vec::new();
        let mut stack = vec![tree.root_node()];
        while let Some(n) = stack.pop() {
            stack.extend(n.children(&mut n.walk()));
            let is_held = n.kind() == "tuple_struct_pattern"
                && n.child_by_field_name("type")
                    .is_some_and(|t| matches!(text(t, src), "Some" | "Ok"));
            if !is_held {
                continue;
            }
            let mut b = n.named_child(n.named_child_count() as u32 - 1).unwrap();
            while b.kind() != "identifier" {
                b = b.named_child(b.named_child_count() as u32 - 1).unwrap();
            }
            bound.push(text(b, src));
        }
        bound.sort_unstable();
        assert_eq!(bound, ["q", "r#type", "w", "x", "y", "z"]);
        let held = rust_held_names(src);
        for name in &bound {
            assert!(held.binary_search(name).is_ok(), "{name} in {held:?}");
        }
        assert!(held.binary_search(&"o").is_err(), "{held:?}");
    }
}
