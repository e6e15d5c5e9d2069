//! The BSPlib basics on the handle: who this process is, the superstep
//! (`sync`, `abort`, the clock) and registration.

use std::fmt::Display;

use bytemuck::Pod;

use super::{AbortUnwind, Bsp};
use crate::bsp::area::Area;
use crate::error::{Error, ErrorKind, SourceLocation};

impl Bsp {
    /// `bsp_pid`: this process's id, in `0..nprocs()`.
    ///
    /// # BSP cost
    ///
    /// Local; no communication.
    #[inline]
    pub fn pid(&self) -> usize {
        self.process.borrow().pid
    }

    /// `bsp_nprocs`: the number of processes of this run.
    ///
    /// # BSP cost
    ///
    /// Local; no communication.
    #[inline]
    pub fn nprocs(&self) -> usize {
        self.process.borrow().nprocs
    }

    #[cfg(feature = "raw")]
    #[cfg_attr(docsrs, doc(cfg(feature = "raw")))]
    /// Sets how this process's errors name BSPlib's calls, for front doors
    /// in other languages: `names` maps the core's name of a call (C's:
    /// `bsp_put`, `bsp_push_reg`) to the one the caller knows (Fortran's
    /// `bspput`, `bsppushreg`); `None` keeps the core's names. It applies
    /// to the errors this process finds from now on, also those that a
    /// sync finds about earlier calls. Returns the previous setting.
    ///
    /// # Examples
    ///
    /// ```
    /// let err = bsplib::run(2, |bsp| {
    ///     bsp.set_call_names(Some(|call| if call == "bsp_get" { "bspget" } else { call }));
    ///     let x = bsplib::Area::from_vec(bsp, vec![0u32; 1]);
    ///     bsp.push_reg(&x)?;
    ///     bsp.sync()?;
    ///     bsp.get(0, &x, 1, x.range(..1))?; // past the end of x on process 0
    ///     bsp.sync()
    /// })
    /// .unwrap_err();
    /// assert_eq!(err.call(), "bspget");
    /// ```
    pub fn set_call_names(
        &mut self,
        names: Option<fn(&'static str) -> &'static str>,
    ) -> Option<fn(&'static str) -> &'static str> {
        std::mem::replace(&mut self.process().call_names, names)
    }

    /// The current superstep number (0 before the first [`sync`](Bsp::sync)).
    #[inline]
    pub fn superstep(&self) -> u64 {
        self.superstep_now()
    }

    /// `bsp_time`: seconds since the start of the run, on this process's
    /// clock. Clocks of different processes are not synchronised.
    ///
    /// # BSP cost
    ///
    /// Local; no communication.
    #[inline]
    pub fn time(&self) -> f64 {
        self.process.borrow().time()
    }

    /// `bsp_sync`: ends the superstep. Registrations, pops and tag sizes of
    /// this superstep take effect; gets read their sources (the values at
    /// the end of this superstep), then get data and then put data is
    /// written; the messages sent in this superstep become the queue of the
    /// next, and the previous queue is discarded.
    ///
    /// # Errors
    ///
    /// Registration or tag-size calls that differ between processes
    /// ([`ErrorKind::RegistrationMismatch`], [`ErrorKind::TagSizeMismatch`],
    /// [`ErrorKind::NotRegistered`] for popping an unregistered address); a
    /// process that returned from the SPMD function while this one waits
    /// ([`ErrorKind::ProcessEnded`]); and [`ErrorKind::Stopped`] when the
    /// run was stopped by an error elsewhere.
    ///
    /// # BSP cost
    ///
    /// One superstep: `l` plus `g` times the h-relation of the superstep
    /// (the most bytes any process sends or receives).
    ///
    /// # Examples
    ///
    /// ```
    /// let steps = bsplib::run(2, |bsp| {
    ///     bsp.sync()?;
    ///     bsp.sync()?;
    ///     Ok(bsp.superstep())
    /// })?;
    /// assert_eq!(steps, vec![2, 2]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn sync(&mut self) -> Result<(), Error> {
        self.sync_at(Some(SourceLocation::caller()))
    }

    /// [`sync`](Bsp::sync), reporting `loc` as the caller's location.
    pub(crate) fn sync_at(&mut self, loc: Option<SourceLocation>) -> Result<(), Error> {
        let p = self.process.get_mut();
        p.sync(loc)?;
        crate::process::note_superstep(p.superstep);
        Ok(())
    }

    /// `bsp_abort`: stops every process of the run, without a barrier. The
    /// run returns [`ErrorKind::Aborted`] with `message`; other processes
    /// get [`ErrorKind::Stopped`] from their next `sync`.
    ///
    /// This process unwinds out of the SPMD function at once (a silent
    /// unwind, not a panic message); with `panic = "abort"` the whole OS
    /// process aborts instead.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(2, |bsp| -> Result<(), bsplib::Error> {
    ///     if bsp.pid() == 1 {
    ///         bsp.abort("cannot go on");
    ///     }
    ///     bsp.sync()?;
    ///     Ok(())
    /// });
    /// let e = r.unwrap_err();
    /// assert_eq!(e.pid(), 1);
    /// assert!(e.to_string().contains("cannot go on"));
    /// ```
    #[track_caller]
    pub fn abort(&self, message: impl Display) -> ! {
        let loc = SourceLocation::caller();
        // Format first: the user's `Display` may call methods of `self`.
        let message = message.to_string();
        let _ = self.process().abort(message, Some(loc));
        std::panic::resume_unwind(Box::new(AbortUnwind))
    }

    // ----- registration -------------------------------------------------

    /// `bsp_push_reg`: registers all of `area` for remote access, in the
    /// next slot; takes effect at the next sync. Collective: every process
    /// makes the same sequence of push and pop calls (see
    /// [`push_reg_null`](Bsp::push_reg_null) for processes with nothing to
    /// register).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ForeignArea`] at once if `area` was created by another
    /// process or in another run. Mismatches between processes are
    /// reported by the next [`sync`](Bsp::sync).
    ///
    /// # BSP cost
    ///
    /// A registration sync costs an extra `O(p)` words per slot.
    #[track_caller]
    pub fn push_reg<T: Pod>(&self, area: &Area<T>) -> Result<(), Error> {
        self.push_reg_prefix(area, area.len())
    }

    /// `bsp_push_reg` with an extent of the first `len` elements of `area`
    /// (an area may be registered again with another extent: the newer
    /// slot shadows the older one).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ForeignArea`] if `area` was created by another process
    /// or in another run; [`ErrorKind::LocalBounds`] if `len > area.len()`.
    #[track_caller]
    pub fn push_reg_prefix<T: Pod>(&self, area: &Area<T>, len: usize) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        let mut p = self.process();
        self.own(&p, area, "bsp_push_reg", loc)?;
        if len > area.len() {
            let size = std::mem::size_of::<T>();
            return Err(p.fail(
                ErrorKind::LocalBounds {
                    what: "area",
                    needed: len.saturating_mul(size),
                    available: area.size_bytes(),
                    elem: size,
                },
                "bsp_push_reg",
                loc,
            ));
        }
        let bytes = (len * std::mem::size_of::<T>()) as i64;
        p.push_reg(area.addr(), bytes, Some(area.keepalive()), loc)
    }

