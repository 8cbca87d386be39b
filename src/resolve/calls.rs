//! Call and reference resolution in tiers that fail closed: each tier proves
//! exactly one target or passes the site on; the edge's confidence names the
//! tier (`scope`, `import`, `self`, `qualified`, `typed`, `dispatch`, `name`).
//! A site no tier proves is kept as unresolved when the repo defines its name.
//!
//! Every lookup goes through `Index`, so its key is recorded: a file whose
//! callee is renamed, deleted or newly defined is re-resolved like a file
//! whose import changed (see `contributed_keys`).

use std::cell::RefCell;

use super::{
    Definition, Family, FxMap, FxSet, Index, RFile, RSymbol, Target, fam_str, family, key,
};
use crate::model::sites::{
    ARGUMENT, BORROWED, CALLBACK, COLLECTED, COMPREHENDS, DYNAMIC, ELEMENT, EVERY, FIXTURE,
    FactKind, FileSites, HANDED, IN_FILE, ITERATES, PROPERTY, RETURNS_VALUE, RawSite, SELF_VALUE,
    SHAPE, SiteKind, Step, THEN, TUPLE_ELEMENT, TYPE_ARGS, VARIANT_FIELD, WRITTEN, YIELDS,
};

/// A target and the tier that proved it, if one did.
type Proven<'a> = Option<(Sym<'a>, Tier)>;

/// How a target was proved, in the CONTRACT's order (most certain first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    Scope,
    Import,
    SelfTier,
    Qualified,
    Typed,
    Dispatch,
    Name,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Scope => "scope",
            Tier::Import => "import",
            Tier::SelfTier => "self",
            Tier::Qualified => "qualified",
            Tier::Typed => "typed",
            Tier::Dispatch => "dispatch",
            Tier::Name => "name",
        }
    }

    pub fn from_u8(n: u8) -> Option<Tier> {
        Some(match n {
            0 => Tier::Scope,
            1 => Tier::Import,
            2 => Tier::SelfTier,
            3 => Tier::Qualified,
            4 => Tier::Typed,
            5 => Tier::Dispatch,
            6 => Tier::Name,
            _ => return None,
        })
    }
}

/// The relationship an edge is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rel {
    Calls,
    References,
    Implements,
    Extends,
    /// A site no tier proved; `to` is the name.
    Unresolved,
}

impl Rel {
    pub fn as_str(self) -> &'static str {
        match self {
            Rel::Calls => "CALLS",
            Rel::References => "REFERENCES",
            Rel::Implements => "IMPLEMENTS",
            Rel::Extends => "EXTENDS",
            Rel::Unresolved => "UNRESOLVED",
        }
    }

    pub fn from_u8(n: u8) -> Option<Rel> {
        Some(match n {
            0 => Rel::Calls,
            1 => Rel::References,
            2 => Rel::Implements,
            3 => Rel::Extends,
            4 => Rel::Unresolved,
            _ => return None,
        })
    }
}

/// An edge end or callee text: a symbol id (12 bytes) or a short name is kept
/// inline, so a million edges are not two or three million allocations.
pub type Id = compact_str::CompactString;

/// One resolved site: an edge of the call graph, from the file's own symbol
/// (`from`: its index, or `IN_FILE`) or, for IMPLEMENTS/EXTENDS, from the
/// type the clause is about (`from_id`, which another file may define).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SiteEdge {
    pub rel: Rel,
    /// Symbol id of the source, or "" for the file itself.
    pub from: Id,
    /// Symbol id of the target, or the name (UNRESOLVED).
    pub to: Id,
    pub line: u32,
    pub col: u32,
    pub tier: Tier,
    /// The REFERENCES/UNRESOLVED kind (`SiteKind::as_str`).
    pub kind: SiteKind,
    /// The callee as written (CALLS and UNRESOLVED; empty for the others,
    /// whose tables keep no `to_name`).
    pub to_name: Id,
}

/// A symbol found by a lookup: id, qualified name, kind, file.
#[derive(Debug, Clone, Copy)]
struct Sym<'a> {
    id: &'a str,
    qn: &'a str,
    kind: &'a str,
    file: usize,
}

/// A callback parameter's chain (`CALLBACK`): the callee, the argument's
/// position and the parameter's.
fn callback(chain: &[Step]) -> Option<(&[Step], &str, &str)> {
    match chain {
        [callee @ .., mark, i, j] if mark == CALLBACK && !callee.is_empty() => {
            Some((callee, i.as_str(), j.as_str()))
        }
        _ => None,
    }
}

/// Whether `word` is a Rust primitive type (facts keep its name: extension
/// traits of the repo may give it methods).
pub(super) fn is_rust_primitive(word: &str) -> bool {
    matches!(
        word,
        "u8" | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
            | "f32"
            | "f64"
            | "bool"
            | "char"
    )
}

/// Whether a chain step is a marker (`()`, `{}`, `?`, `#new`, `#iter`, …).
fn is_marker_step(step: &str) -> bool {
    matches!(step, "()" | "{}" | "?") || step.starts_with('#')
}

/// Whether `word` is written like a type (`Vec`, `Foo`) rather than a value.
fn is_type_name(fam: Family, word: &str) -> bool {
    let word = bare(word);
    word.starts_with(|c: char| c.is_ascii_uppercase()) || builtin_type(fam, word)
}

/// The language's own types (and its standard library's most used), whose
/// methods no repo defines: a receiver of one of them takes no `name` edge.
fn builtin_type(fam: Family, word: &str) -> bool {
    match fam {
        Family::Rust => {
            matches!(
                word,
                "Vec"
                    | "String"
                    | "str"
                    | "HashMap"
                    | "HashSet"
                    | "BTreeMap"
                    | "BTreeSet"
                    | "VecDeque"
                    | "BinaryHeap"
                    | "Option"
                    | "Result"
                    | "Box"
                    | "Rc"
                    | "Arc"
                    | "RefCell"
                    | "Cell"
                    | "Mutex"
                    | "RwLock"
                    | "Cow"
            ) || is_rust_primitive(word)
        }
        Family::Python => matches!(
            word,
            "list"
                | "dict"
                | "set"
                | "frozenset"
                | "tuple"
                | "str"
                | "bytes"
                | "bytearray"
                | "int"
                | "float"
                | "bool"
                | "object"
                | "List"
                | "Dict"
                | "Set"
                | "Tuple"
                | "FrozenSet"
                | "Sequence"
                | "Mapping"
                | "Iterable"
                | "Iterator"
        ),
        Family::Ts => matches!(
            word,
            "Array"
                | "ReadonlyArray"
                | "Map"
                | "Set"
                | "WeakMap"
                | "WeakSet"
                | "Promise"
                | "Record"
                | "String"
                | "Number"
                | "Boolean"
                | "Object"
                | "Date"
                | "RegExp"
                | "Error"
                | "Function"
                | "string"
                | "number"
                | "boolean"
                | "object"
                | "any"
                | "unknown"
        ),
        Family::Go => matches!(
            word,
            "string"
                | "int"
                | "int8"
                | "int16"
                | "int32"
                | "int64"
                | "uint"
                | "uint8"
                | "uint16"
                | "uint32"
                | "uint64"
                | "uintptr"
                | "byte"
                | "rune"
                | "bool"
                | "float32"
                | "float64"
                | "complex64"
                | "complex128"
                | "error"
                | "any"
        ),
    }
}

/// Calls in a Python chain past which `Resolver::folded_type` types it from
/// the left (each call typed recursively costs a few levels of `MAX_DEPTH`).
const FOLD_CALLS: usize = 3;

fn is_type_kind(kind: &str) -> bool {
    matches!(
        kind,
        "struct" | "class" | "interface" | "trait" | "enum" | "type" | "impl"
    )
}

/// What `X.m` can name a member of: a type, or a TS namespace
/// (`util.assertEqual` with `namespace util { export const assertEqual … }`).
fn holds_members(kind: &str) -> bool {
    is_type_kind(kind) || kind == "namespace"
}

fn is_abstract(kind: &str) -> bool {
    matches!(kind, "trait" | "interface")
}

fn is_callable(kind: &str) -> bool {
    matches!(kind, "fn" | "method")
}

/// Separators of a family: between module and item, between items.
fn seps(fam: Family) -> (&'static str, &'static str) {
    match fam {
        Family::Rust => ("::", "::"),
        Family::Python => (".", "."),
        Family::Ts => (":", "."),
        Family::Go => (".", "."),
    }
}

fn join(module: &str, module_sep: &str, item: &str) -> String {
    if module.is_empty() {
        item.to_string()
    } else {
        format!("{module}{module_sep}{item}")
    }
}

/// The bare name of a chain step (`"::new"` → `new`).
fn bare(s: &str) -> &str {
    s.strip_prefix("::").unwrap_or(s)
}

/// How deep type and base lookups go (a base of a base …): cycles in bad code
/// stop here.
const MAX_DEPTH: usize = 12;

/// One file as call resolution sees it: its imports' local names bound to
/// what they resolved to, its symbols, its sites and facts.
struct FileCx<'a, 's> {
    fi: usize,
    f: &'a RFile,
    fam: Family,
    pkg: &'a str,
    syms: &'a [RSymbol],
    sites: &'s FileSites,
    /// Local name → the imports that bind it (their positions in the
    /// file's), in file order.
    binders: FxMap<String, Vec<usize>>,
    /// Per import, what it resolved to (`Resolver::bindings`).
    bound: Vec<std::sync::OnceLock<Bound>>,
    /// Rust: the modules and enums the file's glob imports name: made on
    /// the first ask while the file is resolved (`Resolver::glob_homes`).
    globs: std::sync::OnceLock<Vec<GlobHome<'a>>>,
    /// The facts and heritage sites by what they are looked up by (a
    /// file's lookups are per site: scans would make them quadratic).
    ix: FactIndex<'s>,
    /// Python: the locals (owner, name) whose bindings' types are being
    /// worked out (`Resolver::rebound_members`). A binding that names its
    /// own local (`line = line.strip()`) would work them all out again, at
    /// each depth: exponential in how often the name is bound.
    rebinding: std::sync::Mutex<Vec<(u32, String)>>,
}

/// A module or enum a Rust glob import names: (its crate, its qualified
/// name, the inline module the import is written in, by its qualified name;
/// `None` at the file's top level).
type GlobHome<'a> = (&'a str, String, Option<String>);

/// What one import resolved to (external targets left out), with the keys and
/// finds of the lookups that resolved it. The file being resolved has its
/// imports resolved already; another file's are resolved when a lookup
/// needs them (a callee's return type needs one import of its file, and
/// resolving them all, through libc's glob fans, was most of re-indexing ten
/// files).
#[derive(Default)]
struct Bound {
    targets: Vec<Target>,
    deps: Vec<u64>,
    found: FxMap<String, (Family, String, String)>,
}

impl FileCx<'_, '_> {
    /// The id of the symbol at `owner` (empty: the file).
    fn owner_id(&self, owner: u32) -> Id {
        if owner == IN_FILE {
            return Id::default();
        }
        self.syms
            .get(owner as usize)
            .map(|s| Id::from(&*s.id))
            .unwrap_or_default()
    }

    /// Whether an import binds `name`.
    fn binds(&self, name: &str) -> bool {
        self.binders.contains_key(name)
    }

    /// The import that binds `name` (the last one, when several do).
    fn binder(&self, name: &str) -> Option<usize> {
        self.binders.get(name).and_then(|v| v.last().copied())
    }

    /// Python: whether an `import word.sub` binds `word` (no edge says so:
    /// `local_name`).
    fn dotted_import(&self, word: &str) -> bool {
        self.f.imports.iter().any(|imp| {
            imp.alias.is_empty()
                && matches!(&imp.spec, crate::model::ImportSpec::Python { module, name: None }
                    if module.strip_prefix(word).is_some_and(|r| r.starts_with('.')))
        })
    }
}

type Fact = crate::model::sites::Fact;

