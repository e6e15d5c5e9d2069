//! The [`Window`] type and its memory: each process's region of window
//! memory ([`Regions`]), and the collective creation and release of a
//! window (MPI's `MPI_Win_allocate` and `MPI_Win_free`).

use std::marker::PhantomData;
use std::sync::Arc;

use bytemuck::Pod;

use super::{header, reserve, Mem, HEADER, KIND_FREE, KIND_FREE_C, KIND_NEW, KIND_NEW_C};
use crate::bsp::Bsp;
use crate::engine::World;
use crate::error::{Error, ErrorKind, SourceLocation};

/// A process's own region of window memory: what is free in it.
#[derive(Default)]
pub(crate) struct Regions(crate::engine::window::FreeList);

/// A process's window regions are an extension slot of the process
/// (`extension.rs`), made by its first window; no hook point.
impl crate::process::extension::Slotted for Regions {
    const KEY: usize = 7;
}

impl crate::process::extension::Extension for Regions {
    fn wants(&self) -> u32 {
        0
    }
}

impl Regions {
    /// `n` bytes (a multiple of [`HEADER`]) from a region of `per` bytes:
    /// the offset, and whether the bytes were used before (not zero).
    fn alloc(&mut self, per: usize, n: usize) -> Option<(usize, bool)> {
        self.0.alloc(per, n)
    }

    /// Gives back `n` bytes at `off` (from [`alloc`](Regions::alloc)).
    fn free(&mut self, off: usize, n: usize) {
        self.0.free(off, n)
    }
}

/// Memory of every process that other processes lock and access
/// directly, without their owner taking part: MPI's passive target
/// (`MPI_Win_allocate`, `MPI_Win_lock`, `MPI_Put`, `MPI_Get`,
/// `MPI_Win_unlock`), done soundly for safe Rust.
///
/// Each process has `len` elements of `T` (the lengths may differ). Any
/// process may [`lock`](Window::lock) any process's memory, shared (to
/// read) or exclusive (to read and write), and access it with no call of
/// the owner; the owner reaches its own memory through
/// [`local`](Window::local) and [`local_mut`](Window::local_mut), which
/// take the same lock, so that no remote access can race with a local
/// view (MPI asks the same of local loads and stores to a window).
///
/// Unlike an [`Area`](crate::Area), a window needs no registration and no
/// superstep: a lock epoch is complete at the target when `unlock`
/// returns. On `threads` and `processes` the lock word and the data live
/// in shared memory and a lock epoch is a compare-and-swap, a copy and an
/// atomic subtraction; on `mpi` the same through MPI's one-sided
/// operations on an MPI window. Post/start/
/// complete/wait works on windows too ([`epoch`](Window::epoch)), with
/// only the processes of its groups synchronising. The design is in
/// `ONE_SIDED.md` (section 9) in the source tree.
///
/// A window belongs to the process and run that created it, and is
/// neither `Send` nor `Sync`. Release it with [`free`](Window::free)
/// (collective); a window dropped without it keeps its memory until the
/// run ends, since other processes may still be using it.
///
/// # Examples
///
/// A counter on process 0 that every process increments under an
/// exclusive lock, while process 0 makes no call for it:
///
/// ```
/// use bsplib::{LockKind, Window};
/// let r = bsplib::run(3, |bsp| {
///     let counter = Window::<u64>::new(bsp, 1)?;
///     for _ in 0..10 {
///         let mut l = counter.lock(bsp, 0, LockKind::Exclusive)?;
///         let mut v = [0u64];
///         l.get(0, &mut v)?;
///         l.put(0, &[v[0] + 1])?;
///     } // unlocked here
///     bsp.sync()?;
///     let total = counter.local(bsp)?[0];
///     counter.free(bsp)?;
///     Ok(total)
/// })?;
/// assert_eq!(r[0], 30);
/// # Ok::<(), bsplib::Error>(())
/// ```
pub struct Window<T: Pod> {
    pub(super) owner: (u64, usize),
    /// This window's identity among its process's ([`Held`]).
    pub(super) id: u64,
    pub(super) world: Arc<World>,
    pub(super) mem: Mem,
    /// Elements of each process's memory.
    pub(super) lens: Vec<usize>,
    /// Shared memory: bytes before the data of a block ([`header`]).
    pub(super) header: usize,
    /// How a wait spins before it yields: 64 times with no more
    /// processes than cores, not at all with more (the process waited
    /// for needs this core then: on 2 cores, no spinning took the ring
    /// of window epochs at p = 8 from 2.8x the sync to 1.1x).
    pub(super) spins: u32,
    /// Shared memory: per process `q`, the epochs this process started
    /// on `q`, and the exposure epochs it waited for `q` to complete.
    pub(super) started: std::cell::RefCell<Vec<u64>>,
    pub(super) waited: std::cell::RefCell<Vec<u64>>,
    pub(super) _t: PhantomData<*mut T>,
}

