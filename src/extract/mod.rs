//! Symbol extraction: tree-sitter parse → definitions from the query files under
//! `queries/<lang>/symbols.scm` → language rules (kinds, names, signatures, docs,
//! visibility) → nesting from byte ranges → qualified names.
//!
//! Architecture invariant: this module knows nothing of the graph store or the wire
//! format. It turns `(path, text, module info)` into `model::Symbol`s and nothing else.

mod go;
mod imports;
mod python;
pub mod recover;
mod rust;
mod sites;
mod typescript;

pub use sites::is_self_word;

use std::collections::HashSet;
use std::sync::OnceLock;

use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Parser, Query, QueryCursor, Tree};

use crate::model::sites::FileSites;
use crate::model::{Language, ModuleInfo, RawImport, Symbol, SymbolKind};

/// The grammar, compiled symbol query and naming rules of one language.
/// `symbols.scm` and `imports.scm` are compiled into one query so a file's tree is
/// walked once; patterns below `symbol_patterns` are definitions, the rest imports.
struct LangSpec {
    grammar: tree_sitter::Language,
    query: Query,
    symbol_patterns: usize,
    /// Patterns below this (and from `symbol_patterns`) are imports; the rest
    /// are `calls.scm`'s: call and reference sites, type facts.
    import_patterns_end: usize,
    /// `symbols.scm` alone, for runs that skip imports (compiled when first
    /// used: a re-index of a few files would pay for it on every run).
    symbols_only: OnceLock<Query>,
    lang: &'static str,
}

/// Grammars and queries for every language, each compiled when first needed
/// (compiling all of them costs ~0.1 s, more than re-indexing a few files). Build
/// once, share across threads.
pub struct Extractor {
    rust: OnceLock<LangSpec>,
    python: OnceLock<LangSpec>,
    typescript: OnceLock<LangSpec>,
    tsx: OnceLock<LangSpec>,
    go: OnceLock<LangSpec>,
}

/// The query source of every language, as `(language, file name, text)`; tests compile each.
pub const QUERY_FILES: &[(&str, &str, &str)] = &[
    (
        "rust",
        "symbols.scm",
        include_str!("../../queries/rust/symbols.scm"),
    ),
    (
        "rust",
        "imports.scm",
        include_str!("../../queries/rust/imports.scm"),
    ),
    (
        "rust",
        "calls.scm",
        include_str!("../../queries/rust/calls.scm"),
    ),
    (
        "python",
        "symbols.scm",
        include_str!("../../queries/python/symbols.scm"),
    ),
    (
        "python",
        "imports.scm",
        include_str!("../../queries/python/imports.scm"),
    ),
    (
        "python",
        "calls.scm",
        include_str!("../../queries/python/calls.scm"),
    ),
    (
        "typescript",
        "symbols.scm",
        include_str!("../../queries/typescript/symbols.scm"),
    ),
    (
        "typescript",
        "imports.scm",
        include_str!("../../queries/typescript/imports.scm"),
    ),
    (
        "typescript",
        "calls.scm",
        include_str!("../../queries/typescript/calls.scm"),
    ),
    (
        "go",
        "symbols.scm",
        include_str!("../../queries/go/symbols.scm"),
    ),
    (
        "go",
        "imports.scm",
        include_str!("../../queries/go/imports.scm"),
    ),
    (
        "go",
        "calls.scm",
        include_str!("../../queries/go/calls.scm"),
    ),
];

fn query_text(lang: &str, file: &str) -> &'static str {
    QUERY_FILES
        .iter()
        .find(|(l, f, _)| *l == lang && *f == file)
        .map(|(_, _, text)| *text)
        .unwrap_or_default()
}

#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    #[error("query {lang}/{file} does not compile: {message}")]
    Query {
        lang: &'static str,
        file: &'static str,
        message: String,
    },
    #[error("grammar for {0} could not be loaded: {1}")]
    Grammar(&'static str, String),
}

fn compile(
    grammar: &tree_sitter::Language,
    lang: &'static str,
    file: &'static str,
) -> Result<Query, ExtractError> {
    Query::new(grammar, query_text(lang, file)).map_err(|e| ExtractError::Query {
        lang,
        file,
        message: e.to_string(),
    })
}

