//! Reading the graph: a ref's files and symbols, the hierarchy walks, counts.
//! Every statement is a file in `queries/`; rows are decoded here.

use std::collections::HashMap;

use kuzu::Value;

use super::readers::{Lane, Reader};

/// How much memory a walk result holds, and whether it may be kept in the
/// walk cache (a walk cut short by its budget is not).
pub(super) type Sizing<T> = (fn(&T) -> usize, fn(&T) -> bool);
use super::rows::{Ancestor, FileInfo, NameRow, Nested, RefStatus, SymbolRow, SymbolWithRange};
use super::schema::q;
use super::values::s;
use super::values::{int, list_of_strings, string};
use super::{GraphError, GraphStore, Result, ref_id};

/// A walk's result for one argument, as the walk cache keeps it.
trait Walked: Clone + Send + Sync + 'static {
    /// About how much memory it holds.
    fn bytes(&self) -> usize;
}

impl Walked for Vec<Ancestor> {
    fn bytes(&self) -> usize {
        self.iter().map(|a| a.id.len() + 48).sum()
    }
}

impl Walked for Vec<Nested> {
    fn bytes(&self) -> usize {
        self.iter()
            .map(|n| n.id.len() + n.parent.as_ref().map_or(0, String::len) + 64)
            .sum()
    }
}

impl Walked for Vec<(String, i64)> {
    fn bytes(&self) -> usize {
        self.iter().map(|(id, _)| id.len() + 40).sum()
    }
}

impl Walked for Vec<(String, String)> {
    fn bytes(&self) -> usize {
        self.iter().map(|(a, b)| a.len() + b.len() + 48).sum()
    }
}

