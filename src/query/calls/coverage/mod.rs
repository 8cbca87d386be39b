//! Per-test coverage reports, for `analyze_impact`'s `coverage`: which tests
//! ran each line when the report was recorded. A test that never ran a
//! changed function cannot fail because of it, so where the report measured
//! a changed function the tests to run are the ones that ran it, not every
//! test a static walk reaches (most of which take other paths: see
//! docs/BENCHMARKS.md, "How far a static answer can go").
//!
//! Two formats, told apart by their first byte:
//! - coverage.py's JSON report with contexts (`pytest --cov --cov-context=test`,
//!   then `coverage json --show-contexts`): each line's contexts are the
//!   pytest node ids that ran it (`tests/test_a.py::TestA::test_b|run`), the
//!   empty context being code run outside any test (imports, collection);
//! - LCOV with a `TN:` record per test (`TN:`, `SF:`, `DA:line,count`,
//!   `end_of_record`), as per-test runs of Go's, cargo-llvm-cov's or
//!   istanbul's coverage give once converted.
//!
//! The report is read from inside the repository only, and at most
//! [`MAX_BYTES`] of it.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use std::io::BufRead;

use super::super::answers::TestHit;
use super::super::error::ToolError;
use super::super::view::View;
use super::diff::Change;
use super::tests::{is_test_symbol, run_id};
use crate::store::catalog::Catalog;

mod python;

/// The largest report read (coverage.py's JSON for ~1,600 tests of a
/// 10k-line package is ~5 MB).
pub const MAX_BYTES: u64 = 256 << 20;

/// A test id for code run outside any test.
const OUTSIDE: u32 = u32::MAX;

/// One report, by repo-relative path.
pub struct Report {
    /// Each measured file's lines and the tests (indexes into `tests`, or
    /// [`OUTSIDE`]) that ran them.
    lines: HashMap<String, HashMap<i64, Vec<u32>>>,
    /// coverage.py: the lines each file's functions hold (their bodies, not
    /// their `def` lines, which run at import). LCOV: none, every line counts.
    bodies: Option<HashMap<String, HashSet<i64>>>,
    tests: Vec<String>,
}

/// Test ids by index, each kept once however often the report repeats it.
#[derive(Default)]
struct Interner {
    ids: HashMap<String, u32>,
    names: Vec<String>,
}

impl Interner {
    /// `id`'s index; [`OUTSIDE`] for the empty id (code run outside any test).
    fn index(&mut self, id: &str) -> u32 {
        if id.is_empty() {
            return OUTSIDE;
        }
        if let Some(&i) = self.ids.get(id) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(id.to_string());
        self.ids.insert(id.to_string(), i);
        i
    }
}

/// Why the report cannot say which tests run a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unmeasured {
    /// The file is not in the report.
    File,
    /// No line of the function is one the report measured.
    NoLines,
    /// A line of it ran outside any test (at import, in collection): an
    /// edit there can break every test that imports it.
    Outside,
}

impl Unmeasured {
    pub fn reason(self) -> &'static str {
        match self {
            Unmeasured::File => "its file is not in the coverage report",
            Unmeasured::NoLines => "the report measured none of its lines",
            Unmeasured::Outside => "the report has it run outside any test (at import)",
        }
    }
}

impl Report {
    /// Reads the report at `path` (relative to `root`, or absolute inside it).
    pub fn read(root: &Path, path: &str) -> Result<Report, ToolError> {
        let bad = |why: String| ToolError::invalid_input(format!("coverage `{path}`: {why}"));
        let root = root
            .canonicalize()
            .map_err(|e| bad(format!("the repository's root cannot be read: {e}")))?;
        let real = root
            .join(path)
            .canonicalize()
            .map_err(|e| bad(format!("cannot be read: {e}")))?;
        if !real.starts_with(&root) {
            return Err(bad(
                "is outside the repository; put the report inside it".into()
            ));
        }
        let size = std::fs::metadata(&real)
            .map_err(|e| bad(format!("cannot be read: {e}")))?
            .len();
        if size > MAX_BYTES {
            return Err(bad(format!(
                "is {size} bytes; at most {MAX_BYTES} are read"
            )));
        }
        let file = std::fs::File::open(&real).map_err(|e| bad(format!("cannot be read: {e}")))?;
        let mut input = std::io::BufReader::new(file);
        let root_text = root.to_string_lossy().into_owned();
        // JSON opens with `{`; LCOV with a record's key.
        let json = loop {
            let buf = input
                .fill_buf()
                .map_err(|e| bad(format!("cannot be read: {e}")))?;
            match buf.iter().position(|b| !b.is_ascii_whitespace()) {
                Some(at) => break buf[at] == b'{',
                None if buf.is_empty() => break false,
                None => {
                    let n = buf.len();
                    input.consume(n);
                }
            }
        };
        let report = if json {
            python::read(input, &root_text)
        } else {
            Report::from_lcov(input, &root_text)
        };
        report.map_err(bad)
    }

