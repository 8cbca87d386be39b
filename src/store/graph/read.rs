//! Reading the graph: a ref's files and symbols, the hierarchy walks, counts.
//! Every statement is a file in `queries/`; rows are decoded here.

use std::collections::HashMap;

use kuzu::Value;

use super::rows::{
    Ancestor, ContainsEdge, Descendant, FileInfo, RefStatus, StoredFile, StoredSymbol, SymbolRow,
    SymbolWithRange,
};
use super::schema::q;
use super::{GraphError, GraphStore, Result, ref_id, s};

impl GraphStore {
    /// The manifests hash a ref was last indexed with ("" if unknown).
    pub fn layout_hash(&self, repo: &str, ref_name: &str) -> Result<String> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_layout_hash"))?;
        let mut rows = conn.execute(&mut stmt, vec![("id", s(&ref_id(repo, ref_name)))])?;
        Ok(rows.next().map(|r| string(&r[0])).unwrap_or_default())
    }

    /// Content hash of every file of a repo/ref, by path.
    pub fn file_hashes(&self, repo: &str, ref_name: &str) -> Result<HashMap<String, String>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("file_hashes"))?;
        let rows = conn.execute(&mut stmt, vec![("repo", s(repo)), ("ref", s(ref_name))])?;
        Ok(rows
            .map(|r| (string(&r[0]), string(&r[1])))
            .collect::<HashMap<_, _>>())
    }

    /// Every file and symbol of a repo/ref, for import resolution.
    pub fn load_ref(
        &self,
        repo: &str,
        ref_name: &str,
    ) -> Result<(Vec<StoredFile>, Vec<StoredSymbol>)> {
        let conn = self.conn()?;
        let params = || vec![("repo", s(repo)), ("ref", s(ref_name))];
        let mut stmt = conn.prepare(q("ref_files"))?;
        let files = conn
            .execute(&mut stmt, params())?
            .map(|r| StoredFile {
                id: string(&r[0]),
                path: string(&r[1]),
                language: string(&r[2]),
                module: string(&r[3]),
                package: string(&r[4]),
                imports: string(&r[5]),
            })
            .collect();
        let mut stmt = conn.prepare(q("ref_symbols"))?;
        let symbols = conn
            .execute(&mut stmt, params())?
            .map(|r| StoredSymbol {
                id: string(&r[0]),
                path: string(&r[1]),
                qualified_name: string(&r[2]),
                kind: string(&r[3]),
            })
            .collect();
        Ok((files, symbols))
    }

    /// The (repo, ref) pairs this database holds.
    pub fn refs(&self) -> Result<Vec<(String, String)>> {
        Ok(self
            .status()?
            .into_iter()
            .map(|s| (s.repo, s.ref_name))
            .collect())
    }

    /// Symbols named `name` in a repo/ref, optionally only in `path`.
    pub fn symbols_by_name(
        &self,
        repo: &str,
        ref_name: &str,
        name: &str,
        path: Option<&str>,
    ) -> Result<Vec<SymbolRow>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("symbols_by_name"))?;
        let rows = conn.execute(
            &mut stmt,
            vec![
                ("repo", s(repo)),
                ("ref", s(ref_name)),
                ("name", s(name)),
                ("path", s(path.unwrap_or(""))),
            ],
        )?;
        Ok(rows.map(|r| symbol_row(&r, 0)).collect())
    }

    /// The chain from the symbol's parent up to its file, nearest first.
    pub fn ancestors(&self, symbol_id: &str) -> Result<Vec<Ancestor>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ancestors"))?;
        let rows = conn.execute(&mut stmt, vec![("id", s(symbol_id))])?;
        Ok(rows
            .map(|r| {
                let depth = int(&r[13]);
                if string(&r[0]) == "File" {
                    Ancestor::File {
                        id: string(&r[1]),
                        path: string(&r[6]),
                        depth,
                    }
                } else {
                    Ancestor::Symbol(Box::new(symbol_row(&r, 1)), depth)
                }
            })
            .collect())
    }

    /// Every symbol nested under `symbol_id`, shallowest first.
    pub fn descendants(&self, symbol_id: &str) -> Result<Vec<Descendant>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("descendants"))?;
        let rows = conn.execute(&mut stmt, vec![("id", s(symbol_id))])?;
        Ok(rows
            .map(|r| Descendant {
                symbol: symbol_row(&r, 0),
                depth: int(&r[12]),
                parent_id: string(&r[13]),
            })
            .collect())
    }

    /// Counts per repo/ref.
    pub fn status(&self) -> Result<Vec<RefStatus>> {
        let conn = self.conn()?;
        let mut out: Vec<RefStatus> = conn
            .query(q("ref_counts"))?
            .map(|r| RefStatus {
                repo: string(&r[0]),
                ref_name: string(&r[1]),
                commit: string(&r[2]),
                indexed_at: string(&r[3]),
                files: int(&r[4]),
                ..RefStatus::default()
            })
            .collect();
        let find = |out: &mut Vec<RefStatus>, repo: &str, r: &str| {
            out.iter().position(|x| x.repo == repo && x.ref_name == r)
        };
        for r in conn.query(q("ref_symbol_counts"))? {
            if let Some(i) = find(&mut out, &string(&r[0]), &string(&r[1])) {
                out[i].symbols = int(&r[2]);
            }
        }
        for r in conn.query(q("ref_import_counts"))? {
            if let Some(i) = find(&mut out, &string(&r[0]), &string(&r[1])) {
                out[i].import_edges = int(&r[2]);
                out[i].unresolved_imports = int(&r[3]);
            }
        }
        Ok(out)
    }

    /// Every file of a repo/ref, ordered by path.
    pub fn files(&self, repo: &str, ref_name: &str) -> Result<Vec<FileInfo>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_file_list"))?;
        let rows = conn.execute(&mut stmt, vec![("repo", s(repo)), ("ref", s(ref_name))])?;
        Ok(rows.map(|r| file_info(&r)).collect())
    }

    /// When a repo/ref was last indexed (`None` if it is not in this graph).
    pub fn ref_indexed_at(&self, repo: &str, ref_name: &str) -> Result<Option<String>> {
        Ok(self.ref_version(repo, ref_name)?.map(|(at, _)| at))
    }

    /// (indexed_at, commit) of a repo/ref.
    pub fn ref_version(&self, repo: &str, ref_name: &str) -> Result<Option<(String, String)>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_indexed_at"))?;
        let mut rows = conn.execute(&mut stmt, vec![("id", s(&ref_id(repo, ref_name)))])?;
        Ok(rows.next().map(|r| (string(&r[0]), string(&r[1]))))
    }

    /// Every resolved File -> Symbol import edge of a repo/ref as (file path, symbol id).
    pub fn symbol_imports(&self, repo: &str, ref_name: &str) -> Result<Vec<(String, String)>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_symbol_imports"))?;
        let rows = conn.execute(&mut stmt, vec![("repo", s(repo)), ("ref", s(ref_name))])?;
        Ok(rows.map(|r| (string(&r[0]), string(&r[1]))).collect())
    }

    /// Every symbol of a repo/ref with its byte range, and every CONTAINS edge into a
    /// symbol as (parent id, child id, parent is a file): one ref's whole tree.
    /// Each symbol's direct parent: (parent id, symbol id, the parent is a file).
    pub fn symbol_parents(&self, repo: &str, ref_name: &str) -> Result<Vec<ContainsEdge>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_symbol_parents"))?;
        Ok(conn
            .execute(&mut stmt, vec![("repo", s(repo)), ("ref", s(ref_name))])?
            .map(|r| {
                (
                    string(&r[0]),
                    string(&r[1]),
                    matches!(r[2], Value::Bool(true)),
                )
            })
            .collect())
    }

    pub fn symbol_tree(
        &self,
        repo: &str,
        ref_name: &str,
    ) -> Result<(Vec<SymbolWithRange>, Vec<ContainsEdge>)> {
        let conn = self.conn()?;
        let params = || vec![("repo", s(repo)), ("ref", s(ref_name))];
        let mut stmt = conn.prepare(q("ref_symbol_rows"))?;
        let rows = conn
            .execute(&mut stmt, params())?
            .map(|r| {
                (
                    symbol_row(&r, 0),
                    int(&r[12]).max(0) as usize,
                    int(&r[13]).max(0) as usize,
                )
            })
            .collect();
        let mut stmt = conn.prepare(q("ref_symbol_parents"))?;
        let edges = conn
            .execute(&mut stmt, params())?
            .map(|r| {
                (
                    string(&r[0]),
                    string(&r[1]),
                    matches!(r[2], Value::Bool(true)),
                )
            })
            .collect();
        Ok((rows, edges))
    }

    /// The definitions a file imports (resolved edges only), with the import's line.
    pub fn imported_symbols(&self, file_id: &str) -> Result<Vec<(SymbolRow, i64)>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("file_imported_symbols"))?;
        let rows = conn.execute(&mut stmt, vec![("id", s(file_id))])?;
        Ok(rows.map(|r| (symbol_row(&r, 0), int(&r[12]))).collect())
    }

    /// Prepares (compiles, does not run) a query: used by tests to check every query file.
    pub fn prepare_check(&self, cypher: &str) -> Result<()> {
        let conn = self.conn()?;
        conn.prepare(cypher)
            .map(|_| ())
            .map_err(|e| GraphError::Invalid(e.to_string()))
    }
}

