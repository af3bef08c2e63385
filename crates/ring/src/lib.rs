//! ringpipe-ring: a lock-free, LMAX-Disruptor-style ring buffer.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod pipeline;
