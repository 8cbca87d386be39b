//! Import resolution: every file's raw imports against the whole repo/ref.
//!
//! Runs over all files of a ref on every index run that changed something, so the
//! edge set always equals what a from-scratch index gives (edges into a file that
//! changed are re-resolved too). It is pure: in-memory tables in, edges out.
//!
//! Rules per language (README, "Imports"): Rust paths (`crate`, `self`, `super`,
//! workspace crates, 2018-style relative paths, `pub use` re-exports, globs,
//! `mod` files, `extern crate`); Python absolute and relative modules, package
//! roots, `__init__` re-exports, submodules; TS/JS relative specifiers with
//! extension and `index` probing, `.js` → `.ts`, tsconfig `baseUrl`/`paths`,
//! `export … from` re-exports; Go packages of the module (by `go.mod`).

use std::collections::HashMap;

use rayon::prelude::*;

use crate::layout::{Layout, normalize_path};
use crate::model::{ImportSpec, Language, RawImport};

/// A file as the resolver sees it.
#[derive(Debug, Clone)]
pub struct RFile {
    pub id: String,
    pub path: String,
    pub language: Language,
    pub module: String,
    pub package: String,
    pub imports: Vec<RawImport>,
    /// The file's definitions.
    pub symbols: Vec<RSymbol>,
}

/// A symbol as the resolver sees it (its file is the `RFile` holding it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RSymbol {
    pub id: String,
    pub qualified_name: String,
    pub kind: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    Symbol(String),
    File(String),
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

type FxMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<FxHasher>>;

/// (family, package for Rust / "" otherwise, key) — the key of module and
/// qualified-name tables.
type Key<'a> = (Family, &'a str, &'a str);

/// Lookup tables over one ref.
struct Index<'a> {
    files: &'a [RFile],
    by_path: FxMap<&'a str, usize>,
    /// (family, package for Rust / "" otherwise, module) → files.
    by_module: FxMap<Key<'a>, Vec<usize>>,
    /// (family, package for Rust / "" otherwise, qualified name) → symbol ids,
    /// definitions before impls.
    by_qn: FxMap<Key<'a>, Vec<(&'a str, bool, &'a str)>>,
    /// Go: directory → files.
    go_dirs: FxMap<&'a str, Vec<usize>>,
    rust_crates: Vec<&'a str>,
    /// Rust modules declared with `#[path]`: (crate, module path) → file.
    rust_path_mods: HashMap<(String, String), usize>,
    layout: &'a Layout,
}

const MAX_HOPS: usize = 8;

// Every table lookup made while one file is resolved is recorded as a key (a hash
// of the table and the looked-up name), hit or miss. A file's edges can only
// change when a changed file contributes (or contributed) to one of its keys, so
// an incremental run re-resolves just those files (`contributed_keys`).
thread_local! {
    static DEPS: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A lookup key: blake3 of the parts (stable across builds; it is persisted).
pub fn key(parts: &[&str]) -> u64 {
    let mut h = blake3::Hasher::new();
    for p in parts {
        h.update(&(p.len() as u32).to_le_bytes());
        h.update(p.as_bytes());
    }
    u64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().expect("8 bytes"))
}

fn dep(parts: &[&str]) {
    let k = key(parts);
    DEPS.with(|d| d.borrow_mut().push(k));
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
    /// Its path, module, crate, Go package dir and `#[path]` module declarations:
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
    if fam == Family::Go && !f.path.ends_with("_test.go") {
        structure.push(key(&["g", dir_of(&f.path)]));
    }
    if fam == Family::Rust {
        structure.push(key(&["c", &f.package]));
        for imp in &f.imports {
            if let ImportSpec::RustMod {
                name,
                path: Some(_),
            } = &imp.spec
            {
                structure.push(key(&["r", &f.package, &rust_child(&f.module, name)]));
            }
        }
    }
    // Go imports name packages, never definitions: nothing looks them up.
    let definitions = if fam == Family::Go {
        Vec::new()
    } else {
        f.symbols
            .iter()
            .map(|s| key(&["q", fam_str(fam), pkg, &s.qualified_name]))
            .collect()
    };
    Contribution {
        structure,
        definitions,
        imports: key(&["i", &f.path]),
    }
}