pub(super) fn string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null(_) => String::new(),
        other => other.to_string(),
    }
}

pub(super) fn int(v: &Value) -> i64 {
    match v {
        Value::Int64(i) => *i,
        Value::Int32(i) => i64::from(*i),
        Value::Int16(i) => i64::from(*i),
        Value::Int8(i) => i64::from(*i),
        Value::UInt64(i) => *i as i64,
        Value::UInt32(i) => i64::from(*i),
        Value::Int128(i) => *i as i64,
        Value::Double(d) => *d as i64,
        _ => 0,
    }
}

/// A symbol from 12 consecutive columns starting at `at` (the order of the
/// `RETURN` lists in `symbols_by_name`, `ancestors` and `descendants`).
pub(super) fn file_info(r: &[Value]) -> FileInfo {
    FileInfo {
        id: string(&r[0]),
        path: string(&r[1]),
        language: string(&r[2]),
        module: string(&r[3]),
        package: string(&r[4]),
        content_hash: string(&r[5]),
        line_count: int(&r[6]),
    }
}

pub(super) fn symbol_row(r: &[Value], at: usize) -> SymbolRow {
    SymbolRow {
        id: string(&r[at]),
        stable_id: string(&r[at + 1]),
        name: string(&r[at + 2]),
        kind: string(&r[at + 3]),
        qualified_name: string(&r[at + 4]),
        path: string(&r[at + 5]),
        language: string(&r[at + 6]),
        line_start: int(&r[at + 7]),
        line_end: int(&r[at + 8]),
        signature: string(&r[at + 9]),
        visibility: string(&r[at + 10]),
        doc: string(&r[at + 11]),
    }
}
