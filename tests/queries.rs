//! Every query file compiles: Cypher against a fresh database with the schema,
//! tree-sitter queries against their grammars.

use cruxe::datadir::DataDir;
use cruxe::graph::QUERY_FILES;

use crate::common::small_graph;

#[test]
fn every_cypher_query_prepares_against_the_schema() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = DataDir::new(tmp.path().join("data"));
    let store = data.open_graph(&small_graph()).expect("open");
    assert!(QUERY_FILES.len() >= 15);
    for (name, text) in QUERY_FILES {
        store
            .prepare_check(text)
            .unwrap_or_else(|e| panic!("queries/{name}.cypher: {e}"));
    }
}

#[test]
fn every_tree_sitter_query_compiles() {
    // Extractor::new compiles every .scm for every grammar (TS and TSX both).
    cruxe::extract::Extractor::new().expect("queries compile");
    assert_eq!(cruxe::extract::QUERY_FILES.len(), 4);
}

#[test]
fn a_broken_query_is_reported_not_prepared() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = DataDir::new(tmp.path().join("data"));
    let store = data.open_graph(&small_graph()).expect("open");
    assert!(store.prepare_check("MATCH (s:NoSuchTable) RETURN s").is_err());
}
