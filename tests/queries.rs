//! Every query file compiles: Cypher against a fresh database with the schema,
//! tree-sitter queries against their grammars.

use cruxe::store::datadir::DataDir;
use cruxe::store::graph::{IMPORTS_GROUP, QUERY_FILES, grouped_statement};

use crate::common::small_graph;

#[test]
fn every_cypher_query_prepares_against_the_schema() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = DataDir::new(tmp.path().join("data"));
    data.build_aside(&small_graph(), |_| Ok(()))
        .expect("empty graph");
    let store = data.open_graph(&small_graph()).expect("open");
    assert!(QUERY_FILES.len() >= 15);
    // Bulk-load templates name a CSV file that cruxe writes at run time.
    let csv = tmp.path().join("empty.csv");
    std::fs::write(&csv, "").expect("csv");
    for (name, text) in QUERY_FILES {
        let text = text.replace("{csv}", &csv.to_string_lossy());
        // Grouped templates, as the writer expands them for each target table.
        let labels = ["Symbol", "File", "Package", "External"];
        let texts = match (text.contains("{i}"), text.contains("{label}")) {
            _ if text.contains("{REL}") => cruxe::store::graph::site_statement_variants(name)
                .into_iter()
                .map(|t| t.replace("{csv}", &csv.to_string_lossy()))
                .collect(),
            (true, _) => labels
                .map(|label| grouped_statement(&text, label, IMPORTS_GROUP))
                .to_vec(),
            (false, true) => labels.map(|label| text.replace("{label}", label)).to_vec(),
            (false, false) => vec![text],
        };
        for text in texts {
            store
                .prepare_check(&text)
                .unwrap_or_else(|e| panic!("queries/{name}.cypher: {e}\n{text}"));
        }
    }
}

#[test]
fn every_tree_sitter_query_compiles() {
    // compile_all compiles every .scm for every grammar (TS and TSX both).
    cruxe::extract::Extractor::new()
        .expect("extractor")
        .compile_all()
        .expect("queries compile");
    assert_eq!(cruxe::extract::QUERY_FILES.len(), 12);
}

#[test]
fn a_broken_query_is_reported_not_prepared() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = DataDir::new(tmp.path().join("data"));
    data.build_aside(&small_graph(), |_| Ok(()))
        .expect("empty graph");
    let store = data.open_graph(&small_graph()).expect("open");
    assert!(
        store
            .prepare_check("MATCH (s:NoSuchTable) RETURN s")
            .is_err()
    );
}

/// The example queries of the README and docs/QUERIES.md run against an indexed
/// fixture: a reader can paste them as they are.
#[test]
fn readme_example_queries_run() {
    let readme = [
        include_str!("../README.md"),
        include_str!("../docs/QUERIES.md"),
    ]
    .join("\n");
    let mut queries = Vec::new();
    let mut in_block = false;
    let mut current = String::new();
    for line in readme.lines() {
        if line.trim() == "```cypher" {
            in_block = true;
            continue;
        }
        if in_block && line.trim() == "```" {
            in_block = false;
            continue;
        }
        if !in_block {
            continue;
        }
        if line.trim_start().starts_with("//") || line.trim().is_empty() {
            if !current.trim().is_empty() {
                queries.push(std::mem::take(&mut current));
            }
            continue;
        }
        // A new MATCH at column 0 starts a new query.
        if line.starts_with("MATCH") && !current.trim().is_empty() {
            queries.push(std::mem::take(&mut current));
        }
        current.push_str(line);
        current.push('\n');
    }
    if !current.trim().is_empty() {
        queries.push(current);
    }
    assert!(queries.len() >= 10, "found {} queries", queries.len());
    let ix = crate::common::index_fixture("rust");
    let store = ix.store();
    for q in &queries {
        store
            .query_read_only(q, Vec::new(), 1000, 10_000)
            .unwrap_or_else(|e| panic!("README query failed: {e}\n{q}"));
    }
}

#[test]
fn calls_in_rust_macro_arguments_keep_their_lines_and_columns() {
    // A short first line (the re-parse writes a function head over a blank
    // stretch, never over a newline), a call in a one-line macro, calls in a
    // multi-line one, a macro inside a macro's arguments, and a `{…}` body
    // (items/statements, not read as an expression; the invocation itself
    // is a call of `m!`).
    let src = "//!\nfn f(x: &T) {\n    assert_eq!(x.a(), 1);\n    write!(\n        out,\n        \"{}\",\n        x.b(),\n        g(vec![h(1)]),\n    );\n    m! { x.skipped() }\n}\n";
    let ex = cruxe::extract::Extractor::new().expect("extractor");
    let mut parser = tree_sitter::Parser::new();
    let module = cruxe::model::ModuleInfo {
        module: "m".into(),
        package: "p".into(),
    };
    let got = ex.extract(&mut parser, cruxe::model::Language::Rust, src, &module);
    let mut calls: Vec<(String, u32, u32)> = got
        .sites
        .sites
        .iter()
        .filter(|s| s.kind == cruxe::model::sites::SiteKind::Call)
        .map(|s| (s.chain.join("."), s.line, s.col))
        .collect();
    calls.sort_by_key(|c| (c.1, c.2));
    let expected: Vec<(String, u32, u32)> = vec![
        ("x.a".into(), 3, 18),
        ("x.b".into(), 7, 11),
        ("g".into(), 8, 9),
        ("h".into(), 8, 16),
        // The invocation of a macro not the standard library's.
        ("m!".into(), 10, 5),
    ];
    assert_eq!(calls, expected);
}
