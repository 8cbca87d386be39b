//! Go imports: a package of the module (by `go.mod`) is the directory's
//! non-test files, and an import is one edge to the package (`Target::Package`),
//! whatever the number of its files.

use super::{Index, Target, dir_of};

pub(super) fn go(ix: &Index<'_>, fi: usize, path: &str) -> Vec<Target> {
    let f = &ix.files[fi];
    let package = |dir: &str| -> Option<Vec<Target>> {
        ix.go_dir(dir)
            .map(|_| vec![Target::Package(dir.to_string())])
    };
    // vendor/ directories, nearest first, as the go tool looks them up.
    let mut d = dir_of(&f.path);
    loop {
        let cand = if d.is_empty() {
            format!("vendor/{path}")
        } else {
            format!("{d}/vendor/{path}")
        };
        if let Some(found) = package(&cand) {
            return found;
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
    package(&dir).unwrap_or_default()
}
