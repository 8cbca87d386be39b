//! An in-place run's changes, written in one transaction: deletions, files and
//! symbols (diffed symbols rewritten in place), containment, import edges.

use std::collections::{HashMap, HashSet};

use kuzu::{LogicalType, Value};

use super::batch::{Keyed, struct_type, write_batches, write_each};
use super::readers::{Lane, Session};
use super::rows::{
    Changes, FileRow, FileRows, ImportChanges, ImportDiff, ImportLabel, ImportRow, PackageRow,
    SymbolDiff, SymbolInsert,
};
use super::schema::q;
use super::values::s;
use super::values::{int, list_of_strings, string};
use super::{BATCH, GraphStore, Result, external_id, file_id, package_id, ref_id};
use crate::model::cancel::Cancel;
use std::sync::Arc;

impl GraphStore {
    /// Applies one run's changes atomically: all of them or (after a crash or error)
    /// none of them. `abandon` is asked once more just before the commit: if it
    /// says so the changes are rolled back ([`GraphError::Abandoned`]).
    /// Writes `changes` in one transaction, and records in them the import
    /// in-degrees it changed (`Changes::in_degree`).
    ///
    /// The write runs on this graph's writer thread, whose connection keeps the
    /// statements it prepared for the next run (see `Session`); the changes go
    /// there and come back. The writer holds the checkpoint gate meanwhile;
    /// this thread asks `abandon` and counts the commit.
    pub fn apply(&self, changes: &mut Changes, abandon: &dyn Fn() -> bool) -> Result<()> {
        let mut first = std::mem::take(changes);
        // What `finish` hands over after the files and symbols: all of it.
        changes.imports = first.imports.take();
        changes.packages = first.packages.take();
        changes.sites = first.sites.take();
        self.start_apply(first)?.finish(self, changes, abandon)
    }

    /// `apply` in two parts: the changed files and their symbols are written
    /// from now on, in the transaction, while the caller resolves imports;
    /// `Applying::finish` hands over the import edges and commits. `changes`
    /// holds no import changes yet. Dropped unfinished, the transaction is
    /// rolled back.
    pub fn start_apply(&self, changes: Changes) -> Result<Applying> {
        self.check_usable()?;
        let writer = self.writer();
        let above = self.key_lookups_above;
        let gate = Arc::clone(&self.gate);
        let (repo, ref_name) = (changes.repo.clone(), changes.ref_name.clone());
        let (later, later_rx) = std::sync::mpsc::sync_channel::<Later>(1);
        let (ask, asked) = std::sync::mpsc::sync_channel::<()>(0);
        let (answer, answered) = std::sync::mpsc::sync_channel::<bool>(0);
        let done = writer.submit(Lane::Walk, &Cancel::never(), move |w| {
            let _gate = gate.read().unwrap_or_else(|e| e.into_inner());
            let mut owned = changes;
            // Abandoned when the caller is gone or says so.
            let abandon = || ask.send(()).is_err() || !answered.recv().unwrap_or(false);
            let result = apply_on(&mut w.session(), &mut owned, above, &later_rx, &abandon);
            Ok((owned, result))
        })?;
        Ok(Applying {
            later: Some(later),
            asked,
            answer,
            done: Some(done),
            repo,
            ref_name,
        })
    }
}

/// What an in-place write gets once imports are resolved: the import edges
/// and the Go packages (see `Changes`).
type Later = (
    Option<ImportChanges>,
    Option<Vec<PackageRow>>,
    Option<super::rows::SiteChanges>,
);

/// The changes back from the writer, and whether they were committed.
type Written = (Changes, Result<()>);

/// An in-place write under way on the writer thread (`GraphStore::start_apply`).
pub struct Applying {
    later: Option<std::sync::mpsc::SyncSender<Later>>,
    asked: std::sync::mpsc::Receiver<()>,
    answer: std::sync::mpsc::SyncSender<bool>,
    done: Option<std::sync::mpsc::Receiver<Result<Written>>>,
    repo: String,
    ref_name: String,
}

impl Applying {
    /// Hands over the import changes `changes` holds (the run's, resolved),
    /// waits for the write, and commits it unless `abandon` says otherwise
    /// just before. `changes` becomes what was written (with the in-degrees,
    /// `Changes::in_degree`), committed or not.
    pub fn finish(
        mut self,
        store: &GraphStore,
        changes: &mut Changes,
        abandon: &dyn Fn() -> bool,
    ) -> Result<()> {
        if let Some(later) = self.later.take() {
            // A write that failed first has let go of its end already.
            let _ = later.send((
                changes.imports.take(),
                changes.packages.take(),
                changes.sites.take(),
            ));
        }
        // Asked once, just before the commit (not when the write failed first).
        let mut committing = false;
        if self.asked.recv().is_ok() {
            committing = !abandon();
            if committing {
                // Counted on both sides of the commit: a reader that sees the
                // new state also sees the count move, and one that read while
                // the count was odd knows it may have read either state (see
                // `GraphState`).
                store.count_commit(&self.repo, &self.ref_name);
            }
            let _ = self.answer.send(committing);
        }
        let outcome = self.done.take().map(|d| d.recv());
        if committing {
            store.count_commit(&self.repo, &self.ref_name);
        }
        match outcome {
            Some(Ok(Ok((written, result)))) => {
                *changes = written;
                result
            }
            Some(Ok(Err(e))) => Err(e),
            _ => Err(super::GraphError::Kuzu("the graph writer stopped".into())),
        }
    }
}

impl Drop for Applying {
    /// Unfinished (the run failed or stopped while resolving): the writer
    /// rolls back, and is waited for, so that the graph is idle after.
    fn drop(&mut self) {
        self.later.take();
        if let Some(done) = self.done.take() {
            // Its ask for a commit fails once this side is gone: abandoned.
            drop(std::mem::replace(
                &mut self.asked,
                std::sync::mpsc::sync_channel(0).1,
            ));
            let _ = done.recv();
        }
    }
}

/// `GraphStore::apply` on the writer thread's session.
fn apply_on(
    conn: &mut Session<'_, '_>,
    changes: &mut Changes,
    key_lookups_above: u64,
    later: &std::sync::mpsc::Receiver<Later>,
    abandon: &dyn Fn() -> bool,
) -> Result<()> {
    let keyed = Keyed::decide(conn, key_lookups_above)?;
    conn.query("BEGIN TRANSACTION")?;
    let written = write_files_and_symbols(conn, changes, keyed)
        .and_then(|()| {
            // The import changes, once the caller resolved them.
            let (imports, packages, sites) =
                later.recv().map_err(|_| super::GraphError::Abandoned)?;
            changes.imports = imports;
            changes.packages = packages;
            changes.sites = sites;
            let touched = write_imports_and_packages(conn, changes, keyed)?;
            super::sites::write_sites(conn, changes, keyed)?;
            Ok(touched)
        })
        .and_then(|touched| {
            if abandon() {
                Err(super::GraphError::Abandoned)
            } else {
                Ok(touched)
            }
        });
    match written {
        Ok(touched) => {
            let t = std::time::Instant::now();
            conn.query("COMMIT")?;
            let commit_ms = t.elapsed().as_millis() as u64;
            // Counted once committed: inside the transaction Kuzu 0.11
            // still counts deleted edges into a symbol and misses new ones.
            // Not counted: the reader counts them all.
            let t = std::time::Instant::now();
            let counted = touched.as_ref().map_or(0, Vec::len);
            changes.in_degree = touched
                .filter(|_| changes.count_in_degree)
                .and_then(|t| in_degree_of(conn, &t).ok());
            tracing::debug!(
                commit_ms,
                counted,
                in_degree_ms = t.elapsed().as_millis() as u64,
                "committed"
            );
            Ok(())
        }
        Err(e) => {
            let _ = conn.query("ROLLBACK");
            Err(e)
        }
    }
}

