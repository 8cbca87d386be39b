//! A map that holds at most a byte budget of values, the oldest going first.
//! What a server keeps between answers (walk results, source texts) is bounded
//! by bytes rather than by entries: one entry may be a line, another a file.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

pub struct ByteFifo<K, V> {
    entries: HashMap<K, (V, usize)>,
    /// Oldest first.
    order: VecDeque<K>,
    bytes: usize,
    budget: usize,
}

impl<K: Hash + Eq + Clone, V> ByteFifo<K, V> {
    pub fn new(budget: usize) -> ByteFifo<K, V> {
        ByteFifo {
            entries: HashMap::new(),
            order: VecDeque::new(),
            bytes: 0,
            budget,
        }
    }

    pub fn get(&self, key: &K) -> Option<&V> {
        self.entries.get(key).map(|(v, _)| v)
    }

    /// Keeps `value` under `key` as costing `bytes` (the caller's estimate,
    /// key included), putting out the oldest entries past the budget. An entry
    /// of more than an eighth of the budget is not kept: it would put out
    /// many others for one answer.
    pub fn insert(&mut self, key: K, value: V, bytes: usize) {
        if bytes > self.budget / 8 {
            return;
        }
        match self.entries.insert(key.clone(), (value, bytes)) {
            Some((_, old)) => self.bytes -= old,
            None => self.order.push_back(key),
        }
        self.bytes += bytes;
        while self.bytes > self.budget {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some((_, b)) = self.entries.remove(&oldest) {
                self.bytes -= b;
            }
        }
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.order.clear();
        self.bytes = 0;
    }

    /// The bytes the kept entries cost.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_go_first_and_a_replaced_entry_is_counted_once() {
        let mut fifo = ByteFifo::new(800);
        for k in 0..10 {
            fifo.insert(k, k * 10, 100);
        }
        assert_eq!(fifo.bytes(), 800);
        assert_eq!(fifo.len(), 8);
        assert_eq!(fifo.get(&0), None);
        assert_eq!(fifo.get(&1), None);
        assert_eq!(fifo.get(&2), Some(&20));
        // Replacing keeps the entry's place and counts its new size only.
        fifo.insert(2, 21, 50);
        assert_eq!(fifo.bytes(), 750);
        assert_eq!(fifo.get(&2), Some(&21));
        // Over an eighth of the budget: not kept, nothing put out.
        fifo.insert(99, 0, 101);
        assert_eq!(fifo.get(&99), None);
        assert_eq!(fifo.len(), 8);
        fifo.insert(10, 100, 100);
        assert_eq!(fifo.get(&2), None, "the oldest went, though replaced");
        assert_eq!(fifo.get(&10), Some(&100));
        fifo.clear();
        assert!(fifo.is_empty());
        assert_eq!(fifo.bytes(), 0);
    }
}
