//! The `threads` engine: every BSP process is a thread of one OS process.
//!
//! The protocol (barrier phases, memory ordering, where copies happen) is
//! described in `README.md` beside this file; the barrier itself is
//! `engine/barrier.rs`, with threads sleeping on a condition variable.

pub(crate) use super::barrier::Barrier;