/// The first part of an in-place run's write: what goes, the files and their
/// symbols (what the import changes are written against).
fn write_files_and_symbols(conn: &mut Session<'_, '_>, c: &Changes, keyed: Keyed) -> Result<()> {
    delete_old(conn, c)?;
    upsert_repo_and_ref(conn, c)?;
    write_files(conn, c)?;
    rewrite_kept_symbols(conn, c)?;
    insert_new_symbols(conn, c, keyed)
}

/// The second part: Go packages and import edges. Returns the symbols whose
/// import in-degree it may have changed, when only some files' edges were
/// rewritten.
fn write_imports_and_packages(
    conn: &mut Session<'_, '_>,
    c: &Changes,
    keyed: Keyed,
) -> Result<Option<Vec<String>>> {
    if let Some(packages) = &c.packages {
        sync_packages(conn, c, packages)?;
    }
    match &c.imports {
        Some(ImportChanges::All(imports)) => write_imports(conn, c, imports, keyed)?,
        Some(ImportChanges::Diff(diff)) => write_import_diff(conn, c, diff, keyed)?,
        None => {}
    }
    Ok(match &c.imports {
        Some(ImportChanges::Diff(diff)) if !c.replace_all => Some(diff.touched.clone()),
        _ => None,
    })
}

/// The import in-degree of each of the symbols (ids), 0 for one that no
/// longer exists. A few dozen are counted one by one, found by key (~2 ms each
/// on the Rust crates' 600k symbols); more by one hash join, which scans every
/// import edge of the graph (80-95 ms there).
fn in_degree_of(conn: &mut Session<'_, '_>, ids: &[String]) -> Result<Vec<(String, u32)>> {
    let row = |r: &[Value]| {
        (
            string(&r[0]),
            int(&r[1]).clamp(0, i64::from(u32::MAX)) as u32,
        )
    };
    if ids.len() > IN_DEGREE_BY_KEY {
        return by_ids(conn, "symbols_in_degree", ids, row);
    }
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let rows = conn.exec(
            q("symbol_in_degree"),
            vec![("id", Value::String(id.clone()))],
        )?;
        // No row: nothing imports it (or it is gone, which the catalog,
        // patched to the same graph, does not hold either).
        out.push(rows.map(|r| row(&r)).next().unwrap_or((id.clone(), 0)));
    }
    Ok(out)
}

/// Up to this many symbols' in-degrees are counted one by one (see
/// `in_degree_of`).
const IN_DEGREE_BY_KEY: usize = 40;

/// The rows of query `name` (which takes `$ids`) over `ids`, a batch at a time.
fn by_ids<T>(
    conn: &mut Session<'_, '_>,
    name: &str,
    ids: &[String],
    row: impl Fn(&[Value]) -> T,
) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(BATCH) {
        let rows = conn.exec(
            q(name),
            vec![("ids", list_of_strings(chunk.iter().cloned()))],
        )?;
        out.extend(rows.map(|r| row(&r)));
    }
    Ok(out)
}

/// Up to this many files' symbols are deleted file by file, by key; more in
/// one statement (see `delete_one_file_symbols.cypher`).
const FILES_BY_KEY: usize = 4;

/// Everything of the repo/ref `c` names but the Ref node itself.
pub(super) fn delete_ref(conn: &mut Session<'_, '_>, c: &Changes) -> Result<()> {
    conn.exec(
        q("delete_ref_names"),
        vec![("repo", s(&c.repo)), ("ref", s(&c.ref_name))],
    )?;
    for name in [
        "delete_ref_symbols",
        "delete_ref_externals",
        "delete_ref_packages",
        "delete_ref_files",
    ] {
        conn.exec(q(name), vec![("repo", s(&c.repo)), ("ref", s(&c.ref_name))])?;
    }
    Ok(())
}

/// What goes before the new rows come in: the whole ref (`replace_all`), or the
/// symbols of changed and removed files (only those that go, for a diffed
/// file) and the removed files.
fn delete_old(conn: &mut Session<'_, '_>, c: &Changes) -> Result<()> {
    if c.replace_all {
        return delete_ref(conn, c);
    }
    if c.remove_paths.is_empty() {
        return Ok(());
    }
    let t = std::time::Instant::now();
    let whole: Vec<&String> = c
        .remove_paths
        .iter()
        .filter(|p| !c.symbol_diffs.contains_key(*p))
        .collect();
    if whole.len() <= FILES_BY_KEY {
        // A few files: each by key (see `delete_one_file_symbols.cypher`).
        if !whole.is_empty() {
            for p in &whole {
                conn.exec(
                    q("delete_one_file_symbols"),
                    vec![("id", s(&file_id(&c.repo, &c.ref_name, p)))],
                )?;
            }
        }
    } else {
        for chunk in whole.chunks(BATCH) {
            let ids = list_of_strings(chunk.iter().map(|p| file_id(&c.repo, &c.ref_name, p)));
            conn.exec(q("delete_file_symbols"), vec![("ids", ids)])?;
        }
    }
    let mut diffed: Vec<(&String, &SymbolDiff)> = c
        .symbol_diffs
        .iter()
        .filter(|(_, d)| !d.delete.is_empty())
        .collect();
    diffed.sort_by(|a, b| a.0.cmp(b.0));
    for chunk in diffed.chunks(256) {
        let files = list_of_strings(chunk.iter().map(|(p, _)| file_id(&c.repo, &c.ref_name, p)));
        let ids = list_of_strings(chunk.iter().flat_map(|(_, d)| d.delete.iter().cloned()));
        conn.exec(q("delete_symbols"), vec![("files", files), ("ids", ids)])?;
    }
    for chunk in c.drop_files.chunks(BATCH) {
        let ids = list_of_strings(chunk.iter().map(|p| file_id(&c.repo, &c.ref_name, p)));
        conn.exec(q("delete_files"), vec![("ids", ids)])?;
    }
    tracing::debug!(
        ms = t.elapsed().as_millis() as u64,
        files = c.remove_paths.len(),
        diffed = c.symbol_diffs.len(),
        "deleted the symbols of changed files"
    );
    Ok(())
}