    /// `bsp_push_reg(NULL, 0)`: takes part in a collective registration
    /// without registering anything; puts and gets into this process
    /// through the slot are errors.
    #[track_caller]
    pub fn push_reg_null(&self) -> Result<(), Error> {
        self.process()
            .push_reg(0, 0, None, Some(SourceLocation::caller()))
    }

    /// `bsp_pop_reg`: removes the most recent slot in which this process
    /// registered `area`, at the next sync. Any live slot may be popped,
    /// but every process must name the same slot. A process that registered
    /// `NULL` in the slot takes part with [`pop_reg_null`](Bsp::pop_reg_null).
    ///
    /// Keep the `Area` while it is registered if you mean to pop it: a
    /// dropped area can no longer be named, so its slot (and memory) then
    /// stays until the end of the run.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ForeignArea`] at once if `area` was created by another
    /// process or in another run. Reported by the next
    /// [`sync`](Bsp::sync): an area with no live slot
    /// ([`ErrorKind::NotRegistered`]) or processes naming different slots
    /// ([`ErrorKind::RegistrationMismatch`]).
    #[track_caller]
    pub fn pop_reg<T: Pod>(&self, area: &Area<T>) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        let mut p = self.process();
        self.own(&p, area, "bsp_pop_reg", loc)?;
        p.pop_reg(area.addr(), loc)
    }

    /// `bsp_pop_reg(NULL)`: takes part in the pop of a slot in which this
    /// process registered `NULL` (see [`push_reg_null`](Bsp::push_reg_null)).
    /// The slot is the one the other processes name; if every process pops
    /// `NULL`, it is the most recent slot that is `NULL` everywhere.
    #[track_caller]
    pub fn pop_reg_null(&self) -> Result<(), Error> {
        self.process().pop_reg(0, Some(SourceLocation::caller()))
    }
}
