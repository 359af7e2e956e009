//! The byte budget shared by every upload body in flight.
//!
//! One connection that declares a large body and withholds its last bytes
//! holds its buffer until the body deadline. Without a shared bound, the
//! connection cap times the batch size (256 × 64 MiB) is the memory an
//! attacker can pin. Every body reserves its bytes here **before** its
//! buffer grows: the declared `Content-Length` at once (and the buffer is
//! allocated at exactly that size, so it never grows past it), a chunked
//! body step by step. When the budget is spent the upload is refused with
//! `503` + `Retry-After`, and a reservation is returned as soon as its
//! body is queued, refused or dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A byte budget; cheap to share behind an [`Arc`].
#[derive(Debug)]
pub struct ByteBudget {
    limit: usize,
    used: AtomicUsize,
}

impl ByteBudget {
    /// A budget of `limit` bytes.
    #[must_use]
    pub fn new(limit: usize) -> Arc<ByteBudget> {
        Arc::new(ByteBudget {
            limit,
            used: AtomicUsize::new(0),
        })
    }

    /// The limit, in bytes.
    #[must_use]
    pub const fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes reserved right now.
    #[must_use]
    pub fn in_use(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    fn take(&self, n: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(n).filter(|&total| total <= self.limit)
            })
            .is_ok()
    }

    /// Reserves `n` bytes, or `None` when fewer are left.
    #[must_use]
    pub fn reserve(self: &Arc<ByteBudget>, n: usize) -> Option<Reservation> {
        self.take(n).then(|| Reservation {
            budget: Arc::clone(self),
            bytes: n,
        })
    }
}

/// Bytes held from a [`ByteBudget`] until dropped.
#[derive(Debug)]
pub struct Reservation {
    budget: Arc<ByteBudget>,
    bytes: usize,
}

impl Reservation {
    /// Bytes held.
    #[must_use]
    pub const fn bytes(&self) -> usize {
        self.bytes
    }

    /// Holds `more` bytes besides; `false` (nothing changed) when the
    /// budget has fewer left.
    #[must_use]
    pub fn grow(&mut self, more: usize) -> bool {
        if self.budget.take(more) {
            self.bytes += more;
            true
        } else {
            false
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_add_up_to_the_limit_and_come_back() {
        let b = ByteBudget::new(100);
        let mut a = b.reserve(60).expect("60 of 100");
        assert!(b.reserve(41).is_none(), "60 + 41 > 100");
        let c = b.reserve(40).expect("60 + 40 = 100");
        assert_eq!(b.in_use(), 100);
        assert!(!a.grow(1), "the budget is spent");
        drop(c);
        assert!(a.grow(40));
        assert_eq!((a.bytes(), b.in_use()), (100, 100));
        drop(a);
        assert_eq!(b.in_use(), 0, "everything returned");
        assert!(b.reserve(usize::MAX).is_none(), "no overflow");
    }
}
