//! How names and paths are read: qualified names (`a::b::C`, `pkg.mod.f`,
//! `dir/file:Sym`) and which paths hold secondary code (tests, vendored,
//! generated). Pure functions of text; every stage that matches names uses them.

/// `qn` is `name` or ends with it right after a separator (`::`, `.`, `:`, `/`).
pub fn qualified_match(qn: &str, name: &str) -> bool {
    qn == name
        || qn
            .strip_suffix(name)
            .is_some_and(|head| head.ends_with([':', '.', '/']))
}

/// Whether a name carries a qualifier (`::`, `.` or `:`).
pub fn looks_qualified(name: &str) -> bool {
    name.contains("::") || name.contains('.') || name.contains(':')
}

/// The last segment of a qualified name.
pub fn last_segment(name: &str) -> &str {
    name.rsplit([':', '.']).next().unwrap_or(name)
}

/// Tests, vendored and generated code: found, but after the code itself.
pub fn is_secondary_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let file = lower.rsplit('/').next().unwrap_or(&lower);
    lower.split('/').any(|d| {
        matches!(
            d,
            "test"
                | "tests"
                | "testdata"
                | "__tests__"
                | "vendor"
                | "node_modules"
                | "third_party"
                | "generated"
        )
    }) || file.starts_with("test_")
        || file.ends_with("_test.go")
        || file.ends_with("_test.py")
        || file.contains(".test.")
        || file.contains(".spec.")
        || file.contains(".generated.")
        || file.ends_with(".d.ts")
}

/// A doc comment's summary: its first non-empty line, trimmed (what answers
/// that list symbols show of a doc).
pub fn doc_summary(doc: &str) -> &str {
    doc.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}
