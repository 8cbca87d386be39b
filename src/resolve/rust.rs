//! Rust paths: `use` trees through `crate`/`self`/`super`, workspace crates and
//! uniform paths, `pub use` re-exports and globs (each followed once per
//! file: a memo), `mod` declarations and `#[path]` files, `extern crate`.

use super::{Family, FxMap, Index, MAX_HOPS, Target, dir_of, is_rust_side_root, rust_child};
use crate::model::ImportSpec;
use crate::source::layout::normalize_path;

/// What a Rust path names.
#[derive(Clone)]
pub(super) enum Found<'a> {
    File(usize),
    /// A definition, with the crate and qualified name it was found under (a path
    /// may go on into it: an enum's variants, a type's associated items).
    Symbol {
        id: &'a str,
        krate: String,
        qn: String,
    },
    /// Outside the indexed code, as an absolute path (`std::time::Duration`).
    Outside(String),
}

/// The paths already looked up within one top-level lookup, (crate, path) →
/// what was found (`None` also while the lookup is under way): re-export cycles
/// and globs that reach the same module again and again are followed once.
pub(super) type Memo<'a> = FxMap<(String, String), Option<Found<'a>>>;

/// The answers of top-level lookups, (crate, path, hops) → what was found and
/// the lookup keys it used, shared by every file of a run. Each top-level lookup
/// starts from an empty `Memo`, so its answer is the same whichever file asks
/// and whichever files the run resolves (an incremental run equals a full one);
/// an answer that depended on the asking file (`Index::pick_variant`) is not
/// kept. libc's 300 files ask the same few hundred names through its
/// platform globs: a rename in libc re-resolved them at ~1.7 ms a file.
#[derive(Default)]
pub(super) struct Cache<'a> {
    answers: std::sync::Mutex<FxMap<(String, String, usize), Answer<'a>>>,
}

type Answer<'a> = (Option<Found<'a>>, std::sync::Arc<Vec<u64>>);

impl Cache<'_> {
    /// Forgets every answer (between chunks of files: kept for a whole run,
    /// the answers grew with the ref).
    pub(super) fn clear(&self) {
        if let Ok(mut answers) = self.answers.lock() {
            *answers = FxMap::default();
        }
    }
}

/// A glob import made absolute once a run, with the lookup keys that took
/// (`glob_absolute`); `None` when that depended on the file being resolved.
pub(super) type GlobAbs = Option<(Option<Abs>, Vec<u64>)>;

pub(super) fn rust_use<'a>(ix: &Index<'a>, fi: usize, segs: &[String], hops: usize) -> Vec<Target> {
    match rust_use_found(ix, fi, segs, |krate, abs| cached_find(ix, krate, abs, hops)) {
        Some(Found::File(f)) => vec![Target::File(ix.files[f].id.clone())],
        Some(Found::Symbol { id, krate, qn }) => {
            ix.note_found(id, super::Family::Rust, &krate, &qn);
            vec![Target::Symbol(id.to_string())]
        }
        // What a `pub use` of another crate brings in is named by that crate's
        // path, not by the path that reached it.
        Some(Found::Outside(name)) if hops == 0 && name != segs.join("::") => {
            vec![Target::External(name)]
        }
        _ => Vec::new(),
    }
}

/// A top-level lookup, from the run's cache when another file asked it; its
/// keys are the file's too.
fn cached_find<'a>(ix: &Index<'a>, krate: &str, abs: &[String], hops: usize) -> Option<Found<'a>> {
    let key = (krate.to_string(), abs.join("::"), hops);
    let hit = ix
        .rust_cache
        .answers
        .lock()
        .expect("cache")
        .get(&key)
        .cloned();
    if let Some((found, deps)) = hit {
        ix.deps.borrow_mut().extend(deps.iter());
        return found;
    }
    let mark = ix.deps.borrow().len();
    let asked_before = ix.origin_used.replace(false);
    let found = rust_find(ix, krate, abs, hops, &mut Memo::default());
    let asked = ix.origin_used.replace(asked_before);
    if !asked {
        let deps = super::sorted_unique(ix.deps.borrow()[mark..].to_vec());
        ix.rust_cache
            .answers
            .lock()
            .expect("cache")
            .insert(key, (found.clone(), std::sync::Arc::new(deps)));
    }
    found
}

