//! A whole ref written with bulk COPY from CSV files (Kuzu's fastest path),
//! each statement committing on its own: a full build into a new, empty
//! database, or a ref loaded beside the others of a shared one.

use kuzu::Connection;

use super::csv::{Csv, Written, open, scratch};
use super::edge_csvs::{EdgeCsvs, EdgeFiles};
use super::readers::{Lane, Session};
use super::rows::{Changes, FileRows, ImportChanges, PackageRow, SiteChanges};
use super::schema::q;
use super::write::{delete_ref, upsert_repo_and_ref, upsert_repo_and_ref_tagged};
use super::{CopyPart, GraphError, GraphStore, Result, package_id, ref_id};
use crate::model::cancel::Cancel;

impl GraphStore {
    /// Writes a whole repo/ref into this (new, empty) database with bulk COPY, each
    /// statement committing on its own: only for a database that is built aside
    /// and swapped in by the caller once this returns.
    ///
    /// This half: the ref, its files and their symbols (`nodes`, written as
    /// the files were parsed), which resolution does not change (a full build
    /// loads them while it resolves); then `load_fresh_edges`. `abandon` is
    /// asked between statements.
    pub fn load_fresh_nodes(
        &mut self,
        header: &Changes,
        nodes: NodeFiles,
        abandon: &dyn Fn() -> bool,
    ) -> Result<()> {
        let mut conn = self.conn()?;
        // On one of Kuzu's threads: each holds a node group of rows at a
        // time, and this COPY is a cold index's peak (on the crates corpus at
        // 512 MiB, 483 / 521 MiB with two threads, 459 / 475 with one); the
        // node groups one thread fills are also fuller (the crates' graph
        // 304 → 297 MB). It runs beside resolution, which keeps the other
        // cores busy: the cold index's wall did not move (docs/BENCHMARKS.md).
        conn.set_max_num_threads_for_exec(1);
        let mut stmts = std::collections::HashMap::new();
        let mut session = Session::new(&conn, &mut stmts);
        upsert_repo_and_ref(&mut session, header)?;
        let copier = Copier::new(&conn, self.copy_part)?;
        run_all(&copier, nodes.written, abandon)
    }

    /// The second half of a fresh load (`load_fresh_nodes` first): what
    /// resolution found: Go packages (`changes.packages`), then imports and
    /// the call graph, written as each file was resolved (`edges`).
    pub fn load_fresh_edges(
        &mut self,
        changes: &Changes,
        edges: EdgeFiles,
        abandon: &dyn Fn() -> bool,
    ) -> Result<()> {
        let conn = self.conn()?;
        let mut stmts = std::collections::HashMap::new();
        let mut session = Session::new(&conn, &mut stmts);
        copy_edges(&mut session, self.copy_part, changes, Some(edges), abandon)
    }

    /// Writes a whole repo/ref (`changes.add`, and its imports when it has
    /// any: `ImportChanges::All`) into this graph, which holds other refs,
    /// replacing what it held of this one.
    ///
    /// Not in one transaction: Kuzu keeps a transaction's new rows in its
    /// buffer pool, and a whole ref does not fit there (Python's `lib/` ran a
    /// 512 MB pool out a third of the way through its 368k symbols). So the
    /// rows go in with the bulk COPY of a full build, each statement committing
    /// on its own, which needs little memory and is faster too. Until the last
    /// one the ref is marked unfinished (`indexed_at` is `UNFINISHED_TAG`, see
    /// [`GraphStore::ref_unfinished`]): a crash or a stop in between leaves it
    /// so, and the next run indexes it again from scratch.
    ///
    /// The graph is checkpointed first: in Kuzu 0.11.3 a COPY that fails
    /// (which ours should not) into a table holding rows not yet checkpointed
    /// left the next statement to crash the process; with none, the table
    /// keeps its rows.
    ///
    /// Runs on the writer thread like `apply`, holding the checkpoint gate;
    /// readers of this ref may see it partly written meanwhile (its commit
    /// count stays odd until the end). `abandon` is asked between statements.
    pub fn load_beside(
        &self,
        changes: &mut Changes,
        abandon: Box<dyn Fn() -> bool + Send>,
    ) -> Result<()> {
        self.checkpoint()?;
        let _gate = self.gate.read().unwrap_or_else(|e| e.into_inner());
        self.check_usable()?;
        let (repo, ref_name) = (changes.repo.clone(), changes.ref_name.clone());
        let owned = std::mem::take(changes);
        let part = self.copy_part;
        self.count_commit(&repo, &ref_name);
        let done = self
            .writer()
            .submit(Lane::Walk, &Cancel::never(), move |w| {
                let result = load_on(&mut w.session(), part, &owned, &*abandon);
                Ok((owned, result))
            });
        let outcome = done.and_then(|rx| {
            rx.recv()
                .map_err(|_| GraphError::Kuzu("the graph writer stopped".into()))?
        });
        self.count_commit(&repo, &ref_name);
        let (owned, result) = outcome?;
        *changes = owned;
        result
    }
}

