//! Import edges (FR-200..FR-202) through the real graph: every form of every
//! language resolves to the expected node, and re-indexing after any edits gives
//! exactly the edge set of a from-scratch index.

use std::path::Path;

use cruxe::index::{Silent, index_repo};
use cruxe::store::datadir::DataDir;

use crate::common::{copy_tree, fixture, opts, rows, s, small_graph};

/// `from:line to_name -> Label(target) [alias]`, sorted. Symbols by qualified
/// name, files by path, externals by name.
fn edges(data: &DataDir) -> Vec<String> {
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    let mut out: Vec<String> = rows(
        &store,
        "MATCH (f:File)-[e:IMPORTS]->(t) \
         RETURN f.path AS from, e.line AS line, e.to_name AS to_name, label(t) AS label, \
                CASE label(t) WHEN 'Symbol' THEN t.qualified_name WHEN 'External' THEN t.name ELSE t.path END AS target, \
                e.alias AS alias, e.confidence AS confidence",
    )
    .iter()
    .map(|r| {
        assert_eq!(s(&r["confidence"]), "static");
        let alias = s(&r["alias"]);
        format!(
            "{}:{} {} -> {}({}){}",
            s(&r["from"]),
            s(&r["line"]),
            s(&r["to_name"]),
            s(&r["label"]),
            s(&r["target"]),
            if alias.is_empty() { String::new() } else { format!(" as {alias}") }
        )
    })
    .collect();
    out.sort();
    out
}

/// The rows of `query` over the data dir, each as its `cols` joined by spaces.
fn lines_of(data: &DataDir, query: &str, cols: &[&str]) -> Vec<String> {
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    rows(&store, query)
        .iter()
        .map(|r| cols.iter().map(|c| s(&r[*c])).collect::<Vec<_>>().join(" "))
        .collect()
}

/// Indexes `repo` into `data` again, and into a fresh data dir at `fresh`:
/// their edges must be the same (`step` says after what). The run's report
/// and the edges.
fn reindex_like_fresh(
    repo: &Path,
    data: &DataDir,
    fresh: &Path,
    step: &str,
) -> (cruxe::index::IndexReport, Vec<String>) {
    let report = index_into(repo, data);
    let fresh = DataDir::new(fresh.to_path_buf());
    index_into(repo, &fresh);
    let got = edges(data);
    assert_eq!(got, edges(&fresh), "edges after: {step}");
    (report, got)
}

/// Writes `files` (path in the repo, text) under `repo`, making their folders.
fn write_repo<'f>(repo: &Path, files: impl IntoIterator<Item = (&'f str, &'f str)>) {
    for (path, text) in files {
        let path = repo.join(path);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
}

/// A copy of fixture `name` at `tmp/dir`, indexed into `tmp/data`.
fn indexed_copy(tmp: &Path, name: &str, dir: &str) -> (std::path::PathBuf, DataDir) {
    let repo = tmp.join(dir);
    copy_tree(&fixture(name), &repo);
    let data = DataDir::new(tmp.join("data"));
    index_into(&repo, &data);
    (repo, data)
}

fn index_into(repo: &Path, data: &DataDir) -> cruxe::index::IndexReport {
    index_repo(repo, data, &opts("imports"), &Silent).expect("index")
}

fn fixture_edges(lang: &str) -> (Vec<String>, cruxe::index::IndexReport) {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = DataDir::new(tmp.path().join("data"));
    let report = index_into(&fixture(&format!("imports/{lang}")), &data);
    (edges(&data), report)
}

