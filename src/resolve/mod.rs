//! Import resolution: every file's raw imports against the whole repo/ref.
//!
//! Runs over all files of a ref on every index run that changed something, so the
//! edge set always equals what a from-scratch index gives (edges into a file that
//! changed are re-resolved too). It is pure: in-memory tables in, edges out.
//!
//! Rules per language (docs/ARCHITECTURE.md, "Import resolution"): Rust paths (`crate`, `self`, `super`,
//! workspace crates, 2018-style relative paths, `pub use` re-exports, globs,
//! `mod` files, `extern crate`); Python absolute and relative modules, package
//! roots, `__init__` re-exports, submodules; TS/JS relative specifiers with
//! extension and `index` probing, `.js` → `.ts`, tsconfig `baseUrl`/`paths`,
//! `export … from` re-exports; Go packages of the module (by `go.mod`).

mod calls;
mod go;
mod python;
mod rust;
mod std_names;
pub use std_names::is_std_macro;
mod typescript;

pub use calls::{Id, Rel, SiteEdge, Tier};
use go::go;
use python::{python, python_absolute};
use rust::{rust_mod, rust_use};
use typescript::ts;

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;

use crate::model::lazy::Lazy;
use crate::model::names::last_segment;
use crate::model::{ImportSpec, Language, RawImport};
use crate::source::layout::{Layout, normalize_path};

/// A file as the resolver sees it. Its imports and definitions may still be
/// the bytes of a resolution state (`Lazy`): a run decodes those of the files it
/// resolves and of the modules and crates their lookups reach.
#[derive(Debug, Clone)]
pub struct RFile {
    pub id: String,
    pub path: String,
    pub language: Language,
    pub module: String,
    pub package: String,
    pub imports: Lazy<Vec<RawImport>>,
    /// Whether `imports` declare a Rust module with `#[path]` (known without
    /// decoding them: every run's tables need those of the whole ref).
    pub path_mods: bool,
    /// The file's definitions.
    pub symbols: Lazy<Vec<RSymbol>>,
    /// Its functions and methods by last name (`Callables::of(symbols)`).
    pub callables: Lazy<Callables>,
    /// Its call and reference sites, and type facts.
    pub sites: Lazy<crate::model::sites::FileSites>,
}

/// Whether `imports` declare a Rust module with `#[path]` (`RFile::path_mods`).
pub fn declares_path_mods(imports: &[RawImport]) -> bool {
    imports
        .iter()
        .any(|i| matches!(&i.spec, ImportSpec::RustMod { paths, .. } if !paths.is_empty()))
}

/// A file's functions and methods by their last name segment, kept beside its
/// definitions: the `name` tier looks names up across the whole ref, and
/// decoding every file's definitions for that was a third of re-indexing ten
/// files of a 600k-symbol ref.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Callables {
    /// The names, one after another.
    names: String,
    entries: Vec<Callable>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Callable {
    /// The symbol's position in its file's `symbols`.
    symbol: u32,
    /// Where its name ends in `names`.
    end: u32,
    method: bool,
}

/// Whether the `name` tier finds symbols of this kind (and so whether one
/// changes its name's key).
fn in_name_tier(kind: &str) -> bool {
    matches!(kind, "fn" | "method" | "macro")
}

/// The name a symbol is found by in the `name` tier's table: a Rust macro's
/// with its `!` (`m!`, as invoked), which no function's call names.
fn name_tier_name<'q>(kind: &str, qualified_name: &'q str) -> std::borrow::Cow<'q, str> {
    let name = last_segment(qualified_name);
    if kind == "macro" {
        std::borrow::Cow::Owned(format!("{name}!"))
    } else {
        std::borrow::Cow::Borrowed(name)
    }
}

impl Callables {
    pub fn of(symbols: &[RSymbol]) -> Callables {
        let mut out = Callables::default();
        for (i, s) in symbols.iter().enumerate() {
            if in_name_tier(s.kind) {
                out.push(
                    i as u32,
                    s.kind == "method",
                    &name_tier_name(s.kind, &s.qualified_name),
                );
            }
        }
        out
    }

    pub fn push(&mut self, symbol: u32, method: bool, name: &str) {
        self.names.push_str(name);
        self.entries.push(Callable {
            symbol,
            end: self.names.len() as u32,
            method,
        });
    }

    /// Each callable's symbol position, whether it is a method, and its name.
    pub fn iter(&self) -> impl Iterator<Item = (u32, bool, &str)> {
        let mut start = 0;
        self.entries.iter().map(move |c| {
            let name = &self.names[start..c.end as usize];
            start = c.end as usize;
            (c.symbol, c.method, name)
        })
    }
}

/// A symbol as the resolver sees it (its file is the `RFile` holding it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RSymbol {
    /// Inline: ids are shorter than 24 bytes (a full build holds every
    /// symbol's at once; a box each cost a heap block).
    pub id: compact_str::CompactString,
    pub qualified_name: Box<str>,
    /// One of the contract's kinds (`SymbolKind::as_str`; "" for another word):
    /// a ref's symbols are kept between runs, so each is kept small.
    pub kind: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    Symbol(String),
    File(String),
    /// A Go package: its directory (its files are the directory's non-test
    /// `.go` files; see `go_packages`).
    Package(String),
    /// Not in the indexed code: the name it was resolved to.
    External(String),
}

/// One `IMPORTS` edge.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Edge {
    pub from: String,
    pub target: Target,
    pub to_name: String,
    pub line: i64,
    pub alias: String,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Family {
    Rust,
    Python,
    Ts,
    Go,
}

fn family(l: Language) -> Family {
    match l {
        Language::Rust => Family::Rust,
        Language::Python => Family::Python,
        Language::TypeScript | Language::Tsx | Language::JavaScript => Family::Ts,
        Language::Go => Family::Go,
    }
}

/// A fast non-cryptographic hasher (FxHash's mixing) for the lookup tables, which
/// are rebuilt on every run and hashed millions of times: SipHash's DoS
/// resistance buys nothing for names read from the indexed repository itself.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let v = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(K);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(b)).wrapping_mul(K);
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub type FxMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<FxHasher>>;
/// A set hashed with `FxHasher` (lookup keys, names).
pub type FxSet<T> = std::collections::HashSet<T, std::hash::BuildHasherDefault<FxHasher>>;

/// (family, package for Rust / "" otherwise, key) — the key of module and
/// qualified-name tables.
type Key<'a> = (Family, &'a str, &'a str);

/// Family → a callable's last name segment → (file, symbol) of each
/// definition (the `name` tier's table).
type ByName<'a> = FxMap<(Family, bool), FxMap<&'a str, Vec<(u32, u32)>>>;
type ImplMethods<'a> = Vec<(u32, &'a str, u32)>;

