//! What resolution found, file by file, as the graph's edge changes: each
//! resolved file's edges recorded in its metadata (the next run's state), and
//! written as they are for a whole ref (straight to a full build's COPY files),
//! or as the difference from before for a run that trusts its state.

use super::spill::Spill;
use std::collections::{HashMap, HashSet};

use super::state::{self, FileMeta, Fingerprint};
use crate::model::lazy::Lazy;
use crate::resolve::{self, Edge, RFile, Resolved, SiteEdge, Target};
use crate::store::graph::{
    Changes, EdgeCsvs, EdgeFiles, FileRows, GraphError, ImportChanges, ImportDiff, ImportLabel,
    ImportRow, SiteChanges, SiteRow, file_id,
};

/// The symbols of changed files that are re-created (not kept by their
/// file's diff): edges into them went with them, so they are written again
/// even when unchanged.
pub(super) fn recreated_symbols(rows: &[FileRows], changes: &Changes) -> HashSet<String> {
    rows.iter()
        .filter(|rows| rows.existing)
        .flat_map(|rows| {
            let keep = changes.symbol_diffs.get(&rows.file.path).map(|d| &d.keep);
            rows.symbols
                .iter()
                .map(|si| si.row.id.as_str())
                .filter(move |id| keep.is_none_or(|k| !k.contains(*id)))
                .map(str::to_string)
        })
        .collect()
}

/// Where a whole ref's edges go: a full build's COPY files, or rows kept for
/// a load beside other refs (or an in-place run without a state).
pub(super) enum Whole {
    Files(Box<EdgeCsvs>),
    Rows {
        imports: Vec<ImportRow>,
        sites: Vec<SiteRow>,
    },
}

/// Each resolved file's edges, as they come (`add`), recorded in its metadata
/// and turned into what the run writes (`finish`): with a trusted state, the
/// difference between each re-resolved file's edges before and now (and the
/// edges into symbols the run re-creates, which go with them), the External
/// nodes that come and go, and the symbols whose import in-degree may change;
/// else every edge (`Whole`).
pub(super) struct EdgeChanges<'a> {
    /// `None`: the run trusts its state and writes the difference.
    whole: Option<Whole>,
    recreated: &'a HashSet<String>,
    gone_symbols: &'a HashSet<String>,
    /// The previous entries of the replaced and removed files, by path.
    old_meta: &'a HashMap<String, FileMeta>,
    /// Ids of the files the run removes.
    gone_files: HashSet<String>,
    /// The External names the re-resolved files held before (trusted only).
    externals_before: resolve::FxSet<String>,
    /// Where a full build keeps each file's packed edges (`Spill`), and the
    /// files added since its pages last left the process.
    spill: Option<(std::sync::Arc<Spill>, usize)>,
    diff: ImportDiff,
    site_stale: Vec<SiteRow>,
    site_missing: Vec<SiteRow>,
    names_gone: Vec<String>,
}

impl<'a> EdgeChanges<'a> {
    /// Before any file is resolved again: `meta` (and `old_meta`, the
    /// entries of replaced and removed files) still say what the files held.
    pub(super) fn new(
        whole: Option<Whole>,
        (meta, old_meta): (&[FileMeta], &'a HashMap<String, FileMeta>),
        (re_resolved, parsed_now): (&[bool], &[bool]),
        (recreated, gone_symbols): (&'a HashSet<String>, &'a HashSet<String>),
        changes: &Changes,
    ) -> EdgeChanges<'a> {
        // Only names that a re-resolved or removed file pointed at, before or
        // now, can gain their first edge or lose their last. Their sets
        // before, taken now while the metadata still says so (files that are
        // not re-resolved hold the same names before and after).
        let externals_before: resolve::FxSet<String> = match whole {
            Some(_) => Default::default(),
            None => meta
                .iter()
                .zip(re_resolved)
                .zip(parsed_now)
                .filter(|&((_, &r), &parsed)| r && !parsed)
                .map(|((m, _), _)| m)
                .chain(old_meta.values())
                .flat_map(|m| m.externals.iter().cloned())
                .collect(),
        };
        // Edges into a node the run deletes go with it (DETACH DELETE):
        // deleting them first is a statement per edge, for nothing (a popular
        // file's deletion: ~100 stale edges into it, 100 ms on the Rust crates).
        let gone_files: HashSet<String> = changes
            .drop_files
            .iter()
            .map(|p| file_id(&changes.repo, &changes.ref_name, p))
            .collect();
        EdgeChanges {
            whole,
            recreated,
            gone_symbols,
            old_meta,
            gone_files,
            externals_before,
            spill: None,
            diff: ImportDiff::default(),
            site_stale: Vec::new(),
            site_missing: Vec::new(),
            names_gone: Vec::new(),
        }
    }

