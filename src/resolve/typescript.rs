//! TypeScript/JavaScript specifiers: relative paths with extension and
//! `index` probing, `.js` → `.ts`, tsconfig `baseUrl`/`paths`, `export … from`.

use super::{Family, Index, MAX_HOPS, Target, dir_of, family};
use crate::model::ImportSpec;
use crate::source::layout::normalize_path;

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

pub(super) fn ts(
    ix: &Index<'_>,
    fi: usize,
    specifier: &str,
    name: Option<&str>,
    hops: usize,
) -> Vec<Target> {
    let Some(mf) = ts_module(ix, fi, specifier) else {
        return Vec::new();
    };
    let m = &ix.files[mf];
    match name {
        // An anonymous function exported as the default (`export default
        // function () {…}`) is a symbol `default`; any other default, the module.
        Some("default") => {
            match ix.symbol_in(Family::Ts, "", &format!("{}:default", m.module), &m.path) {
                Some(id) => vec![Target::Symbol(id.to_string())],
                None => vec![Target::File(m.id.clone())],
            }
        }
        None | Some("*") => vec![Target::File(m.id.clone())],
        Some(n) => ts_name(ix, mf, n, hops),
    }
}

/// What module file `mf` exports as `n` (its own declaration, or one it
/// re-exports), as an import `{ n } from` it would resolve; nothing when it
/// has no such name.
pub(super) fn ts_export(ix: &Index<'_>, mf: usize, n: &str) -> Vec<Target> {
    ts_name(ix, mf, n, 1)
}

/// The names module `mf` exports from elsewhere or by an `export { … }`
/// clause (`export { default as en } from "./en.js"`, those of `export *
/// from`), appended to `out`: what a computed member of its namespace may be.
/// `own`: the functions and classes defined at the top of the modules seen,
/// which it may export too (whether one is exported is not kept).
pub(super) fn ts_export_names(
    ix: &Index<'_>,
    mf: usize,
    hops: usize,
    (out, own): (&mut Vec<String>, &mut Vec<String>),
) {
    if hops >= MAX_HOPS {
        return;
    }
    let m = &ix.files[mf];
    let prefix = format!("{}:", m.module);
    own.extend(m.symbols.iter().filter_map(|s| {
        let name = s.qualified_name.strip_prefix(prefix.as_str())?;
        (matches!(s.kind, "fn" | "class") && !name.contains('.')).then(|| name.to_string())
    }));
    ix.dep_key(super::facts_key(&m.path));
    out.extend(ix.ts_exports(mf).iter().map(|e| e.name.to_string()));
    for imp in ix.imports_of(mf).iter().filter(|i| i.reexport) {
        let ImportSpec::Ts { specifier, name } = &imp.spec else {
            continue;
        };
        match (name.as_deref(), imp.alias.as_str()) {
            (Some("*"), "") => {
                if let Some(next) = ts_module(ix, mf, specifier) {
                    ts_export_names(ix, next, hops + 1, (&mut *out, &mut *own));
                }
            }
            (Some("*"), _) => {}
            (_, alias) if !alias.is_empty() => out.push(alias.to_string()),
            (Some(n), _) => out.push(n.to_string()),
            (None, _) => {}
        }
    }
}

fn ts_name(ix: &Index<'_>, mf: usize, n: &str, hops: usize) -> Vec<Target> {
    let m = &ix.files[mf];
    let qn = format!("{}:{n}", m.module);
    if let Some(id) = ix.symbol_in(Family::Ts, "", &qn, &m.path) {
        return vec![Target::Symbol(id.to_string())];
    }
    // `export { local as n }`: the module's own `local` (or what it imports).
    if hops < MAX_HOPS {
        ix.dep_key(super::facts_key(&m.path));
        let local = ix
            .ts_exports(mf)
            .iter()
            .find_map(|e| e.local.as_ref().filter(|_| e.name == n));
        if let Some(local) = local {
            let t = ts_name(ix, mf, local, hops + 1);
            if !t.is_empty() {
                return t;
            }
        }
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
    // A name the module imports and exports again (`import * as z from
    // "./external"; export { z }`, `import { a as n } from "./x"`): what the
    // import binds.
    if hops < MAX_HOPS {
        for imp in ix.imports_of(mf).iter().filter(|i| !i.reexport) {
            let ImportSpec::Ts { specifier, name } = &imp.spec else {
                continue;
            };
            let local = if imp.alias.is_empty() {
                name.as_deref().unwrap_or("")
            } else {
                imp.alias.as_str()
            };
            if local != n || local.is_empty() || local == "*" {
                continue;
            }
            let t = ts(ix, mf, specifier, name.as_deref(), hops + 1);
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