fn sorted(v: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

#[test]
fn rust_use_trees_mods_crates_and_reexports() {
    let (got, report) = fixture_edges("rust");
    assert_eq!(
        got,
        sorted(&[
            "app/src/api.rs:1 crate::net::Conn -> Symbol(net::tcp::Conn)",
            "app/src/api.rs:1 crate::net::tcp::* -> File(app/src/net/tcp.rs)",
            "app/src/api.rs:2 util::fmt::pretty -> Symbol(fmt::pretty)",
            "app/src/api.rs:3 std::collections::HashMap -> External(std::collections::HashMap)",
            "app/src/api.rs:4 crate::Server -> Symbol(api::Server) as Srv",
            "app/src/api.rs:9 crate::custom::custom -> Symbol(special::custom::custom)",
            // Inside an inline `mod tests`, `super` is the file's own module.
            "app/src/api.rs:15 super::Server -> Symbol(api::Server)",
            "app/src/api.rs:16 super::super::net::Conn -> Symbol(net::tcp::Conn)",
            "app/src/lib.rs:1 net -> File(app/src/net/mod.rs)",
            "app/src/lib.rs:2 api -> File(app/src/api.rs)",
            "app/src/lib.rs:4 custom -> File(app/src/special/custom.rs)",
            "app/src/lib.rs:5 util -> File(util/src/lib.rs)",
            "app/src/lib.rs:7 api::Server -> Symbol(api::Server)",
            "app/src/net/mod.rs:1 tcp -> File(app/src/net/tcp.rs)",
            "app/src/net/mod.rs:3 self::tcp::Conn -> Symbol(net::tcp::Conn)",
            "app/src/net/tcp.rs:1 super::super::api -> File(app/src/api.rs)",
            "app/src/net/tcp.rs:1 super::super::api::Server -> Symbol(api::Server) as S",
            "util/src/lib.rs:1 fmt -> File(util/src/fmt.rs)",
        ])
    );
    assert_eq!((report.import_edges, report.unresolved_imports), (18, 1));
}

#[test]
fn python_absolute_relative_star_nested_and_reexported_imports() {
    let (got, report) = fixture_edges("python");
    assert_eq!(
        got,
        sorted(&[
            "app.py:1 pkg.Engine -> Symbol(pkg.core.Engine)",
            "app.py:2 pkg.sub -> File(pkg/sub/__init__.py)",
            "app.py:3 pkg.sub.deep -> File(pkg/sub/deep.py)",
            "app.py:4 pkg.sub.Deep -> Symbol(pkg.sub.deep.Deep)",
            "app.py:5 mylib.api -> Symbol(mylib.api)",
            "app.py:6 missing.module.thing -> External(missing.module.thing)",
            "pkg/__init__.py:1 .core.Engine -> Symbol(pkg.core.Engine)",
            "pkg/__init__.py:2 .util -> File(pkg/util.py)",
            "pkg/core.py:1 os -> External(os)",
            "pkg/core.py:2 pkg.util -> File(pkg/util.py) as u",
            "pkg/core.py:3 pkg.util.CONST -> Symbol(pkg.util.CONST)",
            "pkg/core.py:3 pkg.util.helper -> Symbol(pkg.util.helper)",
            "pkg/core.py:4 .util.* -> File(pkg/util.py)",
            "pkg/core.py:5 typing.TYPE_CHECKING -> External(typing.TYPE_CHECKING)",
            "pkg/core.py:8 pkg.sub.deep.Deep -> Symbol(pkg.sub.deep.Deep)",
            "pkg/core.py:16 pkg.util -> File(pkg/util.py)",
            "pkg/core.py:21 json -> External(json)",
            "pkg/sub/__init__.py:1 .deep.Deep -> Symbol(pkg.sub.deep.Deep)",
            "pkg/sub/deep.py:1 ..core.run -> Symbol(pkg.core.run)",
            "pkg/sub/deep.py:2 ..core -> File(pkg/core.py)",
            "pkg/util.py:1 pkg.core.Engine -> Symbol(pkg.core.Engine)",
        ])
    );
    // Circular imports are stored in both directions.
    assert!(
        got.iter()
            .any(|e| e.starts_with("pkg/core.py:3 pkg.util.helper"))
    );
    assert!(
        got.iter()
            .any(|e| e.starts_with("pkg/util.py:1 pkg.core.Engine"))
    );
    assert_eq!((report.import_edges, report.unresolved_imports), (21, 4));
}

#[test]
fn typescript_imports_reexports_aliases_and_requires() {
    let (got, _) = fixture_edges("typescript");
    assert_eq!(
        got,
        sorted(&[
            "src/barrel.ts:1 ./things:Thing -> Symbol(src/things:Thing)",
            "src/index.ts:1 ./router:Router -> Symbol(src/router:Router)",
            "src/index.ts:2 ./router:default -> File(src/router.ts) as Default",
            "src/index.ts:3 ./lib/utils:* -> File(src/lib/utils.ts) as utils",
            "src/index.ts:4 ./polyfill -> File(src/polyfill.js)",
            "src/index.ts:5 @lib/config:Config -> Symbol(src/lib/config:Config)",
            "src/index.ts:6 ./lib/utils:helper -> Symbol(src/lib/utils:helper)",
            "src/index.ts:7 ./lib/config:* -> File(src/lib/config.ts)",
            "src/index.ts:8 fs:* -> External(fs)",
            "src/index.ts:9 ./lazy:* -> File(src/lazy.tsx)",
            "src/index.ts:10 ./barrel:Thing -> Symbol(src/things:Thing)",
            "src/index.ts:11 ./esm.js:x -> Symbol(src/esm:x)",
            "src/index.ts:12 ./lib:helper -> Symbol(src/lib/utils:helper) as h",
            "src/index.ts:13 react:Component -> External(react:Component)",
            "src/lib/index.ts:1 ./utils:* -> File(src/lib/utils.ts)",
            "src/polyfill.js:1 ./lib/utils:* -> File(src/lib/utils.ts)",
        ])
    );
}

#[test]
fn go_packages_of_the_module_resolve_to_their_files() {
    let (got, report) = fixture_edges("go");
    assert_eq!(
        got,
        sorted(&[
            "main.go:4 fmt -> External(fmt)",
            "main.go:5 strings -> External(strings) as str",
            "main.go:6 math -> External(math) as .",
            "main.go:7 embed -> External(embed) as _",
            "main.go:9 example.com/app/internal/store -> Package(internal/store)",
            "main.go:10 example.com/app/pkg/api -> Package(pkg/api)",
            "pkg/api/api.go:3 example.com/app/internal/store -> Package(internal/store)",
            "pkg/api/api.go:4 github.com/other/lib -> External(github.com/other/lib)",
        ])
    );
    // One External node per distinct target.
    assert_eq!(report.unresolved_imports, 5);
}

/// A package's importable files hang off it (not its `_test.go` files); an
/// import is one edge however many files the package has.
#[test]
fn go_packages_hold_their_files() {
    let ix = crate::common::index_path(&fixture("imports/go"), "go");
    let members: Vec<String> = ix
        .rows(
            "MATCH (f:File)-[:IN_PACKAGE]->(p:Package) RETURN p.path AS dir, f.path AS file ORDER BY dir, file",
        )
        .iter()
        .map(|r| format!("{} {}", s(&r["dir"]), s(&r["file"])))
        .collect();
    let expected: Vec<String> = ix
        .rows("MATCH (f:File) WHERE f.language = 'go' RETURN f.path AS file ORDER BY file")
        .iter()
        .map(|r| s(&r["file"]))
        .filter(|f| !f.ends_with("_test.go"))
        .map(|f| {
            let dir = f.rsplit_once('/').map_or("", |(d, _)| d).to_string();
            format!("{dir} {f}")
        })
        .collect();
    let mut expected = expected;
    expected.sort();
    assert_eq!(members, expected);
    assert!(
        members
            .iter()
            .any(|m| m == "internal/store internal/store/cache.go")
    );
}

/// Files added to and removed from a Rust crate another crate imports, down to
/// none and back: after each step the edges equal a fresh index's, and the
/// importers are not resolved again for a crate that merely grew or shrank
/// (only its appearing or disappearing changes what they find).
#[test]
fn rust_crate_changes_equal_a_fresh_index() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (repo, data) = indexed_copy(tmp.path(), "imports/rust", "rust");
    let src = repo.join("util/src");
    let (lib, fmt) = (
        std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs"),
        std::fs::read_to_string(src.join("fmt.rs")).expect("fmt.rs"),
    );
    type Step<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let steps: Vec<Step<'_>> = vec![
        (
            "add a file",
            Box::new(|| {
                std::fs::write(src.join("extra.rs"), "pub fn extra() {}\n").expect("write")
            }),
        ),
        (
            "remove a file",
            Box::new(|| std::fs::remove_file(src.join("extra.rs")).expect("rm")),
        ),
        (
            "remove the crate's files",
            Box::new(|| {
                for f in ["lib.rs", "fmt.rs"] {
                    std::fs::remove_file(src.join(f)).expect("rm");
                }
            }),
        ),
        (
            "bring the crate back",
            Box::new(|| {
                std::fs::write(src.join("lib.rs"), &lib).expect("write");
                std::fs::write(src.join("fmt.rs"), &fmt).expect("write");
            }),
        ),
    ];
    let mut seen = Vec::new();
    for (i, (step, change)) in steps.iter().enumerate() {
        change();
        let (report, got) =
            reindex_like_fresh(&repo, &data, &tmp.path().join(format!("fresh-{i}")), step);
        match *step {
            "add a file" => assert_eq!(report.imports_resolved, 1, "after: {step}"),
            "remove a file" => assert_eq!(report.imports_resolved, 0, "after: {step}"),
            // The importers find the crate gone, then back.
            _ => assert!(report.imports_resolved > 0, "after: {step}"),
        }
        seen.push(got.iter().any(|e| {
            e.starts_with("app/src/api.rs:") && e.contains("-> Symbol(") && e.contains("pretty")
        }));
    }
    assert_eq!(
        seen,
        [true, true, false, true],
        "an edge into util, then none, then back"
    );
}