fn spec(grammar: tree_sitter::Language, lang: &'static str) -> Result<LangSpec, ExtractError> {
    let combined = format!(
        "{}\n{}\n{}",
        query_text(lang, "symbols.scm"),
        query_text(lang, "imports.scm"),
        query_text(lang, "calls.scm")
    );
    let query = match Query::new(&grammar, &combined) {
        Ok(q) => q,
        Err(e) => {
            // Each file on its own, so the error names the file it is in.
            compile(&grammar, lang, "symbols.scm")?;
            compile(&grammar, lang, "imports.scm")?;
            compile(&grammar, lang, "calls.scm")?;
            return Err(ExtractError::Query {
                lang,
                file: "symbols.scm + imports.scm + calls.scm",
                message: e.to_string(),
            });
        }
    };
    // Which file a pattern came from, by where it starts in the combined text
    // (compiling each file again only to count its patterns cost a third of
    // compiling the queries).
    let imports_at = query_text(lang, "symbols.scm").len() + 1;
    let calls_at = imports_at + query_text(lang, "imports.scm").len() + 1;
    let starting_before = |at: usize| {
        (0..query.pattern_count())
            .filter(|&i| query.start_byte_for_pattern(i) < at)
            .count()
    };
    Ok(LangSpec {
        symbol_patterns: starting_before(imports_at),
        import_patterns_end: starting_before(calls_at),
        query,
        symbols_only: OnceLock::new(),
        lang,
        grammar,
    })
}

/// How many levels of macros inside macro bodies are parsed for items.
const MACRO_DEPTH: usize = 3;

/// The deepest level in a tree where a query's match may begin (see `collect`).
const MAX_START_DEPTH: u32 = 4_096;

const LANGUAGES: [Language; 5] = [
    Language::Rust,
    Language::Python,
    Language::TypeScript,
    Language::Tsx,
    Language::Go,
];

fn grammar_of(language: Language) -> (tree_sitter::Language, &'static str) {
    match language {
        Language::Rust => (tree_sitter_rust::LANGUAGE.into(), "rust"),
        Language::Python => (tree_sitter_python::LANGUAGE.into(), "python"),
        Language::TypeScript => (
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            "typescript",
        ),
        // JSX is legal in .js files, and the TSX grammar accepts plain JS too.
        Language::Tsx | Language::JavaScript => {
            (tree_sitter_typescript::LANGUAGE_TSX.into(), "typescript")
        }
        Language::Go => (tree_sitter_go::LANGUAGE.into(), "go"),
    }
}

impl Default for Extractor {
    fn default() -> Extractor {
        Extractor {
            rust: OnceLock::new(),
            python: OnceLock::new(),
            typescript: OnceLock::new(),
            tsx: OnceLock::new(),
            go: OnceLock::new(),
        }
    }
}

impl Extractor {
    /// An extractor that compiles each language's queries on first use.
    pub fn new() -> Result<Extractor, ExtractError> {
        Ok(Extractor::default())
    }

    /// Compiles every language's queries now, reporting the first that does not
    /// compile (the shipped queries always do: `tests/queries.rs` checks it).
    pub fn compile_all(&self) -> Result<(), ExtractError> {
        for language in LANGUAGES {
            let (grammar, lang) = grammar_of(language);
            let compiled = spec(grammar, lang)?;
            let _ = self.slot(language).set(compiled);
        }
        Ok(())
    }

    fn slot(&self, language: Language) -> &OnceLock<LangSpec> {
        match language {
            Language::Rust => &self.rust,
            Language::Python => &self.python,
            Language::TypeScript => &self.typescript,
            Language::Tsx | Language::JavaScript => &self.tsx,
            Language::Go => &self.go,
        }
    }

    fn spec(&self, language: Language) -> &LangSpec {
        self.slot(language).get_or_init(|| {
            let (grammar, lang) = grammar_of(language);
            spec(grammar, lang).expect("the shipped queries compile (tests/queries.rs)")
        })
    }

    /// Parses `source` only (no extraction); the baseline the benchmark compares against.
    pub fn parse(&self, parser: &mut Parser, language: Language, source: &str) -> Option<Tree> {
        parser.set_language(&self.spec(language).grammar).ok()?;
        parser.parse(source, None)
    }

    /// `parse`, reading only `ranges` of `source` (positions stay the
    /// source's); the parser reads whole sources again afterwards.
    fn parse_ranges(
        &self,
        parser: &mut Parser,
        language: Language,
        source: &str,
        ranges: &[tree_sitter::Range],
    ) -> Option<Tree> {
        parser.set_language(&self.spec(language).grammar).ok()?;
        parser.set_included_ranges(ranges).ok()?;
        let tree = parser.parse(source, None);
        // An empty list is the whole document again.
        let _ = parser.set_included_ranges(&[]);
        tree
    }

