//! The reading side (`cruxe serve --replica URL`): finds the newest complete
//! generation in the store, downloads what it lacks into a directory of its
//! own, checks it against the manifest's hashes (each chunk downloaded, each
//! file whole), and hands back the directory, a data dir ready to open
//! read-only. Files the generation it serves holds whole are linked from
//! there, and chunks it holds copied, not downloaded again. A generation that
//! fails a check is refused whole: the replica keeps the one it serves.

use std::collections::HashMap;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::generation::{
    self, CHUNK, FORMAT, GENERATIONS, Manifest, blob_key, generation_of, manifest_key,
    safe_relative,
};
use super::objects::{Objects, ObjectsError};

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error(transparent)]
    Store(#[from] ObjectsError),
    #[error("generation {0} is gone from the store (retired meanwhile)")]
    Gone(u64),
    #[error("generation {generation} refused: {reason}")]
    Refused { generation: u64, reason: String },
    #[error("cannot write the generation in {0}: {1}")]
    Io(PathBuf, std::io::Error),
}

/// A generation on this replica's disk: its manifest and its directory,
/// removed when the last holder lets go (the server that answers from it).
#[derive(Debug)]
pub struct Local {
    pub manifest: Manifest,
    pub dir: PathBuf,
}

impl Drop for Local {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What a replica knows of the store, shared with the answers' metadata.
#[derive(Debug, Default)]
pub struct ReplicaStatus {
    /// The newest generation seen in the store.
    pub newest: AtomicU64,
    /// Whether the last look at the store succeeded.
    pub reachable: AtomicBool,
    /// The last generation refused because a check failed (0: none, or a
    /// newer one has been served since).
    pub refused: AtomicU64,
    /// Why the last generation tried was not served, when it was not the
    /// generation's fault (this replica's disk, opening it); cleared when one
    /// is served.
    pub error: std::sync::Mutex<Option<String>>,
}

impl ReplicaStatus {
    pub fn newest(&self) -> u64 {
        self.newest.load(Ordering::SeqCst)
    }

    pub fn reachable(&self) -> bool {
        self.reachable.load(Ordering::SeqCst)
    }

    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::SeqCst)
    }

    pub fn error(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set_error(&self, e: Option<String>) {
        *self.error.lock().unwrap_or_else(|e| e.into_inner()) = e;
    }

    /// A generation was served: what was refused before is history.
    pub fn served(&self) {
        self.refused.store(0, Ordering::SeqCst);
        self.set_error(None);
    }

    /// Generation `n` was not served: refused by a check, or for `why`.
    pub fn not_served(&self, n: u64, checked: bool, why: String) {
        if checked {
            self.refused.store(n, Ordering::SeqCst);
        } else {
            self.set_error(Some(why));
        }
    }
}

pub struct Follower {
    objects: Objects,
    dir: PathBuf,
    pub status: Arc<ReplicaStatus>,
}

