//! Bad input is reported in the run's diagnostics and never aborts it: binary,
//! huge, non-UTF-8 and unreadable files, broken symlinks, symlink loops, links
//! out of the repo, syntax errors.

use cruxe::index::{Silent, index_repo};
use cruxe::store::datadir::DataDir;

use crate::common::{opts, rows, s, small_graph};

#[test]
fn bad_files_are_reported_and_good_ones_indexed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("bad");
    std::fs::create_dir_all(repo.join("src")).expect("mkdir");
    std::fs::write(repo.join("src/good.py"), "def good():\n    return 1\n").expect("w");
    std::fs::write(repo.join("src/blob.rs"), b"fn a() {}\0\x01\x02binary").expect("w");
    std::fs::write(repo.join("src/latin1.py"), b"def caf\xe9():\n    pass\n").expect("w");
    std::fs::write(
        repo.join("src/huge.go"),
        format!("package huge\n\n{}", "// filler line\n".repeat(80_000)),
    )
    .expect("w");
    std::fs::write(
        repo.join("src/broken.py"),
        "def ok():\n    pass\n\ndef broken(:\n    pass\n\nclass Fine:\n    pass\n",
    )
    .expect("w");
    std::os::unix::fs::symlink(&repo, repo.join("src/loop")).expect("loop link");
    std::os::unix::fs::symlink(repo.join("src/missing.py"), repo.join("src/dangling.py"))
        .expect("dangling link");
    let outside = tmp.path().join("outside.py");
    std::fs::write(&outside, "def secret():\n    pass\n").expect("w");
    std::os::unix::fs::symlink(&outside, repo.join("src/outside.py")).expect("out link");
    // Written in `.gitignore`: must not be indexed at all.
    std::fs::write(repo.join(".gitignore"), "ignored/\n").expect("w");
    std::fs::create_dir_all(repo.join("ignored")).expect("mkdir");
    std::fs::write(repo.join("ignored/x.py"), "def hidden():\n    pass\n").expect("w");

    let data = DataDir::new(tmp.path().join("data"));
    let report = index_repo(&repo, &data, &opts("bad"), &Silent).expect("run succeeds");
    let problems: Vec<(String, String)> = report
        .diagnostics
        .iter()
        .map(|d| (d.path.clone(), d.problem.clone()))
        .collect();
    let has = |path: &str, word: &str| {
        problems
            .iter()
            .any(|(p, m)| p.ends_with(path) && m.contains(word))
    };
    assert!(has("src/blob.rs", "binary"), "{problems:#?}");
    assert!(has("src/latin1.py", "invalid UTF-8"), "{problems:#?}");
    assert!(has("src/huge.go", "too large"), "{problems:#?}");
    assert!(has("src/broken.py", "syntax errors"), "{problems:#?}");
    assert!(has("src/dangling.py", "broken symlink"), "{problems:#?}");
    assert!(
        has("src/outside.py", "outside the repository"),
        "{problems:#?}"
    );
    assert!(has("src/loop", "symlink loop"), "{problems:#?}");
    assert_eq!(report.syntax_error_files, 1);
    // good.py and broken.py are indexed, broken.py with what could be parsed.
    assert_eq!(report.files, 2);
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    let names: Vec<String> = rows(&store, "MATCH (s:Symbol) RETURN s.name AS n ORDER BY n")
        .iter()
        .map(|r| s(&r["n"]))
        .collect();
    assert!(names.contains(&"good".to_string()));
    assert!(names.contains(&"ok".to_string()));
    assert!(names.contains(&"Fine".to_string()));
    assert!(!names.contains(&"secret".to_string()));
    assert!(!names.contains(&"hidden".to_string()));
}

