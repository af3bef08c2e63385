//! The dependency graph: stages of parallel handlers, wired at `start`.

use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::barrier::SequenceBarrier;
use crate::delivery::ProcessorParts;
use crate::exception::{ExceptionHandler, HaltOnFailure};
use crate::handle::RingHandle;
use crate::handler::{Dispatch, EventHandler, EventHandlerMut, Exclusive, Shared};
use crate::metrics::{ProcessorEntry, ProcessorStats};
use crate::poller::EventPoller;
use crate::processor::BatchProcessor;
use crate::producer::{MultiProducer, Producer};
use crate::rewind::RewindStrategy;
use crate::ring_buffer::RingBuffer;
use crate::sequence::{Sequence, INITIAL_SEQUENCE};
use crate::shard::{Planned, Shard, ShardKey};
use crate::wait::WaitStrategy;

/// Why a ring could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The capacity must be a non-zero power of two.
    #[error("ring capacity {0} is not a power of two")]
    Capacity(usize),
    /// A ring needs at least one handler, or producers would have nothing to wait for.
    #[error("the ring has no event handlers")]
    NoHandlers,
    /// An exclusive (`&mut`) handler must be alone in its stage.
    #[error("stage {stage} mixes an exclusive (&mut) handler with other handlers")]
    SharedExclusiveStage {
        /// Index of the offending stage (0 is the first).
        stage: usize,
    },
    /// A shard count of zero.
    #[error("a sharded group needs at least one instance")]
    NoShards,
    /// The OS refused a thread.
    #[error("could not spawn processor thread: {0}")]
    Spawn(#[from] std::io::Error),
}

/// Builds a ring and the graph of processors that consume it.
///
/// The graph is a chain of *stages*. `handle_events_with*` and
/// `handle_sharded*` add handlers to the current stage, where they run in
/// parallel over the same events; `then*` opens a new stage whose handlers
/// see an event only after every handler of the previous stage has processed
/// it. Producers wait for the last stage. A diamond (A → (B ∥ C) → D) is
/// `handle_events_with(a).then(b).handle_events_with(c).then(d)`.
///
/// `&mut` access: the `_mut` methods take an [`EventHandlerMut`], which may
/// modify events. [`start`](Self::start) refuses a stage that holds one
/// alongside any other handler (a sharded group counts as one handler: its
/// instances own disjoint sequences), because parallel handlers read the
/// same events concurrently.
///
/// Settings (`max_batch_size`, `rewind_strategy`) apply to the handlers
/// added after them, so each processor can have its own.
///
/// # Examples
///
/// ```
/// use ringpipe_ring::{EventHandler, EventHandlerMut, HandlerError, RingBuilder};
/// use std::sync::{Arc, atomic::{AtomicU64, Ordering}};
///
/// struct Sum(Arc<AtomicU64>);
/// impl EventHandler<u64> for Sum {
///     fn on_event(&mut self, event: &u64, _: i64, _: bool) -> Result<(), HandlerError> {
///         self.0.fetch_add(*event, Ordering::Relaxed);
///         Ok(())
///     }
/// }
/// struct Clear;
/// impl EventHandlerMut<u64> for Clear {
///     fn on_event(&mut self, event: &mut u64, _: i64, _: bool) -> Result<(), HandlerError> {
///         *event = 0;
///         Ok(())
///     }
/// }
///
/// let total = Arc::new(AtomicU64::new(0));
/// let (mut producer, ring) = RingBuilder::new(64, || 0u64)
///     .handle_sharded(2, |_| Sum(total.clone()))
///     .then_mut(Clear)
///     .start()?;
/// for i in 1..=100 {
///     producer.publish(|slot| *slot = i)?;
/// }
/// ring.shutdown()?;
/// assert_eq!(total.load(Ordering::Relaxed), 5050);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RingBuilder<E> {
    capacity: usize,
    factory: Box<dyn FnMut() -> E>,
    wait: WaitStrategy,
    max_batch: usize,
    rewind: RewindStrategy,
    exceptions: Arc<dyn ExceptionHandler>,
    cores: Vec<usize>,
    thread_prefix: String,
    stages: Vec<Vec<Group<E>>>,
    publish_in_slots: bool,
}

/// Handlers added by one call: one handler, or one sharded group.
struct Group<E> {
    exclusive: bool,
    members: Vec<Member<E>>,
}

/// Builds a processor around its parts; returns its thread body.
type BuildProcessor<E> = Box<dyn FnOnce(ProcessorParts<E>) -> Box<dyn FnOnce() + Send>>;