impl<T: Pod> std::fmt::Debug for Window<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Window")
            .field("pid", &self.owner.1)
            .field("lens", &self.lens)
            .finish_non_exhaustive()
    }
}

impl<T: Pod> Window<T> {
    /// Creates a window with `len` zeroed elements on this process.
    /// Collective: every process calls it in the same superstep (with
    /// its own length), which it ends like a collective (the puts, gets
    /// and messages issued before it are executed by it).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::CollectiveMismatch`] when some processes call it and
    /// others sync or call another collective; [`ErrorKind::OutOfMemory`]
    /// when a process's region of window memory (`BSPLIB_WINDOW_MEMORY`
    /// bytes per process, 1 GiB up to 16 processes) has no room;
    /// [`ErrorKind::Overflow`] for a length whose bytes overflow; as for
    /// [`Bsp::sync`]. Any error stops the run.
    ///
    /// # Panics
    ///
    /// If `T` is aligned to more than 64 bytes.
    ///
    /// # BSP cost
    ///
    /// One superstep: `l` and 16 bytes to every other process
    /// (`MPI_Win_allocate` and a barrier too on `mpi`).
    ///
    /// # Examples
    ///
    /// ```
    /// let lens = bsplib::run(2, |bsp| {
    ///     let w = bsplib::Window::<f64>::new(bsp, 4 + bsp.pid())?;
    ///     let n = (0..bsp.nprocs()).map(|q| w.len_of(q)).collect::<Vec<_>>();
    ///     w.free(bsp)?;
    ///     Ok(n)
    /// })?;
    /// assert_eq!(lens[0], [4, 5]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn new(bsp: &mut Bsp, len: usize) -> Result<Self, Error> {
        Self::new_at(bsp, len, "Window::new", Some(SourceLocation::caller()))
    }

    /// [`new`](Window::new) as the call `call` made at `loc` (the C
    /// interface's `bsp_window_create`).
    #[doc(hidden)]
    pub fn new_at(
        bsp: &mut Bsp,
        len: usize,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<Self, Error> {
        assert!(
            std::mem::align_of::<T>() <= HEADER,
            "Window: element types aligned to more than {HEADER} bytes are not supported"
        );
        let kind = if call == "Window::new" {
            KIND_NEW
        } else {
            KIND_NEW_C
        };
        let (world, bytes) = {
            let p = bsp.process();
            p.check_running(call, loc)?;
            p.held_refuses(p.holds.check_none(), call, loc)?;
            let bytes = len
                .checked_mul(std::mem::size_of::<T>())
                .filter(|&b| b <= isize::MAX as usize - 2 * HEADER)
                .ok_or_else(|| p.fail(ErrorKind::Overflow { what: "length" }, call, loc))?;
            (p.world.clone(), bytes)
        };
        #[cfg(feature = "mpi")]
        if let Some(mpi) = world.rendezvous() {
            let all = bsp.gather_to_as(None, &[bytes as u64], kind, 0, loc)?;
            let all = all.unwrap_or_default();
            // The same limit as on shared memory, checked by everyone on
            // everyone's length: no process calls MPI_Win_allocate unless
            // all do (a failing MPI_Win_allocate would end the job).
            let limit = crate::engine::window::per_process(all.len()) - header(all.len());
            if let Some(&big) = all.iter().find(|&&b| b as usize > limit) {
                let p = bsp.process();
                return Err(p.fail(
                    ErrorKind::OutOfMemory {
                        bytes: big as usize,
                    },
                    call,
                    loc,
                ));
            }
            let lens = lens_of::<T>(all.iter().copied());
            // The run's status board first (its first window makes it):
            // windows' waits read it.
            let now = (bsp.superstep_now() << 2) as u32;
            mpi.ensure_board(now).map_err(|detail| {
                bsp.process()
                    .fail(ErrorKind::Transport { detail }, call, loc)
            })?;
            // Every rank on one node: the shared-memory protocol, in an
            // MPI-3 shared window.
            let head = header(all.len());
            let node = mpi
                .node_allocate((head + bytes).next_multiple_of(HEADER))
                .map_err(|detail| {
                    bsp.process()
                        .fail(ErrorKind::Transport { detail }, call, loc)
                })?;
            if let Some(node) = node {
                let nprocs = all.len();
                return Ok(Window {
                    owner: bsp.owner(),
                    id: bsp.process().holds.new_window(),
                    world,
                    mem: Mem::Shared {
                        heads: node.heads().to_vec(),
                        offset: 0,
                        bytes: 0,
                        node: Some(node),
                    },
                    lens,
                    header: head,
                    spins: if nprocs <= crate::engine::cores() {
                        64
                    } else {
                        0
                    },
                    started: std::cell::RefCell::new(vec![0; nprocs]),
                    waited: std::cell::RefCell::new(vec![0; nprocs]),
                    _t: PhantomData,
                });
            }
            let win = mpi.win_allocate(bytes, all.len()).map_err(|detail| {
                bsp.process()
                    .fail(ErrorKind::Transport { detail }, call, loc)
            })?;
            return Ok(Window {
                owner: bsp.owner(),
                id: bsp.process().holds.new_window(),
                world,
                mem: Mem::Mpi(win),
                lens,
                header: 0,
                spins: 0,
                started: std::cell::RefCell::new(vec![0; all.len()]),
                waited: std::cell::RefCell::new(vec![0; all.len()]),
                _t: PhantomData,
            });
        }
        let (me, nprocs) = (bsp.pid(), bsp.nprocs());
        let arena = world.window_arena();
        let head = header(nprocs);
        let n = (head + bytes).next_multiple_of(HEADER);
        let mine = match &arena {
            Ok(a) => bsp.process().with_ext(Regions::default, |r, _| {
                r.alloc(a.per() - reserve(nprocs, a.per()), n)
            }),
            Err(_) => None,
        };
        if let (Ok(a), Some((off, used))) = (&arena, mine) {
            // Memory never used is zero already.
            if used {
                // SAFETY: our own fresh allocation in our own region, which
                // no other process knows of yet (the gather below tells
                // them).
                unsafe { std::ptr::write_bytes(a.region(me).add(off), 0, n) };
            }
        }
        let sent = [mine.map_or(u64::MAX, |(off, _)| off as u64), bytes as u64];
        let all = match bsp.gather_to_as(None, &sent, kind, 0, loc) {
            Ok(all) => all.unwrap_or_default(),
            Err(e) => {
                if let Some((off, _)) = mine {
                    bsp.process()
                        .with_ext(Regions::default, |r, _| r.free(off, n));
                }
                return Err(e);
            }
        };
        let failed = (0..nprocs).find(|&q| all[2 * q] == u64::MAX);
        let arena = match (arena, failed) {
            (Ok(a), None) => a,
            (arena, q) => {
                let q = q.unwrap_or(me);
                let mut p = bsp.process();
                if let Some((off, _)) = mine {
                    p.with_ext(Regions::default, |r, _| r.free(off, n));
                }
                if let Err(why) = arena {
                    return Err(p.fail(ErrorKind::Startup { detail: why }, call, loc));
                }
                return Err(p.fail(
                    ErrorKind::OutOfMemory {
                        bytes: all[2 * q + 1] as usize + head,
                    },
                    call,
                    loc,
                ));
            }
        };
        let heads = (0..nprocs)
            .map(|q| arena.region(q).expose_provenance() + all[2 * q] as usize)
            .collect();
        let lens = lens_of::<T>((0..nprocs).map(|q| all[2 * q + 1]));
        let offset = mine.map_or(0, |(off, _)| off);
        Ok(Window {
            owner: bsp.owner(),
            id: bsp.process().holds.new_window(),
            world,
            mem: Mem::Shared {
                heads,
                offset,
                bytes: n,
                #[cfg(feature = "mpi")]
                node: None,
            },
            lens,
            header: head,
            spins: if nprocs <= crate::engine::cores() {
                64
            } else {
                0
            },
            started: std::cell::RefCell::new(vec![0; nprocs]),
            waited: std::cell::RefCell::new(vec![0; nprocs]),
            _t: PhantomData,
        })
    }

    /// Elements of this process's memory.
    pub fn len(&self) -> usize {
        self.lens[self.owner.1]
    }

    /// True when this process's memory has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elements of process `pid`'s memory.
    ///
    /// # Panics
    ///
    /// If `pid` is not a process of the run.
    pub fn len_of(&self, pid: usize) -> usize {
        self.lens[pid]
    }

    /// Releases the window on every process. Collective, like
    /// [`new`](Window::new): every process frees it in the same
    /// superstep, which it ends; no lock of it can be held then (a lock
    /// guard holds the handle).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ForeignArea`] with the handle of another process or
    /// run; as for [`new`](Window::new).
    ///
    /// # BSP cost
    ///
    /// One superstep: `l`.
    ///
    /// # Examples
    ///
    /// See [`Window`].
    #[track_caller]
    pub fn free(self, bsp: &mut Bsp) -> Result<(), Error> {
        self.free_at(bsp, "Window::free", Some(SourceLocation::caller()))
    }

    /// [`free`](Window::free) made at `loc` (the C interface's
    /// `bsp_window_free`).
    #[doc(hidden)]
    pub fn free_at(
        self,
        bsp: &mut Bsp,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let kind = if call == "Window::free" {
            KIND_FREE
        } else {
            KIND_FREE_C
        };
        self.own(bsp, call, loc)?;
        {
            let p = bsp.process();
            p.held_refuses(p.holds.check_none(), call, loc)?;
        }
        bsp.gather_to_as(None, &[0u64], kind, 0, loc)?;
        match self.mem {
            #[cfg(feature = "mpi")]
            Mem::Shared { node: Some(w), .. } => {
                if let Err(detail) = w.free() {
                    return Err(bsp
                        .process()
                        .fail(ErrorKind::Transport { detail }, call, loc));
                }
            }
            Mem::Shared { offset, bytes, .. } => {
                let me = self.owner.1;
                if let Ok(a) = self.world.window_arena() {
                    a.release(me, offset, bytes);
                }
                bsp.process()
                    .with_ext(Regions::default, |r, _| r.free(offset, bytes));
            }
            #[cfg(feature = "mpi")]
            Mem::Mpi(win) => {
                if let Err(detail) = win.free() {
                    return Err(bsp
                        .process()
                        .fail(ErrorKind::Transport { detail }, call, loc));
                }
            }
        }
        Ok(())
    }
}

/// Element counts from byte counts.
fn lens_of<T>(bytes: impl Iterator<Item = u64>) -> Vec<usize> {
    let size = std::mem::size_of::<T>().max(1);
    bytes.map(|b| b as usize / size).collect()
}