/// A file's facts and heritage sites, indexed.
#[derive(Default)]
struct FactIndex<'a> {
    /// (owner, name) → the last local (variable, parameter, receiver).
    locals: FxMap<(u32, &'a str), &'a Fact>,
    /// Every binding of a local or receiver, in source order (a rebinding's
    /// initialiser may name the one before: `unshadowed`).
    bindings: FxMap<(u32, &'a str), Vec<&'a Fact>>,
    receivers: FxMap<u32, &'a Fact>,
    fields: FxMap<(u32, &'a str), &'a Fact>,
    returns: FxMap<u32, &'a Fact>,
    /// Rust: (function, position) → the type of that element of the tuple
    /// it returns (`Returns` facts named by position).
    tuple_returns: FxMap<(u32, &'a str), &'a Fact>,
    /// What a Python function yields first (a pytest fixture's value).
    yields: FxMap<u32, &'a Fact>,
    /// A Python function's or class's decorators.
    decorators: FxMap<u32, Vec<&'a Fact>>,
    bounds: FxMap<(u32, &'a str), &'a Fact>,
    /// Type alias → its target.
    aliases: FxMap<u32, &'a Fact>,
    /// (function or alias, position) → the parameter type declared there
    /// (`FactKind::Param`).
    params: FxMap<(u32, &'a str), &'a Fact>,
    /// Rust methods that take `self` by value (`FactKind::SelfByValue`).
    self_by_value: FxMap<u32, &'a Fact>,
    /// Rust impl blocks for a reference type (`FactKind::ImplForRef`).
    impls_for_ref: FxMap<u32, &'a Fact>,
    /// Rust impl blocks of a generic trait: its first type argument's shape
    /// (`FactKind::ImplTraitArg`).
    impl_args: FxMap<u32, &'a Fact>,
    /// Rust inherent impl blocks of a type with type arguments: those
    /// arguments (`FactKind::ImplSelfArgs`).
    impl_self_args: FxMap<u32, &'a Fact>,
    /// Extends/Implements sites by owner.
    heritage: FxMap<u32, Vec<&'a RawSite>>,
    /// Symbol id → position.
    ids: FxMap<&'a str, u32>,
    /// Qualified name → positions, in order.
    by_qn: FxMap<&'a str, Vec<u32>>,
}

impl<'a> FactIndex<'a> {
    fn new(sites: &'a FileSites, syms: &'a [RSymbol]) -> FactIndex<'a> {
        let mut ix = FactIndex::default();
        for f in &sites.facts {
            let key = (f.owner, f.name.as_str());
            match f.kind {
                FactKind::Local => {
                    ix.locals.insert(key, f);
                    ix.bindings.entry(key).or_default().push(f);
                }
                FactKind::Receiver => {
                    ix.locals.insert(key, f);
                    ix.receivers.entry(f.owner).or_insert(f);
                    ix.bindings.entry(key).or_default().push(f);
                }
                FactKind::Field => {
                    ix.fields.entry(key).or_insert(f);
                }
                FactKind::Returns if f.chain.first().is_some_and(|c| c == YIELDS) => {
                    ix.yields.entry(f.owner).or_insert(f);
                }
                FactKind::Returns if !f.name.is_empty() => {
                    ix.tuple_returns.insert(key, f);
                }
                FactKind::Returns => {
                    ix.returns.entry(f.owner).or_insert(f);
                }
                FactKind::Decorator => {
                    ix.decorators.entry(f.owner).or_default().push(f);
                }
                FactKind::Bound => {
                    ix.bounds.entry(key).or_insert(f);
                }
                FactKind::Alias => {
                    ix.aliases.entry(f.owner).or_insert(f);
                }
                FactKind::Param => {
                    ix.params.entry(key).or_insert(f);
                }
                FactKind::SelfByValue => {
                    ix.self_by_value.insert(f.owner, f);
                }
                FactKind::ImplForRef => {
                    ix.impls_for_ref.insert(f.owner, f);
                }
                FactKind::ImplTraitArg => {
                    ix.impl_args.insert(f.owner, f);
                }
                FactKind::ImplSelfArgs => {
                    ix.impl_self_args.insert(f.owner, f);
                }
                // Read by module lookups (`typescript::ts_name`), not here.
                FactKind::Export => {}
            }
        }
        for all in ix.bindings.values_mut() {
            all.sort_by_key(|f| f.byte);
        }
        for site in &sites.sites {
            if matches!(site.kind, SiteKind::Extends | SiteKind::Implements) {
                ix.heritage.entry(site.owner).or_default().push(site);
            }
        }
        for (i, s) in syms.iter().enumerate() {
            ix.ids.entry(&s.id).or_insert(i as u32);
            ix.by_qn
                .entry(&s.qualified_name)
                .or_default()
                .push(i as u32);
        }
        ix
    }
}

/// Resolution of one file's sites, with the contexts of other files it
/// looked into (a callee's return type is written in the callee's file).
pub(super) struct Resolver<'i, 'a, 's> {
    ix: &'i Index<'a>,
    /// The file being resolved.
    own: RefCell<Option<std::sync::Arc<FileCx<'a, 's>>>>,
    shared: &'i CxCache<'a, 's>,
    /// The (file, import) of other files whose lookups' keys and finds this
    /// file has taken on already.
    taken: RefCell<FxSet<(usize, usize)>>,
}

/// Other files' contexts, made once a chunk of files for every file the
/// chunk looks into (a type's file, a callee's); their imports are resolved
/// when asked (`Resolver::bindings`). `'s` is the chunk's: the contexts read
/// its decoded sites (`ChunkSites`), `'a` the run's tables.
pub(super) struct CxCache<'a, 's> {
    slots: Vec<std::sync::OnceLock<std::sync::Arc<FileCx<'a, 's>>>>,
    sites: &'s ChunkSites<'a>,
}

impl<'a, 's> CxCache<'a, 's> {
    pub(super) fn new(sites: &'s ChunkSites<'a>) -> Self {
        CxCache {
            slots: (0..sites.files.len())
                .map(|_| std::sync::OnceLock::new())
                .collect(),
            sites,
        }
    }
}

/// The files' sites and facts a chunk of files reads: its own files' and
/// those of the files its lookups look into, decoded once for the chunk
/// (`Lazy::value_or_decoded`) and let go with it. A file whose sites are
/// decoded already (made by this run, or read by an earlier ask) lends them.
pub(super) struct ChunkSites<'a> {
    files: &'a [RFile],
    slots: Vec<std::sync::OnceLock<FileSites>>,
}

impl<'a> ChunkSites<'a> {
    pub(super) fn new(files: &'a [RFile]) -> ChunkSites<'a> {
        ChunkSites {
            files,
            slots: (0..files.len())
                .map(|_| std::sync::OnceLock::new())
                .collect(),
        }
    }

    fn of(&self, fi: usize) -> &FileSites {
        let sites = &self.files[fi].sites;
        if sites.is_decoded() {
            return sites;
        }
        self.slots[fi].get_or_init(|| sites.value_or_decoded().into_owned())
    }
}

impl<'i, 'a: 's, 's> Resolver<'i, 'a, 's> {
    pub(super) fn new(ix: &'i Index<'a>, shared: &'i CxCache<'a, 's>) -> Resolver<'i, 'a, 's> {
        Resolver {
            ix,
            own: RefCell::new(None),
            shared,
            taken: RefCell::new(FxSet::default()),
        }
    }

    fn cx(
        &self,
        fi: usize,
        own: Option<&[(usize, Vec<Target>)]>,
    ) -> std::sync::Arc<FileCx<'a, 's>> {
        if let Some(c) = self.own.borrow().as_ref().filter(|c| c.fi == fi) {
            return c.clone();
        }
        if let Some(own) = own {
            let c =
                std::sync::Arc::new(Self::make(self.ix.tables, self.shared.sites, fi, Some(own)));
            *self.own.borrow_mut() = Some(c.clone());
            return c;
        }
        // Another file: made once a run, its imports resolved when asked. A
        // user depends on the file's imports and facts (its import list and
        // facts are what the context is made of).
        let path = &self.ix.files[fi].path;
        self.ix
            .deps
            .borrow_mut()
            .extend([key(&["i", path]), super::facts_key(path)]);
        self.shared.slots[fi]
            .get_or_init(|| {
                std::sync::Arc::new(Self::make(self.ix.tables, self.shared.sites, fi, None))
            })
            .clone()
    }

    /// What the imports binding `name` in `cx`'s file resolved to (several
    /// imports may bind one name), resolving another file's on first ask.
    fn bindings<'c>(
        &self,
        cx: &'c FileCx<'a, 's>,
        name: &str,
    ) -> Option<std::borrow::Cow<'c, [Target]>> {
        let binders = cx.binders.get(name)?;
        let mut each = binders.iter().map(|&i| self.import_bound(cx, i));
        let first = each.next()?;
        Some(match each.next() {
            None => std::borrow::Cow::Borrowed(first.as_slice()),
            Some(second) => {
                let mut all = first.clone();
                all.extend(second.iter().cloned());
                all.extend(each.flat_map(|t| t.iter().cloned()));
                std::borrow::Cow::Owned(all)
            }
        })
    }

    /// Import `i` of `cx`'s file resolved, its lookups' keys and finds taken
    /// on by the file being resolved.
    fn import_bound<'c>(&self, cx: &'c FileCx<'a, 's>, i: usize) -> &'c Vec<Target> {
        let b = cx.bound[i].get_or_init(|| {
            let f = cx.f;
            let probe = Index {
                tables: self.ix.tables,
                deps: RefCell::new(Vec::new()),
                origin: &f.path,
                origin_used: std::cell::Cell::new(false),
                rust_cache: self.ix.rust_cache,
                found: Default::default(),
            };
            let targets = super::resolve_one(&probe, cx.fi, &f.imports[i], 0)
                .into_iter()
                .filter(|t| !matches!(t, Target::External(_)))
                .collect();
            Bound {
                targets,
                deps: probe.deps.into_inner(),
                found: probe.found.into_inner(),
            }
        });
        if !(b.deps.is_empty() && b.found.is_empty()) && self.taken.borrow_mut().insert((cx.fi, i))
        {
            self.ix.deps.borrow_mut().extend(b.deps.iter().copied());
            let mut mine = self.ix.found.borrow_mut();
            for (k, v) in &b.found {
                if !mine.contains_key(k) {
                    mine.insert(k.clone(), v.clone());
                }
            }
        }
        &b.targets
    }

    /// A file's context, with its imports' targets when they are resolved
    /// already (the file being resolved).
    fn make(
        tables: &'a super::Tables<'a>,
        chunk: &'s ChunkSites<'a>,
        fi: usize,
        resolved: Option<&[(usize, Vec<Target>)]>,
    ) -> FileCx<'a, 's> {
        let files: &'a [RFile] = tables.files;
        let f = &files[fi];
        let fam = family(f.language);
        let imports = &f.imports;
        let mut binders: FxMap<String, Vec<usize>> = FxMap::default();
        for (i, imp) in imports.iter().enumerate() {
            if imp.reexport && fam == Family::Ts {
                continue;
            }
            if let Some(local) = local_name(fam, imp) {
                binders.entry(local).or_default().push(i);
            }
        }
        let bound: Vec<std::sync::OnceLock<Bound>> =
            imports.iter().map(|_| std::sync::OnceLock::new()).collect();
        for (i, targets) in resolved.into_iter().flatten() {
            let targets = targets
                .iter()
                .filter(|t| !matches!(t, Target::External(_)))
                .cloned()
                .collect();
            let _ = bound[*i].set(Bound {
                targets,
                ..Bound::default()
            });
        }
        let pkg = if fam == Family::Rust {
            f.package.as_str()
        } else {
            ""
        };
        let sites: &'s FileSites = chunk.of(fi);
        let syms: &'a [RSymbol] = &f.symbols;
        FileCx {
            fi,
            f,
            fam,
            pkg,
            syms,
            sites,
            binders,
            bound,
            globs: std::sync::OnceLock::new(),
            ix: FactIndex::new(sites, syms),
            rebinding: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Resolves every site of file `fi` (whose imports resolved to `own`).
    /// The edges of an `extends`/`implements` clause (`from`: its owner's id):
    /// EXTENDS or IMPLEMENTS from the type it is about, and a REFERENCES.
    fn heritage(
        &self,
        cx: &FileCx<'a, 's>,
        site: &RawSite,
        found: Option<(Sym<'a>, Tier)>,
        from: Id,
        out: &mut Vec<SiteEdge>,
    ) {
        let Some((target, tier)) = found else {
            // Kept by its name: a subtype no tier tied to its
            // supertype makes `find_implementations` of a type of
            // that name a lower bound.
            out.extend(unresolved_edge(cx.fam, from, site));
            return;
        };
        // From the type the clause is about: the class (or
        // trait, or struct) declaring it, or for `impl Trait for
        // Type` the type the impl is for (which another file
        // may define): the struct, not the impl block.
        let Some(owner) = cx.syms.get(site.owner as usize) else {
            return;
        };
        let from_id = if owner.kind == "impl" {
            match self.type_of_impl(cx, owner) {
                Some(s) => Id::from(s.id),
                None => return,
            }
        } else {
            Id::from(&*owner.id)
        };
        let rel = if site.kind == SiteKind::Extends
            || (cx.fam != Family::Rust && !is_abstract(target.kind))
        {
            // A Python/TS class "implementing" a class extends it.
            Rel::Extends
        } else {
            Rel::Implements
        };
        let rel = if site.kind == SiteKind::Extends
            && cx.fam == Family::Go
            && !is_abstract(target.kind)
        {
            Rel::Extends
        } else {
            rel
        };
        out.push(SiteEdge {
            rel,
            from: from_id.clone(),
            to: Id::from(target.id),
            line: site.line,
            col: site.col,
            tier,
            kind: site.kind,
            to_name: Id::default(),
        });
        out.push(SiteEdge {
            rel: Rel::References,
            from: Id::from(&*owner.id),
            to: Id::from(target.id),
            line: site.line,
            col: site.col,
            tier,
            kind: site.kind,
            to_name: Id::default(),
        });
    }

    pub(super) fn resolve_file(&self, fi: usize, own: &[(usize, Vec<Target>)]) -> Vec<SiteEdge> {
        let cx = self.cx(fi, Some(own));
        let mut out = Vec::new();
        type Key<'k> = (u32, SiteKind, &'k [Step]);
        type Found<'k> = Option<(Sym<'k>, Tier)>;
        let mut memo: FxMap<Key<'s>, Found<'a>> = FxMap::default();
        let mut by_name: FxMap<(u32, &'s [Step]), Option<Sym<'a>>> = FxMap::default();
        let mut receivers: FxMap<(u32, &'s [Step]), Found<'a>> = FxMap::default();
        let mut twins: FxMap<&'a str, (Vec<Sym<'a>>, bool)> = FxMap::default();
        let mut library: FxMap<(u32, &'s [Step]), Vec<Sym<'a>>> = FxMap::default();
        let sites: &'s [RawSite] = &cx.sites.sites;
        // Built the first time a value site lands on a type (Python and
        // TypeScript only): most files never need it.
        let stated = std::cell::OnceCell::new();
        for site in sites {
            let from = |owner: u32| cx.owner_id(owner);
            // A marked chain is resolved by a rule of its own.
            if self.marked_site(&cx, site, &mut out) {
                continue;
            }
            // What the call is written as, its turbofish and its argument's
            // shape left out.
            let (turbofish, chain) = type_args(&site.chain);
            let chain: &'s [Step] = argument(chain).map_or(chain, |(_, p)| p);
            // A site's target depends on its owner, kind and chain only (not
            // on where in the owner it is): a file's repeated sites (`b.Fatalf`
            // in one test, a receiver used as a value before each call on it)
            // are resolved once.
            let found = *memo
                .entry((site.owner, site.kind, site.chain.as_slice()))
                .or_insert_with(|| match site.kind {
                    SiteKind::Call => self.called(&cx, site.owner, &site.chain, 0),
                    SiteKind::Value => self.value_target(&cx, site.owner, &site.chain),
                    SiteKind::Iterates => self.loop_target(&cx, site.owner, &site.chain),
                    _ => self.type_target(&cx, site.owner, &site.chain, 0),
                });
            if found.is_none() && site.kind == SiteKind::Call {
                let classes = library
                    .entry((site.owner, chain))
                    .or_insert_with(|| self.library_receivers(&cx, site.owner, chain));
                out.extend(classes.iter().map(|t| library_edge(&cx, site, *t)));
            }
            match site.kind {
                SiteKind::Extends | SiteKind::Implements => {
                    self.heritage(&cx, site, found, from(site.owner), &mut out);
                }
                // Unproven, a loop is left to the answers about `next`s
                // (each implements std's `Iterator`: `outside_override`).
                SiteKind::Iterates => {
                    out.extend(found.map(|f| loop_edge(cx.fam, from(site.owner), site, f)));
                }
                SiteKind::Value
                    if found.is_some_and(|(t, _)| is_type_kind(t.kind))
                        && (stated.get_or_init(|| stated_positions(sites)))
                            .binary_search(&(site.line, site.col))
                            .is_ok() => {}
                _ => match found {
                    // A name built apart (`built_apart`) is an edge to each.
                    Some((target, tier)) => {
                        let (twins, by_argument) =
                            twins.entry(target.id).or_insert_with(|| self.twins(target));
                        // One of impls told apart by a type argument runs:
                        // each is an edge, none proven the one. Not for a call
                        // on `self` of the method's own block, whose arguments
                        // pick it.
                        let written = (*by_argument)
                            .then(|| turbofish.and_then(|a| self.by_turbofish(target, twins, a)))
                            .flatten();
                        let (target, twins, tier) = match (*by_argument, tier) {
                            (true, Tier::SelfTier)
                                if self.in_own_block(&cx, site.owner, target) =>
                            {
                                (target, &[][..], tier)
                            }
                            // The turbofish names the block (`T::<2>::f`).
                            (true, _) if let Some(one) = written => (one, &[][..], tier),
                            (true, _) => (target, &twins[..], tier.max(Tier::Dispatch)),
                            (false, _) => (target, &twins[..], tier),
                        };
                        let runs = self.library_runs(&cx, &site.chain, target);
                        for t in std::iter::once(target)
                            .chain(twins.iter().copied())
                            .chain(runs)
                        {
                            out.push(found_edge(cx.fam, from(site.owner), site, t, tier));
                        }
                    }
                    // A Go builtin or conversion (`len(x)`, `uintptr(p)`):
                    // no tier found a definition in the package, so it is the
                    // universe's: neither a `name` edge nor unresolved.
                    None if cx.fam == Family::Go
                        && site.kind == SiteKind::Call
                        && matches!(&*site.chain, [one] if super::std_names::is_go_predeclared(one)) =>
                        {}
                    // `super().m()` of a class whose bases are all the
                    // language's or a library's: nothing here can be it.
                    None if site.kind == SiteKind::Call
                        && self.super_outside(&cx, site.owner, chain) => {}
                    // A call on a module or value outside the repo
                    // (`subprocess.run()`, `self.lines.append()` of a list):
                    // the library's, none of the repo's.
                    None if site.kind == SiteKind::Call
                        && chain.len() > 1
                        && self.typed_outside(&cx, site.owner, &chain[..chain.len() - 1])
                        && !self.repo_may_define(&cx, site.owner, chain) => {}
                    None if site.kind == SiteKind::Call => {
                        let named = *by_name
                            .entry((site.owner, chain))
                            .or_insert_with(|| self.name_target(&cx, site.owner, chain));
                        if let Some(target) = named {
                            out.push(SiteEdge {
                                rel: Rel::Calls,
                                from: from(site.owner),
                                to: Id::from(target.id),
                                line: site.line,
                                col: site.col,
                                tier: Tier::Name,
                                kind: SiteKind::Call,
                                to_name: written(cx.fam, &site.chain),
                            });
                        } else if self.may_be_repos(&cx, chain)
                            && !self.python_builtin_call(&cx, site.owner, chain)
                        {
                            out.extend(unresolved_edge(cx.fam, from(site.owner), site));
                        }
                    }
                    None => {}
                },
            }
            if site.kind == SiteKind::Call
                && let Some(receiver) = named_receiver(cx.fam, chain)
            {
                let held = *receivers
                    .entry((site.owner, receiver))
                    .or_insert_with(|| self.held_value(&cx, site.owner, receiver));
                if let Some((value, tier)) = held {
                    out.push(read_edge(from(site.owner), site, value, tier));
                }
            }
        }
        if matches!(cx.fam, Family::Ts | Family::Python) {
            self.property_reads(&cx, sites, &mut out);
        }
        if cx.fam == Family::Go {
            self.go_implements(&cx, &mut out);
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// A site whose chain a marker heads or ends (a fixture request, an
    /// attribute written, an object handed over, a computed member, a
    /// namespace's any member, a `collect()`), resolved by its own rule into
    /// `out`. Whether it was one.
    fn marked_site(&self, cx: &FileCx<'a, 's>, site: &'s RawSite, out: &mut Vec<SiteEdge>) -> bool {
        let from = |owner: u32| cx.owner_id(owner);
        let (first, last) = match (site.chain.first(), site.chain.last()) {
            (Some(f), Some(l)) => (f.as_str(), l.as_str()),
            _ => return false,
        };
        match (first, last) {
            (FIXTURE, _) => out.extend(self.fixture_request(cx, site)),
            (_, WRITTEN) => self.written_property(cx, site, out),
            (HANDED, _) => out.extend(self.handed(cx, site)),
            // A name a computed member call may call: never proven.
            (DYNAMIC, _) => out.extend(unresolved_edge(cx.fam, from(site.owner), site)),
            // Any member of a module namespace: each function it exports.
            (_, EVERY) => {
                let object = &site.chain[..site.chain.len() - 1];
                self.namespace_call(cx, site, object, out);
            }
            // `collect()` into a type the code writes: its `from_iter`.
            (_, COLLECTED) => {
                let into = &site.chain[..site.chain.len() - 1];
                if let Some((m, tier)) = self.collected_into(cx, site.owner, into) {
                    out.push(found_edge(cx.fam, from(site.owner), site, m, tier));
                }
            }
            _ => return false,
        }
        true
    }

    /// Python: a bare call of a builtin (`len(x)`, `set()`) that nothing in
    /// the file binds, a local, an import or a glob import: the language's,
    /// never the repo's. Kept as unproven, it made every repo function of
    /// that name a lower bound.
    fn python_builtin_call(&self, cx: &FileCx<'a, 's>, owner: u32, chain: &[Step]) -> bool {
        let [name] = chain else {
            return false;
        };
        cx.fam == Family::Python
            && super::std_names::is_python_builtin(name)
            && !cx.binds(name)
            && self.local_fact(cx, owner, name).is_none()
            && self.glob_target(cx, owner, name).is_none()
    }

    /// Whether an unproven call is kept (`UNRESOLVED`): any but a method of a
    /// name the repo defines no method of on an unknown receiver, a bare Rust
    /// `Ok(…)`/`Some(…)` (the prelude's) and a Rust macro no `macro_rules!`
    /// of the caller's crate is named as. Another
    /// crate's (`debug!` of `log` and of `tracing`, `bail!`) is left to the
    /// answers about such a macro (`completeness::macro_site`): a row per
    /// logging call would be a fifth of all.
    fn may_be_repos(&self, cx: &FileCx<'a, 's>, chain: &[Step]) -> bool {
        match chain.last() {
            // A method on a receiver no chain names (`(a + b).m()`): kept
            // when the repo defines a method of that name, the only answers
            // it could be missing from.
            Some(l) if chain.len() == 2 && chain[0] == "?" => {
                !self.ix.callables_named(cx.fam, l, true).is_empty()
            }
            // The prelude's variants, unless something binds the name.
            Some(l)
                if cx.fam == Family::Rust
                    && chain.len() == 1
                    && matches!(l.as_str(), "Ok" | "Err" | "Some") =>
            {
                false
            }
            Some(l) if cx.fam == Family::Rust && l.ends_with('!') => {
                let here = self.pkg_of(Some(cx.fi));
                self.ix
                    .callables_named(cx.fam, l.trim_start_matches("::"), false)
                    .iter()
                    .any(|(fi, _)| self.pkg_of(Some(*fi as usize)) == here)
            }
            _ => true,
        }
    }

    /// The method `name` of the impl block around `owner`, when several
    /// blocks of this file define one of that qualified name (generic impls
    /// for different parameters); `None` when the name is unique or not here.
    fn in_own_impl(&self, cx: &FileCx<'a, 's>, owner: u32, name: &str) -> Option<Sym<'a>> {
        let mut cur = (owner != IN_FILE).then_some(owner as usize);
        let mut guard = 0;
        while let Some(i) = cur {
            let s = cx.syms.get(i)?;
            if s.kind == "impl" {
                let qn = format!("{}::{name}", s.qualified_name);
                let same: &Vec<u32> = cx.ix.by_qn.get(qn.as_str())?;
                if same.len() < 2 {
                    return None;
                }
                let &m = same
                    .iter()
                    .find(|&&m| parent_index(cx, m as usize) == Some(i))?;
                let m = &cx.syms[m as usize];
                self.ix.dep(&["q", fam_str(cx.fam), cx.pkg, &qn]);
                return Some(Sym {
                    id: &m.id,
                    qn: &m.qualified_name,
                    kind: m.kind,
                    file: cx.fi,
                });
            }
            cur = parent_index(cx, i);
            guard += 1;
            if guard > 16 {
                return None;
            }
        }
        None
    }

    /// TS: the module file `receiver` names, segment by segment: an import
    /// bound to a module file, then members that are modules (`export * as
    /// n from`, `import * as n` exported again). `None` for anything else.
    fn ts_module_of(&self, cx: &FileCx<'a, 's>, owner: u32, receiver: &[Step]) -> Option<usize> {
        let (first, rest) = receiver.split_first()?;
        if self.local_fact(cx, owner, first).is_some() {
            return None;
        }
        let mut fi = match &*self.bindings(cx, first)? {
            [Target::File(id)] => self.ix.file_by_id(id)?,
            _ => return None,
        };
        for seg in rest {
            fi = match super::typescript::ts_export(self.ix, fi, seg).as_slice() {
                [Target::File(id)] => self.ix.file_by_id(id)?,
                _ => return None,
            };
        }
        Some(fi)
    }

    /// A computed member of `object` called (`model::sites::EVERY`): a
    /// `dispatch` edge to each function a module namespace exports, and the
    /// functions its modules define that it may export too left unproven.
    fn namespace_call(
        &self,
        cx: &FileCx<'a, 's>,
        site: &RawSite,
        object: &[Step],
        out: &mut Vec<SiteEdge>,
    ) {
        let from = cx.owner_id(site.owner);
        let (found, unproven) = self.namespace_functions(cx, site.owner, object);
        for t in found {
            out.push(found_edge(cx.fam, from.clone(), site, t, Tier::Dispatch));
        }
        out.extend(unproven.iter().map(|n| SiteEdge {
            rel: Rel::Unresolved,
            from: from.clone(),
            to: Id::from(n.as_str()),
            line: site.line,
            col: site.col,
            tier: Tier::Name,
            kind: SiteKind::Call,
            to_name: written(cx.fam, &site.chain),
        }));
    }

    /// TS: the functions the module namespace `object` names exports
    /// (`z.locales`, `export * as locales from "./locales/index.js"`, or a
    /// local bound to it: `const locales = z.locales as …`), for a computed
    /// member of it called (`locales[name]!()`, `model::sites::EVERY`). Only
    /// what the module exports by name from elsewhere or by an `export { … }`
    /// clause is proven (`typescript::ts_export_names`); the names of the
    /// functions its modules define themselves, which it may export, come
    /// second: left unproven.
    fn namespace_functions(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        object: &[Step],
    ) -> (Vec<Sym<'a>>, Vec<String>) {
        if cx.fam != Family::Ts {
            return (Vec::new(), Vec::new());
        }
        let bound = match object {
            [one] => self.local_fact(cx, owner, one),
            _ => None,
        };
        let module = match bound {
            Some(f) if f.kind == FactKind::Local => self.ts_module_of(cx, f.owner, &f.chain),
            Some(_) => None,
            None => self.ts_module_of(cx, owner, object),
        };
        let Some(mf) = module else {
            return (Vec::new(), Vec::new());
        };
        let (mut names, mut own) = (Vec::new(), Vec::new());
        super::typescript::ts_export_names(self.ix, mf, 0, (&mut names, &mut own));
        let mut found: Vec<Sym<'a>> = names
            .iter()
            .filter_map(|n| self.single_symbol(&super::typescript::ts_export(self.ix, mf, n)))
            .filter(|s| is_callable(s.kind))
            .collect();
        found.sort_by_key(|s| s.id);
        found.dedup_by_key(|s| s.id);
        own.retain(|n| {
            !found
                .iter()
                .any(|s| s.qn.rsplit(':').next() == Some(n.as_str()))
        });
        own.sort();
        own.dedup();
        (found, own)
    }

    /// The one symbol among `targets`, if they name exactly one.
    fn single_symbol(&self, targets: &[Target]) -> Option<Sym<'a>> {
        let mut ids = targets.iter().filter_map(|t| match t {
            Target::Symbol(id) => Some(id),
            _ => None,
        });
        let id = ids.next()?;
        if ids.any(|x| x != id) {
            return None;
        }
        self.by_id(id)
    }

    /// The `name` tier, for a call no other tier proved: the one callable of
    /// its name in the caller's package (Go/Python/TS: its directory; Rust:
    /// its crate), or else the one in the repo. A bare call can only name a
    /// function, `x.m()` only a method. A call through an import (an external
    /// module, a type from elsewhere), a Rust path, `new X` or a chain of
    /// calls is left alone: those name things the repo may not define.
    fn name_target(&self, cx: &FileCx<'a, 's>, owner: u32, chain: &[Step]) -> Option<Sym<'a>> {
        let (last, receiver) = chain.split_last()?;
        // A receiver no chain names (`(a + b).m()`, `["?", m]`) says
        // nothing of its type: no guess.
        if last.starts_with("::")
            || matches!(last.as_str(), "()" | "{}" | "?" | "#new")
            || receiver.iter().any(|c| c.starts_with("::") || c == "#new")
            || receiver == ["?"]
        {
            return None;
        }
        let kind = if receiver.is_empty() {
            // A local, parameter or import of that name is what is called;
            // a bare Rust `Ok(…)`/`Some(…)` is the prelude's variant (not
            // `anyhow::Ok`, the one function so named).
            if cx.ix.locals.contains_key(&(owner, last.as_str()))
                || cx.binds(last)
                || (cx.fam == Family::Rust && matches!(last.as_str(), "Ok" | "Err" | "Some"))
                // A builtin the file does not bind: the language's (flask's
                // tests nest a `def set()` in a test, which took every `set()`).
                || (cx.fam == Family::Python && super::std_names::is_python_builtin(last))
            {
                return None;
            }
            "fn"
        } else {
            let head = receiver[0].as_str();
            // Through an import, or a method of the language's own types by
            // that name (most likely the library's, whatever the repo defines).
            if cx.binds(head) || super::std_names::is_std_method(cx.fam, last) {
                return None;
            }
            "method"
        };
        let group = |fi: usize| -> &'a str {
            let f: &'a RFile = &self.ix.files[fi];
            if cx.fam == Family::Rust {
                f.package.as_str()
            } else {
                super::dir_of(&f.path)
            }
        };
        let here = group(cx.fi);
        let files: &'a [RFile] = self.ix.files;
        let found: Vec<&(u32, u32)> = self
            .ix
            .callables_named(cx.fam, last, kind == "method")
            .iter()
            .collect();
        let in_package: Vec<&&(u32, u32)> = found
            .iter()
            .filter(|(fi, _)| group(*fi as usize) == here)
            .collect();
        // A method of unknown receiver must be the only one of its name in
        // the repo: a package's own method of that name is no evidence that
        // a value from elsewhere (a client, a subscription) is of its type.
        // Most names the tier is asked about are defined nowhere or twice:
        // the receiver's checks below (type lookups) only for a candidate.
        let &&(fi, si) = match (in_package.as_slice(), found.as_slice()) {
            (_, [one]) => one,
            ([one], _) if kind == "fn" => *one,
            _ => return None,
        };
        if let Some(head) = receiver.first() {
            // A receiver of a known type that lacks the method as a symbol (a
            // class field, an inherited external method), or whose type is
            // written down but is not the repo's: not this tier's.
            if self.value_type(cx, owner, receiver, 1).is_some()
                || self.typed_outside(cx, owner, receiver)
            {
                return None;
            }
            // A value the repo defines (`const z = { ...schemas }`): what it
            // holds is written there, not guessed from a name.
            if receiver.len() == 1
                && self.local_fact(cx, owner, head).is_none()
                && self
                    .bare_name(cx, owner, head, false)
                    .is_some_and(|(s, _)| !is_type_kind(s.kind))
            {
                return None;
            }
        }
        let s: &'a RSymbol = &files[fi as usize].symbols[si as usize];
        Some(Sym {
            id: &s.id,
            qn: &s.qualified_name,
            kind: s.kind,
            file: fi as usize,
        })
    }

    /// Whether the receiver's type is written down yet is none of the repo's:
    /// a literal (`items = []`), a built-in or library type (`self.lines:
    /// Vec<String>`, `w *bytes.Buffer`), a constructor of one (`Vec::new()`,
    /// `new Map()`), or a call on such a value (`xs.map(f)` of `xs:
    /// number[]`). Its methods are the language's or a library's, whatever
    /// the repo names the same. A value returned by a call of unknown type
    /// (`x := pkg.Open()`), or of a type the repo may define but no tier
    /// found, is not: nothing is known of it.
    fn typed_outside(&self, cx: &FileCx<'a, 's>, owner: u32, receiver: &[Step]) -> bool {
        // A receiver no chain names (`["?"]`, `unknown_receiver`): not known
        // to be a library value (a local's `["?"]` is a literal's, below).
        let Some(head) = receiver.first().filter(|_| receiver != ["?"]) else {
            return false;
        };
        if receiver.len() >= 2 && self.is_self(cx, owner, head) {
            let Some(t) = self.enclosing_type(cx, owner) else {
                return false;
            };
            let t = self.impl_target(cx, t);
            let tcx = self.cx(t.file, None);
            let Some(&ti) = tcx.ix.ids.get(t.id) else {
                return false;
            };
            return tcx
                .ix
                .fields
                .get(&(ti, receiver[1].as_str()))
                .is_some_and(|f| self.outside_chain(&tcx, ti, &f.chain, 0));
        }
        match self.local_fact(cx, owner, head) {
            // A name taken out of a tuple of no known element type proves
            // no library value: the name is read as before tuples were.
            Some(f) if !untupled(f) => self.outside_chain(cx, f.owner, &f.chain, 0),
            _ => self.outside_chain(cx, owner, receiver, 0),
        }
    }

    /// Whether `chain` is `super().m()` (Python) or `super.m()` (TS) in a
    /// class each of whose bases is outside the repo (`object`, `Exception`,
    /// `io.TextIOWrapper`): the method is never one of the repo's.
    fn super_outside(&self, cx: &FileCx<'a, 's>, owner: u32, chain: &[Step]) -> bool {
        let receiver = &chain[..chain.len().saturating_sub(1)];
        let is_super = (cx.fam == Family::Python && receiver == ["super", "()"])
            || (cx.fam == Family::Ts && receiver == ["super"]);
        if !is_super {
            return false;
        }
        let Some(class) = self.enclosing_type(cx, owner) else {
            return false;
        };
        let Some(&ci) = cx.ix.ids.get(class.id) else {
            return false;
        };
        cx.ix.heritage.get(&ci).into_iter().flatten().all(|site| {
            let name = bare(&site.chain[0]);
            self.outside_chain(cx, site.owner, &site.chain, 0)
                || (site.chain.len() == 1
                    && !cx.binds(name)
                    && self.bare_name(cx, site.owner, name, false).is_none())
        })
    }

    /// Python and TypeScript: the repo classes a call runs on when it calls a
    /// method that none of them defines and a library base provides
    /// (`client.get()` with `client: AppClient` and `class
    /// AppClient(werkzeug.test.Client)`; `super().open()` in it): the
    /// receiver's class and its repo ancestors, when one of them extends a
    /// type outside the repo. The library runs the call and may call back
    /// the class's own methods (its overrides) and what the instance holds
    /// (`application: App`, whose `__call__` the library calls), so
    /// `analyze_impact` steps from those to this site. Empty otherwise.
    fn library_receivers(&self, cx: &FileCx<'a, 's>, owner: u32, chain: &[Step]) -> Vec<Sym<'a>> {
        if !matches!(cx.fam, Family::Python | Family::Ts) || chain.len() < 2 {
            return Vec::new();
        }
        let (last, receiver) = chain.split_last().expect("two steps");
        let on_super = (cx.fam == Family::Python && receiver == ["super", "()"])
            || (cx.fam == Family::Ts && receiver == ["super"]);
        let class = if on_super || (receiver.len() == 1 && self.is_self(cx, owner, &receiver[0])) {
            self.enclosing_type(cx, owner)
        } else {
            self.value_type(cx, owner, receiver, 1).map(|(t, _)| t)
        };
        let Some(class) = class.filter(|t| t.kind == "class") else {
            return Vec::new();
        };
        // `super().open()` in the `open` a class overrides: its bases' only.
        let repos = if on_super {
            self.super_call(cx, owner, bare(last), 1).is_some()
        } else {
            self.member_or_base(class, bare(last), 1).is_some()
        };
        if repos {
            return Vec::new();
        }
        let mut line = vec![class];
        let mut at = 0;
        while at < line.len() && line.len() <= MAX_DEPTH {
            for (base, _) in self.bases(line[at], 1) {
                if base.kind == "class" && !line.iter().any(|t| t.id == base.id) {
                    line.push(base);
                }
            }
            at += 1;
        }
        // An attribute the repo's classes set (`self.x = …`, `x: T`) is theirs.
        let declared = |t: Sym<'a>| {
            let tcx = self.cx(t.file, None);
            (tcx.ix.ids.get(t.id)).is_some_and(|&ti| tcx.ix.fields.contains_key(&(ti, bare(last))))
        };
        if line.iter().any(|&t| self.library_based(t)) && !line.iter().any(|&t| declared(t)) {
            line
        } else {
            Vec::new()
        }
    }

    /// Whether class `t` names a base class the repo does not define
    /// (`werkzeug.test.Client`, `Exception`), past the language's markers
    /// that bring no methods to call (`object`, `Generic[T]`, `Protocol`).
    fn library_based(&self, t: Sym<'a>) -> bool {
        let tcx = self.cx(t.file, None);
        let Some(&ti) = tcx.ix.ids.get(t.id) else {
            return false;
        };
        tcx.ix.heritage.get(&ti).into_iter().flatten().any(|site| {
            let marker = site
                .chain
                .iter()
                .rev()
                .find(|c| !is_marker_step(c))
                .is_some_and(|c| {
                    matches!(
                        bare(c),
                        "object" | "Generic" | "Protocol" | "ABC" | "TypedDict" | "NamedTuple"
                    )
                });
            site.kind == SiteKind::Extends
                && !marker
                && self.type_target(&tcx, site.owner, &site.chain, 1).is_none()
        })
    }

    /// Whether a written type or value (`chain`, as facts hold them) is of a
    /// type the repo does not define (see `typed_outside`).
    fn outside_chain(&self, cx: &FileCx<'a, 's>, owner: u32, chain: &[Step], depth: usize) -> bool {
        let Some(head) = chain.first() else {
            return false;
        };
        if depth > MAX_DEPTH {
            return false;
        }
        // An element of something: of a type only its container says; a
        // callback's parameter: of the type its callee declares.
        if chain
            .last()
            .is_some_and(|c| c == ITERATES || c == COMPREHENDS)
            || callback(chain).is_some()
        {
            return false;
        }
        // A literal, or a type built in (`[]T`, `number[]`, a tuple, a closure).
        if chain.iter().any(|c| c == "?") {
            return true;
        }
        // A library's class or an instance it constructs, named through a
        // module imported from outside the repo (`threading.Thread(…)`,
        // `io.StringIO`). Not what its functions return: `pickle.loads(b)` or
        // `copy.copy(self)` may be of the repo's types.
        let h = bare(head);
        let names = match chain.last().map(Step::as_str) {
            Some("()") => &chain[..chain.len() - 1],
            _ => chain,
        };
        if names.len() > 1
            && matches!(cx.fam, Family::Python | Family::Ts)
            && !names.iter().any(|c| is_marker_step(c))
            && is_type_name(cx.fam, &names[names.len() - 1])
            && self.local_fact(cx, owner, h).is_none()
            && cx.binds(h)
            && self.bindings(cx, h).is_none_or(|t| t.is_empty())
        {
            return true;
        }
        if chain.last().is_some_and(|c| c == "()") && chain.first().is_none_or(|c| c != "#new") {
            // A constructor: `Vec::new()`, `Foo()` of a class no tier found
            // (of a repo type, `repo_may_define` says).
            let path_call = chain.iter().skip(1).any(|c| c.starts_with("::"));
            if (path_call || chain.len() == 2) && is_type_name(cx.fam, head) {
                return true;
            }
            // A call on a value: what that value is.
            return chain.len() > 2
                && match self.local_fact(cx, owner, head) {
                    // `let f = f.debug_struct("A")`: the `f` called on is the
                    // binding before (the latest is this one).
                    Some(f) if f.chain.first().is_some_and(|c| bare(c) == h) => self
                        .binding_before(cx, f, h)
                        .is_some_and(|b| self.outside_chain(cx, b.owner, &b.chain, depth + 1)),
                    Some(f) => self.outside_chain(cx, f.owner, &f.chain, depth + 1),
                    None => false,
                };
        }
        // A type written down (or `new X()`, `X{}`): one the language has, or
        // one from an import that resolved outside the repo.
        let name = chain
            .iter()
            .find(|c| *c != "#new")
            .map(|c| bare(c))
            .unwrap_or_default();
        builtin_type(cx.fam, name)
            || (cx.fam == Family::Ts
                && !cx.binds(name)
                && super::std_names::is_ts_global_type(name))
            || (cx.binds(name) && self.bindings(cx, name).is_none_or(|t| t.is_empty()))
            // A path from the language's own crates (`core::mem::ManuallyDrop`):
            // a module of the crate cannot take those names unless imported.
            || (cx.fam == Family::Rust
                && chain.len() > 1
                && matches!(name, "std" | "core" | "alloc")
                && !cx.binds(name))
    }

    /// Go: for each interface this file declares, the named types of its
    /// package whose method set (promoted methods included) holds all of
    /// the interface's (embedded interfaces included): IMPLEMENTS edges,
    /// owned by the interface's file. Within the package only.
    fn go_implements(&self, cx: &FileCx<'a, 's>, out: &mut Vec<SiteEdge>) {
        let interfaces: Vec<&'a RSymbol> =
            cx.syms.iter().filter(|s| s.kind == "interface").collect();
        if interfaces.is_empty() {
            return;
        }
        let group = cx.f.module.as_str();
        self.ix.dep(&["grp", "go", group]);
        let Some(&at) = self.ix.by_qn.get(&(Family::Go, "", group)) else {
            return;
        };
        let table = self.ix.definitions[at].table(self.ix.files);
        // Every qualified name of the package: a type's methods are
        // `T.m`; types are the names with one dot after the package.
        let mut types: Vec<&'a str> = Vec::new();
        let mut methods: FxMap<&'a str, Vec<&'a str>> = FxMap::default();
        for (qn, defs) in table.iter() {
            let Some(rest) = qn.strip_prefix(group).and_then(|r| r.strip_prefix('.')) else {
                continue;
            };
            match rest.split_once('.') {
                None if defs.iter().any(|d| matches!(d.3, "struct" | "type")) => {
                    types.push(qn);
                }
                Some((t, m)) if !m.contains('.') && defs.iter().any(|d| d.3 == "method") => {
                    methods
                        .entry(&qn[..group.len() + 1 + t.len()])
                        .or_default()
                        .push(m);
                }
                _ => {}
            }
        }
        types.sort_unstable();
        // Each type's method names, made on the first interface.
        let mut type_methods: Option<Vec<(Sym<'a>, Vec<&'a str>)>> = None;
        for iface in interfaces {
            let Some(isym) = self.here(cx, iface) else {
                continue;
            };
            let mut wanted: Vec<&'a str> = Vec::new();
            self.go_method_names(isym, &methods, &mut wanted, 0);
            wanted.sort();
            wanted.dedup();
            if wanted.is_empty() {
                continue;
            }
            for (tsym, has) in type_methods.get_or_insert_with(|| {
                types
                    .iter()
                    .filter_map(|&t| self.lookup(Family::Go, "", t))
                    .map(|tsym| {
                        let mut has: Vec<&'a str> = Vec::new();
                        self.go_method_names(tsym, &methods, &mut has, 0);
                        has.sort();
                        has.dedup();
                        (tsym, has)
                    })
                    .collect()
            }) {
                let tsym = *tsym;
                if wanted.iter().all(|w| has.binary_search(w).is_ok()) {
                    out.push(SiteEdge {
                        rel: Rel::Implements,
                        from: Id::from(tsym.id),
                        to: Id::from(&*iface.id),
                        line: 0,
                        col: 0,
                        tier: Tier::Scope,
                        kind: SiteKind::Implements,
                        to_name: Id::default(),
                    });
                }
            }
        }
    }

    /// The method names of Go type (or interface) `t`: its own, and those of
    /// the types it embeds.
    fn go_method_names(
        &self,
        t: Sym<'a>,
        methods: &FxMap<&'a str, Vec<&'a str>>,
        out: &mut Vec<&'a str>,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        // Methods of the package's types (an embedded type of another
        // package contributes none: within the package only).
        if let Some(own) = methods.get(t.qn) {
            out.extend(own.iter().copied());
        }
        if t.kind == "interface" {
            // Interface methods are its nested method symbols.
            let files: &'a [RFile] = self.ix.files;
            out.extend(
                files[t.file]
                    .symbols
                    .iter()
                    .filter_map(|s| s.qualified_name.strip_prefix(t.qn)?.strip_prefix('.'))
                    .filter(|m| !m.contains('.')),
            );
        }
        for (base, _) in self.bases(t, depth + 1) {
            self.go_method_names(base, methods, out, depth + 1);
        }
    }

    /// What a call runs: `call_target`, and through a TS constant naming a
    /// function (`const objectType = ZodObject.create;` then `objectType(…)`,
    /// or `z.object(…)` through `export { objectType as object }`), the
    /// function it names, at the weaker of the two tiers.
    fn called(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        chain: &[Step],
        depth: usize,
    ) -> Option<(Sym<'a>, Tier)> {
        // Rust `T::<2>::f(x)`: the turbofish is for `resolve_file` to read.
        let (_, chain) = type_args(chain);
        // Rust `T::from(x)`: the path, else the impl `x`'s shape picks.
        if let Some((shape, path)) = argument(chain) {
            return self
                .call_target(cx, owner, path, depth)
                .or_else(|| self.by_argument(cx, owner, path, shape));
        }
        let (sym, tier) = self.call_target(cx, owner, chain, depth)?;
        if cx.fam != Family::Ts || depth > MAX_DEPTH {
            return Some((sym, tier));
        }
        let named = match sym.kind {
            "const" | "var" => self.named_by_const(sym, tier, depth),
            // A field naming a method of its class (`min = this.gte;`,
            // `spa = this.safeParseAsync;`): a call of it runs the method.
            "field" => self.named_by_field(sym, depth + 1).map(|f| (f, tier)),
            _ => None,
        };
        Some(named.unwrap_or((sym, tier)))
    }

    /// The module-level constant, static or variable a call's receiver names
    /// (`core.$ZodString.init(…)`, `logger.info(…)`): the call reads it, so
    /// an edit to its initialiser reaches the caller.
    fn held_value(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        receiver: &[Step],
    ) -> Option<(Sym<'a>, Tier)> {
        let (s, tier) = self.value_target(cx, owner, receiver)?;
        matches!(s.kind, "const" | "static" | "var").then_some((s, tier))
    }

    /// A function read as a property on the way to a call, a read or a write
    /// (a getter: `arr.element.parse(x)`, a Python `@property`; `f.call(…)`;
    /// `self.jinja_env.auto_reload = v`): the read runs it. A `value` edge at
    /// the site's position (the chain keeps no other), one per owner and
    /// chain read.
    fn property_reads(&self, cx: &FileCx<'a, 's>, sites: &'s [RawSite], out: &mut Vec<SiteEdge>) {
        let mut reads: FxMap<(u32, &'s [Step]), Proven<'a>> = FxMap::default();
        for site in sites {
            // What a call or a read is made on (`self.jinja_env` in
            // `self.jinja_env.auto_reload = v`); not a marked site's parts.
            let chain: &'s [Step] = match site.chain.split_last() {
                Some((last, before)) if last == WRITTEN => before,
                _ if site.kind == SiteKind::Value
                    && site.chain.first().is_some_and(|c| c.starts_with('#')) =>
                {
                    continue;
                }
                _ if matches!(site.kind, SiteKind::Call | SiteKind::Value) => &site.chain,
                _ => continue,
            };
            for read in read_steps(chain) {
                let found = *reads
                    .entry((site.owner, read))
                    .or_insert_with(|| self.read_function(cx, site.owner, read));
                if let Some((f, tier)) = found {
                    out.push(read_edge(cx.owner_id(site.owner), site, f, tier));
                }
            }
        }
    }

    /// `o.p = v` (a `WRITTEN` site): when `p` is a method (a `@property`,
    /// whose `@p.setter` the assignment runs), a `value` reference of each
    /// definition of its name in the class, the setter among them. A plain
    /// attribute gives nothing.
    fn written_property(&self, cx: &FileCx<'a, 's>, site: &RawSite, out: &mut Vec<SiteEdge>) {
        let chain = &site.chain[..site.chain.len() - 1];
        let Some((f, tier)) = self.read_function(cx, site.owner, chain) else {
            return;
        };
        if f.kind != "method" {
            return;
        }
        let from = cx.owner_id(site.owner);
        out.push(read_edge(from.clone(), site, f, tier));
        for t in self.same_name_methods(f) {
            out.push(read_edge(from.clone(), site, t, tier));
        }
    }

    /// The other methods defined under method `f`'s qualified name in its
    /// file (a property's getter, setter and deleter).
    fn same_name_methods(&self, f: Sym<'a>) -> Vec<Sym<'a>> {
        let fam = family(self.ix.files[f.file].language);
        let pkg = self.pkg_of(Some(f.file));
        let Some((key, defs)) = self.ix.symbol_entries(fam, pkg, f.qn) else {
            return Vec::new();
        };
        defs.iter()
            .filter(|d| d.0 != f.id && d.3 == "method")
            .filter_map(|&(id, _, path, kind)| {
                let file = *self.ix.by_path.get(path)?;
                (file == f.file).then_some(Sym {
                    id,
                    qn: key,
                    kind,
                    file,
                })
            })
            .collect()
    }

    /// The function or method a property read names (`arr.element` with
    /// `get element()`), when one does.
    fn read_function(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        chain: &[Step],
    ) -> Option<(Sym<'a>, Tier)> {
        let (s, tier) = self.call_target(cx, owner, chain, 0)?;
        is_callable(s.kind).then_some((s, tier))
    }

    /// The function, constant, static or variable a name used as a value
    /// names (`f` passed as an argument, a receiver).
    fn value_target(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        chain: &[Step],
    ) -> Option<(Sym<'a>, Tier)> {
        let (s, tier) = self.call_target(cx, owner, chain, 0)?;
        // A Python or TS class is a value too (`isinstance(x, C)`, `C.K`,
        // `register(C)`): a use of it, though nothing is called.
        if is_value_kind(s.kind)
            || (matches!(cx.fam, Family::Python | Family::Ts) && matches!(s.kind, "class" | "enum"))
        {
            return Some((s, tier));
        }
        // TS declaration merging: a value named where a type of its name is
        // declared too (`interface ZodMiniCUID2` beside `const ZodMiniCUID2`).
        (cx.fam == Family::Ts)
            .then(|| self.merged_value(cx.fam, s))
            .flatten()
            .map(|v| (v, tier))
    }

    /// The function a TS constant's initialiser names (`ZodObject.create`),
    /// at the weaker of `tier` and the tier that proved it.
    fn named_by_const(&self, sym: Sym<'a>, tier: Tier, depth: usize) -> Option<(Sym<'a>, Tier)> {
        let home = self.cx(sym.file, None);
        let name = sym.qn.rsplit([':', '.']).next()?;
        let fact = home.ix.locals.get(&(IN_FILE, name))?;
        if fact.kind != FactKind::Local
            || fact
                .chain
                .iter()
                .any(|c| c == "()" || c == "?" || c.starts_with('#'))
        {
            return None;
        }
        let (target, t) = self.called(&home, IN_FILE, &fact.chain, depth + 1)?;
        if target.kind == "field" {
            // `const enumType = ZodEnum.create` with `static create =
            // createZodEnum`: the function the field names.
            return self
                .named_by_field(target, depth + 1)
                .map(|f| (f, tier.max(t)));
        }
        is_callable(target.kind).then_some((target, tier.max(t)))
    }

    /// The function a class field's initialiser names (`static create =
    /// createZodEnum`), or the method of its class (`min = this.gte`), in
    /// the field's file.
    fn named_by_field(&self, field: Sym<'a>, depth: usize) -> Option<Sym<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let home = self.cx(field.file, None);
        let fi = *home.ix.ids.get(field.id)?;
        let class = parent_index(&home, fi as usize)? as u32;
        let name = field.qn.rsplit(['.', ':']).next()?;
        let fact = home.ix.fields.get(&(class, name))?;
        let plain = |c: &Step| !c.starts_with('#') && c != "?" && c != "()";
        let owner = match fact.chain.as_slice() {
            [one] if plain(one) => IN_FILE,
            [this, method] if this == "this" && plain(method) && method != name => class,
            _ => return None,
        };
        let chain = fact.chain.clone();
        let (target, _) = self.call_target(&home, owner, &chain, depth + 1)?;
        is_callable(target.kind).then_some(target)
    }

    /// The target of a call of a bare name (`f(…)`): a function in scope or
    /// imported, not a local of the caller's or of a function around it.
    fn bare_call(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        last: &str,
        depth: usize,
    ) -> Option<(Sym<'a>, Tier)> {
        // A local variable or parameter of that name (the caller's, a
        // function's around it) is what is called (a closure, a function
        // pointer): nothing provable; unless it is a TS function declared
        // as a local (`const doInnerSub = (v) => …`), a symbol of its own.
        let local = match cx.ix.locals.get(&(owner, last)) {
            Some(f) => Some(*f),
            None => self
                .local_fact(cx, owner, last)
                .filter(|f| f.owner != IN_FILE),
        };
        if let Some(f) = local.filter(|f| f.kind == FactKind::Local) {
            let (_, isep) = seps(cx.fam);
            let nested = cx.syms.get(f.owner as usize).and_then(|o| {
                let qn = format!("{}{isep}{last}", o.qualified_name);
                cx.ix.by_qn.get(qn.as_str())?.first()
            });
            return match nested {
                Some(&i) if cx.fam == Family::Ts && f.chain == ["?"] => self
                    .here(cx, &cx.syms[i as usize])
                    .map(|s| (s, Tier::Scope)),
                _ => None,
            };
        }
        // `super(…)` in a TS constructor: the base's constructor, else
        // the base class.
        if cx.fam == Family::Ts && last == "super" {
            let class = self.enclosing_type(cx, owner)?;
            let (base, _) = self.bases(class, depth + 1).into_iter().next()?;
            return Some((
                self.member(base, "constructor", depth + 1).unwrap_or(base),
                Tier::SelfTier,
            ));
        }
        self.bare_name(cx, owner, last, true)
    }

    /// The `macro_rules!` a Rust invocation names (`m!`, `crate::m!`,
    /// `$crate::m!`). Where a macro is visible goes by the text (defined
    /// above, in a module around, or under `#[macro_use]`), which is not
    /// tracked: the crate's only macro of that name is it (`scope` in its own
    /// file, else `import`: a `#[macro_use]` or `use` brought it), else the
    /// only one of the caller's file; `krate::m!` the only one of that crate
    /// (`qualified`). Another crate's named bare is left to the `name` tier.
    fn macro_target(&self, cx: &FileCx<'a, 's>, chain: &[Step]) -> Option<(Sym<'a>, Tier)> {
        let here = self.pkg_of(Some(cx.fi));
        let (name, krate) = match chain {
            [one] => (one.as_str(), here),
            [head, one] => {
                let krate = match head.as_str() {
                    "crate" | "self" | "super" => here,
                    // `tracing::event!`: an exported macro of that crate.
                    other => other,
                };
                (one.strip_prefix("::")?, krate)
            }
            _ => return None,
        };
        let found = self.ix.callables_named(cx.fam, name, false);
        let of_crate = |fi: u32| {
            let p = self.pkg_of(Some(fi as usize));
            p == krate || (p.contains('-') && p.replace('-', "_") == krate)
        };
        let in_crate = || found.iter().filter(|(fi, _)| of_crate(*fi));
        let &(fi, si) = match (
            in_crate().count(),
            in_crate().filter(|(fi, _)| *fi as usize == cx.fi).count(),
        ) {
            (1, _) => in_crate().next()?,
            (_, 1) => in_crate().find(|(fi, _)| *fi as usize == cx.fi)?,
            _ => return None,
        };
        let s: &'a RSymbol = &self.ix.files[fi as usize].symbols[si as usize];
        let tier = if chain.len() == 2 {
            Tier::Qualified
        } else if fi as usize == cx.fi {
            Tier::Scope
        } else {
            Tier::Import
        };
        Some((
            Sym {
                id: &s.id,
                qn: &s.qualified_name,
                kind: s.kind,
                file: fi as usize,
            },
            tier,
        ))
    }

    /// The target of a call (or of a function named as a value): the chain's
    /// callee, with the tier that proved it.
    fn call_target(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        chain: &[Step],
        depth: usize,
    ) -> Option<(Sym<'a>, Tier)> {
        if depth > MAX_DEPTH || chain.is_empty() {
            return None;
        }
        if chain[0] == "#new" && !chain.iter().any(|c| c == "()") {
            // `new X(…)`: the class.
            return self.type_target(cx, owner, &chain[1..], depth + 1);
        }
        if cx.fam == Family::Rust && chain.last().is_some_and(|l| l.ends_with('!')) {
            return self.macro_target(cx, chain);
        }
        let last = bare(chain.last()?);
        // `cls(…)` in a classmethod: the class itself.
        // Not a local of that name (`cls = self.test_client_class`).
        if cx.fam == Family::Python
            && chain.len() == 1
            && last == "cls"
            && self
                .local_fact(cx, owner, "cls")
                .is_none_or(|f| f.chain.len() <= 1 && f.chain.first().is_none_or(|c| c == "cls"))
        {
            return self.enclosing_type(cx, owner).map(|t| (t, Tier::SelfTier));
        }
        if chain.len() == 1 {
            return self.bare_call(cx, owner, last, depth);
        }
        let receiver = &chain[..chain.len() - 1];
        // A Rust path: `a::b::f`, `Type::new`, `Self::new`, `crate::x::f`.
        if cx.fam == Family::Rust && chain[chain.len() - 1].starts_with("::") {
            return self.rust_path_call(cx, owner, chain, depth);
        }
        // `super().m()` (Python), `super.m()` (TS): a base's method.
        if (receiver == ["super", "()"] && cx.fam == Family::Python)
            || (receiver == ["super"] && cx.fam == Family::Ts)
        {
            return self.super_call(cx, owner, last, depth);
        }
        // Rust `self.m()` where the caller's own impl block defines `m`: that
        // one (`impl Teddy<1>` and `impl Teddy<2>` each define `find_one`).
        if cx.fam == Family::Rust
            && receiver.len() == 1
            && self.is_self(cx, owner, &receiver[0])
            && let Some(m) = self.in_own_impl(cx, owner, last)
        {
            return Some((m, Tier::SelfTier));
        }
        // `self.m()`, `this.m()`, `cls.m()`, a Go receiver's method.
        if receiver.len() == 1 && self.is_self(cx, owner, &receiver[0]) {
            let class = self.impl_target(cx, self.enclosing_type(cx, owner)?);
            let m = match self.member_or_base(class, last, depth + 1) {
                Some((m, _)) => m,
                None if cx.fam == Family::Python => self.held_callable(class, last, depth + 1)?,
                None => self.by_value_impl(cx, owner, receiver, class, last, depth + 1)?,
            };
            return Some((m, Tier::SelfTier));
        }
        if let Some(found) = self.imported_member(cx, owner, receiver, last) {
            return Some((found, Tier::Qualified));
        }
        // TS: a receiver naming a module through imports and namespace
        // re-exports (`z.coerce.string()` with `import { z } from "./index"`,
        // whose `z` is `import * as z`, whose `coerce` is `export * as
        // coerce`): the member that module exports, re-exports followed.
        if cx.fam == Family::Ts
            && receiver.len() <= 4
            && let Some(mf) = self.ts_module_of(cx, owner, receiver)
        {
            let found = self.single_symbol(&super::typescript::ts_export(self.ix, mf, last));
            return found.map(|s| (s, Tier::Qualified));
        }
        // The receiver names a module, package, namespace import or type:
        // `pkg.F`, `module.f`, `ns.f`, `Class.static_m`.
        if receiver.len() == 1
            && let Some((scope, tier)) = self.namespace(cx, owner, &receiver[0])
        {
            match scope {
                Namespace::Module(module, fam_file) => {
                    let (msep, _) = seps(cx.fam);
                    let qn = join(&module, msep, last);
                    let s = self.lookup(cx.fam, self.pkg_of(fam_file), &qn)?;
                    return Some((s, tier.max(Tier::Qualified)));
                }
                Namespace::Type(t) => {
                    if let Some((m, _)) = self.member_or_base(t, last, depth + 1) {
                        return Some((m, Tier::Qualified));
                    }
                    // TS declaration merging: a constant of the type's name
                    // (`$ZodError.init(…)`), a value of its declared type.
                    if cx.fam != Family::Ts {
                        return None;
                    }
                }
            }
        }
        // A receiver whose type is known.
        let rebound = || self.rebound_members(cx, owner, receiver, last, depth);
        let Some((t, how)) = self.value_type(cx, owner, receiver, depth + 1) else {
            if let Some((found, false)) = rebound()
                && let [m] = found.as_slice()
            {
                return Some((*m, Tier::Typed));
            }
            // Rust: a method of a type from outside the repo (a primitive,
            // `core::arch`'s `__m256i`) from an impl of the repo for it.
            return (cx.fam == Family::Rust)
                .then(|| self.foreign_method(cx, owner, receiver, last, depth))
                .flatten()
                .map(|m| (m, Tier::Typed));
        };
        let Some(m) = self.member_or_base(t, last, depth + 1) else {
            if cx.fam == Family::Python
                && let Some(held) = self.held_callable(t, last, depth + 1)
            {
                return Some((held, Tier::Typed));
            }
            if cx.fam == Family::Rust
                && let Some(next) = self
                    .by_value_impl(cx, owner, receiver, t, last, depth + 1)
                    .or_else(|| self.iterator_next(t, last, depth + 1))
            {
                return Some((next, Tier::Typed));
            }
            return match rebound() {
                Some((found, false)) if found.len() == 1 => Some((found[0], Tier::Typed)),
                _ => None,
            };
        };
        // Another binding's type has a member of that name of its own: the
        // site may be on either.
        if rebound().is_some_and(|(found, _)| found.iter().any(|f| f.id != m.0.id)) {
            return None;
        }
        // A Rust trait's default method called on a concrete type is the
        // one that runs (nothing overrides it there): not a dispatch.
        let inherited_default = cx.fam == Family::Rust && !is_abstract(t.kind);
        let tier = if (is_abstract(m.1.kind) && !inherited_default) || is_abstract(t.kind) {
            Tier::Dispatch
        } else if how == Tier::SelfTier {
            Tier::SelfTier
        } else {
            Tier::Typed
        };
        Some((m.0, tier))
    }

    /// `super().m()` (Python), `super.m()` (TS) in `owner`: method `name` of
    /// the nearest base of the enclosing class that has one.
    fn super_call(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        name: &str,
        depth: usize,
    ) -> Option<(Sym<'a>, Tier)> {
        let class = self.enclosing_type(cx, owner)?;
        for (base, _) in self.bases(class, depth + 1) {
            if let Some((m, _)) = self.member_or_base(base, name, depth + 1) {
                return Some((m, Tier::SelfTier));
            }
        }
        None
    }

    /// Rust: the `next` that std's `Iterator` method `name` (`collect`,
    /// `sum`, `map`, …, which `t` does not define) runs, when `t` implements
    /// `Iterator` itself: `ac.find_iter(h).collect()` runs `FindIter::next`.
    /// An adapter (`map`) runs it once consumed; the site is where the
    /// repo's iterator is handed to std, and no later site names it.
    /// From the back (`rev`, `rfind`, …), std runs the type's `next_back`;
    /// `len` (`ExactSizeIterator`'s) runs its `size_hint`.
    fn iterator_next(&self, t: Sym<'a>, name: &str, depth: usize) -> Option<Sym<'a>> {
        if super::std_names::is_rust_iterator_method(name) {
            return self.in_impl_of(t, "next", "Iterator", depth);
        }
        match name {
            "rev" | "rfind" | "rfold" | "rposition" | "nth_back" | "try_rfold" => {
                self.in_impl_of(t, "next_back", "DoubleEndedIterator", depth)
            }
            "len" => self.in_impl_of(t, "size_hint", "Iterator", depth),
            _ => None,
        }
    }

    /// Rust: what else std runs of a repo iterator at a site `iterator_next`
    /// gave its `next`: the `size_hint` of its `impl Iterator`, when the
    /// method std's collections size themselves by (`collect`, `unzip`).
    fn library_runs(&self, cx: &FileCx<'a, 's>, chain: &[Step], next: Sym<'a>) -> Option<Sym<'a>> {
        if cx.fam != Family::Rust || !matches!(called_name(chain).as_str(), "collect" | "unzip") {
            return None;
        }
        let ty = next.qn.strip_suffix("::next")?;
        let hint = self.lookup(
            Family::Rust,
            self.pkg_of(Some(next.file)),
            &format!("{ty}::size_hint"),
        )?;
        let block = |s: Sym<'a>| self.block_of(s.file, s.id).map(|(_, b)| (s.file, b));
        let here = block(hint)?;
        (Some(here) == block(next)).then_some(hint)
    }

    /// Rust: the `from_iter` std's `collect` runs for a result of type
    /// `into` (`COLLECTED`), when the repo's `impl FromIterator` for that
    /// type defines it; `None` for a type outside the repo (`Vec<_>`).
    fn collected_into(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        into: &[Step],
    ) -> Option<(Sym<'a>, Tier)> {
        let (t, tier) = self.type_target(cx, owner, into, 1)?;
        let m = self.in_impl_of(t, "from_iter", "FromIterator", 2)?;
        Some((m, tier.max(Tier::Typed)))
    }

    /// Rust: method `name` of type `t` that several impl blocks define
    /// (`impl IntoIterator for SmallVec<A>`, `for &'a SmallVec<A>`, `for &'a
    /// mut SmallVec<A>`), called on a receiver proven to hold a `t`, not a
    /// reference (`holds_value`): the one impl for `t` itself. Method lookup
    /// tries the receiver's own type first, so that impl's method is found;
    /// an impl for `&t` takes a `&t`. Two impls for `t` itself (`From<&[T]>`
    /// and `From<Vec<T>>`, cfg variants) prove nothing.
    fn by_value_impl(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        receiver: &[Step],
        t: Sym<'a>,
        name: &str,
        depth: usize,
    ) -> Option<Sym<'a>> {
        if cx.fam != Family::Rust || !is_type_kind(t.kind) || is_abstract(t.kind) {
            return None;
        }
        let qn = format!("{}::{name}", t.qn);
        let (key, defs) = self
            .ix
            .symbol_entries(Family::Rust, self.pkg_of(Some(t.file)), &qn)?;
        let mut found = None;
        for d in defs.iter().filter(|d| d.3 == "method") {
            let fi = *self.ix.by_path.get(d.2)?;
            let (dcx, imp) = self.block_of(fi, d.0)?;
            if dcx.syms[imp].kind != "impl" {
                return None;
            }
            if dcx.ix.impls_for_ref.contains_key(&(imp as u32)) {
                continue;
            }
            if found.is_some() {
                return None;
            }
            found = Some(Sym {
                id: d.0,
                qn: key,
                kind: d.3,
                file: fi,
            });
        }
        let m = found?;
        (defs.len() > 1 && self.holds_value(cx, owner, receiver, depth + 1)).then_some(m)
    }

    /// Rust `T::f(x)` (`path`) where several impls of `T` define `f`, each of
    /// a generic trait (`impl From<&[T]> for V`, `From<Vec<T>>`, `From<A>`):
    /// the one whose trait argument has `x`'s shape (`ARGUMENT`), else, when
    /// none of the others can take it, the one whose argument is a parameter
    /// of its impl. Impls of one trait for one type do not overlap, so the
    /// impl that takes `x` is the one that runs.
    fn by_argument(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        path: &[Step],
        shape: &str,
    ) -> Option<(Sym<'a>, Tier)> {
        let segs: Vec<&str> = path.iter().map(|c| bare(c)).collect();
        let (name, head) = segs.split_last()?;
        let Namespace::Type(t) = self.rust_path_item(cx, owner, head)? else {
            return None;
        };
        let t = self.impl_target(cx, t);
        let qn = format!("{}::{name}", t.qn);
        let (key, defs) = (self.ix).symbol_entries(Family::Rust, self.pkg_of(Some(t.file)), &qn)?;
        // Each impl block defining `f` (cfg variants in one block are one),
        // by its trait argument's shape.
        let mut impls: Vec<(&str, Sym<'a>)> = Vec::new();
        let mut blocks: Vec<(usize, usize)> = Vec::new();
        for d in defs.iter().filter(|d| d.3 == "method") {
            let fi = *self.ix.by_path.get(d.2)?;
            let (dcx, imp) = self.block_of(fi, d.0)?;
            let of: &'s str = dcx.ix.impl_args.get(&(imp as u32))?.name.as_str();
            if !blocks.contains(&(fi, imp)) {
                blocks.push((fi, imp));
                let m = Sym {
                    id: d.0,
                    qn: key,
                    kind: d.3,
                    file: fi,
                };
                impls.push((of, m));
            }
        }
        let same: Vec<Sym<'a>> = impls
            .iter()
            .filter(|(of, _)| *of == shape)
            .map(|x| x.1)
            .collect();
        let param: Vec<Sym<'a>> = impls
            .iter()
            .filter(|(of, _)| *of == "#T")
            .map(|x| x.1)
            .collect();
        // `&[i32; 3]` may be taken as a `&[i32]`.
        let may_take = |of: &str| of == shape || (of.starts_with("&[") && shape.starts_with("&["));
        let found = match (same.as_slice(), param.as_slice()) {
            ([one], _) => *one,
            ([], [one]) if !impls.iter().any(|(of, _)| *of != "#T" && may_take(of)) => *one,
            _ => return None,
        };
        Some((found, Tier::Qualified))
    }

    /// Whether Rust receiver `chain` is proven to hold a value, not a
    /// reference (`Fact::owned`): a by-value `self`, a local (each binding of
    /// it) or a field whose written type is no reference, or a call whose
    /// declared result is none (`T::new()`, and std's `T::default()`,
    /// `T::from(x)`, whose result is `Self`).
    fn holds_value(&self, cx: &FileCx<'a, 's>, owner: u32, chain: &[Step], depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        match chain {
            [word] if self.is_self(cx, owner, word) => cx.ix.self_by_value.contains_key(&owner),
            [word] => {
                let Some(fact) = self.local_fact(cx, owner, word) else {
                    return false;
                };
                // Each binding (the one found, when none are listed).
                let all = cx.ix.bindings.get(&(fact.owner, word.as_str()));
                let all = all.map_or(std::slice::from_ref(&fact), |v| v.as_slice());
                all.iter().all(|b| match b.owned {
                    Some(owned) => owned,
                    None => {
                        b.chain.last().is_some_and(|l| l == "()")
                            && self.holds_value(cx, b.owner, &b.chain, depth + 1)
                    }
                })
            }
            [callee @ .., last] if last == "()" => {
                let Some((f, _)) = self.called(cx, owner, callee, depth + 1) else {
                    return matches!(callee.split_last(), Some((f, ty))
                        if !ty.is_empty()
                            && matches!(f.as_str(), "::default" | "::from" | "::from_iter")
                            && self.type_target(cx, owner, ty, depth + 1).is_some());
                };
                let fcx = self.cx(f.file, None);
                let at = fcx.ix.ids.get(f.id);
                is_type_kind(f.kind)
                    || at
                        .and_then(|at| fcx.ix.returns.get(at))
                        .is_some_and(|r| r.owned == Some(true))
            }
            [value @ .., field] if !is_marker_step(field) && !value.is_empty() => {
                let Some((t, _)) = self.value_type(cx, owner, value, depth + 1) else {
                    return false;
                };
                let tcx = self.cx(t.file, None);
                let at = tcx.ix.ids.get(t.id);
                at.and_then(|&at| tcx.ix.fields.get(&(at, bare(field))))
                    .is_some_and(|f| f.owned == Some(true))
            }
            _ => false,
        }
    }

    /// Rust `for x in e` (`chain`: `e`'s): what the loop calls of the repo:
    /// the `next` of `e`'s type when it implements `Iterator` (`for m in
    /// ac.find_iter(h)`), else the `into_iter` of its `impl IntoIterator`
    /// (`for x in v` of a repo collection).
    fn loop_target(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        chain: &[Step],
    ) -> Option<(Sym<'a>, Tier)> {
        let (t, _) = self.value_type(cx, owner, chain, 1)?;
        let m = self
            .in_impl_of(t, "next", "Iterator", 2)
            .or_else(|| self.in_impl_of(t, "into_iter", "IntoIterator", 2))?;
        Some((m, Tier::Typed))
    }

    /// `t`'s method `name` when an `impl` of the trait named `trait_name`
    /// (std's, by its last name) defines it.
    fn in_impl_of(
        &self,
        t: Sym<'a>,
        name: &str,
        trait_name: &str,
        depth: usize,
    ) -> Option<Sym<'a>> {
        let (m, _) = self.member_or_base(t, name, depth)?;
        let tcx = self.cx(m.file, None);
        let &at = tcx.ix.ids.get(m.id)?;
        let imp = parent_index(&tcx, at as usize)? as u32;
        let of_trait = tcx.ix.heritage.get(&imp).is_some_and(|clauses| {
            clauses
                .iter()
                .any(|c| c.chain.last().is_some_and(|w| bare(w) == trait_name))
        });
        of_trait.then_some(m)
    }

    /// Python: the members `name` of the types of a local bound more than
    /// once (`except ClickException as e: e.show()` beside `except Exit as
    /// e`), where which binding a site sees is not kept: each distinct member
    /// found, and whether some binding's type is not known (a built-in
    /// exception counts as known when it has no attribute of that name). A
    /// call on a binding whose type lacks the member would fail, so when the
    /// types are known and one member is found, that is the one called.
    fn rebound_members(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        receiver: &[Step],
        name: &str,
        depth: usize,
    ) -> Option<(Vec<Sym<'a>>, bool)> {
        let [word] = receiver else { return None };
        if cx.fam != Family::Python || depth > MAX_DEPTH {
            return None;
        }
        let word = bare(word);
        let fact = self.local_fact(cx, owner, word)?;
        let all = cx.ix.bindings.get(&(fact.owner, word))?;
        if all.len() < 2 {
            return None;
        }
        let key = (fact.owner, word.to_string());
        {
            let mut open = cx.rebinding.lock().unwrap_or_else(|e| e.into_inner());
            if open.contains(&key) {
                return None;
            }
            open.push(key.clone());
        }
        let found = self.members_of_bindings(cx, fact.owner, all, name, depth);
        let mut open = cx.rebinding.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|k| *k != key);
        Some(found)
    }

    /// `rebound_members`' answer from each binding's type.
    fn members_of_bindings(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        all: &[&'s Fact],
        name: &str,
        depth: usize,
    ) -> (Vec<Sym<'a>>, bool) {
        let mut found: Vec<Sym<'a>> = Vec::new();
        let mut unknown = false;
        for b in all {
            let Some((t, _)) = self.fact_type(cx, owner, &b.chain, depth + 1) else {
                // A built-in exception (not one of the repo's: the type
                // would be found) has no attribute of the repo's making.
                unknown |= !matches!(b.chain.as_slice(), [ty]
                    if super::std_names::is_python_builtin_exception(ty)
                        && !super::std_names::is_python_exception_member(name));
                continue;
            };
            if let Some((m, _)) = self.member_or_base(t, name, depth + 1)
                && !found.iter().any(|f| f.id == m.id)
            {
                found.push(m);
            }
        }
        (found, unknown)
    }

    /// Member `name` of what import-bound `word` names, when that import is a
    /// TS namespace import or a Python module import: resolved as the import
    /// `{ name } from` the same module would be.
    fn member_of_import(&self, cx: &FileCx<'a, 's>, word: &str, name: &str) -> Option<Sym<'a>> {
        use crate::model::ImportSpec;
        // `import click.types` binds `click` (no edge says so: `local_name`).
        let Some(i) = cx.binder(word) else {
            if cx.fam != Family::Python || !cx.dotted_import(word) {
                return None;
            }
            let targets = super::python::python(self.ix, cx.fi, word, Some(name), 0);
            let [Target::Symbol(id)] = targets.as_slice() else {
                return None;
            };
            return self.by_id(id);
        };
        let imp = cx.f.imports.get(i)?;
        let targets = match &imp.spec {
            ImportSpec::Ts {
                specifier,
                name: Some(n),
            } if n == "*" => super::typescript::ts(self.ix, cx.fi, specifier, Some(name), 0),
            ImportSpec::Python { module, name: None } => {
                super::python::python(self.ix, cx.fi, module, Some(name), 0)
            }
            _ => return None,
        };
        let mut it = targets.iter().filter_map(|t| match t {
            Target::Symbol(id) => Some(id),
            _ => None,
        });
        let id = it.next()?;
        if it.next().is_some() {
            return None;
        }
        self.by_id(id)
    }

    /// A member of a namespace import or an imported module, as that import
    /// would name it (`import * as z` then `z.string()`; `import pkg` then
    /// `pkg.f`, re-exports followed like an import's); Python, of a submodule
    /// of an imported package (`import flask`, then `flask.json.load()`), as
    /// `from flask.json import load` would name it.
    fn imported_member(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        receiver: &[Step],
        last: &str,
    ) -> Option<Sym<'a>> {
        let dotted = cx.fam == Family::Python && receiver.len() <= 4;
        if !(receiver.len() == 1 || dotted) || self.local_fact(cx, owner, &receiver[0]).is_some() {
            return None;
        }
        match receiver.len() {
            1 => self.member_of_import(cx, &receiver[0], last),
            _ => self.in_submodule(cx, receiver, last),
        }
    }

    /// Python: what `pkg.sub.name` names when `pkg` is bound by `import pkg`,
    /// `import pkg.sub` or `import pkg as p`, and `sub` is a module of it.
    fn in_submodule(&self, cx: &FileCx<'a, 's>, receiver: &[Step], name: &str) -> Option<Sym<'a>> {
        use crate::model::ImportSpec;
        let word = receiver[0].as_str();
        let mut path = match cx.binder(word) {
            Some(i) => match &cx.f.imports.get(i)?.spec {
                ImportSpec::Python { module, name: None } => module.clone(),
                _ => return None,
            },
            // `import pkg.sub` binds `pkg` (no edge says so: `local_name`).
            None => cx.dotted_import(word).then(|| word.to_string())?,
        };
        for seg in &receiver[1..] {
            if seg.starts_with('#') || matches!(seg.as_str(), "()" | "?") {
                return None;
            }
            path.push('.');
            path.push_str(seg);
        }
        let targets = super::python::python(self.ix, cx.fi, &path, Some(name), 0);
        let [Target::Symbol(id)] = targets.as_slice() else {
            return None;
        };
        self.by_id(id)
    }

    fn pkg_of(&self, fi: Option<usize>) -> &'a str {
        match fi {
            Some(fi) => {
                let f = &self.ix.files[fi];
                if family(f.language) == Family::Rust {
                    f.package.as_str()
                } else {
                    ""
                }
            }
            None => "",
        }
    }

    /// A symbol by qualified name in the family (and Rust crate). A name
    /// that files define apart (`#[cfg]` or build-tag variants, a module
    /// defined twice) proves nothing: `None`.
    fn lookup(&self, fam: Family, pkg: &str, qn: &str) -> Option<Sym<'a>> {
        let (key, defs) = self.ix.symbol_entries(fam, pkg, qn)?;
        let &(id, _, path, kind) = defs.first()?;
        // Defined apart (cfg/build-tag variants in other files), or, for a
        // Rust method, in several impl blocks (`impl From<&[T]> for V` and
        // `impl From<Vec<T>> for V` each define `V::from`; cfg variants):
        // which one runs is not for a name to say.
        if (defs.iter().any(|d| !d.1 && d.2 != path && d.3 == kind)
            || (fam == Family::Rust
                && kind == "method"
                && defs.iter().filter(|d| d.3 == "method").count() > 1))
            && !self.built_apart(fam, pkg, key, &defs)
            && !self.by_type_argument(fam, pkg, key, &defs)
        {
            return None;
        }
        let file = *self.ix.by_path.get(path)?;
        Some(Sym {
            id,
            qn: key,
            kind,
            file,
        })
    }

    /// Whether the definitions of `qn` are alternatives a build configuration
    /// picks from (`#[cfg]` or `cfg_if!` variants in one Rust file,
    /// build-tagged files of one Go package), so that a call naming it calls
    /// whichever is built. The languages allow one definition of a name per
    /// module (Rust E0428, Go "redeclared"), one method of a name per impl
    /// block (E0201), and per type when its impls are for the same trait or
    /// none (E0592); a type defined twice is itself such a variant. Anything
    /// else (impls of different traits, `impl F<u8>` beside `impl F<u16>`,
    /// fns nested in blocks, `#[path]` modules in files of their own) is no
    /// proof.
    fn built_apart(&self, fam: Family, pkg: &str, qn: &str, defs: &[Definition<'a>]) -> bool {
        let alts: Vec<&Definition<'a>> = defs.iter().filter(|d| !d.1).collect();
        let Some(first) = alts.first() else {
            return false;
        };
        // `macro_rules!` may be defined again below (the later one shadows):
        // no proof.
        if alts.len() < 2 || first.3 == "macro" || alts.iter().any(|d| d.3 != first.3) {
            return false;
        }
        // In one file (Rust) or one package directory (Go): a name defined in
        // two crates or modules of one name (two versions of a crate side by
        // side, vendored copies) is no build alternative.
        match fam {
            Family::Go => alts
                .iter()
                .all(|d| super::dir_of(d.2) == super::dir_of(first.2)),
            Family::Rust if alts.iter().any(|d| d.2 != first.2) => false,
            Family::Rust => {
                // Where each is defined: the index of its parent in its file.
                let mut parents = Vec::with_capacity(alts.len());
                for d in &alts {
                    let Some(&fi) = self.ix.by_path.get(d.2) else {
                        return false;
                    };
                    let cx = self.cx(fi, None);
                    let parent = cx
                        .ix
                        .ids
                        .get(d.0)
                        .and_then(|&i| parent_index(&cx, i as usize))
                        .map(|p| (p, cx.syms[p].kind));
                    let heritage = parent.and_then(|(p, _)| {
                        let sites = cx.ix.heritage.get(&(p as u32))?;
                        Some(sites.iter().map(|s| s.chain.clone()).collect::<Vec<_>>())
                    });
                    parents.push((fi, parent, heritage));
                }
                if first.3 != "method" {
                    // Items of a module (not fns nested in a fn's blocks).
                    return parents
                        .iter()
                        .all(|(_, p, _)| p.is_none_or(|(_, k)| k == "mod"));
                }
                let same_block = parents
                    .iter()
                    .all(|p| p.0 == parents[0].0 && p.1 == parents[0].1);
                let same_trait = parents.iter().all(|p| p.2 == parents[0].2);
                let types = self.types_of_method(fam, pkg, qn);
                let type_twice = types.len() > 1 && types.iter().all(|d| d.2 == first.2);
                same_block || (same_trait && type_twice)
            }
            _ => false,
        }
    }

    /// TS: for a method an interface declares, the methods of the same
    /// qualified name in its file that are not an interface's: those of the
    /// value merged with it, which is what a call typed by the interface runs
    /// (`interface ZodString { uuid(): this }` beside `const ZodString =
    /// $constructor("ZodString", init, { uuid(params) {…} })`).
    fn ts_implementations(&self, t: Sym<'a>, defs: &[Definition<'a>]) -> Vec<Sym<'a>> {
        if t.kind != "method" {
            return Vec::new();
        }
        let cx = self.cx(t.file, None);
        let parent_kind = |id: &str| {
            let i = *cx.ix.ids.get(id)?;
            parent_index(&cx, i as usize).map(|p| cx.syms[p].kind)
        };
        if parent_kind(t.id) != Some("interface") {
            return Vec::new();
        }
        let path = self.ix.files[t.file].path.as_str();
        defs.iter()
            .filter(|d| d.0 != t.id && d.2 == path && d.3 == "method")
            .filter(|d| parent_kind(d.0).is_some_and(|k| k != "interface"))
            .map(|&(id, _, _, kind)| Sym {
                id,
                qn: t.qn,
                kind,
                file: t.file,
            })
            .collect()
    }

    /// Rust: whether the definitions of a method's name are each in an
    /// inherent impl block (of no trait) of one type, one per block. Blocks of
    /// one type may each define a name only for type arguments that do not
    /// overlap (E0592: `impl<V> Slim<V, 1>` … `impl<V> Slim<V, 4>`, `impl
    /// Teddy<8>` beside `impl Teddy<16>`), so a call runs exactly one of them,
    /// picked by the receiver's type argument, which resolution does not
    /// follow: a site that names one names them all (`dispatch`).
    fn by_type_argument(&self, fam: Family, pkg: &str, qn: &str, defs: &[Definition<'a>]) -> bool {
        let methods: Vec<&Definition<'a>> = defs.iter().filter(|d| !d.1).collect();
        if fam != Family::Rust || methods.len() < 2 || methods.iter().any(|d| d.3 != "method") {
            return false;
        }
        // One type: not two of one name (two versions of a crate side by
        // side, `#[cfg]` variants), whose impls are no such choice.
        if self.types_of_method(fam, pkg, qn).len() != 1 {
            return false;
        }
        let mut blocks = Vec::with_capacity(methods.len());
        for d in methods {
            let Some(&fi) = self.ix.by_path.get(d.2) else {
                return false;
            };
            let Some((cx, imp)) = self.block_of(fi, d.0) else {
                return false;
            };
            let of_trait = cx
                .ix
                .heritage
                .get(&(imp as u32))
                .is_some_and(|h| !h.is_empty());
            if cx.syms[imp].kind != "impl" || of_trait || blocks.contains(&(fi, imp)) {
                return false;
            }
            blocks.push((fi, imp));
        }
        true
    }

    /// Of a method (`target`) and its `twins`, each in an inherent impl block
    /// told apart by a type argument (`by_type_argument`), the one whose
    /// block's type arguments are those a call's turbofish writes (`args`,
    /// `TYPE_ARGS`): an argument that is the block's parameter, or `_` in
    /// the turbofish, agrees with any. Blocks of one type do not overlap, so
    /// one that agrees is the one that runs; none, or several, prove nothing.
    fn by_turbofish(&self, target: Sym<'a>, twins: &[Sym<'a>], args: &str) -> Option<Sym<'a>> {
        let agrees = |block: &str| {
            let (mut b, mut w) = (block.split('|'), args.split('|'));
            loop {
                match (b.next(), w.next()) {
                    (None, None) => return true,
                    (Some(x), Some(y)) if x == y || x == "_" || y == "_" => {}
                    _ => return false,
                }
            }
        };
        let mut found = None;
        for m in std::iter::once(target).chain(twins.iter().copied()) {
            let (cx, imp) = self.block_of(m.file, m.id)?;
            let block = cx.ix.impl_self_args.get(&(imp as u32))?;
            if agrees(&block.name) {
                if found.is_some() {
                    return None;
                }
                found = Some(m);
            }
        }
        found
    }

    /// The type definitions (not impls) under the name a method's qualified
    /// name `qn` is in (`T` of `T::f`).
    fn types_of_method(&self, fam: Family, pkg: &str, qn: &str) -> Vec<Definition<'a>> {
        let Some((ty, _)) = qn.rsplit_once("::") else {
            return Vec::new();
        };
        self.ix
            .symbol_entries(fam, pkg, ty)
            .map_or(Vec::new(), |(_, tdefs)| {
                tdefs
                    .iter()
                    .filter(|d| !d.1 && is_type_kind(d.3))
                    .copied()
                    .collect()
            })
    }

    /// The other definitions of `t`'s name when they are built apart
    /// (`built_apart`) or impls told apart by a type argument (then the flag:
    /// `by_type_argument`): a site that names one names them all.
    fn twins(&self, t: Sym<'a>) -> (Vec<Sym<'a>>, bool) {
        let fam = family(self.ix.files[t.file].language);
        let pkg = self.pkg_of(Some(t.file));
        let Some((key, defs)) = self.ix.symbol_entries(fam, pkg, t.qn) else {
            return (Vec::new(), false);
        };
        if fam == Family::Ts && defs.len() > 1 {
            return (self.ts_implementations(t, &defs), false);
        }
        if defs.iter().filter(|d| !d.1).count() < 2 {
            return (Vec::new(), false);
        }
        let by_argument = !self.built_apart(fam, pkg, key, &defs);
        if by_argument && !self.by_type_argument(fam, pkg, key, &defs) {
            return (self.in_one_block(t, key, &defs), false);
        }
        let others = defs
            .iter()
            .filter(|d| !d.1 && d.0 != t.id)
            .filter_map(|&(id, _, path, kind)| {
                Some(Sym {
                    id,
                    qn: key,
                    kind,
                    file: *self.ix.by_path.get(path)?,
                })
            })
            .collect();
        (others, by_argument)
    }

    /// Whether `target` is defined in the impl block that method `owner` of
    /// `cx`'s file is in.
    fn in_own_block(&self, cx: &FileCx<'a, 's>, owner: u32, target: Sym<'a>) -> bool {
        cx.fi == target.file
            && parent_index(cx, owner as usize).is_some_and(|own| {
                (self.block_of(target.file, target.id)).is_some_and(|(_, block)| block == own)
            })
    }

    /// Where symbol `id` of file `fi` sits: the file's context and the index
    /// of its parent symbol there (a method's impl block).
    fn block_of(&self, fi: usize, id: &str) -> Option<(std::sync::Arc<FileCx<'a, 's>>, usize)> {
        let fcx = self.cx(fi, None);
        let at = *fcx.ix.ids.get(id)?;
        let parent = parent_index(&fcx, at as usize)?;
        Some((fcx, parent))
    }

    /// Rust: the other definitions of method `t`'s name in `t`'s own impl
    /// block: one block defines a name once unless `#[cfg]` picks (E0201),
    /// as smallvec's `from` with and without its `specialization` feature.
    fn in_one_block(&self, t: Sym<'a>, key: &'a str, defs: &[Definition<'a>]) -> Vec<Sym<'a>> {
        if family(self.ix.files[t.file].language) != Family::Rust || t.kind != "method" {
            return Vec::new();
        }
        let block = |id: &str| self.block_of(t.file, id).map(|(_, b)| b);
        let Some(own) = block(t.id) else {
            return Vec::new();
        };
        let path = &self.ix.files[t.file].path;
        defs.iter()
            .filter(|d| d.0 != t.id && d.2 == path && d.3 == "method" && block(d.0) == Some(own))
            .map(|&(id, _, _, kind)| Sym {
                id,
                qn: key,
                kind,
                file: t.file,
            })
            .collect()
    }

    /// The value declared under the qualified name of type `t` (TS
    /// declaration merging: `const X` beside `interface X`).
    fn merged_value(&self, fam: Family, t: Sym<'a>) -> Option<Sym<'a>> {
        let (key, defs) = self
            .ix
            .symbol_entries(fam, self.pkg_of(Some(t.file)), t.qn)?;
        let &(id, _, path, kind) = defs.iter().find(|d| is_value_kind(d.3))?;
        let file = *self.ix.by_path.get(path)?;
        Some(Sym {
            id,
            qn: key,
            kind,
            file,
        })
    }

    /// A bare name: a nested definition of the owner, the module's own
    /// definitions (a Go package's, any file), then an import binding.
    fn bare_name(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        name: &str,
        _call: bool,
    ) -> Option<(Sym<'a>, Tier)> {
        let (msep, isep) = seps(cx.fam);
        // Nested in the owner or its parents (a fn inside a fn).
        let mut cur = (owner != IN_FILE).then_some(owner as usize);
        let mut guard = 0;
        while let Some(i) = cur {
            let s = cx.syms.get(i)?;
            if is_callable(s.kind) || s.kind == "mod" {
                let qn = format!("{}{isep}{name}", s.qualified_name);
                if let Some(found) = cx
                    .ix
                    .by_qn
                    .get(qn.as_str())
                    .into_iter()
                    .flatten()
                    .map(|&i| &cx.syms[i as usize])
                    .find(|x| x.kind != "impl")
                {
                    let file_sym = self.here(cx, found)?;
                    return Some((file_sym, Tier::Scope));
                }
            }
            cur = parent_index(cx, i);
            guard += 1;
            if guard > 16 {
                break;
            }
        }
        let qn = join(&cx.f.module, msep, name);
        if let Some(s) = self.lookup(cx.fam, cx.pkg, &qn) {
            return Some((s, Tier::Scope));
        }
        // Rust: an inline module around the site (`mod m { fn f() { g() } }`).
        if cx.fam == Family::Rust
            && let Some(s) = self.in_inline_modules(cx, owner, name)
        {
            return Some((s, Tier::Scope));
        }
        if let Some(targets) = self.bindings(cx, name) {
            let mut found = targets.iter().filter_map(|t| match t {
                Target::Symbol(id) => self.by_id(id),
                _ => None,
            });
            let first = found.next()?;
            if found.any(|s| s.id != first.id) {
                return None;
            }
            return Some((first, Tier::Import));
        }
        self.through_globs(cx, owner, name)
            .map(|s| (s, Tier::Import))
    }

    /// What the file's glob imports bring in under `name`, when they name one
    /// symbol: Rust's `use super::*;` in a module file or `use
    /// crate::prelude::*;`, Python's `from .core import *` (which leaves out
    /// names starting with `_` unless `__all__` lists them: those are left
    /// unproven). The name is looked up as an import of it would be, so the
    /// keys it took are the file's (incremental runs see the change).
    fn through_globs(&self, cx: &FileCx<'a, 's>, owner: u32, name: &str) -> Option<Sym<'a>> {
        match self.glob_target(cx, owner, name)? {
            Target::Symbol(id) => self.by_id(&id),
            _ => None,
        }
    }

    /// What the file's glob imports bring in under `name` (a symbol, a
    /// module file), when they all that do name the same (`through_globs`).
    fn glob_target(&self, cx: &FileCx<'a, 's>, owner: u32, name: &str) -> Option<Target> {
        let mut found: Option<Target> = None;
        if cx.fam == Family::Python && !name.starts_with('_') {
            for imp in cx.f.imports.iter() {
                let crate::model::ImportSpec::Python {
                    module,
                    name: Some(star),
                } = &imp.spec
                else {
                    continue;
                };
                if star != "*" {
                    continue;
                }
                for t in super::python::python(self.ix, cx.fi, module, Some(name), 0) {
                    if !matches!(t, Target::External(_)) {
                        found_or_ambiguous(&mut found, t)?;
                    }
                }
            }
        }
        if cx.fam == Family::Rust
            && let Some(t) = self.rust_glob_target(cx, owner, name)
        {
            found_or_ambiguous(&mut found, t)?;
        }
        found
    }

    /// Rust: `name` in the modules and enums the file's globs name: an item
    /// defined there (`use super::*;` in a module file), or one the module
    /// binds by a `use` of its own (`pub use util::clamp as clamp_value` in
    /// the crate root), followed as that path. A glob there is not followed
    /// again: each unbound name of each file with a glob is asked here, and
    /// walking glob fans for all of them cost a third more CPU and memory on
    /// the 10k-file Rust corpus. Asked only while the file itself is resolved,
    /// so the lookups' keys are its own.
    fn rust_glob_target(&self, cx: &FileCx<'a, 's>, owner: u32, name: &str) -> Option<Target> {
        let own = self
            .own
            .borrow()
            .as_ref()
            .is_some_and(|o| std::ptr::eq(&**o, cx));
        if !own {
            return None;
        }
        let homes = cx.globs.get_or_init(|| self.glob_homes(cx));
        // A glob inside an inline `mod tests { use super::*; }` binds names
        // there only.
        let within = |inner: &Option<String>| {
            inner.as_deref().is_none_or(|inner| {
                cx.syms.get(owner as usize).is_some_and(|o| {
                    (o.qualified_name.strip_prefix(inner))
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
                })
            })
        };
        let mut found: Option<Target> = None;
        for (pkg, home, _) in homes.iter().filter(|h| within(&h.2)) {
            // A `mod x;` beside `pub use x::x;` (rayon's `iter::repeat`, nix's
            // `posix_fadvise`): a module and a function share the name, and the
            // binding is what a call or a path through the glob names.
            let item = self
                .lookup(Family::Rust, pkg, &join(home, "::", name))
                .filter(|s| s.kind != "mod");
            let t = if let Some(s) = item {
                // Where it was found, for `by_id` (as an import's target).
                self.ix.note_found(s.id, Family::Rust, pkg, s.qn);
                Target::Symbol(s.id.to_string())
            } else {
                let Some(mf) = self.ix.rust_module(pkg, home) else {
                    continue;
                };
                // What the module's own `use`s bind (`pub use` first), by the
                // name they bind (an alias, else the last segment).
                let imports = self.ix.imports_of(mf);
                let bound = super::rust::uses_in_order(imports, "").find(|u| u.2 == name);
                let Some((segs, _, _)) = bound else {
                    // A module of that name (`use super::*;` then `util::f()`).
                    if let Some(sub) = self.ix.rust_module(pkg, &join(home, "::", name)) {
                        found_or_ambiguous(
                            &mut found,
                            Target::File(self.ix.files[sub].id.clone()),
                        )?;
                    }
                    continue;
                };
                let targets = super::rust::rust_use(self.ix, mf, segs, 0);
                match targets.as_slice() {
                    [t @ (Target::Symbol(_) | Target::File(_))] => t.clone(),
                    _ => continue,
                }
            };
            found_or_ambiguous(&mut found, t)?;
        }
        found
    }

    /// The modules and enums the file's glob imports name (`RustUse` paths
    /// ending in `*`), as (crate, qualified name, the inline module the
    /// import is in, by its qualified name; `None` at the file's top level).
    fn glob_homes(&self, cx: &FileCx<'a, 's>) -> Vec<GlobHome<'a>> {
        let mut homes = Vec::new();
        let imports: &'a [crate::model::RawImport] = &cx.f.imports;
        for imp in imports {
            let crate::model::ImportSpec::RustUse(segs) = &imp.spec else {
                continue;
            };
            if segs.last().is_none_or(|l| l != "*") {
                continue;
            }
            let inner = (!imp.scope.is_empty()).then(|| join(&cx.f.module, "::", &imp.scope));
            for t in super::rust::rust_use(self.ix, cx.fi, segs, 0) {
                let home = match t {
                    Target::File(id) => self.ix.file_by_id(&id).map(|fi| {
                        let f = &self.ix.files[fi];
                        (f.package.as_str(), f.module.clone())
                    }),
                    Target::Symbol(id) => self
                        .by_id(&id)
                        .map(|s| (self.pkg_of(Some(s.file)), s.qn.to_string())),
                    _ => None,
                };
                if let Some((pkg, qn)) = home {
                    homes.push((pkg, qn, inner.clone()));
                }
            }
        }
        homes
    }

    fn in_inline_modules(&self, cx: &FileCx<'a, 's>, owner: u32, name: &str) -> Option<Sym<'a>> {
        let mut cur = (owner != IN_FILE).then_some(owner as usize);
        while let Some(i) = cur {
            let s = cx.syms.get(i)?;
            if s.kind == "mod" {
                let qn = format!("{}::{name}", s.qualified_name);
                if let Some(found) = self.lookup(cx.fam, cx.pkg, &qn) {
                    return Some(found);
                }
            }
            cur = parent_index(cx, i);
        }
        None
    }

    /// A symbol of this file as a `Sym`.
    fn here(&self, cx: &FileCx<'a, 's>, s: &'a RSymbol) -> Option<Sym<'a>> {
        Some(Sym {
            id: &s.id,
            qn: &s.qualified_name,
            kind: s.kind,
            file: cx.fi,
        })
    }

    /// A symbol an import resolved to, by id: looked up again by the name
    /// it was found under (`Index::found`).
    fn by_id(&self, id: &str) -> Option<Sym<'a>> {
        let (fam, pkg, qn) = self.ix.found.borrow().get(id).cloned()?;
        self.ix.dep(&["q", fam_str(fam), &pkg, &qn]);
        let defs = self.ix.definitions(fam, &pkg, &qn)?;
        let &(id, _, path, kind) = defs.iter().find(|d| d.0 == id)?;
        let file = *self.ix.by_path.get(path)?;
        Some(Sym {
            id,
            qn: self.ix.qn_key(fam, &pkg, &qn)?,
            kind,
            file,
        })
    }

    /// `s` when it is a type, else a type declared under its name (TS
    /// declaration merging: `interface $constructor` beside `function
    /// $constructor`, where a lookup may have found either).
    fn as_type(&self, fam: Family, s: Sym<'a>) -> Option<Sym<'a>> {
        if is_type_kind(s.kind) {
            return Some(s);
        }
        if fam != Family::Ts {
            return None;
        }
        let defs = self.ix.definitions(fam, self.pkg_of(Some(s.file)), s.qn)?;
        let &(id, _, path, kind) = defs.iter().find(|d| is_type_kind(d.3))?;
        Some(Sym {
            id,
            qn: s.qn,
            kind,
            file: *self.ix.by_path.get(path)?,
        })
    }

    fn is_self(&self, cx: &FileCx<'a, 's>, owner: u32, word: &str) -> bool {
        match cx.fam {
            Family::Rust => word == "self",
            Family::Ts => word == "this",
            Family::Python => {
                // The first parameter of a method, by convention.
                matches!(word, "self" | "cls")
            }
            // The method's receiver, by owner (a scan of the file's facts per
            // site was 1.6% of a cold index of Go's tree).
            Family::Go => cx.ix.receivers.get(&owner).is_some_and(|f| f.name == word),
        }
    }

    /// The type whose method (or field initialiser) the owner is: the owner's
    /// nearest type-like ancestor; a Go method's receiver type.
    fn enclosing_type(&self, cx: &FileCx<'a, 's>, owner: u32) -> Option<Sym<'a>> {
        if cx.fam == Family::Go {
            let recv = *cx.ix.receivers.get(&owner)?;
            return self.type_target(cx, owner, &recv.chain, 1).map(|(s, _)| s);
        }
        let mut cur = (owner != IN_FILE).then_some(owner as usize);
        while let Some(i) = cur {
            let s = cx.syms.get(i)?;
            if is_type_kind(s.kind) {
                return self.here(cx, s);
            }
            cur = parent_index(cx, i);
        }
        None
    }

    /// The type an `impl` block is for (the struct/enum/trait named like it),
    /// else the impl itself.
    fn type_of_impl(&self, cx: &FileCx<'a, 's>, imp: &'a RSymbol) -> Option<Sym<'a>> {
        let found = self.lookup(cx.fam, cx.pkg, &imp.qualified_name)?;
        Some(if found.kind == "impl" {
            self.here(cx, imp)?
        } else {
            found
        })
    }

    /// What a single receiver word names when it is not a value: a module
    /// (Python/TS import of a module, Go package) or a type.
    fn namespace(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        word: &str,
    ) -> Option<(Namespace<'a>, Tier)> {
        // A local variable shadows everything.
        if self.local_fact(cx, owner, word).is_some() {
            return None;
        }
        if let Some(targets) = self.bindings(cx, word) {
            let mut it = targets.iter();
            let first = it.next()?;
            if it.any(|t| t != first) {
                return None;
            }
            return match first {
                Target::File(id) => {
                    let fi = self.ix.file_by_id(id)?;
                    Some((
                        Namespace::Module(self.ix.files[fi].module.clone(), Some(fi)),
                        Tier::Qualified,
                    ))
                }
                Target::Package(dir) => {
                    let files = self.ix.go_dir(dir)?;
                    let fi = *files.first()?;
                    Some((
                        Namespace::Module(self.ix.files[fi].module.clone(), Some(fi)),
                        Tier::Qualified,
                    ))
                }
                Target::Symbol(id) => {
                    let s = self.by_id(id)?;
                    holds_members(s.kind).then_some((Namespace::Type(s), Tier::Qualified))
                }
                Target::External(_) => None,
            };
        }
        // A type (or TS namespace) of this module, else one a glob import
        // brings in.
        let (msep, _) = seps(cx.fam);
        let s = match self.lookup(cx.fam, cx.pkg, &join(&cx.f.module, msep, word)) {
            Some(s) => s,
            None => self.through_globs(cx, owner, word)?,
        };
        holds_members(s.kind).then_some((Namespace::Type(s), Tier::Qualified))
    }

    /// The latest local fact (variable, parameter) of `owner` named `name`,
    /// else a module-level one.
    fn local_fact(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        name: &str,
    ) -> Option<&'s crate::model::sites::Fact> {
        if let Some(f) = cx.ix.locals.get(&(owner, name)) {
            return Some(*f);
        }
        if owner == IN_FILE {
            return None;
        }
        // A function nested in a function is a closure: it sees the locals
        // of the functions around it (TS `const done = () => subscriber.
        // complete()`, a Python inner def). A Rust nested `fn` does not.
        if matches!(cx.fam, Family::Ts | Family::Python) {
            let mut cur = parent_index(cx, owner as usize);
            while let Some(p) = cur.filter(|&p| is_callable(cx.syms[p].kind)) {
                if let Some(f) = cx.ix.locals.get(&(p as u32, name)) {
                    return Some(*f);
                }
                cur = parent_index(cx, p);
            }
        }
        cx.ix.locals.get(&(IN_FILE, name)).copied()
    }

    /// A Rust path call: `Self::new`, `Type::m`, `module::f`, `crate::a::f`.
    fn rust_path_call(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        chain: &[Step],
        depth: usize,
    ) -> Option<(Sym<'a>, Tier)> {
        // Only a pure path (`a::b::c`); `x.y::<T>` shapes are not calls by path.
        let path_start = chain.iter().rposition(|c| !c.starts_with("::"))?;
        if path_start != 0 {
            return None;
        }
        let segs: Vec<&str> = chain.iter().map(|c| bare(c)).collect();
        let last = *segs.last()?;
        let head = &segs[..segs.len() - 1];
        // `i8::from_bits(b)`: an extension trait of the repo's on a
        // primitive (as `b.to_bits()` on a value of one).
        if let [p] = head
            && is_rust_primitive(p)
        {
            return self.impl_member(p, last).map(|m| (m, Tier::Typed));
        }
        if head == ["Self"] {
            let t = self.enclosing_type(cx, owner)?;
            let t = self.impl_target(cx, t);
            return self
                .member_or_base(t, last, depth + 1)
                .map(|(m, _)| (m, Tier::SelfTier));
        }
        // `V::splat(b)` with `V: Vector` (on the fn or its impl): the bound
        // trait's function, a dispatch.
        if let [param] = head
            && let Some(b) = self.bound(cx, owner, param)
        {
            let chain = b.chain.clone();
            let (t, _) = self.type_target(cx, owner, &chain, depth + 1)?;
            return self
                .member_or_base(t, last, depth + 1)
                .map(|(m, _)| (m, Tier::Dispatch));
        }
        let Some(t) = self.rust_path_item(cx, owner, head) else {
            // `__m256i::splat(b)`: a type from outside the repo (by an
            // import, or a glob's), with an impl of the repo for it.
            let [.., p] = head else { return None };
            return self.impl_member(p, last).map(|m| (m, Tier::Typed));
        };
        match t {
            Namespace::Module(module, _) => {
                let s = self.lookup(cx.fam, cx.pkg, &join(&module, "::", last))?;
                Some((s, Tier::Qualified))
            }
            Namespace::Type(t) => self
                .member_or_base(t, last, depth + 1)
                .map(|(m, _)| (m, Tier::Qualified)),
        }
    }

    /// What a Rust path names: a module (by its module path) or a type.
    fn rust_path_item(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        segs: &[&str],
    ) -> Option<Namespace<'a>> {
        let first = *segs.first()?;
        let rest = &segs[1..];
        let start: Namespace = match first {
            "crate" => Namespace::Module(String::new(), None),
            "self" => Namespace::Module(cx.f.module.clone(), None),
            "super" => Namespace::Module(
                cx.f.module
                    .rsplit_once("::")
                    .map(|(p, _)| p)
                    .unwrap_or("")
                    .to_string(),
                None,
            ),
            "Self" => Namespace::Type(self.impl_target(cx, self.enclosing_type(cx, owner)?)),
            name => {
                // An item of this module (or an inline module around the
                // site), else an import binding.
                // An `impl` block here defines no name: `impl Trait for T`
                // of a `T` from elsewhere names the imported `T`.
                if let Some(s) = self
                    .lookup(cx.fam, cx.pkg, &join(&cx.f.module, "::", name))
                    .filter(|s| s.kind != "impl")
                    .or_else(|| {
                        self.in_inline_modules(cx, owner, name)
                            .filter(|s| s.kind != "impl")
                    })
                {
                    Self::item_namespace(s)
                } else if self
                    .ix
                    .module_file(Family::Rust, cx.pkg, &join(&cx.f.module, "::", name))
                    .is_some()
                {
                    Namespace::Module(join(&cx.f.module, "::", name), None)
                } else if let Some(targets) = self.bindings(cx, name) {
                    let mut it = targets.iter();
                    let t = it.next()?;
                    if it.any(|x| x != t) {
                        return None;
                    }
                    self.rust_namespace(cx, t)?
                } else {
                    // Another crate of the workspace (`geom_traps::Circle`),
                    // else a glob import's (`use super::*;`, then
                    // `Widget::make()`).
                    let whole: Vec<String> = segs.iter().map(|s| s.to_string()).collect();
                    let found = super::rust::rust_use(self.ix, cx.fi, &whole, 0);
                    if let Some(t) = found.first() {
                        return self.rust_namespace(cx, t);
                    }
                    let t = self.glob_target(cx, owner, name)?;
                    self.rust_namespace(cx, &t)?
                }
            }
        };
        let mut cur = start;
        for seg in rest {
            cur = match cur {
                Namespace::Module(m, _) => {
                    let qn = join(&m, "::", seg);
                    if let Some(s) = self.lookup(cx.fam, cx.pkg, &qn) {
                        Self::item_namespace(s)
                    } else if self.ix.module_file(Family::Rust, cx.pkg, &qn).is_some() {
                        Namespace::Module(qn, None)
                    } else {
                        // A name the module re-exports (`pub use
                        // self::compiler::Config` in `thompson`), found as a
                        // `use crate::…` of it would find it.
                        let mut whole = vec!["crate".to_string()];
                        whole.extend(m.split("::").filter(|p| !p.is_empty()).map(str::to_string));
                        whole.push(seg.to_string());
                        let found = super::rust::rust_use(self.ix, cx.fi, &whole, 0);
                        self.rust_namespace(cx, found.first()?)?
                    }
                }
                // An associated item of a type is not a namespace.
                Namespace::Type(_) => return None,
            };
        }
        Some(cur)
    }

    /// What a Rust import target names as a path's head: a module of this
    /// crate (its file), or an item (a `mod` symbol is a module).
    fn rust_namespace(&self, cx: &FileCx<'a, 's>, t: &Target) -> Option<Namespace<'a>> {
        match t {
            Target::File(id) => {
                let fi = self.ix.file_by_id(id)?;
                let f = &self.ix.files[fi];
                (f.package == cx.f.package).then(|| Namespace::Module(f.module.clone(), Some(fi)))
            }
            Target::Symbol(id) => Some(Self::item_namespace(self.by_id(id)?)),
            _ => None,
        }
    }

    fn item_namespace(s: Sym<'a>) -> Namespace<'a> {
        if s.kind == "mod" {
            Namespace::Module(s.qn.to_string(), None)
        } else {
            Namespace::Type(s)
        }
    }

    /// For an `impl` symbol, the type it is for (struct, enum, trait); any
    /// other type as it is.
    fn impl_target(&self, cx: &FileCx<'a, 's>, t: Sym<'a>) -> Sym<'a> {
        if t.kind != "impl" {
            return t;
        }
        self.lookup(cx.fam, self.pkg_of(Some(t.file)), t.qn)
            .unwrap_or(t)
    }

    /// The type symbol a type chain names, with the tier that proved it.
    fn type_target(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        chain: &[Step],
        depth: usize,
    ) -> Option<(Sym<'a>, Tier)> {
        if depth > MAX_DEPTH || chain.is_empty() {
            return None;
        }
        // A container annotation (`list[Parameter]`): the container.
        let chain = match chain.iter().position(|c| c == ELEMENT) {
            Some(i) => &chain[..i],
            None => chain,
        };
        if chain
            .iter()
            .any(|c| matches!(c.as_str(), "()" | "{}" | "?" | "#new"))
        {
            return None;
        }
        // Go: a struct of no name (`[]struct{ r *Replacer }{…}`) stands as
        // its var's or function's own type, whose fields it owns.
        if let [shape, var] = chain
            && shape == SHAPE
            && cx.fam == Family::Go
        {
            return self.go_shape(cx, owner, var).map(|s| (s, Tier::Typed));
        }
        if chain.len() == 1 {
            let name = bare(&chain[0]);
            if name == "Self" && cx.fam == Family::Rust {
                let t = self.enclosing_type(cx, owner)?;
                return Some((self.impl_target(cx, t), Tier::SelfTier));
            }
            // A generic parameter: its bound.
            if let Some(b) = self.bound(cx, owner, name) {
                return self.type_target(cx, owner, &b.chain, depth + 1);
            }
            let (s, tier) = self.bare_name(cx, owner, name, false)?;
            let s = self.as_type(cx.fam, s)?;
            return Some((self.impl_target(cx, s), tier));
        }
        if cx.fam == Family::Rust {
            if let [head, assoc] = chain
                && head == "Self"
            {
                return self.own_associated_type(cx, owner, bare(assoc));
            }
            let segs: Vec<&str> = chain.iter().map(|c| bare(c)).collect();
            return match self.rust_path_item(cx, owner, &segs)? {
                Namespace::Type(t) => Some((self.impl_target(cx, t), Tier::Qualified)),
                Namespace::Module(..) => None,
            };
        }
        // A namespace import or an imported module, re-exports followed
        // (`class C(click.Command)`, whose `Command` is `click.core`'s).
        if chain.len() == 2
            && self.local_fact(cx, owner, &chain[0]).is_none()
            && let Some(found) = self.member_of_import(cx, &chain[0], bare(&chain[1]))
        {
            return self
                .as_type(cx.fam, found)
                .map(|found| (found, Tier::Qualified));
        }
        // `pkg.Type`, `module.Class`, `ns.Type`.
        let (ns, _) = self.namespace(cx, owner, &chain[0])?;
        let Namespace::Module(module, fam_file) = ns else {
            return None;
        };
        let (msep, isep) = seps(cx.fam);
        let rest: Vec<&str> = chain[1..].iter().map(|c| bare(c)).collect();
        let qn = join(&module, msep, &rest.join(isep));
        let s = self.lookup(cx.fam, self.pkg_of(fam_file), &qn)?;
        is_type_kind(s.kind).then_some((s, Tier::Qualified))
    }

    /// Go: what stands for the struct of no name a local (`tests :=
    /// []struct{ … }{…}`) or package-level var (`var cases = …`) holds, whose
    /// fields are its facts (`extract::sites::go_var_owner`): the function
    /// the local is in, or the var.
    fn go_shape(&self, cx: &FileCx<'a, 's>, owner: u32, var: &str) -> Option<Sym<'a>> {
        let at = if owner == IN_FILE {
            cx.syms
                .iter()
                .position(|s| s.kind == "var" && s.qualified_name.rsplit('.').next() == Some(var))?
        } else {
            owner as usize
        };
        let s = cx.syms.get(at)?;
        Some(Sym {
            id: &s.id,
            qn: &s.qualified_name,
            kind: s.kind,
            file: cx.fi,
        })
    }

    /// Rust `Self::IntoIter` in a method of an impl block: the block's own
    /// `type IntoIter = IntoIter<A>;` (each of a type's impls may define
    /// one; lookups through it reach its target, as through an alias), else
    /// the path's item.
    fn own_associated_type(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        name: &str,
    ) -> Option<(Sym<'a>, Tier)> {
        let imp = parent_index(cx, owner as usize).filter(|&i| cx.syms[i].kind == "impl");
        let own = imp.and_then(|imp| {
            let qn = format!("{}::{name}", cx.syms[imp].qualified_name);
            let at = cx.ix.by_qn.get(qn.as_str())?;
            at.iter()
                .copied()
                .find(|&i| parent_index(cx, i as usize) == Some(imp))
        });
        if let Some(i) = own {
            let s = &cx.syms[i as usize];
            let t = Sym {
                id: &s.id,
                qn: &s.qualified_name,
                kind: s.kind,
                file: cx.fi,
            };
            return Some((t, Tier::SelfTier));
        }
        match self.rust_path_item(cx, owner, &["Self", name])? {
            Namespace::Type(t) => Some((self.impl_target(cx, t), Tier::Qualified)),
            Namespace::Module(..) => None,
        }
    }

    /// A generic parameter's bound (`T: Shape`), on the owner or its parents.
    fn bound(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        name: &str,
    ) -> Option<&'s crate::model::sites::Fact> {
        let mut cur = (owner != IN_FILE).then_some(owner as usize);
        while let Some(i) = cur {
            if let Some(f) = cx.ix.bounds.get(&(i as u32, name)) {
                return Some(*f);
            }
            cur = parent_index(cx, i);
        }
        None
    }

    /// The type of a value chain (a receiver), with `SelfTier` when it is the
    /// enclosing object itself and `Typed` otherwise.
    fn value_type(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        chain: &[Step],
        depth: usize,
    ) -> Option<(Sym<'a>, Tier)> {
        if depth > MAX_DEPTH || chain.is_empty() {
            return None;
        }
        if cx.fam == Family::Python
            && chain.iter().filter(|c| *c == "()").count() > FOLD_CALLS
            && let Some(found) = self.folded_type(cx, owner, chain, depth)
        {
            return Some(found);
        }
        let last = chain.last()?.as_str();
        match last {
            "()" => {
                let callee = &chain[..chain.len() - 1];
                // `new X()`
                if callee.first().is_some_and(|c| c == "#new") {
                    return self
                        .type_target(cx, owner, &callee[1..], depth + 1)
                        .map(|(s, _)| (s, Tier::Typed));
                }
                // Rust: `.unwrap()`, `.expect(…)`, `.clone()` of a value give
                // that value (its `Result`/`Option` is taken off the type
                // where the type is written: see `rust_unwrapped`).
                if cx.fam == Family::Rust
                    && callee.len() >= 2
                    && matches!(
                        callee[callee.len() - 1].as_str(),
                        "unwrap" | "expect" | "unwrap_or_default" | "unwrap_unchecked" | "clone"
                    )
                    && let Some(found) =
                        self.value_type(cx, owner, &callee[..callee.len() - 1], depth + 1)
                {
                    return Some(found);
                }
                // Rust: `.as_ref()`, `.as_mut()`, `.borrow()`, `.borrow_mut()`
                // of an `Option` or a `RefCell` (taken off where written) give
                // the value too, unless its type has a method of that name.
                if cx.fam == Family::Rust
                    && callee.len() >= 2
                    && matches!(
                        callee[callee.len() - 1].as_str(),
                        "as_ref" | "as_mut" | "borrow" | "borrow_mut" | "as_deref" | "as_deref_mut"
                    )
                    && let Some(found) =
                        self.value_type(cx, owner, &callee[..callee.len() - 1], depth + 1)
                    && self
                        .member_or_base(found.0, &callee[callee.len() - 1], depth + 1)
                        .is_none()
                {
                    return Some(found);
                }
                let Some((target, _)) = self.called(cx, owner, callee, depth + 1) else {
                    if let Some(found) = self.proxied(cx, owner, callee, depth) {
                        return Some(found);
                    }
                    // Rust: a constructor of a std trait the type derives or
                    // implements without the repo writing it down
                    // (`LookSet::default()`, `Span::from(r)`): the type.
                    return match callee.split_last() {
                        Some((f, ty))
                            if cx.fam == Family::Rust
                                && !ty.is_empty()
                                && matches!(f.as_str(), "::default" | "::from" | "::from_iter") =>
                        {
                            self.type_target(cx, owner, ty, depth + 1)
                                .map(|(t, _)| (t, Tier::Typed))
                        }
                        _ => None,
                    };
                };
                if is_type_kind(target.kind) {
                    return Some((target, Tier::Typed));
                }
                // A method declared to return `this` (TS builders:
                // `min(n): this`) returns its receiver's type.
                if cx.fam == Family::Ts
                    && callee.len() >= 2
                    && self.returns_this(target)
                    && let Some(found) =
                        self.value_type(cx, owner, &callee[..callee.len() - 1], depth + 1)
                {
                    return Some((found.0, Tier::Typed));
                }
                let t = self.returns(target, depth + 1)?;
                Some((t, Tier::Typed))
            }
            "{}" | SELF_VALUE => self
                .type_target(cx, owner, &chain[..chain.len() - 1], depth + 1)
                .map(|(s, _)| (s, Tier::Typed)),
            "?" | "#new" => None,
            BORROWED => self.value_type(cx, owner, &chain[..chain.len() - 1], depth + 1),
            ITERATES => self.element_type(cx, owner, &chain[..chain.len() - 1], depth + 1),
            // What a Rust `map`/`and_then` closure is given: the value held.
            THEN => {
                let (name, receiver) = chain[..chain.len() - 1].split_last()?;
                self.combinator_holds(cx, owner, receiver, name, depth)
            }
            _ if chain.len() == 1 => self.word_type(cx, owner, bare(last), depth),
            field => {
                // TS: a constant a module exports (`core.$ZodType`).
                if cx.fam == Family::Ts
                    && chain.len() <= 5
                    && let Some(mf) = self.ts_module_of(cx, owner, &chain[..chain.len() - 1])
                {
                    let exported = super::typescript::ts_export(self.ix, mf, bare(field));
                    let var = exported.iter().find_map(|t| match t {
                        Target::Symbol(id) => self.by_id(id),
                        _ => None,
                    })?;
                    return self.const_type(var, depth + 1);
                }
                // Python: a module's global (`flask.session`, `import flask`).
                if cx.fam == Family::Python
                    && self.local_fact(cx, owner, &chain[0]).is_none()
                    && let Some((var, _)) = self.call_target(cx, owner, chain, depth + 1)
                    && matches!(var.kind, "var" | "const")
                {
                    return self.const_type(var, depth + 1);
                }
                // `a.b`: the field `b` of `a`'s type.
                let (t, _) = self.value_type(cx, owner, &chain[..chain.len() - 1], depth + 1)?;
                let t = self.field_type(t, bare(field), depth + 1)?;
                Some((t, Tier::Typed))
            }
        }
    }

    /// Python: the type of a long chain of calls on one value (`x.a().b()…`,
    /// what a local rebound from itself many times is: `line =
    /// line.strip()`), typed from the left, one method or field at a time,
    /// so that its length costs no depth. The head is the chain up to the
    /// first call's method; `None` where a step is not a plain method or
    /// field (the recursive typing answers then).
    fn folded_type(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        chain: &[Step],
        depth: usize,
    ) -> Option<(Sym<'a>, Tier)> {
        // `x.a().b()…`: `x`, then `a()`; `f().a()…`: `f()`, then `a()`.
        let first = chain.iter().position(|c| c == "()")?;
        let at = if first >= 2 { first - 1 } else { first + 1 };
        let (mut t, _) = self.value_type(cx, owner, &chain[..at], depth + 1)?;
        let mut rest = &chain[at..];
        while let Some((step, tail)) = rest.split_first() {
            if is_marker_step(step) {
                return None;
            }
            if tail.first().is_some_and(|c| c == "()") {
                let (m, _) = self.member_or_base(t, bare(step), depth + 1)?;
                t = if is_type_kind(m.kind) {
                    m
                } else {
                    self.returns(m, depth + 1)?
                };
                rest = &tail[1..];
            } else {
                t = self.field_type(t, bare(step), depth + 1)?;
                rest = tail;
            }
        }
        Some((t, Tier::Typed))
    }

    /// A Python object of a repo class handed to a library's function or
    /// class (`URLSafeTimedSerializer(key, serializer=self.serializer)`, a
    /// `HANDED` site): the library keeps or uses it and may call its methods
    /// back, so `analyze_impact` steps from them to this call. Only when the
    /// callee is a name imported from outside the repo, or a member of a
    /// module from there: not a builtin (`str(x)`, `len(x)` call back only
    /// the runtime's dunders, which answers about those already say are
    /// unproven), not a method of a value (`self.items.append(x)` keeps it).
    fn handed(&self, cx: &FileCx<'a, 's>, site: &RawSite) -> Option<SiteEdge> {
        let rest = &site.chain[1..];
        let k = rest.iter().position(|c| c == HANDED)?;
        let (arg, callee) = (&rest[..k], &rest[k + 1..]);
        let (head, owner) = (bare(callee.first()?), site.owner);
        // A constructor keeps what it is given and hands it on
        // (`weakref.proxy(app)`): only an object it makes counts there
        // (`options["loader"] = app.create_loader()`, then
        // `Base.__init__(self, **options)`). The typing helpers give their
        // argument back.
        let in_constructor = cx
            .syms
            .get(owner as usize)
            .is_some_and(|s| s.qualified_name.ends_with(".__init__"))
            && arg.last().is_none_or(|a| a != "()");
        let identity = callee
            .last()
            .is_some_and(|c| matches!(c.as_str(), "cast" | "assert_type" | "reveal_type"));
        if in_constructor || identity {
            return None;
        }
        let outside = cx.binds(head)
            && self.local_fact(cx, owner, head).is_none()
            && self.outside_chain(cx, owner, callee, 0);
        if !outside || self.called(cx, owner, callee, 0).is_some() {
            return None;
        }
        let (t, _) = self.value_type(cx, owner, arg, 1)?;
        (t.kind == "class").then(|| handed_edge(cx, site, t, callee))
    }

    /// Python: `p._get_current_object()` on a proxy global the code types as
    /// a repo class it is not (`current_app: Flask = LocalProxy(…)`, werkzeug's
    /// proxies, which Flask-style apps are built on): the object behind the
    /// proxy, of the declared class. Only when that class has no method of the
    /// name, so a repo's own `_get_current_object` is still called.
    fn proxied(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        callee: &[Step],
        depth: usize,
    ) -> Option<(Sym<'a>, Tier)> {
        let (method, receiver) = callee.split_last()?;
        if cx.fam != Family::Python || method != "_get_current_object" || receiver.is_empty() {
            return None;
        }
        let (t, _) = self.value_type(cx, owner, receiver, depth + 1)?;
        (t.kind == "class" && self.member_or_base(t, method, depth + 1).is_none())
            .then_some((t, Tier::Typed))
    }

    /// The type of parameter `j` of the function passed as argument `i` of
    /// `callee` (TS contextual typing, `CALLBACK`): what the callee declares
    /// for it, in a function type (`init: (source: Observable<T>, subscriber:
    /// Subscriber<R>) => void`) or through an alias of one (`handler:
    /// Handler`). Of `new X(…)`, the constructor's.
    fn callback_type(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        callee: &[Step],
        (i, j): (&str, &str),
        depth: usize,
    ) -> Option<Sym<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        if cx.fam == Family::Rust
            && let Some(t) = self.held_by_combinator(cx, owner, callee, (i, j), depth)
        {
            return Some(t);
        }
        let f = match callee.split_first() {
            Some((new, class)) if new == "#new" => {
                let (t, _) = self.type_target(cx, owner, class, depth + 1)?;
                self.member_or_base(t, "constructor", depth + 1)?.0
            }
            _ => self.called(cx, owner, callee, depth + 1)?.0,
        };
        let fcx = self.cx(f.file, None);
        let fi = *fcx.ix.ids.get(f.id)?;
        let declared = |home: &FileCx<'a, 's>, at: u32, key: &str| {
            let chain = home.ix.params.get(&(at, key))?.chain.clone();
            self.type_target(home, at, &chain, depth + 1)
                .map(|(s, _)| s)
        };
        if let Some(t) = declared(&fcx, fi, &format!("{i}.{j}")) {
            return Some(t);
        }
        let alias = declared(&fcx, fi, i)?;
        let acx = self.cx(alias.file, None);
        let ai = *acx.ix.ids.get(alias.id)?;
        declared(&acx, ai, j)
    }

    /// Rust: what a closure passed to an `Option`/`Result` combinator gets
    /// (`self.prefilter.as_ref().map_or(0, |p| p.memory_usage())`): the value
    /// held, whose type is the receiver's (`Option`/`Result` are taken off
    /// types where written). Not when the type has a method of that name or
    /// is an iterator itself (its `map` gets its items).
    fn held_by_combinator(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        callee: &[Step],
        (i, j): (&str, &str),
        depth: usize,
    ) -> Option<Sym<'a>> {
        let (name, receiver) = callee.split_last()?;
        let arg = match name.as_str() {
            "map" | "and_then" | "filter" | "is_some_and" | "is_none_or" | "is_ok_and"
            | "inspect" => "0",
            "map_or" | "map_or_else" => "1",
            _ => return None,
        };
        if i != arg || j != "0" {
            return None;
        }
        self.combinator_holds(cx, owner, receiver, name, depth)
            .map(|(t, _)| t)
    }

    /// The value a Rust `Option`/`Result` combinator `name` on `receiver`
    /// hands its closure: the receiver's type (`Option`/`Result` are taken
    /// off where types are written), unless that type has a method of that
    /// name or is an iterator itself (its `map` gets its items).
    fn combinator_holds(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        receiver: &[Step],
        name: &str,
        depth: usize,
    ) -> Option<(Sym<'a>, Tier)> {
        if receiver.is_empty() {
            return None;
        }
        let (t, tier) = self.value_type(cx, owner, receiver, depth + 1)?;
        let own = self.member_or_base(t, name, depth + 1).is_some()
            || self.in_impl_of(t, "next", "Iterator", depth + 1).is_some();
        (!own).then_some((t, tier))
    }

    /// The type of a value named by one word: `self`, a local (parameter,
    /// variable, loop or comprehension variable, callback parameter), a
    /// module-level variable.
    fn word_type(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        word: &str,
        depth: usize,
    ) -> Option<(Sym<'a>, Tier)> {
        if self.is_self(cx, owner, word) {
            let t = self.enclosing_type(cx, owner)?;
            return Some((self.impl_target(cx, t), Tier::SelfTier));
        }
        let Some(mut fact) = self.local_fact(cx, owner, word) else {
            return self.global_type(cx, owner, word, depth + 1);
        };
        // A comprehension's variable of no known element type: the
        // site may be outside it, where the binding before holds.
        if fact.chain.last().is_some_and(|c| c == COMPREHENDS) {
            let (iterable, _) = fact.chain.split_at(fact.chain.len() - 1);
            if let Some(found) = self.element_type(cx, owner, iterable, depth + 1) {
                return Some(found);
            }
            fact = self.binding_before(cx, fact, word)?;
        }
        if let Some((callee, i, j)) = callback(&fact.chain) {
            return self
                .callback_type(cx, fact.owner, callee, (i, j), depth + 1)
                .map(|s| (s, Tier::Typed));
        }
        // Rust `if let Some(pre) = pre`, `let x = x;`: the binding before's
        // value (`pre: Option<&Prefilter>`, its `Option` taken off).
        if cx.fam == Family::Rust
            && fact.chain.len() == 1
            && fact.chain[0] == word
            && let Some(before) = self.binding_before(cx, fact, word)
        {
            fact = before;
        }
        if fact.chain.len() == 1 && fact.chain[0] == word {
            // An untyped parameter: a pytest fixture's value when
            // its owner is a test or a fixture (seen from a function
            // nested in it too: `@app.teardown_request def f(e):`).
            if cx.fam == Family::Python {
                return self
                    .fixture_type(cx, fact.owner, word, depth + 1)
                    .map(|s| (s, Tier::Typed));
            }
            return None;
        }
        // In the scope the local belongs to (the file's, a function
        // around this one's).
        let from_owner = fact.owner;
        let chain = self.unshadowed(cx, from_owner, word, fact);
        // A Rust name a `let` takes out of a tuple whose element's type is
        // not known (`let (rh, wh) = io::split(s)`, a library's) says
        // nothing: the name's other bindings do (`TUPLE_ELEMENT`).
        let all = cx.ix.bindings.get(&(fact.owner, word));
        let (t, _) = match self.fact_type(cx, from_owner, &chain, depth + 1) {
            Some(found) => found,
            None if untupled(fact) => {
                fact = all?.iter().copied().find(|b| !untupled(b))?;
                let chain = self.unshadowed(cx, from_owner, word, fact);
                self.fact_type(cx, from_owner, &chain, depth + 1)?
            }
            None => return None,
        };
        // Rust shadows a name with values of other types (`if let
        // Some(e) = self.dfa.get(…) {…} else if let Some(e) =
        // self.hybrid.get(…)`), and which binding a site sees is not
        // kept: every binding must agree.
        if cx.fam == Family::Rust
            && let Some(all) = all
            && all.len() > 1
        {
            for b in all.iter().filter(|b| !std::ptr::eq(**b, fact)) {
                let chain = self.unshadowed(cx, from_owner, word, b);
                let other = self.fact_type(cx, from_owner, &chain, depth + 1);
                if other.is_none() && untupled(b) {
                    continue;
                }
                if other.is_none_or(|(o, _)| o.id != t.id) {
                    return None;
                }
            }
        }
        Some((t, Tier::Typed))
    }

    /// Rust: method `name` of the type from outside the repo that `receiver`
    /// is declared with (`sid: u32`, `-> __m256i`, an element of `&[u32]`),
    /// when one impl of the repo for that type defines it (`impl U32 for u32
    /// { fn as_usize(self) … }`, `impl Vector for __m256i`).
    fn foreign_method(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        receiver: &[Step],
        name: &str,
        depth: usize,
    ) -> Option<Sym<'a>> {
        let p = self.foreign_type_of(cx, owner, receiver, depth + 1)?;
        // A generic parameter (`rdr: R` with `R: io::Read`) is no type's name.
        if self.bound(cx, owner, &p).is_some() {
            return None;
        }
        // (`s.len()` on a `&str` is std's, not a repo's `impl NixPath for
        // str { fn len }`: see `impl_member`.)
        self.impl_member(&p, name)
    }

    /// Rust: whether the repo may define the method `chain` calls on a
    /// receiver `typed_outside` says is none of the repo's: an extension
    /// trait impl of the repo for a primitive type defines it (`impl I8 for
    /// i8`), or the receiver is typed as a repo type several of whose impls
    /// define it (`let b = Bag::new(); (&b).into_iter()`, which no tier
    /// proved). The call is then unresolved, not left out as the language's.
    fn repo_may_define(&self, cx: &FileCx<'a, 's>, owner: u32, chain: &[Step]) -> bool {
        if cx.fam != Family::Rust {
            return false;
        }
        let name = called_name(chain);
        if !self.ix.impl_methods(super::ANY_PRIMITIVE, &name).is_empty() {
            return true;
        }
        let receiver = &chain[..chain.len().saturating_sub(1)];
        let Some((t, _)) = self.value_type(cx, owner, receiver, 1) else {
            return false;
        };
        let qn = format!("{}::{name}", t.qn);
        (self.ix)
            .symbol_entries(Family::Rust, self.pkg_of(Some(t.file)), &qn)
            .is_some()
    }

    /// Method `name` of the type named `p`, from outside the repo, that one
    /// impl block of the repo defines (`impl I8 for i8 { fn from_bits(…) }`,
    /// `impl Vector for __m256i`). Not a method the standard library's type
    /// has itself (`Vec::extend_from_slice(self, xs)` in `impl Ext for Vec`):
    /// an inherent method is found before any trait's.
    fn impl_member(&self, p: &str, name: &str) -> Option<Sym<'a>> {
        if builtin_type(Family::Rust, p) && super::std_names::is_std_method(Family::Rust, name) {
            return None;
        }
        let found = self.ix.impl_methods(p, name);
        let mut foreign = found.iter().filter(|&&(fi, of, si)| {
            super::impl_of_method(&self.ix.files[fi as usize], si as usize)
                .is_some_and(|(at, _)| self.impl_for_foreign(fi as usize, at, of))
        });
        let &(fi, _, si) = foreign.next()?;
        if foreign.next().is_some() {
            return None;
        }
        let s = &self.ix.files[fi as usize].symbols[si as usize];
        Some(Sym {
            id: &s.id,
            qn: &s.qualified_name,
            kind: s.kind,
            file: fi as usize,
        })
    }

    /// Whether the impl block at `at` of file `fi` is for a type from outside
    /// the repo: a primitive, or a name its file binds to no type of the repo
    /// (`use core::arch::x86_64::__m256i;` then `impl Vector for __m256i`).
    fn impl_for_foreign(&self, fi: usize, at: usize, of: &str) -> bool {
        if is_rust_primitive(of) {
            return true;
        }
        // A type of the file, in a function or module the impl is not in
        // (a test's `struct R;` then `impl Read for R`), is the repo's too.
        let f = &self.ix.files[fi];
        if f.symbols.iter().any(|s| {
            is_type_kind(s.kind)
                && s.kind != "impl"
                && crate::model::names::last_segment(&s.qualified_name) == of
        }) {
            return false;
        }
        let icx = self.cx(fi, None);
        self.rust_path_item(&icx, at as u32, &[of]).is_none()
    }

    /// The type from outside the repo a Rust value chain is declared with, by
    /// the facts (`foreign_method`): a primitive, or a name the repo does not
    /// define a type of (else the chain would have been typed).
    fn foreign_type_of(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        chain: &[Step],
        depth: usize,
    ) -> Option<Step> {
        if depth > MAX_DEPTH {
            return None;
        }
        let one = |declared: &[Step]| match declared {
            [p] if !is_marker_step(p) => Some(p.clone()),
            _ => None,
        };
        let element = |declared: &[Step]| {
            let i = declared.iter().position(|c| c == ELEMENT)?;
            one(&declared[i + 1..])
        };
        let (last, before) = chain.split_last()?;
        match last.as_str() {
            "()" => {
                let (f, _) = self.called(cx, owner, before, depth + 1)?;
                let fcx = self.cx(f.file, None);
                let fi = *fcx.ix.ids.get(f.id)?;
                one(&fcx.ix.returns.get(&fi)?.chain)
            }
            ITERATES => match before {
                [word] => element(&self.local_fact(cx, owner, bare(word))?.chain),
                [rest @ .., field] if !rest.is_empty() => {
                    let (t, _) = self.value_type(cx, owner, rest, depth + 1)?;
                    let tcx = self.cx(t.file, None);
                    let ti = *tcx.ix.ids.get(t.id)?;
                    element(&tcx.ix.fields.get(&(ti, bare(field)))?.chain)
                }
                _ => None,
            },
            word if before.is_empty() => {
                let fact = self.local_fact(cx, owner, bare(word))?;
                match fact.chain.split_last() {
                    Some((i, container)) if i == ITERATES => self.foreign_type_of(
                        cx,
                        fact.owner,
                        &[container, &[Step::const_new(ITERATES)]].concat(),
                        depth + 1,
                    ),
                    // What a call made (`let v = load(b)`).
                    Some((c, _)) if c == "()" => {
                        self.foreign_type_of(cx, fact.owner, &fact.chain, depth + 1)
                    }
                    _ => one(&fact.chain),
                }
            }
            field => {
                let (t, _) = self.value_type(cx, owner, before, depth + 1)?;
                let tcx = self.cx(t.file, None);
                let ti = *tcx.ix.ids.get(t.id)?;
                one(&tcx.ix.fields.get(&(ti, bare(field)))?.chain)
            }
        }
    }

    /// The binding of `word` before `fact` in its owner that is no
    /// comprehension's variable.
    fn binding_before(&self, cx: &FileCx<'a, 's>, fact: &'s Fact, word: &str) -> Option<&'s Fact> {
        cx.ix
            .bindings
            .get(&(fact.owner, word))?
            .iter()
            .rev()
            .find(|f| f.byte < fact.byte && f.chain.last().is_none_or(|c| c != COMPREHENDS))
            .copied()
    }

    /// What iterating `iterable` gives (`for p in self.get_params(ctx)`):
    /// the element of the container type declared for it (`-> list[Parameter]`,
    /// `params: Sequence[Parameter]`, a field's annotation).
    fn element_type(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        iterable: &[Step],
        depth: usize,
    ) -> Option<(Sym<'a>, Tier)> {
        if depth > MAX_DEPTH {
            return None;
        }
        let declared = self.declared_element(cx, owner, iterable, depth);
        if declared.is_some() || cx.fam != Family::Rust {
            return declared;
        }
        // Rust: a value of a repo type that iterates itself (`for m in
        // self.try_find_iter(…)?`, an iterator struct): what its `next`
        // returns (`Option`/`Result` taken off where written).
        let (t, _) = self.value_type(cx, owner, iterable, depth + 1)?;
        let (next, _) = self.member_or_base(t, "next", depth + 1)?;
        self.returns(next, depth + 1).map(|s| (s, Tier::Typed))
    }

    /// What iterating `iterable` gives by the container type declared for
    /// it (`element_type`).
    fn declared_element(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        iterable: &[Step],
        depth: usize,
    ) -> Option<(Sym<'a>, Tier)> {
        let element = |home: &FileCx<'a, 's>, at: u32, declared: &[Step]| {
            let i = declared.iter().position(|c| c == ELEMENT)?;
            self.type_target(home, at, &declared[i + 1..], depth + 1)
                .map(|(s, _)| (s, Tier::Typed))
        };
        // Rust: `xs.iter()`, `xs.iter_mut()`, `xs.into_iter()`, `xs.drain(..)`
        // give what iterating `xs` gives.
        let iterable = match iterable {
            [xs @ .., m, call]
                if cx.fam == Family::Rust
                    && !xs.is_empty()
                    && call == "()"
                    && matches!(m.as_str(), "iter" | "iter_mut" | "into_iter" | "drain") =>
            {
                xs
            }
            _ => iterable,
        };
        let (last, before) = iterable.split_last()?;
        if last == "()" {
            let (f, _) = self.called(cx, owner, before, depth + 1)?;
            let fcx = self.cx(f.file, None);
            let fi = *fcx.ix.ids.get(f.id)?;
            let declared = fcx.ix.returns.get(&fi)?.chain.clone();
            return element(&fcx, fi, &declared);
        }
        if before.is_empty() {
            let fact = self.local_fact(cx, owner, bare(last))?;
            let at = fact.owner;
            if fact.chain.iter().any(|c| c == ELEMENT) {
                return element(cx, at, &fact.chain);
            }
            // `params = self.get_params(ctx)`, then `for p in params`.
            let chain = fact.chain.clone();
            return match chain.last() {
                Some(c) if c == "()" && chain.len() > 1 => {
                    self.element_type(cx, at, &chain, depth + 1)
                }
                _ => None,
            };
        }
        // `self.params`, `cmd.params`: a field's annotation.
        let (t, _) = self.value_type(cx, owner, before, depth + 1)?;
        let tcx = self.cx(t.file, None);
        let ti = *tcx.ix.ids.get(t.id)?;
        let declared = tcx.ix.fields.get(&(ti, bare(last)))?.chain.clone();
        element(&tcx, ti, &declared)
    }

    /// A local's initialiser with its own name at its head made to start
    /// from the binding before (`let input = input.clone().span(…)` where
    /// `input: &Input` is a parameter: `Input{}.clone().span(…)`). A local is
    /// its owner's last binding of the name, which names itself here.
    fn unshadowed(&self, cx: &FileCx<'a, 's>, owner: u32, word: &str, fact: &'s Fact) -> Vec<Step> {
        let mut chain = fact.chain.to_vec();
        let mut at = fact.byte;
        let all = cx
            .ix
            .bindings
            .get(&(fact.owner, word))
            .map_or(&[][..], |all| all.as_slice());
        // Each step goes to an earlier binding: at most one per binding.
        // (Python's long chains are typed from the left: `folded_type`.)
        let bound = match cx.fam {
            Family::Python => all.len(),
            _ => all.len().min(4),
        };
        for _ in 0..bound {
            // `[word]` alone is a Rust rebinding to the value before (`if
            // let Some(pre) = pre`); longer chains call on it.
            if chain.is_empty() || bare(&chain[0]) != word {
                break;
            }
            let Some(before) = all.iter().rev().find(|f| f.byte < at) else {
                break;
            };
            let marked = before
                .chain
                .iter()
                .any(|c| matches!(c.as_str(), "()" | "{}" | "#new" | "?"));
            let mut head = before.chain.to_vec();
            // A type (a parameter's): a value of it.
            if !marked && self.type_target(cx, owner, &head, 1).is_some() {
                head.push(Step::const_new("{}"));
            }
            head.extend(chain.drain(1..));
            chain = head;
            at = before.byte;
        }
        chain
    }

    /// The type of a module-level variable named `word` that is not this
    /// file's (imported, or another file's of a Go package): what its own
    /// file's annotation or initialiser says (`current_app: AppProxy`,
    /// `var defaultReport = New(…)`, `export const app = new Hono()`).
    fn global_type(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        word: &str,
        depth: usize,
    ) -> Option<(Sym<'a>, Tier)> {
        if depth > MAX_DEPTH {
            return None;
        }
        let var = match self.bare_name(cx, owner, word, false) {
            Some((var, _)) => var,
            // An import binding a type and a constant of one name (TS
            // declaration merging): the constant.
            None if cx.fam == Family::Ts => {
                let targets = self.bindings(cx, word)?;
                let syms: Vec<Sym<'a>> = targets
                    .iter()
                    .filter_map(|t| match t {
                        Target::Symbol(id) => self.by_id(id),
                        _ => None,
                    })
                    .collect();
                let var = *syms.iter().find(|s| matches!(s.kind, "var" | "const"))?;
                if syms.iter().any(|s| s.qn != var.qn) {
                    return None;
                }
                var
            }
            None => return None,
        };
        let value = matches!(var.kind, "var" | "const" | "static");
        // TS declaration merging: `export interface $ZodError` and `export
        // const $ZodError: $constructor<$ZodError>`, the name a value too.
        let merged = cx.fam == Family::Ts && is_type_kind(var.kind);
        if !(value || merged) || (value && var.file == cx.fi) {
            return None;
        }
        self.const_type(var, depth)
    }

    /// The type a module-level variable `var` is declared with, or of what
    /// it is initialised with, from its own file; with a TS type, of the
    /// constant sharing its name.
    fn const_type(&self, var: Sym<'a>, depth: usize) -> Option<(Sym<'a>, Tier)> {
        let home = self.cx(var.file, None);
        let name = var.qn.rsplit([':', '.']).next()?;
        let fact = *home.ix.locals.get(&(IN_FILE, name))?;
        if fact.chain.len() == 1 && fact.chain[0] == name {
            return None;
        }
        let chain = fact.chain.clone();
        self.fact_type(&home, IN_FILE, &chain, depth + 1)
            .map(|(s, _)| (s, Tier::Typed))
    }

    /// A fact's chain: a type, or an initialiser expression.
    fn fact_type(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        chain: &[Step],
        depth: usize,
    ) -> Option<(Sym<'a>, Tier)> {
        // `Kind::Teddy(ref t) =>`: the variant's first field (`Teddy.0` of
        // the enum, `extract::sites::fact_of`).
        if let [path @ .., variant, mark] = chain
            && mark == VARIANT_FIELD
        {
            let (t, _) = self.type_target(cx, owner, path, depth + 1)?;
            let field = format!("{}.0", bare(variant));
            return self
                .field_type(t, &field, depth + 1)
                .map(|s| (s, Tier::Typed));
        }
        // `let (a, b) = f();`: element i of the tuple `f` declares it returns.
        if let [call @ .., last, mark] = chain
            && last == "()"
            && let Some(i) = mark.strip_prefix(TUPLE_ELEMENT)
        {
            let (f, _) = self.called(cx, owner, call, depth + 1)?;
            let fcx = self.cx(f.file, None);
            let fi = *fcx.ix.ids.get(f.id)?;
            let element = fcx.ix.tuple_returns.get(&(fi, i))?.chain.clone();
            return self
                .fact_type(&fcx, fi, &element, depth + 1)
                .map(|(s, _)| (s, Tier::Typed));
        }
        // `({ logger }: Ctx) =>`: the property of the declared type.
        if let [path @ .., property, mark] = chain
            && mark == PROPERTY
        {
            let (t, _) = self.type_target(cx, owner, path, depth + 1)?;
            return self
                .field_type(t, bare(property), depth + 1)
                .map(|s| (s, Tier::Typed));
        }
        let marked = chain
            .iter()
            .any(|c| matches!(c.as_str(), "()" | "{}" | "#new"));
        if marked {
            self.value_type(cx, owner, chain, depth)
        } else {
            self.type_target(cx, owner, chain, depth)
                .or_else(|| self.value_type(cx, owner, chain, depth))
        }
    }

    /// Python: what class attribute `name` of class `t` (or of a base) holds
    /// itself, when it holds a class or function (`Fact::owned`, set by
    /// `extract::sites::python_holds`): `self.response_class()` calls
    /// `Response` (its constructor), as `Response()` would.
    fn held_callable(&self, t: Sym<'a>, name: &str, depth: usize) -> Option<Sym<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let tcx = self.cx(t.file, None);
        let ti = *tcx.ix.ids.get(t.id)?;
        match tcx.ix.fields.get(&(ti, name)) {
            Some(f) if f.owned == Some(true) => {
                let (s, _) = self.call_target(&tcx, f.owner, &f.chain, depth + 1)?;
                matches!(s.kind, "class" | "fn").then_some(s)
            }
            // Assigned anything else, or an instance's attribute.
            Some(_) => None,
            None => self
                .bases(t, depth + 1)
                .into_iter()
                .find_map(|(base, _)| self.held_callable(base, name, depth + 1)),
        }
    }

    /// The declared type of field `name` of type `t` (in `t`'s file).
    fn field_type(&self, t: Sym<'a>, name: &str, depth: usize) -> Option<Sym<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let tcx = self.cx(t.file, None);
        let ti = *tcx.ix.ids.get(t.id)?;
        // The struct's own fields; in Rust an impl's type's fields sit on
        // the struct, which `t` is already.
        let fact = tcx.ix.fields.get(&(ti, name)).copied();
        match fact {
            // A TS getter without a declared result: what it returns.
            Some(f) if f.chain.first().is_some_and(|c| c == RETURNS_VALUE) => {
                let chain = f.chain[1..].to_vec();
                self.fact_type(&tcx, ti, &chain, depth + 1).map(|(s, _)| s)
            }
            Some(f) => {
                let chain = f.chain.clone();
                self.fact_type(&tcx, ti, &chain, depth + 1).map(|(s, _)| s)
            }
            None => {
                // A field of a base class.
                for (base, _) in self.bases(t, depth + 1) {
                    if let Some(s) = self.field_type(base, name, depth + 1) {
                        return Some(s);
                    }
                }
                None
            }
        }
    }

    /// The declared return type of fn/method `f` (in its file).
    /// Whether fn/method `f` is declared to return `this`.
    fn returns_this(&self, f: Sym<'a>) -> bool {
        let fcx = self.cx(f.file, None);
        fcx.ix
            .ids
            .get(f.id)
            .and_then(|fi| fcx.ix.returns.get(fi))
            .is_some_and(|fact| fact.chain == ["this"])
    }

    fn returns(&self, f: Sym<'a>, depth: usize) -> Option<Sym<'a>> {
        let fcx = self.cx(f.file, None);
        let fi = *fcx.ix.ids.get(f.id)?;
        let fact = *fcx.ix.returns.get(&fi)?;
        let chain = fact.chain.clone();
        match chain.split_first() {
            // Python without an annotation: the type of what it returns.
            Some((head, value)) if head == RETURNS_VALUE => {
                self.fact_type(&fcx, fi, value, depth + 1).map(|(s, _)| s)
            }
            // TS: a declared object type, whose properties are `f`'s fields.
            Some((head, [])) if head == SHAPE => Some(f),
            _ => self
                .type_target(&fcx, fi, &chain, depth + 1)
                .map(|(s, _)| s),
        }
    }

    /// The value of pytest fixture `word` as a parameter of `owner`, a test
    /// (`test…`) or a fixture (`fixture_of`), by its return annotation, else
    /// by what it returns or yields.
    fn fixture_type(
        &self,
        cx: &FileCx<'a, 's>,
        owner: u32,
        word: &str,
        depth: usize,
    ) -> Option<Sym<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let (fi, at) = self.fixture_of(cx, owner, word)?;
        let fcx = self.cx(fi, None);
        if let Some(fact) = fcx.ix.returns.get(&at) {
            let declared = self.here(&fcx, &fcx.syms[at as usize])?;
            if let Some(t) = self.returns(declared, depth + 1) {
                return Some(t);
            }
            if fact.chain.first().is_some_and(|c| c == RETURNS_VALUE) {
                return None;
            }
        }
        let fact = *fcx.ix.yields.get(&at)?;
        let chain = fact.chain[1..].to_vec();
        self.fact_type(&fcx, at, &chain, depth + 1).map(|(s, _)| s)
    }

    /// The pytest fixture `word` names as a parameter of `owner`, a test
    /// (`test…`) or a fixture, as (file, symbol position): the fixture
    /// function of that name in this file, else in the `conftest.py` of the
    /// test's folder or the nearest one above (pytest's rule, by path:
    /// flask's examples/*/tests/conftest.py are modules `tests.conftest`
    /// too). A fixture that requests its own name gets the one it overrides.
    fn fixture_of(&self, cx: &FileCx<'a, 's>, owner: u32, word: &str) -> Option<(usize, u32)> {
        let s = cx.syms.get(owner as usize)?;
        let own_name = s.qualified_name.rsplit('.').next().unwrap_or("");
        if !own_name.starts_with("test") && !is_fixture(cx, owner) {
            return None;
        }
        let mut places = vec![cx.fi];
        let mut dir = super::dir_of(&cx.f.path);
        loop {
            let conftest = join(dir, "/", "conftest.py");
            if let Some(i) = self.ix.path(&conftest) {
                places.push(i);
            }
            if dir.is_empty() {
                break;
            }
            dir = dir.rsplit_once('/').map_or("", |(up, _)| up);
        }
        places.into_iter().find_map(|fi| {
            let fcx = self.cx(fi, None);
            let qn = join(&fcx.f.module, ".", word);
            let all = fcx.ix.by_qn.get(qn.as_str())?;
            let at = all
                .iter()
                .find(|&&i| is_fixture(&fcx, i) && !(fi == cx.fi && i == owner))?;
            Some((fi, *at))
        })
    }

    /// A pytest test's or fixture's parameter (`[FIXTURE, word]`): a `value`
    /// reference of the fixture pytest runs for it (`scope` in its own
    /// module, `import` from a `conftest.py`).
    fn fixture_request(&self, cx: &FileCx<'a, 's>, site: &RawSite) -> Option<SiteEdge> {
        let (fi, at) = self.fixture_of(cx, site.owner, site.chain.get(1)?)?;
        let fcx = self.cx(fi, None);
        let f = self.here(&fcx, &fcx.syms[at as usize])?;
        Some(SiteEdge {
            rel: Rel::References,
            from: cx.owner_id(site.owner),
            to: Id::from(f.id),
            line: site.line,
            col: site.col,
            tier: if fi == cx.fi {
                Tier::Scope
            } else {
                Tier::Import
            },
            kind: SiteKind::Value,
            to_name: Id::default(),
        })
    }

    /// Method (or member) `name` of type `t`, else of its bases, nearest
    /// first; with the type it was found on.
    fn member_or_base(&self, t: Sym<'a>, name: &str, depth: usize) -> Option<(Sym<'a>, Sym<'a>)> {
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(m) = self.member(t, name, depth) {
            return Some((m, t));
        }
        for (base, _) in self.bases(t, depth + 1) {
            if let Some(found) = self.member_or_base(base, name, depth + 1) {
                return Some(found);
            }
        }
        None
    }

    fn member(&self, t: Sym<'a>, name: &str, _depth: usize) -> Option<Sym<'a>> {
        let f = &self.ix.files[t.file];
        let fam = family(f.language);
        let (_, isep) = seps(fam);
        let qn = format!("{}{isep}{name}", t.qn);
        let pkg = self.pkg_of(Some(t.file));
        // A member nested in `t` itself beats a same-named one elsewhere (a
        // TS interface and a const of its name each hold an `optional`).
        if fam == Family::Ts {
            let tcx = self.cx(t.file, None);
            if let Some(&ti) = tcx.ix.ids.get(t.id) {
                let nested = tcx
                    .ix
                    .by_qn
                    .get(qn.as_str())
                    .into_iter()
                    .flatten()
                    .find(|&&i| {
                        parent_index(&tcx, i as usize) == Some(ti as usize)
                            && tcx.syms[i as usize].kind != "impl"
                    });
                if let Some(&i) = nested {
                    self.ix.dep(&["q", fam_str(fam), pkg, &qn]);
                    let s = &tcx.syms[i as usize];
                    return Some(Sym {
                        id: &s.id,
                        qn: &s.qualified_name,
                        kind: s.kind,
                        file: t.file,
                    });
                }
            }
        }
        let s = self.lookup(fam, pkg, &qn)?;
        // TS: a same-named value's member is no member of the type (zod's
        // `interface ZodBigInt` and `const ZodBigInt = $constructor(…, {
        // gt() {…} })`: `gt` is the interface's, through its base).
        if fam == Family::Ts && is_type_kind(t.kind) {
            let scx = self.cx(s.file, None);
            let parent = scx
                .ix
                .ids
                .get(s.id)
                .and_then(|&i| parent_index(&scx, i as usize))
                .map(|p| scx.syms[p].kind);
            if parent.is_some_and(|k| matches!(k, "const" | "var" | "fn")) {
                return None;
            }
        }
        (s.kind != "impl").then_some(s)
    }

    /// The supertypes type `t` declares (base classes, supertraits, extended
    /// interfaces, embedded Go types, and for a Rust type the traits its
    /// impls in its own file implement).
    fn bases(&self, t: Sym<'a>, depth: usize) -> Vec<(Sym<'a>, Tier)> {
        if depth > MAX_DEPTH {
            return Vec::new();
        }
        let tcx = self.cx(t.file, None);
        let owners: Vec<u32> = tcx
            .ix
            .by_qn
            .get(t.qn)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&i| {
                let s = &tcx.syms[i as usize];
                &*s.id == t.id || s.kind == "impl"
            })
            .collect();
        let mut out = Vec::new();
        for owner in owners {
            // An alias reaches its target's members as a base's.
            if let Some(alias) = tcx.ix.aliases.get(&owner)
                && let Some(found) = self.type_target(&tcx, owner, &alias.chain, depth + 1)
                && found.0.id != t.id
            {
                out.push(found);
            }
            for site in tcx.ix.heritage.get(&owner).into_iter().flatten() {
                if let Some(found) = self.type_target(&tcx, site.owner, &site.chain, depth + 1)
                    && found.0.id != t.id
                {
                    out.push(found);
                }
            }
        }
        out
    }
}