/// Files added to and removed from a package imported elsewhere, down to its
/// last file and back: after each step the edges, packages and memberships
/// equal a fresh index's, and the importers' edges are not rewritten for a
/// package that merely grew or shrank.
#[test]
fn go_package_changes_equal_a_fresh_index() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (repo, data) = indexed_copy(tmp.path(), "imports/go", "go");
    let packages = |d: &DataDir| -> Vec<String> {
        let store = d.open_graph_read_only(&small_graph()).expect("open");
        rows(
            &store,
            "MATCH (p:Package) OPTIONAL MATCH (f:File)-[:IN_PACKAGE]->(p) \
             RETURN p.path AS dir, f.path AS file ORDER BY dir, file",
        )
        .iter()
        .map(|r| format!("{} {}", s(&r["dir"]), s(&r["file"])))
        .collect()
    };
    let store_dir = repo.join("internal/store");
    type Step<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let steps: Vec<Step<'_>> = vec![
        (
            "add a file",
            Box::new(|| {
                std::fs::write(
                    store_dir.join("extra.go"),
                    "package store\n\nfunc Extra() {}\n",
                )
                .expect("write")
            }),
        ),
        (
            "add a test file",
            Box::new(|| {
                std::fs::write(store_dir.join("extra_test.go"), "package store\n").expect("write")
            }),
        ),
        (
            "remove a file",
            Box::new(|| std::fs::remove_file(store_dir.join("cache.go")).expect("rm")),
        ),
        (
            "remove all but the test file",
            Box::new(|| {
                for f in ["store.go", "extra.go"] {
                    std::fs::remove_file(store_dir.join(f)).expect("rm");
                }
            }),
        ),
        (
            "bring the package back",
            Box::new(|| {
                std::fs::write(
                    store_dir.join("store.go"),
                    "package store\n\ntype Store struct{}\n",
                )
                .expect("write")
            }),
        ),
    ];
    for (i, (step, change)) in steps.iter().enumerate() {
        change();
        let fresh = tmp.path().join(format!("fresh-{i}"));
        let (report, _) = reindex_like_fresh(&repo, &data, &fresh, step);
        let fresh = DataDir::new(fresh);
        assert_eq!(packages(&data), packages(&fresh), "packages after: {step}");
        // The package grew or shrank: the new file alone is resolved, and
        // nothing for a removed one; its importers keep their edges.
        match *step {
            "add a file" => assert_eq!(report.imports_resolved, 1, "after: {step}"),
            "remove a file" => assert_eq!(report.imports_resolved, 0, "after: {step}"),
            _ => {}
        }
    }
    let back = edges(&data);
    assert!(
        back.iter()
            .any(|e| e.ends_with("-> Package(internal/store)")),
        "{back:?}"
    );
}

#[test]
fn a_file_without_imports_has_no_edges() {
    let (got, _) = fixture_edges("go");
    assert!(!got.iter().any(|e| e.starts_with("internal/store/")));
}

/// Incremental re-indexing through a series of edits must equal a fresh index.
#[test]
fn incremental_edges_equal_a_fresh_index_after_every_edit() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (repo, data) = indexed_copy(tmp.path(), "imports/python", "imports");

    let check = |step: &str| {
        let fresh = DataDir::new(tmp.path().join(format!("fresh-{step}")));
        index_into(&repo, &fresh);
        assert_eq!(edges(&data), edges(&fresh), "after {step}");
        // No External node without an edge, no edge to a missing node.
        let store = data.open_graph_read_only(&small_graph()).expect("open");
        let orphans = rows(
            &store,
            "MATCH (x:External) WHERE NOT EXISTS { MATCH ()-[:IMPORTS]->(x) } RETURN count(*) AS n",
        );
        assert_eq!(s(&orphans[0]["n"]), "0", "orphan externals after {step}");
    };

    // 1. The target of `from pkg.util import helper` disappears: the edge
    //    becomes External; the importing file did not change.
    std::fs::write(repo.join("pkg/util.py"), "CONST = 1\n").expect("w");
    index_into(&repo, &data);
    assert!(
        edges(&data)
            .iter()
            .any(|e| e == "pkg/core.py:3 pkg.util.helper -> External(pkg.util.helper)")
    );
    check("target removed");

    // 2. It comes back: resolved again.
    std::fs::write(
        repo.join("pkg/util.py"),
        "CONST = 1\n\n\ndef helper():\n    pass\n",
    )
    .expect("w");
    index_into(&repo, &data);
    assert!(
        edges(&data)
            .iter()
            .any(|e| e == "pkg/core.py:3 pkg.util.helper -> Symbol(pkg.util.helper)")
    );
    check("target restored");

    // 3. A previously missing module appears.
    std::fs::create_dir_all(repo.join("missing")).expect("mkdir");
    std::fs::write(repo.join("missing/__init__.py"), "").expect("w");
    std::fs::write(repo.join("missing/module.py"), "def thing():\n    pass\n").expect("w");
    index_into(&repo, &data);
    assert!(
        edges(&data)
            .iter()
            .any(|e| e == "app.py:6 missing.module.thing -> Symbol(missing.module.thing)")
    );
    check("module added");

    // 4. A whole file with imports is deleted, another one's imports change.
    std::fs::remove_file(repo.join("pkg/sub/deep.py")).expect("rm");
    std::fs::write(
        repo.join("app.py"),
        "import os\nfrom pkg import Engine as E\n",
    )
    .expect("w");
    index_into(&repo, &data);
    check("file deleted and imports edited");

    // 5. Same-named definitions (here: both branches of a `try`) are chosen the
    //    same way whatever the load order; edit another file and compare.
    std::fs::write(
        repo.join("pkg/dup.py"),
        "try:\n    import fast\n\n    def twice(x):\n        return 2 * x\nexcept ImportError:\n\n    def twice(x):\n        return x + x\n",
    )
    .expect("w");
    std::fs::write(repo.join("app.py"), "from pkg.dup import twice\n").expect("w");
    index_into(&repo, &data);
    check("duplicate definitions added");
    std::fs::write(
        repo.join("app.py"),
        "from pkg.dup import twice\nimport os\n",
    )
    .expect("w");
    index_into(&repo, &data);
    check("duplicate definitions, another file edited");

    // 6. --force on top.
    let mut o = opts("imports");
    o.force = true;
    index_repo(&repo, &data, &o, &Silent).expect("force");
    check("forced rebuild");
}