/// The keys whose table entries differ between `old` and `new` (either may be
/// absent: a file added or deleted). Definitions always count: a changed file's
/// symbols are re-created, and the edges into them with them.
pub fn changed_keys(old: Option<&RFile>, new: Option<&RFile>) -> Vec<u64> {
    let (o, n) = (old.map(contributed_keys), new.map(contributed_keys));
    let mut keys = Vec::new();
    match (&o, &n) {
        (Some(o), Some(n)) => {
            keys.extend(o.structure.iter().filter(|k| !n.structure.contains(k)));
            keys.extend(n.structure.iter().filter(|k| !o.structure.contains(k)));
            if old.map(|f| &f.imports) != new.map(|f| &f.imports) {
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
    for c in o.iter().chain(n.iter()) {
        keys.extend(&c.definitions);
    }
    keys
}

/// The `#[path]` module keys of declarations in `files` that point at `path`:
/// they change when a file appears or disappears there.
pub fn rust_path_targets(files: &[RFile], path: &str) -> Vec<u64> {
    rust_path_mods(files)
        .filter(|(_, _, target)| target == path)
        .map(|(f, name, _)| key(&["r", &f.package, &rust_child(&f.module, name)]))
        .collect()
}

/// Every `#[path = "…"] mod name;` of the Rust files: (declaring file, module
/// name, the repo-relative path it points at).
fn rust_path_mods(files: &[RFile]) -> impl Iterator<Item = (&RFile, &str, String)> {
    files
        .iter()
        .filter(|f| f.language == Language::Rust)
        .flat_map(|f| {
            f.imports.iter().filter_map(move |imp| match &imp.spec {
                ImportSpec::RustMod {
                    name,
                    path: Some(p),
                } => Some((
                    f,
                    name.as_str(),
                    normalize_path(&format!("{}/{p}", dir_of(&f.path))),
                )),
                _ => None,
            })
        })
}

fn rust_child(module: &str, name: &str) -> String {
    if module.is_empty() {
        name.to_string()
    } else {
        format!("{module}::{name}")
    }
}

/// A Rust file of a crate's examples, tests, benches or binaries: crate roots
/// beside the library, whose module paths may repeat the library's.
fn is_rust_side_root(path: &str) -> bool {
    path.split('/')
        .any(|seg| matches!(seg, "examples" | "tests" | "benches"))
        || path.starts_with("src/bin/")
        || path.contains("/src/bin/")
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

impl<'a> Index<'a> {
    /// `families`: the families whose definitions are looked up (lookups never
    /// cross families, so the others' symbols need no table). Hops through
    /// re-exports stay in their family too.
    fn new(files: &'a [RFile], layout: &'a Layout, families: &[Family]) -> Index<'a> {
        let mut ix = Index {
            files,
            by_path: FxMap::default(),
            by_module: FxMap::default(),
            by_qn: FxMap::default(),
            go_dirs: FxMap::default(),
            rust_crates: Vec::new(),
            rust_path_mods: HashMap::new(),
            layout,
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
            if fam == Family::Rust && !ix.rust_crates.contains(&f.package.as_str()) {
                ix.rust_crates.push(f.package.as_str());
            }
        }
        ix.by_qn.reserve(
            files
                .iter()
                .filter(|f| families.contains(&family(f.language)))
                .map(|f| f.symbols.len())
                .sum(),
        );
        for f in files {
            let fam = family(f.language);
            if !families.contains(&fam) {
                continue;
            }
            let pkg = if fam == Family::Rust {
                f.package.as_str()
            } else {
                ""
            };
            for s in &f.symbols {
                ix.by_qn
                    .entry((fam, pkg, s.qualified_name.as_str()))
                    .or_default()
                    .push((s.id.as_str(), s.kind == "impl", f.path.as_str()));
            }
        }
        // Same-named definitions (`#[cfg]` variants, a type and its impls): the
        // choice must not depend on load order, or an incremental run and a fresh
        // index would pick different targets. Definitions before impls, then by
        // path and id.
        for v in ix.by_qn.values_mut() {
            v.sort_by(|a, b| (a.1, a.2, a.0).cmp(&(b.1, b.2, b.0)));
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
            if let Some(&target) = ix.by_path.get(joined.as_str()) {
                ix.rust_path_mods
                    .insert((f.package.clone(), rust_child(&f.module, name)), target);
            }
        }
        ix
    }

    /// A Rust module's file, also when it was declared with `#[path]`.
    fn rust_module(&self, krate: &str, module: &str) -> Option<usize> {
        self.module_file(Family::Rust, krate, module).or_else(|| {
            dep(&["r", krate, module]);
            self.rust_path_mods
                .get(&(krate.to_string(), module.to_string()))
                .copied()
        })
    }

    fn path(&self, path: &str) -> Option<usize> {
        dep(&["p", path]);
        self.by_path.get(path).copied()
    }

    fn go_dir(&self, dir: &str) -> Option<&Vec<usize>> {
        dep(&["g", dir]);
        self.go_dirs.get(dir)
    }

    fn has_crate(&self, name: &str) -> bool {
        dep(&["c", name]);
        self.rust_crates.contains(&name)
    }

    /// File `fi`'s imports, read to follow re-exports through it.
    fn imports_of(&self, fi: usize) -> &'a [RawImport] {
        let f = &self.files[fi];
        dep(&["i", &f.path]);
        &f.imports
    }

    fn symbol(&self, fam: Family, pkg: &str, qn: &str) -> Option<&'a str> {
        dep(&["q", fam_str(fam), pkg, qn]);
        self.by_qn
            .get(&(fam, pkg, qn))
            .and_then(|v| v.first())
            .map(|(id, _, _)| *id)
    }

    /// Like `symbol`, preferring a definition in `path` (for modules that several
    /// files share, like `x.ts` beside `x.js`).
    fn symbol_in(&self, fam: Family, pkg: &str, qn: &str, path: &str) -> Option<&'a str> {
        dep(&["q", fam_str(fam), pkg, qn]);
        let v = self.by_qn.get(&(fam, pkg, qn))?;
        v.iter()
            .find(|(_, _, p)| *p == path)
            .or_else(|| v.first())
            .map(|(id, _, _)| *id)
    }

    fn module_file(&self, fam: Family, pkg: &str, module: &str) -> Option<usize> {
        dep(&["m", fam_str(fam), pkg, module]);
        self.by_module
            .get(&(fam, pkg, module))
            .and_then(|v| v.first())
            .copied()
    }
}