/// `GraphStore::load_beside` on the writer thread's session.
fn load_on(
    conn: &mut Session<'_, '_>,
    part: CopyPart,
    c: &Changes,
    abandon: &dyn Fn() -> bool,
) -> Result<()> {
    let t = std::time::Instant::now();
    // The mark and the removal of what the ref held go together.
    conn.query("BEGIN TRANSACTION")?;
    let marked = upsert_repo_and_ref_tagged(conn, c, super::UNFINISHED_TAG, "").and_then(|()| {
        match c.replace_all {
            true => delete_ref(conn, c),
            false => Ok(()),
        }
    });
    match marked {
        Ok(()) => conn.query("COMMIT")?,
        Err(e) => {
            let _ = conn.query("ROLLBACK");
            return Err(e);
        }
    }
    copy_rows(conn, part, c, abandon)?;
    if abandon() {
        return Err(GraphError::Abandoned);
    }
    upsert_repo_and_ref(conn, c)?;
    tracing::debug!(
        files = c.add.len(),
        ms = t.elapsed().as_millis() as u64,
        "loaded the ref beside the others"
    );
    Ok(())
}

/// Writes a whole repo/ref's rows with COPY from CSV files, each statement
/// committing on its own (the Ref node is the caller's). CSV, not parameters:
/// converting wide rows across the FFI costs more than Kuzu's CSV reader.
/// `abandon` is asked before each table.
fn copy_rows(
    session: &mut Session<'_, '_>,
    part: CopyPart,
    c: &Changes,
    abandon: &dyn Fn() -> bool,
) -> Result<()> {
    copy_nodes(&mut Copier::new(session.connection(), part)?, c, abandon)?;
    copy_edges(session, part, c, None, abandon)
}

/// Files and symbols, with their HAS_FILE and CONTAINS edges.
fn copy_nodes(copier: &mut Copier<'_, '_>, c: &Changes, abandon: &dyn Fn() -> bool) -> Result<()> {
    let written = node_csvs(copier, c)?;
    run_all(copier, written, abandon)
}

/// The COPY of each of `written`, in order, `abandon` asked after each.
fn run_all(
    copier: &Copier<'_, '_>,
    written: Vec<Written>,
    abandon: &dyn Fn() -> bool,
) -> Result<()> {
    for w in written {
        copier.run(w)?;
        go_on(abandon)?;
    }
    Ok(())
}

fn go_on(abandon: &dyn Fn() -> bool) -> Result<()> {
    match abandon() {
        true => Err(GraphError::Abandoned),
        false => Ok(()),
    }
}

/// Go packages, then imports and the call graph: the files of `edges`, or
/// written here from the changes' rows (`ImportChanges::All`,
/// `SiteChanges::All`).
fn copy_edges(
    session: &mut Session<'_, '_>,
    part: CopyPart,
    c: &Changes,
    edges: Option<EdgeFiles>,
    abandon: &dyn Fn() -> bool,
) -> Result<()> {
    let mut copier = Copier::new(session.connection(), part)?;
    if let Some(packages) = &c.packages {
        copy_packages(&mut copier, session, c, packages)?;
    }
    go_on(abandon)?;
    let edges = match edges {
        Some(files) => files,
        None => {
            let mut csvs = EdgeCsvs::in_dir(copier.scratch.path(), part, &c.repo, &c.ref_name)?;
            if let Some(ImportChanges::All(rows)) = &c.imports {
                rows.iter().for_each(|r| csvs.import(r));
            }
            if let Some(SiteChanges::All(rows)) = &c.sites {
                rows.iter().for_each(|r| csvs.site(r));
            }
            csvs.finish()?
        }
    };
    run_all(&copier, edges.written, abandon)
}

