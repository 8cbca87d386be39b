//! `--memory-mb`: one figure for the memory a run may use, shared among the
//! parts whose memory follows a setting (Kuzu's buffer pool, the search
//! writer's arena, a bulk COPY's part), and the `Trimmer` that keeps freed
//! heap from staying resident. What the rows of a run hold besides (about
//! 1 KB per symbol at the peak) is not bounded by it yet: it is measured per
//! phase by `cruxe index --verbose` (docs/BENCHMARKS.md, "Memory and scale").

use super::graph::CopyPart;

/// The budget when none is given, in MiB.
pub const DEFAULT_MEMORY_MB: u64 = 1024;

/// The smallest budget taken, in MiB: a pool of less than 128 MiB held
/// neither a small repository's load nor a server's checkpoints.
pub const MIN_MEMORY_MB: u64 = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    mb: u64,
}

impl Default for MemoryBudget {
    fn default() -> Self {
        MemoryBudget::new(DEFAULT_MEMORY_MB)
    }
}

impl MemoryBudget {
    /// A budget of `mb` MiB, at least `MIN_MEMORY_MB`.
    pub fn new(mb: u64) -> MemoryBudget {
        MemoryBudget {
            mb: mb.max(MIN_MEMORY_MB),
        }
    }

    pub fn mb(&self) -> u64 {
        self.mb
    }

    /// Kuzu's buffer pool for an index run: the bulk COPY of a whole ref's
    /// symbols (one statement: see `graph::load`) must fit in it, and what it
    /// needs grows with the ref. Half: 512 MiB of the default holds the 2.75M
    /// symbols of the 52k-file tree, where 256 MiB did not (it holds the 650k
    /// of the crates corpus, where 128 MiB did not).
    pub fn index_pool_bytes(&self) -> u64 {
        (self.mb / 2) << 20
    }

    /// Kuzu's buffer pool for the graphs a server keeps open (reads touch few
    /// pages): three sixteenths, 192 MiB of the default. A big graph's writer
    /// raises it for its checkpoints (`DataDir::writer_config`).
    pub fn serving_pool_bytes(&self) -> u64 {
        (self.mb * 3 / 16).max(64) << 20
    }

    /// The search index writer's arena, in MiB: a sixteenth, at least the
    /// 15 MiB Tantivy asks of a writer thread. A rebuild that outgrows it is
    /// written in several segments and merged. A full build fills it beside
    /// the nodes' COPY, the run's peak: a quarter (256 MiB) took the crates
    /// corpus's peak to ~1,140 MiB, 64 to ~1,040 (docs/BENCHMARKS.md).
    pub fn search_writer_mb(&self) -> usize {
        ((self.mb / 16) as usize).max(15)
    }

    /// Whether a full build waits for its search index writer (its last
    /// merge) before the nodes' COPY: the two together were a cold index's
    /// peak. On the crates corpus at 512 MiB, 560–581 MiB one beside the
    /// other, 465–483 one after the other (docs/BENCHMARKS.md, "Memory and
    /// scale"); a budget of the default or more keeps the time instead.
    pub fn search_then_load(&self) -> bool {
        self.mb < DEFAULT_MEMORY_MB
    }

    /// The largest part of one bulk COPY of edges: a sixteenth in bytes
    /// (64 MiB of the default), a million rows.
    pub fn copy_part(&self) -> CopyPart {
        CopyPart {
            bytes: ((self.mb / 16) as usize) << 20,
            ..CopyPart::default()
        }
    }
}

/// Gives the heap pages freed during an index run back to the system, every
/// `every`, until dropped.
///
/// Why: glibc returns a freed block's pages to the system only from the top
/// of an arena, and a run frees millions of small blocks in the middle of
/// them (the parsed rows as the search writer indexes them, resolution's
/// per-file results as they become edge rows) while other threads allocate
/// new ones. Those pages stayed resident: on the crates corpus the peak RSS
/// was ~1 GiB above the heap in use. `malloc_trim` walks every arena and
/// releases them; twice a second it cost ~1% of the run's CPU and lowered the
/// peak by ~300 MiB (docs/BENCHMARKS.md, "Memory and scale").
pub struct Trimmer {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    trims: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Trimmer {
    /// Every half second: a run's allocations turn over in seconds.
    pub const EVERY: std::time::Duration = std::time::Duration::from_millis(500);

    pub fn start(every: std::time::Duration) -> Trimmer {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let trims = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counted = std::sync::Arc::clone(&trims);
        let thread = std::thread::Builder::new()
            .name("cruxe-trim".into())
            .spawn(move || {
                // Until the sender is dropped (`Disconnected`).
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(every)
                {
                    // SAFETY: malloc_trim only releases free memory.
                    unsafe { libc::malloc_trim(0) };
                    // mallinfo2 walks the arenas' free lists: only when traced.
                    if tracing::enabled!(tracing::Level::TRACE) {
                        // SAFETY: mallinfo2 only reads the allocator's counters.
                        let info = unsafe { libc::mallinfo2() };
                        // Large blocks are mapped on their own, outside the
                        // arenas; the rest of RSS is Kuzu's pool, mapped files
                        // and the binary.
                        tracing::trace!(
                            heap_mib = info.uordblks >> 20,
                            mapped_mib = info.hblkhd >> 20,
                            rss_mib = resident_mib(),
                            "trimmed"
                        );
                    }
                    counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            })
            // Without a thread the run goes on untrimmed.
            .ok();
        Trimmer {
            stop: Some(stop),
            thread,
            trims,
        }
    }

    /// How many times the heap was trimmed so far.
    pub fn trims(&self) -> u64 {
        self.trims.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Drop for Trimmer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// This process's resident set, in MiB (`/proc/self/statm`; 0 if unread).
fn resident_mib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf only reads a constant of the system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as u64;
    (pages * page) >> 20
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trimmer_trims_until_it_is_dropped() {
        let trimmer = Trimmer::start(std::time::Duration::from_millis(1));
        // Progress, not speed: waits for the first trims however long they take.
        while trimmer.trims() < 3 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let counted = std::sync::Arc::clone(&trimmer.trims);
        drop(trimmer);
        // Dropped, its thread has ended: no trim after.
        let after = counted.load(std::sync::atomic::Ordering::Relaxed);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(counted.load(std::sync::atomic::Ordering::Relaxed), after);
        assert!(after >= 3);
    }

    #[test]
    fn the_default_budget_keeps_the_measured_settings() {
        let b = MemoryBudget::default();
        assert_eq!(b.index_pool_bytes(), 512 << 20);
        assert_eq!(b.serving_pool_bytes(), 192 << 20);
        assert_eq!(b.search_writer_mb(), 64);
        assert_eq!(b.copy_part(), CopyPart::default());
        // The settings a run without a budget gets are the default budget's.
        let graph = crate::store::graph::GraphConfig::default();
        assert_eq!(graph.buffer_pool_bytes, b.index_pool_bytes());
        assert_eq!(graph.copy_part, b.copy_part());
        assert_eq!(
            crate::store::search::DEFAULT_WRITER_MB,
            b.search_writer_mb()
        );
    }

    #[test]
    fn a_small_budget_is_raised_to_the_least_that_works() {
        let b = MemoryBudget::new(10);
        assert_eq!(b.mb(), MIN_MEMORY_MB);
        assert_eq!(b.index_pool_bytes(), 128 << 20);
        assert_eq!(b.search_writer_mb(), 16);
        assert_eq!(b.serving_pool_bytes(), 64 << 20);
        assert_eq!(MemoryBudget::new(4096).index_pool_bytes(), 2 << 30);
    }
}