/// What a use path of file `fi` names, `find` looking it up once made absolute.
fn rust_use_found<'a>(
    ix: &Index<'a>,
    fi: usize,
    segs: &[String],
    find: impl FnMut(&str, &[String]) -> Option<Found<'a>>,
) -> Option<Found<'a>> {
    let side = is_rust_side_root(&ix.files[fi].path);
    let from_crate = segs.first().is_some_and(|s| s == "crate");
    let absolute = |side_root: bool| rust_absolute(ix, fi, segs, 0, side_root);
    use_found_by(side, from_crate, absolute, find)
}

/// `rust_use_found` for a path that `absolute` makes absolute (as
/// `rust_absolute` with the side-root flag given), in a file that is a side
/// root or not (`side`), starting with `crate` or not.
fn use_found_by<'a>(
    side: bool,
    from_crate: bool,
    mut absolute: impl FnMut(bool) -> Option<Abs>,
    mut find: impl FnMut(&str, &[String]) -> Option<Found<'a>>,
) -> Option<Found<'a>> {
    match absolute(side)? {
        Abs::Inside(krate, abs) => find(&krate, &abs).or_else(|| {
            // A single-file test or example's `crate::common::…` (its sibling
            // `tests/common/mod.rs`, whose module path is `common`).
            let Some(Abs::Inside(krate, abs)) =
                (side && from_crate).then(|| absolute(false)).flatten()
            else {
                return None;
            };
            find(&krate, &abs)
        }),
        Abs::Outside(path) => Some(Found::Outside(path.join("::"))),
    }
}

/// Glob import `gi` of module file `pf` (`RustBound::globs`), made absolute
/// once a run (its trailing `*` kept) and the keys that took replayed for
/// every lookup through it; then `*` is the name looked up. Making a glob's
/// path absolute is the same for every name (only its first segments
/// decide), and libc's lookups go through each of its platform globs for
/// every name. One that depended on the file being resolved
/// (`Index::pick_variant`) is made absolute each time, as any path.
fn glob_absolute(ix: &Index<'_>, pf: usize, gi: usize, item: &str, side_root: bool) -> Option<Abs> {
    let bound = ix.rust_bound(pf);
    let segs = bound.globs[gi];
    let kept = bound.glob_abs[gi][usize::from(side_root)].get_or_init(|| {
        let probe = Index {
            tables: ix.tables,
            deps: std::cell::RefCell::new(Vec::new()),
            origin: ix.origin,
            origin_used: std::cell::Cell::new(false),
            rust_cache: ix.rust_cache,
            found: Default::default(),
        };
        let abs = rust_absolute(&probe, pf, segs, 0, side_root);
        (!probe.origin_used.get()).then(|| (abs, probe.deps.into_inner()))
    });
    let abs = match kept {
        Some((abs, deps)) => {
            ix.deps.borrow_mut().extend(deps.iter());
            abs.clone()
        }
        None => rust_absolute(ix, pf, segs, 0, side_root),
    };
    let named = |mut path: Vec<String>| {
        if let Some(last) = path.last_mut() {
            *last = item.to_string();
        }
        path
    };
    abs.map(|abs| match abs {
        Abs::Inside(krate, path) => Abs::Inside(krate, named(path)),
        Abs::Outside(path) => Abs::Outside(named(path)),
    })
}

/// A use path made absolute.
#[derive(Clone)]
pub(super) enum Abs {
    /// (crate, segments within it).
    Inside(String, Vec<String>),
    /// A path into a crate that is not indexed (`std::fmt`).
    Outside(Vec<String>),
}

