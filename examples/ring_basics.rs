//! One producer → three sharded handlers → one final stage.
//!
//! Each shard owns the events whose `sequence % 3` is its ordinal and sees
//! `end_of_batch` on its last own event of every batch (where a database
//! sink would commit). The final stage runs only after all three shards have
//! processed an event, and clears it ("early release") so that the heap data
//! it holds does not wait in the ring for the next lap.
//!
//! Run: `cargo run --release --example ring_basics`

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ringpipe_ring::{EventHandler, EventHandlerMut, HandlerError, RingBuilder, WaitStrategy};

/// An order travelling through the ring; `note` is heap data to release.
#[derive(Default)]
struct Order {
    id: u64,
    amount: u64,
    note: Option<String>,
}

/// Sums its shard's amounts, "committing" at the end of each batch.
struct Shard {
    ordinal: usize,
    pending: u64,
    committed: Arc<AtomicU64>,
    batches: u64,
}

impl EventHandler<Order> for Shard {
    fn on_event(
        &mut self,
        order: &Order,
        sequence: i64,
        end_of_batch: bool,
    ) -> Result<(), HandlerError> {
        assert_eq!(sequence as usize % 3, self.ordinal);
        self.pending += order.amount;
        if end_of_batch {
            self.committed.fetch_add(self.pending, Ordering::Relaxed);
            self.pending = 0;
            self.batches += 1;
        }
        Ok(())
    }

    fn on_shutdown(&mut self) {
        println!(
            "  shard {}: {} batches committed (about {} orders each)",
            self.ordinal,
            self.batches,
            1_000_000 / 3 / self.batches.max(1)
        );
    }
}

/// Final stage: frees the order's heap data once every shard is done.
struct Clear {
    released: Arc<AtomicU64>,
}

impl EventHandlerMut<Order> for Clear {
    fn on_event(&mut self, order: &mut Order, _: i64, _: bool) -> Result<(), HandlerError> {
        if order.note.take().is_some() {
            self.released.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    const ORDERS: u64 = 1_000_000;
    let committed = Arc::new(AtomicU64::new(0));
    let released = Arc::new(AtomicU64::new(0));

    let (mut producer, ring) = RingBuilder::new(4096, Order::default)
        .wait_strategy(WaitStrategy::yielding())
        .handle_sharded(3, |ordinal| Shard {
            ordinal,
            pending: 0,
            committed: Arc::clone(&committed),
            batches: 0,
        })
        .then_mut(Clear {
            released: Arc::clone(&released),
        })
        .start()?;

    let started = std::time::Instant::now();
    for id in 0..ORDERS {
        producer.publish(|order| {
            order.id = id;
            order.amount = id % 100;
            order.note = Some(format!("order {id}"));
        })?;
    }
    println!("published {ORDERS} orders; events each processor has handled so far:");
    for processor in ring.processors() {
        println!("  {:<28} {:>9}", processor.name, processor.events);
    }
    println!("draining; each shard as it stops:");
    ring.shutdown()?;
    let seconds = started.elapsed().as_secs_f64();

    let expected: u64 = (0..ORDERS).map(|id| id % 100).sum();
    assert_eq!(committed.load(Ordering::Relaxed), expected);
    assert_eq!(released.load(Ordering::Relaxed), ORDERS);
    println!(
        "done: {ORDERS} orders in {seconds:.2} s ({:.1} M orders/s); the shards' sum {expected} is exact, every note was released",
        ORDERS as f64 / seconds / 1e6
    );
    Ok(())
}
