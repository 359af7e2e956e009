//! The room server's limits, and the token bucket that enforces its rates.

/// The limits of a room server. Times are in milliseconds of the server's
/// monotonic clock (the state machine is handed `now`, never reads a
/// clock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoomLimits {
    /// Rooms open at once.
    pub max_rooms: usize,
    /// Connections a room takes beyond its seats (clients still in their
    /// handshake): the per-room cap is `players + spectators + this`.
    pub room_conn_slack: usize,
    /// Room connections open from one IP address.
    pub max_conns_per_ip: usize,
    /// A connection must have a seat this long after it opened.
    pub join_deadline_ms: u64,
    /// A connection that sent nothing for this long is closed.
    pub client_idle_ms: u64,
    /// A room with no connection for this long is removed.
    pub room_idle_ms: u64,
    /// A room this old is closed, whoever is in it.
    pub max_room_age_ms: u64,
    /// The relay budget of a room in datagram bytes per second.
    pub relay_bytes_per_s: u64,
    /// The most bytes the relay budget holds (the largest burst).
    pub relay_burst_bytes: u64,
    /// Text messages per second per connection, on average.
    pub text_per_s: u64,
    /// The most text messages at once per connection.
    pub text_burst: u64,
    /// Messages waiting to be written to one connection (the adapter's
    /// queue; past it relay frames to that connection are dropped).
    pub send_queue: usize,
}

impl Default for RoomLimits {
    /// The limits of docs/rooms.md: 256 rooms, seats + 2 connections per
    /// room, 32 per IP, 5 s to join, 30 s idle, rooms removed after 60 s
    /// empty or 6 hours, 256 KiB/s of relay per room with 64 KiB bursts,
    /// 20 text messages a second with bursts of 100, 256 queued messages.
    fn default() -> RoomLimits {
        RoomLimits {
            max_rooms: 256,
            room_conn_slack: 2,
            max_conns_per_ip: 32,
            join_deadline_ms: 5_000,
            client_idle_ms: 30_000,
            room_idle_ms: 60_000,
            max_room_age_ms: 6 * 3_600_000,
            relay_bytes_per_s: 256 * 1024,
            relay_burst_bytes: 64 * 1024,
            text_per_s: 20,
            text_burst: 100,
            send_queue: 256,
        }
    }
}

/// A token bucket in integer arithmetic: `rate` tokens a second refilled
/// continuously (by the millisecond), at most `burst` held. Kept in
/// thousandths of a token so that a rate below 1000/s still refills every
/// millisecond. A clock that goes backwards refills nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    rate: u64,
    burst: u64,
    milli: u64,
    last_ms: u64,
}

impl TokenBucket {
    /// A full bucket at time `now_ms`.
    #[must_use]
    pub const fn new(rate: u64, burst: u64, now_ms: u64) -> TokenBucket {
        TokenBucket {
            rate,
            burst,
            milli: burst.saturating_mul(1000),
            last_ms: now_ms,
        }
    }

    fn refill(&mut self, now_ms: u64) {
        if now_ms > self.last_ms {
            let add = (now_ms - self.last_ms).saturating_mul(self.rate);
            self.milli = self
                .milli
                .saturating_add(add)
                .min(self.burst.saturating_mul(1000));
            self.last_ms = now_ms;
        }
    }

    /// Takes `n` tokens if there are that many at `now_ms`.
    pub fn take(&mut self, n: u64, now_ms: u64) -> bool {
        self.refill(now_ms);
        let cost = n.saturating_mul(1000);
        if self.milli >= cost {
            self.milli -= cost;
            true
        } else {
            false
        }
    }

    /// Whole tokens held at `now_ms`.
    pub fn available(&mut self, now_ms: u64) -> u64 {
        self.refill(now_ms);
        self.milli / 1000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_refills_at_its_rate_and_holds_its_burst() {
        // 1000 bytes/s, 500 held: 500 at once, then 1 per ms.
        let mut b = TokenBucket::new(1000, 500, 0);
        assert!(b.take(500, 0));
        assert!(!b.take(1, 0));
        assert!(b.take(10, 10));
        assert!(!b.take(1, 10));
        // A long pause refills only up to the burst.
        assert_eq!(b.available(1_000_000), 500);
        // Backwards: nothing refilled, nothing lost.
        assert!(b.take(500, 1_000_000));
        assert_eq!(b.available(5), 0);
        assert_eq!(b.available(1_000_001), 1);
    }

    #[test]
    fn a_slow_rate_refills_in_thousandths() {
        // 20 a second: one every 50 ms.
        let mut b = TokenBucket::new(20, 1, 0);
        assert!(b.take(1, 0));
        assert!(!b.take(1, 49));
        assert!(b.take(1, 50));
    }
}