/// A use path seen from file `fi`, made absolute (`None`: it cannot be, like
/// `super` above the crate root).
fn rust_absolute(
    ix: &Index<'_>,
    fi: usize,
    segs: &[String],
    depth: usize,
    side_root: bool,
) -> Option<Abs> {
    let f = &ix.files[fi];
    let module = ix.rust_self(fi);
    let cur: Vec<String> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").map(str::to_string).collect()
    };
    let first = segs.first()?.as_str();
    let mut krate = f.package.clone();
    let mut base: Vec<String>;
    let mut rest = &segs[1..];
    match first {
        // A test, bench, example or binary is a crate of its own, whose root
        // module is the first of its module path (`tests/integration/main.rs`
        // and `tests/integration/builder/mod.rs` are `integration…`).
        "crate" if side_root && !cur.is_empty() => base = vec![cur[0].clone()],
        "crate" | "$crate" => base = Vec::new(),
        "self" => base = cur.clone(),
        "super" => {
            base = cur.clone();
            base.pop()?;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        name => {
            // 2018 paths: a child module or item of the current module first,
            // then a name the module imports (`use crate::backend;` then
            // `use backend::fs;`), then a crate of the workspace (by its name or
            // the name Cargo.toml renames it to), else an outside crate.
            let local_qn = rust_child(module, name);
            let is_local = ix.rust_module(&f.package, &local_qn).is_some()
                || ix.symbol(Family::Rust, &f.package, &local_qn).is_some();
            let krate_name = name.replace('-', "_");
            if is_local {
                base = cur.clone();
                rest = segs;
            } else if let Some(bound) = (depth < 4).then(|| bound_by_use(ix, fi, name)).flatten() {
                let mut joined = bound.to_vec();
                joined.extend(rest.iter().cloned());
                return rust_absolute(ix, fi, &joined, depth + 1, side_root);
            } else if ix.has_crate(&krate_name) {
                krate = krate_name;
                base = Vec::new();
            } else if let Some(real) = ix
                .layout
                .rust_renamed_crate(&f.path, &krate_name)
                .filter(|real| ix.has_crate(real))
            {
                krate = real.to_string();
                base = Vec::new();
            } else {
                return Some(Abs::Outside(segs.to_vec()));
            }
        }
    }
    base.extend(rest.iter().cloned());
    Some(Abs::Inside(krate, base))
}

/// The path a top-level `use` of file `fi` binds `name` to (`use a::b as name;`,
/// `use a::name;`), when that is not `name` itself.
fn bound_by_use<'a>(ix: &Index<'a>, fi: usize, name: &str) -> Option<&'a [String]> {
    ix.imports_of(fi).iter().find_map(|imp| {
        let ImportSpec::RustUse(segs) = &imp.spec else {
            return None;
        };
        let last = segs.last()?;
        let binds = if imp.alias.is_empty() {
            last.as_str()
        } else {
            imp.alias.as_str()
        };
        (imp.scope.is_empty() && binds == name && last != "*" && segs.len() > 1)
            .then_some(segs.as_slice())
    })
}

fn found_symbol<'a>(ix: &Index<'a>, krate: &str, qn: &str) -> Option<Found<'a>> {
    ix.symbol(Family::Rust, krate, qn).map(|id| Found::Symbol {
        id,
        krate: krate.to_string(),
        qn: qn.to_string(),
    })
}

/// The node a path names within crate `krate` (`abs` without `crate::`).
fn rust_find<'a>(
    ix: &Index<'a>,
    krate: &str,
    abs: &[String],
    hops: usize,
    memo: &mut Memo<'a>,
) -> Option<Found<'a>> {
    let k = (krate.to_string(), abs.join("::"));
    if let Some(known) = memo.get(&k) {
        return known.clone();
    }
    memo.insert(k.clone(), None);
    let found = rust_find_uncached(ix, krate, abs, hops, memo);
    memo.insert(k, found.clone());
    found
}

