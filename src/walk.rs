//! Walking a repository: which files are indexed, which manifests describe the
//! module layout, and which files were passed over and why.
//!
//! Honours `.gitignore`, `.ignore` and git's exclude files (the `ignore` crate),
//! follows symlinks only while they stay inside the repository, and never fails
//! the run for one bad entry: every problem becomes a `Diagnostic`.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;

use crate::layout::MANIFEST_NAMES;
use crate::model::Language;

#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// Files larger than this are skipped (reported as too large).
    pub max_file_size: u64,
    /// Directories never entered (the data dir when it lies inside the repo).
    pub exclude: Vec<PathBuf>,
    /// Apply ignore files of the directories above the root (off for snapshots
    /// of git refs, which live inside a data dir that a parent ignores).
    pub parent_ignores: bool,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            max_file_size: 1024 * 1024,
            exclude: Vec::new(),
            parent_ignores: true,
        }
    }
}

/// A file to index.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Repo-relative, `/`-separated.
    pub path: String,
    pub abs_path: PathBuf,
    pub language: Language,
}

/// Something the walk or the indexer passed over, for the run's report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub path: String,
    pub problem: String,
}

#[derive(Debug, Default)]
pub struct WalkResult {
    pub sources: Vec<SourceFile>,
    /// Manifests (Cargo.toml, go.mod, …) as (repo-relative path, absolute path).
    pub manifests: Vec<(String, PathBuf)>,
    pub diagnostics: Vec<Diagnostic>,
    /// The repo has a top-level `src/` directory.
    pub has_src_dir: bool,
}

pub fn walk(root: &Path, opts: &WalkOptions) -> WalkResult {
    let mut result = WalkResult {
        has_src_dir: root.join("src").is_dir(),
        ..WalkResult::default()
    };
    let canonical_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let excludes: Vec<PathBuf> = opts
        .exclude
        .iter()
        .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
        .collect();
    let walker = WalkBuilder::new(root)
        .follow_links(true)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .parents(opts.parent_ignores)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry({
            let excludes = excludes.clone();
            move |e| {
                let name = e.file_name();
                if name == ".git" || name == ".cruxe" {
                    return false;
                }
                if e.file_type().is_some_and(|t| t.is_dir()) && !excludes.is_empty() {
                    let canon = e.path().canonicalize().unwrap_or_else(|_| e.path().into());
                    return !excludes.iter().any(|x| canon.starts_with(x));
                }
                true
            }
        })
        .build();

    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                result.diagnostics.push(walk_error(root, &err));
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let abs = entry.path().to_path_buf();
        let Some(rel) = relative(root, &abs) else {
            continue;
        };
        if entry.path_is_symlink() {
            match abs.canonicalize() {
                Ok(target) if target.starts_with(&canonical_root) => {}
                Ok(_) => {
                    result.diagnostics.push(Diagnostic {
                        path: rel,
                        problem: "symlink points outside the repository; skipped".into(),
                    });
                    continue;
                }
                Err(e) => {
                    result.diagnostics.push(Diagnostic {
                        path: rel,
                        problem: format!("broken symlink: {e}"),
                    });
                    continue;
                }
            }
        }
        let file_name = rel.rsplit('/').next().unwrap_or(&rel);
        if MANIFEST_NAMES.contains(&file_name) {
            result.manifests.push((rel.clone(), abs.clone()));
        }
        let Some(language) = Language::from_path(&rel) else {
            continue;
        };
        match entry.metadata() {
            Ok(meta) if meta.len() > opts.max_file_size => {
                result.diagnostics.push(Diagnostic {
                    path: rel,
                    problem: format!(
                        "file too large ({} bytes > limit {}); skipped",
                        meta.len(),
                        opts.max_file_size
                    ),
                });
            }
            Ok(_) => result.sources.push(SourceFile {
                path: rel,
                abs_path: abs,
                language,
            }),
            Err(e) => result.diagnostics.push(Diagnostic {
                path: rel,
                problem: format!("unreadable: {e}"),
            }),
        }
    }
    result
}

fn relative(root: &Path, abs: &Path) -> Option<String> {
    let rel = abs.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

fn walk_error(root: &Path, err: &ignore::Error) -> Diagnostic {
    fn find(err: &ignore::Error) -> (Option<PathBuf>, String) {
        match err {
            ignore::Error::WithPath { path, err } => (Some(path.clone()), find(err).1),
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                find(err)
            }
            ignore::Error::Loop { child, ancestor } => (
                Some(child.clone()),
                format!("symlink loop (points back to {})", ancestor.display()),
            ),
            other => (None, other.to_string()),
        }
    }
    let (path, mut problem) = find(err);
    if let Some(p) = &path
        && p.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
        && p.metadata().is_err()
    {
        problem = format!("broken symlink: {problem}");
    }
    let path = path
        .and_then(|p| relative(root, &p))
        .unwrap_or_else(|| "(walk)".to_string());
    Diagnostic { path, problem }
}
