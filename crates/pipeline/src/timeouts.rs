//! How long a database sink waits for its server unless told otherwise:
//! one rule for every sink, so that `--connect-timeout` and
//! `--net-timeout` mean the same into any server.

use std::time::Duration;

/// How long opening a connection may take when neither the sink's
/// configuration nor its URL says.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one call may wait for the server when neither the sink's
/// configuration nor its URL says: generous, because a `COMMIT` of a large
/// batch or a statement waiting for a lock legitimately keeps the server
/// silent for a while.
pub const DEFAULT_NET_TIMEOUT: Duration = Duration::from_secs(300);

/// TCP keepalive of a database connection whose calls wait at most a given
/// net timeout: one rule for every sink, so that a server whose host went
/// away is noticed alike whichever database it ran.
///
/// Probes start after a quarter of the net timeout (at most 60 s) and
/// follow each other every quarter (at most 10 s), in whole seconds (what
/// the socket options take) and never closer than 1 s;
/// six unanswered probes drop the connection. With `TCP_USER_TIMEOUT` set
/// to the net timeout as well, a peer silent for that long is dropped
/// even while nothing else is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keepalive {
    /// Idle time before the first probe.
    pub idle: Duration,
    /// Time between probes.
    pub interval: Duration,
    /// Unanswered probes before the connection is dropped.
    pub probes: u32,
}

impl Keepalive {
    /// The keepalive for connections whose calls wait at most `net`.
    pub fn for_net_timeout(net: Duration) -> Keepalive {
        let quarter = Duration::from_secs((net / 4).as_secs());
        let second = Duration::from_secs(1);
        Keepalive {
            idle: quarter.clamp(second, Duration::from_secs(60)),
            interval: quarter.clamp(second, Duration::from_secs(10)),
            probes: 6,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_scale_with_the_net_timeout_within_bounds() {
        let default = Keepalive::for_net_timeout(DEFAULT_NET_TIMEOUT);
        assert_eq!(default.idle, Duration::from_secs(60));
        assert_eq!(default.interval, Duration::from_secs(10));
        assert_eq!(default.probes, 6);
        let short = Keepalive::for_net_timeout(Duration::from_secs(20));
        assert_eq!(
            (short.idle, short.interval),
            (Duration::from_secs(5), Duration::from_secs(5))
        );
        let tiny = Keepalive::for_net_timeout(Duration::from_millis(1));
        assert_eq!(
            (tiny.idle, tiny.interval),
            (Duration::from_secs(1), Duration::from_secs(1))
        );
    }
}