/// Items and `use`s inside item-level macro bodies (`cfg_net! { … }`) are indexed at
/// their own lines; macro templates (`$…`) are not.
#[test]
fn rust_items_inside_macro_bodies() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("mac");
    std::fs::create_dir_all(repo.join("src")).expect("mkdir");
    std::fs::write(
        repo.join("src/lib.rs"),
        "macro_rules! cfg_net { ($($item:item)*) => { $($item)* } }\n\
         \n\
         cfg_net! {\n\
         \x20   pub mod tcp;\n\
         \x20   pub use crate::tcp::Stream;\n\
         \x20   /// Inside a macro.\n\
         \x20   pub fn connect() {}\n\
         }\n",
    )
    .expect("w");
    std::fs::write(repo.join("src/tcp.rs"), "pub struct Stream;\n").expect("w");
    let data = DataDir::new(tmp.path().join("data"));
    index_into(&repo, &data);
    assert_eq!(
        edges(&data),
        sorted(&[
            "src/lib.rs:4 tcp -> File(src/tcp.rs)",
            "src/lib.rs:5 crate::tcp::Stream -> Symbol(tcp::Stream)",
        ])
    );
    let got = lines_of(
        &data,
        "MATCH (:File {path: 'src/lib.rs'})-[:CONTAINS]->(s:Symbol) \
         RETURN s.kind AS k, s.name AS n, s.line_start AS l, s.doc AS d ORDER BY l",
        &["k", "n", "l", "d"],
    );
    assert_eq!(
        got,
        vec![
            "macro cfg_net 1 ",
            "mod tcp 4 ",
            "fn connect 7 Inside a macro."
        ]
    );
}

#[test]
fn rust_enum_variants_are_symbols_that_uses_resolve_to() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("variants");
    std::fs::create_dir_all(repo.join("src")).expect("mkdir");
    std::fs::write(
        repo.join("src/lib.rs"),
        "pub mod header;\n\
         use crate::header::Header::Vary;\n\
         use self::header::Header::{Accept, Missing};\n\
         use header::Mode::*;\n",
    )
    .expect("w");
    std::fs::write(
        repo.join("src/header.rs"),
        "pub enum Header {\n\
         \x20   /// Varies.\n\
         \x20   Vary,\n\
         \x20   Accept(String),\n\
         }\n\
         enum Mode { Fast = 1, Slow { depth: u32 } }\n",
    )
    .expect("w");
    let data = DataDir::new(tmp.path().join("data"));
    index_into(&repo, &data);
    assert_eq!(
        edges(&data),
        sorted(&[
            "src/lib.rs:1 header -> File(src/header.rs)",
            "src/lib.rs:2 crate::header::Header::Vary -> Symbol(header::Header::Vary)",
            "src/lib.rs:3 self::header::Header::Accept -> Symbol(header::Header::Accept)",
            "src/lib.rs:3 self::header::Header::Missing -> External(self::header::Header::Missing)",
            "src/lib.rs:4 header::Mode::* -> Symbol(header::Mode)",
        ])
    );
    let got = lines_of(
        &data,
        "MATCH (e:Symbol {kind: 'enum'})-[:CONTAINS]->(v:Symbol) \
         RETURN v.kind AS k, v.qualified_name AS q, v.line_start AS l, v.signature AS sig, \
                v.doc AS d, v.visibility AS vis ORDER BY l",
        &["k", "q", "l", "sig", "d", "vis"],
    );
    assert_eq!(
        got,
        vec![
            "variant header::Header::Vary 3 Vary Varies. public",
            "variant header::Header::Accept 4 Accept(String)  public",
            "variant header::Mode::Fast 6 Fast = 1  private",
            "variant header::Mode::Slow 6 Slow { depth: u32 }  private",
        ]
    );
}

/// `examples/agg.rs` is a crate root whose module path is `agg`, like the
/// library's `src/agg/mod.rs`: `crate::agg::…` in the library means the library's.
#[test]
fn rust_examples_do_not_shadow_the_library_modules_of_the_same_name() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("shadow");
    std::fs::create_dir_all(repo.join("src/agg")).expect("mkdir");
    std::fs::create_dir_all(repo.join("examples")).expect("mkdir");
    std::fs::write(
        repo.join("Cargo.toml"),
        "[package]\nname = \"shadow\"\nversion = \"0.1.0\"\n",
    )
    .expect("w");
    std::fs::write(repo.join("src/lib.rs"), "pub mod agg;\npub mod user;\n").expect("w");
    std::fs::write(
        repo.join("src/agg/mod.rs"),
        "mod inner;\npub use inner::Registry;\n",
    )
    .expect("w");
    std::fs::write(repo.join("src/agg/inner.rs"), "pub struct Registry;\n").expect("w");
    std::fs::write(repo.join("src/user.rs"), "use crate::agg::Registry;\n").expect("w");
    std::fs::write(repo.join("examples/agg.rs"), "fn main() {}\n").expect("w");
    let data = DataDir::new(tmp.path().join("data"));
    index_into(&repo, &data);
    let got: Vec<String> = edges(&data)
        .into_iter()
        .filter(|e| e.starts_with("src/user.rs"))
        .collect();
    assert_eq!(
        got,
        vec!["src/user.rs:1 crate::agg::Registry -> Symbol(agg::inner::Registry)"]
    );
}

/// A `tests` folder under `src/` is a module of the library, not a crate of
/// its own (bitflags' `src/tests/flag_name.rs`): its `crate::parser::*` is the
/// library's `parser`, not the sibling `src/tests/parser.rs`; a `tests/` beside
/// `src/` is one (its `crate::` is its own root).
#[test]
fn rust_tests_folders_under_src_are_modules_of_the_library() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("flags");
    write_repo(
        &repo,
        [
            (
                "Cargo.toml",
                "[package]\nname = \"flags\"\nversion = \"0.1.0\"\n",
            ),
            ("src/lib.rs", "pub mod parser;\n#[cfg(test)]\nmod tests;\n"),
            ("src/parser.rs", "pub fn parse() {}\n"),
            ("src/tests.rs", "mod parser;\nmod flag_name;\n"),
            ("src/tests/parser.rs", "fn roundtrip() {}\n"),
            ("src/tests/flag_name.rs", "use crate::parser::*;\n"),
            ("tests/common/mod.rs", "pub fn setup() {}\n"),
            ("tests/it.rs", "mod common;\nuse crate::common::setup;\n"),
        ],
    );
    let data = DataDir::new(tmp.path().join("data"));
    index_into(&repo, &data);
    let got: Vec<String> = edges(&data)
        .into_iter()
        .filter(|e| e.starts_with("src/tests/flag_name.rs") || e.starts_with("tests/it.rs:2"))
        .collect();
    assert_eq!(
        got,
        vec![
            "src/tests/flag_name.rs:1 crate::parser::* -> File(src/parser.rs)",
            "tests/it.rs:2 crate::common::setup -> Symbol(common::setup)",
        ]
    );
}

