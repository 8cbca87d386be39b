//! When work should stop: a deadline, a flag someone may raise, or both, and
//! those of a parent (a server that shuts down stops every call it runs). A
//! tool call carries one down to the graph reads it makes, which check it
//! between statements and interrupt a statement that runs past it. Plain
//! data: nothing here stops anything by itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Whether the work it is given to should stop. Cloning shares it.
#[derive(Clone, Default, Debug)]
pub struct Cancel(Option<Arc<Inner>>);

#[derive(Debug)]
struct Inner {
    deadline: Option<Instant>,
    raised: AtomicBool,
    parent: Cancel,
}

impl Cancel {
    /// Work that runs to its end (the command line's).
    pub fn never() -> Cancel {
        Cancel(None)
    }

    /// A flag of its own, raised by `cancel`.
    pub fn new() -> Cancel {
        Cancel::child(&Cancel::never(), None)
    }

    /// Stops at `deadline`, when cancelled, or when `parent` is.
    pub fn child(parent: &Cancel, deadline: Option<Instant>) -> Cancel {
        Cancel(Some(Arc::new(Inner {
            deadline,
            raised: AtomicBool::new(false),
            parent: parent.clone(),
        })))
    }

    /// Raises the flag (no effect on `never`).
    pub fn cancel(&self) {
        if let Some(i) = &self.0 {
            i.raised.store(true, Ordering::SeqCst);
        }
    }

    /// Whether the work should stop now.
    pub fn is_cancelled(&self) -> bool {
        match &self.0 {
            None => false,
            Some(i) => {
                i.raised.load(Ordering::SeqCst)
                    || i.deadline.is_some_and(|d| Instant::now() >= d)
                    || i.parent.is_cancelled()
            }
        }
    }

    /// Whether it can ever stop (`never` cannot): a reader watches only those.
    pub fn can_stop(&self) -> bool {
        self.0.is_some()
    }

    /// Time left before the nearest deadline, its parents' included.
    pub fn remaining(&self) -> Option<Duration> {
        let i = self.0.as_ref()?;
        let own = i
            .deadline
            .map(|d| d.saturating_duration_since(Instant::now()));
        match (own, i.parent.remaining()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_stops_with_its_deadline_its_flag_or_its_parent() {
        assert!(!Cancel::never().is_cancelled());
        Cancel::never().cancel();
        let parent = Cancel::new();
        let far = Cancel::child(&parent, Some(Instant::now() + Duration::from_secs(60)));
        assert!(!far.is_cancelled());
        assert!(far.remaining().is_some_and(|r| r > Duration::from_secs(50)));
        let past = Cancel::child(&parent, Some(Instant::now()));
        assert!(past.is_cancelled());
        let own = Cancel::child(&parent, None);
        own.cancel();
        assert!(own.is_cancelled() && !parent.is_cancelled() && !far.is_cancelled());
        parent.cancel();
        assert!(far.is_cancelled());
    }
}
