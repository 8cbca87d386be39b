//! Where a full build keeps its parsed files' packed sections (each file's
//! sites, facts and definitions, then its edges: zstd frames, 50 MiB on the
//! crates corpus) from the parse until the state is written: written to an
//! unlinked file as they come and read back through one mapping of it. Held in
//! the heap they were there through the nodes' `COPY`, a cold index's peak,
//! where in the file they are the page cache's: resident in the process only
//! once resolution reads them, and not after `drop_pages`.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::model::lazy::Shared;

/// The mapping's length. The file is sparse: only what is written takes room
/// on disk.
const RESERVE: u64 = 64 << 30;

pub struct Spill {
    file: std::fs::File,
    map: Arc<Mapped>,
    /// Where the next bytes go.
    end: AtomicU64,
}

/// The file's mapping, shared by every value read from it.
struct Mapped(memmap2::Mmap);

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Spill {
    /// A spill in `dir` (the data dir: the disk the index goes to), its file
    /// unlinked from the start, so nothing is left behind by a crash.
    pub fn create_in(dir: &Path) -> std::io::Result<Spill> {
        let file = tempfile::tempfile_in(dir)?;
        file.set_len(RESERVE)?;
        let len = usize::try_from(RESERVE).map_err(std::io::Error::other)?;
        // SAFETY: the file is this process's alone (unlinked), and bytes are
        // only ever written past those handed out (`put`): what a reader was
        // handed never changes.
        let map = unsafe { memmap2::MmapOptions::new().len(len).map(&file)? };
        Ok(Spill {
            file,
            map: Arc::new(Mapped(map)),
            end: AtomicU64::new(0),
        })
    }

    /// `bytes` written; where they are now, to be read back (`Lazy::packed`).
    pub fn put(&self, bytes: &[u8]) -> std::io::Result<(Shared, Range<usize>)> {
        let len = bytes.len() as u64;
        let at = self.end.fetch_add(len, Ordering::SeqCst);
        if at + len > RESERVE {
            return Err(std::io::Error::other("the spill file is full"));
        }
        std::os::unix::fs::FileExt::write_all_at(&self.file, bytes, at)?;
        let map: Shared = self.map.clone();
        Ok((map, at as usize..(at + len) as usize))
    }

    /// How many bytes were written.
    pub fn len(&self) -> u64 {
        self.end.load(Ordering::SeqCst).min(RESERVE)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes the pages read so far out of the process (they stay in the page
    /// cache, and fault back in if read again): after resolution, which reads
    /// every file's, and after the state is written, which copies them.
    pub fn drop_pages(&self) {
        let written = usize::try_from(self.len()).unwrap_or(usize::MAX);
        if written == 0 {
            return;
        }
        // SAFETY: DONTNEED on a shared file mapping only drops this process's
        // page table entries; the bytes stay the file's.
        let _ = unsafe {
            self.map
                .0
                .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, written)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_put_read_back_the_same_after_their_pages_are_dropped() {
        let dir = tempfile::tempdir().expect("tmp");
        let spill = Spill::create_in(dir.path()).expect("spill");
        let (a, at_a) = spill.put(b"first").expect("put");
        let (b, at_b) = spill.put(&[7u8; 10_000]).expect("put");
        assert_eq!(&(*a).as_ref()[at_a.clone()], b"first");
        spill.drop_pages();
        assert_eq!(&(*b).as_ref()[at_b], &[7u8; 10_000][..]);
        assert_eq!(&(*a).as_ref()[at_a], b"first");
        assert_eq!(spill.len(), 10_005);
        // Nothing is left in the directory: the file was never linked there.
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);
    }
}