/// `x.ts` beside its compiled `x.js` share a module path: an import resolved to
/// `x.ts` takes its definition from `x.ts`.
#[test]
fn typescript_prefers_the_definition_in_the_resolved_file() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("tsdup");
    std::fs::create_dir_all(repo.join("src")).expect("mkdir");
    std::fs::write(
        repo.join("src/x.ts"),
        "export function foo(): number { return 1; }\n",
    )
    .expect("w");
    std::fs::write(
        repo.join("src/x.js"),
        "export function foo() { return 1; }\n",
    )
    .expect("w");
    std::fs::write(repo.join("src/app.ts"), "import { foo } from './x';\n").expect("w");
    let data = DataDir::new(tmp.path().join("data"));
    index_into(&repo, &data);
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    let got = rows(
        &store,
        "MATCH (:File {path: 'src/app.ts'})-[:IMPORTS]->(s:Symbol) RETURN s.path AS p",
    );
    assert_eq!(got.len(), 1);
    assert_eq!(s(&got[0]["p"]), "src/x.ts");
}

/// Seeded random edits of every language's fixture (files deleted, restored and
/// moved; lines dropped, and lines copied between files, which moves definitions,
/// imports and re-exports around): after each one, the incremental run — which
/// re-resolves only the files whose lookups the change touched — must give the
/// edge set of a fresh index.
#[test]
fn random_edits_keep_incremental_edges_equal_to_a_fresh_index() {
    random_edits_equal_a_fresh_index(u64::MAX);
}

/// The same with every symbol looked up by key, row by row, as in a big graph
/// (`GraphConfig::key_lookups_above`).
#[test]
fn random_edits_with_symbols_written_by_key_equal_a_fresh_index() {
    random_edits_equal_a_fresh_index(0);
}

fn random_edits_equal_a_fresh_index(key_lookups_above: u64) {
    const SOURCE: &[&str] = &[".rs", ".py", ".ts", ".tsx", ".js", ".go"];
    let index_into = |repo: &Path, data: &DataDir| {
        let mut o = opts("imports");
        o.graph.key_lookups_above = key_lookups_above;
        // A server's runs count what they change for its catalogs.
        o.count_in_degree = true;
        index_repo(repo, data, &o, &Silent).expect("index")
    };
    for (lang, seed) in [("rust", 1u64), ("python", 2), ("typescript", 3), ("go", 4)] {
        let tmp = tempfile::tempdir().expect("tmp");
        let (repo, data) = indexed_copy(tmp.path(), &format!("imports/{lang}"), "imports");
        let load = |data: &DataDir| {
            let store = data.open_graph_read_only(&small_graph()).expect("open");
            cruxe::store::catalog::load(&store, "imports", "test").expect("catalog")
        };
        // A server's catalog, patched with each run's changes.
        let mut catalog = load(&data);
        let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = |n: usize| -> usize {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n.max(1) as u64) as usize
        };
        let sources = |repo: &Path| -> Vec<std::path::PathBuf> {
            let mut v: Vec<_> = walk_sources(repo)
                .into_iter()
                .filter(|p| SOURCE.iter().any(|e| p.to_string_lossy().ends_with(e)))
                .collect();
            v.sort();
            v
        };
        let mut deleted: Vec<(std::path::PathBuf, String)> = Vec::new();
        let mut targeted = false;
        for step in 0..10 {
            let files = sources(&repo);
            let what = match next(5) {
                0 if files.len() > 2 => {
                    let f = &files[next(files.len())];
                    deleted.push((f.clone(), std::fs::read_to_string(f).expect("read")));
                    std::fs::remove_file(f).expect("rm");
                    format!("deleted {}", f.display())
                }
                1 if !deleted.is_empty() => {
                    let (f, text) = deleted.remove(next(deleted.len()));
                    std::fs::write(&f, text).expect("restore");
                    format!("restored {}", f.display())
                }
                2 => {
                    let f = &files[next(files.len())];
                    let text = std::fs::read_to_string(f).expect("read");
                    let mut lines: Vec<&str> = text.lines().collect();
                    if !lines.is_empty() {
                        lines.remove(next(lines.len()));
                    }
                    std::fs::write(f, lines.join("\n") + "\n").expect("w");
                    format!("dropped a line of {}", f.display())
                }
                3 if files.len() > 1 => {
                    // Move a file within its language's folder.
                    let f = &files[next(files.len())];
                    let name = f.file_name().expect("name").to_string_lossy().into_owned();
                    let to = f.with_file_name(format!("moved_{step}_{name}"));
                    std::fs::rename(f, &to).expect("mv");
                    format!("moved {} to {}", f.display(), to.display())
                }
                _ => {
                    let (a, b) = (&files[next(files.len())], &files[next(files.len())]);
                    let text = std::fs::read_to_string(a).expect("read");
                    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
                    let line = lines.get(next(lines.len())).copied().unwrap_or("");
                    let mut target = std::fs::read_to_string(b).expect("read");
                    target.push_str(line);
                    target.push('\n');
                    std::fs::write(b, target).expect("w");
                    format!("copied `{line}` from {} to {}", a.display(), b.display())
                }
            };
            let report = index_into(&repo, &data);
            assert!(
                data.state_path("imports", "test").exists(),
                "{lang} step {step}: the run left a resolution state"
            );
            targeted |= report.imports_resolved < report.files;
            // A run that found nothing to change writes nothing and reports no
            // changes: the catalog stays.
            if let Some(changes) = report.changes.as_ref() {
                let store = data.open_graph_read_only(&small_graph()).expect("open");
                catalog = catalog.apply(changes, &store).expect("patch");
                drop(store);
            } else {
                assert_eq!(
                    (report.parsed, report.removed),
                    (0, 0),
                    "{lang} step {step}"
                );
            }
            assert_eq!(
                catalog.observable(),
                load(&data).observable(),
                "{lang} step {step} ({what}): the patched catalog differs from a fresh load"
            );
            // The run's totals (kept in the state) are the graph's.
            let status = data
                .open_graph_read_only(&small_graph())
                .expect("open")
                .status()
                .expect("status");
            let st = status.iter().find(|s| s.repo == "imports").expect("ref");
            assert_eq!(
                (
                    report.symbols,
                    report.import_edges,
                    report.unresolved_imports
                ),
                (st.symbols, st.import_edges, st.unresolved_imports),
                "{lang} step {step}: the report's totals"
            );
            let fresh = DataDir::new(tmp.path().join(format!("fresh-{step}")));
            index_into(&repo, &fresh);
            assert_eq!(
                load(&data).observable(),
                load(&fresh).observable(),
                "{lang} step {step} ({what}): incremental symbols differ from a fresh index"
            );
            assert_eq!(
                edges(&data),
                edges(&fresh),
                "{lang} step {step} ({what}): incremental edges differ from a fresh index"
            );
            // The search index, updated per symbol, holds the fresh one's documents.
            let search_ids = |d: &DataDir| {
                cruxe::store::search::SearchIndex::open_dir(&d.search_dir("imports", "test"))
                    .expect("search index")
                    .symbol_ids()
                    .expect("ids")
            };
            assert_eq!(
                search_ids(&data),
                search_ids(&fresh),
                "{lang} step {step} ({what}): search documents differ from a fresh index"
            );
        }
        assert!(
            targeted,
            "{lang}: some run re-resolved only part of the files"
        );
    }
}

