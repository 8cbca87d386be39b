//! `cruxe impact --coverage`: the tests a per-test coverage report has
//! running the changed functions, against the graph's. The report is
//! recorded by real pytest and coverage.py runs (`make test` installs them
//! beside the MCP SDK).

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::{cruxe, stderr, stdout};
use crate::mcp::python;

/// `entry(0)` never calls `special`; `entry(1)` does. Each test takes one.
const MODULE: &str = "\
def common(x):
    return x + 1


def special(x):
    return x * 10


def entry(flag):
    if flag:
        return special(flag)
    return common(flag)
";

const TESTS: &str = "\
from pkg.m import entry


def test_plain():
    assert entry(0) == 1


def test_special():
    assert entry(1) == 10
";

fn run(dir: &Path, program: &str, args: &[&str]) -> Output {
    let o = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("COVERAGE_FILE", dir.join(".coverage"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        o.status.success(),
        "{program} {args:?}: {}{}",
        stdout(&o),
        stderr(&o)
    );
    o
}

fn git(dir: &Path, args: &[&str]) {
    let mut all = vec!["-c", "user.email=t@t", "-c", "user.name=t"];
    all.extend_from_slice(args);
    run(dir, "git", &all);
}

/// A committed project, its tests run once under coverage with per-test
/// contexts, the report written to `cov.json` (left untracked), indexed.
fn recorded(tmp: &Path) -> (std::path::PathBuf, String) {
    let repo = tmp.join("proj");
    std::fs::create_dir_all(repo.join("pkg")).expect("pkg");
    std::fs::create_dir_all(repo.join("tests")).expect("tests");
    std::fs::write(repo.join("pkg/__init__.py"), "").expect("init");
    std::fs::write(repo.join("pkg/m.py"), MODULE).expect("module");
    std::fs::write(repo.join("tests/test_m.py"), TESTS).expect("tests");
    std::fs::write(repo.join(".gitignore"), ".coverage\n").expect("ignore");
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let py = python();
    run(
        &repo,
        &py,
        &[
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--cov=pkg",
            "--cov-context=test",
            "--cov-report=",
            "tests",
        ],
    );
    run(
        &repo,
        &py,
        &[
            "-m",
            "coverage",
            "json",
            "--show-contexts",
            "-q",
            "-o",
            "cov.json",
        ],
    );
    let data = tmp.join("data").to_string_lossy().into_owned();
    let o = cruxe(&["index", &repo.to_string_lossy(), "--data", &data]);
    assert!(o.status.success(), "{}", stderr(&o));
    (repo, data)
}

fn impact(data: &str, extra: &[&str]) -> Output {
    let mut args = vec!["impact", "--diff", "HEAD", "--depth", "30", "--run-ids"];
    args.extend_from_slice(&["--data", data]);
    args.extend_from_slice(extra);
    cruxe(&args)
}

/// The graph names both tests for an edit of `special` (each reaches it
/// through `entry`); the report names the one that ran it, exit 4
/// (measured). The edit adds a line above the function's body, so the
/// report's lines are the base's: the answer maps them through the diff,
/// whether or not the edit was indexed.
#[test]
fn coverage_names_the_tests_that_ran_the_changed_function() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (repo, data) = recorded(tmp.path());
    let m = repo.join("pkg/m.py");
    let edited = MODULE.replace(
        "def special(x):\n",
        "def special(x):\n    assert x is not None\n",
    );
    std::fs::write(&m, &edited).expect("edit");
    // Not indexed again: the index has the base's lines.
    for reindex in [false, true] {
        if reindex {
            let o = cruxe(&["index", &repo.to_string_lossy(), "--data", &data]);
            assert!(o.status.success(), "{}", stderr(&o));
        }
        let graph = impact(&data, &[]);
        assert_eq!(graph.status.code(), Some(0), "{}", stderr(&graph));
        assert_eq!(
            stdout(&graph),
            "tests/test_m.py::test_plain\ntests/test_m.py::test_special\n",
            "{}",
            stderr(&graph)
        );
        let measured = impact(&data, &["--coverage", "cov.json"]);
        assert_eq!(measured.status.code(), Some(4), "{}", stderr(&measured));
        assert_eq!(
            stdout(&measured),
            "tests/test_m.py::test_special\n",
            "reindexed: {reindex}; {}",
            stderr(&measured)
        );
    }
    // The answer says where its tests came from, and how far to trust them.
    let o = impact(&data, &["--coverage", "cov.json", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["tests_from"], "coverage", "{v}");
    assert_eq!(v["tests_completeness"], "measured", "{v}");
    assert_eq!(v["completeness"], "exact", "{v}");
    assert_eq!(v["tests"][0]["qualified_name"], "tests.test_m.test_special");

    // `common` ran in `test_plain` only.
    std::fs::write(
        &m,
        MODULE.replace("return x + 1", "y = 1\n    return x + y"),
    )
    .expect("edit");
    let o = cruxe(&["index", &repo.to_string_lossy(), "--data", &data]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = impact(&data, &["--coverage", "cov.json"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert_eq!(stdout(&o), "tests/test_m.py::test_plain\n");
}

/// What a report cannot answer for leaves the graph's tests in place: a
/// change outside any function (run at import), a file not in the report.
#[test]
fn coverage_leaves_the_graph_answer_where_it_cannot_answer() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (repo, data) = recorded(tmp.path());
    // Top-level code, then `special` too: the graph's tests stand, the
    // report's added to them, and the exit status is the graph's.
    std::fs::write(
        repo.join("pkg/m.py"),
        format!(
            "print(\"loaded\")\n\n\n{}",
            MODULE.replace("return x * 10", "return x * 11")
        ),
    )
    .expect("edit");
    let o = cruxe(&["index", &repo.to_string_lossy(), "--data", &data]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = impact(&data, &["--coverage", "cov.json", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["tests_from"], "graph and coverage", "{v}");
    assert_eq!(v["tests_completeness"], v["completeness"], "{v}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("cannot answer for") && notes.contains("pkg/m.py:1"),
        "{notes}"
    );
    let o = impact(&data, &["--coverage", "cov.json"]);
    assert_ne!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("tests/test_m.py::test_special\n"),
        "{}",
        stdout(&o)
    );
}

/// An LCOV report with a `TN:` per test (Go's, cargo-llvm-cov's, istanbul's
/// once converted): a test is named by its function's name.
#[test]
fn coverage_reads_lcov_with_a_record_per_test() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (repo, data) = recorded(tmp.path());
    // As a per-test run would write it: `special`'s body (line 6) ran in
    // `test_special`, `common`'s (2) in `test_plain`.
    std::fs::write(
        repo.join("cov.lcov"),
        "TN:test_plain\nSF:pkg/m.py\nDA:2,1\nDA:6,0\nend_of_record\n\
         TN:test_special\nSF:pkg/m.py\nDA:2,0\nDA:6,1\nend_of_record\n",
    )
    .expect("lcov");
    std::fs::write(
        repo.join("pkg/m.py"),
        MODULE.replace("return x * 10", "return x * 11"),
    )
    .expect("edit");
    let o = impact(&data, &["--coverage", "cov.lcov"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert_eq!(stdout(&o), "tests/test_m.py::test_special\n");
}

/// A report outside the repository, missing, or without per-test contexts
/// is a clear error (exit 1), not an answer.
#[test]
fn coverage_reports_that_cannot_be_used_are_errors() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (repo, data) = recorded(tmp.path());
    std::fs::write(
        repo.join("pkg/m.py"),
        MODULE.replace("return x * 10", "return x * 11"),
    )
    .expect("edit");
    let outside = tmp.path().join("elsewhere.json");
    std::fs::copy(repo.join("cov.json"), &outside).expect("copy");
    let flat = repo.join("flat.json");
    std::fs::write(&flat, r#"{"meta": {"show_contexts": false}, "files": {}}"#).expect("flat");
    let cases = [
        (
            outside.to_string_lossy().into_owned(),
            "outside the repository",
        ),
        ("no-such.json".to_string(), "cannot be read"),
        ("flat.json".to_string(), "--cov-context=test"),
        (
            "pkg/m.py".to_string(),
            "neither coverage.py's JSON nor LCOV",
        ),
    ];
    for (report, said) in cases {
        let o = impact(&data, &["--coverage", &report]);
        assert_eq!(o.status.code(), Some(1), "{report}: {}", stdout(&o));
        assert!(stderr(&o).contains(said), "{report}: {}", stderr(&o));
    }
}