/// Lookup tables over one ref, shared by the threads that resolve its files.
struct Tables<'a> {
    files: &'a [RFile],
    by_path: FxMap<&'a str, usize>,
    /// (family, package for Rust / "" otherwise, module) → files.
    by_module: FxMap<Key<'a>, Vec<usize>>,
    /// (family, package for Rust / "" otherwise, module for Python and
    /// TypeScript / "" otherwise) → its symbols by qualified name (a position
    /// in `definitions`), built on the first lookup in it.
    by_qn: FxMap<Key<'a>, usize>,
    definitions: Vec<Definitions<'a>>,
    /// Go: directory → files.
    go_dirs: FxMap<&'a str, Vec<usize>>,
    rust_crates: std::collections::HashSet<&'a str, std::hash::BuildHasherDefault<FxHasher>>,
    /// Rust modules declared with `#[path]`: crate → module path → the files
    /// of its (`cfg_attr`) variants that exist, nearest attribute first. By
    /// crate, then by `&str`: a lookup of a module of such a crate asks it for
    /// every prefix of the module's path (libc's glob tree: a tenth of a run).
    rust_path_mods: FxMap<&'a str, FxMap<String, Vec<usize>>>,
    /// Rust crates with at least one `#[path]` module.
    rust_path_crates: FxSet<&'a str>,
    /// Rust: (crate, module path) → the names of the module files below it.
    rust_child_modules: FxMap<(&'a str, &'a str), Vec<&'a str>>,
    /// Rust: per module file, what it binds (see `Index::rust_bound`), made on
    /// the first lookup through it.
    rust_bound: Vec<std::sync::OnceLock<RustBound<'a>>>,
    /// TS/JS: per module file, the names it exports by its own `export`
    /// lists (`Index::ts_exports`), made on the first lookup through it.
    ts_exports: Vec<std::sync::OnceLock<Box<[TsExport]>>>,
    /// A file a `#[path]` module points at → the module path it is declared as
    /// (`#[path = "uniform_int.rs"] mod int;` in `distr/uniform.rs`:
    /// `distr::uniform::int`), which its `self`/`super` paths start from.
    rust_declared: FxMap<usize, String>,
    layout: &'a Layout,
    /// File id → position, made on the first ask (import targets that are
    /// files, for calls through them).
    by_file_id: std::sync::OnceLock<FxMap<&'a str, usize>>,
    /// The `name` tier's table: (family, a callable's last name segment) →
    /// (file, symbol) of each definition, made on the first ask.
    by_name: std::sync::OnceLock<ByName<'a>>,
    /// Rust: the methods named `name` an impl block defines, as (file, the
    /// type the impl is for, symbol), by name; made for each name on its
    /// first ask (`Index::impl_methods`).
    impl_methods: std::sync::Mutex<FxMap<Box<str>, ImplMethods<'a>>>,
    /// When a run resolves some files only: every name the `name` tier can be
    /// asked (the last step of each of their sites), the only ones `by_name`
    /// then holds. `None`: every name.
    asked: Option<FxSet<&'a str>>,
    /// The families resolved this run (whose symbols `by_name` holds).
    families: Vec<Family>,
}

/// What a Rust module file binds by name, for lookups that pass through it
/// (`rust::unbound_here`): the names of the module files below it, of its
/// plain and `pub use` imports (not its globs) and of definitions inside its
/// module path that an inline module of a file above holds; the definitions
/// of its own module (`own`, a position in `definitions`) are looked up by
/// name.
struct RustBound<'a> {
    names: FxSet<&'a str>,
    own: Option<usize>,
    /// No `#[path]` module is declared at the file's module path or above it,
    /// so a path below it means what the file's own module path gives.
    path_free: bool,
    /// Its glob imports (`use a::*`), in the order a lookup tries them:
    /// `pub use` first, then plain `use`, each in the file's order.
    globs: Vec<&'a [String]>,
    /// Each glob made absolute, as a side root and not (`rust::glob_absolute`).
    glob_abs: Vec<[std::sync::OnceLock<rust::GlobAbs>; 2]>,
    /// The file is a crate root beside the library (`is_rust_side_root`).
    side_root: bool,
}

/// A name a TS module exports by an `export` list, and the module's own
/// name it exports when that is another (`export { local as name }`).
struct TsExport {
    name: crate::model::sites::Step,
    local: Option<crate::model::sites::Step>,
}

/// A symbol by qualified name: (id, is an impl, path, kind).
type Definition<'a> = (&'a str, bool, &'a str, &'a str);

/// The definitions of one qualified name, the one most names have inline: a
/// `Vec` held room for four (~270 bytes a name, on a 2.75M-symbol tree most
/// of resolution's tables).
enum Defined<'a> {
    One(Definition<'a>),
    Many(Vec<Definition<'a>>),
}

impl<'a> Defined<'a> {
    fn push(&mut self, d: Definition<'a>) {
        match self {
            Defined::One(first) => *self = Defined::Many(vec![*first, d]),
            Defined::Many(all) => all.push(d),
        }
    }
}

impl<'a> std::ops::Deref for Defined<'a> {
    type Target = [Definition<'a>];
    fn deref(&self) -> &[Definition<'a>] {
        match self {
            Defined::One(d) => std::slice::from_ref(d),
            Defined::Many(all) => all,
        }
    }
}

/// The definitions of one group (family, crate, module: `file_group`),
/// indexed on the first lookup: a run that re-resolves one file looks into a
/// few crates or modules, not the 600k symbols of all of them (indexing every
/// one took 0.4 s of a one-file run on the Rust crates corpus). Built on any
/// thread; the result does not depend on which.
struct Definitions<'a> {
    files: Vec<usize>,
    table: std::sync::OnceLock<FxMap<&'a str, Defined<'a>>>,
    /// The group (`file_group`).
    group: &'a str,
    /// Rust: the table's names nested below the group's own items, by the path
    /// they are in (`a::b` → `c` for `a::b::c` in group `a`), built on the first
    /// need (see `Index::rust_bound`).
    nested: std::sync::OnceLock<FxMap<&'a str, Vec<&'a str>>>,
}

/// The group a file's definitions are indexed under besides family and crate:
/// its module (every qualified name starts with it: Rust's `a::b::Item`,
/// Python's `a.b.item`, TypeScript's `a/b:item`). A lookup into a crate
/// indexes the modules the name can be in, not the whole crate (a Rust crate
/// like `linux-raw-sys` holds 100k definitions; a run that resolved files
/// importing one of its modules indexed them all: 300 ms).
fn file_group(fam: Family, module: &str) -> &str {
    match fam {
        Family::Python | Family::Ts | Family::Rust | Family::Go => module,
    }
}

/// The groups that may hold definitions named `qn` (see `file_group`): for
/// Python and Rust every prefix of it that ends before a separator (a module,
/// or a module and the items around the name) and the empty module; for
/// TypeScript the part before `:`.
fn qn_groups(fam: Family, qn: &str) -> impl Iterator<Item = &str> {
    let (first, separator) = match fam {
        Family::Python => ("", Some(".")),
        Family::Rust => ("", Some("::")),
        Family::Ts => (qn.split_once(':').map_or("", |(m, _)| m), None),
        // `example.com/geo/shapes.Square.Area`: the import path ends at the
        // first dot after the last slash.
        Family::Go => {
            let from = qn.rfind('/').map_or(0, |i| i + 1);
            (qn[from..].find('.').map_or(qn, |i| &qn[..from + i]), None)
        }
    };
    std::iter::once(first).chain(
        separator
            .into_iter()
            .flat_map(move |sep| qn.match_indices(sep).map(move |(i, _)| &qn[..i])),
    )
}

impl<'a> Definitions<'a> {
    fn nested(&self, files: &'a [RFile]) -> &FxMap<&'a str, Vec<&'a str>> {
        self.nested.get_or_init(|| {
            let mut nested: FxMap<&'a str, Vec<&'a str>> = FxMap::default();
            for &qn in self.table(files).keys() {
                let (parent, name) = qn.rsplit_once("::").unwrap_or(("", qn));
                if parent != self.group {
                    nested.entry(parent).or_default().push(name);
                }
            }
            nested
        })
    }

    fn table(&self, files: &'a [RFile]) -> &FxMap<&'a str, Defined<'a>> {
        self.table.get_or_init(|| {
            let mut table: FxMap<&'a str, Defined<'a>> = FxMap::default();
            for &fi in &self.files {
                let f = &files[fi];
                for s in f.symbols.iter() {
                    let d = (&*s.id, s.kind == "impl", f.path.as_str(), s.kind);
                    match table.entry(&*s.qualified_name) {
                        std::collections::hash_map::Entry::Occupied(mut all) => {
                            all.get_mut().push(d)
                        }
                        std::collections::hash_map::Entry::Vacant(none) => {
                            none.insert(Defined::One(d));
                        }
                    }
                }
            }
            // Same-named definitions (`#[cfg]` variants, a type and its impls):
            // the choice must not depend on load order, or an incremental run
            // and a fresh index would pick different targets. Definitions
            // before impls, then by path, then a class or function before a
            // variable of its name (`Factory = _add_repr(Factory)` rebinds
            // the class: the class is what a reader means), a value before
            // a TypeScript type merged with it (`function $constructor` beside
            // `interface $constructor`: a call or `X.init` names the value),
            // then as written in the file (the sort is stable): overloads are
            // tried in that order, and the first is what a call without
            // arguments gets (`string(): ZodString` before `string(params)`).
            // Ids are hashes of where the repository is: no order of theirs
            // may pick one.
            let rank = |d: &Definition<'a>| {
                let (_, is_impl, path, kind) = *d;
                let type_only = matches!(kind, "interface" | "type");
                let rebinding = matches!(kind, "var" | "const" | "static");
                (is_impl, path, type_only, rebinding)
            };
            for v in table.values_mut() {
                if let Defined::Many(all) = v {
                    all.sort_by(|a, b| rank(a).cmp(&rank(b)));
                    // In a block of their size: three copies of a crate
                    // give their names three definitions, room for four.
                    let mut fit = Vec::with_capacity(all.len());
                    fit.append(all);
                    *all = fit;
                }
            }
            table
        })
    }
}