/// Resolves every import of every file. Edges are sorted and unique.
pub fn resolve_all(files: &[RFile], layout: &Layout) -> Vec<Edge> {
    let mut edges: Vec<Edge> = resolve_files(files, layout, None)
        .into_iter()
        .flatten()
        .flat_map(|r| r.edges)
        .collect();
    edges.sort();
    edges
}

/// One file's resolution: its edges (sorted, unique) and the keys of every lookup
/// made for it (sorted, unique).
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    pub edges: Vec<Edge>,
    pub deps: Vec<u64>,
}

/// Resolves the imports of every file, or of the files `only` marks, per file (in
/// `files` order; `None` for a file left out). Lookups see the whole ref.
pub fn resolve_files(
    files: &[RFile],
    layout: &Layout,
    only: Option<&[bool]>,
) -> Vec<Option<Resolved>> {
    let mut families: Vec<Family> = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let fam = family(f.language);
        // Go imports name packages, never definitions.
        if fam != Family::Go && only.is_none_or(|o| o[i]) && !families.contains(&fam) {
            families.push(fam);
        }
    }
    let ix = Index::new(files, layout, &families);
    files
        .par_iter()
        .enumerate()
        .map(|(fi, f)| {
            if only.is_some_and(|o| !o[fi]) {
                return None;
            }
            DEPS.with(|d| d.borrow_mut().clear());
            let mut edges: Vec<Edge> = f
                .imports
                .iter()
                .flat_map(|imp| {
                    let targets = resolve_one(&ix, fi, imp, 0);
                    targets.into_iter().map(move |target| Edge {
                        from: f.id.clone(),
                        target,
                        to_name: imp.to_name.clone(),
                        line: i64::from(imp.line),
                        alias: imp.alias.clone(),
                    })
                })
                .collect();
            edges.sort();
            edges.dedup();
            let mut deps = DEPS.with(|d| std::mem::take(&mut *d.borrow_mut()));
            deps.sort_unstable();
            deps.dedup();
            Some(Resolved { edges, deps })
        })
        .collect()
}

