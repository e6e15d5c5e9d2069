//! The `threads` engine: every BSP process is a thread of one OS process.
//!
//! The protocol (barrier phases, memory ordering, where copies happen) is
//! described in `README.md` beside this file.

mod barrier;

pub(crate) use barrier::Barrier;
