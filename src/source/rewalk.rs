//! A walk that reads again only the directories that changed since a recorded
//! one: what a CLI run does instead of listing the whole tree (46k entries in
//! 8k directories of a Python `lib/`: ~150-250 ms, against ~30 ms of `stat`s
//! here).
//!
//! A directory gains, loses or renames an entry only with a new modification
//! time, so the entries of one whose times are as recorded are as recorded;
//! only its files' contents may differ (each source file is `stat`ed for the
//! change check anyway). What the times cannot tell falls back to the full
//! walk, or to reading that directory again:
//!
//! - a directory changed within ~100 ms of the recording walk's start (file
//!   times come from a coarse clock), one with a problem or a symlink in it,
//!   is read again every time;
//! - a new subdirectory, a new or changed ignore file (in the tree, above it,
//!   or git's exclude file), a kept source file that is gone or too large now,
//!   or other options: the full walk.
//!
//! `tests/incremental.rs` checks it against the full walk after edits, adds,
//! deletes, renames, new directories and ignore-file changes.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::walk::{self, DirSeen, FileStat, SourceFile, WalkOptions, WalkResult, dir_times};
use crate::model::Language;

/// What a walk saw, for the next one to compare (kept beside a ref's state).
#[derive(Serialize, Deserialize)]
pub struct DirMemo {
    /// The root and the options walked with, and this format's version.
    key: String,
    /// Ignore files that can apply from outside the tree's directories (the
    /// root's ancestors, git's exclude file), with their times (`None`:
    /// absent).
    outer_ignores: Vec<(PathBuf, Option<(i64, i64)>)>,
    dirs: Vec<DirMemoEntry>,
}

#[derive(Serialize, Deserialize, Clone)]
struct DirMemoEntry {
    rel: String,
    times: (i64, i64),
    /// Read again on every walk (see the module's doc).
    volatile: bool,
    /// The times of its `.gitignore` and `.ignore` (`None`: absent).
    ignores: [Option<(i64, i64)>; 2],
    /// Source files directly inside, by name (the language is the name's).
    sources: Vec<String>,
    /// Manifests directly inside, by name.
    manifests: Vec<String>,
}

const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];
const MARGIN_NS: i64 = 100_000_000;

fn key(root: &Path, opts: &WalkOptions) -> String {
    format!(
        "1|{}|{}|{:?}|{}",
        root.display(),
        opts.max_file_size,
        opts.exclude,
        opts.parent_ignores
    )
}

fn times_of(path: &Path) -> Option<(i64, i64)> {
    std::fs::metadata(path).ok().map(|m| dir_times(&m))
}

fn join(root: &Path, rel: &str) -> PathBuf {
    if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    }
}

/// The repo-relative path of `name` inside the directory `rel`.
fn child(rel: &str, name: &str) -> String {
    if rel.is_empty() {
        name.to_string()
    } else {
        format!("{rel}/{name}")
    }
}

fn parent(rel: &str) -> &str {
    rel.rsplit_once('/').map_or("", |(d, _)| d)
}

fn name(rel: &str) -> &str {
    rel.rsplit_once('/').map_or(rel, |(_, n)| n)
}

/// The ignore files that apply to `root` from outside its directories.
fn outer_ignores(root: &Path, opts: &WalkOptions) -> Vec<(PathBuf, Option<(i64, i64)>)> {
    let mut files = vec![root.join(".git/info/exclude")];
    if opts.parent_ignores {
        for dir in root.ancestors().skip(1) {
            files.extend(IGNORE_FILES.iter().map(|f| dir.join(f)));
            files.push(dir.join(".git/info/exclude"));
        }
    }
    files
        .into_iter()
        .map(|f| {
            let t = times_of(&f);
            (f, t)
        })
        .collect()
}

impl DirMemo {
    /// What `walked` (a full walk of `root`, or a `rewalk`) saw, as of a walk
    /// that started at `started`.
    ///
    /// The ignore files of a directory `previous` saw with the same times are
    /// taken from it (an ignore file that appears or goes changes them).
    pub fn of(
        root: &Path,
        opts: &WalkOptions,
        walked: &WalkResult,
        started: std::time::SystemTime,
        previous: Option<&DirMemo>,
    ) -> DirMemo {
        let before: HashMap<&str, &DirMemoEntry> = previous
            .map(|p| p.dirs.iter().map(|d| (d.rel.as_str(), d)).collect())
            .unwrap_or_default();
        let started_ns = started
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64);
        let troubled: HashSet<&str> = walked.diagnostics.iter().map(|d| parent(&d.path)).collect();
        let mut dirs: Vec<DirMemoEntry> = walked
            .dirs
            .iter()
            .map(|d| {
                let here = join(root, &d.rel);
                DirMemoEntry {
                    rel: d.rel.clone(),
                    times: d.times,
                    volatile: d.linked
                        || troubled.contains(d.rel.as_str())
                        || d.times.0.max(d.times.1) >= started_ns - MARGIN_NS,
                    ignores: match before.get(d.rel.as_str()) {
                        Some(b) if b.times == d.times && b.ignores == [None, None] => [None, None],
                        _ => IGNORE_FILES.map(|f| times_of(&here.join(f))),
                    },
                    sources: Vec::new(),
                    manifests: Vec::new(),
                }
            })
            .collect();
        let at: HashMap<String, usize> = dirs
            .iter()
            .enumerate()
            .map(|(i, d)| (d.rel.clone(), i))
            .collect();
        for s in &walked.sources {
            if let Some(&i) = at.get(parent(&s.path)) {
                dirs[i].sources.push(name(&s.path).to_string());
            }
        }
        for (rel, _) in &walked.manifests {
            if let Some(&i) = at.get(parent(rel)) {
                dirs[i].manifests.push(name(rel).to_string());
            }
        }
        DirMemo {
            key: key(root, opts),
            outer_ignores: outer_ignores(root, opts),
            dirs,
        }
    }

    pub fn load(path: &Path) -> Option<DirMemo> {
        serde_json::from_slice(&std::fs::read(path).ok()?).ok()
    }

    /// Writes it (temp file, rename; a cache: not fsynced).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("walk-tmp");
        std::fs::write(
            &tmp,
            serde_json::to_vec(self).map_err(std::io::Error::other)?,
        )?;
        std::fs::rename(&tmp, path)
    }
}