fn resolve_one(ix: &Index<'_>, fi: usize, imp: &RawImport, hops: usize) -> Vec<Target> {
    let found = match &imp.spec {
        ImportSpec::RustUse(segs) => rust_use(ix, fi, segs, hops),
        ImportSpec::RustMod { name, path } => rust_mod(ix, fi, name, path.as_deref()),
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

fn rust_use(ix: &Index<'_>, fi: usize, segs: &[String], hops: usize) -> Vec<Target> {
    let f = &ix.files[fi];
    let Some((krate, abs)) = rust_absolute(ix, f, segs) else {
        return Vec::new();
    };
    rust_lookup(ix, &krate, &abs, hops)
}

/// (crate, absolute segments within it) of a use path seen from file `f`.
fn rust_absolute(ix: &Index<'_>, f: &RFile, segs: &[String]) -> Option<(String, Vec<String>)> {
    let cur: Vec<String> = if f.module.is_empty() {
        Vec::new()
    } else {
        f.module.split("::").map(str::to_string).collect()
    };
    let first = segs.first()?.as_str();
    let mut krate = f.package.clone();
    let mut base: Vec<String>;
    let mut rest = &segs[1..];
    match first {
        "crate" => base = Vec::new(),
        "self" => base = cur.clone(),
        "super" => {
            base = cur.clone();
            base.pop();
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        "$crate" => base = Vec::new(),
        name => {
            // 2018 paths: a child module or item of the current module first,
            // then a crate of the workspace, else an outside crate.
            let mut local = cur.clone();
            local.push(name.to_string());
            let local_qn = local.join("::");
            let is_local = ix
                .module_file(Family::Rust, &f.package, &local_qn)
                .is_some()
                || ix.symbol(Family::Rust, &f.package, &local_qn).is_some();
            if is_local {
                base = cur.clone();
                rest = segs;
            } else if ix.has_crate(&name.replace('-', "_")) {
                krate = name.replace('-', "_");
                base = Vec::new();
            } else {
                return None;
            }
        }
    }
    base.extend(rest.iter().cloned());
    Some((krate, base))
}

fn rust_lookup(ix: &Index<'_>, krate: &str, abs: &[String], hops: usize) -> Vec<Target> {
    if abs.last().is_some_and(|s| s == "*") {
        let module = abs[..abs.len() - 1].join("::");
        if let Some(f) = ix.rust_module(krate, &module) {
            return vec![Target::File(ix.files[f].id.clone())];
        }
        // `use Ordering::*`: the variants of an enum, whose node stands for them.
        return ix
            .symbol(Family::Rust, krate, &module)
            .map(|id| vec![Target::Symbol(id.to_string())])
            .unwrap_or_default();
    }
    let full = abs.join("::");
    if full.is_empty() {
        return ix
            .module_file(Family::Rust, krate, "")
            .map(|f| vec![Target::File(ix.files[f].id.clone())])
            .unwrap_or_default();
    }
    // A module's file wins over its `mod name;` declaration symbol.
    if let Some(f) = ix.rust_module(krate, &full) {
        return vec![Target::File(ix.files[f].id.clone())];
    }
    if let Some(id) = ix.symbol(Family::Rust, krate, &full) {
        return vec![Target::Symbol(id.to_string())];
    }
    if hops >= MAX_HOPS {
        return Vec::new();
    }
    let (item, parent) = abs.split_last().expect("non-empty");
    let parent = parent.join("::");
    let Some(pf) = ix.rust_module(krate, &parent) else {
        return Vec::new();
    };
    // A `#[path]` module's items are named after the file's own module path.
    if ix.files[pf].module != parent {
        let real = if ix.files[pf].module.is_empty() {
            item.clone()
        } else {
            format!("{}::{item}", ix.files[pf].module)
        };
        if let Some(id) = ix.symbol(Family::Rust, krate, &real) {
            return vec![Target::Symbol(id.to_string())];
        }
    }
    // Re-exports: `pub use` in the parent module's file, named or glob.
    for imp in ix.imports_of(pf).iter().filter(|i| i.reexport) {
        let ImportSpec::RustUse(segs) = &imp.spec else {
            continue;
        };
        let last = segs.last().map(String::as_str).unwrap_or("");
        let binds = if imp.alias.is_empty() {
            last
        } else {
            imp.alias.as_str()
        };
        if binds == item {
            let t = rust_use(ix, pf, segs, hops + 1);
            if !t.is_empty() {
                return t;
            }
        } else if last == "*" {
            let mut target = segs[..segs.len() - 1].to_vec();
            target.push(item.clone());
            let t = rust_use(ix, pf, &target, hops + 1);
            if !t.is_empty() {
                return t;
            }
        }
    }
    Vec::new()
}

fn rust_mod(ix: &Index<'_>, fi: usize, name: &str, path: Option<&str>) -> Vec<Target> {
    let f = &ix.files[fi];
    if let Some(p) = path {
        let joined = normalize_path(&format!("{}/{p}", dir_of(&f.path)));
        return ix
            .path(&joined)
            .map(|i| vec![Target::File(ix.files[i].id.clone())])
            .unwrap_or_default();
    }
    let module = if f.module.is_empty() {
        name.to_string()
    } else {
        format!("{}::{name}", f.module)
    };
    ix.rust_module(&f.package, &module)
        .map(|i| vec![Target::File(ix.files[i].id.clone())])
        .unwrap_or_default()
}

// ------------------------------------------------------------------ Python

/// The absolute module of a relative one (`..pkg.mod` from `a.b.c` → `a.pkg.mod`).
fn python_absolute(f: &RFile, module: &str) -> Option<String> {
    let dots = module.chars().take_while(|c| *c == '.').count();
    let rest = &module[dots..];
    let mut base: Vec<&str> = if f.package.is_empty() {
        Vec::new()
    } else {
        f.package.split('.').collect()
    };
    for _ in 1..dots {
        base.pop()?;
    }
    if !rest.is_empty() {
        base.extend(rest.split('.'));
    }
    Some(base.join("."))
}

fn python(ix: &Index<'_>, fi: usize, module: &str, name: Option<&str>, hops: usize) -> Vec<Target> {
    let f = &ix.files[fi];
    let abs = if module.starts_with('.') {
        match python_absolute(f, module) {
            Some(a) => a,
            None => return Vec::new(),
        }
    } else {
        module.to_string()
    };
    let file_target = |m: &str| {
        ix.module_file(Family::Python, "", m)
            .map(|i| vec![Target::File(ix.files[i].id.clone())])
    };
    match name {
        None | Some("*") => file_target(&abs).unwrap_or_default(),
        Some(n) => python_name(ix, &abs, n, hops),
    }
}

/// `from abs import n`: a symbol of the module, a submodule, or a name the module
/// itself imported (re-export through `__init__.py` or any module).
fn python_name(ix: &Index<'_>, abs: &str, n: &str, hops: usize) -> Vec<Target> {
    let qn = if abs.is_empty() {
        n.to_string()
    } else {
        format!("{abs}.{n}")
    };
    if let Some(id) = ix.symbol(Family::Python, "", &qn) {
        return vec![Target::Symbol(id.to_string())];
    }
    if let Some(i) = ix.module_file(Family::Python, "", &qn) {
        return vec![Target::File(ix.files[i].id.clone())];
    }
    if hops >= MAX_HOPS {
        return Vec::new();
    }
    let Some(mf) = ix.module_file(Family::Python, "", abs) else {
        return Vec::new();
    };
    for imp in ix.imports_of(mf) {
        let ImportSpec::Python { module, name } = &imp.spec else {
            continue;
        };
        let binds = if !imp.alias.is_empty() {
            imp.alias.as_str()
        } else {
            match name {
                Some(x) => x.as_str(),
                None => module.split('.').next().unwrap_or(""),
            }
        };
        if binds == n && name.as_deref() != Some("*") {
            let t = python(ix, mf, module, name.as_deref(), hops + 1);
            if !t.is_empty() {
                return t;
            }
        } else if name.as_deref() == Some("*") {
            let target = if module.starts_with('.') {
                python_absolute(&ix.files[mf], module)
            } else {
                Some(module.clone())
            };
            if let Some(t) = target.map(|m| python_name(ix, &m, n, hops + 1))
                && !t.is_empty()
            {
                return t;
            }
        }
    }
    Vec::new()
}

// ------------------------------------------------------------------ TypeScript

const TS_EXTS: &[&str] = &[
    ".ts", ".tsx", ".d.ts", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs",
];

fn ts_file(ix: &Index<'_>, base: &str) -> Option<usize> {
    let base = normalize_path(base);
    let mut candidates = vec![base.clone()];
    // ESM TypeScript writes `./x.js` for `./x.ts`.
    for js in [".js", ".jsx", ".mjs", ".cjs"] {
        if let Some(stem) = base.strip_suffix(js) {
            candidates.extend(TS_EXTS.iter().map(|e| format!("{stem}{e}")));
        }
    }
    candidates.extend(TS_EXTS.iter().map(|e| format!("{base}{e}")));
    candidates.extend(TS_EXTS.iter().map(|e| format!("{base}/index{e}")));
    candidates
        .iter()
        .find_map(|c| ix.path(c))
        .filter(|&i| family(ix.files[i].language) == Family::Ts)
}

fn ts_module(ix: &Index<'_>, fi: usize, specifier: &str) -> Option<usize> {
    let f = &ix.files[fi];
    if specifier.starts_with("./")
        || specifier.starts_with("../")
        || specifier == "."
        || specifier == ".."
    {
        return ts_file(ix, &format!("{}/{specifier}", dir_of(&f.path)));
    }
    for candidate in ix.layout.ts_alias_candidates(&f.path, specifier) {
        if let Some(i) = ts_file(ix, &candidate) {
            return Some(i);
        }
    }
    None
}

fn ts(ix: &Index<'_>, fi: usize, specifier: &str, name: Option<&str>, hops: usize) -> Vec<Target> {
    let Some(mf) = ts_module(ix, fi, specifier) else {
        return Vec::new();
    };
    match name {
        None | Some("*") | Some("default") => vec![Target::File(ix.files[mf].id.clone())],
        Some(n) => ts_name(ix, mf, n, hops),
    }
}

fn ts_name(ix: &Index<'_>, mf: usize, n: &str, hops: usize) -> Vec<Target> {
    let m = &ix.files[mf];
    let qn = format!("{}:{n}", m.module);
    if let Some(id) = ix.symbol_in(Family::Ts, "", &qn, &m.path) {
        return vec![Target::Symbol(id.to_string())];
    }
    if hops < MAX_HOPS {
        for imp in ix.imports_of(mf).iter().filter(|i| i.reexport) {
            let ImportSpec::Ts { specifier, name } = &imp.spec else {
                continue;
            };
            let exported = if imp.alias.is_empty() {
                name.as_deref().unwrap_or("")
            } else {
                imp.alias.as_str()
            };
            let t = if exported == n && name.as_deref() != Some("*") {
                ts(ix, mf, specifier, name.as_deref(), hops + 1)
            } else if exported == n {
                // `export * as n from …`: the module itself.
                ts(ix, mf, specifier, None, hops + 1)
            } else if name.as_deref() == Some("*") && imp.alias.is_empty() {
                match ts_module(ix, mf, specifier) {
                    Some(next) => ts_name(ix, next, n, hops + 1),
                    None => Vec::new(),
                }
            } else {
                Vec::new()
            };
            if !t.is_empty() {
                return t;
            }
        }
    }
    if hops == 0 {
        // The module is in the repo but the name is not a declaration cruxe
        // indexes (e.g. `export default`, `export { a as b }`): the module.
        return vec![Target::File(m.id.clone())];
    }
    Vec::new()
}

// ------------------------------------------------------------------ Go

fn go(ix: &Index<'_>, fi: usize, path: &str) -> Vec<Target> {
    let f = &ix.files[fi];
    let to_files = |files: &Vec<usize>| -> Vec<Target> {
        files
            .iter()
            .map(|&i| Target::File(ix.files[i].id.clone()))
            .collect()
    };
    // vendor/ directories, nearest first, as the go tool looks them up.
    let mut d = dir_of(&f.path);
    loop {
        let cand = if d.is_empty() {
            format!("vendor/{path}")
        } else {
            format!("{d}/vendor/{path}")
        };
        if let Some(files) = ix.go_dir(&cand) {
            return to_files(files);
        }
        if d.is_empty() {
            break;
        }
        d = dir_of(d);
    }
    let Some((mod_dir, module)) = ix.layout.go_module_for_import(&f.path, path) else {
        return Vec::new();
    };
    let rel = if module == "std" {
        path
    } else {
        path[module.len()..].trim_start_matches('/')
    };
    let dir = match (mod_dir.is_empty(), rel.is_empty()) {
        (true, _) => rel.to_string(),
        (false, true) => mod_dir.to_string(),
        (false, false) => format!("{mod_dir}/{rel}"),
    };
    ix.go_dir(&dir).map(to_files).unwrap_or_default()
}

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
            imports: vec![],
            symbols: vec![],
        };
        assert_eq!(python_absolute(&f, ".").as_deref(), Some("a.b"));
        assert_eq!(
            python_absolute(&f, "..pkg.mod").as_deref(),
            Some("a.pkg.mod")
        );
        assert_eq!(python_absolute(&f, "....x"), None);
    }
}