fn walk_sources(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("dir").flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(walk_sources(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Module trees that attributes, Cargo and macros reshape: `cfg_attr(…, path)`
/// modules and their children (each backend's code sees its own backend), inline
/// modules re-exporting a glob, a plain `use` that child modules import through
/// `super`, re-exports of another crate's items (Externals named by that crate's
/// path), a dependency Cargo.toml renames, a path through a name a `use` binds,
/// a build script beside the library, a test crate in a directory, and `use`s
/// inside macros inside macros and inside `cfg_if!` branches.
#[test]
fn rust_module_trees_that_attributes_cargo_and_macros_reshape() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("app");
    let files: &[(&str, &str)] = &[
        (
            "Cargo.toml",
            "[package]\nname = \"app\"\n\n[dependencies]\nutil2 = { path = \"util\", package = \"app-util\" }\n",
        ),
        ("util/Cargo.toml", "[package]\nname = \"app-util\"\n"),
        ("util/src/lib.rs", "pub fn helper() {}\n"),
        ("build.rs", "fn main() {}\n"),
        (
            "src/lib.rs",
            "#[cfg_attr(windows, path = \"backend/win/mod.rs\")]\n\
             #[cfg_attr(unix, path = \"backend/unix/mod.rs\")]\n\
             mod backend;\n\
             pub mod fd {\n\
             \x20   pub use super::backend::io::*;\n\
             }\n\
             use std::future::Future;\n\
             pub use std::time::Duration;\n\
             pub use crate::kinds::Shape;\n\
             mod kinds;\n\
             mod child;\n\
             outer! {\n\
             \x20   outer! {\n\
             \x20       pub use crate::kinds::Shape as Form;\n\
             \x20   }\n\
             }\n\
             cfg_if::cfg_if! {\n\
             \x20   if #[cfg(unix)] {\n\
             \x20       pub use crate::kinds::Shape as Unixy;\n\
             \x20   } else {\n\
             \x20       pub use crate::kinds::Shape as Othery;\n\
             \x20   }\n\
             }\n",
        ),
        ("src/backend/unix/mod.rs", "pub mod io;\n"),
        ("src/backend/unix/io.rs", "pub struct Handle;\n"),
        ("src/backend/win/mod.rs", "pub mod io;\nmod other;\n"),
        ("src/backend/win/io.rs", "pub struct Handle;\n"),
        (
            "src/backend/win/other.rs",
            "use crate::backend::io::Handle;\n",
        ),
        ("src/kinds.rs", "pub enum Shape {\n    Circle,\n}\n"),
        (
            "src/child.rs",
            "use super::Future;\n\
             use crate::Duration;\n\
             use crate::Shape::Circle;\n\
             use crate::fd::Handle;\n\
             use util2::helper;\n\
             use crate::backend;\n\
             use backend::io::Handle as H;\n\
             use crate::{Form, Unixy};\n",
        ),
        (
            "tests/it/main.rs",
            "mod helpers;\nuse crate::helpers::assist;\n",
        ),
        ("tests/it/helpers.rs", "pub fn assist() {}\n"),
    ];
    for (path, text) in files {
        let p = repo.join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    let data = DataDir::new(tmp.path().join("data"));
    index_into(&repo, &data);
    assert_eq!(
        edges(&data),
        sorted(&[
            "src/backend/unix/mod.rs:1 io -> File(src/backend/unix/io.rs)",
            "src/backend/win/mod.rs:1 io -> File(src/backend/win/io.rs)",
            "src/backend/win/mod.rs:2 other -> File(src/backend/win/other.rs)",
            // The Windows backend's own code means the Windows backend.
            "src/backend/win/other.rs:1 crate::backend::io::Handle -> Symbol(backend::win::io::Handle)",
            "src/child.rs:1 super::Future -> External(std::future::Future)",
            "src/child.rs:2 crate::Duration -> External(std::time::Duration)",
            "src/child.rs:3 crate::Shape::Circle -> Symbol(kinds::Shape::Circle)",
            "src/child.rs:4 crate::fd::Handle -> Symbol(backend::unix::io::Handle)",
            "src/child.rs:5 util2::helper -> Symbol(helper)",
            "src/child.rs:6 crate::backend -> File(src/backend/unix/mod.rs)",
            "src/child.rs:7 backend::io::Handle -> Symbol(backend::unix::io::Handle) as H",
            "src/child.rs:8 crate::Form -> Symbol(kinds::Shape)",
            "src/child.rs:8 crate::Unixy -> Symbol(kinds::Shape)",
            // The nearest `path` attribute wins elsewhere.
            "src/lib.rs:3 backend -> File(src/backend/unix/mod.rs)",
            "src/lib.rs:5 super::backend::io::* -> File(src/backend/unix/io.rs)",
            "src/lib.rs:7 std::future::Future -> External(std::future::Future)",
            "src/lib.rs:8 std::time::Duration -> External(std::time::Duration)",
            "src/lib.rs:9 crate::kinds::Shape -> Symbol(kinds::Shape)",
            "src/lib.rs:10 kinds -> File(src/kinds.rs)",
            "src/lib.rs:11 child -> File(src/child.rs)",
            "src/lib.rs:14 crate::kinds::Shape -> Symbol(kinds::Shape) as Form",
            "src/lib.rs:19 crate::kinds::Shape -> Symbol(kinds::Shape) as Unixy",
            "src/lib.rs:21 crate::kinds::Shape -> Symbol(kinds::Shape) as Othery",
            // `tests/it/main.rs` is the root of the test crate `it`.
            "tests/it/main.rs:1 helpers -> File(tests/it/helpers.rs)",
            "tests/it/main.rs:2 crate::helpers::assist -> Symbol(it::helpers::assist)",
        ])
    );
}

/// Files asking the same path through glob re-exports share one lookup of the
/// run (`resolve::rust::Cache`): the keys of that lookup are each asker's too,
/// so when the module the globs reach is renamed away and back, every asker is
/// resolved again (four of them, each with that one import, so that some take
/// the answer another computed), and a module deleted under another path moves
/// only its own asker. After each step the edges equal a fresh index's.
#[test]
fn rust_files_asking_the_same_glob_path_follow_its_changes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("globs");
    let src = repo.join("src");
    const ASKERS: [&str; 4] = ["a", "b", "c", "d"];
    let mut files = vec![
        ("Cargo.toml".to_string(), "[package]\nname = \"globs\"\nversion = \"0.1.0\"\n".to_string()),
        (
            "src/lib.rs".to_string(),
            "mod plat;\nmod other;\nmod a;\nmod b;\nmod c;\nmod d;\nmod e;\npub use plat::*;\npub use other::*;\n".to_string(),
        ),
        ("src/plat/mod.rs".to_string(), "mod linux;\npub use self::linux::*;\n".to_string()),
        ("src/plat/linux.rs".to_string(), "pub struct Handle;\n".to_string()),
        ("src/other.rs".to_string(), "pub fn close() {}\n".to_string()),
        ("src/e.rs".to_string(), "use crate::close;\n".to_string()),
    ];
    for f in ASKERS {
        files.push((format!("src/{f}.rs"), "use crate::Handle;\n".to_string()));
    }
    write_repo(&repo, files.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    let data = DataDir::new(tmp.path().join("data"));
    index_into(&repo, &data);
    let linux = src.join("plat/linux.rs");
    let moved = src.join("plat/moved.rs");
    type Step<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let steps: Vec<Step<'_>> = vec![
        ("as indexed", Box::new(|| {})),
        (
            "the globbed module renamed away",
            Box::new(|| std::fs::rename(&linux, &moved).expect("mv")),
        ),
        (
            "and back",
            Box::new(|| std::fs::rename(&moved, &linux).expect("mv")),
        ),
        (
            "a module another file names deleted",
            Box::new(|| std::fs::remove_file(src.join("other.rs")).expect("rm")),
        ),
    ];
    let of = |edges: &[String], file: &str| -> String {
        let mine: Vec<&String> = edges
            .iter()
            .filter(|e| e.starts_with(&format!("src/{file}.rs:")))
            .collect();
        assert_eq!(mine.len(), 1, "{file}: {edges:?}");
        mine[0].split_once(' ').expect("edge").1.to_string()
    };
    for (i, (step, change)) in steps.iter().enumerate() {
        change();
        let (_, got) =
            reindex_like_fresh(&repo, &data, &tmp.path().join(format!("fresh-{i}")), step);
        for f in ASKERS {
            let edge = of(&got, f);
            match i {
                1 => assert!(
                    edge.starts_with("crate::Handle -> External("),
                    "{step}: {f}: {edge}"
                ),
                _ => assert_eq!(
                    edge, "crate::Handle -> Symbol(plat::linux::Handle)",
                    "{step}: {f}"
                ),
            }
        }
        let edge = of(&got, "e");
        match i {
            3 => assert!(
                edge.starts_with("crate::close -> External("),
                "{step}: {edge}"
            ),
            _ => assert_eq!(edge, "crate::close -> Symbol(other::close)", "{step}"),
        }
    }
}

/// A lookup passes over a module its globs reach that binds nothing by the
/// name looked up, from a set of what the module binds (`rust::unbound_here`)
/// and each glob made absolute once a run. Every way such a module can come
/// to bind the name must reach the files that passed over it: a definition in
/// its file, a module file below it, a named import, a `#[path]` module. Here
/// `crate::Handle` passes over `first` (globbed first) to `second`'s; each
/// step makes `first` bind it, then undoes that. After each step the edges
/// equal a fresh index's.
#[test]
fn rust_lookups_that_pass_over_a_module_see_it_come_to_bind_the_name() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("passes");
    let src = repo.join("src");
    let first_mod = "pub use self::deep::*;\nmod deep;\npub fn unrelated() {}\n";
    let files = [
        (
            "Cargo.toml",
            "[package]\nname = \"passes\"\nversion = \"0.1.0\"\n",
        ),
        (
            "src/lib.rs",
            "mod first;\nmod second;\nmod third;\nmod asker;\npub use first::*;\npub use second::*;\n",
        ),
        ("src/first/mod.rs", first_mod),
        ("src/first/deep.rs", "pub fn deeper() {}\n"),
        ("src/second.rs", "pub struct Handle;\n"),
        ("src/third.rs", "pub struct Handle;\n"),
        ("src/elsewhere.rs", "pub fn elsewhere() {}\n"),
        ("src/asker.rs", "use crate::Handle;\n"),
    ];
    write_repo(&repo, files);
    let data = DataDir::new(tmp.path().join("data"));
    index_into(&repo, &data);
    let write = |path: &str, text: &str| std::fs::write(src.join(path), text).expect("write");
    type Step<'a> = (&'a str, Box<dyn Fn() + 'a>, &'a str);
    let second = "crate::Handle -> Symbol(second::Handle)";
    let steps: Vec<Step<'_>> = vec![
        ("as indexed", Box::new(|| {}), second),
        (
            "a definition in the module's file",
            Box::new(|| write("first/mod.rs", &format!("{first_mod}pub struct Handle;\n"))),
            "crate::Handle -> Symbol(first::Handle)",
        ),
        (
            "undone",
            Box::new(|| write("first/mod.rs", first_mod)),
            second,
        ),
        (
            "a definition in a module its own glob reaches",
            Box::new(|| write("first/deep.rs", "pub fn deeper() {}\npub struct Handle;\n")),
            "crate::Handle -> Symbol(first::deep::Handle)",
        ),
        (
            "undone",
            Box::new(|| write("first/deep.rs", "pub fn deeper() {}\n")),
            second,
        ),
        (
            "a module file below it",
            Box::new(|| write("first/Handle.rs", "pub fn inside() {}\n")),
            "crate::Handle -> File(src/first/Handle.rs)",
        ),
        (
            "undone",
            Box::new(|| std::fs::remove_file(src.join("first/Handle.rs")).expect("rm")),
            second,
        ),
        (
            "a named import",
            Box::new(|| {
                write(
                    "first/mod.rs",
                    &format!("{first_mod}pub use crate::third::Handle;\n"),
                )
            }),
            "crate::Handle -> Symbol(third::Handle)",
        ),
        (
            "undone",
            Box::new(|| write("first/mod.rs", first_mod)),
            second,
        ),
        (
            "a #[path] module",
            Box::new(|| {
                write(
                    "first/mod.rs",
                    &format!("{first_mod}#[path = \"../elsewhere.rs\"]\npub mod Handle;\n"),
                )
            }),
            "crate::Handle -> File(src/elsewhere.rs)",
        ),
        (
            "undone",
            Box::new(|| write("first/mod.rs", first_mod)),
            second,
        ),
    ];
    for (i, (step, change, want)) in steps.iter().enumerate() {
        change();
        let (_, got) =
            reindex_like_fresh(&repo, &data, &tmp.path().join(format!("fresh-{i}")), step);
        let mine: Vec<&String> = got
            .iter()
            .filter(|e| e.starts_with("src/asker.rs:"))
            .collect();
        assert_eq!(mine.len(), 1, "{step}: {got:?}");
        assert_eq!(mine[0].split_once(' ').expect("edge").1, *want, "{step}");
    }
}