/// The walk of `root` as `walk::walk` gives it, from `memo` and the
/// directories that changed since; `None` when only a full walk can tell.
pub fn rewalk(root: &Path, opts: &WalkOptions, memo: &DirMemo) -> Option<WalkResult> {
    // Without the parents' ignore files a directory cannot be listed alone
    // (see `walk_dir_files`).
    if !opts.parent_ignores
        || memo.key != key(root, opts)
        || memo.outer_ignores != outer_ignores(root, opts)
    {
        return None;
    }
    let t = std::time::Instant::now();
    let known: HashSet<&str> = memo.dirs.iter().map(|d| d.rel.as_str()).collect();
    let mut kept: Vec<&DirMemoEntry> = Vec::new();
    let mut changed: Vec<String> = Vec::new();
    for d in &memo.dirs {
        let here = join(root, &d.rel);
        let Some(times) = times_of(&here) else {
            // Gone: its parent's times changed too.
            continue;
        };
        let same = !d.volatile && times == d.times;
        // An ignore file that appears or goes changes its directory's times;
        // one edited in place does not.
        let ignores_known = same && d.ignores == [None, None];
        if !ignores_known && IGNORE_FILES.map(|f| times_of(&here.join(f))) != d.ignores {
            return None;
        }
        if !same {
            changed.push(d.rel.clone());
        } else {
            kept.push(d);
        }
    }
    let dirs_ms = t.elapsed().as_millis() as u64;
    // Each kept source file is `stat`ed (its content may have changed): ~17k
    // calls on a Python `lib/`, on every core.
    use rayon::prelude::*;
    let per_dir: Vec<Vec<SourceFile>> = kept
        .par_iter()
        .map(|d| {
            let here = join(root, &d.rel);
            d.sources
                .iter()
                .map(|name| {
                    let language = Language::from_path(name)?;
                    let abs = here.join(name);
                    let meta = std::fs::metadata(&abs).ok()?;
                    if !meta.is_file() || meta.len() > opts.max_file_size {
                        return None;
                    }
                    Some(SourceFile {
                        path: child(&d.rel, name),
                        abs_path: abs,
                        language,
                        stat: Some(FileStat::of(&meta)),
                    })
                })
                .collect::<Option<Vec<_>>>()
        })
        .collect::<Option<Vec<_>>>()?;
    let mut sources: Vec<SourceFile> = per_dir.into_iter().flatten().collect();
    let mut manifests: Vec<(String, PathBuf)> = Vec::new();
    let mut dirs: Vec<DirSeen> = Vec::new();
    for d in &kept {
        let here = join(root, &d.rel);
        for name in &d.manifests {
            manifests.push((child(&d.rel, name), here.join(name)));
        }
        dirs.push(DirSeen {
            rel: d.rel.clone(),
            times: d.times,
            linked: false,
        });
    }
    let files_ms = t.elapsed().as_millis() as u64;
    let mut diagnostics = Vec::new();
    if !changed.is_empty() {
        // Each changed directory listed with the walk's rules; the
        // subdirectories it reports are those a full walk enters.
        let walked = walk::walk_dir_files(root, opts, &changed);
        if walked.dirs.iter().any(|d| !known.contains(d.rel.as_str())) {
            return None;
        }
        let changed: HashSet<&str> = changed.iter().map(String::as_str).collect();
        sources.extend(walked.sources);
        manifests.extend(walked.manifests);
        diagnostics = walked.diagnostics;
        dirs.extend(
            walked
                .dirs
                .into_iter()
                .filter(|d| changed.contains(d.rel.as_str())),
        );
    }
    tracing::debug!(
        kept = kept.len(),
        changed = ?changed.iter().take(3).collect::<Vec<_>>(),
        dirs_ms,
        files_ms,
        ms = t.elapsed().as_millis() as u64,
        "walked the directories that changed"
    );
    let mut result = WalkResult {
        sources,
        manifests,
        diagnostics,
        has_src_dir: root.join("src").is_dir(),
        dirs,
    };
    result.sort();
    // A changed directory inside another changed one is reported by both.
    result.dirs.dedup_by(|a, b| a.rel == b.rel);
    Some(result)
}