/// The ref's `Repo` and `Ref` nodes, with what this run knows of them.
pub(super) fn upsert_repo_and_ref(conn: &mut Session<'_, '_>, c: &Changes) -> Result<()> {
    upsert_repo_and_ref_tagged(conn, c, &c.indexed_at, &c.layout_hash)
}

/// `upsert_repo_and_ref` with another tag (`UNFINISHED_TAG` while a load
/// beside other refs is under way, see `GraphStore::load_beside`).
pub(super) fn upsert_repo_and_ref_tagged(
    conn: &mut Session<'_, '_>,
    c: &Changes,
    indexed_at: &str,
    layout_hash: &str,
) -> Result<()> {
    conn.exec(
        q("upsert_repo"),
        vec![("name", s(&c.repo)), ("root", s(&c.repo_root))],
    )?;
    conn.exec(
        q("upsert_ref"),
        vec![
            ("repo", s(&c.repo)),
            ("id", s(&ref_id(&c.repo, &c.ref_name))),
            ("name", s(&c.ref_name)),
            ("commit", s(&c.commit)),
            ("indexed_at", s(indexed_at)),
            ("layout_hash", s(layout_hash)),
        ],
    )?;
    Ok(())
}

/// New files with their HAS_FILE edge; changed files updated in place (their
/// counts and hash alone when their names and imports stay).
fn write_files(conn: &mut Session<'_, '_>, c: &Changes) -> Result<()> {
    let rid = ref_id(&c.repo, &c.ref_name);
    let (file_fields, file_types) = file_layout();
    write_batches(
        conn,
        q("insert_files"),
        &file_types,
        &file_fields,
        c.add
            .iter()
            .filter(|f| !f.existing)
            .map(|f| file_values(c, &f.file)),
        |p| p.push(("ref_id", s(&rid))),
    )?;
    for (query, same_names) in [("update_files", false), ("update_file_counts", true)] {
        write_batches(
            conn,
            q(query),
            &file_types,
            &file_fields,
            c.add
                .iter()
                .filter(|f| f.existing && f.same_names == same_names)
                .map(|f| file_values(c, &f.file)),
            |_| {},
        )?;
    }
    Ok(())
}

/// Symbols that stay but changed: rewritten in place (positions alone when only
/// they changed).
fn rewrite_kept_symbols(conn: &mut Session<'_, '_>, c: &Changes) -> Result<()> {
    let (sym_fields, sym_types) = symbol_layout(true);
    for f in c.add.iter().filter(|f| f.existing) {
        let Some(d) = c.symbol_diffs.get(&f.file.path) else {
            continue;
        };
        let files = list_of_strings(std::iter::once(f.file.id.clone()));
        if !d.update.is_empty() {
            write_batches(
                conn,
                q("update_symbols"),
                &sym_types,
                &sym_fields,
                f.symbols
                    .iter()
                    .filter(|si| d.update.contains(si.row.id.as_str()))
                    .map(|si| symbol_values(c, &f.file, si, true)),
                |p| p.push(("files", files.clone())),
            )?;
        }
        if !d.moved.is_empty() {
            let fields = ["id", "line_start", "line_end", "byte_start", "byte_end"];
            write_batches(
                conn,
                q("update_symbol_positions"),
                &struct_type(&fields, &[1, 2, 3, 4]),
                &fields,
                f.symbols
                    .iter()
                    .filter(|si| d.moved.contains(si.row.id.as_str()))
                    .map(|si| {
                        vec![
                            s(&si.row.id),
                            Value::Int64(si.row.line_start),
                            Value::Int64(si.row.line_end),
                            Value::Int64(si.byte_start),
                            Value::Int64(si.byte_end),
                        ]
                    }),
                |p| p.push(("files", files.clone())),
            )?;
        }
    }
    Ok(())
}

/// New symbols with their CONTAINS edge, shallowest first so parents exist:
/// those directly in their file together with their children, then the rest
/// under their (new or kept) parent symbol.
fn insert_new_symbols(conn: &mut Session<'_, '_>, c: &Changes, keyed: Keyed) -> Result<()> {
    let (sym_fields, sym_types) = symbol_layout(true);
    let plan = insert_plan(&c.add, &c.symbol_diffs);
    if !plan.top.is_empty() {
        let (child_fields, child_type) = symbol_layout(false);
        let mut fields = sym_fields.clone();
        fields.push("children");
        let LogicalType::Struct { fields: mut types } = sym_types.clone() else {
            unreachable!("symbol_layout is a struct")
        };
        types.push((
            "children".to_string(),
            LogicalType::List {
                child_type: Box::new(child_type.clone()),
            },
        ));
        let row_type = LogicalType::Struct { fields: types };
        let row = |(file, si): &(&FileRow, &SymbolInsert)| {
            let mut v = symbol_values(c, file, si, true);
            let kids = plan
                .children
                .get(si.row.id.as_str())
                .map_or(&[][..], Vec::as_slice);
            v.push(Value::List(
                child_type.clone(),
                kids.iter()
                    .map(|(f, k)| {
                        Value::Struct(
                            child_fields
                                .iter()
                                .map(|n| n.to_string())
                                .zip(symbol_values(c, f, k, false))
                                .collect(),
                        )
                    })
                    .collect(),
            ));
            v
        };
        if keyed.symbols {
            // A statement per file, the file found by key (a batch row each
            // scanned the File table: 2,062 symbols of one file, 336 ms).
            let mut by_file: Vec<(&str, Vec<&(&FileRow, &SymbolInsert)>)> = Vec::new();
            for top in &plan.top {
                match by_file.last_mut() {
                    Some((id, rows)) if *id == top.0.id => rows.push(top),
                    _ => by_file.push((top.0.id.as_str(), vec![top])),
                }
            }
            // One statement for every file (`Session`): planning it costs
            // ~5 ms on Go's tree, and a branch switch adds a few hundred files.
            for (file, rows) in by_file {
                write_batches(
                    conn,
                    q("insert_file_symbols"),
                    &row_type,
                    &fields,
                    rows.into_iter().map(row),
                    |p| p.push(("file", s(file))),
                )?;
            }
        } else {
            write_batches(
                conn,
                q("insert_symbols_with_children"),
                &row_type,
                &fields,
                plan.top.iter().map(row),
                |_| {},
            )?;
        }
    }
    let (child_fields, child_type) = symbol_layout(false);
    for level in &plan.nested {
        let rows = level
            .iter()
            .map(|(file, si)| symbol_values(c, file, si, true));
        if keyed.symbols {
            // A statement per parent, found by key (a level's parents exist).
            let mut by_parent: Vec<(&str, Vec<&(&FileRow, &SymbolInsert)>)> = Vec::new();
            let mut at: HashMap<&str, usize> = HashMap::new();
            for row in level {
                let parent = row.1.parent.as_deref().unwrap_or(&row.0.id);
                let i = *at.entry(parent).or_insert_with(|| {
                    by_parent.push((parent, Vec::new()));
                    by_parent.len() - 1
                });
                by_parent[i].1.push(row);
            }
            for (parent, rows) in by_parent {
                write_batches(
                    conn,
                    q("insert_symbols_under_parent"),
                    &child_type,
                    &child_fields,
                    rows.into_iter()
                        .map(|(file, si)| symbol_values(c, file, si, false)),
                    |p| p.push(("parent", s(parent))),
                )?;
            }
        } else {
            write_batches(
                conn,
                q("insert_symbols_under_symbol"),
                &sym_types,
                &sym_fields,
                rows,
                |_| {},
            )?;
        }
    }
    Ok(())
}