    /// Keeps a full build's packed edges in `spill`.
    pub(super) fn spilling_to(mut self, spill: Option<std::sync::Arc<Spill>>) -> Self {
        self.spill = spill.map(|s| (s, 0));
        self
    }

    /// One re-resolved file `f`: `m` its metadata (what it held before,
    /// unless it was `parsed` now).
    pub(super) fn add(&mut self, f: &RFile, m: &mut FileMeta, parsed: bool, mut r: Resolved) {
        // The sections read so far leave the process now and then: read
        // through the mapping, they stayed resident (~40 MB on the crates).
        if let Some((spill, added)) = &mut self.spill {
            *added += 1;
            if added.is_multiple_of(1024) {
                spill.drop_pages();
            }
        }
        let fp = state::fingerprint_with_sites(state::fingerprint(&r.edges), &r.sites);
        let kept = match &mut self.whole {
            Some(whole) => {
                // Kept as the state saves them: a full build holds every
                // file's until the state is written.
                let spill = self.spill.as_ref().map(|(s, _)| &**s);
                let kept = (
                    state::encoded_site_edges(&r.sites, spill),
                    state::encoded_edges(&r.edges, spill),
                );
                let sites = std::mem::take(&mut r.sites).into_iter();
                match whole {
                    Whole::Files(csvs) => {
                        sites.for_each(|e| csvs.site(&site_row_of(&f.id, e)));
                        r.edges.iter().for_each(|e| csvs.import(&import_row(e)));
                    }
                    Whole::Rows {
                        imports,
                        sites: rows,
                    } => {
                        rows.extend(sites.map(|e| site_row_of(&f.id, e)));
                        imports.extend(r.edges.iter().map(import_row));
                    }
                }
                kept
            }
            None => {
                let old = match parsed {
                    true => self.old_meta.get(&f.path),
                    false => Some(&*m),
                };
                self.add_diff(f, old, fp, &r);
                let out_edges = r.edges.iter().map(|e| Edge {
                    from: String::new(),
                    ..e.clone()
                });
                (
                    Lazy::new(std::mem::take(&mut r.sites)),
                    Lazy::new(out_edges.collect()),
                )
            }
        };
        record_edges(m, fp, &mut r, kept);
    }

    /// The difference `add` keeps for a trusted run.
    fn add_diff(&mut self, f: &RFile, old: Option<&FileMeta>, fp: Fingerprint, r: &Resolved) {
        // The call graph: the same diff, edges out of and into symbols the
        // run re-creates written again, those of symbols it deletes gone
        // with them.
        let diff = SiteDiff {
            stale: &mut self.site_stale,
            missing: &mut self.site_missing,
            names_gone: &mut self.names_gone,
        };
        diff.add(&f.id, old, &r.sites, self.recreated, self.gone_symbols);
        let recreated = self.recreated;
        let into_recreated =
            |e: &Edge| matches!(&e.target, Target::Symbol(id) if recreated.contains(id.as_str()));
        if old.map(|o| o.fingerprint) == Some(fp) && !r.edges.iter().any(into_recreated) {
            return;
        }
        let (gone_symbols, gone_files) = (self.gone_symbols, &self.gone_files);
        let into_gone = |e: &Edge| match &e.target {
            Target::Symbol(id) => gone_symbols.contains(id),
            Target::File(id) => gone_files.contains(id),
            _ => false,
        };
        let key = |e: &Edge| (e.target.clone(), e.to_name.clone(), e.line, e.alias.clone());
        let before: HashSet<_> = old.map_or(Default::default(), |o| {
            o.out_edges.iter().map(key).collect()
        });
        let now: HashSet<_> = r.edges.iter().map(key).collect();
        for e in old.into_iter().flat_map(|o| o.out_edges.iter()) {
            if !now.contains(&key(e)) && !into_gone(e) {
                self.diff.stale.push(import_row(&Edge {
                    from: f.id.clone(),
                    ..e.clone()
                }));
            }
        }
        for e in &r.edges {
            if !before.contains(&key(e)) || into_recreated(e) {
                self.diff.missing.push(import_row(e));
            }
        }
    }