const MAX_HOPS: usize = 8;

/// The tables as one file's resolution sees them. Every table lookup made while
/// the file is resolved is recorded as a key (a hash of the table and the
/// looked-up name), hit or miss: a file's edges can only change when a changed
/// file contributes (or contributed) to one of its keys, so an incremental run
/// re-resolves just those files (`contributed_keys`).
struct Index<'a> {
    tables: &'a Tables<'a>,
    /// The keys of the lookups made so far.
    deps: std::cell::RefCell<Vec<u64>>,
    /// The path of the file being resolved (see `Index::pick_variant`).
    origin: &'a str,
    /// Set when a lookup's answer depended on `origin`, which a cached answer
    /// must not (see `rust::Cache`).
    origin_used: std::cell::Cell<bool>,
    /// The Rust paths looked up so far in this run (see `rust::Cache`).
    rust_cache: &'a rust::Cache<'a>,
    /// Symbols the lookups found, by id: where to look them up again by
    /// name (an import's target, to call through it).
    found: std::cell::RefCell<FxMap<String, (Family, String, String)>>,
}

impl<'a> std::ops::Deref for Index<'a> {
    type Target = Tables<'a>;
    fn deref(&self) -> &Tables<'a> {
        self.tables
    }
}

/// A lookup key: a 32-bit hash of the parts (in a `u64`), stable across builds
/// and platforms (it is persisted: `FxHasher`'s fixed mixing, then
/// MurmurHash3's finalizer to spread it). A resolution makes a lookup for every
/// path segment it tries (libc's globs: millions in a run), so this is hashed
/// far more than anything else; blake3 here was a fifth of such a run. Two keys
/// that collide only make a file be resolved again for nothing: with ~300 keys
/// a file and a few thousand changed by an edit, one file in ~2,000 on a big
/// edit. The state keeps each file's keys, 12.6 of its 121 MB in 64 bits.
pub fn key(parts: &[&str]) -> u64 {
    use std::hash::Hasher;
    let mut h = FxHasher::default();
    for p in parts {
        h.write_u64(p.len() as u64);
        h.write(p.as_bytes());
    }
    let mut k = h.finish();
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    (k ^ (k >> 33)) & u64::from(u32::MAX)
}

fn fam_str(f: Family) -> &'static str {
    match f {
        Family::Rust => "rs",
        Family::Python => "py",
        Family::Ts => "ts",
        Family::Go => "go",
    }
}

/// The keys file `f` contributes to the lookup tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contribution {
    /// Its path, module and `#[path]` module declarations:
    /// entries that only depend on the file being there with this path.
    pub structure: Vec<u64>,
    /// Its definitions: entries that are re-created whenever the file changes.
    pub definitions: Vec<u64>,
    /// Its imports, which re-exports are followed through.
    pub imports: u64,
}

pub fn contributed_keys(f: &RFile) -> Contribution {
    let fam = family(f.language);
    let pkg = if fam == Family::Rust {
        f.package.as_str()
    } else {
        ""
    };
    let mut structure = vec![
        key(&["p", &f.path]),
        key(&["m", fam_str(fam), pkg, &f.module]),
    ];
    // A Go file's package directory is not among them: importers resolve to
    // the package, not its files, so only a package appearing or disappearing
    // changes their edges (`package_key`, decided over the whole ref).
    // A Rust file's crate is not among them either: every file that names
    // the crate looked it up, and only the crate appearing or disappearing
    // changes that (`crate_key`, decided over the whole ref; a rename in `libc`
    // re-resolved every importer of `libc` on the Rust crates corpus).
    if fam == Family::Rust {
        for imp in f.imports.iter() {
            if let ImportSpec::RustMod { name, paths } = &imp.spec
                && !paths.is_empty()
            {
                structure.push(key(&["r", &f.package, &rust_child(&f.module, name)]));
                structure.push(key(&["rp", &f.package]));
                for p in paths {
                    let target = normalize_path(&format!("{}/{p}", dir_of(&f.path)));
                    structure.push(key(&["rt", &target]));
                }
            }
        }
    }
    // Go imports name packages, never definitions, but calls look them up.
    let mut definitions: Vec<u64> = f
        .symbols
        .iter()
        .map(|s| key(&["q", fam_str(fam), pkg, &s.qualified_name]))
        .collect();
    // A Go package's interfaces are satisfied by its types as a whole
    // (`calls::go_implements`): any change in the package counts.
    if fam == Family::Go {
        definitions.push(key(&["grp", "go", &f.module]));
    }
    Contribution {
        structure,
        definitions,
        imports: key(&["i", &f.path]),
    }
}

/// The package directory of a Go file that importing the package brings in
/// (not a `_test.go` file); `None` for any other file.
pub fn go_package_of(path: &str) -> Option<&str> {
    (path.ends_with(".go") && !path.ends_with("_test.go")).then(|| dir_of(path))
}

/// The lookup key of Go package directory `dir`: it changes when the package
/// appears or disappears (its first file added, its last removed).
pub fn package_key(dir: &str) -> u64 {
    key(&["g", dir])
}

/// The lookup key of Rust crate `name` (whether it is indexed): it changes
/// when the crate appears or disappears (its first file added, its last removed).
pub fn crate_key(name: &str) -> u64 {
    key(&["c", name])
}

/// The ref's Go packages: each directory with the ids of its importable files,
/// by directory.
pub fn go_packages(files: &[RFile]) -> Vec<(String, Vec<String>)> {
    let mut by_dir: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    for f in files.iter().filter(|f| f.language == Language::Go) {
        if let Some(dir) = go_package_of(&f.path) {
            by_dir.entry(dir).or_default().push(f.id.clone());
        }
    }
    by_dir
        .into_iter()
        .map(|(d, ids)| (d.to_string(), ids))
        .collect()
}