/// Removes the stale edges, brings the External nodes in step and creates the
/// missing edges (see `ImportDiff`).
pub(super) fn write_import_diff(
    conn: &mut Session<'_, '_>,
    c: &Changes,
    diff: &ImportDiff,
    keyed: Keyed,
) -> Result<()> {
    let t = std::time::Instant::now();
    delete_import_rows(conn, c, diff.stale.iter(), false, keyed)?;
    let ids = |names: &[String]| -> Vec<String> {
        names
            .iter()
            .map(|n| external_id(&c.repo, &c.ref_name, n))
            .collect()
    };
    for chunk in ids(&diff.externals_gone).chunks(BATCH) {
        conn.exec(
            q("delete_externals"),
            vec![("ids", list_of_strings(chunk.iter().cloned()))],
        )?;
    }
    let ext_fields = ["id", "repo", "ref", "name"];
    write_batches(
        conn,
        q("insert_externals"),
        &struct_type(&ext_fields, &[]),
        &ext_fields,
        diff.externals_new
            .iter()
            .zip(ids(&diff.externals_new))
            .map(|(name, id)| vec![s(&id), s(&c.repo), s(&c.ref_name), s(name)]),
        |_| {},
    )?;
    insert_import_rows(conn, c, diff.missing.iter(), false, keyed)?;
    tracing::debug!(
        stale = diff.stale.len(),
        missing = diff.missing.len(),
        externals_new = diff.externals_new.len(),
        externals_gone = diff.externals_gone.len(),
        ms = t.elapsed().as_millis() as u64,
        "wrote the import diff"
    );
    Ok(())
}

/// Deletes External nodes of the ref that are not named in `wanted` and creates
/// the missing ones.
pub(super) fn sync_externals<'x>(
    conn: &mut Session<'_, '_>,
    c: &Changes,
    wanted: impl Iterator<Item = &'x str>,
) -> Result<()> {
    use std::collections::HashSet;
    let have_ext: HashSet<String> = conn
        .exec(
            q("ref_externals"),
            vec![("repo", s(&c.repo)), ("ref", s(&c.ref_name))],
        )?
        .map(|r| string(&r[0]))
        .collect();
    let mut want_ext: Vec<&str> = wanted.collect();
    want_ext.sort_unstable();
    want_ext.dedup();
    let want_ext_ids: HashSet<String> = want_ext
        .iter()
        .map(|n| external_id(&c.repo, &c.ref_name, n))
        .collect();
    let mut gone: Vec<String> = have_ext.difference(&want_ext_ids).cloned().collect();
    gone.sort();
    for chunk in gone.chunks(BATCH) {
        conn.exec(
            q("delete_externals"),
            vec![("ids", list_of_strings(chunk.iter().cloned()))],
        )?;
    }
    let ext_fields = ["id", "repo", "ref", "name"];
    let ext_type = struct_type(&ext_fields, &[]);
    let new_ext = want_ext.iter().filter_map(|name| {
        let id = external_id(&c.repo, &c.ref_name, name);
        (!have_ext.contains(&id)).then(|| vec![s(&id), s(&c.repo), s(&c.ref_name), s(name)])
    });
    write_batches(
        conn,
        q("insert_externals"),
        &ext_type,
        &ext_fields,
        new_ext,
        |_| {},
    )
}

/// Whether the ref has a Go package in the graph.
pub(super) fn ref_has_packages(conn: &mut Session<'_, '_>, c: &Changes) -> Result<bool> {
    let rows = conn.exec(
        q("ref_packages"),
        vec![("repo", s(&c.repo)), ("ref", s(&c.ref_name))],
    )?;
    Ok(rows.into_iter().next().is_some())
}

/// Brings the ref's Package nodes and their IN_PACKAGE edges to exactly
/// `wanted`, touching only what differs (a file added to a package is one
/// edge, whatever its fan-in). Runs after the files are written and before
/// the import edges, which may point at a new package.
pub(super) fn sync_packages(
    conn: &mut Session<'_, '_>,
    c: &Changes,
    wanted: &[PackageRow],
) -> Result<()> {
    use std::collections::{BTreeSet, HashMap};
    let mut have: HashMap<String, BTreeSet<String>> = HashMap::new();
    for r in conn.exec(
        q("ref_packages"),
        vec![("repo", s(&c.repo)), ("ref", s(&c.ref_name))],
    )? {
        let members = have.entry(string(&r[0])).or_default();
        if let Value::String(f) = &r[1] {
            members.insert(f.clone());
        }
    }
    let want: HashMap<String, (&str, BTreeSet<&str>)> = wanted
        .iter()
        .map(|p| {
            (
                package_id(&c.repo, &c.ref_name, &p.path),
                (
                    p.path.as_str(),
                    p.files.iter().map(String::as_str).collect(),
                ),
            )
        })
        .collect();
    let mut gone: Vec<&String> = have.keys().filter(|id| !want.contains_key(*id)).collect();
    gone.sort();
    for chunk in gone.chunks(BATCH) {
        conn.exec(
            q("delete_packages"),
            vec![("ids", list_of_strings(chunk.iter().map(|s| s.to_string())))],
        )?;
    }
    let mut new: Vec<(&String, &str)> = want
        .iter()
        .filter(|(id, _)| !have.contains_key(*id))
        .map(|(id, (path, _))| (id, *path))
        .collect();
    new.sort();
    let fields = ["id", "repo", "ref", "path"];
    write_batches(
        conn,
        q("insert_packages"),
        &struct_type(&fields, &[]),
        &fields,
        new.iter()
            .map(|(id, path)| vec![s(id), s(&c.repo), s(&c.ref_name), s(path)]),
        |_| {},
    )?;
    let empty = BTreeSet::new();
    let (mut stale, mut missing) = (Vec::new(), Vec::new());
    for (id, (_, files)) in &want {
        let had = have.get(id).unwrap_or(&empty);
        missing.extend(
            files
                .iter()
                .filter(|f| !had.contains(**f))
                .map(|f| (*f, id.as_str())),
        );
        stale.extend(
            had.iter()
                .filter(|f| !files.contains(f.as_str()))
                .map(|f| (f.as_str(), id.as_str())),
        );
    }
    stale.sort();
    missing.sort();
    let fields = ["file", "package"];
    for (rows, query) in [
        (stale, "delete_package_files"),
        (missing, "insert_package_files"),
    ] {
        write_batches(
            conn,
            q(query),
            &struct_type(&fields, &[]),
            &fields,
            rows.into_iter().map(|(f, p)| vec![s(f), s(p)]),
            |_| {},
        )?;
    }
    Ok(())
}

