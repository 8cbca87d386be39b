//! Python modules: absolute and relative imports, package roots, names
//! re-exported by `__init__`, submodules.

use super::{Family, Index, MAX_HOPS, RFile, Target};
use crate::model::ImportSpec;

/// The absolute module of a relative one (`..pkg.mod` from `a.b.c` → `a.pkg.mod`).
pub(super) fn python_absolute(f: &RFile, module: &str) -> Option<String> {
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

pub(super) fn python(
    ix: &Index<'_>,
    fi: usize,
    module: &str,
    name: Option<&str>,
    hops: usize,
) -> Vec<Target> {
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
