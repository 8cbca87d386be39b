//! Reading the graph: a ref's files and symbols, the hierarchy walks, counts.
//! Every statement is a file in `queries/`; rows are decoded here.

use std::collections::HashMap;

use kuzu::Value;

use super::readers::Reader;
use super::rows::{
    Ancestor, ContainsEdge, Descendant, FileInfo, ForestRow, LookedUp, NameRow, ParentRow,
    RefStatus, StoredFile, StoredSymbol, SymbolRow, SymbolWithRange,
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

    /// The chain from the symbol's parent up to its file, nearest first.
    pub fn ancestors(&self, symbol_id: &str) -> Result<Vec<Ancestor>> {
        let id = symbol_id.to_string();
        self.read(move |r| {
            let rows = r.execute("ancestors", vec![("id", s(&id))])?;
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
        })
    }

    /// Every symbol nested under `symbol_id`, shallowest first.
    pub fn descendants(&self, symbol_id: &str) -> Result<Vec<Descendant>> {
        let id = symbol_id.to_string();
        self.read(move |r| {
            let rows = r.execute("descendants", vec![("id", s(&id))])?;
            Ok(rows
                .map(|r| Descendant {
                    symbol: symbol_row(&r, 0),
                    depth: int(&r[12]),
                    parent_id: match &r[13] {
                        kuzu::Value::List(_, via) => via.last().map(string),
                        _ => None,
                    }
                    .unwrap_or_else(|| id.clone()),
                })
                .collect())
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

    /// The definitions a file imports (resolved edges only), with the import's line.
    pub fn imported_symbols(&self, file_id: &str) -> Result<Vec<(SymbolRow, i64)>> {
        let id = file_id.to_string();
        self.read(move |r| {
            let rows = r.execute("file_imported_symbols", vec![("id", s(&id))])?;
            Ok(rows.map(|r| (symbol_row(&r, 0), int(&r[12]))).collect())
        })
    }

    /// Every symbol of the files `file_ids` with its place in its file's tree
    /// (`queries/file_forest.cypher`), in no particular order.
    pub fn file_forest(&self, file_ids: Vec<String>) -> Result<Vec<ForestRow>> {
        if file_ids.is_empty() {
            return Ok(Vec::new());
        }
        // Split over the readers: one statement per file, each independent.
        let per = file_ids.len().div_ceil(self.reader_count().max(1));
        let works: Vec<_> = file_ids
            .chunks(per.max(1))
            .map(|chunk| {
                let chunk = chunk.to_vec();
                move |r: &mut Reader<'_>| forest_of(r, chunk)
            })
            .collect();
        Ok(self.read_all(works)?.into_iter().flatten().collect())
    }

    /// The first `limit` symbols of a file with byte ranges, in position order
    /// (path, line, start, longest first): depth first, as nested.
    pub fn file_symbols(&self, file_id: &str, limit: usize) -> Result<Vec<SymbolWithRange>> {
        let id = file_id.to_string();
        let mut rows = self.read(move |r| {
            let params = vec![
                ("id", Value::String(id)),
                ("limit", Value::Int64(limit as i64)),
            ];
            let rows = r.execute("file_symbols", params)?;
            Ok(rows.map(|r| with_range(&r)).collect::<Vec<_>>())
        })?;
        sort_by_position(&mut rows);
        Ok(rows)
    }

    /// The first `limit` top-level symbols of the files `file_ids` with byte
    /// ranges, in position order.
    pub fn files_top_symbols(
        &self,
        file_ids: Vec<String>,
        limit: usize,
    ) -> Result<Vec<SymbolWithRange>> {
        if file_ids.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let mut rows = self.read(move |r| {
            let ids = list_of_strings(file_ids.into_iter());
            let params = vec![("ids", ids), ("limit", Value::Int64(limit as i64))];
            let rows = r.execute("files_top_symbols", params)?;
            Ok(rows.map(|r| with_range(&r)).collect::<Vec<_>>())
        })?;
        sort_by_position(&mut rows);
        Ok(rows)
    }

    /// The resolved import edges out of the files `file_ids`, as (file id,
    /// symbol id), one per edge, in no particular order.
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

    /// Symbols by id, with byte ranges and, with `parents`, the enclosing
    /// symbol (ids not in the graph are left out), in the order given: one
    /// primary-key lookup each, on one reader.
    pub fn symbols_by_ids(&self, ids: Vec<String>, parents: bool) -> Result<Vec<LookedUp>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        // Split over the readers: the lookups are independent.
        let per = ids.len().div_ceil(self.reader_count().max(1)).max(4);
        let works: Vec<_> = ids
            .chunks(per)
            .map(|chunk| {
                let chunk = chunk.to_vec();
                move |r: &mut Reader<'_>| lookup_ids(r, chunk, parents)
            })
            .collect();
        Ok(self.read_all(works)?.into_iter().flatten().collect())
    }

    /// What the server's name index holds of each symbol of a repo/ref.
    pub fn symbol_names(&self, repo: &str, ref_name: &str) -> Result<Vec<NameRow>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_symbol_names"))?;
        let rows = conn.execute(&mut stmt, vec![("repo", s(repo)), ("ref", s(ref_name))])?;
        Ok(rows
            .map(|r| NameRow {
                id: string(&r[0]),
                name: string(&r[1]),
                qualified_name: string(&r[2]),
                path: string(&r[3]),
                kind: string(&r[4]),
                language: string(&r[5]),
                line_start: int(&r[6]),
                byte_start: int(&r[7]),
                byte_end: int(&r[8]),
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

/// The CONTAINS trees of files on one reader, a statement per file.
fn forest_of(r: &mut Reader<'_>, file_ids: Vec<String>) -> Result<Vec<ForestRow>> {
    let mut out = Vec::new();
    for file in file_ids {
        let rows = r.execute("file_forest", vec![("id", Value::String(file))])?;
        out.extend(rows.map(|r| {
            let id = string(&r[0]);
            let file_id = string(&r[14]);
            // The path holds the symbols between the file and this one (Kuzu
            // leaves the ends out; they are skipped if present).
            let parent_id = match &r[16] {
                Value::List(_, via) => via.iter().map(string).rfind(|v| *v != id && *v != file_id),
                _ => None,
            };
            ForestRow {
                symbol: symbol_row(&r, 0),
                byte_start: int(&r[12]).max(0) as usize,
                byte_end: int(&r[13]).max(0) as usize,
                file_id,
                depth: int(&r[15]),
                parent_id,
            }
        }));
    }
    Ok(out)
}

/// Symbols by id on one reader: a primary-key lookup each (and one for the
/// parent, with `parents`).
fn lookup_ids(r: &mut Reader<'_>, ids: Vec<String>, parents: bool) -> Result<Vec<LookedUp>> {
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let param = || vec![("id", Value::String(id.clone()))];
        let Some(row) = r.execute("symbol_by_id", param())?.next() else {
            continue;
        };
        let (symbol, byte_start, byte_end) = with_range(&row);
        let parent = if parents {
            r.execute("symbol_parent", param())?
                .next()
                .map(|p| ParentRow {
                    id: string(&p[0]),
                    name: string(&p[1]),
                    kind: string(&p[2]),
                    signature: string(&p[3]),
                })
        } else {
            None
        };
        out.push(LookedUp {
            symbol,
            byte_start,
            byte_end,
            parent,
        });
    }
    Ok(out)
}

/// Sorts symbols by (path, line, start, longest first, id).
pub fn sort_by_position(rows: &mut [SymbolWithRange]) {
    rows.sort_by(|a, b| {
        (
            &a.0.path,
            a.0.line_start,
            a.1,
            std::cmp::Reverse(a.2),
            &a.0.id,
        )
            .cmp(&(
                &b.0.path,
                b.0.line_start,
                b.1,
                std::cmp::Reverse(b.2),
                &b.0.id,
            ))
    });
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