    /// What the run writes, once every file was added; a full build's edges
    /// as the files to copy. `meta`: every file's, as recorded now.
    pub(super) fn finish(
        mut self,
        changes: &Changes,
        meta: &[FileMeta],
        re_resolved: &[bool],
    ) -> Result<(ImportChanges, SiteChanges, Option<EdgeFiles>), GraphError> {
        // Resolution read every file's sections from the spill.
        if let Some((spill, _)) = &self.spill {
            spill.drop_pages();
        }
        match self.whole.take() {
            Some(Whole::Files(csvs)) => Ok((
                ImportChanges::All(Vec::new()),
                SiteChanges::All(Vec::new()),
                Some(csvs.finish()?),
            )),
            Some(Whole::Rows { imports, sites }) => {
                Ok((ImportChanges::All(imports), SiteChanges::All(sites), None))
            }
            None => {
                let mut diff = std::mem::take(&mut self.diff);
                removed_files(changes, self.old_meta, &mut diff, &mut self.names_gone);
                (diff.externals_new, diff.externals_gone) =
                    externals_changed(meta, re_resolved, &self.externals_before);
                let sites = SiteChanges::Diff {
                    stale: self.site_stale,
                    missing: self.site_missing,
                    names_gone: self.names_gone,
                };
                Ok((ImportChanges::Diff(diff), sites, None))
            }
        }
    }
}

/// What removed files take along: the names of their unresolved sites may
/// be left unused (`names_gone`, sorted), and the symbols they imported, like
/// those of the import edges the run adds or deletes, may count fewer
/// importers (`diff.touched`, sorted). Their edges go with their nodes
/// (DETACH DELETE).
fn removed_files(
    changes: &Changes,
    old_meta: &HashMap<String, FileMeta>,
    diff: &mut ImportDiff,
    names_gone: &mut Vec<String>,
) {
    // A removed file's edges go with its nodes (DETACH DELETE); the names of
    // its unresolved sites may be left unused.
    names_gone.extend(
        changes
            .drop_files
            .iter()
            .filter_map(|p| old_meta.get(p))
            .flat_map(|m| m.site_edges.iter())
            .filter(|e| e.rel == resolve::Rel::Unresolved)
            .map(|e| e.to.to_string()),
    );
    names_gone.sort_unstable();
    names_gone.dedup();
    // A removed file's edges go with it: the symbols it imported count fewer.
    let removed = changes.drop_files.iter().filter_map(|p| old_meta.get(p));
    let mut touched: HashSet<String> = HashSet::new();
    touched.extend(
        removed
            .flat_map(|m| m.out_edges.iter())
            .filter_map(|e| match &e.target {
                Target::Symbol(id) => Some(id.clone()),
                _ => None,
            }),
    );
    touched.extend(
        diff.stale
            .iter()
            .chain(&diff.missing)
            .filter(|r| r.label == ImportLabel::Symbol)
            .map(|r| r.to.clone()),
    );
    diff.touched = touched.into_iter().collect();
    diff.touched.sort();
}

/// The External names the run's files gained that no file held (to create),
/// and lost that no other file holds (to delete), both sorted.
fn externals_changed(
    meta: &[FileMeta],
    re_resolved: &[bool],
    externals_before: &resolve::FxSet<String>,
) -> (Vec<String>, Vec<String>) {
    let externals_after: resolve::FxSet<String> = meta
        .iter()
        .zip(re_resolved)
        .filter(|&(_, &r)| r)
        .flat_map(|(m, _)| m.externals.iter().cloned())
        .collect();
    // A name one side has and the other not changes only if no other file
    // holds it: those are looked for in the rest (a scan only when the
    // run's files gained or lost one; lengths rule out most names unhashed).
    let flipped: resolve::FxSet<&str> = externals_before
        .symmetric_difference(&externals_after)
        .map(String::as_str)
        .collect();
    let held_elsewhere: resolve::FxSet<&str> = if flipped.is_empty() {
        Default::default()
    } else {
        let mut lengths = [false; 256];
        for x in &flipped {
            lengths[x.len().min(255)] = true;
        }
        meta.iter()
            .zip(re_resolved)
            .filter(|&(_, &r)| !r)
            .flat_map(|(m, _)| m.externals.iter())
            .filter(|x| lengths[x.len().min(255)])
            .filter_map(|x| flipped.get(x.as_str()).copied())
            .collect()
    };
    let mut new: Vec<String> = externals_after
        .iter()
        .filter(|x| !externals_before.contains(*x) && !held_elsewhere.contains(x.as_str()))
        .cloned()
        .collect();
    let mut gone: Vec<String> = externals_before
        .iter()
        .filter(|x| !externals_after.contains(*x) && !held_elsewhere.contains(x.as_str()))
        .cloned()
        .collect();
    new.sort();
    gone.sort();
    (new, gone)
}