enum Namespace<'a> {
    /// A module (its module path) and, when known, one of its files.
    Module(String, Option<usize>),
    Type(Sym<'a>),
}

/// Whether symbol `i` of `cx`'s file is decorated `@fixture` (`pytest.fixture`,
/// `pytest_asyncio.fixture`, with arguments or without).
fn is_fixture(cx: &FileCx<'_, '_>, i: u32) -> bool {
    cx.ix.decorators.get(&i).is_some_and(|all| {
        all.iter()
            .any(|d| d.chain.last().is_some_and(|l| l == "fixture"))
    })
}

fn parent_index(cx: &FileCx<'_, '_>, i: usize) -> Option<usize> {
    // Parents are not in the resolver's view of a file; the qualified name
    // says: the nearest symbol before `i` whose name is a prefix of it.
    let qn = &*cx.syms.get(i)?.qualified_name;
    let (_, isep) = seps(cx.fam);
    let parent_qn = qn.rsplit_once(isep).map(|(p, _)| p)?;
    cx.ix
        .by_qn
        .get(parent_qn)?
        .iter()
        .rev()
        .find(|&&p| (p as usize) < i)
        .map(|&p| p as usize)
}

/// Whether a Rust local is a name a `let` takes out of a tuple
/// (`TUPLE_ELEMENT`).
fn untupled(fact: &Fact) -> bool {
    fact.chain
        .last()
        .is_some_and(|c| c.starts_with(TUPLE_ELEMENT))
}