    /// Reads LCOV line by line.
    fn from_lcov(input: impl BufRead, root: &str) -> Result<Report, String> {
        let mut report = Report::empty(false);
        let mut ids = Interner::default();
        let (mut test, mut file): (Option<u32>, Option<String>) = (None, None);
        let mut records = 0;
        for (n, line) in input.lines().enumerate() {
            let line = line.map_err(|e| format!("line {}: {e}", n + 1))?;
            let line = line.trim();
            if let Some(name) = line.strip_prefix("TN:") {
                test = (!name.is_empty()).then(|| ids.index(name));
            } else if let Some(p) = line.strip_prefix("SF:") {
                file = Some(relative(p, root));
            } else if let Some(da) = line.strip_prefix("DA:") {
                let mut parts = da.split(',');
                let (Some(l), Some(count)) = (parts.next(), parts.next()) else {
                    return Err(format!("line {}: `DA:` needs a line and a count", n + 1));
                };
                let (Ok(l), Ok(count)) = (l.parse::<i64>(), count.parse::<f64>()) else {
                    return Err(format!("line {}: `{line}` is not `DA:line,count`", n + 1));
                };
                let Some(f) = &file else {
                    return Err(format!("line {}: `DA:` before any `SF:`", n + 1));
                };
                let ran = report
                    .lines
                    .entry(f.clone())
                    .or_default()
                    .entry(l)
                    .or_default();
                if count > 0.0 {
                    ran.push(test.unwrap_or(OUTSIDE));
                }
            } else if line == "end_of_record" {
                file = None;
                records += 1;
            }
        }
        if records == 0 {
            return Err("is neither coverage.py's JSON nor LCOV (no `end_of_record`)".into());
        }
        report.tests = ids.names;
        if report.tests.is_empty() {
            return Err("names no test (`TN:` records): record one test at a time".into());
        }
        Ok(report)
    }

    fn empty(bodies: bool) -> Report {
        Report {
            lines: HashMap::new(),
            bodies: bodies.then(HashMap::new),
            tests: Vec::new(),
        }
    }

    /// The tests that ran any line of `path`'s `first..=last` (the base's
    /// lines of a function), by the ids the report gives them.
    pub fn tests_of(
        &self,
        path: &str,
        first: i64,
        last: i64,
    ) -> Result<BTreeSet<&str>, Unmeasured> {
        let lines = self.lines.get(path).ok_or(Unmeasured::File)?;
        let body = self.bodies.as_ref().map(|b| b.get(path));
        let mut measured = false;
        let mut out = BTreeSet::new();
        // Without the report's own function bodies (LCOV), the header line
        // is left out: the statement around a function value runs when its
        // module loads (`const f = () => {`), in every test that imports it.
        let first = if body.is_none() { first + 1 } else { first };
        for line in first..=last {
            if let Some(Some(body)) = body
                && !body.contains(&line)
            {
                continue;
            }
            let Some(ran) = lines.get(&line) else {
                // coverage.py lists a line only where it ran.
                measured |= body.is_some();
                continue;
            };
            measured = true;
            for &t in ran {
                if t == OUTSIDE {
                    return Err(Unmeasured::Outside);
                }
                out.insert(self.tests[t as usize].as_str());
            }
        }
        if measured {
            Ok(out)
        } else {
            Err(Unmeasured::NoLines)
        }
    }
}

/// A report's path as the index has it: relative to the repository.
fn relative(path: &str, root: &str) -> String {
    let p = path
        .strip_prefix(root)
        .map_or(path, |p| p.trim_start_matches('/'));
    p.strip_prefix("./").unwrap_or(p).to_string()
}

/// The tests a report has running a change's functions.
pub(super) struct Selection {
    tests: Vec<TestHit>,
    /// Changed symbols the report answered for.
    answered: usize,
    /// What it could not answer for, and why (`name: reason`).
    unanswered: Vec<String>,
}