pub(super) const EDGE_FIELDS: [&str; 5] = ["from", "to", "to_name", "line", "alias"];

/// One import edge as an UNWIND row; `to` of an External edge is its name
/// unless `normalized` (then it is already the node id).
pub(super) fn edge_row(c: &Changes, r: &ImportRow, normalized: bool) -> Vec<Value> {
    let to = match r.label {
        ImportLabel::External if !normalized => external_id(&c.repo, &c.ref_name, &r.to),
        ImportLabel::Package if !normalized => package_id(&c.repo, &c.ref_name, &r.to),
        _ => r.to.clone(),
    };
    vec![
        s(&r.from),
        Value::String(to),
        s(&r.to_name),
        Value::Int64(r.line),
        s(&r.alias),
    ]
}

/// Deletes the given import edges (by label of their target: a batch per
/// label); see `edge_row` for `normalized`. A few edges into symbols of a big
/// graph go one by one (see `delete_import_symbol.cypher`).
fn delete_import_rows<'r>(
    conn: &mut Session<'_, '_>,
    c: &Changes,
    rows: impl Iterator<Item = &'r ImportRow> + Clone,
    normalized: bool,
    keyed: Keyed,
) -> Result<()> {
    let edge_type = struct_type(&EDGE_FIELDS, &[3]);
    for (label, query) in [
        (ImportLabel::Symbol, "delete_imports_symbol"),
        (ImportLabel::File, "delete_imports_file"),
        (ImportLabel::Package, "delete_imports_package"),
        (ImportLabel::External, "delete_imports_external"),
    ] {
        let of_label = rows.clone().filter(|r| r.label == label);
        let few = of_label.clone().take(SYMBOL_EDGES_BY_KEY + 1).count() <= SYMBOL_EDGES_BY_KEY;
        let rows = of_label.map(|r| edge_row(c, r, normalized));
        if label == ImportLabel::Symbol && keyed.symbols && few {
            write_each(conn, q("delete_import_symbol"), &EDGE_FIELDS, rows)?;
        } else {
            write_batches(conn, q(query), &edge_type, &EDGE_FIELDS, rows, |_| {})?;
        }
    }
    Ok(())
}

/// Up to this many import edges into symbols are deleted one by one in a big
/// graph: ~2 ms each, against ~60 ms for a batch of any size.
const SYMBOL_EDGES_BY_KEY: usize = 24;

/// Creates import edges (their target nodes exist); see `edge_row` for
/// `normalized`.
pub(super) fn insert_import_rows<'r>(
    conn: &mut Session<'_, '_>,
    c: &Changes,
    rows: impl Iterator<Item = &'r ImportRow> + Clone,
    normalized: bool,
    keyed: Keyed,
) -> Result<()> {
    let edge_type = struct_type(&EDGE_FIELDS, &[3]);
    for (label, batched, by_key) in [
        (
            ImportLabel::Symbol,
            "insert_imports_symbol",
            "insert_import_symbol",
        ),
        (
            ImportLabel::File,
            "insert_imports_file",
            "insert_import_file",
        ),
        (
            ImportLabel::Package,
            "insert_imports_package",
            "insert_import_package",
        ),
        (
            ImportLabel::External,
            "insert_imports_external",
            "insert_import_external",
        ),
    ] {
        let of_label = rows.clone().filter(|r| r.label == label);
        let n = of_label.clone().count();
        let rows = of_label.map(|r| edge_row(c, r, normalized));
        // A batch finds both ends by hash joins, a scan of each table: of
        // the symbols (counted), or of files and the smaller tables (tens of
        // thousands in a big graph: a few rows go cheaper by key).
        let by_join = match label {
            ImportLabel::Symbol => keyed.join_pays(n, 1),
            _ => keyed.join_pays(n, 0) && (!keyed.symbols || n >= FEW_BY_KEY),
        };
        if by_join {
            write_batches(conn, q(batched), &edge_type, &EDGE_FIELDS, rows, |_| {})?;
        } else {
            write_grouped(conn, label, q(by_key), rows)?;
        }
    }
    Ok(())
}

/// Import edges into a small table fewer than this go by key in a big graph
/// (~1 ms an edge; a batch scans the files and the target table).
const FEW_BY_KEY: usize = 16;

/// Import edges a grouped statement writes (see `insert_imports_grouped.cypher`).
pub const IMPORTS_GROUP: usize = 8;

