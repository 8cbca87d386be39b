//! A generation: one committed state of a publishing server's data dir, every
//! file a reader needs, in an object store. Objects under the store's prefix:
//!
//! - `blobs/<blake3 hex>`: file contents in chunks of at most `CHUNK` bytes,
//!   named by their hash, so a chunk that did not change since an earlier
//!   generation is not uploaded again (Kuzu writes its file in place, page by
//!   page: most of a database's chunks survive a small run, see `CHUNK`);
//! - `generations/<number, 20 digits>.json`: a [`Manifest`], written after
//!   every blob it names. A generation without its manifest is invisible, so a
//!   reader sees a generation complete or not at all.

use serde::{Deserialize, Serialize};

/// The manifest format this cruxe writes and reads.
pub const FORMAT: u32 = 1;

/// The most bytes one blob holds. A 10-file run on the crates corpus (287 MB
/// database) changed 0.7% of its 4 KiB pages, spread out: 23% of its 4 MiB
/// chunks, 11% of 1 MiB, 5.1% of 256 KiB, 1.9% of 64 KiB. 256 KiB keeps an
/// edit's upload near a twentieth of the file at ~1,100 objects for it.
pub const CHUNK: usize = 256 << 10;

pub const GENERATIONS: &str = "generations";
pub const BLOBS: &str = "blobs";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    pub generation: u64,
    /// The data dir's schema version (`store::datadir::SCHEMA_VERSION`): a
    /// replica of another version refuses the generation.
    pub schema_version: u32,
    pub cruxe_version: String,
    /// When the publisher wrote this manifest (RFC 3339, UTC).
    pub published_at: String,
    pub refs: Vec<PublishedRef>,
    /// Every file, by its path in the generation's directory (a data dir:
    /// `manifest.json`, the graph, `search/…`, and `sources/<key>/…`).
    pub files: Vec<FileEntry>,
}

/// A repo/ref the generation answers for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublishedRef {
    pub repo: String,
    #[serde(rename = "ref")]
    pub ref_name: String,
    /// The `indexed_at` of the graph state this generation holds for it.
    pub indexed_at: String,
    /// Where its sources are, in the generation's directory.
    pub sources: String,
    /// The ref the publisher serves from its working tree (the others come
    /// from git objects).
    pub working_tree: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    pub path: String,
    pub size: u64,
    /// blake3 of the whole file.
    pub blake3: String,
    /// blake3 of each chunk, in order (the blobs' names).
    pub chunks: Vec<String>,
}

pub fn manifest_key(generation: u64) -> String {
    format!("{GENERATIONS}/{generation:020}.json")
}

/// The number of a manifest's key; `None` for anything else under `generations/`.
pub fn generation_of(key: &str) -> Option<u64> {
    let name = key.strip_prefix(GENERATIONS)?.strip_prefix('/')?;
    let digits = name.strip_suffix(".json")?;
    (digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

pub fn blob_key(hash: &str) -> String {
    format!("{BLOBS}/{hash}")
}

/// The hash a blob's key names; `None` for anything else.
pub fn blob_of(key: &str) -> Option<&str> {
    key.strip_prefix(BLOBS)?.strip_prefix('/')
}

pub fn hash_hex(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// A file's entry: its size, hash and chunks' hashes, each chunk handed to
/// `chunk` (hash, bytes) as it is read, so a file is never held whole.
pub fn chunk_file(
    path: &std::path::Path,
    name: &str,
    chunk: &mut dyn FnMut(&str, &[u8]) -> std::io::Result<()>,
) -> std::io::Result<FileEntry> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut whole = blake3::Hasher::new();
    let mut chunks = Vec::new();
    let mut size = 0u64;
    let mut buf = vec![0u8; CHUNK];
    loop {
        let mut n = 0;
        while n < CHUNK {
            let got = f.read(&mut buf[n..])?;
            if got == 0 {
                break;
            }
            n += got;
        }
        if n == 0 && !chunks.is_empty() {
            break;
        }
        let h = hash_hex(&buf[..n]);
        whole.update(&buf[..n]);
        chunk(&h, &buf[..n])?;
        chunks.push(h);
        size += n as u64;
        if n < CHUNK {
            break;
        }
    }
    Ok(FileEntry {
        path: name.to_string(),
        size,
        blake3: whole.finalize().to_hex().to_string(),
        chunks,
    })
}

/// Whether `name` is a blob's name as this cruxe makes them: a blake3 hash, 64
/// lowercase hex digits (a manifest names blobs; a replica asks the store for
/// nothing else).
pub fn is_hash(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A relative path that stays inside the directory it is joined to: no
/// absolute path, no `..`, no empty or `.` part. A manifest's paths come from
/// the store, which a replica does not trust.
pub fn safe_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && path
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != ".." && !p.contains('\\'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_keys_sort_by_number_and_read_back() {
        assert_eq!(manifest_key(42), "generations/00000000000000000042.json");
        assert!(manifest_key(9) < manifest_key(10));
        assert_eq!(generation_of(&manifest_key(42)), Some(42));
        for other in [
            "generations/42.json",
            "generations/0000000000000000004x.json",
            "blobs/00000000000000000042.json",
            "generations/00000000000000000042.json.tmp",
        ] {
            assert_eq!(generation_of(other), None, "{other}");
        }
    }

    #[test]
    fn a_file_is_cut_in_chunks_that_rebuild_it() {
        let tmp = tempfile::tempdir().expect("tmp");
        let p = tmp.path().join("f");
        let bytes: Vec<u8> = (0..CHUNK * 2 + 5).map(|i| (i % 251) as u8).collect();
        std::fs::write(&p, &bytes).expect("write");
        let mut parts: Vec<(String, Vec<u8>)> = Vec::new();
        let e = chunk_file(&p, "f", &mut |h, b| {
            parts.push((h.to_string(), b.to_vec()));
            Ok(())
        })
        .expect("chunk");
        assert_eq!(e.size, bytes.len() as u64);
        assert_eq!(e.chunks.len(), 3);
        assert_eq!(e.blake3, hash_hex(&bytes));
        let joined: Vec<u8> = parts.iter().flat_map(|(_, b)| b.clone()).collect();
        assert_eq!(joined, bytes);
        assert!(parts.iter().all(|(h, b)| *h == hash_hex(b)));
        // An empty file is one empty chunk.
        std::fs::write(&p, b"").expect("write");
        let e = chunk_file(&p, "f", &mut |_, _| Ok(())).expect("chunk");
        assert_eq!((e.size, e.chunks.len()), (0, 1));
    }

    #[test]
    fn only_hashes_name_blobs() {
        assert!(is_hash(&hash_hex(b"x")));
        for bad in ["", "../../etc/passwd", &"A".repeat(64), &"a".repeat(63)] {
            assert!(!is_hash(bad), "{bad}");
        }
    }

    #[test]
    fn paths_that_leave_the_directory_are_not_safe() {
        assert!(safe_relative("search/ab/meta.json"));
        for bad in ["", "/etc/passwd", "a/../../b", "a//b", "./a", "a\\..\\b"] {
            assert!(!safe_relative(bad), "{bad}");
        }
    }
}
