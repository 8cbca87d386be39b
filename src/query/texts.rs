//! Source texts kept between answers. Agents ask about the same files again
//! and again, and a read costs more than its bytes: the path is resolved (to
//! refuse one that now leads outside the repository) and the server's own
//! watcher is woken by the open. A text is kept only when its content hash is
//! the one indexed, and served only while the index still has that hash: what
//! comes back always matches the byte ranges the answer cuts it with.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::model::fifo::ByteFifo;
use crate::store::graph::FileInfo;

/// Each file's text and the content hash it has, by root and path.
type Texts = ByteFifo<(PathBuf, String), (String, Arc<str>)>;

pub struct SourceTexts {
    texts: Mutex<Texts>,
}

/// What a server keeps by default: the sources of a few hundred typical files.
const DEFAULT_BYTES: usize = 32 << 20;

impl Default for SourceTexts {
    fn default() -> Self {
        SourceTexts::new(DEFAULT_BYTES)
    }
}

impl SourceTexts {
    pub fn new(budget: usize) -> SourceTexts {
        SourceTexts {
            texts: Mutex::new(ByteFifo::new(budget)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Texts> {
        self.texts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The text of the indexed file `f` under `root` (canonical, see
    /// `args::canonical_root`): the one kept, if its hash is still
    /// `f`'s, else read now (and kept when it is what was indexed). `None`
    /// when the file cannot be read, is not UTF-8, or now resolves outside
    /// the repository.
    pub fn text(&self, root: &Path, f: &FileInfo) -> Option<Arc<str>> {
        let key = (root.to_path_buf(), f.path.clone());
        if let Some((hash, text)) = self.lock().get(&key)
            && *hash == f.content_hash
        {
            return Some(text.clone());
        }
        let bytes = read_bytes(root, &f.path)?;
        let hash = crate::model::content_hash(&bytes);
        let text: Arc<str> = String::from_utf8(bytes).ok()?.into();
        if hash == f.content_hash {
            let bytes = text.len() + key.1.len() + 64;
            self.lock().insert(key, (hash, text.clone()), bytes);
        }
        Some(text)
    }
}

/// A repository file's bytes, refusing a path that now resolves outside
/// `root` (canonical): a file replaced by a symlink since it was indexed.
pub fn read_bytes(root: &Path, path: &str) -> Option<Vec<u8>> {
    let real = root.join(path).canonicalize().ok()?;
    if !real.starts_with(root) {
        return None;
    }
    std::fs::read(real).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(path: &str, text: &str) -> FileInfo {
        FileInfo {
            path: path.into(),
            content_hash: crate::model::content_hash(text.as_bytes()),
            ..FileInfo::default()
        }
    }

    #[test]
    fn a_kept_text_is_served_only_while_the_index_has_its_hash() {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path().canonicalize().expect("root");
        std::fs::write(root.join("a.go"), "package a\n").expect("write");
        let texts = SourceTexts::new(1 << 20);
        let indexed = info("a.go", "package a\n");
        assert_eq!(texts.text(&root, &indexed).as_deref(), Some("package a\n"));
        // Edited on disk, not indexed yet: the kept text still matches the
        // index's byte ranges.
        std::fs::write(root.join("a.go"), "package b\n").expect("edit");
        assert_eq!(texts.text(&root, &indexed).as_deref(), Some("package a\n"));
        // Indexed again: read again.
        let reindexed = info("a.go", "package b\n");
        assert_eq!(
            texts.text(&root, &reindexed).as_deref(),
            Some("package b\n")
        );
        // A text that is not what was indexed is served but not kept.
        std::fs::write(root.join("a.go"), "package c\n").expect("edit");
        let stale = info("a.go", "package z\n");
        assert_eq!(texts.text(&root, &stale).as_deref(), Some("package c\n"));
        std::fs::write(root.join("a.go"), "package d\n").expect("edit");
        assert_eq!(texts.text(&root, &stale).as_deref(), Some("package d\n"));
    }

    #[test]
    fn the_oldest_texts_go_first_past_the_budget() {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path().canonicalize().expect("root");
        let body = "x".repeat(100);
        let texts = SourceTexts::new(2000);
        let mut files = Vec::new();
        for i in 0..12 {
            let path = format!("f{i}.py");
            std::fs::write(root.join(&path), &body).expect("write");
            files.push(info(&path, &body));
            texts.text(&root, &files[i]).expect("read");
        }
        let kept = texts.lock().len();
        assert!(kept < 12 && kept > 0, "{kept} kept");
        assert!(texts.lock().bytes() <= 2000);
        // The newest is still kept: served with its file gone.
        for f in &files {
            std::fs::remove_file(root.join(&f.path)).expect("rm");
        }
        assert!(texts.text(&root, &files[11]).is_some());
        assert!(texts.text(&root, &files[0]).is_none());
    }
}
