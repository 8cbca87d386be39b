//! The publishing side (`cruxe serve --publish URL`). After a server's runs are
//! checkpointed and copied for its query workers, the indexer thread stages
//! the state (`store::datadir::DataDir::stage`: hard links, so the files cannot
//! change under the upload) and hands it here. A thread of its own uploads the
//! blobs the store lacks, writes the manifest last, then removes generations
//! past the retention count and the blobs only they named. A newer stage
//! replaces one still waiting: a replica wants the newest state, not each one.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

use super::generation::{
    self, BLOBS, CHUNK, FORMAT, FileEntry, GENERATIONS, Manifest, PublishedRef, blob_key,
    manifest_key,
};
use super::objects::{Objects, ObjectsError};

/// Generations kept in the store: a replica downloading one that is retired
/// meanwhile starts again from the newest.
pub const RETAIN: usize = 5;

/// The pause before a failed upload is tried again, doubled after each
/// failure up to `RETRY_MAX`: an edit made while the store is down is
/// published once it answers, not only with the next edit.
const RETRY_FIRST: std::time::Duration = std::time::Duration::from_secs(2);
const RETRY_MAX: std::time::Duration = std::time::Duration::from_secs(60);

/// One ref's sources as indexed: where they are and each file's content hash.
#[derive(Debug, Clone)]
pub struct Sources {
    /// Their folder in the generation (`sources/<key>`).
    pub dir: String,
    pub root: PathBuf,
    /// (path, content hash as the graph holds it).
    pub files: Vec<(String, String)>,
}

/// A state staged for publication.
#[derive(Debug)]
pub struct Stage {
    /// Holds the hard links; removed once published (or replaced).
    pub dir: PathBuf,
    /// The staged files, by their path in the generation (and under `dir`).
    pub files: Vec<String>,
    pub refs: Vec<PublishedRef>,
    pub sources: Vec<Sources>,
}

impl Drop for Stage {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What the publisher did last, for `index_status` and the log.
#[derive(Debug, Clone, Default)]
pub struct Published {
    pub generation: u64,
    pub published_at: String,
    pub error: Option<String>,
}

/// The thread that uploads, and the one stage waiting for it.
pub struct Publisher {
    waiting: Arc<(Mutex<Option<Stage>>, Condvar)>,
    last: Arc<Mutex<Published>>,
    url: String,
}

impl Publisher {
    /// Opens the store and starts the upload thread.
    pub fn start(url: &str) -> Result<Publisher, ObjectsError> {
        let objects = Objects::open(url)?;
        let mut uploader = Uploader::new(objects)?;
        let waiting: Arc<(Mutex<Option<Stage>>, Condvar)> = Arc::default();
        let last: Arc<Mutex<Published>> = Arc::default();
        let (w, l) = (waiting.clone(), last.clone());
        std::thread::Builder::new()
            .name("cruxe-publish".into())
            .spawn(move || {
                let mut pause = RETRY_FIRST;
                loop {
                    let (m, cv) = &*w;
                    let stage = {
                        let mut slot = m.lock().unwrap_or_else(|e| e.into_inner());
                        while slot.is_none() {
                            slot = cv.wait(slot).unwrap_or_else(|e| e.into_inner());
                        }
                        slot.take()
                    };
                    let Some(stage) = stage else { continue };
                    let result = uploader.publish(&stage);
                    let failed = {
                        let mut last = l.lock().unwrap_or_else(|e| e.into_inner());
                        match result {
                            Ok(p) => {
                                *last = p;
                                false
                            }
                            Err(e) => {
                                tracing::warn!(
                                    "publishing a generation failed (tried again in {} s): {e}",
                                    pause.as_secs()
                                );
                                last.error = Some(e.to_string());
                                true
                            }
                        }
                    };
                    if !failed {
                        pause = RETRY_FIRST;
                        continue;
                    }
                    // The state stays due: tried again after a pause (a store
                    // that is down for a while gets fewer attempts), or at
                    // once when a newer state replaces it.
                    let mut slot = m.lock().unwrap_or_else(|e| e.into_inner());
                    if slot.is_none() {
                        *slot = Some(stage);
                        let (_slot, _) = cv
                            .wait_timeout(slot, pause)
                            .unwrap_or_else(|e| e.into_inner());
                    }
                    pause = (pause * 2).min(RETRY_MAX);
                }
            })
            .map_err(ObjectsError::Runtime)?;
        Ok(Publisher {
            waiting,
            last,
            url: url.to_string(),
        })
    }

    /// Queues `stage`, replacing one not yet taken up.
    pub fn offer(&self, stage: Stage) {
        let (m, cv) = &*self.waiting;
        *m.lock().unwrap_or_else(|e| e.into_inner()) = Some(stage);
        cv.notify_one();
    }