    /// Extracts every definition of one file. Syntax errors do not stop extraction:
    /// tree-sitter recovers and what it recognised is kept.
    pub fn extract(
        &self,
        parser: &mut Parser,
        language: Language,
        source: &str,
        module: &ModuleInfo,
    ) -> Extracted {
        self.extract_with(parser, language, source, module, true)
    }

    /// `extract`, optionally without imports (one query with fewer patterns).
    pub fn extract_with(
        &self,
        parser: &mut Parser,
        language: Language,
        source: &str,
        module: &ModuleInfo,
        with_imports: bool,
    ) -> Extracted {
        let Some(mut tree) = self.parse(parser, language, source) else {
            return Extracted {
                symbols: Vec::new(),
                imports: Vec::new(),
                sites: FileSites::default(),
                has_syntax_errors: true,
                error_lines: 0,
                recovered: 0,
            };
        };
        // TypeScript the grammar misreads: read again with the patches of
        // `recover` (positions unchanged), kept when fewer lines are in error.
        let mut error_lines = recover::error_lines(tree.root_node());
        let mut unpatched: Option<Tree> = None;
        if error_lines > 0
            && matches!(language, Language::TypeScript | Language::Tsx)
            && let Some(p) = recover::patched(source)
            && let Some(again) = self.parse(parser, language, &p)
        {
            let lines = recover::error_lines(again.root_node());
            if lines < error_lines {
                error_lines = lines;
                unpatched = Some(std::mem::replace(&mut tree, again));
            }
        }
        let root = tree.root_node();
        // Rust items written inside item-level macro invocations (`cfg_io! { pub
        // use …; mod x; }`) are token trees to the grammar: the bodies are parsed
        // again on their own, at their original byte and line positions.
        // Macros inside those bodies (`cfg_io! { cfg_net! { … } }`) take another
        // round, a few levels deep.
        let mut layers: Vec<(String, Tree)> = Vec::new();
        if language == Language::Rust {
            let mut next = rust::macro_bodies_only(root, source);
            while let Some(m) = next.take() {
                let Some(t) = self.parse(parser, language, &m) else {
                    break;
                };
                if layers.len() < MACRO_DEPTH {
                    next = rust::macro_bodies_only(t.root_node(), &m);
                }
                layers.push((m, t));
            }
        }
        let (mut defs, mut imports, calls) = self.collect(language, root, source, with_imports);
        let mut layer_calls = Vec::with_capacity(layers.len());
        for (m, t) in &layers {
            let (more_defs, more_imports, more_calls) =
                self.collect(language, t.root_node(), m, with_imports);
            defs.extend(more_defs);
            imports.extend(more_imports);
            layer_calls.push(more_calls);
        }
        if !layers.is_empty() {
            imports.sort_by_key(|i| i.line);
        }
        // What the patches recovered: definitions the first tree lost.
        let recovered = unpatched.map_or(0, |t| {
            let (before, _, _) = self.collect(language, t.root_node(), source, false);
            defs.len().saturating_sub(before.len())
        });
        // The items Rust `macro_rules!` templates write (`impl SearcherT for
        // SlimSSSE3<$len> { fn find … }`), parsed as functions' bodies at
        // their own positions: definitions of the module the macro is in.
        let template = match language {
            Language::Rust => {
                let macros = defs.iter().filter(|d| d.kind == SymbolKind::Macro);
                rust::macro_templates_only(
                    rust::templates_of(macros.map(|d| d.range_node)).into_iter(),
                    source,
                )
            }
            _ => None,
        };
        let template_tree = (template.as_ref())
            .and_then(|t| self.parse_ranges(parser, Language::Rust, &t.text, &t.ranges));
        if let (Some(t), Some(tt)) = (&template, &template_tree) {
            let (written, _, _) = self.collect(language, tt.root_node(), &t.text, false);
            defs.extend(rust::template_items(written, t));
        }
        let symbols = build_symbols(language, defs, module);
        // Sites with imports: a run that skips imports resolves neither.
        let mut sites = FileSites::default();
        if with_imports {
            // What the file's imports bind: Go package names, Python names.
            let packages: Vec<&str> = (imports.iter())
                .filter_map(|i| i.go_name().or_else(|| i.python_name()))
                .collect();
            sites::collect(language, &calls, source, &symbols, &packages, &mut sites);
            for ((m, _), found) in layers.iter().zip(&layer_calls) {
                sites::collect(language, found, m, &symbols, &packages, &mut sites);
            }
            // Calls written in Rust macro arguments (`assert_eq!(a.f(), 1)`)
            // are token trees too: those arguments are parsed again as
            // expressions, at their original positions, for the calls and
            // types written there; macros in those arguments take another round.
            let mut pending: Vec<(String, Vec<tree_sitter::Range>)> =
                std::iter::once((&calls, source))
                    .chain(
                        layer_calls
                            .iter()
                            .zip(layers.iter().map(|(m, _)| m.as_str())),
                    )
                    .filter_map(|(found, src)| {
                        rust::macro_args_only(found.iter().filter_map(|c| c.macro_args()), src)
                    })
                    .collect();
            let mut parsed_again = false;
            if let (Some(t), Some(tt)) = (&template, &template_tree) {
                parsed_again = true;
                let next = self.template_sites(tt, t, (&symbols, &packages), &mut sites);
                pending.extend(next);
            }
            let argument_facts = sites.facts.len();
            let rounds = (&symbols[..], &packages[..]);
            parsed_again |= self.argument_rounds(parser, language, pending, rounds, &mut sites);
            sites::drop_argument_shadows(&mut sites, argument_facts);
            if !layers.is_empty() || parsed_again {
                sites.sites.sort_by_key(|s| (s.line, s.col));
            }
            sites::drop_shadowed_values(&mut sites);
        }
        Extracted {
            symbols,
            imports,
            sites,
            has_syntax_errors: root.has_error(),
            error_lines,
            recovered,
        }
    }

