//! Which shard owns which record: the one rule the ring's routing, the
//! checkpoints and resumption all follow.

/// Hands the records of one region to its shards in blocks.
///
/// Records are numbered 1, 2, … in the whole input (a region's source says
/// how many come before it). Record `r` belongs to shard
/// `((r - 1) / block) % shards` of its region, so each shard receives its
/// records in order, and the records a shard has committed are always a
/// prefix of the records it owns. That prefix is what makes resumption
/// exact: a resumed run skips record `r` exactly when its owner's checkpoint
/// covers it ([`Ownership::committed`]).
///
/// A block of 1 deals records round-robin; larger blocks give each shard
/// runs of consecutive records (a database then finds fewer of one
/// connection's inserts in the same index pages as another's).
///
/// # Examples
///
/// ```
/// use ringpipe_pipeline::Ownership;
///
/// let own = Ownership::new(2, 3);
/// let owners: Vec<usize> = (1..=8).map(|r| own.shard_of(r)).collect();
/// assert_eq!(owners, [0, 0, 0, 1, 1, 1, 0, 0]);
/// // Shard 1 committed through record 6: records 4..=6 are done, 7 is not its own.
/// assert!(own.committed(5, &[0, 6]));
/// assert!(!own.committed(7, &[0, 6]));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ownership {
    /// Shards of the region.
    shards: usize,
    /// Consecutive records per shard turn.
    block: u64,
}

impl Ownership {
    /// `shards` shards taking turns of `block` records.
    ///
    /// # Panics
    ///
    /// Panics if `shards` or `block` is zero.
    pub fn new(shards: usize, block: u64) -> Self {
        assert!(shards > 0, "at least one shard");
        assert!(block > 0, "a block holds at least one record");
        Ownership { shards, block }
    }

    /// Number of shards.
    pub fn shards(&self) -> usize {
        self.shards
    }

    /// Records per shard turn.
    pub fn block(&self) -> u64 {
        self.block
    }

    /// The turn record `record` (1-based) falls in; the ring routes by it.
    pub fn turn(&self, record: u64) -> u64 {
        record.saturating_sub(1) / self.block
    }

    /// The shard (0-based, within the region) that owns record `record`.
    pub fn shard_of(&self, record: u64) -> usize {
        (self.turn(record) % self.shards as u64) as usize
    }

    /// Whether `record` was committed by an earlier run whose shards
    /// committed through `last_record[shard]` (0 or absent: nothing).
    pub fn committed(&self, record: u64, last_record: &[u64]) -> bool {
        last_record
            .get(self.shard_of(record))
            .is_some_and(|&last| record <= last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_of_one_is_round_robin() {
        let own = Ownership::new(3, 1);
        let owners: Vec<usize> = (1..=7).map(|r| own.shard_of(r)).collect();
        assert_eq!(owners, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn each_shard_owns_a_prefix_it_can_resume_after() {
        // Whatever the block and shard count, the owned records of a shard
        // up to its checkpoint are exactly those the rule calls committed.
        for shards in 1..5 {
            for block in [1, 2, 7] {
                let own = Ownership::new(shards, block);
                let last: Vec<u64> = (0..shards as u64).map(|s| 5 + 3 * s).collect();
                for record in 1..60 {
                    let shard = own.shard_of(record);
                    assert_eq!(own.committed(record, &last), record <= last[shard]);
                }
            }
        }
    }

    #[test]
    fn record_zero_does_not_underflow() {
        assert_eq!(Ownership::new(4, 7).shard_of(0), 0);
    }
}
