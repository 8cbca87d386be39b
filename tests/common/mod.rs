//! Shared helpers: index a fixture into a fresh data dir, run read-only queries,
//! copy fixtures into scratch repositories, run the real `cruxe` binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cruxe::index::{IndexOptions, IndexReport, Silent, index_repo};
use cruxe::store::datadir::DataDir;
use cruxe::store::graph::{GraphConfig, GraphStore};
use serde_json::Value;

pub fn fixture(lang: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(lang)
}

/// Small resources: many tests run at once.
pub fn small_graph() -> GraphConfig {
    GraphConfig {
        buffer_pool_bytes: 128 * 1024 * 1024,
        threads: 1,
        max_db_bytes: 1 << 32,
        ..GraphConfig::default()
    }
}

pub fn opts(repo: &str) -> IndexOptions {
    IndexOptions {
        repo: Some(repo.to_string()),
        ref_name: Some("test".to_string()),
        graph: small_graph(),
        ..IndexOptions::default()
    }
}

/// A fresh data dir in a temp dir that lives as long as the returned guard.
pub struct Indexed {
    pub tmp: tempfile::TempDir,
    pub data: DataDir,
    pub report: IndexReport,
}

impl Indexed {
    pub fn store(&self) -> GraphStore {
        self.data
            .open_graph_read_only(&small_graph())
            .expect("open read-only")
    }

    /// Runs a read-only query and returns rows as JSON objects keyed by column.
    pub fn rows(&self, cypher: &str) -> Vec<serde_json::Map<String, Value>> {
        rows(&self.store(), cypher)
    }
}

pub fn rows(store: &GraphStore, cypher: &str) -> Vec<serde_json::Map<String, Value>> {
    let (r, _) = store
        .query_read_only(cypher, Vec::new(), 100_000, 0)
        .unwrap_or_else(|e| panic!("query failed: {e}\n{cypher}"));
    r.rows
        .into_iter()
        .map(|row| r.columns.iter().cloned().zip(row).collect())
        .collect()
}

pub fn index_fixture(lang: &str) -> Indexed {
    index_path(&fixture(lang), lang)
}

pub fn index_path(path: &Path, repo: &str) -> Indexed {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = DataDir::new(tmp.path().join("data"));
    let report = index_repo(path, &data, &opts(repo), &Silent).expect("index");
    Indexed { tmp, data, report }
}

/// Copies a directory tree (files only) into `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in walk_files(from) {
        let rel = entry.strip_prefix(from).expect("prefix");
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
        std::fs::copy(&entry, &dest).expect("copy");
    }
}

fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// The binary under test: this build's, or `CRUXE_TEST_BIN` (to run a test
/// against another build, e.g. to see it fail before a fix).
pub fn cruxe_bin() -> String {
    std::env::var("CRUXE_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_cruxe").to_string())
}

pub fn cruxe(args: &[&str]) -> Output {
    Command::new(cruxe_bin())
        .args(args)
        .env("CRUXE_BUFFER_POOL_MB", "128")
        .env("CRUXE_THREADS", "1")
        .output()
        .expect("run cruxe")
}

/// `cruxe` run in the folder `dir`.
pub fn cruxe_in(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(cruxe_bin())
        .current_dir(dir)
        .args(args)
        .env("CRUXE_BUFFER_POOL_MB", "128")
        .env("CRUXE_THREADS", "1")
        .output()
        .expect("run cruxe")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The value of a JSON cell as a plain string (numbers printed, null empty).
pub fn s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