/// A resolution state is trusted only when its checksums hold: its sections
/// are decoded when used, not walked when read. Here a definition's name in
/// the state file, `auth.jwt.validate_token`, is changed after the run, to a
/// name of the same length so that every record still parses; then the file
/// that imports it changes, so its import is resolved again against the
/// definitions of `auth/jwt.py`, which did not change. The damaged state is not
/// trusted: the import still finds the function, and the edges equal a fresh
/// index's.
#[test]
fn a_resolution_state_damaged_on_disk_is_not_trusted() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (repo, data) = indexed_copy(tmp.path(), "python", "damaged");
    let mut damaged = 0;
    for entry in std::fs::read_dir(data.root().join("state")).expect("state dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "bin") {
            continue;
        }
        let mut bytes = std::fs::read(&path).expect("read");
        let name = b"auth.jwt.validate_token";
        let mut at = 0;
        while let Some(i) = bytes[at..].windows(name.len()).position(|w| w == name) {
            bytes[at + i + name.len() - 1] = b'm';
            at += i + name.len();
            damaged += 1;
        }
        std::fs::write(&path, bytes).expect("write");
    }
    assert!(damaged > 0, "the state holds the definition's name");
    let handler = repo.join("auth/handler.py");
    let text = std::fs::read_to_string(&handler).expect("read");
    std::fs::write(&handler, format!("{text}\n\ndef later():\n    return 1\n")).expect("write");
    let (_, got) = reindex_like_fresh(&repo, &data, &tmp.path().join("fresh"), "the state damaged");
    let import: Vec<&String> = got
        .iter()
        .filter(|e| e.starts_with("auth/handler.py:") && e.contains("validate_token"))
        .collect();
    assert_eq!(import.len(), 1, "{got:?}");
    assert!(import[0].contains("-> Symbol("), "{}", import[0]);
}