    /// The calls written in macro arguments (`pending`: texts blanked but for
    /// them), parsed again as expressions, and the macros in those arguments
    /// in further rounds, a few deep. Whether anything was parsed.
    fn argument_rounds(
        &self,
        parser: &mut Parser,
        language: Language,
        mut pending: Vec<(String, Vec<tree_sitter::Range>)>,
        (symbols, packages): (&[Symbol], &[&str]),
        sites: &mut FileSites,
    ) -> bool {
        let parsed = !pending.is_empty();
        for _ in 0..MACRO_DEPTH {
            if pending.is_empty() {
                break;
            }
            let mut next = Vec::new();
            for (m, ranges) in pending {
                let Some(t) = self.parse_ranges(parser, language, &m, &ranges) else {
                    continue;
                };
                let (_, _, found) = self.collect(language, t.root_node(), &m, true);
                next.extend(rust::macro_args_only(
                    found.iter().filter_map(|c| c.macro_args()),
                    &m,
                ));
                let found: Vec<_> = found
                    .into_iter()
                    .filter(|c| c.is_expression_site())
                    .collect();
                sites::collect(language, &found, &m, symbols, packages, sites);
            }
            pending = next;
        }
        parsed
    }

    /// The sites and facts of a file's `macro_rules!` templates (`t`, parsed
    /// as `tree`), with the arguments of the macros they invoke for another
    /// round. An impl a template writes is the heritage of the impl it keeps
    /// as a symbol (`rust::template_items`), not of the macro's.
    fn template_sites(
        &self,
        tree: &Tree,
        t: &rust::Template,
        (symbols, packages): (&[Symbol], &[&str]),
        sites: &mut FileSites,
    ) -> Option<(String, Vec<tree_sitter::Range>)> {
        let (_, _, matches) = self.collect(Language::Rust, tree.root_node(), &t.text, true);
        let next = rust::macro_args_only(matches.iter().filter_map(|c| c.macro_args()), &t.text);
        let impls: Vec<std::ops::Range<usize>> = (symbols.iter())
            .filter(|s| s.kind == SymbolKind::Impl)
            .map(|s| s.byte_start as usize..s.byte_end as usize)
            .collect();
        let impl_at = |byte: usize| impls.iter().any(|r| r.contains(&byte));
        let kept: Vec<_> = matches
            .into_iter()
            .filter(|c| {
                (c.in_template() || (c.in_template_item() && impl_at(c.inner_node().start_byte())))
                    && !(c.is_call_or_value() && t.reads_arguments(c.inner_node()))
            })
            .collect();
        sites::collect(Language::Rust, &kept, &t.text, symbols, packages, sites);
        next
    }