/// Go packages and their files' IN_PACKAGE edges: by COPY when the ref has
/// none yet (Go's `src/`: 6k edges took 0.7 s as statements, each matching
/// both its ends), else as the diff `sync_packages` writes.
fn copy_packages(
    copier: &mut Copier<'_, '_>,
    session: &mut Session<'_, '_>,
    c: &Changes,
    packages: &[PackageRow],
) -> Result<()> {
    if super::write::ref_has_packages(session, c)? {
        return super::write::sync_packages(session, c, packages);
    }
    let mut rows: Vec<(String, &str, &[String])> = packages
        .iter()
        .map(|p| {
            (
                package_id(&c.repo, &c.ref_name, &p.path),
                p.path.as_str(),
                p.files.as_slice(),
            )
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows.dedup_by(|a, b| a.0 == b.0);
    copier.copy("copy_packages", &mut |csv| {
        for (id, path, _) in &rows {
            csv.text(id)
                .text(&c.repo)
                .text(&c.ref_name)
                .text(path)
                .text("go")
                .end();
        }
    })?;
    let mut members: Vec<(&str, &str)> = rows
        .iter()
        .flat_map(|(id, _, files)| files.iter().map(move |f| (f.as_str(), id.as_str())))
        .collect();
    members.sort_unstable();
    members.dedup();
    copier.copy("copy_package_files", &mut |csv| {
        for (file, package) in &members {
            csv.text(file).text(package).end();
        }
    })
}

/// Writes rows to CSV files in a scratch directory and COPYs each into Kuzu.
struct Copier<'c, 'db> {
    conn: &'c Connection<'db>,
    scratch: tempfile::TempDir,
    files: usize,
    part: CopyPart,
}

impl<'c, 'db> Copier<'c, 'db> {
    fn new(conn: &'c Connection<'db>, part: CopyPart) -> Result<Copier<'c, 'db>> {
        Ok(Copier {
            conn,
            part,
            scratch: scratch()?,
            files: 0,
        })
    }

    /// COPY of the rows `write` writes, with the statement `name` (`{csv}`
    /// is the file); nothing when there are none.
    fn copy(&mut self, name: &str, write: &mut dyn FnMut(&mut Csv)) -> Result<()> {
        self.copy_statement(q(name), write)
    }

    /// `copy` with the statement's text.
    fn copy_statement(&mut self, statement: &str, write: &mut dyn FnMut(&mut Csv)) -> Result<()> {
        let written = self.write(statement, write)?;
        self.run(written)
    }

    /// The CSV files of a COPY, written and not yet copied (`run`).
    fn write(&mut self, statement: &str, write: &mut dyn FnMut(&mut Csv)) -> Result<Written> {
        self.files += 1;
        let name = self.files.to_string();
        let mut csv = open(self.scratch.path(), &name, statement, self.part)?;
        write(&mut csv);
        Written::of(csv, statement)
    }

    /// The COPY of each part of `written`, in order.
    fn run(&self, written: Written) -> Result<()> {
        for (part, count) in written.parts {
            let started = std::time::Instant::now();
            let query = written.statement.replace("{csv}", &part.to_string_lossy());
            self.conn.query(&query)?;
            // Each part's rows are in the graph now: its file is not needed.
            let _ = std::fs::remove_file(&part);
            tracing::debug!(
                rows = count,
                ms = started.elapsed().as_millis() as u64,
                name = written.statement,
                "copy"
            );
        }
        Ok(())
    }
}

/// The CSV files of the node tables and their edges, in the order they are
/// copied: files and their HAS_FILE edges, then symbols and their CONTAINS
/// edges (from their file, or their parent symbol). Written before any is
/// copied, so a full build's rows can go before Kuzu's COPY runs.
fn node_csvs(copier: &mut Copier<'_, '_>, c: &Changes) -> Result<Vec<Written>> {
    let mut csvs = NodeCsvs::in_dir(copier.scratch.path(), copier.part, &c.repo, &c.ref_name)?;
    for f in c.add.iter() {
        csvs.add(f);
    }
    csvs.finish_written()
}

/// The CSV files of a ref's files and symbols (`node_csvs`), written a file at
/// a time as they come: a full build streams each parsed file here and lets
/// go of its rows (`GraphStore::load_fresh_nodes` copies them once all came).
pub struct NodeCsvs {
    /// Held until the COPY ran (a full build's own scratch directory).
    scratch: Option<tempfile::TempDir>,
    repo: String,
    ref_name: String,
    ref_id: String,
    files: Csv,
    has_file: Csv,
    symbols: Csv,
    file_contains: Csv,
    symbol_contains: Csv,
}

/// The CSV files `NodeCsvs` wrote, to be copied in order.
pub struct NodeFiles {
    _scratch: Option<tempfile::TempDir>,
    written: Vec<Written>,
}

/// The node tables' statements, in the order their files are copied.
const NODE_STATEMENTS: [&str; 5] = [
    "copy_files",
    "copy_has_file",
    "copy_symbols",
    "copy_file_contains",
    "copy_symbol_contains",
];

impl NodeCsvs {
    /// A full build's files, in a scratch directory of their own.
    pub fn create(part: CopyPart, repo: &str, ref_name: &str) -> Result<NodeCsvs> {
        let scratch = scratch()?;
        let mut csvs = NodeCsvs::in_dir(scratch.path(), part, repo, ref_name)?;
        csvs.scratch = Some(scratch);
        Ok(csvs)
    }

    fn in_dir(
        dir: &std::path::Path,
        part: CopyPart,
        repo: &str,
        ref_name: &str,
    ) -> Result<NodeCsvs> {
        let open = |name: &str| open(dir, name, q(name), part);
        Ok(NodeCsvs {
            scratch: None,
            repo: repo.to_string(),
            ref_name: ref_name.to_string(),
            ref_id: ref_id(repo, ref_name),
            files: open(NODE_STATEMENTS[0])?,
            has_file: open(NODE_STATEMENTS[1])?,
            symbols: open(NODE_STATEMENTS[2])?,
            file_contains: open(NODE_STATEMENTS[3])?,
            symbol_contains: open(NODE_STATEMENTS[4])?,
        })
    }

    /// One file's rows (a write error is kept for `finish`).
    pub fn add(&mut self, f: &FileRows) {
        let r = &f.file;
        self.files
            .text(&r.id)
            .text(&self.repo)
            .text(&self.ref_name)
            .text(&r.path)
            .text(&r.language)
            .text(&r.module)
            .text(&r.package)
            .int(super::write::hash_value(&r.content_hash))
            .int(r.line_count)
            .int(r.size)
            .int(r.error_lines)
            .int(r.recovered)
            .end();
        self.has_file.text(&self.ref_id).text(&r.id).end();
        for si in &f.symbols {
            let r = &si.row;
            // A full build's rows leave these out (`FileContext::lean`).
            let made;
            let stable_id = match r.stable_id.is_empty() {
                false => &r.stable_id,
                true => {
                    made = crate::model::stable_id_of(
                        &r.language,
                        &r.qualified_name,
                        &r.kind,
                        &r.signature,
                    );
                    &made
                }
            };
            self.symbols
                .text(&r.id)
                .text(stable_id)
                .text(&self.repo)
                .text(&self.ref_name)
                .text(&f.file.path)
                .text(&r.name)
                .text(&r.kind)
                .text(&r.qualified_name)
                .text(&r.language)
                .int(r.line_start)
                .int(r.line_end)
                .int(si.byte_start)
                .int(si.byte_end)
                .text(&r.signature)
                .text(&r.visibility)
                .text(&r.doc)
                .end();
            match &si.parent {
                None => self.file_contains.text(&f.file.id).text(&r.id).end(),
                Some(p) => self.symbol_contains.text(p).text(&r.id).end(),
            }
        }
    }

    /// The files written, in the order they are copied.
    pub fn finish(mut self) -> Result<NodeFiles> {
        Ok(NodeFiles {
            _scratch: self.scratch.take(),
            written: self.finish_written()?,
        })
    }

    fn finish_written(self) -> Result<Vec<Written>> {
        let csvs = [
            self.files,
            self.has_file,
            self.symbols,
            self.file_contains,
            self.symbol_contains,
        ];
        csvs.into_iter()
            .zip(NODE_STATEMENTS)
            .map(|(csv, name)| Written::of(csv, q(name)))
            .collect()
    }
}
