//! Reading the graph: a ref's files and symbols, the hierarchy walks, counts.
//! Every statement is a file in `queries/`; rows are decoded here.

use std::collections::HashMap;

use kuzu::Value;

use super::readers::Reader;
use super::rows::{
    Ancestor, ContainsEdge, FileInfo, NameRow, Nested, RefStatus, StoredFile, StoredSymbol,
    SymbolRow, SymbolWithRange,
};
use super::schema::q;
use super::write::list_of_strings;
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

    /// The chain from the symbol's parent up to its file, nearest first, by id.
    pub fn ancestors(&self, symbol_id: &str) -> Result<Vec<Ancestor>> {
        let id = symbol_id.to_string();
        self.read(move |r| {
            let rows = r.execute("ancestors", vec![("id", s(&id))])?;
            Ok(rows
                .map(|r| Ancestor {
                    id: string(&r[0]),
                    is_file: matches!(r[1], Value::Bool(true)),
                    depth: int(&r[2]),
                })
                .collect())
        })
    }

    /// Every symbol nested under each of `symbol_ids`, by id (one list per
    /// start, in the order given; the walks run side by side on the readers).
    pub fn descendants(&self, symbol_ids: Vec<String>) -> Result<Vec<Vec<Nested>>> {
        self.each_on_readers(symbol_ids, |r, id| {
            let rows = r.execute("descendants", vec![("id", s(&id))])?;
            Ok(vec![rows.map(|row| nested(&row, &id)).collect()])
        })
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

    /// Every symbol of a repo/ref with its byte range (what a search index is
    /// rebuilt from).
    pub fn symbol_rows(&self, repo: &str, ref_name: &str) -> Result<Vec<SymbolWithRange>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_symbol_rows"))?;
        let rows = conn.execute(&mut stmt, vec![("repo", s(repo)), ("ref", s(ref_name))])?;
        Ok(rows.map(|r| with_range(&r)).collect())
    }

    /// The definitions a file imports (resolved edges only), by id, with the
    /// import's line.
    pub fn imported_symbols(&self, file_id: &str) -> Result<Vec<(String, i64)>> {
        let id = file_id.to_string();
        self.read(move |r| {
            let rows = r.execute("file_imported_symbols", vec![("id", s(&id))])?;
            Ok(rows.map(|r| (string(&r[0]), int(&r[1]))).collect())
        })
    }

    /// Every symbol of the files `file_ids` with its place in its file's tree
    /// (`queries/file_forest.cypher`, a statement per file), in no particular
    /// order; a top-level symbol has no parent.
    pub fn file_trees(&self, file_ids: Vec<String>) -> Result<Vec<Nested>> {
        self.each_on_readers(file_ids, |r, file| {
            let rows = r.execute("file_forest", vec![("id", s(&file))])?;
            Ok(rows
                .map(|row| {
                    let mut n = nested(&row, &file);
                    if n.parent.as_deref() == Some(file.as_str()) {
                        n.parent = None;
                    }
                    n
                })
                .collect())
        })
    }

    /// The top-level symbols of the files `file_ids`, as (file id, symbol id),
    /// in no particular order (one statement).
    pub fn files_top_symbols(&self, file_ids: Vec<String>) -> Result<Vec<(String, String)>> {
        if file_ids.is_empty() {
            return Ok(Vec::new());
        }
        self.read(move |r| {
            let ids = list_of_strings(file_ids.into_iter());
            let rows = r.execute("files_top_symbols", vec![("ids", ids)])?;
            Ok(rows.map(|r| (string(&r[0]), string(&r[1]))).collect())
        })
    }

    /// The resolved import edges out of the files `file_ids`, as (file id,
    /// symbol id), in no particular order.
    pub fn files_imports(&self, file_ids: Vec<String>) -> Result<Vec<(String, String)>> {
        if file_ids.is_empty() {
            return Ok(Vec::new());
        }
        self.read(move |r| {
            let ids = list_of_strings(file_ids.into_iter());
            let rows = r.execute("files_imports", vec![("ids", ids)])?;
            Ok(rows.map(|r| (string(&r[0]), string(&r[1]))).collect())
        })
    }

    /// Symbols by id, with byte ranges (ids not in the graph are left out), in
    /// the order given: one primary-key lookup each, side by side on the readers.
    pub fn symbols_by_ids(&self, ids: Vec<String>) -> Result<Vec<SymbolWithRange>> {
        self.each_on_readers(ids, |r, id| {
            Ok(r.execute("symbol_by_id", vec![("id", s(&id))])?
                .next()
                .map(|row| with_range(&row))
                .into_iter()
                .collect())
        })
    }

    /// The enclosing symbol of each of `ids` that has one, as (symbol id,
    /// parent id), in the order given.
    pub fn parents(&self, ids: Vec<String>) -> Result<Vec<(String, String)>> {
        self.each_on_readers(ids, |r, id| {
            Ok(r.execute("symbol_parent", vec![("id", s(&id))])?
                .next()
                .map(|row| (id.clone(), string(&row[0])))
                .into_iter()
                .collect())
        })
    }

    /// Runs `one` for each item, the items split over the reader threads, and
    /// returns everything in the order of the items.
    fn each_on_readers<T: Send + 'static>(
        &self,
        items: Vec<String>,
        one: fn(&mut Reader<'_>, String) -> Result<Vec<T>>,
    ) -> Result<Vec<T>> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let per = items.len().div_ceil(self.reader_count().max(1));
        let works: Vec<_> = items
            .chunks(per.max(1))
            .map(|chunk| {
                let chunk = chunk.to_vec();
                move |r: &mut Reader<'_>| -> Result<Vec<T>> {
                    let mut out = Vec::new();
                    for item in chunk {
                        out.extend(one(r, item)?);
                    }
                    Ok(out)
                }
            })
            .collect();
        Ok(self.read_all(works)?.into_iter().flatten().collect())
    }

    /// The catalog's rows of the symbols of a repo/ref in a range of paths
    /// (`from` ≤ path < `to`; no `to`: no end), in no particular order.
    pub fn symbol_names(
        &self,
        repo: &str,
        ref_name: &str,
        from: &str,
        to: Option<&str>,
    ) -> Result<Vec<NameRow>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_symbol_names"))?;
        let params = vec![
            ("repo", s(repo)),
            ("ref", s(ref_name)),
            ("from", s(from)),
            ("to", s(to.unwrap_or(""))),
        ];
        let rows = conn.execute(&mut stmt, params)?;
        Ok(rows
            .map(|r| {
                let (row, byte_start, byte_end) = with_range(&r);
                NameRow::of(&row, byte_start as i64, byte_end as i64)
            })
            .collect())
    }

    /// How many resolved import edges point at each symbol of a repo/ref (symbols
    /// no edge points at are left out).
    pub fn import_in_degree(&self, repo: &str, ref_name: &str) -> Result<Vec<(String, u32)>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_import_in_degree"))?;
        let rows = conn.execute(&mut stmt, vec![("repo", s(repo)), ("ref", s(ref_name))])?;
        Ok(rows
            .map(|r| {
                (
                    string(&r[0]),
                    int(&r[1]).clamp(0, i64::from(u32::MAX)) as u32,
                )
            })
            .collect())
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

/// A walked row: (id, depth, the ids on the path), its parent the last id on
/// the path that is neither the row nor `start`, else `start`.
fn nested(r: &[Value], start: &str) -> Nested {
    let id = string(&r[0]);
    let parent = match &r[2] {
        Value::List(_, via) => via.iter().map(string).rfind(|v| *v != id && *v != start),
        _ => None,
    };
    Nested {
        depth: int(&r[1]),
        parent: Some(parent.unwrap_or_else(|| start.to_string())),
        id,
    }
}

/// A symbol's 12 columns followed by `byte_start` and `byte_end`.
fn with_range(r: &[Value]) -> SymbolWithRange {
    (
        symbol_row(r, 0),
        int(&r[12]).max(0) as usize,
        int(&r[13]).max(0) as usize,
    )
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