    /// One pass of the combined query: definitions (before language rules and
    /// nesting), raw imports, in source order, and the matches of call sites
    /// and facts (placed once the symbols are known).
    fn collect<'t>(
        &self,
        language: Language,
        root: Node<'t>,
        src: &str,
        with_imports: bool,
    ) -> (Vec<Def<'t>>, Vec<RawImport>, Vec<sites::CallMatch<'t>>) {
        let spec = self.spec(language);
        let query = if with_imports {
            &spec.query
        } else {
            spec.symbols_only.get_or_init(|| {
                compile(&spec.grammar, spec.lang, "symbols.scm")
                    .expect("the shipped queries compile (tests/queries.rs)")
            })
        };
        let names = query.capture_names();
        let mut cursor = QueryCursor::new();
        // tree-sitter keeps where a match began in 16 bits: one that begins
        // deeper never closes, and every later step of the cursor visits it
        // (a 40,000-call chain, 80,000 levels deep, took 30 s). Nothing
        // begins that deep; no real code nests so.
        cursor.set_max_start_depth(Some(MAX_START_DEPTH));
        let mut matches = cursor.matches(query, root, src.as_bytes());
        let mut seen = HashSet::new();
        let mut defs = Vec::new();
        let mut imports = Vec::new();
        let mut calls = Vec::new();
        while let Some(m) = matches.next() {
            if m.pattern_index >= spec.import_patterns_end {
                calls.extend(sites::call_match(names, m.captures()));
                continue;
            }
            if m.pattern_index < spec.symbol_patterns {
                let mut def_node = None;
                let mut tag = String::new();
                let mut name_node = None;
                for c in m.captures() {
                    let cname = names[c.index as usize];
                    if let Some(t) = cname.strip_prefix("definition.") {
                        def_node = Some(c.node);
                        tag = t.to_string();
                    } else if cname == "name" {
                        name_node = Some(c.node);
                    }
                }
                let (Some(node), Some(name_node)) = (def_node, name_node) else {
                    continue;
                };
                if !seen.insert((node.id(), name_node.id())) {
                    continue;
                }
                let raw = RawDef {
                    node,
                    name_node,
                    tag,
                };
                let refined = match language {
                    Language::Rust => rust::refine(raw, src),
                    Language::Python => python::refine(raw, src),
                    Language::TypeScript | Language::Tsx | Language::JavaScript => {
                        typescript::refine(raw, src)
                    }
                    Language::Go => go::refine(raw, src),
                };
                defs.extend(refined);
                continue;
            }
            let mut main = None;
            let mut source = None;
            for c in m.captures() {
                match names[c.index as usize] {
                    "source" => source = Some(c.node),
                    n if n.starts_with('_') => {}
                    n => main = Some((n, c.node)),
                }
            }
            let Some((capture, node)) = main else {
                continue;
            };
            match language {
                Language::Rust => imports::rust(capture, node, src, &mut imports),
                Language::Python => imports::python(capture, node, src, &mut imports),
                Language::TypeScript | Language::Tsx | Language::JavaScript => {
                    imports::typescript(capture, node, source, src, &mut imports)
                }
                Language::Go => imports::go(capture, node, src, &mut imports),
            }
        }
        imports.sort_by_key(|i| i.line);
        (defs, imports, calls)
    }
}

/// What one file yields.
#[derive(Debug, Clone)]
pub struct Extracted {
    pub symbols: Vec<Symbol>,
    pub imports: Vec<RawImport>,
    pub sites: FileSites,
    pub has_syntax_errors: bool,
    /// Lines under syntax errors (and one per missing token), after recovery.
    pub error_lines: usize,
    /// Definitions found only because `recover` read the file again.
    pub recovered: usize,
}

/// A query match before language rules: the definition node, its name node, the tag
/// after `definition.` in the capture name.
struct RawDef<'t> {
    node: Node<'t>,
    name_node: Node<'t>,
    tag: String,
}

/// A definition after language rules, before nesting.
struct Def<'t> {
    name: String,
    kind: SymbolKind,
    /// The node whose range is the definition's range (may be wider than the
    /// captured node: decorators, `export`, a Go `type` keyword).
    range_node: Node<'t>,
    signature: String,
    doc: String,
    visibility: String,
    /// Go methods: the receiver type's name, which becomes their parent.
    receiver: Option<String>,
}

/// Text of a node, or "" when the range is not valid UTF-8 boundaries (cannot
/// happen for source that is a `&str`, but never panic on input).
fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