/// The keys whose table entries differ between `old` and `new` (either may be
/// absent: a file added or deleted). A definition counts when it is not
/// among `kept` (the symbols a diff keeps in place, by id; `None`: none is
/// kept): the others are re-created, and the edges into them with them. The
/// file's facts (types, fields, bases, read by calls through it) count when
/// they changed.
pub fn changed_keys(
    old: Option<&RFile>,
    new: Option<&RFile>,
    kept: Option<&HashSet<String>>,
    methods: &mut MethodChanges,
) -> Vec<u64> {
    let (o, n) = (old.map(contributed_keys), new.map(contributed_keys));
    let mut keys = Vec::new();
    match (&o, &n) {
        (Some(o), Some(n)) => {
            keys.extend(o.structure.iter().filter(|k| !n.structure.contains(k)));
            keys.extend(n.structure.iter().filter(|k| !o.structure.contains(k)));
            if old.map(|f| &*f.imports) != new.map(|f| &*f.imports) {
                keys.push(n.imports);
            }
        }
        _ => {
            for c in o.iter().chain(n.iter()) {
                keys.extend(&c.structure);
                keys.push(c.imports);
            }
        }
    }
    let mut any_definition = false;
    for (f, c, came) in [(old, &o, -1), (new, &n, 1)] {
        let (Some(f), Some(c)) = (f, c) else { continue };
        // `definitions` holds a key per symbol, in order, then Go's package key.
        for (at, (s, k)) in f.symbols.iter().zip(&c.definitions).enumerate() {
            if kept.is_none_or(|kept| !kept.contains(&*s.id)) {
                keys.push(*k);
                let name = last_segment(&s.qualified_name);
                // The `name` tier holds callables only (`Callables::of`): an
                // associated `type Some;` re-resolved every file calling `Some(…)`.
                match s.kind {
                    // Counted over the repo first (`method_name_keys`).
                    "method" => {
                        *methods
                            .0
                            .entry((family(f.language), name.to_string()))
                            .or_default() += came;
                    }
                    _ if in_name_tier(s.kind) => keys.push(name_key(
                        family(f.language),
                        &name_tier_name(s.kind, &s.qualified_name),
                        false,
                    )),
                    _ => {}
                }
                if f.language == Language::Rust
                    && s.kind == "method"
                    && let Some(of) = impl_type_of_method(f, at)
                {
                    keys.push(impl_method_key(of, name));
                    if calls::is_rust_primitive(of) {
                        keys.push(impl_method_key(ANY_PRIMITIVE, name));
                    }
                }
                any_definition = true;
            }
        }
        if any_definition && c.definitions.len() > f.symbols.len() {
            keys.extend(&c.definitions[f.symbols.len()..]);
        }
    }
    let facts = |f: &RFile| -> Vec<crate::model::sites::RawSite> {
        f.sites
            .sites
            .iter()
            .filter(|x| {
                matches!(
                    x.kind,
                    crate::model::sites::SiteKind::Extends
                        | crate::model::sites::SiteKind::Implements
                )
            })
            .cloned()
            .collect()
    };
    let same_facts = match (old, new) {
        (Some(a), Some(b)) => {
            (a.sites.facts == b.sites.facts || seen_facts(a, kept) == seen_facts(b, kept))
                && facts(a) == facts(b)
        }
        _ => false,
    };
    if !same_facts {
        for f in old.iter().chain(new.iter()) {
            keys.push(facts_key(&f.path));
        }
    }
    keys
}

/// A fact another file may read, with its owner named by id (`None`: the
/// file's own): `(owner, kind, name, chain)`.
type SeenFact<'a> = (
    Option<&'a str>,
    &'a crate::model::sites::FactKind,
    &'a str,
    &'a [crate::model::sites::Step],
);

/// The facts of `f` other files may read: the file's own and those of the
/// symbols a diff keeps (`kept`). The facts of re-created symbols are reached
/// through those symbols' definition keys, which change anyway. A symbol's
/// index shifts when one is added above it, so owners go by id; and the bytes
/// with it, so only their order within an owner counts (bindings are read in
/// that order). Appending a function to `serde_core`'s `de/mod.rs`
/// re-resolved the 38 files that read its facts.
fn seen_facts<'a>(f: &'a RFile, kept: Option<&HashSet<String>>) -> Vec<SeenFact<'a>> {
    use crate::model::sites::IN_FILE;
    let mut seen: Vec<(SeenFact<'a>, u32)> = f
        .sites
        .facts
        .iter()
        .filter_map(|x| {
            let owner = match x.owner {
                IN_FILE => None,
                i => {
                    let id = &*f.symbols.get(i as usize)?.id;
                    kept?.contains(id).then_some(Some(id))?
                }
            };
            Some(((owner, &x.kind, &*x.name, &*x.chain), x.byte))
        })
        .collect();
    seen.sort_by(|(a, at), (b, bt)| (a.0, at).cmp(&(b.0, bt)));
    seen.into_iter().map(|(x, _)| x).collect()
}

/// Methods that came (+1) or went (-1) in a run's changed files, by family
/// and name (see `method_name_keys`).
#[derive(Default)]
pub struct MethodChanges(FxMap<(Family, String), i64>);

/// The `name` tier's keys of the methods in `changes` whose count in the repo
/// (`files`, as they are now) was or is one or none. A method call of unknown
/// receiver goes to the only method of its name in the repo (`name_target`):
/// while two or more are left, no answer changes. Deleting a file of the
/// crates corpus with a method `kind` re-resolved the 257 files calling
/// `.kind()`, of 600-odd methods so named.
pub fn method_name_keys(files: &[RFile], changes: &MethodChanges) -> Vec<u64> {
    let changes = &changes.0;
    if changes.is_empty() {
        return Vec::new();
    }
    let families: HashSet<Family> = changes.keys().map(|(f, _)| *f).collect();
    let mut now: FxMap<(Family, &str), i64> =
        changes.keys().map(|(f, n)| ((*f, n.as_str()), 0)).collect();
    for f in files {
        let fam = family(f.language);
        if !families.contains(&fam) {
            continue;
        }
        for (_, method, name) in f.callables.iter() {
            if let Some(count) = now.get_mut(&(fam, name)).filter(|_| method) {
                *count += 1;
            }
        }
    }
    changes
        .iter()
        .filter(|((fam, name), came)| {
            let after = now[&(*fam, name.as_str())];
            after - **came <= 1 || after <= 1
        })
        .map(|((fam, name), _)| name_key(*fam, name, true))
        .collect()
}

/// The key of the functions (`method` false) or methods named `name` in a
/// family (the `name` tier's lookups): it changes when one appears or
/// disappears anywhere. Apart, because a call `drop(x)` asks for functions
/// only: a file with an `impl Drop` re-resolved every caller of `drop(…)`.
fn name_key(fam: Family, name: &str, method: bool) -> u64 {
    key(&["n", fam_str(fam), name, if method { "m" } else { "f" }])
}

/// The type whose impl block a Rust method is defined in, by the name its
/// qualified name gives it (`vector::__m256i::splat`: `__m256i`), if the
/// symbol before it of that qualified name is an impl.
fn impl_type_of_method(f: &RFile, at: usize) -> Option<&str> {
    impl_of_method(f, at).map(|(_, of)| of)
}