/// Where the call-graph rows a trusted run writes and deletes go.
struct SiteDiff<'a> {
    stale: &'a mut Vec<SiteRow>,
    missing: &'a mut Vec<SiteRow>,
    names_gone: &'a mut Vec<String>,
}

impl SiteDiff<'_> {
    /// One re-resolved file's call-graph edges, before (`old`) and now: the
    /// ones gone, the new ones, and those out of or into symbols the run
    /// re-creates (written again); edges of symbols it deletes go with them.
    fn add(
        self,
        file_id: &str,
        old: Option<&FileMeta>,
        sites: &[SiteEdge],
        recreated: &HashSet<String>,
        gone_symbols: &HashSet<String>,
    ) {
        let touches = |e: &SiteEdge, set: &dyn Fn(&str) -> bool| {
            set(&e.from) || (e.rel != resolve::Rel::Unresolved && set(&e.to))
        };
        let is_recreated = |id: &str| recreated.contains(id);
        let is_gone = |id: &str| gone_symbols.contains(id);
        let before: HashSet<&SiteEdge> =
            old.map_or(Default::default(), |o| o.site_edges.iter().collect());
        let now: HashSet<&SiteEdge> = sites.iter().collect();
        for e in old.into_iter().flat_map(|o| o.site_edges.iter()) {
            if touches(e, &is_gone) {
                // Goes with its deleted source: its name may be left unused.
                if e.rel == resolve::Rel::Unresolved {
                    self.names_gone.push(e.to.to_string());
                }
            } else if !now.contains(e) {
                self.stale.push(site_row(file_id, e));
            }
        }
        for e in sites {
            if !before.contains(e) || touches(e, &is_recreated) {
                self.missing.push(site_row(file_id, e));
            }
        }
    }
}

/// A call-graph edge as the graph stores it (`from` "" is the file `file_id`).
/// `site_row` of an edge the caller is done with: its strings move.
fn site_row_of(file_id: &str, e: SiteEdge) -> SiteRow {
    let from_file = e.from.is_empty();
    SiteRow {
        rel: e.rel.as_str(),
        from: if from_file { file_id.into() } else { e.from },
        from_file,
        to: e.to,
        line: i64::from(e.line),
        col: i64::from(e.col),
        confidence: e.tier.as_str(),
        kind: e.kind.as_str(),
        to_name: e.to_name,
    }
}

fn site_row(file_id: &str, e: &SiteEdge) -> SiteRow {
    site_row_of(file_id, e.clone())
}

/// A file's resolution, as its metadata keeps it.
fn record_edges(
    m: &mut FileMeta,
    fp: Fingerprint,
    r: &mut Resolved,
    (site_edges, out_edges): (Lazy<Vec<SiteEdge>>, Lazy<Vec<Edge>>),
) {
    // Resolved to the same edges, through lookups it already depends on: the
    // entry stays as it was read, record included, so the next save appends
    // nothing for it. Lookups it no longer makes stay among its `deps`, which
    // only re-resolves it once more than needed if they change. A rename
    // re-resolves hundreds of importers whose edges stay (the lookups of the
    // moved module drop out); re-encoding them appended ~12 MB per rename on
    // the Rust crates and rewrote the whole 75 MB state every second run.
    if m.record.is_some() && m.fingerprint == fp && state::is_subset(&r.deps, &m.deps) {
        return;
    }
    m.record_resolution();
    m.fingerprint = fp;
    m.deps = std::mem::take(&mut r.deps);
    m.edges = r.edges.len() as u32;
    m.unresolved = r
        .edges
        .iter()
        .filter(|e| matches!(e.target, Target::External(_)))
        .count() as u32;
    m.externals = r
        .edges
        .iter()
        .filter_map(|e| match &e.target {
            Target::External(name) => Some(name.clone()),
            _ => None,
        })
        .collect();
    m.externals.dedup();
    m.site_edges = site_edges;
    m.out_edges = out_edges;
}

/// A resolved edge as a graph row.
fn import_row(e: &Edge) -> ImportRow {
    let (label, to) = match &e.target {
        Target::Symbol(id) => (ImportLabel::Symbol, id.clone()),
        Target::File(id) => (ImportLabel::File, id.clone()),
        Target::Package(dir) => (ImportLabel::Package, dir.clone()),
        Target::External(name) => (ImportLabel::External, name.clone()),
    };
    ImportRow {
        from: e.from.clone(),
        label,
        to,
        to_name: e.to_name.clone(),
        line: e.line,
        alias: e.alias.clone(),
    }
}
