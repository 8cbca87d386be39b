//! Indexing a branch, tag or commit without checking it out: the ref's tree is read
//! from git's object database with gix, and the files cruxe indexes are written to
//! a snapshot directory inside the data dir (`DATA/trees/<key>/`). The index run
//! then treats the snapshot like any working tree; tools read bodies and files of
//! that ref from it. The user's working tree, index and HEAD are never touched.
//!
//! Architecture invariant: a snapshot is replaced whole: written beside the old one
//! and renamed into place, so a reader (or a killed run) never sees half of one.

use std::path::{Path, PathBuf};

use crate::model::Language;
use crate::source::layout::MANIFEST_NAMES;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("{0} is not a git repository: {1}")]
    NotARepo(PathBuf, String),
    #[error("`{0}` names no branch, tag or commit in {1}: {2}")]
    UnknownRef(String, PathBuf, String),
    #[error("cannot read git objects of `{0}`: {1}")]
    Objects(String, String),
    #[error("cannot write the snapshot of `{0}` to {1}: {2}")]
    Write(String, PathBuf, std::io::Error),
}

/// The commit `rev` names in the repository at `root`, if `root` is a git
/// repository and `rev` resolves there.
pub fn resolve(root: &Path, rev: &str) -> Option<String> {
    let repo = gix::open(root).ok()?;
    let id = repo.rev_parse_single(rev).ok()?;
    let commit = id.object().ok()?.peel_to_commit().ok()?;
    Some(commit.id.to_string())
}

/// What a snapshot holds: the files cruxe would index or read manifests from.
fn wanted(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    Language::from_path(path).is_some() || MANIFEST_NAMES.contains(&name)
}

/// Writes the indexable files of `rev`'s tree to `dest` (replacing what was there)
/// and returns the commit id and the number of files written.
pub fn materialize(root: &Path, rev: &str, dest: &Path) -> Result<(String, usize), GitError> {
    let repo = gix::open(root).map_err(|e| GitError::NotARepo(root.into(), e.to_string()))?;
    let id = repo
        .rev_parse_single(rev)
        .map_err(|e| GitError::UnknownRef(rev.into(), root.into(), e.to_string()))?;
    let objects = |e: &dyn std::fmt::Display| GitError::Objects(rev.into(), e.to_string());
    let commit = id
        .object()
        .map_err(|e| objects(&e))?
        .peel_to_commit()
        .map_err(|e| objects(&e))?;
    let commit_id = commit.id.to_string();
    // A snapshot of this very commit is already in place: nothing to write.
    if std::fs::read_to_string(dest.join(COMMIT_FILE)).is_ok_and(|c| c.trim() == commit_id) {
        return Ok((commit_id, 0));
    }
    let tree = commit.tree().map_err(|e| objects(&e))?;
    let mut recorder = gix::traverse::tree::Recorder::default();
    tree.traverse()
        .breadthfirst(&mut recorder)
        .map_err(|e| objects(&e))?;

    let parent = dest.parent().unwrap_or(dest);
    let write_err = |e: std::io::Error| GitError::Write(rev.into(), dest.into(), e);
    std::fs::create_dir_all(parent).map_err(write_err)?;
    let staging = tempfile::Builder::new()
        .prefix(".snapshot-")
        .tempdir_in(parent)
        .map_err(write_err)?;
    let mut written = 0;
    for entry in &recorder.records {
        // Blobs only: symlinks could point anywhere, submodules are other repos.
        if !entry.mode.is_blob() {
            continue;
        }
        let Ok(path) = std::str::from_utf8(entry.filepath.as_ref()) else {
            continue;
        };
        if !wanted(path) || path.split('/').any(|c| c == ".." || c.is_empty()) {
            continue;
        }
        let blob = repo.find_blob(entry.oid).map_err(|e| objects(&e))?;
        let file = staging.path().join(path);
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(write_err)?;
        }
        std::fs::write(&file, &blob.data).map_err(write_err)?;
        written += 1;
    }
    std::fs::write(staging.path().join(COMMIT_FILE), &commit_id).map_err(write_err)?;
    // Swap: the old snapshot is moved aside, the new one renamed into place.
    let old = parent.join(format!(
        ".old-{}",
        dest.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    ));
    let _ = std::fs::remove_dir_all(&old);
    if dest.exists() {
        std::fs::rename(dest, &old).map_err(write_err)?;
    }
    let staged = staging.keep();
    std::fs::rename(&staged, dest).map_err(write_err)?;
    let _ = std::fs::remove_dir_all(&old);
    Ok((commit_id, written))
}

/// Inside a snapshot: the commit it holds (hidden, so never indexed).
const COMMIT_FILE: &str = ".cruxe-commit";
