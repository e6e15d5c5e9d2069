//! [`Bsp`]: the handle of one BSP process, and the safe Rust API.

use crate::error::SourceLocation;
use std::cell::RefCell;
use std::marker::PhantomData;

use bytemuck::Pod;

use crate::bsp::area::{Area, AreaRange};
use crate::error::{Error, ErrorKind};
use crate::process::Process;

/// Unwinds a process that called [`Bsp::abort`]; caught by the run.
pub(crate) struct AbortUnwind;

/// The handle of one BSP process: every BSPlib primitive is a method.
///
/// A `Bsp` is handed to the SPMD function by [`run`](crate::run) and
/// [`Runtime::run`](crate::Runtime::run). It is neither `Send` nor `Sync`.
/// Methods that only queue work take `&self`; [`sync`](Bsp::sync) takes
/// `&mut self`, which ends every borrow of local registered memory before
/// the data moves.
///
/// Supersteps are numbered from 0.
pub struct Bsp {
    process: RefCell<Process>,
    /// The run's id and this process's pid, which every [`Area`] made with
    /// this handle records: the areas it may be used with.
    owner: (u64, usize),
    /// `processes`: the run's world, whose area memory large [`Area`]s
    /// live in (`engine/area_memory.rs`); `None` on the other engines.
    area_memory: Option<std::sync::Arc<crate::engine::World>>,
    _not_send: PhantomData<*mut ()>,
}

impl Bsp {
    pub(crate) fn new(process: Process) -> Self {
        Bsp {
            owner: (process.world.id(), process.pid),
            area_memory: process
                .world
                .area_memory()
                .is_some()
                .then(|| process.world.clone()),
            process: RefCell::new(process),
            _not_send: PhantomData,
        }
    }

    /// The run and process of this handle (see [`Area`]).
    #[inline]
    pub(crate) fn owner(&self) -> (u64, usize) {
        self.owner
    }

    /// The world whose area memory this process's large areas live in.
    #[inline]
    pub(crate) fn area_memory(&self) -> Option<&std::sync::Arc<crate::engine::World>> {
        self.area_memory.as_ref()
    }

    /// The check every call that takes an [`Area`] makes first: the area
    /// was created by this process, in this run. An area of another run
    /// (kept in a `thread_local`, say) names no registration of this one,
    /// and its views were never guarded by this run's syncs.
    #[inline]
    pub(crate) fn own<T: Pod>(
        &self,
        p: &Process,
        area: &Area<T>,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let (created_run, created_pid) = area.owner();
        if (created_run, created_pid) == self.owner {
            return Ok(());
        }
        Err(p.fail(
            ErrorKind::ForeignArea {
                created_run,
                created_pid,
                run: self.owner.0,
            },
            call,
            loc,
        ))
    }

    #[inline]
    pub(crate) fn process(&self) -> std::cell::RefMut<'_, Process> {
        self.process.borrow_mut()
    }

    /// The process, for a typed call on elements of `T`: its bounds
    /// errors count elements (`Process::unit`) until the guard drops.
    pub(crate) fn process_of<T>(&self) -> InUnits<'_> {
        let mut p = self.process.borrow_mut();
        p.unit = std::mem::size_of::<T>().max(1);
        InUnits(p)
    }

    /// The superstep this process is in (`bsp_sync` calls made so far).
    pub(crate) fn superstep_now(&self) -> u64 {
        self.process.borrow().superstep
    }
}

/// A `usize` pid for the core's signed check (huge values stay out of range).
#[inline]
pub(crate) fn pid_arg(pid: usize) -> i64 {
    i64::try_from(pid).unwrap_or(i64::MAX)
}

// The methods, in the order rustdoc shows them: the superstep and
// registration, DRMA, BSMP.
mod basics;

mod drma;

mod bsmp;

pub(crate) mod area;

pub use bsmp::Message;

/// The process during a typed call ([`Bsp::process_of`]); it gives the
/// unit back to bytes when dropped.
pub(crate) struct InUnits<'a>(std::cell::RefMut<'a, Process>);

impl std::ops::Deref for InUnits<'_> {
    type Target = Process;
    fn deref(&self) -> &Process {
        &self.0
    }
}

impl std::ops::DerefMut for InUnits<'_> {
    fn deref_mut(&mut self) -> &mut Process {
        &mut self.0
    }
}

impl Drop for InUnits<'_> {
    fn drop(&mut self) {
        self.0.unit = 1;
    }
}
pub use drma::Owned;