fn rust_find_uncached<'a>(
    ix: &Index<'a>,
    krate: &str,
    abs: &[String],
    hops: usize,
    memo: &mut Memo<'a>,
) -> Option<Found<'a>> {
    if abs.last().is_some_and(|s| s == "*") {
        let prefix = &abs[..abs.len() - 1];
        let module = prefix.join("::");
        if let Some(f) = ix.rust_module(krate, &module) {
            return Some(Found::File(f));
        }
        // `use Ordering::*`: the variants of an enum, whose node stands for them.
        if let Some(s) = found_symbol(ix, krate, &module) {
            return Some(s);
        }
        if prefix.is_empty() || hops >= MAX_HOPS {
            return None;
        }
        // A glob over something re-exported under this path.
        return match rust_find(ix, krate, prefix, hops + 1, memo)? {
            Found::Outside(p) => Some(Found::Outside(format!("{p}::*"))),
            found => Some(found),
        };
    }
    let full = abs.join("::");
    if full.is_empty() {
        return ix.rust_module(krate, "").map(Found::File);
    }
    let (item, parent) = abs.split_last().expect("non-empty");
    let parent_qn = parent.join("::");
    let unbound = unbound_here(ix, krate, &parent_qn, item, &full);
    if unbound.is_none() {
        // A module's file wins over its `mod name;` declaration symbol.
        if let Some(f) = ix.rust_module(krate, &full) {
            return Some(Found::File(f));
        }
        if let Some(s) = found_symbol(ix, krate, &full) {
            return Some(s);
        }
    }
    if hops >= MAX_HOPS {
        return None;
    }
    // Where `item` is bound: a module file, or an inline `mod x { … }` in one
    // (`scope` within it); else the parent is itself a re-exported name.
    let (pf, scope, pkrate) =
        if let Some(pf) = unbound.or_else(|| ix.rust_module(krate, &parent_qn)) {
            (pf, String::new(), krate.to_string())
        } else if let Some((pf, scope)) = inline_module(ix, krate, &parent_qn) {
            (pf, scope, krate.to_string())
        } else {
            match rust_find(ix, krate, parent, hops + 1, memo)? {
                Found::File(pf) => (pf, String::new(), ix.files[pf].package.clone()),
                // An enum's variant, a type's associated item, or what an inline
                // module (reached through a re-export) holds.
                Found::Symbol { krate: k, qn, .. } => {
                    let inner = format!("{qn}::{item}");
                    if let Some(s) = found_symbol(ix, &k, &inner) {
                        return Some(s);
                    }
                    let (pf, scope) = inline_module(ix, &k, &qn)?;
                    (pf, scope, k)
                }
                Found::Outside(p) => return Some(Found::Outside(format!("{p}::{item}"))),
            }
        };
    // Items are named after the file's own module path, which differs from the
    // path that reached it for `#[path]` modules and re-exported modules.
    if scope.is_empty() {
        let real = rust_child(&ix.files[pf].module, item);
        if real != full || pkrate != krate {
            if let Some(f) = ix.rust_module(&pkrate, &real) {
                return Some(Found::File(f));
            }
            if let Some(s) = found_symbol(ix, &pkrate, &real) {
                return Some(s);
            }
        }
    }
    // What the module imports: `pub use` first (named, then globs), then a plain
    // `use`, which the module's descendants see too (`super::Future`).
    let imports = ix.imports_of(pf);
    let mut outside_glob = None;
    if unbound.is_some() {
        // Nothing here binds `item` by name: only the globs, in the order
        // below (see `RustBound::globs`).
        let bound = ix.rust_bound(pf);
        for (gi, segs) in bound.globs.iter().enumerate() {
            let from_crate = segs.first().is_some_and(|s| s == "crate");
            let absolute = |side_root: bool| glob_absolute(ix, pf, gi, item, side_root);
            let find = |k: &str, a: &[String]| rust_find(ix, k, a, hops + 1, memo);
            match use_found_by(bound.side_root, from_crate, absolute, find) {
                Some(Found::Outside(p)) => {
                    outside_glob.get_or_insert(p);
                }
                Some(found) => return Some(found),
                None => {}
            }
        }
        return outside_glob.map(Found::Outside);
    }
    for (segs, last, binds) in uses_in_order(imports, &scope) {
        if binds == item {
            let find = |k: &str, a: &[String]| rust_find(ix, k, a, hops + 1, memo);
            if let Some(found) = rust_use_found(ix, pf, segs, find) {
                return Some(found);
            }
        } else if last == "*" {
            let mut target = segs[..segs.len() - 1].to_vec();
            target.push(item.clone());
            let find = |k: &str, a: &[String]| rust_find(ix, k, a, hops + 1, memo);
            match rust_use_found(ix, pf, &target, find) {
                Some(Found::Outside(p)) => {
                    outside_glob.get_or_insert(p);
                }
                Some(found) => return Some(found),
                None => {}
            }
        }
    }
    // Not defined nor named here: from a glob over another crate, most likely.
    outside_glob.map(Found::Outside)
}

/// A module's `use` imports within `scope` in the order a lookup tries them:
/// `pub use` first, then plain `use`, each in the file's order. Each with its
/// path, its last segment and the name it binds (its alias, else its last
/// segment; a path ending in `*` is a glob for any other name).
pub(super) fn uses_in_order<'i>(
    imports: &'i [crate::model::RawImport],
    scope: &'i str,
) -> impl Iterator<Item = (&'i [String], &'i str, &'i str)> {
    [true, false].into_iter().flat_map(move |public| {
        imports
            .iter()
            .filter(move |i| i.reexport == public && i.scope == scope)
            .filter_map(|imp| {
                let ImportSpec::RustUse(segs) = &imp.spec else {
                    return None;
                };
                let last = segs.last().map(String::as_str).unwrap_or("");
                let binds = match imp.alias.as_str() {
                    "" => last,
                    alias => alias,
                };
                Some((segs.as_slice(), last, binds))
            })
    })
}