impl Walked for Option<String> {
    fn bytes(&self) -> usize {
        self.as_ref().map_or(0, String::len) + 24
    }
}

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
            .map(|r| (string(&r[0]), super::write::hash_text(int(&r[1]))))
            .collect::<HashMap<_, _>>())
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
        let walked = self.walk_each("ancestors", vec![symbol_id.to_string()], |r, id| {
            let rows = r.execute("ancestors", vec![("id", s(id))])?;
            Ok(rows
                .map(|r| Ancestor {
                    id: string(&r[0]),
                    is_file: matches!(r[1], Value::Bool(true)),
                    depth: int(&r[2]),
                })
                .collect::<Vec<_>>())
        })?;
        Ok(walked.into_iter().next().unwrap_or_default())
    }

    /// Every symbol nested under each of `symbol_ids`, by id (one list per
    /// start, in the order given; the walks run side by side on the readers).
    pub fn descendants(&self, symbol_ids: Vec<String>) -> Result<Vec<Vec<Nested>>> {
        self.walk_each("descendants", symbol_ids, |r, id| {
            let rows = r.execute("descendants", vec![("id", s(id))])?;
            Ok(rows.map(|row| nested(&row, id)).collect())
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

    /// (path, lines in error, declarations recovered) of each file of a
    /// repo/ref that has either, by path.
    pub fn files_in_error(&self, repo: &str, ref_name: &str) -> Result<Vec<(String, i64, i64)>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_files_in_error"))?;
        let rows = conn.execute(&mut stmt, vec![("repo", s(repo)), ("ref", s(ref_name))])?;
        Ok(rows
            .map(|r| (string(&r[0]), int(&r[1]), int(&r[2])))
            .collect())
    }

    /// When a repo/ref was last indexed (`None` if it is not in this graph).
    pub fn ref_indexed_at(&self, repo: &str, ref_name: &str) -> Result<Option<String>> {
        Ok(self.ref_version(repo, ref_name)?.map(|(at, _)| at))
    }

    /// Whether a whole-ref load beside other refs left this one unfinished
    /// (an empty `indexed_at`, see `GraphStore::load_beside`).
    pub fn ref_unfinished(&self, repo: &str, ref_name: &str) -> Result<bool> {
        Ok(self
            .ref_indexed_at(repo, ref_name)?
            .is_some_and(|at| super::unfinished_tag(&at)))
    }

    /// (indexed_at, commit) of a repo/ref.
    pub fn ref_version(&self, repo: &str, ref_name: &str) -> Result<Option<(String, String)>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_indexed_at"))?;
        let mut rows = conn.execute(&mut stmt, vec![("id", s(&ref_id(repo, ref_name)))])?;
        Ok(rows.next().map(|r| (string(&r[0]), string(&r[1]))))
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
        Ok(self
            .files_imported_symbols(vec![file_id.to_string()])?
            .into_iter()
            .next()
            .unwrap_or_default())
    }

    /// What each of the files `file_ids` imports (as `imported_symbols`), one
    /// list per file, the files side by side on the readers.
    pub fn files_imported_symbols(&self, file_ids: Vec<String>) -> Result<Vec<Vec<(String, i64)>>> {
        self.walk_each("file_imported_symbols", file_ids, |r, id| {
            let rows = r.execute("file_imported_symbols", vec![("id", s(id))])?;
            Ok(rows
                .map(|r| (string(&r[0]), int(&r[1])))
                .collect::<Vec<_>>())
        })
    }

    /// Every symbol of the files `file_ids` with its place in its file's tree
    /// (`queries/file_forest.cypher`, a statement per file), in no particular
    /// order; a top-level symbol has no parent.
    pub fn file_trees(&self, file_ids: Vec<String>) -> Result<Vec<Nested>> {
        let walked = self.walk_each("file_forest", file_ids, |r, file| {
            let rows = r.execute("file_forest", vec![("id", s(file))])?;
            Ok(rows
                .map(|row| {
                    let mut n = nested(&row, file);
                    if n.parent.as_deref() == Some(file) {
                        n.parent = None;
                    }
                    n
                })
                .collect::<Vec<_>>())
        })?;
        Ok(walked.into_iter().flatten().collect())
    }

    /// The top-level symbols of the files `file_ids`, as (file id, symbol id),
    /// in no particular order (one statement).
    pub fn files_top_symbols(&self, file_ids: Vec<String>) -> Result<Vec<(String, String)>> {
        self.walk_list("files_top_symbols", file_ids)
    }

    /// A statement over a list of file ids that answers (file id, symbol id)
    /// pairs, kept in the walk cache under the whole list.
    fn walk_list(
        &self,
        statement: &'static str,
        file_ids: Vec<String>,
    ) -> Result<Vec<(String, String)>> {
        if file_ids.is_empty() {
            return Ok(Vec::new());
        }
        let walked = self.walk_each(statement, vec![file_ids.join("\n")], move |r, joined| {
            let ids = list_of_strings(joined.split('\n').map(str::to_string));
            let rows = r.execute(statement, vec![("ids", ids)])?;
            Ok(rows
                .map(|r| (string(&r[0]), string(&r[1])))
                .collect::<Vec<_>>())
        })?;
        Ok(walked.into_iter().flatten().collect())
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

    /// Runs `one` for each item, the items split over the reader threads, and
    /// returns everything in the order of the items (nothing kept).
    fn each_on_readers<T: Send + 'static>(
        &self,
        items: Vec<String>,
        one: fn(&mut Reader<'_, '_>, String) -> Result<Vec<T>>,
    ) -> Result<Vec<T>> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let per = items.len().div_ceil(self.reader_count().max(1));
        let works: Vec<_> = items
            .chunks(per.max(1))
            .map(|chunk| {
                let chunk = chunk.to_vec();
                move |r: &mut Reader<'_, '_>| -> Result<Vec<T>> {
                    let mut out = Vec::new();
                    for item in chunk {
                        out.extend(one(r, item)?);
                    }
                    Ok(out)
                }
            })
            .collect();
        Ok(self
            .read_all(Lane::Quick, works)?
            .into_iter()
            .flatten()
            .collect())
    }

    /// Runs `one` for each item not in the walk cache, the items split over the
    /// reader threads, keeps what it gives under `statement`, and returns one
    /// result per item, in the order of the items.
    fn walk_each<T: Walked>(
        &self,
        statement: &'static str,
        items: Vec<String>,
        one: impl Fn(&mut Reader<'_, '_>, &str) -> Result<T> + Copy + Send + 'static,
    ) -> Result<Vec<T>> {
        let found =
            self.walk_each_sized(Lane::Quick, statement, items, (T::bytes, |_| true), one)?;
        Ok(found.into_iter().flatten().collect())
    }

    /// `walk_each` for any value, `bytes` saying about how much memory one
    /// holds (and `keep` whether it may be kept: a walk cut short is not); an
    /// item a reader gave no answer for is `None`.
    pub(super) fn walk_each_sized<T: Clone + Send + Sync + 'static>(
        &self,
        lane: Lane,
        statement: &'static str,
        items: Vec<String>,
        (bytes, keep): Sizing<T>,
        one: impl Fn(&mut Reader<'_, '_>, &str) -> Result<T> + Clone + Send + 'static,
    ) -> Result<Vec<Option<T>>> {
        let writes = self.writes();
        let mut out: Vec<Option<T>> = items
            .iter()
            .map(|item| self.walks.get::<T>(writes, statement, item))
            .collect();
        let misses: Vec<(usize, String)> = out
            .iter()
            .enumerate()
            .filter(|(_, found)| found.is_none())
            .map(|(k, _)| (k, items[k].clone()))
            .collect();
        if !misses.is_empty() {
            // Walks one a job, so that lookups queued meanwhile go between them.
            let per = match lane {
                Lane::Walk => 1,
                Lane::Quick => misses.len().div_ceil(self.reader_count().max(1)).max(1),
            };
            let works: Vec<_> = misses
                .chunks(per)
                .map(|chunk| {
                    let chunk = chunk.to_vec();
                    let one = one.clone();
                    move |r: &mut Reader<'_, '_>| -> Result<Vec<(usize, T)>> {
                        chunk
                            .into_iter()
                            .map(|(k, item)| Ok((k, one(r, &item)?)))
                            .collect()
                    }
                })
                .collect();
            for (k, value) in self.read_all(lane, works)?.into_iter().flatten() {
                if !keep(&value) {
                    out[k] = Some(value);
                    continue;
                }
                let size = bytes(&value);
                self.walks.put(
                    writes,
                    self.writes(),
                    statement,
                    &items[k],
                    value.clone(),
                    size,
                );
                out[k] = Some(value);
            }
        }
        Ok(out)
    }

    /// The catalog's rows of the symbols of a repo/ref in a range of paths
    /// (`from` ≤ path < `to`; no `to`: no end), in no particular order, each
    /// with its parent's id.
    pub fn symbol_names(
        &self,
        repo: &str,
        ref_name: &str,
        from: &str,
        to: Option<&str>,
    ) -> Result<Vec<NameRow>> {
        let params = || {
            vec![
                ("repo", s(repo)),
                ("ref", s(ref_name)),
                ("from", s(from)),
                ("to", s(to.unwrap_or(""))),
            ]
        };
        self.name_rows(("ref_range_parents", "ref_symbol_names"), params)
    }

    /// The catalog's rows of the symbols of a repo/ref in the files `paths`
    /// (as `symbol_names`).
    pub fn symbol_names_in(
        &self,
        repo: &str,
        ref_name: &str,
        paths: &[String],
    ) -> Result<Vec<NameRow>> {
        let params = || {
            vec![
                ("repo", s(repo)),
                ("ref", s(ref_name)),
                ("paths", list_of_strings(paths.iter().cloned())),
            ]
        };
        self.name_rows(("ref_parents_in", "ref_symbol_names_in"), params)
    }

    /// The rows of statement `names`, each with its parent from statement
    /// `parents` (both given the same parameters).
    fn name_rows(
        &self,
        (parents, names): (&str, &str),
        params: impl Fn() -> Vec<(&'static str, Value)>,
    ) -> Result<Vec<NameRow>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q(parents))?;
        let mut parents: HashMap<String, String> = conn
            .execute(&mut stmt, params())?
            .map(|r| (string(&r[0]), string(&r[1])))
            .collect();
        let mut stmt = conn.prepare(q(names))?;
        let rows = conn.execute(&mut stmt, params())?;
        Ok(rows
            .map(|r| {
                let (row, byte_start, byte_end) = with_range(&r);
                let parent = parents.remove(row.id.as_str());
                NameRow::of(&row, byte_start as i64, byte_end as i64, parent)
            })
            .collect())
    }

    /// How many symbols each path of a repo/ref holds.
    pub fn path_symbol_counts(&self, repo: &str, ref_name: &str) -> Result<Vec<(String, u64)>> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(q("ref_path_symbol_counts"))?;
        let rows = conn.execute(&mut stmt, vec![("repo", s(repo)), ("ref", s(ref_name))])?;
        Ok(rows
            .map(|r| (string(&r[0]), int(&r[1]).max(0) as u64))
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

/// A file's columns, in the order of `ref_file_list`.
pub(super) fn file_info(r: &[Value]) -> FileInfo {
    FileInfo {
        id: string(&r[0]),
        path: string(&r[1]),
        language: string(&r[2]),
        module: string(&r[3]),
        package: string(&r[4]),
        content_hash: super::write::hash_text(int(&r[5])),
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

/// A symbol from 12 consecutive columns starting at `at` (the order of the
/// `RETURN` lists in `symbols_by_name`, `symbol_by_id` and `ref_symbol_names`).
pub(super) fn symbol_row(r: &[Value], at: usize) -> SymbolRow {
    SymbolRow {
        id: string(&r[at]).into(),
        stable_id: string(&r[at + 1]),
        name: string(&r[at + 2]).into(),
        kind: string(&r[at + 3]).into(),
        qualified_name: string(&r[at + 4]),
        path: string(&r[at + 5]),
        language: string(&r[at + 6]).into(),
        line_start: int(&r[at + 7]),
        line_end: int(&r[at + 8]),
        signature: string(&r[at + 9]),
        visibility: string(&r[at + 10]).into(),
        doc: string(&r[at + 11]),
    }
}