    pub fn last(&self) -> Published {
        self.last.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn url(&self) -> &str {
        &self.url
    }
}

/// The upload thread's state: which blobs the store holds, which the kept
/// generations name, and each source file's entry by its content hash.
struct Uploader {
    objects: Objects,
    known: HashSet<String>,
    kept: Vec<(u64, HashSet<String>)>,
    next: u64,
    sources: HashMap<(PathBuf, String, String), FileEntry>,
}

impl Uploader {
    fn new(objects: Objects) -> Result<Uploader, ObjectsError> {
        let known = objects
            .list(BLOBS)?
            .iter()
            .filter_map(|l| generation::blob_of(&l.key).map(str::to_string))
            .collect();
        let mut numbers: Vec<u64> = objects
            .list(GENERATIONS)?
            .iter()
            .filter_map(|l| generation::generation_of(&l.key))
            .collect();
        numbers.sort_unstable();
        let mut kept = Vec::new();
        for &n in numbers.iter().rev().take(RETAIN).rev() {
            if let Some(bytes) = objects.get(&manifest_key(n))?
                && let Ok(m) = serde_json::from_slice::<Manifest>(&bytes)
            {
                kept.push((n, named_blobs(&m)));
            }
        }
        Ok(Uploader {
            objects,
            known,
            kept,
            next: numbers.last().map_or(1, |n| n + 1),
            sources: HashMap::new(),
        })
    }

    fn publish(&mut self, stage: &Stage) -> Result<Published, ObjectsError> {
        let started = std::time::Instant::now();
        let mut files = Vec::new();
        let mut uploaded = 0u64;
        for name in &stage.files {
            let path = stage.dir.join(name);
            let entry = generation::chunk_file(&path, name, &mut |h, bytes| {
                uploaded += self.upload(h, bytes).map_err(std::io::Error::other)?;
                Ok(())
            })
            .map_err(|e| io_error(&self.objects, &path, e))?;
            files.push(entry);
        }
        for s in &stage.sources {
            uploaded += self.sources_of(s, &mut files)?;
        }
        let m = Manifest {
            format: FORMAT,
            generation: self.next,
            schema_version: crate::store::datadir::SCHEMA_VERSION,
            cruxe_version: env!("CARGO_PKG_VERSION").to_string(),
            published_at: crate::index::now_rfc3339(),
            refs: stage.refs.clone(),
            files,
        };
        let text = serde_json::to_vec(&m).map_err(|e| ObjectsError::Store {
            url: self.objects.url().into(),
            message: e.to_string(),
        })?;
        self.objects.put(&manifest_key(m.generation), text)?;
        self.next += 1;
        self.kept.push((m.generation, named_blobs(&m)));
        tracing::info!(
            generation = m.generation,
            files = m.files.len(),
            uploaded_mib = uploaded >> 20,
            ms = started.elapsed().as_millis() as u64,
            "published a generation"
        );
        self.retire()?;
        Ok(Published {
            generation: m.generation,
            published_at: m.published_at,
            error: None,
        })
    }

    /// Uploads a blob the store lacks; the bytes sent.
    fn upload(&mut self, hash: &str, bytes: &[u8]) -> Result<u64, ObjectsError> {
        if self.known.contains(hash) {
            return Ok(0);
        }
        self.objects.put(&blob_key(hash), bytes.to_vec())?;
        self.known.insert(hash.to_string());
        Ok(bytes.len() as u64)
    }

    /// The entries of one ref's sources, each file read only when its content
    /// hash is new to this publisher. A file that changed since it was indexed
    /// is left out (a replica answers for it as for a file gone from disk);
    /// the next generation has it.
    fn sources_of(&mut self, s: &Sources, files: &mut Vec<FileEntry>) -> Result<u64, ObjectsError> {
        let mut uploaded = 0;
        for (path, hash) in &s.files {
            let name = format!("{}/{path}", s.dir);
            let key = (s.root.clone(), path.clone(), hash.clone());
            if let Some(e) = self.sources.get(&key)
                && e.chunks.iter().all(|c| self.known.contains(c))
            {
                files.push(FileEntry {
                    path: name,
                    ..e.clone()
                });
                continue;
            }
            let Some(bytes) = crate::query::texts::read_bytes(&s.root, path) else {
                continue;
            };
            if crate::model::content_hash(&bytes) != *hash {
                continue;
            }
            let mut chunks = Vec::new();
            for part in bytes
                .chunks(CHUNK)
                .chain(bytes.is_empty().then_some(&[][..]))
            {
                let h = generation::hash_hex(part);
                uploaded += self.upload(&h, part)?;
                chunks.push(h);
            }
            let e = FileEntry {
                path: name,
                size: bytes.len() as u64,
                blake3: generation::hash_hex(&bytes),
                chunks,
            };
            self.sources.insert(key, e.clone());
            files.push(e);
        }
        Ok(uploaded)
    }

    /// Removes generations past `RETAIN`, manifest first, then the blobs no
    /// kept generation names.
    fn retire(&mut self) -> Result<(), ObjectsError> {
        while self.kept.len() > RETAIN {
            let (n, _) = self.kept.remove(0);
            self.objects.delete(&manifest_key(n))?;
        }
        let named: HashSet<&String> = self.kept.iter().flat_map(|(_, b)| b).collect();
        let gone: Vec<String> = self
            .known
            .iter()
            .filter(|h| !named.contains(h))
            .cloned()
            .collect();
        for h in gone {
            self.objects.delete(&blob_key(&h))?;
            self.known.remove(&h);
        }
        Ok(())
    }
}

fn named_blobs(m: &Manifest) -> HashSet<String> {
    m.files
        .iter()
        .flat_map(|f| f.chunks.iter().cloned())
        .collect()
}

fn io_error(objects: &Objects, path: &Path, e: std::io::Error) -> ObjectsError {
    ObjectsError::Store {
        url: objects.url().into(),
        message: format!("{}: {e}", path.display()),
    }
}