/// Symbols nested two levels down, under several parents, added by an
/// incremental run that writes symbols by key (a statement per parent, as in a
/// big graph): each sits under its own parent, as in a fresh index.
#[test]
fn nested_symbols_written_by_key_sit_under_their_own_parents() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("repo");
    write_repo(&repo, [("src/lib.rs", "pub fn keep() {}\n")]);
    let index = |data: &DataDir, key_lookups_above: u64| {
        let mut o = opts("imports");
        o.graph.key_lookups_above = key_lookups_above;
        index_repo(&repo, data, &o, &Silent).expect("index")
    };
    let data = DataDir::new(tmp.path().join("data"));
    index(&data, 0);
    // Added by the second run: grandchildren under two different children
    // of each of two top-level modules, in two files.
    write_repo(
        &repo,
        [
            (
                "src/lib.rs",
                "pub fn keep() {}\npub mod a {\n    pub mod b { pub fn f() {} pub fn g() {} }\n    pub mod c { pub fn h() {} }\n}\n",
            ),
            (
                "src/more.py",
                "class P:\n    def m(self):\n        def inner(): pass\n        def other(): pass\nclass Q:\n    def n(self):\n        def deep(): pass\n",
            ),
        ],
    );
    index(&data, 0);
    let fresh = DataDir::new(tmp.path().join("fresh"));
    index(&fresh, u64::MAX);
    let parents = |d: &DataDir| {
        let mut v = lines_of(
            d,
            "MATCH (p:Symbol)-[:CONTAINS]->(s:Symbol) RETURN p.qualified_name AS p, s.qualified_name AS s",
            &["p", "s"],
        );
        v.sort();
        v
    };
    let got = parents(&data);
    assert_eq!(got, parents(&fresh));
    for want in [
        "a a::b",
        "a a::c",
        "a::b a::b::f",
        "a::b a::b::g",
        "a::c a::c::h",
        "more.P more.P.m",
        "more.P.m more.P.m.inner",
        "more.P.m more.P.m.other",
        "more.Q more.Q.n",
        "more.Q.n more.Q.n.deep",
    ] {
        assert!(
            got.contains(&want.to_string()),
            "{want} missing from {got:?}"
        );
    }
}

/// A binary whose root a Cargo.toml sets by path (`[[bin]] path =
/// "crates/core/main.rs"`, as ripgrep does): its `crate::` and `mod` paths
/// resolve to the files under that root; before, they all stayed External.
#[test]
fn a_binary_rooted_by_path_resolves_its_crate_imports() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("rgish");
    write_repo(
        &repo,
        [
            (
                "Cargo.toml",
                "[package]\nname = \"rgish\"\n\n[[bin]]\nname = \"rg\"\npath = \"crates/core/main.rs\"\n",
            ),
            (
                "crates/core/main.rs",
                "mod flags;\nmod search;\nuse crate::flags::Args;\nuse crate::search::{run, Searcher};\n",
            ),
            (
                "crates/core/flags/mod.rs",
                "mod parse;\npub use self::parse::Args;\n",
            ),
            (
                "crates/core/flags/parse.rs",
                "pub struct Args;\nuse super::super::search::run;\n",
            ),
            (
                "crates/core/search.rs",
                "pub fn run() {}\npub struct Searcher;\n",
            ),
        ],
    );
    let data = DataDir::new(tmp.path().join("data"));
    index_into(&repo, &data);
    assert_eq!(
        edges(&data),
        sorted(&[
            "crates/core/flags/mod.rs:1 parse -> File(crates/core/flags/parse.rs)",
            "crates/core/flags/mod.rs:2 self::parse::Args -> Symbol(flags::parse::Args)",
            "crates/core/flags/parse.rs:2 super::super::search::run -> Symbol(search::run)",
            "crates/core/main.rs:1 flags -> File(crates/core/flags/mod.rs)",
            "crates/core/main.rs:2 search -> File(crates/core/search.rs)",
            "crates/core/main.rs:3 crate::flags::Args -> Symbol(flags::parse::Args)",
            "crates/core/main.rs:4 crate::search::Searcher -> Symbol(search::Searcher)",
            "crates/core/main.rs:4 crate::search::run -> Symbol(search::run)",
        ])
    );
}