#[test]
fn unreadable_file_is_reported() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("r");
    std::fs::create_dir_all(&repo).expect("mkdir");
    std::fs::write(repo.join("a.py"), "def a():\n    pass\n").expect("w");
    let locked = repo.join("locked.py");
    std::fs::write(&locked, "def b():\n    pass\n").expect("w");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    let privileged = std::fs::read(&locked).is_ok();
    let data = DataDir::new(tmp.path().join("data"));
    let report = index_repo(&repo, &data, &opts("r"), &Silent).expect("run succeeds");
    if privileged {
        // Root reads anything: the file is simply indexed.
        assert_eq!(report.files, 2);
    } else {
        assert_eq!(report.files, 1);
        assert!(
            report
                .diagnostics
                .iter()
                .any(|d| d.path == "locked.py" && d.problem.contains("unreadable")),
            "{:?}",
            report.diagnostics
        );
    }
}

#[test]
fn a_missing_repository_is_an_error() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = DataDir::new(tmp.path().join("data"));
    let err =
        index_repo(&tmp.path().join("nope"), &data, &opts("x"), &Silent).expect_err("must fail");
    assert!(err.to_string().ends_with("nope does not exist"), "{err}");
    // A file where the repository should be.
    let file = tmp.path().join("file.rs");
    std::fs::write(&file, "fn main() {}\n").expect("write");
    let err = index_repo(&file, &data, &opts("x"), &Silent).expect_err("must fail");
    assert!(
        err.to_string().contains("file.rs is not a directory"),
        "{err}"
    );
}

/// Expressions nested deeper than any real code (generated or hostile files)
/// are read without overflowing a stack: a long call chain in each language,
/// calls nested in calls, and a `macro_rules!` template of nested brackets.
/// The code beside them is still read.
#[test]
fn deep_expressions_are_read_and_the_code_beside_them_too() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("deep");
    std::fs::create_dir_all(repo.join("src")).expect("mkdir");
    let chain = |call: &str| call.repeat(3_000);
    let files = [
        (
            "src/chain.rs",
            format!(
                "fn g() {{}}\nfn f(x: X) {{\n    x{};\n    g();\n}}\n",
                chain(".a()")
            ),
        ),
        (
            "src/nested.rs",
            format!(
                "fn g(x: i32) -> i32 {{ x }}\nfn f() {{\n    {}1{};\n    g(2);\n}}\n",
                "g(".repeat(3_000),
                ")".repeat(3_000)
            ),
        ),
        (
            "src/template.rs",
            format!(
                "fn g() {{}}\nmacro_rules! m {{\n    () => {{ {}g(){} }};\n}}\nfn f() {{ m!(); g(); }}\n",
                "(".repeat(50_000),
                ")".repeat(50_000)
            ),
        ),
        (
            "chain.py",
            format!(
                "def g(): pass\ndef f(x):\n    x{}\n    g()\n",
                chain(".a()")
            ),
        ),
        (
            "chain.ts",
            format!(
                "function g() {{}}\nfunction f(x: any) {{\n  x{};\n  g();\n}}\n",
                chain(".a()")
            ),
        ),
        (
            "chain.go",
            format!(
                "package p\nfunc g() {{}}\nfunc f(x X) {{\n\tx{}\n\tg()\n}}\n",
                chain(".A()")
            ),
        ),
    ];
    for (path, text) in &files {
        std::fs::write(repo.join(path), text).expect("w");
    }
    let data = DataDir::new(tmp.path().join("data"));
    let report = index_repo(&repo, &data, &opts("deep"), &Silent).expect("run succeeds");
    assert_eq!(report.files, files.len(), "{:?}", report.diagnostics);
    let store = data.open_graph_read_only(&small_graph()).expect("open");
    // The plain call after each deep expression is found.
    let callers: Vec<String> = rows(
        &store,
        "MATCH (f:Symbol)-[r:CALLS]->(g:Symbol {name: 'g'}) WHERE f.name = 'f'
         RETURN DISTINCT f.path AS p ORDER BY p",
    )
    .iter()
    .map(|r| s(&r["p"]))
    .collect();
    assert_eq!(
        callers,
        [
            "chain.go",
            "chain.py",
            "chain.ts",
            "src/chain.rs",
            "src/nested.rs",
            "src/template.rs"
        ]
    );
}