/// `template` (of `insert_imports_grouped*.cypher`) for `k` rows into
/// `label`'s table: its MATCH and CREATE lines joined into one of each, a line
/// with `{i}` once per row (`{i}` the row's number), one without it once; and
/// the count of matched rows returned.
pub fn grouped_statement(template: &str, label: &str, k: usize) -> String {
    let line = |head: &str| {
        let units: Vec<&str> = template
            .lines()
            .filter_map(|l| l.strip_prefix(head))
            .collect();
        assert!(!units.is_empty(), "the grouped template has no {head}line");
        units
            .into_iter()
            .flat_map(|unit| {
                let times = if unit.contains("{i}") { k } else { 1 };
                (0..times).map(move |i| {
                    unit.replace("{i}", &i.to_string())
                        .replace("{label}", label)
                })
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "MATCH {}\nCREATE {}\nRETURN count(*)",
        line("MATCH "),
        line("CREATE ")
    )
}

/// Writes import edges into `label`'s nodes by key, `IMPORTS_GROUP` a
/// statement: those of a file with that many or more with the file found once
/// (`insert_imports_grouped_from_file`), the others each with both ends
/// (`insert_imports_grouped`); `single` (one edge, `EDGE_FIELDS` as
/// parameters) writes the rest and the rows of a group that found no match.
fn write_grouped(
    conn: &mut Session<'_, '_>,
    label: ImportLabel,
    single: &'static str,
    rows: impl Iterator<Item = Vec<Value>>,
) -> Result<ByKey> {
    use std::sync::OnceLock;
    static NAMES: OnceLock<[Vec<String>; 2]> = OnceLock::new();
    let [names, from_file_names] = NAMES.get_or_init(|| {
        let numbered = |fields: &[&str]| -> Vec<String> {
            (0..IMPORTS_GROUP)
                .flat_map(|i| fields.iter().map(move |f| format!("{f}{i}")))
                .collect()
        };
        [numbered(&EDGE_FIELDS), numbered(&EDGE_FIELDS[1..])]
    });
    let started = std::time::Instant::now();
    let all: Vec<Vec<Value>> = rows.collect();
    let (rows, in_bulk) = write_bulk_groups(conn, label, all)?;
    let total = rows.len() + in_bulk;
    let mut by_file: std::collections::BTreeMap<String, Vec<Vec<Value>>> = Default::default();
    for row in rows {
        by_file.entry(string(&row[0])).or_default().push(row);
    }
    let mut mixed: Vec<Vec<Value>> = Vec::new();
    let mut one_by_one: Vec<Vec<Value>> = Vec::new();
    let mut from_file = 0;
    let statement = grouped_for(label, "insert_imports_grouped_from_file");
    for (file, mut group) in by_file {
        let whole = group.len() - group.len() % IMPORTS_GROUP;
        mixed.extend(group.drain(whole..));
        for chunk in group.chunks_exact(IMPORTS_GROUP) {
            let params: Vec<(&str, Value)> = std::iter::once(("from", Value::String(file.clone())))
                .chain(
                    from_file_names
                        .iter()
                        .map(String::as_str)
                        .zip(chunk.iter().flat_map(|r| r[1..].iter().cloned())),
                )
                .collect();
            match matched(conn, statement, params)? {
                true => from_file += chunk.len(),
                false => one_by_one.extend_from_slice(chunk),
            }
        }
    }
    let statement = grouped_for(label, "insert_imports_grouped");
    let mut chunks = mixed.chunks_exact(IMPORTS_GROUP);
    for chunk in chunks.by_ref() {
        let params: Vec<(&str, Value)> = names
            .iter()
            .map(String::as_str)
            .zip(chunk.iter().flat_map(|r| r.iter().cloned()))
            .collect();
        if !matched(conn, statement, params)? {
            one_by_one.extend_from_slice(chunk);
        }
    }
    one_by_one.extend_from_slice(chunks.remainder());
    let singles = one_by_one.len();
    for row in one_by_one {
        conn.exec(single, EDGE_FIELDS.iter().copied().zip(row).collect())?;
    }
    tracing::debug!(
        rows = total,
        in_bulk,
        from_file,
        singles,
        ms = started.elapsed().as_millis() as u64,
        "wrote import edges by key"
    );
    Ok(ByKey {
        in_bulk,
        from_file,
        singles,
    })
}

/// How `write_grouped` wrote its rows: in bulk groups, in groups out of one
/// file, one by one (the rest went in mixed groups).
#[derive(Debug, PartialEq)]
struct ByKey {
    in_bulk: usize,
    from_file: usize,
    singles: usize,
}

/// Whether a grouped statement matched its rows (else it wrote nothing).
fn matched(
    conn: &mut Session<'_, '_>,
    statement: &'static str,
    params: Vec<(&str, Value)>,
) -> Result<bool> {
    Ok(conn
        .exec(statement, params)?
        .next()
        .is_some_and(|r| int(&r[0]) > 0))
}

/// `grouped_statement` of the query file `name` for `label`'s table.
fn grouped_for(label: ImportLabel, name: &'static str) -> &'static str {
    made_once((name, label.table(), true), || {
        grouped_statement(q(name), label.table(), IMPORTS_GROUP)
    })
}

/// Edges written by one statement per group: this many or more out of one file,
/// or into one node.
const BULK_GROUP: usize = 16;

/// Tables scanned once per row by the bulk statements hold at most this many
/// nodes (~8 ns a node a row: 0.8 ms, about an edge by key).
const BULK_SCAN_AT_MOST: u64 = 100_000;

/// Writes the big groups of `rows` (edges into `label`'s table, `EDGE_FIELDS`)
/// a statement each: all of one file's edges when the target table is small
/// enough to scan per row (`insert_imports_from_file`), then all edges into one
/// node (`insert_imports_into_node`, scanning File). Returns the rows left for
/// lookups by key and how many were written. A row with a missing end creates
/// nothing here, as by key.
fn write_bulk_groups(
    conn: &mut Session<'_, '_>,
    label: ImportLabel,
    rows: Vec<Vec<Value>>,
) -> Result<(Vec<Vec<Value>>, usize)> {
    if rows.len() < BULK_GROUP {
        return Ok((rows, 0));
    }
    let mut written = 0;
    let count = |conn: &mut Session<'_, '_>, table: ImportLabel| -> Result<u64> {
        let n = conn.exec(for_label("node_count", table), vec![])?.next();
        Ok(n.map_or(u64::MAX, |r| int(&r[0]).max(0) as u64))
    };
    let mut rest = rows;
    // (the column the group shares, the statement, its parameter, the table it scans)
    let passes = [
        (0, "insert_imports_from_file", "from", label),
        (1, "insert_imports_into_node", "to", ImportLabel::File),
    ];
    for (shared, template, param, scanned) in passes {
        if label == ImportLabel::Symbol && shared == 0 {
            continue;
        }
        let mut sizes: HashMap<String, usize> = HashMap::new();
        for row in &rest {
            *sizes.entry(string(&row[shared])).or_default() += 1;
        }
        let big = sizes.values().any(|&n| n >= BULK_GROUP);
        if !big || count(conn, scanned)? > BULK_SCAN_AT_MOST {
            continue;
        }
        // The rest keep their order (the groups of eight after this split
        // them the same way every time), the big groups go in key order.
        let mut groups: std::collections::BTreeMap<String, Vec<Vec<Value>>> = Default::default();
        let mut kept = Vec::with_capacity(rest.len());
        for row in std::mem::take(&mut rest) {
            let key = string(&row[shared]);
            match sizes[&key] >= BULK_GROUP {
                true => groups.entry(key).or_default().push(row),
                false => kept.push(row),
            }
        }
        rest = kept;
        let fields: Vec<&str> = EDGE_FIELDS
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != shared)
            .map(|(_, f)| *f)
            .collect();
        let row_type = struct_type(&fields, &[2]);
        let statement = for_label(template, label);
        for (key, group) in groups {
            written += group.len();
            let list = group
                .into_iter()
                .map(|row| {
                    let values = row
                        .into_iter()
                        .enumerate()
                        .filter(|(i, _)| *i != shared)
                        .map(|(_, v)| v);
                    Value::Struct(fields.iter().map(|f| f.to_string()).zip(values).collect())
                })
                .collect();
            conn.exec(
                statement,
                vec![
                    (param, Value::String(key)),
                    ("rows", Value::List(row_type.clone(), list)),
                ],
            )?;
        }
    }
    Ok((rest, written))
}

/// A query file with `{label}` for `label`'s table.
fn for_label(name: &'static str, label: ImportLabel) -> &'static str {
    made_once((name, label.table(), false), || {
        q(name).replace("{label}", label.table())
    })
}

/// A statement made from a query file for one table (grouped or not), made
/// once and kept for the process: at most a few templates times four tables,
/// and prepared statements are keyed by their text's address.
fn made_once(
    key: (&'static str, &'static str, bool),
    make: impl FnOnce() -> String,
) -> &'static str {
    type Made = std::sync::Mutex<HashMap<(&'static str, &'static str, bool), &'static str>>;
    static MADE: std::sync::OnceLock<Made> = std::sync::OnceLock::new();
    let mut made = MADE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    made.entry(key)
        .or_insert_with(|| Box::leak(make().into_boxed_str()))
}

/// Brings the ref's import edges and External nodes to exactly `desired`,
/// touching only what differs. Runs after the node changes of the same
/// transaction, so edges lost with re-created nodes are seen as missing.
pub(super) fn write_imports(
    conn: &mut Session<'_, '_>,
    c: &Changes,
    desired: &[ImportRow],
    keyed: Keyed,
) -> Result<()> {
    use std::collections::HashSet;
    let params = || vec![("repo", s(&c.repo)), ("ref", s(&c.ref_name))];
    let norm = |r: &ImportRow| -> ImportRow {
        let mut r = r.clone();
        match r.label {
            ImportLabel::External => r.to = external_id(&c.repo, &c.ref_name, &r.to),
            ImportLabel::Package => r.to = package_id(&c.repo, &c.ref_name, &r.to),
            _ => {}
        }
        r
    };
    let want: HashSet<ImportRow> = desired.iter().map(norm).collect();
    let have: HashSet<ImportRow> = conn
        .exec(q("ref_imports"), params())?
        .filter_map(|r| {
            Some(ImportRow {
                from: string(&r[0]),
                label: ImportLabel::parse(&string(&r[1]))?,
                to: string(&r[2]),
                to_name: string(&r[3]),
                line: int(&r[4]),
                alias: string(&r[5]),
            })
        })
        .collect();

    let mut stale: Vec<&ImportRow> = have.difference(&want).collect();
    stale.sort();
    delete_import_rows(conn, c, stale.into_iter(), true, keyed)?;
    sync_externals(
        conn,
        c,
        desired
            .iter()
            .filter(|r| r.label == ImportLabel::External)
            .map(|r| r.to.as_str()),
    )?;
    let mut missing: Vec<&ImportRow> = want.difference(&have).collect();
    missing.sort();
    insert_import_rows(conn, c, missing.into_iter(), true, keyed)
}

pub(super) const SYMBOL_FIELDS: [&str; 17] = [
    "id",
    "stable_id",
    "repo",
    "ref",
    "path",
    "name",
    "kind",
    "qualified_name",
    "language",
    "line_start",
    "line_end",
    "byte_start",
    "byte_end",
    "signature",
    "visibility",
    "doc",
    "parent",
];

/// Field names and STRUCT type of symbol rows, with or without `parent`.
pub(super) fn symbol_layout(with_parent: bool) -> (Vec<&'static str>, LogicalType) {
    let n = if with_parent { 17 } else { 16 };
    let fields: Vec<&str> = SYMBOL_FIELDS[..n].to_vec();
    let ty = struct_type(&fields, &[9, 10, 11, 12]);
    (fields, ty)
}

pub(super) fn symbol_values(
    c: &Changes,
    file: &FileRow,
    si: &SymbolInsert,
    with_parent: bool,
) -> Vec<Value> {
    let r = &si.row;
    let mut v = vec![
        s(&r.id),
        s(&r.stable_id),
        s(&c.repo),
        s(&c.ref_name),
        s(&r.path),
        s(&r.name),
        s(&r.kind),
        s(&r.qualified_name),
        s(&r.language),
        Value::Int64(r.line_start),
        Value::Int64(r.line_end),
        Value::Int64(si.byte_start),
        Value::Int64(si.byte_end),
        s(&r.signature),
        s(&r.visibility),
        s(&r.doc),
    ];
    if with_parent {
        v.push(s(si.parent.as_deref().unwrap_or(&file.id)));
    }
    v
}

/// Which new symbols an in-place write creates, and how: `top` are contained by
/// their file (created with `children`, their new direct children, in the same
/// statement); `nested` holds the others level by level (a level's parents
/// exist once the levels before it are written), each level in file order.
/// Symbols a file's diff keeps are not created again.
pub(super) struct InsertPlan<'a> {
    top: Vec<(&'a FileRow, &'a SymbolInsert)>,
    children: HashMap<&'a str, Vec<(&'a FileRow, &'a SymbolInsert)>>,
    nested: Vec<Vec<(&'a FileRow, &'a SymbolInsert)>>,
}

pub(super) fn insert_plan<'a>(
    add: &'a [FileRows],
    diffs: &HashMap<String, SymbolDiff>,
) -> InsertPlan<'a> {
    let mut plan = InsertPlan {
        top: Vec::new(),
        children: HashMap::new(),
        nested: Vec::new(),
    };
    for f in add {
        let keep = diffs.get(&f.file.path).map(|d| &d.keep);
        let created: Vec<&SymbolInsert> = f
            .symbols
            .iter()
            .filter(|si| keep.is_none_or(|k| !k.contains(si.row.id.as_str())))
            .collect();
        let parent_of: HashMap<&str, Option<&str>> = created
            .iter()
            .map(|si| (si.row.id.as_str(), si.parent.as_deref()))
            .collect();
        // Depth among the created symbols: 0 = its parent is the file or a kept
        // symbol.
        let depth = |si: &SymbolInsert| -> usize {
            let mut d = 0;
            let mut cur = si.parent.as_deref();
            while let Some(p) = cur {
                let Some(up) = parent_of.get(p) else { break };
                d += 1;
                cur = *up;
                if d > 256 {
                    break;
                }
            }
            d
        };
        let top_ids: HashSet<&str> = created
            .iter()
            .filter(|si| si.parent.is_none())
            .map(|si| si.row.id.as_str())
            .collect();
        for si in created {
            let d = depth(si);
            match si.parent.as_deref() {
                None => plan.top.push((&f.file, si)),
                Some(p) if d == 1 && top_ids.contains(p) => {
                    plan.children.entry(p).or_default().push((&f.file, si));
                }
                Some(_) => {
                    if plan.nested.len() <= d {
                        plan.nested.resize_with(d + 1, Vec::new);
                    }
                    plan.nested[d].push((&f.file, si));
                }
            }
        }
    }
    plan
}

