//! Which code is a test, for `analyze_impact`'s `tests` and `cruxe impact
//! --diff` (the test files to run). By place and name only, kept simple:
//!
//! - a test file: under a `test`, `tests` or `__tests__` directory, or named
//!   `test_*.py`, `*_test.py`, `conftest.py`, `*_test.go`, `*.test.*` or
//!   `*.spec.*` (TypeScript and JavaScript);
//! - a test function: a function or method in a test file, or (Rust) one named
//!   `test_*` or inside a test module (`mod tests`, `mod test`, `mod
//!   tests_avx2`: a module so named, or the file `tests.rs` behind `mod tests;`).
//!
//! And how a runner runs one (`run_id`).

use super::super::view::View;
use crate::store::catalog::Catalog;

/// Whether `path` (repo-relative) is a test file.
pub fn is_test_file(path: &str) -> bool {
    let mut parts = path.split('/').collect::<Vec<_>>();
    let file = parts.pop().unwrap_or(path);
    if parts
        .iter()
        .any(|d| matches!(*d, "test" | "tests" | "__tests__"))
    {
        return true;
    }
    let script = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];
    let (stem, ext) = file.rsplit_once('.').map_or((file, ""), |(s, e)| (s, e));
    match ext {
        "py" => stem.starts_with("test_") || stem.ends_with("_test") || stem == "conftest",
        "go" => stem.ends_with("_test"),
        _ if script.iter().any(|x| file.ends_with(x)) => {
            stem.ends_with(".test") || stem.ends_with(".spec")
        }
        _ => false,
    }
}

/// Whether a definition is a test function.
pub fn is_test_symbol(kind: &str, name: &str, qualified_name: &str, path: &str) -> bool {
    if !matches!(kind, "fn" | "method") {
        return false;
    }
    is_test_file(path)
        || (path.ends_with(".rs") && (name.starts_with("test_") || in_test_module(qualified_name)))
}

/// Whether a definition is a Rust macro that writes tests: a
/// `macro_rules!` of a test module or file (`tests::testconfig`), whose
/// expansions are the tests (they have no symbol of their own).
pub fn is_test_maker(kind: &str, qualified_name: &str, path: &str) -> bool {
    kind == "macro"
        && path.ends_with(".rs")
        && (is_test_file(path) || in_test_module(qualified_name))
}

/// Whether a Rust qualified name has a test module among its modules
/// (`shapes::tests::area`, `tests::drain`, `vector::tests_avx2::splat`).
fn in_test_module(qualified_name: &str) -> bool {
    let mut modules: Vec<&str> = qualified_name.split("::").collect();
    modules.pop();
    modules.iter().any(|m| {
        matches!(*m, "test" | "tests") || m.starts_with("tests_") || m.starts_with("test_")
    })
}