/// The impl block a Rust method is defined in (its position in the file)
/// and the name of the type it is for (`impl_type_of_method`).
pub(super) fn impl_of_method(f: &RFile, at: usize) -> Option<(usize, &str)> {
    let (parent, _) = f.symbols[at].qualified_name.rsplit_once("::")?;
    let i = f.symbols[..at]
        .iter()
        .rposition(|x| &*x.qualified_name == parent)
        .filter(|&i| f.symbols[i].kind == "impl")?;
    Some((i, parent.rsplit("::").next().unwrap_or(parent)))
}

/// Stands for every primitive type in `impl_method_key`: whether any
/// primitive's impl defines a method is asked of nearly every call on a
/// library's value.
pub(super) const ANY_PRIMITIVE: &str = "#primitive";

/// The key of the Rust methods named `name` in impls for the type named `of`
/// (`Index::impl_methods`).
fn impl_method_key(of: &str, name: &str) -> u64 {
    key(&["p", of, name])
}

/// The key of a file's facts and heritage clauses (see `changed_keys`).
pub fn facts_key(path: &str) -> u64 {
    key(&["f", path])
}

/// The `#[path]` module keys of declarations in `files` that point at one of
/// `paths`: they change when a file appears or disappears there.
pub fn rust_path_targets(files: &[RFile], paths: &HashSet<&str>) -> Vec<u64> {
    rust_path_mods(files)
        .filter(|(_, _, target)| paths.contains(target.as_str()))
        .map(|(f, name, _)| key(&["r", &f.package, &rust_child(&f.module, name)]))
        .collect()
}

/// Every `#[path = "…"] mod name;` of the Rust files: (declaring file, module
/// name, a repo-relative path it points at), one per path, nearest attribute first.
fn rust_path_mods(files: &[RFile]) -> impl Iterator<Item = (&RFile, &str, String)> {
    files
        .iter()
        .filter(|f| f.language == Language::Rust && f.path_mods)
        .flat_map(|f| {
            f.imports
                .iter()
                .filter_map(|imp| match &imp.spec {
                    ImportSpec::RustMod { name, paths } if !paths.is_empty() => Some((name, paths)),
                    _ => None,
                })
                .flat_map(move |(name, paths)| {
                    paths.iter().map(move |p| {
                        (
                            f,
                            name.as_str(),
                            normalize_path(&format!("{}/{p}", dir_of(&f.path))),
                        )
                    })
                })
        })
}

/// A Rust path and the paths above it, longest first: `a::b::c`, `a::b`, `a`.
fn path_and_above(path: &str) -> impl Iterator<Item = &str> {
    std::iter::successors(Some(path), |p| p.rfind("::").map(|i| &p[..i]))
}

fn rust_child(module: &str, name: &str) -> String {
    if module.is_empty() {
        name.to_string()
    } else {
        format!("{module}::{name}")
    }
}

/// A Rust file of a crate's examples, tests, benches, binaries or build script:
/// crate roots beside the library, whose module paths may repeat the library's.
fn is_rust_side_root(path: &str) -> bool {
    // A `tests` folder under `src/` is a module of the library
    // (`src/tests/parser.rs` is `tests::parser`, and its `crate::parser` the
    // library's), one beside `src/` a crate of its own (`tests/it.rs`), and a
    // crate may sit in such a folder (`tests/fixture/src/lib.rs`).
    let (mut side, mut in_src) = (false, false);
    for dir in dir_of(path).split('/') {
        match dir {
            "src" => (side, in_src) = (false, true),
            "examples" | "tests" | "benches" if !in_src => side = true,
            _ => {}
        }
    }
    side || path.starts_with("src/bin/")
        || path.contains("/src/bin/")
        // A build script, whose module path is the crate root's.
        || path == "build.rs"
        || (path.ends_with("/build.rs") && !path.starts_with("src/") && !path.contains("/src/"))
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

impl<'a> Tables<'a> {
    /// `families`: the families whose definitions are looked up (lookups never
    /// cross families, so the others' symbols need no table). Hops through
    /// re-exports stay in their family too.
    fn new(files: &'a [RFile], layout: &'a Layout, families: &[Family]) -> Tables<'a> {
        // Sized up front: growing them rehashes every entry several times.
        let n = files.len();
        let mut ix = Tables {
            files,
            by_path: FxMap::with_capacity_and_hasher(n, Default::default()),
            by_module: FxMap::with_capacity_and_hasher(n, Default::default()),
            by_qn: FxMap::default(),
            definitions: Vec::new(),
            go_dirs: FxMap::default(),
            rust_crates: Default::default(),
            rust_path_mods: FxMap::default(),
            rust_path_crates: FxSet::default(),
            rust_child_modules: FxMap::default(),
            rust_bound: (0..n).map(|_| std::sync::OnceLock::new()).collect(),
            ts_exports: (0..n).map(|_| std::sync::OnceLock::new()).collect(),
            rust_declared: FxMap::default(),
            layout,
            by_file_id: std::sync::OnceLock::new(),
            by_name: std::sync::OnceLock::new(),
            impl_methods: Default::default(),
            asked: None,
            families: families.to_vec(),
        };
        for (i, f) in files.iter().enumerate() {
            let fam = family(f.language);
            ix.by_path.insert(f.path.as_str(), i);
            let pkg = if fam == Family::Rust {
                f.package.as_str()
            } else {
                ""
            };
            ix.by_module
                .entry((fam, pkg, f.module.as_str()))
                .or_default()
                .push(i);
            // Importing a package never brings in its _test.go files.
            if fam == Family::Go && !f.path.ends_with("_test.go") {
                ix.go_dirs.entry(dir_of(&f.path)).or_default().push(i);
            }
            if fam == Family::Rust {
                ix.rust_crates.insert(f.package.as_str());
                if !f.module.is_empty() {
                    let (parent, name) = f.module.rsplit_once("::").unwrap_or(("", &f.module));
                    ix.rust_child_modules
                        .entry((f.package.as_str(), parent))
                        .or_default()
                        .push(name);
                }
            }
        }
        for (i, f) in files.iter().enumerate() {
            let fam = family(f.language);
            if !families.contains(&fam) {
                continue;
            }
            let pkg = if fam == Family::Rust {
                f.package.as_str()
            } else {
                ""
            };
            let group = file_group(fam, &f.module);
            {
                let n = ix.definitions.len();
                let at = *ix.by_qn.entry((fam, pkg, group)).or_insert(n);
                if at == n {
                    ix.definitions.push(Definitions {
                        files: Vec::new(),
                        table: std::sync::OnceLock::new(),
                        group,
                        nested: std::sync::OnceLock::new(),
                    });
                }
                ix.definitions[at].files.push(i);
            }
        }
        // By path, except that a Rust crate's examples, tests, benches and
        // binaries come last: `examples/aggregation.rs` is a crate root of its
        // own whose module path is `aggregation`, like the library's
        // `src/aggregation/mod.rs`, and a lookup of the module means the library's.
        let side = |i: usize| {
            family(files[i].language) == Family::Rust && is_rust_side_root(&files[i].path)
        };
        for v in ix.by_module.values_mut().chain(ix.go_dirs.values_mut()) {
            v.sort_by(|&a, &b| (side(a), &files[a].path).cmp(&(side(b), &files[b].path)));
        }
        for (f, name, joined) in rust_path_mods(files) {
            ix.rust_path_crates.insert(f.package.as_str());
            if let Some(&target) = ix.by_path.get(joined.as_str()) {
                let declared = rust_child(&f.module, name);
                match ix.rust_declared.get(&target) {
                    Some(d) if *d <= declared => {}
                    _ => {
                        ix.rust_declared.insert(target, declared);
                    }
                }
                let v = ix
                    .rust_path_mods
                    .entry(f.package.as_str())
                    .or_default()
                    .entry(rust_child(&f.module, name))
                    .or_default();
                if !v.contains(&target) {
                    v.push(target);
                }
            }
        }
        ix
    }
}

