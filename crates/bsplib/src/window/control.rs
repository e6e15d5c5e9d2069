//! Control lines: the lock word and post counters of a registered area in
//! one-sided use (`../epoch.rs`), which are a window's with no data
//! (`ONE_SIDED.md`, section 10.4). So an area's lock is taken and released,
//! and its exposure epochs posted and started, by the same code and words
//! as a window's; only the bytes travel differently (records its owner
//! applies, since an area is the program's own memory).
//!
//! Each registration slot has a line, the same on every process
//! (`Registry::line`: the lowest free line when the slot was pushed, and
//! every process applies the same pushes and pops). Line `i` of process
//! `q` lies at a fixed place, so no exchange makes it:
//!
//! - shared memory (`threads`, `serial`, `processes`): the top of `q`'s
//!   region of window memory, line `i` at `per - (i + 1) · header(p)`;
//!   [`reserve`] bytes there are not given to windows;
//! - `mpi`: line `i` of the run's control window, made by `rma_init`
//!   (`engine/mpi/win.rs`), in node shared memory when every rank is on
//!   one node.
//!
//! Every pushed slot takes a line (the line must be known everywhere
//! before anyone uses the slot one-sidedly), so the limit is on live
//! registrations: [`lines`] per process on shared memory (a sixteenth of
//! the window region, at most 1024: 1024 up to p = 63 with the default
//! region, 63 at p = 1024), up to 1024 on `mpi` (at most 4 MiB per rank).
//! Locking or posting a slot past the last line is `OutOfMemory`.
//!
//! A line's counters are never reset: a line given back by a pop and
//! taken by a later push starts where the earlier slot left it, which is
//! balanced (no epoch or lock crosses a sync, and a pop takes effect at
//! a sync), and this process's tallies of the starts it made on each line
//! go on from there with it (`epoch.rs` keeps one handle per line).

use super::{header, Mem, Window};
use crate::error::ErrorKind;
use crate::process::Process;

/// Lines at most per process.
const MAX_LINES: usize = 1024;

/// Control lines per process on shared memory: a sixteenth of the region
/// (at least 1 MiB), at most [`MAX_LINES`].
fn lines(nprocs: usize, per: usize) -> usize {
    (per / 16 / header(nprocs)).min(MAX_LINES)
}

/// Bytes at the top of each process's region of window memory that hold
/// control lines, not windows (shared memory engines).
pub(crate) fn reserve(nprocs: usize, per: usize) -> usize {
    lines(nprocs, per) * header(nprocs)
}

impl Window<u8> {
    /// Control line `line` of every process, as a window with no data:
    /// its lock ([`try_take`](Window::try_take),
    /// [`give_back`](Window::give_back)) and its post counters ([`post_to`](Window::post_to),
    /// [`posted`](Window::posted), [`start_on`](Window::start_on)).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::OutOfMemory`] past the last line (more live
    /// registrations than lines: see the module); [`ErrorKind::Startup`] when the
    /// run has no window memory (or, on `mpi`, no control window: not in
    /// one-sided mode).
    pub(crate) fn control_line(p: &Process, line: u64) -> Result<Window<u8>, ErrorKind> {
        let nprocs = p.nprocs;
        let world = p.world.clone();
        let bytes = (line as usize)
            .saturating_add(1)
            .saturating_mul(header(nprocs));
        #[cfg(feature = "mpi")]
        if let Some(mpi) = world.rendezvous() {
            let ctl = mpi.control().ok_or_else(|| ErrorKind::Startup {
                detail: "on mpi, epochs and locks of registered areas need one-sided mode \
                         from bsp.rma().init() or bsp_rma_init (bsp.am().init() or LAPI_Init \
                         alone does not make their control window)"
                    .into(),
            })?;
            if ctl.in_node() {
                let heads = ctl
                    .node_line(line as usize)
                    .ok_or(ErrorKind::OutOfMemory { bytes })?;
                let mem = Mem::Shared {
                    heads,
                    offset: 0,
                    bytes: 0,
                    node: None,
                };
                return Ok(Self::over(p, world, mem, header(nprocs)));
            }
            let win = ctl
                .line(line as usize)
                .ok_or(ErrorKind::OutOfMemory { bytes })?;
            return Ok(Self::over(p, world, Mem::Mpi(win), 0));
        }
        let arena = world
            .window_arena()
            .map_err(|detail| ErrorKind::Startup { detail })?;
        let per = arena.per();
        if line as usize >= lines(nprocs, per) {
            return Err(ErrorKind::OutOfMemory { bytes });
        }
        let at = per - bytes;
        let heads = (0..nprocs)
            .map(|q| arena.region(q).expose_provenance() + at)
            .collect();
        let mem = Mem::Shared {
            heads,
            offset: at,
            bytes: header(nprocs),
            #[cfg(feature = "mpi")]
            node: None,
        };
        let head = header(nprocs);
        Ok(Self::over(p, world.clone(), mem, head))
    }

    fn over(
        p: &Process,
        world: std::sync::Arc<crate::engine::World>,
        mem: Mem,
        head: usize,
    ) -> Window<u8> {
        let nprocs = p.nprocs;
        Window {
            owner: (u64::MAX, p.pid),
            id: u64::MAX,
            world,
            mem,
            lens: vec![0; nprocs],
            header: head,
            spins: 0,
            started: std::cell::RefCell::new(vec![0; nprocs]),
            waited: std::cell::RefCell::new(vec![0; nprocs]),
            _t: std::marker::PhantomData,
        }
    }

    /// Posts to `origin`: one count in its line.
    pub(crate) fn post_to(&self, origin: usize) -> Result<(), String> {
        self.count_raw(origin, 0)
    }

    /// Whether `target` posted to this process an exposure epoch that no
    /// start of ours used yet.
    pub(crate) fn posted(&self, target: usize) -> Result<bool, String> {
        let used = self.started.borrow()[target];
        Ok(self.read_count_raw(0, target)? > used)
    }

    /// Uses a post of `target` (one [`posted`](Window::posted) saw).
    pub(crate) fn start_on(&self, target: usize) {
        self.started.borrow_mut()[target] += 1;
    }
}
