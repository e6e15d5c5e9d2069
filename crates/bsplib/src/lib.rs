//! BSPlib, the Bulk Synchronous Parallel programming library, in Rust.
//!
//! A BSP program is SPMD: [`run`] starts `p` processes running the same
//! function, each with a [`Bsp`] handle. The computation advances in
//! *supersteps* separated by [`Bsp::sync`]; communication issued in a
//! superstep takes effect at the sync that ends it. Two styles:
//!
//! - **DRMA**: memory is registered collectively ([`Bsp::push_reg`]), then
//!   written with [`Bsp::put`] and read with [`Bsp::get`]; a registered
//!   [`Area`] is identified by its *local* address, as in BSPlib.
//! - **BSMP**: [`Bsp::send`] tagged messages, read in the next superstep with
//!   [`Bsp::qsize`], [`Bsp::get_tag`], [`Bsp::move_payload`] and
//!   [`Bsp::hpmove`].
//!
//! Every transfer takes its arguments in one order: the target process,
//! where (an area and an offset, in elements), the data
//! (`bsp.put(pid, &x, offset, &src)`, `bsp.get(pid, &x, offset,
//! y.range(a..b))`). Beyond BSPlib, each extension is reached through an
//! accessor on the handle or is a type of its own:
//! [`bsp.collectives()`](Bsp::collectives) (broadcast, gather, reductions,
//! scans), [`bsp.am()`](Bsp::am) (LAPI's active messages and counters),
//! [`bsp.rma()`](Bsp::rma) (MPI-2's epochs and locks on areas),
//! [`Window`] (one-sided memory with passive-target locks),
//! [`Bsp::accumulate`], the strided and vector transfers, and
//! [`Bsp::sync_with`] (fence hints).
//!
//! The semantics are those of the BSPlib paper (Hill, McColl et al., 1997)
//! and its manual pages, corners included: puts copy their source at the
//! call; gets read the remote value at the end of the superstep and are
//! written before puts; registration slots shadow by address and may be
//! popped out of order; tag sizes change one superstep later; messages live
//! for one superstep. Every misuse is an [`Error`] naming the call, the
//! process, the superstep and the source line, and it stops the run.
//!
//! The safe API is sound: local views of registered memory borrow the
//! handle, and `sync` needs it mutably. The unbuffered operations
//! ([`Bsp::hpput`], [`Bsp::hpget`]) are `unsafe fn`s, and `Bsp::raw` (cargo
//! feature `raw`) gives BSPlib's pointer API, on which the C interface
//! sits.
//!
//! # Examples
//!
//! The paper's `bsp_allsums`: running sums in `log p` supersteps.
//!
//! ```
//! let sums = bsplib::run(4, |bsp| {
//!     let (pid, p) = (bsp.pid(), bsp.nprocs());
//!     let x = pid as i64 + 1;
//!     let left = bsplib::Area::<i64>::new(bsp, 1);
//!     let mut right = bsplib::Area::<i64>::new(bsp, 1);
//!     bsp.push_reg(&right)?;
//!     bsp.sync()?;
//!     right.as_mut_slice(bsp)[0] = x;
//!     let mut i = 1;
//!     while i < p {
//!         if pid >= i {
//!             bsp.get(pid - i, &right, 0, left.range(..1))?;
//!         }
//!         bsp.sync()?;
//!         if pid >= i {
//!             let l = left.as_slice(bsp)[0];
//!             right.as_mut_slice(bsp)[0] += l;
//!         }
//!         i *= 2;
//!     }
//!     bsp.pop_reg(&right)?;
//!     Ok(right.as_slice(bsp)[0])
//! })?;
//! assert_eq!(sums, vec![1, 3, 6, 10]);
//! # Ok::<(), bsplib::Error>(())
//! ```
//!
//! # Engines
//!
//! [`Engine::Threads`] (default): processes are threads;
//! [`Engine::Processes`]: forked OS processes sharing memory;
//! [`Engine::Mpi`] (cargo feature `mpi`): MPI ranks, started by `mpirun`;
//! [`Engine::Serial`]: one process, the reference. [`run`] and
//! [`Runtime::new`] use `threads` whatever the environment says;
//! [`Runtime::from_env`] lets `BSPLIB_ENGINE` choose at run time, so one
//! binary runs on any of them. The same [`run`] works on every engine: a
//! process returns a [`Portable`](trait@Portable) value
//! (`#[derive(Portable)]` for a struct or an enum of your own), which
//! moves as it is on `serial` and `threads` and crosses address spaces
//! encoded on `processes` and `mpi`.
//! Each engine's protocol is documented in the README of its folder in the
//! source tree.

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The handle first, then the modules whose methods extend it, in the
// order rustdoc lists `Bsp`'s methods: the core (superstep, registration,
// DRMA, BSMP), the other transfers, the sync's variants and the machine's
// parameters, then the extensions' accessors.
mod bsp;