/// The module file of `parent_qn` when nothing there is named `item` (so that
/// `full`, `parent_qn::item`, is no module and no definition, and only the
/// file's globs can bind it), else `None`: then the lookup is made in full. A
/// lookup through a glob tree (libc's platform modules) asks every module of
/// it for every name, and most have none of them: this answers those from one
/// set per module, made once a run, instead of a module lookup, its `#[path]`
/// prefixes and a definition lookup in every group above it. It records the
/// keys those lookups would have: what can make `full` a module or a
/// definition, and the parent's file.
fn unbound_here(
    ix: &Index<'_>,
    krate: &str,
    parent_qn: &str,
    item: &str,
    full: &str,
) -> Option<usize> {
    let pf = *ix
        .by_module
        .get(&(Family::Rust, krate, parent_qn))?
        .first()?;
    let bound = ix.rust_bound(pf);
    let defined_here = |at: usize| ix.definitions[at].table(ix.files).contains_key(full);
    if !bound.path_free || bound.names.contains(item) || bound.own.is_some_and(defined_here) {
        return None;
    }
    if ix
        .rust_path_mods
        .get(krate)
        .is_some_and(|declared| declared.contains_key(full))
    {
        return None;
    }
    // `rust_module(full)`: its file, then (a miss) the `#[path]` modules of
    // the crate at each prefix of `full`.
    ix.dep(&["m", "rs", krate, full]);
    ix.dep(&["rp", krate]);
    if ix.rust_path_crates.contains(krate) {
        for prefix in super::path_and_above(full) {
            ix.dep(&["r", krate, prefix]);
        }
    }
    // `found_symbol(full)`, then `rust_module(parent_qn)` (a hit).
    ix.dep(&["q", "rs", krate, full]);
    ix.dep(&["m", "rs", krate, parent_qn]);
    Some(pf)
}

/// An inline `mod name { … }` at `qn` in crate `krate`: its file and its path
/// within the file.
fn inline_module(ix: &Index<'_>, krate: &str, qn: &str) -> Option<(usize, String)> {
    let (_, path, kind) = ix.symbol_entry(Family::Rust, krate, qn)?;
    if kind != "mod" {
        return None;
    }
    let pf = ix.path(path)?;
    let module = &ix.files[pf].module;
    let scope = if module.is_empty() {
        qn
    } else {
        qn.strip_prefix(module.as_str())?.strip_prefix("::")?
    };
    Some((pf, scope.to_string()))
}

pub(super) fn rust_mod(ix: &Index<'_>, fi: usize, name: &str, paths: &[String]) -> Vec<Target> {
    let f = &ix.files[fi];
    // The nearest `path` attribute whose file exists.
    if !paths.is_empty() {
        return paths
            .iter()
            .find_map(|p| ix.path(&normalize_path(&format!("{}/{p}", dir_of(&f.path)))))
            .map(|i| vec![Target::File(ix.files[i].id.clone())])
            .unwrap_or_default();
    }
    if let Some(i) = ix.rust_module(&f.package, &rust_child(&f.module, name)) {
        return vec![Target::File(ix.files[i].id.clone())];
    }
    // A file directly in `tests/`, `benches/` or `examples/` is a crate root
    // (`tests/it.rs`, or `[[test]] path = "tests/tests.rs"` with `autotests =
    // false`): its `mod helpers;` is `tests/helpers.rs` or
    // `tests/helpers/mod.rs`, as for `src/lib.rs`, though the file's module
    // is named by its stem.
    let dir = dir_of(&f.path);
    let folder = dir.rsplit('/').next().unwrap_or(dir);
    if !is_rust_side_root(&f.path) || !matches!(folder, "tests" | "benches" | "examples") {
        return Vec::new();
    }
    [format!("{dir}/{name}.rs"), format!("{dir}/{name}/mod.rs")]
        .iter()
        .find_map(|p| ix.path(p))
        .map(|i| vec![Target::File(ix.files[i].id.clone())])
        .unwrap_or_default()
}

// ------------------------------------------------------------------ Python