impl Follower {
    /// A follower of the store at `url`, keeping generations under `dir`
    /// (what an earlier replica left there is removed).
    pub fn new(url: &str, dir: &Path) -> Result<Follower, FetchError> {
        let objects = Objects::open_existing(url)?;
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().starts_with("gen-") {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        std::fs::create_dir_all(dir).map_err(|e| FetchError::Io(dir.into(), e))?;
        Ok(Follower {
            objects,
            dir: dir.to_path_buf(),
            status: Arc::default(),
        })
    }

    /// The newest generation in the store (0: none yet); records whether the
    /// store answered.
    pub fn newest(&self) -> Result<u64, FetchError> {
        let listed = self.objects.list(GENERATIONS);
        self.status
            .reachable
            .store(listed.is_ok(), Ordering::SeqCst);
        let newest = listed?
            .iter()
            .filter_map(|l| generation_of(&l.key))
            .max()
            .unwrap_or(0);
        self.status.newest.store(newest, Ordering::SeqCst);
        Ok(newest)
    }

    /// Downloads generation `n`, reusing the chunks of `from` (the one served).
    pub fn fetch(&self, n: u64, from: Option<&Local>) -> Result<Local, FetchError> {
        let refused = |reason: String| FetchError::Refused {
            generation: n,
            reason,
        };
        let bytes = self
            .objects
            .get(&manifest_key(n))?
            .ok_or(FetchError::Gone(n))?;
        let m: Manifest = serde_json::from_slice(&bytes)
            .map_err(|e| refused(format!("its manifest does not parse: {e}")))?;
        if m.format != FORMAT || m.generation != n {
            return Err(refused(format!(
                "manifest format {} of generation {} (this cruxe reads format {FORMAT})",
                m.format, m.generation
            )));
        }
        if m.schema_version != crate::store::datadir::SCHEMA_VERSION {
            return Err(refused(format!(
                "schema version {}, this cruxe needs {}",
                m.schema_version,
                crate::store::datadir::SCHEMA_VERSION
            )));
        }
        let dir = self.dir.join(format!("gen-{n}"));
        let part = self.dir.join(format!("gen-{n}.part"));
        let _ = std::fs::remove_dir_all(&part);
        let _ = std::fs::remove_dir_all(&dir);
        let io = |p: &Path, e: std::io::Error| FetchError::Io(p.to_path_buf(), e);
        std::fs::create_dir_all(&part).map_err(|e| io(&part, e))?;
        let reuse = from.map(reusable).unwrap_or_default();
        // Files the served generation holds whole (sources, search segments):
        // linked, not rewritten. They were checked when it was assembled, and
        // a generation's files never change.
        let whole: HashMap<(&str, u64), PathBuf> = from
            .map(|l| {
                (l.manifest.files.iter())
                    .map(|f| ((f.blake3.as_str(), f.size), l.dir.join(&f.path)))
                    .collect()
            })
            .unwrap_or_default();
        for f in &m.files {
            if !safe_relative(&f.path) || !f.chunks.iter().all(|c| generation::is_hash(c)) {
                let _ = std::fs::remove_dir_all(&part);
                return Err(refused(format!(
                    "{:?}: a path that leaves its directory, or a chunk that is no hash",
                    f.path
                )));
            }
            if let Some(held) = whole.get(&(f.blake3.as_str(), f.size))
                && link(held, &part.join(&f.path)).is_ok()
            {
                continue;
            }
            if let Err(e) = self.assemble(f, &part, &reuse) {
                let _ = std::fs::remove_dir_all(&part);
                return Err(match e {
                    Assemble::Refused(reason) => refused(reason),
                    Assemble::Gone => FetchError::Gone(n),
                    Assemble::Store(e) => FetchError::Store(e),
                    Assemble::Io(p, e) => FetchError::Io(p, e),
                });
            }
        }
        std::fs::rename(&part, &dir).map_err(|e| io(&dir, e))?;
        Ok(Local { manifest: m, dir })
    }

    /// Writes one file of a generation under `part`, each chunk from `reuse`
    /// or the store, checking each chunk and the whole.
    fn assemble(
        &self,
        f: &generation::FileEntry,
        part: &Path,
        reuse: &HashMap<String, (PathBuf, u64)>,
    ) -> Result<(), Assemble> {
        let path = part.join(&f.path);
        let io = |e: std::io::Error| Assemble::Io(path.clone(), e);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let mut out = std::fs::File::create(&path).map_err(io)?;
        let mut whole = blake3::Hasher::new();
        let mut size = 0u64;
        let mut held: Option<(&Path, std::fs::File)> = None;
        for hash in &f.chunks {
            // A chunk of the generation served is taken as it is: it was
            // checked when that generation was assembled, and a generation's
            // files never change. The whole file's hash below covers it.
            let reused = reuse.get(hash).and_then(|(p, at)| {
                if held.as_ref().is_none_or(|(h, _)| h != p) {
                    held = Some((p.as_path(), std::fs::File::open(p).ok()?));
                }
                read_chunk(&mut held.as_mut()?.1, *at).ok()
            });
            let bytes = match reused {
                Some(b) => b,
                None => {
                    let b = self
                        .objects
                        .get(&blob_key(hash))
                        .map_err(Assemble::Store)?
                        .ok_or(Assemble::Gone)?;
                    if generation::hash_hex(&b) != *hash {
                        return Err(Assemble::Refused(format!(
                            "blob {hash} of {} does not match its hash",
                            f.path
                        )));
                    }
                    b
                }
            };
            whole.update(&bytes);
            size += bytes.len() as u64;
            out.write_all(&bytes).map_err(io)?;
        }
        if size != f.size || whole.finalize().to_hex().as_str() != f.blake3 {
            return Err(Assemble::Refused(format!(
                "{} does not match its size and hash",
                f.path
            )));
        }
        // Not synced: a replica removes every generation it finds at start,
        // so nothing it wrote before a crash is read again (a sync per
        // file was most of the time to assemble 11k source files).
        Ok(())
    }
}

/// A hard link of `held` at `path`, its folders made.
fn link(held: &Path, path: &Path) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::hard_link(held, path)
}

enum Assemble {
    Refused(String),
    Gone,
    Store(ObjectsError),
    Io(PathBuf, std::io::Error),
}

/// Where each chunk of a generation on disk is: its file and offset.
fn reusable(local: &Local) -> HashMap<String, (PathBuf, u64)> {
    let mut at = HashMap::new();
    for f in &local.manifest.files {
        for (i, h) in f.chunks.iter().enumerate() {
            at.entry(h.clone())
                .or_insert_with(|| (local.dir.join(&f.path), (i * CHUNK) as u64));
        }
    }
    at
}

fn read_chunk(f: &mut std::fs::File, offset: u64) -> std::io::Result<Vec<u8>> {
    f.seek(std::io::SeekFrom::Start(offset))?;
    let mut buf = Vec::with_capacity(CHUNK);
    f.take(CHUNK as u64).read_to_end(&mut buf)?;
    Ok(buf)
}
