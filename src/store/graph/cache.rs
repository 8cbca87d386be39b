//! Results of the tools' walks kept for repeated calls, for as long as the graph
//! does not change: a Kuzu statement costs 0.3–5 ms of CPU however small its
//! answer (docs/BENCHMARKS.md), and agents and teams ask about the same symbols
//! and files again and again. Entries are keyed by statement and argument and
//! stamped with the count of writes the graph had committed before the
//! statement ran; any write makes every entry stale. The cache holds at most a
//! byte budget of results, the oldest going first.

use std::any::Any;
use std::sync::{Arc, Mutex};

use crate::model::fifo::ByteFifo;

type Key = (&'static str, Box<str>);

pub struct WalkCache {
    inner: Mutex<Inner>,
}

struct Inner {
    /// The write count the entries are of.
    writes: u64,
    entries: ByteFifo<Key, Arc<dyn Any + Send + Sync>>,
}

impl WalkCache {
    pub fn new(budget: usize) -> WalkCache {
        WalkCache {
            inner: Mutex::new(Inner {
                writes: 0,
                entries: ByteFifo::new(budget),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The result of `statement` for `arg` as of `writes` committed writes.
    pub fn get<T: Clone + 'static>(
        &self,
        writes: u64,
        statement: &'static str,
        arg: &str,
    ) -> Option<T> {
        let inner = self.lock();
        if inner.writes != writes {
            return None;
        }
        let value = inner.entries.get(&(statement, Box::from(arg)))?;
        value.downcast_ref::<T>().cloned()
    }

    /// Keeps a result read when `writes` writes were committed (a result read
    /// across a commit is of an older state and is not kept).
    pub fn put<T: Send + Sync + 'static>(
        &self,
        writes: u64,
        now: u64,
        statement: &'static str,
        arg: &str,
        value: T,
        bytes: usize,
    ) {
        // A count that moved, or is odd (a commit under way: Kuzu may have
        // shown the old rows under the new count), marks a result of no one state.
        if writes != now || !writes.is_multiple_of(2) {
            return;
        }
        let mut inner = self.lock();
        if inner.writes != writes {
            // The graph changed: everything kept is of an older state.
            inner.writes = writes;
            inner.entries.clear();
        }
        let key: Key = (statement, Box::from(arg));
        inner
            .entries
            .insert(key, Arc::new(value), bytes + arg.len() + 64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_kept_per_write_count_and_within_the_budget() {
        let cache = WalkCache::new(8 * 1024);
        cache.put(2, 2, "ancestors", "a", vec![1u32, 2], 100);
        assert_eq!(cache.get::<Vec<u32>>(2, "ancestors", "a"), Some(vec![1, 2]));
        assert_eq!(
            cache.get::<Vec<u32>>(4, "ancestors", "a"),
            None,
            "a write since"
        );
        assert_eq!(
            cache.get::<Vec<u32>>(2, "descendants", "a"),
            None,
            "another statement"
        );
        cache.put(2, 3, "ancestors", "b", vec![3u32], 100);
        assert_eq!(
            cache.get::<Vec<u32>>(3, "ancestors", "b"),
            None,
            "read across a commit"
        );
        cache.put(3, 3, "ancestors", "c", vec![4u32], 100);
        assert_eq!(
            cache.get::<Vec<u32>>(3, "ancestors", "c"),
            None,
            "read while a commit was under way (Kuzu may show either state)"
        );
        for k in 0..100 {
            cache.put(4, 4, "parents", &k.to_string(), k, 900);
        }
        assert!(cache.lock().entries.bytes() <= 8 * 1024);
        assert_eq!(
            cache.get::<i32>(4, "parents", "99"),
            Some(99),
            "the newest stays"
        );
        assert_eq!(cache.get::<i32>(4, "parents", "0"), None, "the oldest went");
    }
}