impl<'a> Index<'a> {
    fn dep(&self, parts: &[&str]) {
        self.deps.borrow_mut().push(key(parts));
    }

    fn dep_key(&self, k: u64) {
        self.deps.borrow_mut().push(k);
    }

    /// A Rust module's file, also when it or a module above it was declared with
    /// `#[path]`: `#[path = "backend/linux_raw/mod.rs"] mod backend;` makes
    /// `backend::c` the file `backend/linux_raw/c.rs`, whose own module path is
    /// `backend::linux_raw::c`.
    fn rust_module(&self, krate: &str, module: &str) -> Option<usize> {
        self.rust_module_at(krate, module, 0)
    }

    fn rust_module_at(&self, krate: &str, module: &str, depth: usize) -> Option<usize> {
        if let Some(f) = self.module_file(Family::Rust, krate, module) {
            return Some(f);
        }
        if module.is_empty() || depth > 4 {
            return None;
        }
        self.dep(&["rp", krate]);
        if !self.rust_path_crates.contains(krate) {
            return None;
        }
        let declared = self.rust_path_mods.get(krate);
        for prefix in path_and_above(module) {
            self.dep(&["r", krate, prefix]);
            if let Some(cands) = declared.and_then(|d| d.get(prefix)) {
                let f = self.pick_variant(cands);
                if prefix.len() == module.len() {
                    return Some(f);
                }
                let real = rust_child(&self.files[f].module, &module[prefix.len() + 2..]);
                if real == module {
                    return None;
                }
                return self.rust_module_at(krate, &real, depth + 1);
            }
        }
        None
    }

    /// The module path `self` means in file `fi`: the one a `#[path]` module
    /// declares it as, else the one its path gives.
    fn rust_self(&self, fi: usize) -> &str {
        let f = &self.files[fi];
        self.dep(&["rt", &f.path]);
        self.rust_declared
            .get(&fi)
            .map(String::as_str)
            .unwrap_or(&f.module)
    }

    /// Of a `#[path]` module's `cfg_attr` variants, the one whose directory holds
    /// the file being resolved (code of one backend imports its own backend),
    /// else the nearest attribute's.
    fn pick_variant(&self, cands: &[usize]) -> usize {
        if cands.len() > 1 {
            self.origin_used.set(true);
        }
        let o = self.origin;
        cands
            .iter()
            .copied()
            .find(|&c| {
                let d = dir_of(&self.files[c].path);
                !d.is_empty() && o.starts_with(d) && o.as_bytes().get(d.len()) == Some(&b'/')
            })
            .unwrap_or(cands[0])
    }