/// Picks, for each changed function, the tests the report has running its
/// lines (the base's lines, through the diff's hunks). A changed test is its
/// own test. Anything else (a type, a constant, top-level code, a deleted
/// file, a function the report did not measure) it cannot answer for.
pub(super) fn select(c: &View, cat: &Catalog, report: &Report, change: &Change) -> Selection {
    let mut picked = Selection {
        tests: Vec::new(),
        answered: 0,
        unanswered: Vec::new(),
    };
    let mut listed: HashSet<String> = HashSet::new();
    let mut push = |tests: &mut Vec<TestHit>, hit: TestHit| {
        if listed.insert(hit.run.clone()) {
            tests.push(hit);
        }
    };
    for f in change.files.iter().filter(|f| f.deleted) {
        picked.unanswered.push(format!("{}: deleted", f.path));
    }
    for path in &change.indexed_neither {
        picked.unanswered.push(format!(
            "{path}: indexed as neither the working tree nor the base has it (index it again)"
        ));
    }
    for (path, line) in &change.outside {
        picked
            .unanswered
            .push(format!("{path}:{line}: a change outside any function"));
    }
    for &i in &change.symbols {
        let e = cat.entry(i);
        if is_test_symbol(e.kind(), e.name(), e.qualified_name(), e.path()) {
            push(&mut picked.tests, hit(c, cat, i));
            picked.answered += 1;
            continue;
        }
        if !matches!(e.kind(), "fn" | "method") {
            picked.unanswered.push(format!(
                "{}: a {}, not a function a test runs",
                e.qualified_name(),
                e.kind()
            ));
            continue;
        }
        // The symbol's lines are the working tree's, unless the file was
        // not indexed again since the base.
        let diffed = change.files.iter().find(|f| f.path == e.path());
        let (first, last) = match diffed {
            Some(f) if !change.indexed_base.contains(e.path()) => (
                f.base_line(e.line_start(), false),
                f.base_line(e.line_end(), true),
            ),
            _ => (e.line_start(), e.line_end()),
        };
        match report.tests_of(e.path(), first, last) {
            Ok(ids) => {
                picked.answered += 1;
                for id in ids {
                    for h in tests_named(c, cat, id) {
                        push(&mut picked.tests, h);
                    }
                }
            }
            Err(why) => picked
                .unanswered
                .push(format!("{}: {}", e.qualified_name(), why.reason())),
        }
    }
    picked
}

impl Selection {
    /// Puts the picked tests in the answer: alone when the report answered
    /// for the whole change (`measured`), else beside the graph's. Returns
    /// `tests_from` and `tests_completeness`.
    pub(super) fn apply(
        self,
        tests: &mut Vec<TestHit>,
        completeness: &'static str,
        notes: &mut Vec<String>,
    ) -> (&'static str, &'static str) {
        if self.unanswered.is_empty() && self.answered > 0 {
            *tests = self.tests;
            notes.push(format!(
                "tests: the ones the coverage report has running the {} changed function(s); complete if it was recorded on the diff's base",
                self.answered
            ));
            return ("coverage", "measured");
        }
        let shown: Vec<&str> = self.unanswered.iter().take(3).map(String::as_str).collect();
        notes.push(format!(
            "tests: from the graph, since the coverage report cannot answer for {} part(s) of the change ({}{})",
            self.unanswered.len(),
            shown.join("; "),
            if self.unanswered.len() > shown.len() { "; …" } else { "" }
        ));
        if self.answered == 0 {
            return ("graph", completeness);
        }
        let listed: HashSet<String> = tests.iter().map(|t| t.run.clone()).collect();
        tests.extend(self.tests.into_iter().filter(|t| !listed.contains(&t.run)));
        ("graph and coverage", completeness)
    }
}

/// A test of the index as the answer lists it.
fn hit(c: &View, cat: &Catalog, i: usize) -> TestHit {
    let e = cat.entry(i);
    TestHit {
        path: e.path().to_string(),
        name: Some(e.name().to_string()),
        qualified_name: Some(e.qualified_name().to_string()),
        line_start: Some(e.line_start()),
        distance: 0,
        run: run_id(c, cat, e.path(), Some(i)),
    }
}