mod strided;

pub mod rma;

mod hints;

mod machine;

pub mod am;
mod bsmp;
mod check;
mod codec;
mod collectives;
mod drma;
mod engine;
pub mod epoch;
mod error;
mod exchange;
mod holds;
#[cfg(feature = "raw")]
#[cfg_attr(docsrs, doc(cfg(feature = "raw")))]
#[doc(hidden)]
pub mod launch;
mod mailbox;
mod mem;
pub mod probe;
mod process;
mod profile;
mod progress;
#[cfg(feature = "raw")]
#[cfg_attr(docsrs, doc(cfg(feature = "raw")))]
pub mod raw;
mod registration;
mod runtime;
mod stream;
mod superstep;
mod vector;
mod window;

pub use bsp::area::{Area, AreaRange, AreaRef};
pub use bsp::{Bsp, Message, Owned};
pub use bsplib_derive::Portable;
pub use codec::Portable;
#[cfg(feature = "raw")]
#[cfg_attr(docsrs, doc(cfg(feature = "raw")))]
pub use collectives::level1;
pub use collectives::{Algorithm, Collectives, Reducible};
pub use engine::Engine;
#[doc(no_inline)]
pub use epoch::{Epoch, Lock, LockKind};
pub use error::{Error, ErrorKind, SourceLocation};
pub use hints::Hints;
pub use rma::op::Op;
pub use runtime::{available_processes, run, Runtime};
pub use strided::{Piece, Strided};
pub use window::{Local, LocalMut, WinEpoch, WinLock, Window};

/// The README's Rust examples (the repository's and the crate's), compiled
/// and run as doc-tests so that they stay true to the API.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;

/// The user guide's Rust examples (`guide/src/`, one item per chapter of
/// `SUMMARY.md`), compiled and run as doc-tests so that what the guide
/// shows runs. Under `cfg(doctest)` only: `cargo package` never reads these
/// files (they lie outside the crate). `crates/bsplib-c/tests/guide.rs`
/// checks that every chapter is listed here.
#[cfg(doctest)]
mod guide {
    #[doc = include_str!("../../../guide/src/introduction.md")]
    struct Introduction;
    #[doc = include_str!("../../../guide/src/install.md")]
    struct Install;
    #[doc = include_str!("../../../guide/src/first-c.md")]
    struct FirstC;
    #[doc = include_str!("../../../guide/src/first-fortran.md")]
    struct FirstFortran;
    #[doc = include_str!("../../../guide/src/first-rust.md")]
    struct FirstRust;
    #[doc = include_str!("../../../guide/src/tools.md")]
    struct Tools;
    #[doc = include_str!("../../../guide/src/cost-model.md")]
    struct CostModel;
    #[doc = include_str!("../../../guide/src/profiling.md")]
    struct Profiling;
    #[doc = include_str!("../../../guide/src/bspedupack.md")]
    struct Bspedupack;
    #[doc = include_str!("../../../guide/src/primitives.md")]
    struct Primitives;
    #[doc = include_str!("../../../guide/src/one-sided.md")]
    struct OneSided;
    #[doc = include_str!("../../../guide/src/active-messages.md")]
    struct ActiveMessages;
    #[doc = include_str!("../../../guide/src/collectives.md")]
    struct Collectives;
    #[doc = include_str!("../../../guide/src/engines.md")]
    struct Engines;
    #[doc = include_str!("../../../guide/src/mpi.md")]
    struct Mpi;
    #[doc = include_str!("../../../guide/src/checking.md")]
    struct Checking;
    #[doc = include_str!("../../../guide/src/errors.md")]
    struct Errors;
    #[doc = include_str!("../../../guide/src/reference.md")]
    struct Reference;
    #[doc = include_str!("../../../guide/src/soundness.md")]
    struct Soundness;
    #[doc = include_str!("../../../guide/src/reliability.md")]
    struct Reliability;
    #[doc = include_str!("../../../guide/src/performance.md")]
    struct Performance;
    #[doc = include_str!("../../../guide/src/design.md")]
    struct Design;
}