/// The declaration header: source from `start` up to where `body` begins, on one
/// line, with a trailing `{`, `:` or `=` removed. Without a body, the first line.
fn header(start: Node<'_>, body: Option<Node<'_>>, src: &str) -> String {
    let from = start.start_byte();
    let raw = match body {
        Some(b) if b.start_byte() > from => src.get(from..b.start_byte()).unwrap_or(""),
        _ => {
            let whole = text(start, src);
            whole.lines().next().unwrap_or("")
        }
    };
    let mut sig = crate::model::normalize_ws(raw);
    while sig.ends_with(['{', ':', '=', ';']) {
        sig.pop();
        sig = sig.trim_end().to_string();
    }
    const MAX: usize = 400;
    if sig.len() > MAX {
        let mut cut = MAX;
        while !sig.is_char_boundary(cut) {
            cut -= 1;
        }
        sig.truncate(cut);
        sig.push('…');
    }
    sig
}

/// The text of a `/** … */` doc block without its markers and leading `*`s.
fn block_doc(t: &str) -> String {
    t.trim_start_matches("/**")
        .trim_end_matches("*/")
        .lines()
        .map(|l| l.trim().trim_start_matches('*').trim())
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// Comments directly above `node` (no blank line between), oldest first, as
/// accepted by `keep`, which returns the comment's text without its markers.
fn leading_comments(
    node: Node<'_>,
    src: &str,
    skip: &[&str],
    keep: impl Fn(Node<'_>, &str) -> Option<String>,
) -> String {
    if !may_have_leading(node, src, skip) {
        return String::new();
    }
    walked_comments(node, src, skip, keep)
}

/// `leading_comments` by walking back over `node`'s siblings.
fn walked_comments(
    node: Node<'_>,
    src: &str,
    skip: &[&str],
    keep: impl Fn(Node<'_>, &str) -> Option<String>,
) -> String {
    let mut parts = Vec::new();
    let mut expected_row = node.start_position().row;
    let mut cur = node.prev_sibling();
    while let Some(n) = cur {
        if skip.contains(&n.kind()) {
            expected_row = n.start_position().row;
            cur = n.prev_sibling();
            continue;
        }
        // A comment counts only if it ends on the line above (or the same line);
        // line comments may include their newline, ending at column 0 of the next row.
        let end = n.end_position();
        let end_row = if end.column == 0 && end.row > n.start_position().row {
            end.row - 1
        } else {
            end.row
        };
        if end_row + 1 < expected_row {
            break;
        }
        match keep(n, text(n, src)) {
            Some(t) => parts.push(t),
            None => break,
        }
        expected_row = n.start_position().row;
        cur = n.prev_sibling();
    }
    parts.reverse();
    parts.join("\n").trim().to_string()
}

/// Whether `leading_comments` could take anything above `node`: a comment
/// ending on its line or the line above (a `//` or `*/` there), or an
/// attribute right before it (a `]`; it is skipped however far above). Other
/// skipped kinds (decorators) can end in anything. Read from the text because
/// `prev_sibling` walks down from the root, and ran for every symbol.
fn may_have_leading(node: Node<'_>, src: &str, skip: &[&str]) -> bool {
    if skip.iter().any(|k| *k != "attribute_item") {
        return true;
    }
    let before = &src[..node.start_byte().min(src.len())];
    if !skip.is_empty() && before.trim_end().ends_with(']') {
        return true;
    }
    let row_start = before.rfind('\n').map_or(0, |i| i + 1);
    let above_start = before[..row_start.saturating_sub(1)]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let near = &before[above_start..];
    near.contains("//") || near.contains("*/")
}

/// Nesting, method detection and qualified names for one file's definitions.
fn build_symbols(language: Language, mut defs: Vec<Def<'_>>, module: &ModuleInfo) -> Vec<Symbol> {
    defs.sort_by_key(|d| {
        (
            d.range_node.start_byte(),
            std::cmp::Reverse(d.range_node.end_byte()),
        )
    });
    // Same range twice (e.g. a Go type_spec captured both ways): keep the first.
    defs.dedup_by(|b, a| {
        a.range_node.start_byte() == b.range_node.start_byte()
            && a.range_node.end_byte() == b.range_node.end_byte()
            && a.name == b.name
    });

    let mut symbols: Vec<Symbol> = Vec::with_capacity(defs.len());
    // Index into `symbols` of each kept def, for the enclosing stack.
    let mut stack: Vec<(usize, usize)> = Vec::new(); // (symbol index, end byte)
    let mut receivers: Vec<Option<String>> = Vec::new();
    for def in defs {
        let start = def.range_node.start_byte();
        let end = def.range_node.end_byte();
        while let Some(&(_, top_end)) = stack.last() {
            if start >= top_end {
                stack.pop();
            } else {
                break;
            }
        }
        // What a Rust `macro_rules!` template writes is the module's (where
        // the macro is invoked), not the macro's: nothing else nests in one.
        let mut parent = stack.last().map(|&(i, _)| i);
        while let Some(p) = parent.filter(|&p| symbols[p].kind == SymbolKind::Macro) {
            parent = symbols[p].parent;
        }
        let mut kind = def.kind;
        if let Some(p) = parent {
            let pk = symbols[p].kind;
            // Variables inside functions are locals, not navigation targets.
            if matches!(
                kind,
                SymbolKind::Var | SymbolKind::Const | SymbolKind::Static
            ) && pk.is_callable()
                && language != Language::Rust
            {
                continue;
            }
            if kind == SymbolKind::Fn && pk.holds_methods() {
                kind = SymbolKind::Method;
            }
        }
        let visibility = if def.visibility.is_empty() {
            parent
                .map(|p| symbols[p].visibility.clone())
                .unwrap_or_default()
        } else {
            def.visibility
        };
        let start_pos = def.range_node.start_position();
        let end_pos = def.range_node.end_position();
        // A node ending at column 0 ends on the previous line (trailing newline).
        let line_end = if end_pos.column == 0 && end_pos.row > start_pos.row {
            end_pos.row
        } else {
            end_pos.row + 1
        };
        symbols.push(Symbol {
            name: def.name,
            kind,
            qualified_name: String::new(),
            signature: def.signature,
            doc: def.doc,
            visibility,
            line_start: start_pos.row as u32 + 1,
            line_end: line_end as u32,
            byte_start: start as u32,
            byte_end: end as u32,
            parent,
        });
        receivers.push(def.receiver);
        stack.push((symbols.len() - 1, end));
    }

    // Go: a method's parent is its receiver type when that type is in the same file.
    if language == Language::Go {
        for i in 0..symbols.len() {
            if let Some(recv) = &receivers[i] {
                symbols[i].parent = symbols.iter().position(|s| {
                    s.name == *recv
                        && matches!(
                            s.kind,
                            SymbolKind::Struct | SymbolKind::Interface | SymbolKind::Type
                        )
                });
            }
        }
    }

    for i in 0..symbols.len() {
        let mut chain = vec![symbols[i].name.as_str()];
        let mut cur = symbols[i].parent;
        let mut guard = 0;
        while let Some(p) = cur {
            chain.push(symbols[p].name.as_str());
            cur = symbols[p].parent;
            guard += 1;
            if guard > 256 {
                break;
            }
        }
        // Go methods outside their type's file still carry the type in their name.
        if symbols[i].parent.is_none()
            && let Some(recv) = &receivers[i]
        {
            chain.push(recv.as_str());
        }
        chain.reverse();
        symbols[i].qualified_name = qualify(language, &module.module, &chain);
    }
    symbols
}

/// Joins a module path and a chain of enclosing names per the language's convention
/// (docs/ARCHITECTURE.md, "Names per language"): Rust `a::b::T::f`, Python `a.b.T.f`, TS `src/a/b:T.f`, Go
/// `example.com/m/pkg.T.f`.
pub fn qualify(language: Language, module: &str, chain: &[&str]) -> String {
    let (module_sep, sep) = match language {
        Language::Rust => ("::", "::"),
        Language::Python => (".", "."),
        Language::TypeScript | Language::Tsx | Language::JavaScript => (":", "."),
        Language::Go => (".", "."),
    };
    let inner = chain.join(sep);
    if module.is_empty() {
        inner
    } else {
        format!("{module}{module_sep}{inner}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A turbofish on a call's type and an inherent impl's type arguments
    /// are written alike (`TYPE_ARGS`, `ImplSelfArgs`): spaces out, `|`
    /// between arguments (a `,` inside one does not part it), the impl's
    /// own parameters `_`, lifetimes left out.
    #[test]
    fn turbofish_and_impl_type_arguments_are_written_alike() {
        use crate::model::sites::{FactKind, TYPE_ARGS};
        let src = "struct Foo<'a, T, const N: usize>(&'a T);\n\
            impl<'a, T> Foo<'a, T, { 2 }> { fn f() {} }\n\
            impl<'a> Foo<'a, HashMap<K, V>, 4> { fn f() {} }\n\
            fn g() { Foo::<HashMap<K, V>, 4>::f(); Foo::<_, 2>::f(); Foo::f(); }\n";
        let ex = Extractor::new().unwrap();
        let mut parser = Parser::new();
        let module = ModuleInfo {
            module: String::new(),
            package: "c".into(),
        };
        let out = ex.extract(&mut parser, Language::Rust, src, &module);
        let mut blocks: Vec<&str> = (out.sites.facts.iter())
            .filter(|f| f.kind == FactKind::ImplSelfArgs)
            .map(|f| f.name.as_str())
            .collect();
        blocks.sort();
        assert_eq!(blocks, ["HashMap<K,V>|4", "_|{2}"]);
        let calls: Vec<Option<&str>> = (out.sites.sites.iter())
            .filter(|s| {
                s.chain
                    .last()
                    .is_some_and(|c| c == "::f" || c.starts_with('#'))
            })
            .map(|s| s.chain.last().and_then(|c| c.strip_prefix(TYPE_ARGS)))
            .collect();
        assert_eq!(calls, [Some("HashMap<K,V>|4"), Some("_|2"), None]);
    }

    /// Where the text rules out a leading comment, walking the siblings
    /// finds none either: every node of sources laid out every which way.
    #[test]
    fn the_text_rules_out_a_leading_comment_only_where_there_is_none() {
        let rust = "//! crate\n/// a\nfn a() {}\n/* b */ fn b() {}\n\n/// c\n#[x]\n\n#[y] fn c() {}\n\
            // far\n\nfn d() {}\nstruct S { a: u8, // note\n    b: u8,\n    /** doc */\n    c: u8 }\n\
            /* two\n lines */\nenum E { A, /// v\n B }\nimpl S { /// m\n fn m(&self) {} fn n() {} }\n\
            #[cfg(x)]\nmod m { const C: u8 = 1; }\n\u{a0}/// nb\n\u{2028}fn e() {}\n// last";
        let go = "package p\n\n// A is.\nfunc A() {}\n/* B */ func B() {}\n\n// far\n\nfunc C() {}\n\
            type (\n\t// T is.\n\tT int\n\tU int // u\n\tV int\n)\n";
        let keep = |n: Node<'_>, t: &str| n.kind().contains("comment").then(|| t.to_string());
        for (language, src, skip) in [
            (Language::Rust, rust, &["attribute_item"][..]),
            (Language::Go, go, &[][..]),
        ] {
            let mut parser = tree_sitter::Parser::new();
            parser.set_language(&grammar_of(language).0).unwrap();
            let tree = parser.parse(src, None).unwrap();
            let (mut ruled_out, mut found) = (0, 0);
            let mut stack = vec![tree.root_node()];
            while let Some(n) = stack.pop() {
                // A comment's own parts (`/*`, a doc's text) are never symbols.
                if !n.kind().contains("comment") {
                    stack.extend(n.children(&mut n.walk()));
                }
                let walked = walked_comments(n, src, skip, keep);
                found += usize::from(!walked.is_empty());
                if !may_have_leading(n, src, skip) {
                    ruled_out += 1;
                    assert_eq!(
                        walked,
                        "",
                        "{language:?} {} at {:?}",
                        n.kind(),
                        n.start_position()
                    );
                }
            }
            assert!(
                ruled_out > 20 && found >= 4,
                "{language:?}: {ruled_out} ruled out, {found} found"
            );
        }
    }

    /// The pattern boundaries read off the combined query are those of the
    /// files compiled on their own.
    #[test]
    fn combined_query_splits_where_its_files_do() {
        for language in LANGUAGES {
            let (grammar, lang) = grammar_of(language);
            let spec = spec(grammar.clone(), lang).expect("compiles");
            let symbols = compile(&grammar, lang, "symbols.scm").expect("symbols");
            let imports = compile(&grammar, lang, "imports.scm").expect("imports");
            let calls = compile(&grammar, lang, "calls.scm").expect("calls");
            assert_eq!(spec.symbol_patterns, symbols.pattern_count(), "{lang}");
            assert_eq!(
                spec.import_patterns_end,
                symbols.pattern_count() + imports.pattern_count(),
                "{lang}"
            );
            assert_eq!(
                spec.query.pattern_count(),
                spec.import_patterns_end + calls.pattern_count(),
                "{lang}"
            );
        }
    }
}