/// The tests a report's id names: a pytest node id (`path::Class::name`) is
/// the function so placed; a test file's path, the file; a bare name (LCOV's
/// `TN:`) every test function so named. An id the index has nothing for is
/// listed as given.
fn tests_named(c: &View, cat: &Catalog, id: &str) -> Vec<TestHit> {
    let is_test = |i: &usize| {
        let e = cat.entry(*i);
        is_test_symbol(e.kind(), e.name(), e.qualified_name(), e.path())
    };
    let Some((path, rest)) = id.split_once("::") else {
        // A test file (vitest, jest: one run per file).
        if matches!(c.file(id), Ok(Some(_))) {
            return vec![TestHit {
                path: id.to_string(),
                name: None,
                qualified_name: None,
                line_start: None,
                distance: 0,
                run: run_id(c, cat, id, None),
            }];
        }
        let found: Vec<TestHit> = cat
            .named(id)
            .into_iter()
            .filter(is_test)
            .map(|i| hit(c, cat, i))
            .collect();
        return if found.is_empty() {
            vec![unknown(id, "", id)]
        } else {
            found
        };
    };
    let mut parts: Vec<&str> = rest.split("::").collect();
    let name = parts.pop().unwrap_or(rest);
    let class = parts.last().copied();
    let found = cat.in_file(path).into_iter().filter(is_test).find(|&i| {
        cat.entry(i).name() == name
            && class.is_none_or(|k| cat.parent(i).is_some_and(|p| cat.entry(p).name() == k))
    });
    match found {
        Some(i) => vec![hit(c, cat, i)],
        None => vec![unknown(id, path, name)],
    }
}

fn unknown(id: &str, path: &str, name: &str) -> TestHit {
    TestHit {
        path: path.to_string(),
        name: Some(name.to_string()),
        qualified_name: None,
        line_start: None,
        distance: 0,
        run: id.to_string(),
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn lcov_lines_are_the_tests_that_ran_them() {
        let lcov = "TN:TestA\nSF:/r/a.go\nDA:3,1\nDA:4,0\nend_of_record\n\
                    TN:TestB\nSF:a.go\nDA:3,2\nDA:9,1\nend_of_record\n";
        let r = Report::from_lcov(lcov.as_bytes(), "/r").unwrap();
        let tests = |a, b| {
            r.tests_of("a.go", a, b)
                .map(|s| s.into_iter().collect::<Vec<_>>())
        };
        assert_eq!(tests(1, 5), Ok(vec!["TestA", "TestB"]));
        // A function's first line is its header, run where it is declared:
        // left out, so 3..=4 is measured and run by no test.
        assert_eq!(tests(3, 4), Ok(vec![]));
        assert_eq!(tests(8, 9), Ok(vec!["TestB"]));
        assert_eq!(tests(9, 9), Err(Unmeasured::NoLines));
        assert_eq!(tests(20, 30), Err(Unmeasured::NoLines));
        assert_eq!(r.tests_of("b.go", 1, 5), Err(Unmeasured::File));
        assert!(Report::from_lcov("SF:a.go\nDA:1,1\n".as_bytes(), "/r").is_err());
    }

    #[test]
    fn coverage_py_bodies_exclude_the_lines_run_at_import() {
        // `def f` (1) ran at import; its body (2) ran in one test; `g` (4,
        // 5) runs at import too: its body is not a test's to say.
        let json = r#"{"meta": {"show_contexts": true}, "files": {"m.py": {
            "contexts": {"1": [""], "2": ["t.py::T::test_a[x]|run", "t.py::test_b|setup"],
                         "4": [""], "5": [""]},
            "functions": {"f": {"executed_lines": [2], "missing_lines": [3]},
                          "g": {"executed_lines": [5], "missing_lines": []},
                          "": {"executed_lines": [1, 4], "missing_lines": []}}}}}"#;
        let r = python::read(json.as_bytes(), "/r").unwrap();
        let f: Vec<&str> = r.tests_of("m.py", 1, 3).unwrap().into_iter().collect();
        assert_eq!(f, vec!["t.py::T::test_a", "t.py::test_b"]);
        assert_eq!(r.tests_of("m.py", 4, 5), Err(Unmeasured::Outside));
        let no_contexts = r#"{"meta": {"show_contexts": false}, "files": {}}"#;
        let err = python::read(no_contexts.as_bytes(), "/r").err().unwrap();
        assert!(err.contains("--cov-context=test"), "{err}");
    }
}
