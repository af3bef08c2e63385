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
