//! What the sinks of one import share, built once by [`prepare`](crate::prepare).

use std::sync::Arc;

use ringpipe_pipeline::RecoveryCounters;

use crate::check::Check;
use crate::config::{BulkClient, Mode, WritePath};
use crate::encode::boolean::BooleanColumn;
use crate::ident::Ident;
use crate::redact::SecretOpts;
use crate::reject::RejectLog;
use crate::statement::InsertShape;
use crate::wire::ParamKind;

/// The state every sink of one import shares (behind
/// [`PreparedTarget`](crate::PreparedTarget)).
#[derive(Debug)]
pub(crate) struct Shared {
    /// Driver options (password resolved; `Debug` hides it).
    pub(crate) opts: SecretOpts,
    /// The URL, redacted, for messages.
    pub(crate) redacted_url: String,
    /// Mapped columns, quoted.
    pub(crate) columns: Vec<Ident>,
    /// Key columns (primary, else first unique).
    pub(crate) key_columns: Vec<String>,
    /// Duplicate handling.
    pub(crate) mode: Mode,
    /// The write path after fallbacks.
    pub(crate) path: WritePath,
    /// Who sends the bulk path's statements (the driver on other paths).
    pub(crate) client: BulkClient,
    /// Parts of the multi-row INSERT for `mode`.
    pub(crate) shape: InsertShape,
    /// The `LOAD DATA` statement for `mode`.
    pub(crate) load_sql: String,
    /// Rows per statement.
    pub(crate) max_rows: usize,
    /// How each column travels in the wire client's bulk packets.
    pub(crate) param_kinds: Vec<ParamKind>,
    /// Per column, the check of values the server would alter.
    pub(crate) checks: Vec<Option<Check>>,
    /// Per column, whether and how it takes the words `true` and `false`;
    /// `None` when no column does.
    pub(crate) booleans: Option<Box<[Option<BooleanColumn>]>>,
    /// The configured statement size bound, if any.
    pub(crate) max_bytes: Option<usize>,
    /// Bad-record budget and reject file, shared by all shards.
    pub(crate) rejects: Arc<RejectLog>,
    /// The table's name as given, for checkpoint rows.
    pub(crate) table_name: String,
    /// Recoveries of all shards, for the import's report.
    pub(crate) recoveries: RecoveryCounters,
}