    /// The names TS module file `mf` exports by an `export` list (its
    /// `Export` facts), each with the local name it exports when that is
    /// another: kept apart from its sites, which a full build holds for one
    /// chunk of files only (`calls::ChunkSites`).
    fn ts_exports(&self, mf: usize) -> &'a [TsExport] {
        let tables: &'a Tables<'a> = self.tables;
        tables.ts_exports[mf].get_or_init(|| {
            let sites = tables.files[mf].sites.value_or_decoded();
            sites
                .facts
                .iter()
                .filter(|f| f.kind == crate::model::sites::FactKind::Export)
                .map(|f| TsExport {
                    name: f.name.clone(),
                    local: match f.chain.as_slice() {
                        [local] if *local != f.name => Some(local.clone()),
                        _ => None,
                    },
                })
                .collect()
        })
    }

    /// What module file `pf` binds (see `RustBound`), made on the first ask.
    fn rust_bound(&self, pf: usize) -> &'a RustBound<'a> {
        let tables: &'a Tables<'a> = self.tables;
        tables.rust_bound[pf].get_or_init(|| {
            let f = &tables.files[pf];
            let (krate, module) = (f.package.as_str(), f.module.as_str());
            let mut names: FxSet<&'a str> = FxSet::default();
            // The groups above the module's own that a definition named
            // `module::x` can be in (`qn_groups`).
            let above = (!module.is_empty())
                .then_some("")
                .into_iter()
                .chain(module.match_indices("::").map(|(i, _)| &module[..i]));
            for group in above {
                if let Some(&at) = tables.by_qn.get(&(Family::Rust, krate, group))
                    && let Some(v) = tables.definitions[at].nested(tables.files).get(module)
                {
                    names.extend(v.iter().copied());
                }
            }
            let own = tables.by_qn.get(&(Family::Rust, krate, module)).copied();
            if let Some(v) = tables.rust_child_modules.get(&(krate, module)) {
                names.extend(v.iter().copied());
            }
            let mut globs: Vec<&'a [String]> = Vec::new();
            let imports: &'a [RawImport] = &f.imports;
            for (segs, last, binds) in rust::uses_in_order(imports, "") {
                if binds != "*" {
                    names.insert(binds);
                }
                if last == "*" {
                    globs.push(segs);
                }
            }
            let path_free = tables
                .rust_path_mods
                .get(krate)
                .is_none_or(|declared| !path_and_above(module).any(|p| declared.contains_key(p)));
            RustBound {
                names,
                own,
                path_free,
                glob_abs: globs.iter().map(|_| Default::default()).collect(),
                globs,
                side_root: is_rust_side_root(&f.path),
            }
        })
    }

    fn path(&self, path: &str) -> Option<usize> {
        self.dep(&["p", path]);
        self.by_path.get(path).copied()
    }

    fn go_dir(&self, dir: &str) -> Option<&Vec<usize>> {
        self.deps.borrow_mut().push(package_key(dir));
        self.go_dirs.get(dir)
    }

    fn has_crate(&self, name: &str) -> bool {
        self.deps.borrow_mut().push(crate_key(name));
        self.rust_crates.contains(name)
    }

    /// File `fi`'s imports, read to follow re-exports through it.
    fn imports_of(&self, fi: usize) -> &'a [RawImport] {
        let f = &self.files[fi];
        self.dep(&["i", &f.path]);
        &f.imports
    }

    /// The definitions named `qn` in (`fam`, `pkg`), best first.
    fn definitions(
        &self,
        fam: Family,
        pkg: &str,
        qn: &str,
    ) -> Option<std::borrow::Cow<'a, [Definition<'a>]>> {
        self.definitions_keyed(fam, pkg, qn).map(|(_, defs)| defs)
    }

    /// `definitions`, with the table's own copy of `qn` (for answers that
    /// keep it): one pass over the tables for both.
    fn definitions_keyed(
        &self,
        fam: Family,
        pkg: &str,
        qn: &str,
    ) -> Option<(&'a str, std::borrow::Cow<'a, [Definition<'a>]>)> {
        let tables: &'a Tables<'a> = self.tables;
        let mut found = qn_groups(fam, qn).filter_map(|group| {
            let at = *tables.by_qn.get(&(fam, pkg, group))?;
            tables.definitions[at].table(tables.files).get_key_value(qn)
        });
        let (key, first) = found.next()?;
        let key: &'a str = key;
        Some((
            key,
            match found.next() {
                None => std::borrow::Cow::Borrowed(&first[..]),
                // Several modules define the name (`a.b` with class `c`, and
                // `a.b.c`): in the order one table of them all would give.
                Some(second) => {
                    let mut all: Vec<Definition<'a>> = first.to_vec();
                    all.extend(second.1.iter().copied());
                    all.extend(found.flat_map(|(_, v)| v.iter().copied()));
                    all.sort_by(|a, b| (a.1, a.2, a.0).cmp(&(b.1, b.2, b.0)));
                    std::borrow::Cow::Owned(all)
                }
            },
        ))
    }

    /// A symbol named `qn`, its definitions, and the table's copy of `qn`,
    /// the lookup recorded (what `Resolver::lookup` asks, in one pass).
    fn symbol_entries(
        &self,
        fam: Family,
        pkg: &str,
        qn: &str,
    ) -> Option<(&'a str, std::borrow::Cow<'a, [Definition<'a>]>)> {
        self.dep(&["q", fam_str(fam), pkg, qn]);
        self.definitions_keyed(fam, pkg, qn)
    }

    fn symbol(&self, fam: Family, pkg: &str, qn: &str) -> Option<&'a str> {
        self.dep(&["q", fam_str(fam), pkg, qn]);
        let id = self
            .definitions(fam, pkg, qn)
            .and_then(|v| v.first().map(|(id, _, _, _)| *id))?;
        self.note_found(id, fam, pkg, qn);
        Some(id)
    }

    /// The table's own copy of qualified name `qn` (for answers that keep it).
    fn qn_key(&self, fam: Family, pkg: &str, qn: &str) -> Option<&'a str> {
        let tables: &'a Tables<'a> = self.tables;
        qn_groups(fam, qn).find_map(|group| {
            let at = *tables.by_qn.get(&(fam, pkg, group))?;
            tables.definitions[at]
                .table(tables.files)
                .get_key_value(qn)
                .map(|(k, _)| *k)
        })
    }

    /// Remembers where symbol `id` was found (see `found`).
    fn note_found(&self, id: &str, fam: Family, pkg: &str, qn: &str) {
        let mut found = self.found.borrow_mut();
        if !found.contains_key(id) {
            found.insert(id.to_string(), (fam, pkg.to_string(), qn.to_string()));
        }
    }

    /// The definitions of functions (`method` false) or methods whose last
    /// name segment is `name` (the `name` tier), in file then symbol order.
    fn callables_named(&self, fam: Family, name: &str, method: bool) -> &'a [(u32, u32)] {
        self.dep_key(name_key(fam, name, method));
        self.by_name()
            .get(&(fam, method))
            .and_then(|m| m.get(name))
            .map_or(&[], Vec::as_slice)
    }

    /// The `name` tier's table, made on the first ask.
    fn by_name(&self) -> &'a ByName<'a> {
        let tables: &'a Tables<'a> = self.tables;
        tables.by_name.get_or_init(|| {
            let mut map: ByName<'a> = FxMap::default();
            for (fi, f) in tables.files.iter().enumerate() {
                let fam = family(f.language);
                if !tables.families.contains(&fam) {
                    continue;
                }
                let callables: &'a Callables = &f.callables;
                for (si, method, name) in callables.iter() {
                    if tables.asked.as_ref().is_some_and(|a| !a.contains(name)) {
                        continue;
                    }
                    map.entry((fam, method))
                        .or_default()
                        .entry(name)
                        .or_default()
                        .push((fi as u32, si));
                }
            }
            map
        })
    }

    /// Rust: the methods named `name` that an impl block for the type named
    /// `of` defines (`impl Vector for __m256i { fn splat(…) }`; `of` may be
    /// `ANY_PRIMITIVE`), as (file, that type, symbol). Nearly every call on a
    /// library type's value asks whether a primitive's impl defines one, so
    /// the table is kept per name, and the file asking depends on the methods
    /// of that name and type only (`impl_method_key`), not on every method of
    /// the name: a file defining `len` or `push` re-resolved every file that
    /// called them on a `Vec`.
    fn impl_methods(&self, of: &str, name: &str) -> ImplMethods<'a> {
        self.dep_key(impl_method_key(of, name));
        let mut cache = self
            .tables
            .impl_methods
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let files: &'a [RFile] = self.tables.files;
        let all = cache.entry(name.into()).or_insert_with(|| {
            self.by_name()
                .get(&(Family::Rust, true))
                .and_then(|m| m.get(name))
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .filter_map(|&(fi, si)| {
                    let f = &files[fi as usize];
                    Some((fi, impl_type_of_method(f, si as usize)?, si))
                })
                .collect()
        });
        all.iter()
            .filter(|(_, t, _)| match of {
                ANY_PRIMITIVE => calls::is_rust_primitive(t),
                _ => *t == of,
            })
            .copied()
            .collect()
    }

    /// A file's position by its id.
    fn file_by_id(&self, id: &str) -> Option<usize> {
        let map = self.tables.by_file_id.get_or_init(|| {
            self.tables
                .files
                .iter()
                .enumerate()
                .map(|(i, f)| (f.id.as_str(), i))
                .collect()
        });
        let fi = *map.get(id)?;
        self.dep(&["p", &self.files[fi].path]);
        Some(fi)
    }

    /// Like `symbol`, with the definition's file path and kind.
    fn symbol_entry(
        &self,
        fam: Family,
        pkg: &str,
        qn: &str,
    ) -> Option<(&'a str, &'a str, &'a str)> {
        self.dep(&["q", fam_str(fam), pkg, qn]);
        self.definitions(fam, pkg, qn)
            .and_then(|v| v.first().map(|(id, _, path, kind)| (*id, *path, *kind)))
    }

    /// Like `symbol`, preferring a definition in `path` (for modules that several
    /// files share, like `x.ts` beside `x.js`).
    fn symbol_in(&self, fam: Family, pkg: &str, qn: &str, path: &str) -> Option<&'a str> {
        self.dep(&["q", fam_str(fam), pkg, qn]);
        let v = self.definitions(fam, pkg, qn)?;
        let id = v
            .iter()
            .find(|(_, _, p, _)| *p == path)
            .or_else(|| v.first())
            .map(|(id, _, _, _)| *id)?;
        self.note_found(id, fam, pkg, qn);
        Some(id)
    }

    fn module_file(&self, fam: Family, pkg: &str, module: &str) -> Option<usize> {
        self.dep(&["m", fam_str(fam), pkg, module]);
        self.by_module
            .get(&(fam, pkg, module))
            .and_then(|v| v.first())
            .copied()
    }
}

/// Resolves every import of every file. Edges are sorted and unique.
pub fn resolve_all(files: &[RFile], layout: &Layout) -> Vec<Edge> {
    let mut edges: Vec<Edge> = Vec::new();
    resolve_each(files, layout, None, &mut |_, r| edges.extend(r.edges));
    edges.sort();
    edges
}

/// One file's resolution: its edges (sorted, unique) and the keys of every lookup
/// made for it (sorted, unique).
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    pub edges: Vec<Edge>,
    /// Call-graph edges of the file's sites (sorted, unique).
    pub sites: Vec<SiteEdge>,
    /// The lookup keys (`key`: 32 bits each), kept with the file's state
    /// entry for the server's life: half the room of a `u64`.
    pub deps: Vec<u32>,
}

/// Files resolved in parallel before their results are handed on.
const CHUNK: usize = 256;