/// One processor-to-be: its settings and how to build it around its parts.
struct Member<E> {
    label: String,
    shard: Shard<E>,
    max_batch: usize,
    rewind: RewindStrategy,
    /// `None` for a poller, which has no thread.
    build: Option<BuildProcessor<E>>,
}

impl<E: Send + Sync + 'static> RingBuilder<E> {
    /// A ring of `capacity` slots (a power of two), each made by `factory`.
    pub fn new(capacity: usize, factory: impl FnMut() -> E + 'static) -> Self {
        RingBuilder {
            capacity,
            factory: Box::new(factory),
            wait: WaitStrategy::default(),
            max_batch: capacity.max(1),
            rewind: RewindStrategy::default(),
            exceptions: Arc::new(HaltOnFailure),
            cores: Vec::new(),
            thread_prefix: "ringpipe".into(),
            stages: Vec::new(),
            publish_in_slots: false,
        }
    }

    /// Puts each slot's publication marker in the slot itself, beside the
    /// event, for a ring whose hand-off latency matters more than its
    /// throughput of small events.
    ///
    /// A first-stage processor then polls the slot it waits for instead of
    /// the cursor, so a hand-off moves one cache line from the producer's
    /// core to the consumer's instead of two. Measured in the ping-pong
    /// benchmark: the round trip's p99 at 0.67–0.68 × the `disruptor`
    /// crate's (per-round median), where the default layout is at parity.
    /// The cost: every event stores and loads its marker, and a small event
    /// takes a bigger slot (a `u64` takes 16 bytes): batch publish of `u64`
    /// events ran at 0.32–0.39 × the `disruptor` crate in this layout, and
    /// one-at-a-time publish at 2.4 × instead of 3.8 × (docs/benchmarks.md).
    /// Off by default.
    pub fn publish_in_slots(mut self) -> Self {
        self.publish_in_slots = true;
        self
    }

    /// How processors and producers wait (default [`WaitStrategy::yielding`]).
    pub fn wait_strategy(mut self, wait: WaitStrategy) -> Self {
        self.wait = wait;
        self
    }

    /// The most events a handler added after this call gets in one batch
    /// (default: the capacity).
    ///
    /// # Panics
    ///
    /// Panics if `max` is zero.
    pub fn max_batch_size(mut self, max: usize) -> Self {
        assert!(max > 0, "a batch holds at least one event");
        self.max_batch = max;
        self
    }

    /// How handlers added after this call answer a retryable error
    /// (default [`RewindStrategy::default`]).
    pub fn rewind_strategy(mut self, rewind: RewindStrategy) -> Self {
        self.rewind = rewind;
        self
    }

    /// Who decides about failed batches (default [`HaltOnFailure`]).
    pub fn exception_handler(mut self, handler: impl ExceptionHandler + 'static) -> Self {
        self.exceptions = Arc::new(handler);
        self
    }

    /// Pins processor threads to these cores, round-robin in graph order.
    pub fn pin_to_cores(mut self, cores: impl IntoIterator<Item = usize>) -> Self {
        self.cores = cores.into_iter().collect();
        self
    }

    /// Prefix of processor names (default `ringpipe`). The processor added
    /// as group `g` of stage `s` (both counted from 0, in the order of the
    /// builder calls) is named `{prefix}-s{s}h{g}`, with `.{i}` appended for
    /// instance `i` of a sharded group; its thread, its
    /// [`ProcessorSnapshot`](crate::ProcessorSnapshot) and its
    /// [`Failure`](crate::Failure)s carry that name.
    pub fn thread_name(mut self, prefix: impl Into<String>) -> Self {
        self.thread_prefix = prefix.into();
        self
    }

    /// Adds `handler` to the current stage, in parallel with its handlers.
    pub fn handle_events_with(self, handler: impl EventHandler<E> + 'static) -> Self {
        self.add(false, false, vec![(Shard::All, Shared(handler))])
    }

    /// Adds an exclusive `handler` to the current stage (it must be alone there).
    pub fn handle_events_with_mut(self, handler: impl EventHandlerMut<E> + 'static) -> Self {
        self.add(false, true, vec![(Shard::All, Exclusive(handler))])
    }

    /// Opens a new stage with `handler`.
    pub fn then(self, handler: impl EventHandler<E> + 'static) -> Self {
        self.add(true, false, vec![(Shard::All, Shared(handler))])
    }

    /// Opens a new stage with the exclusive `handler`.
    pub fn then_mut(self, handler: impl EventHandlerMut<E> + 'static) -> Self {
        self.add(true, true, vec![(Shard::All, Exclusive(handler))])
    }

    /// Adds `count` instances `make(0..count)` to the current stage; instance
    /// `i` handles the events whose `sequence % count == i`.
    pub fn handle_sharded<H: EventHandler<E> + 'static>(
        self,
        count: usize,
        make: impl FnMut(usize) -> H,
    ) -> Self {
        self.add(false, false, modulo(count, make, Shared))
    }

    /// As [`handle_sharded`](Self::handle_sharded), with exclusive instances.
    pub fn handle_sharded_mut<H: EventHandlerMut<E> + 'static>(
        self,
        count: usize,
        make: impl FnMut(usize) -> H,
    ) -> Self {
        self.add(false, true, modulo(count, make, Exclusive))
    }

    /// Opens a new stage of `count` sequence-modulo instances.
    pub fn then_sharded<H: EventHandler<E> + 'static>(
        self,
        count: usize,
        make: impl FnMut(usize) -> H,
    ) -> Self {
        self.add(true, false, modulo(count, make, Shared))
    }

    /// Opens a new stage of `count` exclusive sequence-modulo instances.
    pub fn then_sharded_mut<H: EventHandlerMut<E> + 'static>(
        self,
        count: usize,
        make: impl FnMut(usize) -> H,
    ) -> Self {
        self.add(true, true, modulo(count, make, Exclusive))
    }

    /// Adds `count` instances to the current stage; instance `i` handles the
    /// events whose `key(event) % count == i`, so equal keys always meet the
    /// same instance (in sequence order). Hash the key if its low bits are
    /// not well spread.
    pub fn handle_sharded_by_key<H: EventHandler<E> + 'static>(
        self,
        count: usize,
        key: impl Fn(&E) -> u64 + Send + Sync + 'static,
        make: impl FnMut(usize) -> H,
    ) -> Self {
        self.add(false, false, keyed(count, Arc::new(key), make))
    }

    /// Opens a new stage of `count` key-sharded instances.
    pub fn then_sharded_by_key<H: EventHandler<E> + 'static>(
        self,
        count: usize,
        key: impl Fn(&E) -> u64 + Send + Sync + 'static,
        make: impl FnMut(usize) -> H,
    ) -> Self {
        self.add(true, false, keyed(count, Arc::new(key), make))
    }

    /// Adds an [`EventPoller`] to the current stage, in parallel with its
    /// handlers: a consumer without a thread, which the caller drives (take
    /// it with [`RingHandle::take_poller`]). It reads events by shared
    /// reference, under the current `max_batch_size` and `rewind_strategy`.
    pub fn add_poller(self) -> Self {
        self.add_poller_in(false)
    }

    /// Opens a new stage with an [`EventPoller`] (see [`add_poller`](Self::add_poller)).
    pub fn then_poller(self) -> Self {
        self.add_poller_in(true)
    }

    fn add_poller_in(mut self, new_stage: bool) -> Self {
        if new_stage || self.stages.is_empty() {
            self.stages.push(Vec::new());
        }
        let stage = self.stages.len() - 1;
        let group = self.stages[stage].len();
        let member = Member {
            label: format!("s{stage}h{group}"),
            shard: Shard::All,
            max_batch: self.max_batch,
            rewind: self.rewind,
            build: None,
        };
        self.stages[stage].push(Group {
            exclusive: false,
            members: vec![member],
        });
        self
    }

    /// Starts the processors; returns the single producer and the handle.
    ///
    /// # Errors
    ///
    /// See [`BuildError`].
    pub fn start(self) -> Result<(Producer<E>, RingHandle<E>), BuildError> {
        let (ring, handle) = self.start_ring(false)?;
        Ok((Producer::new(ring), handle))
    }

    /// Starts the processors; returns a cloneable multi-producer and the handle.
    ///
    /// # Errors
    ///
    /// See [`BuildError`].
    pub fn start_multi(self) -> Result<(MultiProducer<E>, RingHandle<E>), BuildError> {
        let (ring, handle) = self.start_ring(true)?;
        Ok((MultiProducer::new(ring), handle))
    }

    fn add<D: Dispatch<E> + 'static>(
        mut self,
        new_stage: bool,
        exclusive: bool,
        handlers: Vec<(Shard<E>, D)>,
    ) -> Self {
        if new_stage || self.stages.is_empty() {
            self.stages.push(Vec::new());
        }
        let stage = self.stages.len() - 1;
        let group = self.stages[stage].len();
        let count = handlers.len();
        let members = handlers
            .into_iter()
            .enumerate()
            .map(|(i, (shard, handler))| Member {
                label: match count {
                    1 => format!("s{stage}h{group}"),
                    _ => format!("s{stage}h{group}.{i}"),
                },
                shard,
                max_batch: self.max_batch,
                rewind: self.rewind,
                build: Some(Box::new(move |parts| {
                    let processor = BatchProcessor::new(parts, handler);
                    Box::new(move || processor.run())
                })),
            })
            .collect();
        self.stages[stage].push(Group { exclusive, members });
        self
    }

    fn validate(&self) -> Result<(), BuildError> {
        if !self.capacity.is_power_of_two() {
            return Err(BuildError::Capacity(self.capacity));
        }
        if self.stages.is_empty() {
            return Err(BuildError::NoHandlers);
        }
        for (stage, groups) in self.stages.iter().enumerate() {
            if groups.iter().any(|g| g.members.is_empty()) {
                return Err(BuildError::NoShards);
            }
            if groups.len() > 1 && groups.iter().any(|g| g.exclusive) {
                return Err(BuildError::SharedExclusiveStage { stage });
            }
        }
        Ok(())
    }

    fn start_ring(self, multi: bool) -> Result<(Arc<RingBuffer<E>>, RingHandle<E>), BuildError> {
        self.validate()?;
        let sequences: Vec<Vec<Arc<Sequence>>> = self
            .stages
            .iter()
            .map(|groups| {
                let members = groups.iter().map(|g| g.members.len()).sum();
                (0..members)
                    .map(|_| Arc::new(Sequence::new(INITIAL_SEQUENCE)))
                    .collect()
            })
            .collect();
        let gating = sequences.last().cloned().unwrap_or_default();
        let ring = RingBuffer::new(
            self.capacity,
            self.factory,
            multi,
            gating.clone(),
            self.wait,
            self.publish_in_slots,
        );
        let ring = Arc::new(ring.with_exception_handler(Arc::clone(&self.exceptions)));
        let mut handle = RingHandle::new(Arc::clone(&ring), gating);
        let members = self
            .stages
            .into_iter()
            .enumerate()
            .flat_map(|(stage, groups)| {
                groups
                    .into_iter()
                    .flat_map(|g| g.members)
                    .enumerate()
                    .map(move |(i, m)| (stage, i, m))
            });
        for (n, (stage, index, member)) in members.enumerate() {
            let sequence = Arc::clone(&sequences[stage][index]);
            let upstream = if stage == 0 {
                Vec::new()
            } else {
                sequences[stage - 1].clone()
            };
            let stats = Arc::new(CachePadded::new(ProcessorStats::default()));
            let name = format!("{}-{}", self.thread_prefix, member.label);
            let parts = ProcessorParts {
                name: name.clone(),
                index: n,
                ring: Arc::clone(&ring),
                barrier: SequenceBarrier::new(Arc::clone(&ring), upstream, member.max_batch),
                sequence: Arc::clone(&sequence),
                stats: Arc::clone(&stats),
                shard: member.shard,
                max_batch: member.max_batch,
                rewind: member.rewind,
                exceptions: Arc::clone(&self.exceptions),
            };
            let entry = ProcessorEntry {
                name: name.clone(),
                sequence,
                stats,
            };
            let Some(build) = member.build else {
                handle.push_poller(entry, EventPoller::new(parts));
                continue;
            };
            let body = build(parts);
            let core = (!self.cores.is_empty()).then(|| self.cores[n % self.cores.len()]);
            let thread = std::thread::Builder::new().name(name).spawn(move || {
                if let Some(id) = core {
                    if !core_affinity::set_for_current(core_affinity::CoreId { id }) {
                        log::warn!("could not pin thread to core {id}");
                    }
                }
                body()
            });
            match thread {
                Ok(thread) => handle.push(entry, thread),
                Err(error) => {
                    // Dropping the handle halts and joins what already started.
                    ring.halt();
                    drop(handle);
                    return Err(BuildError::Spawn(error));
                }
            }
        }
        Ok((ring, handle))
    }
}

fn modulo<E, H, D>(
    count: usize,
    mut make: impl FnMut(usize) -> H,
    wrap: fn(H) -> D,
) -> Vec<(Shard<E>, D)> {
    (0..count)
        .map(|i| {
            let shard = Shard::Modulo {
                ordinal: i as i64,
                count: count as i64,
            };
            (shard, wrap(make(i)))
        })
        .collect()
}

fn keyed<E, H>(
    count: usize,
    key: ShardKey<E>,
    mut make: impl FnMut(usize) -> H,
) -> Vec<(Shard<E>, Shared<H>)> {
    (0..count)
        .map(|i| {
            // One instance owns every event (`key % 1 == 0`): it need not
            // read a slot to know.
            let shard = match count {
                1 => Shard::All,
                _ => Shard::Key {
                    ordinal: i as u64,
                    count: count as u64,
                    key: Arc::clone(&key),
                    planned: Planned::default(),
                },
            };
            (shard, Shared(make(i)))
        })
        .collect()
}