/// A Rust call's chain ending in its turbofish's type arguments
/// (`TYPE_ARGS`): those and the chain before them; else the whole chain.
fn type_args(chain: &[Step]) -> (Option<&str>, &[Step]) {
    match chain.split_last() {
        Some((last, path)) if last.starts_with(TYPE_ARGS) => (Some(&last[TYPE_ARGS.len()..]), path),
        _ => (None, chain),
    }
}

/// A Rust call's chain ending in its argument's shape (`ARGUMENT`): the
/// shape and the path called.
fn argument(chain: &[Step]) -> Option<(&str, &[Step])> {
    let (last, path) = chain.split_last()?;
    Some((last.strip_prefix(ARGUMENT)?, path))
}

/// Keeps `t` as what several globs found, `None` (stop) when one found
/// something else: two globs naming different items is no proof.
fn found_or_ambiguous(found: &mut Option<Target>, t: Target) -> Option<()> {
    match found {
        Some(f) if *f != t => None,
        _ => {
            *found = Some(t);
            Some(())
        }
    }
}

/// The local name an import binds, if any.
fn local_name(fam: Family, imp: &crate::model::RawImport) -> Option<String> {
    use crate::model::ImportSpec;
    let alias = imp.alias.as_str();
    match &imp.spec {
        ImportSpec::RustUse(segs) => {
            if !alias.is_empty() {
                return (alias != "_").then(|| alias.to_string());
            }
            let last = segs.last()?;
            if last == "*" {
                return None;
            }
            Some(if last == "self" {
                segs.get(segs.len().checked_sub(2)?)?.clone()
            } else {
                last.clone()
            })
        }
        ImportSpec::RustMod { name, .. } => Some(name.clone()),
        ImportSpec::RustExternCrate(name) => Some(if alias.is_empty() {
            name.clone()
        } else {
            alias.to_string()
        }),
        ImportSpec::Python { .. } => imp.python_name().map(str::to_string),
        ImportSpec::Ts { name, .. } => {
            if !alias.is_empty() {
                return Some(alias.to_string());
            }
            match name.as_deref() {
                Some("*" | "default") | None => None,
                Some(n) => Some(n.to_string()),
            }
        }
        ImportSpec::Go { .. } => {
            let _ = fam;
            imp.go_name().map(str::to_string)
        }
    }
}

