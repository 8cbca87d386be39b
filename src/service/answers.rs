//! Tool answers kept for repeated calls, keyed by the catalog generation they
//! were computed on: a new index state never meets an old answer, and old ones
//! age out. Each graph tool costs one to ten milliseconds of Kuzu statements
//! (docs/BENCHMARKS.md); a repeated call costs a clone. Answers that read source
//! files (`get_node`, `get_code_context`) are not kept: a file can change on disk
//! before its index run, and their staleness is judged per call.

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// (repo, ref, catalog generation, tool, the call's arguments)
pub type AnswerKey = (String, String, u64, &'static str, String);

pub struct AnswerCache {
    inner: Mutex<Inner>,
    capacity: usize,
}

#[derive(Default)]
struct Inner {
    answers: HashMap<AnswerKey, Arc<dyn Any + Send + Sync>>,
    /// Oldest first: the first to go when the cache is full.
    order: VecDeque<AnswerKey>,
}

impl AnswerCache {
    pub fn new(capacity: usize) -> AnswerCache {
        AnswerCache {
            inner: Mutex::new(Inner::default()),
            capacity,
        }
    }

    pub fn get<T: Clone + 'static>(&self, key: &AnswerKey) -> Option<T> {
        let inner = self.inner.lock().ok()?;
        inner.answers.get(key)?.downcast_ref::<T>().cloned()
    }

    pub fn put<T: Send + Sync + 'static>(&self, key: AnswerKey, answer: T) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        if self.capacity == 0 || inner.answers.contains_key(&key) {
            return;
        }
        while inner.order.len() >= self.capacity {
            match inner.order.pop_front() {
                Some(old) => {
                    inner.answers.remove(&old);
                }
                None => break,
            }
        }
        inner.order.push_back(key.clone());
        inner.answers.insert(key, Arc::new(answer));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(generation: u64, args: &str) -> AnswerKey {
        ("r".into(), "main".into(), generation, "tool", args.into())
    }

    #[test]
    fn an_answer_is_found_under_its_generation_only_and_the_oldest_goes_first() {
        let cache = AnswerCache::new(2);
        cache.put(key(1, "a"), 10u32);
        assert_eq!(cache.get::<u32>(&key(1, "a")), Some(10));
        assert_eq!(cache.get::<u32>(&key(2, "a")), None, "another generation");
        assert_eq!(cache.get::<String>(&key(1, "a")), None, "another type");
        cache.put(key(1, "b"), 11u32);
        cache.put(key(1, "c"), 12u32);
        assert_eq!(cache.get::<u32>(&key(1, "a")), None, "evicted");
        assert_eq!(cache.get::<u32>(&key(1, "c")), Some(12));
    }
}