pub(super) fn file_layout() -> (Vec<&'static str>, LogicalType) {
    let fields = vec![
        "id",
        "repo",
        "ref",
        "path",
        "language",
        "module",
        "package",
        "content_hash",
        "line_count",
        "size",
        "error_lines",
        "recovered",
    ];
    let ty = struct_type(&fields, &[7, 8, 9, 10, 11]);
    (fields, ty)
}

/// A content hash (`model::content_hash`: 16 hex digits) as the graph keeps it,
/// an INT64: an update of a STRING column makes Kuzu 0.11 rewrite the column's
/// chunk out of place (~2 MB a run on Go's tree, and a slower checkpoint each
/// time), an INT64 is updated in place.
pub(super) fn hash_value(hex: &str) -> i64 {
    u64::from_str_radix(hex, 16).unwrap_or(0) as i64
}

/// The graph's content hash as `model::content_hash` writes it.
pub(super) fn hash_text(v: i64) -> String {
    format!("{:016x}", v as u64)
}

pub(super) fn file_values(c: &Changes, r: &FileRow) -> Vec<Value> {
    vec![
        s(&r.id),
        s(&c.repo),
        s(&c.ref_name),
        s(&r.path),
        s(&r.language),
        s(&r.module),
        s(&r.package),
        Value::Int64(hash_value(&r.content_hash)),
        Value::Int64(r.line_count),
        Value::Int64(r.size),
        Value::Int64(r.error_lines),
        Value::Int64(r.recovered),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::graph::GraphConfig;

    /// A small real graph in `tmp`.
    fn small_store(tmp: &tempfile::TempDir) -> GraphStore {
        let cfg = GraphConfig {
            buffer_pool_bytes: 64 * 1024 * 1024,
            threads: 1,
            ..GraphConfig::default()
        };
        GraphStore::open(&tmp.path().join("g.kuzu"), &cfg).expect("open")
    }

    /// Node statements for the tests, the id as `$id`.
    const FILE: &str = "CREATE (:File {id: $id, repo: 'r', ref: 'm', path: $id, \
                        language: 'python', module: '', package: '', content_hash: 0, line_count: 1})";
    const SYMBOL: &str = "CREATE (:Symbol {id: $id, stable_id: $id, repo: 'r', ref: 'm', path: 'b', \
                          name: $id, kind: 'function', qualified_name: $id, language: 'python', \
                          line_start: 1, line_end: 1, byte_start: 0, byte_end: 1, signature: '', \
                          visibility: 'public', doc: ''})";
    const EXTERNAL: &str = "CREATE (:External {id: $id, repo: 'r', ref: 'm', name: $id})";

    /// On a real Kuzu database: a file's edges go eight a statement with the
    /// file found once; a group with a missing end goes one by one (its other
    /// rows still written); what is left of each file goes in mixed groups.
    #[test]
    fn grouped_import_edges_write_every_row_that_has_both_ends() {
        let tmp = tempfile::tempdir().expect("tmp");
        let store = small_store(&tmp);
        let conn = store.conn().expect("conn");
        let run = |text: &str, id: &str| {
            let mut stmt = conn.prepare(text).expect("prepare");
            conn.execute(&mut stmt, vec![("id", s(id))])
                .expect("create");
        };
        let row = |from: &str, to: &str, line: i64| {
            vec![s(from), s(to), s("n"), Value::Int64(line), s("")]
        };
        // `a` imports s0..s18 (s5 missing); `b` imports five of them.
        run(FILE, "a");
        run(FILE, "b");
        for i in (0..19).filter(|&i| i != 5) {
            run(SYMBOL, &format!("s{i}"));
        }
        let mut rows: Vec<Vec<Value>> = (0..19).map(|i| row("a", &format!("s{i}"), i)).collect();
        rows.extend((0..5).map(|i| row("b", &format!("s{i}"), 100 + i)));
        let mut stmts = HashMap::new();
        let mut session = Session::new(&conn, &mut stmts);
        let counts = write_grouped(
            &mut session,
            ImportLabel::Symbol,
            q("insert_import_symbol"),
            rows.into_iter(),
        )
        .expect("write");
        // a's first eight (with s5) one by one, its next eight at once, its
        // last three with b's five in a mixed group.
        assert_eq!(
            counts,
            ByKey {
                in_bulk: 0,
                from_file: 8,
                singles: 8
            }
        );
        let mut want: Vec<String> = (0..19)
            .filter(|&i| i != 5)
            .map(|i| format!("a>s{i}@{i}"))
            .chain((0..5).map(|i| format!("b>s{i}@{}", 100 + i)))
            .collect();
        want.sort();
        assert_eq!(import_edges(&conn), want);
    }

    /// Every import edge as `from>to@line`, in order.
    fn import_edges(conn: &kuzu::Connection<'_>) -> Vec<String> {
        conn.query(
            "MATCH (f:File)-[i:IMPORTS]->(t) \
             RETURN f.id + '>' + t.id + '@' + cast(i.line, 'STRING') AS e ORDER BY e",
        )
        .expect("read")
        .map(|r| string(&r[0]))
        .collect()
    }

    /// On a real Kuzu database: many edges out of one file, and many into one
    /// node, go a statement per group; the rest by key; a row with a missing
    /// end is left out, the others of its group written.
    #[test]
    fn bulk_import_groups_write_every_row_that_has_both_ends() {
        let tmp = tempfile::tempdir().expect("tmp");
        let store = small_store(&tmp);
        let conn = store.conn().expect("conn");
        let run = |text: &str, id: &str| {
            let mut stmt = conn.prepare(text).expect("prepare");
            conn.execute(&mut stmt, vec![("id", s(id))])
                .expect("create");
        };
        let (file, external, symbol) = (FILE, EXTERNAL, SYMBOL);
        let row = |from: &str, to: &str, line: i64| {
            vec![s(from), s(to), s("n"), Value::Int64(line), s("")]
        };
        // File `a` imports 20 externals (e7 missing); `b` two of them.
        for f in ["a", "b"] {
            run(file, f);
        }
        for i in (0..20).filter(|&i| i != 7) {
            run(external, &format!("e{i}"));
        }
        let mut rows: Vec<Vec<Value>> = (0..20).map(|i| row("a", &format!("e{i}"), i)).collect();
        rows.extend([row("b", "e0", 100), row("b", "e1", 101)]);
        // 18 files import symbol `t` (f3 missing); f0 also imports `u`.
        run(symbol, "t");
        run(symbol, "u");
        for i in (0..18).filter(|&i| i != 3) {
            run(file, &format!("f{i}"));
        }
        let mut into: Vec<Vec<Value>> = (0..18).map(|i| row(&format!("f{i}"), "t", i)).collect();
        into.push(row("f0", "u", 50));
        let mut stmts = HashMap::new();
        let mut session = Session::new(&conn, &mut stmts);
        let (rest, bulk) =
            write_bulk_groups(&mut session, ImportLabel::External, rows).expect("bulk externals");
        assert_eq!((rest.len(), bulk), (2, 20), "a's edges in one statement");
        write_grouped(
            &mut session,
            ImportLabel::External,
            q("insert_import_external"),
            rest.into_iter(),
        )
        .expect("write externals");
        let (rest, bulk) =
            write_bulk_groups(&mut session, ImportLabel::Symbol, into).expect("bulk symbols");
        assert_eq!(
            (rest.len(), bulk),
            (1, 18),
            "t's importers in one statement"
        );
        write_grouped(
            &mut session,
            ImportLabel::Symbol,
            q("insert_import_symbol"),
            rest.into_iter(),
        )
        .expect("write symbols");
        let mut want: Vec<String> = (0..20)
            .filter(|&i| i != 7)
            .map(|i| format!("a>e{i}@{i}"))
            .chain(["b>e0@100".to_string(), "b>e1@101".to_string()])
            .chain((0..18).filter(|&i| i != 3).map(|i| format!("f{i}>t@{i}")))
            .chain(["f0>u@50".to_string()])
            .collect();
        want.sort();
        assert_eq!(import_edges(&conn), want);
    }
}