/// The callee as written: `self.store.get`, `util::fact`, `new Circle`.
fn written(fam: Family, chain: &[Step]) -> Id {
    if let [head, name] = chain
        && head == DYNAMIC
    {
        return Id::from(format!("[{name}]").as_str());
    }
    let mut out = Id::default();
    for c in chain {
        match c.as_str() {
            "#new" => out.push_str("new "),
            THEN => out.push_str("(..)"),
            EVERY => out.push_str("[…]"),
            // `it.collect()` that runs a `from_iter`: the call written.
            COLLECTED => return Id::from("collect"),
            // A template's `self.face.area()`: the type before it is not written.
            SELF_VALUE => {
                out.clear();
                out.push_str("self");
            }
            // `(&made).into_iter()` is written `made.into_iter`.
            BORROWED => {}
            s if s.starts_with(ARGUMENT) || s.starts_with(TYPE_ARGS) => {}
            "()" => out.push_str("()"),
            "{}" => out.push_str("{}"),
            s if s.starts_with("::") => out.push_str(s),
            s => {
                if !out.is_empty() && !out.ends_with(' ') {
                    out.push('.');
                }
                out.push_str(s);
            }
        }
    }
    let _ = fam;
    out
}

/// The `UNRESOLVED` row of a site no tier proved, kept by the name its chain
/// ends in (none for a chain of markers only).
/// What a site naming a value can name: a function or class, a constant,
/// a variable.
fn is_value_kind(kind: &str) -> bool {
    is_callable(kind) || matches!(kind, "const" | "static" | "var")
}