/// How a runner runs a test (entry `test`) or a whole test file: a pytest
/// node id, a `go test` command with the package and a `-run` pattern, a
/// `cargo test` command with the package and the test's path, or, for
/// TypeScript and JavaScript (whose tests are callbacks with no name of
/// their own here), the file for vitest or jest.
pub fn run_id(c: &View, cat: &Catalog, path: &str, test: Option<usize>) -> String {
    let e = test.map(|i| cat.entry(i));
    if path.ends_with(".py") {
        let Some(e) = e else { return path.to_string() };
        // `test_x`, or `TestX::test_y` for a method of a test class.
        let mut parts = vec![e.name().to_string()];
        if let Some(p) = test.and_then(|i| cat.parent(i))
            && cat.entry(p).kind() == "class"
        {
            parts.insert(0, cat.entry(p).name().to_string());
        }
        return format!("{path}::{}", parts.join("::"));
    }
    if path.ends_with(".go") {
        let dir = path
            .rsplit_once('/')
            .map_or(".".to_string(), |(d, _)| format!("./{d}"));
        return match e {
            // A benchmark runs only when asked for by `-bench`.
            Some(e) if e.kind() == "fn" && e.name().starts_with("Benchmark") => {
                format!("go test {dir} -run '^$' -bench '^{}$'", e.name())
            }
            Some(e) if e.kind() == "fn" => format!("go test {dir} -run '^{}$'", e.name()),
            _ => format!("go test {dir}"),
        };
    }
    if path.ends_with(".rs") {
        let package = c
            .file(path)
            .ok()
            .flatten()
            .map(|f| f.package)
            .unwrap_or_default();
        let p = if package.is_empty() {
            String::new()
        } else {
            format!(" -p {package}")
        };
        let (target, own_stem) = match integration_target(cat, path) {
            Some((name, stem)) => (format!(" --test {name}"), stem),
            None => (String::new(), None),
        };
        let within = |qn: &'_ str| -> String {
            // A path within its crate: the qualified name without the
            // crate's own name, or, in a test target of its own, without
            // the file's module (`it::check` of `tests/it.rs` is `check`).
            let qn = qn
                .strip_prefix(&format!("{package}::"))
                .or_else(|| qn.strip_prefix("crate::"))
                .unwrap_or(qn);
            match &own_stem {
                Some(stem) => qn.strip_prefix(&format!("{stem}::")).unwrap_or(qn),
                None => qn,
            }
            .to_string()
        };
        return match e {
            // A test-writing macro: every test of the module it is in (a
            // filter, matched anywhere in a test's path).
            Some(e) if e.kind() == "macro" => match within(e.qualified_name()).rsplit_once("::") {
                Some((module, _)) => format!("cargo test{p}{target} -- {module}::"),
                None => format!("cargo test{p}{target}"),
            },
            Some(e) => format!(
                "cargo test{p}{target} -- {} --exact",
                within(e.qualified_name())
            ),
            None => format!("cargo test{p}{target}"),
        };
    }
    path.to_string()
}

/// The integration-test target a file directly under a `tests/` folder is
/// built in: the root that declares it as a module (`mod it;` in
/// `tests/tests.rs`, the one-binary layout: `tests`, and the file's tests keep
/// their `it::` path), else its own (`tests/it.rs` is `it`, returned as the
/// module its tests' paths start without).
fn integration_target(cat: &Catalog, path: &str) -> Option<(String, Option<String>)> {
    let (dir, file) = path.rsplit_once('/')?;
    if dir != "tests" && !dir.ends_with("/tests") {
        return None;
    }
    let stem = file.strip_suffix(".rs")?;
    let root = cat.named(stem).into_iter().find_map(|i| {
        let e = cat.entry(i);
        let (d, f) = e.path().rsplit_once('/')?;
        (e.kind() == "mod" && d == dir && e.path() != path)
            .then(|| f.strip_suffix(".rs").map(str::to_string))
            .flatten()
    });
    Some(match root {
        Some(root) => (root, None),
        None => (stem.to_string(), Some(stem.to_string())),
    })
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn test_files_and_functions_by_place_and_name() {
        for p in [
            "tests/it.rs",
            "pkg/tests/helpers.py",
            "geo/test_shapes.py",
            "geo/shapes_test.py",
            "conftest.py",
            "shapes/square_test.go",
            "src/report.test.ts",
            "src/report.spec.tsx",
            "web/__tests__/a.js",
        ] {
            assert!(is_test_file(p), "{p}");
        }
        for p in [
            "src/testing.rs",
            "src/report.ts",
            "geo/shapes.py",
            "shapes/square.go",
            "src/latest.rs",
        ] {
            assert!(!is_test_file(p), "{p}");
        }
        assert!(is_test_symbol(
            "fn",
            "test_area",
            "shapes::test_area",
            "src/shapes.rs"
        ));
        assert!(is_test_symbol(
            "fn",
            "area_is_pi",
            "shapes::tests::area_is_pi",
            "src/shapes.rs"
        ));
        for qn in ["tests::drain", "packed::vector::tests_x86_64_avx2::splat"] {
            assert!(is_test_symbol("fn", "drain", qn, "src/lib.rs"), "{qn}");
        }
        assert!(!is_test_symbol(
            "fn",
            "area",
            "shapes::area",
            "src/shapes.rs"
        ));
        assert!(!is_test_symbol(
            "fn",
            "latest",
            "testing::latest",
            "src/testing.rs"
        ));
        assert!(!is_test_symbol(
            "struct",
            "TestData",
            "t::TestData",
            "tests/t.rs"
        ));
        assert!(is_test_symbol(
            "fn",
            "TestArea",
            "x.TestArea",
            "shapes/square_test.go"
        ));
    }
}