/// Resolves the imports and call sites of every file, or of the files `only`
/// marks, and hands each file's resolution to `each` (position, result), in
/// `files` order. Lookups see the whole ref.
///
/// Files are resolved a chunk at a time, and a chunk's results are handed on
/// while the next one is resolved: a ref's results are never held whole (on
/// the crates corpus, 928k call-graph edges were ~220 MiB of the run's peak).
pub fn resolve_each(
    files: &[RFile],
    layout: &Layout,
    only: Option<&[bool]>,
    each: &mut (dyn FnMut(usize, Resolved) + Send),
) {
    let mut families: Vec<Family> = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let fam = family(f.language);
        // Go imports name packages, never definitions; its calls do.
        if only.is_none_or(|o| o[i]) && !families.contains(&fam) {
            families.push(fam);
        }
    }
    let mut tables = Tables::new(files, layout, &families);
    // Ten changed files ask the `name` tier about a few hundred names; a
    // table of all 300k callables of a large ref was a fifth of such a run.
    if let Some(only) = only {
        tables.asked = Some(
            files
                .iter()
                .zip(only)
                .filter(|(_, resolve)| **resolve)
                .flat_map(|(f, _)| &f.sites.sites)
                // `::from_bits` of a Rust path is asked as `from_bits` (its
                // argument's shape, `ARGUMENT`, and other markers passed over).
                .filter_map(|s| {
                    let mut names = s.chain.iter().rev();
                    let last = names.find(|c| !c.starts_with('#'))?;
                    Some(last.strip_prefix("::").unwrap_or(last))
                })
                .collect(),
        );
    }
    // Chunks of the files to resolve, not of positions: an incremental run's
    // few hundred files spread over a big ref would go one at a time.
    let todo: Vec<usize> = match only {
        Some(o) => (0..files.len()).filter(|&fi| o[fi]).collect(),
        None => (0..files.len()).collect(),
    };
    let rust_cache = rust::Cache::default();
    let mut done: Vec<(usize, Resolved)> = Vec::new();
    for chunk in todo.chunks(CHUNK) {
        // Other files' contexts, made for this chunk's lookups: kept for the
        // whole run they grew with the ref (every file a lookup ever reached,
        // its facts and symbols indexed), the largest of resolution's tables.
        // So are the sites and facts they read.
        let sites = calls::ChunkSites::new(files);
        let contexts = calls::CxCache::new(&sites);
        rust_cache.clear();
        let handed = std::mem::take(&mut done);
        let (next, ()) = rayon::join(
            || {
                chunk
                    .par_iter()
                    .map(|&fi| (fi, resolve_file(&tables, &rust_cache, &contexts, fi)))
                    .collect()
            },
            || hand_on(&mut *each, handed),
        );
        done = next;
    }
    hand_on(each, done);
}

fn hand_on(each: &mut (dyn FnMut(usize, Resolved) + Send), done: Vec<(usize, Resolved)>) {
    for (fi, r) in done {
        each(fi, r);
    }
}

/// One file's resolution (see `resolve_each`).
fn resolve_file<'a>(
    tables: &'a Tables<'a>,
    rust_cache: &'a rust::Cache<'a>,
    contexts: &calls::CxCache<'a, '_>,
    fi: usize,
) -> Resolved {
    let f = &tables.files[fi];
    let ix = Index {
        tables,
        deps: std::cell::RefCell::new(Vec::new()),
        origin: &f.path,
        origin_used: std::cell::Cell::new(false),
        rust_cache,
        found: Default::default(),
    };
    let targets: Vec<(usize, Vec<Target>)> = f
        .imports
        .iter()
        .enumerate()
        .map(|(i, imp)| (i, resolve_one(&ix, fi, imp, 0)))
        .collect();
    let mut edges: Vec<Edge> = targets
        .iter()
        .flat_map(|(i, targets)| {
            let imp = &f.imports[*i];
            targets.iter().map(move |target| Edge {
                from: f.id.clone(),
                target: target.clone(),
                to_name: imp.to_name.clone(),
                line: i64::from(imp.line),
                alias: imp.alias.clone(),
            })
        })
        .collect();
    edges.sort();
    edges.dedup();
    let sites = calls::Resolver::new(&ix, contexts).resolve_file(fi, &targets);
    let deps = sorted_unique(ix.deps.into_inner())
        .into_iter()
        .map(narrow_key)
        .collect();
    Resolved { edges, sites, deps }
}

/// A lookup key as a state keeps it (`key` makes 32-bit keys).
pub fn narrow_key(k: u64) -> u32 {
    debug_assert!(k <= u64::from(u32::MAX), "a lookup key has 32 bits");
    k as u32
}

/// Lookup keys sorted, each once. A file whose lookups went through a glob
/// tree holds the keys of each of its answers (libc's files: hundreds of
/// thousands, most of them many times over): those are made unique in a set
/// first, where sorting them all was a tenth of such a run.
pub(super) fn sorted_unique(mut keys: Vec<u64>) -> Vec<u64> {
    if keys.len() > 4096 {
        let unique: FxSet<u64> = keys.iter().copied().collect();
        keys = unique.into_iter().collect();
    }
    keys.sort_unstable();
    keys.dedup();
    // Moved to a block of their size: a file's keys are kept with its state
    // entry for the run, and its lookups push each key once per ask (a
    // full build held ~340 MiB of room on a 52k-file tree).
    let mut fit = Vec::with_capacity(keys.len());
    fit.extend_from_slice(&keys);
    fit
}

fn resolve_one(ix: &Index<'_>, fi: usize, imp: &RawImport, hops: usize) -> Vec<Target> {
    let found = match &imp.spec {
        ImportSpec::RustUse(segs) => rust_use(ix, fi, segs, hops),
        ImportSpec::RustMod { name, paths } => rust_mod(ix, fi, name, paths),
        ImportSpec::RustExternCrate(name) => {
            let krate = name.replace('-', "_");
            ix.rust_module(&krate, "")
                .map(|f| vec![Target::File(ix.files[f].id.clone())])
                .unwrap_or_default()
        }
        ImportSpec::Python { module, name } => python(ix, fi, module, name.as_deref(), hops),
        ImportSpec::Ts { specifier, name } => ts(ix, fi, specifier, name.as_deref(), hops),
        ImportSpec::Go { path } => go(ix, fi, path),
    };
    if found.is_empty() {
        vec![Target::External(external_name(ix, fi, imp))]
    } else {
        found
    }
}

/// The name of an unresolved target: absolute where the form is relative.
fn external_name(ix: &Index<'_>, fi: usize, imp: &RawImport) -> String {
    match &imp.spec {
        ImportSpec::Python { module, name } if module.starts_with('.') => {
            match python_absolute(&ix.files[fi], module) {
                Some(abs) => match name {
                    Some(n) if abs.is_empty() => n.clone(),
                    Some(n) => format!("{abs}.{n}"),
                    None => abs,
                },
                None => imp.to_name.clone(),
            }
        }
        // A whole JS/TS package: the package itself.
        ImportSpec::Ts { specifier, name } if matches!(name.as_deref(), None | Some("*")) => {
            specifier.clone()
        }
        _ => imp.to_name.clone(),
    }
}

// ------------------------------------------------------------------ Rust

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalise() {
        assert_eq!(normalize_path("src/auth/../router"), "src/router");
        assert_eq!(normalize_path("./a/./b"), "a/b");
    }

    #[test]
    fn python_relative_modules() {
        let f = RFile {
            id: "f".into(),
            path: "a/b/c.py".into(),
            language: Language::Python,
            module: "a.b.c".into(),
            package: "a.b".into(),
            imports: Lazy::new(vec![]),
            path_mods: false,
            symbols: Lazy::new(vec![]),
            callables: Lazy::new(Callables::default()),
            sites: Lazy::new(Default::default()),
        };
        assert_eq!(python_absolute(&f, ".").as_deref(), Some("a.b"));
        assert_eq!(
            python_absolute(&f, "..pkg.mod").as_deref(),
            Some("a.pkg.mod")
        );
        assert_eq!(python_absolute(&f, "....x"), None);
    }
}