/// Where a file calls or names supertypes, sorted (line, col): a class named
/// there is constructed (`C(1).area()`, whose head is a value site too) or
/// extended (a Python class's bases are an argument list, read as values),
/// not used as a value. A variable there is still read (`F = Fraction`, then
/// `F(1).x`).
fn stated_positions(sites: &[RawSite]) -> Vec<(u32, u32)> {
    let mut at: Vec<(u32, u32)> = (sites.iter())
        .filter(|s| {
            matches!(
                s.kind,
                SiteKind::Call | SiteKind::Extends | SiteKind::Implements
            )
        })
        .map(|s| (s.line, s.col))
        .collect();
    at.sort_unstable();
    at
}

/// The `CALLS` edge of a `for` loop (`SiteKind::Iterates`) to what it calls,
/// named as if written: `squares(2).next`.
fn loop_edge(fam: Family, from: Id, site: &RawSite, (target, tier): (Sym<'_>, Tier)) -> SiteEdge {
    let name = target.qn.rsplit("::").next().unwrap_or(target.qn);
    SiteEdge {
        rel: Rel::Calls,
        from,
        to: Id::from(target.id),
        line: site.line,
        col: site.col,
        tier,
        kind: SiteKind::Call,
        to_name: Id::from(format!("{}.{name}", written(fam, &site.chain)).as_str()),
    }
}

/// The edge of a site resolved to `target`.
/// A `value` reference a call makes by reading `target` on its way (a
/// receiver held in a constant, a getter), at the call's position.
fn read_edge(from: Id, site: &RawSite, target: Sym<'_>, tier: Tier) -> SiteEdge {
    SiteEdge {
        rel: Rel::References,
        from,
        to: Id::from(target.id),
        line: site.line,
        col: site.col,
        tier,
        kind: SiteKind::Value,
        to_name: Id::default(),
    }
}

fn found_edge(fam: Family, from: Id, site: &RawSite, target: Sym<'_>, tier: Tier) -> SiteEdge {
    let (rel, kind) = match site.kind {
        // A constructor call: `new X()`, `X()` of a class.
        SiteKind::Call => (Rel::Calls, SiteKind::Call),
        k => (Rel::References, k),
    };
    // A call that lands on a type is a construction (`X()` of a Python
    // class); a Rust tuple struct or enum variant called is a reference.
    let (rel, kind) = if rel == Rel::Calls && is_type_kind(target.kind) && fam == Family::Rust {
        (Rel::References, SiteKind::Construct)
    } else {
        (rel, kind)
    };
    // Only a call keeps the callee as written (a reference names its
    // target's name).
    let to_name = if rel == Rel::Calls {
        written(fam, &site.chain)
    } else {
        Id::default()
    };
    SiteEdge {
        rel,
        from,
        to: Id::from(target.id),
        line: site.line,
        col: site.col,
        tier,
        kind,
        to_name,
    }
}

/// An object of repo class `class` handed to a library's call
/// (`Resolver::handed`): kept by the class's qualified name, named by the
/// callee.
fn handed_edge(cx: &FileCx<'_, '_>, site: &RawSite, class: Sym<'_>, callee: &[Step]) -> SiteEdge {
    SiteEdge {
        kind: SiteKind::Handed,
        to_name: written(cx.fam, callee),
        ..library_edge(cx, site, class)
    }
}

/// A call a library base answers on an instance of repo class `class`
/// (`Resolver::library_receivers`): kept by the class's qualified name.
fn library_edge(cx: &FileCx<'_, '_>, site: &RawSite, class: Sym<'_>) -> SiteEdge {
    SiteEdge {
        rel: Rel::Unresolved,
        from: cx.owner_id(site.owner),
        to: Id::from(class.qn),
        line: site.line,
        col: site.col,
        tier: Tier::Name,
        kind: SiteKind::Library,
        to_name: written(cx.fam, &site.chain),
    }
}

fn unresolved_edge(fam: Family, from: Id, site: &RawSite) -> Option<SiteEdge> {
    let name = called_name(&site.chain);
    (!name.is_empty()).then(|| SiteEdge {
        rel: Rel::Unresolved,
        from,
        to: name,
        line: site.line,
        col: site.col,
        tier: Tier::Name,
        kind: site.kind,
        to_name: written(fam, &site.chain),
    })
}

/// The name a site's chain ends in, markers passed over (`f` of `x.f()`,
/// `T` of `new T()`): what an `UNRESOLVED` row is kept by.
/// The receiver of a member call when it is a path of plain names (`a.b` of
/// `a.b.f()`), not a call's result, a Rust path or a `new` expression. A
/// receiver of one name is a value site of its own (see `extract::sites`).
fn named_receiver(fam: Family, chain: &[Step]) -> Option<&[Step]> {
    let (last, receiver) = chain.split_last()?;
    let plain = |c: &Step| !matches!(c.as_str(), "()" | "{}" | "?") && !c.starts_with('#');
    (receiver.len() >= 2
        && !(fam == Family::Rust && last.starts_with("::"))
        && receiver.iter().all(plain))
    .then_some(receiver)
}

/// The properties a call's chain reads on the way (`arr.element` in
/// `arr.element.parse(x)`, `a.b().c` in `a.b().c.d()`), each as the chain up
/// to it: a member after a receiver, not called, not the callee.
fn read_steps(chain: &[Step]) -> impl Iterator<Item = &[Step]> {
    let plain = |c: &Step| !matches!(c.as_str(), "()" | "{}" | "?") && !c.starts_with('#');
    (2..chain.len())
        .filter(move |&k| plain(&chain[k - 1]) && chain[k] != "()" && chain[k] != "{}")
        .map(move |k| &chain[..k])
}

fn called_name(chain: &[Step]) -> Id {
    chain
        .iter()
        .rev()
        .find(|c| !matches!(c.as_str(), "()" | "{}" | "?" | "#new"))
        // A macro's `!` is the site's, not the name's (`m!` of `macro_rules! m`).
        .map(|c| Id::from(bare(c).trim_end_matches('!')))
        .unwrap_or_default()
}
