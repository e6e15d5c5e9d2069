//! [`Window`]: memory other processes lock and access directly, with no
//! help from its owner (MPI's passive target, done with a lock word and
//! post/completion counters in shared memory on `threads` and
//! `processes`, and in an MPI window through MPI's atomics on `mpi`).
//! Every lock, view and epoch is counted in the process (`holds.rs`), so
//! soundness does not rest on the guards' borrows. The design, and why it
//! is sound, is in sections 9 and 10 of `../ONE_SIDED.md`. The control
//! lines of registered areas in one-sided use are windows with no data
//! (`control.rs`).

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use bytemuck::Pod;

use crate::bsp::Bsp;
use crate::engine::{Interrupt, World};
use crate::epoch::LockKind;
use crate::error::{Error, ErrorKind, SourceLocation};
use crate::holds::Held;
use crate::process::{Loc, Process};
use crate::rma::{Element, Op};

mod control;
pub(crate) use control::reserve;

/// The lock word's cache line at the head of a window's block; also the
/// largest element alignment a window takes. The epochs' counters follow
/// ([`header`]), then the data.
const HEADER: usize = 64;

/// Bytes before a window's data in its block, for `nprocs` processes: the
/// lock word's line, then `posts[q]` (posts of process `q` to this one)
/// and `dones[q]` (completions of process `q` here), rounded to a line.
pub(crate) fn header(nprocs: usize) -> usize {
    HEADER + (16 * nprocs).next_multiple_of(HEADER)
}

/// The lock word's writer bit; the bits below count the readers.
const WRITER: u64 = 1 << 63;

/// The collectives' names of window creation and release
/// (`collectives::NAMES`).
pub(crate) const KIND_NEW: usize = 41;
pub(crate) const KIND_FREE: usize = 42;
/// The same, called from C.
pub(crate) const KIND_NEW_C: usize = 43;
pub(crate) const KIND_FREE_C: usize = 44;

/// A process's own region of window memory: what is free in it.
#[derive(Default)]
pub(crate) struct Regions {
    /// Free ranges below `top`, `offset -> len`, coalesced.
    free: BTreeMap<usize, usize>,
    /// Everything from here to the end of the region was never used (and
    /// reads as zeros).
    top: usize,
}

impl Regions {
    /// `n` bytes (a multiple of [`HEADER`]) from a region of `per` bytes:
    /// the offset, and whether the bytes were used before (not zero).
    fn alloc(&mut self, per: usize, n: usize) -> Option<(usize, bool)> {
        if let Some((&off, &len)) = self.free.iter().find(|&(_, &len)| len >= n) {
            self.free.remove(&off);
            if len > n {
                self.free.insert(off + n, len - n);
            }
            return Some((off, true));
        }
        let off = self.top;
        (off.checked_add(n)? <= per).then(|| {
            self.top = off + n;
            (off, false)
        })
    }

    /// Gives back `n` bytes at `off` (from [`alloc`](Regions::alloc)).
    fn free(&mut self, mut off: usize, mut n: usize) {
        if let Some((&before, &len)) = self.free.range(..off).next_back() {
            if before + len == off {
                self.free.remove(&before);
                off = before;
                n += len;
            }
        }
        if let Some(len) = self.free.remove(&(off + n)) {
            n += len;
        }
        self.free.insert(off, n);
    }
}

/// Where a window's memory is.
enum Mem {
    /// `threads`, `serial`, `processes`: the address of each process's
    /// block (its lock word, counters and data: [`header`]), and our own
    /// allocation.
    Shared {
        heads: Vec<usize>,
        offset: usize,
        bytes: usize,
        /// `mpi` with every rank on one node: the MPI-3 shared window
        /// that holds the blocks (else the run's window memory does).
        #[cfg(feature = "mpi")]
        node: Option<crate::engine::mpi::win::NodeWin>,
    },
    #[cfg(feature = "mpi")]
    Mpi(crate::engine::mpi::win::MpiWin),
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
    owner: (u64, usize),
    /// This window's identity among its process's ([`Held`]).
    id: u64,
    world: Arc<World>,
    mem: Mem,
    /// Elements of each process's memory.
    lens: Vec<usize>,
    /// Shared memory: bytes before the data of a block ([`header`]).
    header: usize,
    /// How a wait spins before it yields: 64 times with no more
    /// processes than cores, not at all with more (the process waited
    /// for needs this core then: on 2 cores, no spinning took the ring
    /// of window epochs at p = 8 from 2.8x the sync to 1.1x).
    spins: u32,
    /// Shared memory: per process `q`, the epochs this process started
    /// on `q`, and the exposure epochs it waited for `q` to complete.
    started: std::cell::RefCell<Vec<u64>>,
    waited: std::cell::RefCell<Vec<u64>>,
    _t: PhantomData<*mut T>,
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
            Ok(a) => bsp
                .process()
                .windows
                .alloc(a.per() - reserve(nprocs, a.per()), n),
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
                    bsp.process().windows.free(off, n);
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
                    p.windows.free(off, n);
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
                bsp.process().windows.free(offset, bytes);
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

    /// Locks process `pid`'s memory of the window, `Exclusive` (to read
    /// and write) or `Shared` (to read, together with other readers),
    /// waiting until the lock is free; `pid` makes no call for it. The
    /// guard's transfers are complete when they return; dropping the
    /// guard (or [`WinLock::unlock`]) releases the lock. The guard holds
    /// the handle, so no other call (no sync, no second lock) can be made
    /// while it lives: a process waits for at most one lock at a time,
    /// and holds none while it waits (which is why locks cannot
    /// deadlock).
    ///
    /// Exclusive holders take turns; waiting writers do not hold back new
    /// readers (no queue).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::PidOutOfRange`]; [`ErrorKind::ForeignArea`];
    /// [`ErrorKind::Stopped`] if the run stops while this process waits
    /// (and [`ErrorKind::Deadline`] when the run's deadline passes).
    ///
    /// # BSP cost
    ///
    /// No superstep: about two latencies of the target's memory (a
    /// compare-and-swap to lock, a subtraction to unlock) on shared
    /// memory; on `mpi` the same through `MPI_Compare_and_swap` /
    /// `MPI_Fetch_and_op`, each a round trip.
    ///
    /// # Examples
    ///
    /// See [`Window`].
    #[track_caller]
    pub fn lock<'a>(
        &'a self,
        bsp: &'a mut Bsp,
        pid: usize,
        kind: LockKind,
    ) -> Result<WinLock<'a, T>, Error> {
        const CALL: &str = "Window::lock";
        let loc = Some(SourceLocation::caller());
        // SAFETY: released once, by the guard's drop.
        unsafe { self.lock_counted(bsp, pid, kind == LockKind::Exclusive, CALL, loc)? };
        Ok(WinLock {
            win: self,
            bsp,
            pid,
            exclusive: kind == LockKind::Exclusive,
        })
    }

    /// This process's own memory, to read: a shared lock of it, held
    /// until the view drops (remote writers wait meanwhile).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ForeignArea`]; [`ErrorKind::Stopped`] if the run
    /// stops while this process waits for a remote writer.
    ///
    /// # BSP cost
    ///
    /// None: a lock of one's own memory.
    ///
    /// # Examples
    ///
    /// See [`Window`].
    #[track_caller]
    pub fn local<'a>(&'a self, bsp: &'a Bsp) -> Result<Local<'a, T>, Error> {
        const CALL: &str = "Window::local";
        let loc = Some(SourceLocation::caller());
        let me = self.owner.1;
        self.view(bsp, false, CALL, loc)?;
        // SAFETY: our own memory, `len` elements of `T` (aligned: the data
        // starts a multiple of 64 bytes into a 64-byte aligned block on shared
        // memory, and MPI's allocations are aligned for any basic type),
        // read-locked until the view drops: nobody writes it meanwhile.
        let data = unsafe { std::slice::from_raw_parts(self.data(me).cast::<T>(), self.len()) };
        Ok(Local {
            data,
            hold: Hold {
                win: self,
                bsp,
                exclusive: false,
            },
        })
    }

    /// This process's own memory, to read and write: an exclusive lock of
    /// it, held until the view drops (every remote access waits
    /// meanwhile).
    ///
    /// # Errors
    ///
    /// As for [`local`](Window::local).
    ///
    /// # BSP cost
    ///
    /// None: a lock of one's own memory.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(2, |bsp| {
    ///     let mut w = bsplib::Window::<u32>::new(bsp, 2)?;
    ///     w.local_mut(bsp)?.copy_from_slice(&[7, bsp.pid() as u32]);
    ///     bsp.sync()?;
    ///     let other = (bsp.pid() + 1) % 2;
    ///     let mut got = [0u32; 2];
    ///     w.lock(bsp, other, bsplib::LockKind::Shared)?.get(0, &mut got)?;
    ///     bsp.sync()?;
    ///     w.free(bsp)?;
    ///     Ok(got)
    /// })?;
    /// assert_eq!(r, [[7, 1], [7, 0]]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn local_mut<'a>(&'a mut self, bsp: &'a Bsp) -> Result<LocalMut<'a, T>, Error> {
        const CALL: &str = "Window::local_mut";
        let loc = Some(SourceLocation::caller());
        let me = self.owner.1;
        self.view(bsp, true, CALL, loc)?;
        // SAFETY: as in `local`, write-locked until the view drops: nobody
        // else reads or writes it meanwhile.
        let data = unsafe { std::slice::from_raw_parts_mut(self.data(me).cast::<T>(), self.len()) };
        Ok(LocalMut {
            data,
            hold: Hold {
                win: self,
                bsp,
                exclusive: true,
            },
        })
    }

    /// Fails unless `bsp` is the handle of the window's process and run.
    fn own(&self, bsp: &Bsp, call: &'static str, loc: Loc) -> Result<(), Error> {
        if self.owner == bsp.owner() {
            return Ok(());
        }
        let p = bsp.process();
        Err(p.fail(
            ErrorKind::ForeignArea {
                created_run: self.owner.0,
                created_pid: self.owner.1,
                run: bsp.owner().0,
            },
            call,
            loc,
        ))
    }

    /// Opens a view of this process's own memory (`exclusive`: to write)
    /// and counts it; the first of the shared views takes the shared lock
    /// of it, the others share that (on `mpi` a rank cannot lock its own
    /// window twice).
    fn view(&self, bsp: &Bsp, exclusive: bool, call: &'static str, loc: Loc) -> Result<(), Error> {
        self.own(bsp, call, loc)?;
        let mut p = bsp.process();
        p.held_refuses(p.holds.check_view(p.pid, self.id, exclusive), call, loc)?;
        let me = self.owner.1;
        if exclusive {
            self.acquire(&p, me, true, call, loc)?;
            self.sync_local(&p, call, loc)?;
            p.holds.open(
                Held::View {
                    win: self.id,
                    exclusive: true,
                    count: 1,
                },
                call,
                loc,
            );
            return Ok(());
        }
        let n = p.holds.views(self.id).map_or(0, |(_, n)| n);
        if n == 0 {
            self.acquire(&p, me, false, call, loc)?;
            self.sync_local(&p, call, loc)?;
        }
        p.holds.set_shared_views(self.id, n + 1, call, loc);
        Ok(())
    }

    /// Closes a view [`view`](Window::view) opened.
    fn unview(&self, bsp: &Bsp, exclusive: bool) {
        let me = self.owner.1;
        let mut p = bsp.process();
        if exclusive {
            p.holds.close(&Held::View {
                win: self.id,
                exclusive: true,
                count: 1,
            });
            let _ = self.sync_local(&p, "the drop of a window view", None);
            self.release(&p, me, true);
            return;
        }
        let n = p.holds.views(self.id).map_or(0, |(_, n)| n);
        p.holds
            .set_shared_views(self.id, n.saturating_sub(1), "", None);
        if n == 1 {
            self.release(&p, me, false);
        }
    }

    /// Takes `pid`'s lock and counts it (checked first: a second lock,
    /// one with a view held, one to a process of an open access epoch of
    /// this window are refused).
    ///
    /// # Safety
    ///
    /// Released exactly once by [`unlock_counted`](Window::unlock_counted)
    /// with the same `pid` and kind.
    unsafe fn lock_counted(
        &self,
        bsp: &Bsp,
        pid: usize,
        exclusive: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.own(bsp, call, loc)?;
        let mut p = bsp.process();
        p.check_running(call, loc)?;
        p.check_pid(crate::bsp::pid_arg(pid), call, loc)?;
        p.held_refuses(p.holds.check_lock(p.pid, self.id, pid), call, loc)?;
        self.acquire(&p, pid, exclusive, call, loc)?;
        p.holds.open(
            Held::Lock {
                win: self.id,
                pid,
                exclusive,
            },
            call,
            loc,
        );
        Ok(())
    }

    /// Releases and uncounts a lock [`lock_counted`](Window::lock_counted)
    /// took.
    fn unlock_counted(&self, bsp: &Bsp, pid: usize, exclusive: bool) {
        let mut p = bsp.process();
        self.release(&p, pid, exclusive);
        p.holds.close(&Held::Lock {
            win: self.id,
            pid,
            exclusive,
        });
    }

    /// The first byte of `pid`'s data.
    fn data(&self, pid: usize) -> *mut u8 {
        match &self.mem {
            Mem::Shared { heads, .. } => {
                std::ptr::with_exposed_provenance_mut::<u8>(heads[pid]).wrapping_add(self.header)
            }
            #[cfg(feature = "mpi")]
            Mem::Mpi(win) => {
                debug_assert_eq!(pid, self.owner.1);
                win.base()
            }
        }
    }

    /// `pid`'s lock word (shared memory engines).
    fn word(&self, pid: usize) -> &AtomicU64 {
        match &self.mem {
            // SAFETY: every process's block starts with its lock word,
            // 64-byte aligned, in memory the run owns and keeps mapped
            // for as long as this handle (which holds the run) lives;
            // only ever accessed atomically.
            Mem::Shared { heads, .. } => unsafe {
                &*std::ptr::with_exposed_provenance::<AtomicU64>(heads[pid])
            },
            #[cfg(feature = "mpi")]
            Mem::Mpi(_) => unreachable!("mpi windows lock through MPI"),
        }
    }

    /// Checks a transfer of `nbytes` at byte `off` of `pid`'s memory
    /// (`None`: overflowed; `shown` are the figures an error gives);
    /// `shared_write` is a write under a shared lock.
    #[allow(clippy::too_many_arguments)]
    fn check_bytes(
        &self,
        p: &Process,
        pid: usize,
        off: Option<usize>,
        nbytes: Option<usize>,
        shown: (usize, usize),
        shared_write: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<(usize, usize), Error> {
        let extent = self.lens[pid] * std::mem::size_of::<T>();
        let range = off
            .zip(nbytes)
            .filter(|&(o, b)| o.checked_add(b).is_some_and(|end| end <= extent));
        let Some((off, bytes)) = range else {
            return Err(p.fail(
                ErrorKind::OutOfBounds {
                    remote: pid,
                    offset: shown.0,
                    nbytes: shown.1,
                    extent,
                },
                call,
                loc,
            ));
        };
        if shared_write {
            return Err(p.fail(
                ErrorKind::NoEpoch {
                    detail: format!(
                        "a write into the window of process {pid} under a shared lock (shared \
                         locks read only: take an exclusive lock to write)"
                    ),
                },
                call,
                loc,
            ));
        }
        Ok((off, bytes))
    }

    /// [`check_bytes`](Window::check_bytes) for the raw entry points,
    /// whose offsets and lengths are bytes already: the byte offset.
    #[allow(clippy::too_many_arguments)]
    fn check_raw(
        &self,
        p: &Process,
        pid: usize,
        off: usize,
        len: usize,
        shared_write: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<usize, Error> {
        self.check_bytes(
            p,
            pid,
            Some(off),
            Some(len),
            (off, len),
            shared_write,
            call,
            loc,
        )
        .map(|(off, _)| off)
    }

    /// Copies `src` to byte `off` of `pid`'s memory.
    ///
    /// # Safety
    ///
    /// In bounds; this process holds `pid`'s lock exclusively (a passive
    /// epoch on `mpi`).
    unsafe fn copy_in(
        &self,
        p: &Process,
        pid: usize,
        off: usize,
        src: &[u8],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let _ = (p, call, loc);
        match &self.mem {
            // SAFETY: the caller's promises: nobody else touches the bytes.
            Mem::Shared { .. } => unsafe {
                std::ptr::copy_nonoverlapping(src.as_ptr(), self.data(pid).add(off), src.len());
                Ok(())
            },
            // SAFETY: the caller's promises.
            #[cfg(feature = "mpi")]
            Mem::Mpi(win) => unsafe { win.put(src, pid, off) }
                .map_err(|detail| p.fail(ErrorKind::Transport { detail }, call, loc)),
        }
    }

    /// Copies `dst.len()` bytes at byte `off` of `pid`'s memory to `dst`.
    ///
    /// # Safety
    ///
    /// In bounds; this process holds a lock of `pid`'s memory (a passive
    /// epoch on `mpi`).
    unsafe fn copy_out(
        &self,
        p: &Process,
        pid: usize,
        off: usize,
        dst: &mut [u8],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let _ = (p, call, loc);
        match &self.mem {
            // SAFETY: the caller's promises: nobody writes the bytes.
            Mem::Shared { .. } => unsafe {
                std::ptr::copy_nonoverlapping(self.data(pid).add(off), dst.as_mut_ptr(), dst.len());
                Ok(())
            },
            // SAFETY: the caller's promises.
            #[cfg(feature = "mpi")]
            Mem::Mpi(win) => unsafe { win.get(dst, pid, off) }
                .map_err(|detail| p.fail(ErrorKind::Transport { detail }, call, loc)),
        }
    }

    /// On `mpi`, `MPI_Win_sync` for a view of one's own memory (after its
    /// lock is taken, before it is released); nothing on shared memory.
    fn sync_local(&self, p: &Process, call: &'static str, loc: Loc) -> Result<(), Error> {
        let _ = (p, call, loc);
        #[cfg(feature = "mpi")]
        if let Mem::Mpi(win) = &self.mem {
            return win
                .sync_local()
                .map_err(|detail| p.fail(ErrorKind::Transport { detail }, call, loc));
        }
        Ok(())
    }

    /// The first byte of this process's own memory of the window (the C
    /// interface gives it to the program, whose rule is MPI's: lock one's
    /// own window around loads and stores).
    #[doc(hidden)]
    pub fn base_ptr(&self) -> *mut T {
        self.data(self.owner.1).cast()
    }

    /// Takes `pid`'s lock without a guard (the C interface's
    /// `bsp_window_lock`): waits as [`lock`](Window::lock) does.
    ///
    /// # Errors
    ///
    /// As for [`lock`](Window::lock).
    ///
    /// # Safety
    ///
    /// Released exactly once by [`unlock_raw`](Window::unlock_raw) with
    /// the same `pid` and kind; no guard of this window alive in this
    /// process meanwhile (it could wait for this very lock).
    #[doc(hidden)]
    pub unsafe fn lock_raw(
        &self,
        bsp: &Bsp,
        pid: usize,
        exclusive: bool,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        // SAFETY: the caller's promise: released once by `unlock_raw`.
        unsafe { self.lock_counted(bsp, pid, exclusive, call, loc) }
    }

    /// Releases a lock [`lock_raw`](Window::lock_raw) took.
    ///
    /// # Safety
    ///
    /// This process holds that lock (`pid`, kind), taken by `lock_raw`.
    #[doc(hidden)]
    pub unsafe fn unlock_raw(&self, bsp: &Bsp, pid: usize, exclusive: bool) {
        self.unlock_counted(bsp, pid, exclusive);
    }

    /// Writes `src` at byte `off` of `pid`'s memory under a lock taken by
    /// [`lock_raw`](Window::lock_raw) (`exclusive` its kind).
    ///
    /// # Errors
    ///
    /// As for [`WinLock::put`].
    ///
    /// # Safety
    ///
    /// This process holds `pid`'s lock of that kind.
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn put_raw(
        &self,
        bsp: &Bsp,
        pid: usize,
        off: usize,
        src: &[u8],
        exclusive: bool,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let p = bsp.process();
        let off = self.check_raw(&p, pid, off, src.len(), !exclusive, call, loc)?;
        // SAFETY: in bounds, under the exclusive lock (the caller's).
        unsafe { self.copy_in(&p, pid, off, src, call, loc) }
    }

    /// Reads `dst.len()` bytes at byte `off` of `pid`'s memory under a
    /// lock taken by [`lock_raw`](Window::lock_raw).
    ///
    /// # Errors
    ///
    /// As for [`WinLock::get`].
    ///
    /// # Safety
    ///
    /// This process holds a lock of `pid`'s memory.
    #[doc(hidden)]
    pub unsafe fn get_raw(
        &self,
        bsp: &Bsp,
        pid: usize,
        off: usize,
        dst: &mut [u8],
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let p = bsp.process();
        let off = self.check_raw(&p, pid, off, dst.len(), false, call, loc)?;
        // SAFETY: in bounds, under a lock (the caller's).
        unsafe { self.copy_out(&p, pid, off, dst, call, loc) }
    }

    /// Combines `src` (elements of `ty`) with `op` into byte `off` of
    /// `pid`'s memory: read, combine with the library's kernels, write.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AccumulateOperator`] if `op` is not defined on `ty`;
    /// [`ErrorKind::Transport`].
    ///
    /// # Safety
    ///
    /// In bounds; this process holds `pid`'s lock exclusively (so the
    /// read-combine-write is atomic); `src` holds whole elements of `ty`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn combine_in(
        &self,
        p: &Process,
        pid: usize,
        off: usize,
        src: &[u8],
        ty: crate::rma::ElemType,
        op: Op,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        if !op.is_defined_on(ty) {
            return Err(p.fail(
                ErrorKind::AccumulateOperator {
                    op: op.name(),
                    ty: ty.name(),
                },
                call,
                loc,
            ));
        }
        let n = src.len() / ty.size();
        match &self.mem {
            // SAFETY: in bounds; the exclusive lock is held; `src` holds
            // `n` elements of `ty`.
            Mem::Shared { .. } => unsafe {
                crate::rma::combine(ty, op, self.data(pid).add(off), src.as_ptr(), n);
                Ok(())
            },
            #[cfg(feature = "mpi")]
            Mem::Mpi(_) => {
                let mut cur = vec![0u8; src.len()];
                // SAFETY: in bounds; the exclusive lock of `pid` is held,
                // so nothing changes the range between the get and the
                // put; `cur` and `src` hold `n` elements of `ty`.
                unsafe {
                    self.copy_out(p, pid, off, &mut cur, call, loc)?;
                    crate::rma::combine(ty, op, cur.as_mut_ptr(), src.as_ptr(), n);
                    self.copy_in(p, pid, off, &cur, call, loc)
                }
            }
        }
    }

    /// Combines `src`, whole elements of `ty`, with `op` into byte `off` of
    /// `pid`'s memory under an exclusive lock taken by
    /// [`lock_raw`](Window::lock_raw) (the C interface's
    /// `bsp_window_accumulate`); complete when this returns.
    ///
    /// # Errors
    ///
    /// As for [`WinLock::accumulate`]; [`ErrorKind::NoEpoch`] under a
    /// shared lock.
    ///
    /// # Safety
    ///
    /// This process holds `pid`'s lock (`exclusive` tells its kind);
    /// `src.len()` is a multiple of `ty.size()`.
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn accumulate_raw(
        &self,
        bsp: &Bsp,
        pid: usize,
        off: usize,
        src: &[u8],
        ty: crate::rma::ElemType,
        op: Op,
        exclusive: bool,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let p = bsp.process();
        let off = self.check_raw(&p, pid, off, src.len(), !exclusive, call, loc)?;
        // SAFETY: in bounds, under the exclusive lock (the caller's, and
        // `check_raw` refused a shared one); whole elements.
        unsafe { self.combine_in(&p, pid, off, src, ty, op, call, loc) }
    }

    /// Counter `which` (0: posts, 1: dones) of process `from` in `pid`'s
    /// block (shared memory engines).
    fn counter(&self, pid: usize, which: usize, from: usize) -> &AtomicU64 {
        let n = self.lens.len();
        match &self.mem {
            // SAFETY: the counters lie between the lock word's line and
            // the data ([`header`]), 8-byte aligned, in memory the run
            // keeps mapped while this handle lives; only ever accessed
            // atomically.
            Mem::Shared { heads, .. } => unsafe {
                &*std::ptr::with_exposed_provenance::<AtomicU64>(
                    heads[pid] + HEADER + 8 * (which * n + from),
                )
            },
            #[cfg(feature = "mpi")]
            Mem::Mpi(_) => unreachable!("mpi windows count epochs in MPI"),
        }
    }

    /// Adds one to counter `which` of this process in `pid`'s block and
    /// wakes `pid` if it sleeps on its bell.
    fn count(
        &self,
        p: &Process,
        pid: usize,
        which: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.count_raw(pid, which)
            .map_err(|detail| p.fail(ErrorKind::Transport { detail }, call, loc))?;
        // In active-message mode `pid` may wait on its inbox's bell
        // (`await_counts`): ring that too (shared memory).
        if p.am.is_some() && pid != p.pid && self.world.rendezvous().is_none() {
            self.world.notify(pid, crate::engine::AM_BELL);
        }
        Ok(())
    }

    /// [`count`](Window::count), MPI's failure as its words.
    fn count_raw(&self, pid: usize, which: usize) -> Result<(), String> {
        let from = self.owner.1;
        match &self.mem {
            Mem::Shared { .. } => {
                self.counter(pid, which, from)
                    .fetch_add(1, Ordering::Release);
                let (bell, sleepers) = self.bell(pid);
                bell.fetch_add(1, Ordering::SeqCst);
                if sleepers.load(Ordering::SeqCst) > 0 {
                    futex_wake(bell);
                }
                Ok(())
            }
            #[cfg(feature = "mpi")]
            Mem::Mpi(win) => win.count(pid, which, from, self.lens.len()),
        }
    }

    /// Counter `which` of process `from` in this process's own block.
    fn read_count(
        &self,
        p: &Process,
        which: usize,
        from: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<u64, Error> {
        self.read_count_raw(which, from)
            .map_err(|detail| p.fail(ErrorKind::Transport { detail }, call, loc))
    }

    /// [`read_count`](Window::read_count), MPI's failure as its words.
    fn read_count_raw(&self, which: usize, from: usize) -> Result<u64, String> {
        match &self.mem {
            Mem::Shared { .. } => Ok(self
                .counter(self.owner.1, which, from)
                .load(Ordering::Acquire)),
            // 32 bits on `mpi`: widened by the epochs counted locally
            // (`started`, `waited` never run more than one epoch ahead of a
            // counter, so the high bits are theirs).
            #[cfg(feature = "mpi")]
            Mem::Mpi(win) => {
                let low = win.counter(self.owner.1, which, from, self.lens.len())?;
                let seen = if which == 0 {
                    self.started.borrow()[from]
                } else {
                    self.waited.borrow()[from]
                };
                Ok(seen + u64::from(low.wrapping_sub(seen as u32)))
            }
        }
    }

    /// `pid`'s bell and its count of sleepers, beside its lock word
    /// (shared memory engines).
    fn bell(&self, pid: usize) -> (&AtomicU32, &AtomicU32) {
        match &self.mem {
            // SAFETY: bytes 8..16 of the block's first line, 4-byte
            // aligned, in memory the run keeps mapped while this handle
            // lives; only ever accessed atomically.
            Mem::Shared { heads, .. } => unsafe {
                (
                    &*std::ptr::with_exposed_provenance::<AtomicU32>(heads[pid] + 8),
                    &*std::ptr::with_exposed_provenance::<AtomicU32>(heads[pid] + 12),
                )
            },
            #[cfg(feature = "mpi")]
            Mem::Mpi(_) => unreachable!("mpi windows count epochs in MPI"),
        }
    }

    /// Waits until every `(q, which, want)` of `awaited` has counter
    /// `which` of `q` in this process's block at `want` or more. Fails
    /// when the run stops, at its deadline, or when some `q` ended or
    /// waits in the sync of this superstep (it can then never count: seen
    /// on the status board of `threads` and `processes`), naming `what`
    /// it did not do.
    ///
    /// In active-message or one-sided mode it also serves what arrives
    /// (instead of sleeping on the bell): a process that waits here may be
    /// the target of an area's lock epoch whose holder waits for its
    /// answer before it can count (every caller holds the handle
    /// mutably, or is the C interface: no view of an area is alive).
    fn await_counts(
        &self,
        p: &mut Process,
        awaited: &[(usize, usize, u64)],
        what: &str,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let done = |p: &Process| -> Result<bool, Error> {
            for &(q, which, want) in awaited {
                if self.read_count(p, which, q, call, loc)? < want {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        let mut tries = 0u32;
        let mut since: Option<std::time::Instant> = None;
        let mut suspect: Option<(usize, std::time::Instant)> = None;
        while !done(p)? {
            tries += 1;
            if tries < self.spins {
                std::hint::spin_loop();
                continue;
            }
            if tries < self.spins + 16 {
                std::thread::yield_now();
                continue;
            }
            match &self.mem {
                _ if p.am.is_some() => {
                    // Serve, then sleep on the inbox's bell, which a
                    // record and (on shared memory) a count ring; on
                    // `mpi` counts ring nothing: a yield.
                    let mark = self.world.am_mark(p.pid);
                    p.am_dispatch(call, loc)?;
                    if !done(p)? {
                        if self.world.rendezvous().is_none() {
                            self.world
                                .am_wait(p.pid, mark)
                                .map_err(|why| p.interrupted(why, call, loc))?;
                        } else {
                            std::thread::yield_now();
                        }
                    }
                }
                Mem::Shared { .. } => {
                    // Sleep until a count rings the bell (the counters
                    // awaited are in this process's own block, whose bell
                    // every count rings; no wake-up is lost: a count after
                    // our look at the bell changes it, and the futex does
                    // not sleep then), or 50 ms, to look at the run.
                    let (bell, sleepers) = self.bell(p.pid);
                    let seen = bell.load(Ordering::SeqCst);
                    sleepers.fetch_add(1, Ordering::SeqCst);
                    if !done(p)? {
                        futex_wait(bell, seen, std::time::Duration::from_millis(50));
                    }
                    sleepers.fetch_sub(1, Ordering::SeqCst);
                }
                // Counts come by MPI's one-sided operations: poll them.
                #[cfg(feature = "mpi")]
                Mem::Mpi(_) => std::thread::yield_now(),
            }
            if self.world.poll_stopped() {
                return Err(p.stopped(call, loc));
            }
            let t0 = *since.get_or_insert_with(std::time::Instant::now);
            if self.world.deadline().is_some_and(|d| t0.elapsed() > d) {
                return Err(p.interrupted(Interrupt::Deadline, call, loc));
            }
            let mut now = None;
            for &(q, which, want) in awaited {
                if self.read_count(p, which, q, call, loc)? >= want {
                    continue;
                }
                let Some((step, state)) = self.world.peer_state(q) else {
                    break;
                };
                if state == crate::engine::board::State::Ended {
                    now = Some((q, "ended"));
                    break;
                }
                if state == crate::engine::board::State::Syncing
                    && step == p.superstep & ((1 << 30) - 1)
                {
                    now = now.or(Some((q, "entered its sync")));
                }
            }
            // A process seen in its sync (or ended) may have counted just
            // before: the board is written without ordering, so a grace
            // period before the verdict.
            suspect = match (now, suspect) {
                (Some((q, did)), Some((s, t))) if q == s => {
                    if t.elapsed() > std::time::Duration::from_millis(100) && !done(p)? {
                        return Err(p.fail(
                            ErrorKind::EpochUnmatched {
                                detail: format!("process {q} {did} without {what}"),
                            },
                            call,
                            loc,
                        ));
                    }
                    Some((s, t))
                }
                (Some((q, _)), _) => Some((q, std::time::Instant::now())),
                (None, _) => None,
            };
        }
        Ok(())
    }

    /// Opens an epoch on this window: exposes this process's memory to
    /// `origins` (MPI's `MPI_Win_post`) and accesses the memory of
    /// `targets` (`MPI_Win_start`: waits until each of them posted to
    /// this process); either group may be empty. Only the members of the
    /// groups synchronise: a ring of `p` processes exchanging with their
    /// neighbours pays for two neighbours, not a barrier of `p`.
    ///
    /// The guard's [`put`](WinEpoch::put) and [`get`](WinEpoch::get)
    /// reach the targets; [`complete`](WinEpoch::complete) ends the
    /// access (the targets' `wait` can return), [`wait`](WinEpoch::wait)
    /// completes and then waits until every origin completed (their puts
    /// are in this process's memory then), [`test`](WinEpoch::test) does
    /// so without blocking; dropping the guard completes and waits. The
    /// guard holds the window mutably (no local view while the memory is
    /// exposed) and the handle (no sync inside an epoch). Each put and
    /// get also takes the target's lock for its copy, so two origins, or
    /// an origin and a lock holder, never write one byte at once.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::PidOutOfRange`]; [`ErrorKind::ForeignArea`];
    /// [`ErrorKind::EpochUnmatched`] when a target ends or waits in its
    /// sync without posting to this process (found from the status board
    /// within about 100 ms; on `mpi` the board the run's first window
    /// made), or when this process is among the targets but not
    /// among the origins (nobody else can post to it);
    /// [`ErrorKind::Stopped`].
    ///
    /// # BSP cost
    ///
    /// No superstep: a post is one counter increment in each origin's
    /// memory (an `MPI_Fetch_and_op` on `mpi`), a start waits for one from each
    /// target, `complete` and `wait` the same the other way: `c·(k + m)`
    /// for `k` origins and `m` targets, `c` the latency of one counter,
    /// plus the bytes.
    ///
    /// # Examples
    ///
    /// A ring: each process puts its id into its right neighbour's memory,
    /// synchronising with its two neighbours only.
    ///
    /// ```
    /// let r = bsplib::run(4, |bsp| {
    ///     let (me, p) = (bsp.pid(), bsp.nprocs());
    ///     let (left, right) = ((me + p - 1) % p, (me + 1) % p);
    ///     let mut w = bsplib::Window::<u64>::new(bsp, 1)?;
    ///     let mut e = w.epoch(bsp, &[left], &[right])?;
    ///     e.put(right, 0, &[me as u64])?;
    ///     e.wait()?; // my put is done, and my left neighbour's is here
    ///     let got = w.local(bsp)?[0];
    ///     w.free(bsp)?;
    ///     Ok(got)
    /// })?;
    /// assert_eq!(r, [3, 0, 1, 2]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn epoch<'a>(
        &'a mut self,
        bsp: &'a mut Bsp,
        origins: &[usize],
        targets: &[usize],
    ) -> Result<WinEpoch<'a, T>, Error> {
        const CALL: &str = "Window::epoch";
        let loc = Some(SourceLocation::caller());
        self.own(bsp, CALL, loc)?;
        let group = |pids: &[usize]| -> Result<Vec<usize>, Error> {
            let p = bsp.process();
            let mut g = Vec::with_capacity(pids.len());
            for &q in pids {
                g.push(p.check_pid(crate::bsp::pid_arg(q), CALL, loc)?);
            }
            g.sort_unstable();
            g.dedup();
            Ok(g)
        };
        let (origins, targets) = (group(origins)?, group(targets)?);
        let win: &'a Window<T> = self;
        {
            let mut p = bsp.process();
            p.check_running(CALL, loc)?;
            let me = p.pid;
            // Only this call could post to this process itself: a start
            // on itself without it would wait for ever.
            if targets.binary_search(&me).is_ok() && origins.binary_search(&me).is_err() {
                return Err(p.fail(
                    ErrorKind::EpochUnmatched {
                        detail: format!(
                            "process {me} starts an access epoch to itself without posting to \
                             itself in the same call (name it among the origins too)"
                        ),
                    },
                    CALL,
                    loc,
                ));
            }
            win.open_epoch(&mut p, Some(&origins), Some(&targets), CALL, loc)?;
        }
        Ok(WinEpoch {
            access: !targets.is_empty(),
            exposure: !origins.is_empty(),
            win,
            bsp,
        })
    }

    /// Posts an exposure epoch to `origins` and starts an access epoch to
    /// `targets` (sorted, distinct; `None` or empty: not that epoch), each
    /// counted in the process's holds (checked first: no lock or view
    /// held, no second epoch of one kind on this window).
    fn open_epoch(
        &self,
        p: &mut Process,
        origins: Option<&[usize]>,
        targets: Option<&[usize]>,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let origins = origins.filter(|o| !o.is_empty());
        let targets = targets.filter(|t| !t.is_empty());
        let free = p
            .holds
            .check_epoch(self.id, origins.is_some(), targets.is_some());
        p.held_refuses(free, call, loc)?;
        if let Some(o) = origins {
            self.ep_post(p, o, call, loc)?;
            p.holds.open(
                Held::Exposure {
                    win: self.id,
                    origins: o.to_vec(),
                },
                call,
                loc,
            );
        }
        if let Some(t) = targets {
            self.ep_start(p, t, call, loc)?;
            p.holds.open(
                Held::Access {
                    win: self.id,
                    targets: t.to_vec(),
                },
                call,
                loc,
            );
        }
        Ok(())
    }

    /// Completes this window's open access epoch (the one
    /// [`open_epoch`](Window::open_epoch) counted), if any, and uncounts
    /// it.
    fn close_access(&self, p: &mut Process, call: &'static str, loc: Loc) -> Result<(), Error> {
        match p.holds.close_epoch(self.id, false) {
            Some(targets) => {
                // In one-sided mode a record first, behind the epoch's
                // accumulates (`win_done`), then the count.
                p.win_done(self.id, &targets, call, loc)?;
                self.ep_complete(p, &targets, call, loc)
            }
            None => Ok(()),
        }
    }

    /// Waits for (`block`) or looks at the completions of this window's
    /// open exposure epoch; uncounts it when they all came (true, as when
    /// none is open).
    fn close_exposure(
        &self,
        p: &mut Process,
        block: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<bool, Error> {
        let Some(origins) = p.holds.exposure(self.id).map(<[usize]>::to_vec) else {
            return Ok(true);
        };
        if !block && !p.win_arrived(self.id, &origins, false, call, loc)? {
            return Ok(false);
        }
        if !self.ep_wait(p, &origins, block, call, loc)? {
            return Ok(false);
        }
        // Every origin counted its completion after its records: they
        // are here or on their way (one-sided mode).
        p.win_arrived(self.id, &origins, true, call, loc)?;
        self.combine_arrived(p, call, loc)?;
        p.holds.close_epoch(self.id, true);
        Ok(true)
    }

    /// Combines the accumulates of the exposure epoch that just ended
    /// into this process's memory, origins in pid order and each origin's
    /// in issue order (bit-identical results on every engine and run),
    /// under its own exclusive lock (no lock holder reads meanwhile).
    fn combine_arrived(&self, p: &mut Process, call: &'static str, loc: Loc) -> Result<(), Error> {
        let accs = p.win_take(self.id).map_err(|d| match d {
            crate::am::Dispatch::Target(kind) => p.fail(kind, call, loc),
            crate::am::Dispatch::Interrupted(why) => p.interrupted(why, call, loc),
        })?;
        if accs.is_empty() {
            return Ok(());
        }
        let me = self.owner.1;
        let extent = self.lens[me] * std::mem::size_of::<T>();
        if let Some(a) = accs.iter().find(|a| {
            a.off
                .checked_add(a.data.len())
                .is_none_or(|end| end > extent)
        }) {
            return Err(p.fail(
                ErrorKind::OutOfBounds {
                    remote: me,
                    offset: a.off,
                    nbytes: a.data.len(),
                    extent,
                },
                call,
                loc,
            ));
        }
        self.acquire(p, me, true, call, loc)?;
        let mut done = Ok(());
        for a in &accs {
            // SAFETY: in bounds (checked above); this process holds its
            // own memory's lock exclusively; `a.data` holds whole
            // elements of `a.ty` (checked when it arrived).
            done = unsafe { self.combine_in(p, me, a.off, &a.data, a.ty, a.op, call, loc) };
            if done.is_err() {
                break;
            }
        }
        self.release(p, me, true);
        done
    }

    /// Posts an exposure epoch to `origins` (sorted, distinct): one
    /// count in each origin's block.
    fn ep_post(
        &self,
        p: &Process,
        origins: &[usize],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        for &o in origins {
            self.count(p, o, 0, call, loc)?;
        }
        Ok(())
    }

    /// Starts an access epoch on `targets` (sorted, distinct): waits
    /// until each posted to this process.
    fn ep_start(
        &self,
        p: &mut Process,
        targets: &[usize],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let awaited: Vec<(usize, usize, u64)> = {
            let started = self.started.borrow();
            targets.iter().map(|&t| (t, 0, started[t] + 1)).collect()
        };
        self.await_counts(
            p,
            &awaited,
            "posting an exposure epoch to this process (a start to a process that never posts)",
            call,
            loc,
        )?;
        let mut started = self.started.borrow_mut();
        for &t in targets {
            started[t] += 1;
        }
        Ok(())
    }

    /// Completes the access epoch on `targets`: one count in each
    /// target's block (every transfer of the epoch is complete already:
    /// each released its target's lock).
    fn ep_complete(
        &self,
        p: &Process,
        targets: &[usize],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        for &t in targets {
            self.count(p, t, 1, call, loc)?;
        }
        Ok(())
    }

    /// Waits (`block`) or looks whether every one of `origins` completed
    /// the exposure epoch; true (and the epoch closed) when they did.
    fn ep_wait(
        &self,
        p: &mut Process,
        origins: &[usize],
        block: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<bool, Error> {
        if self.world.poll_stopped() {
            return Err(p.stopped(call, loc));
        }
        let awaited: Vec<(usize, usize, u64)> = {
            let waited = self.waited.borrow();
            origins.iter().map(|&o| (o, 1, waited[o] + 1)).collect()
        };
        if block {
            // Nothing another process could wait for is held meanwhile.
            p.held_refuses(p.holds.check_wait(None), call, loc)?;
            self.await_counts(
                p,
                &awaited,
                "completing the access epoch this process's exposure epoch admits it to",
                call,
                loc,
            )?;
        } else {
            for &(o, which, want) in &awaited {
                if self.read_count(p, which, o, call, loc)? < want {
                    return Ok(false);
                }
            }
        }
        let mut waited = self.waited.borrow_mut();
        for &o in origins {
            waited[o] += 1;
        }
        Ok(true)
    }

    /// An epoch's put of `src` at byte `off` of `pid`'s memory, under
    /// `pid`'s exclusive lock (so that no lock holder and no other origin
    /// touches the bytes meanwhile); complete at `pid` when this returns.
    ///
    /// # Safety
    ///
    /// In bounds; an access epoch on `pid` is open.
    unsafe fn ep_put(
        &self,
        p: &Process,
        pid: usize,
        off: usize,
        src: &[u8],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.acquire(p, pid, true, call, loc)?;
        // SAFETY: in bounds (the caller's); `pid`'s lock is held
        // exclusively: nobody else reads or writes these bytes.
        let done = unsafe { self.copy_in(p, pid, off, src, call, loc) };
        self.release(p, pid, true);
        done
    }

    /// An epoch's get of `dst.len()` bytes at byte `off` of `pid`'s
    /// memory, under `pid`'s shared lock; in `dst` when this returns.
    ///
    /// # Safety
    ///
    /// In bounds; an access epoch on `pid` is open.
    unsafe fn ep_get(
        &self,
        p: &Process,
        pid: usize,
        off: usize,
        dst: &mut [u8],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.acquire(p, pid, false, call, loc)?;
        // SAFETY: in bounds; `pid`'s lock is held (shared): nobody writes
        // these bytes meanwhile.
        let done = unsafe { self.copy_out(p, pid, off, dst, call, loc) };
        self.release(p, pid, false);
        done
    }

    /// Opens the epochs of the C interface's `bsp_window_post` (`origins`)
    /// or `bsp_window_start` (`targets`), sorted and distinct; counted as
    /// open window epochs (a sync with one open is an error).
    ///
    /// # Errors
    ///
    /// As for [`epoch`](Window::epoch).
    ///
    /// # Safety
    ///
    /// Each epoch opened is closed once by
    /// [`complete_raw`](Window::complete_raw) (an access epoch) or
    /// [`wait_raw`](Window::wait_raw) (an exposure epoch); no guard of
    /// this window alive in this process meanwhile; no view of a
    /// registered [`Area`](crate::Area) of this process alive during the
    /// call (a start may serve one-sided records, which write areas: the
    /// C interface has no such views).
    #[doc(hidden)]
    pub unsafe fn open_raw(
        &self,
        bsp: &Bsp,
        origins: Option<&[usize]>,
        targets: Option<&[usize]>,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        self.own(bsp, call, loc)?;
        let mut p = bsp.process();
        p.check_running(call, loc)?;
        self.open_epoch(&mut p, origins, targets, call, loc)
    }

    /// Completes the access epoch that [`open_raw`](Window::open_raw)
    /// started (nothing if none is open).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Transport`] when MPI fails.
    #[doc(hidden)]
    pub fn complete_raw(
        &self,
        bsp: &Bsp,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        self.close_access(&mut bsp.process(), call, loc)
    }

    /// Waits for (`block`) or looks at the completions of the exposure
    /// epoch that [`open_raw`](Window::open_raw) posted; true when it is
    /// closed (or none was open).
    ///
    /// # Errors
    ///
    /// As for [`WinEpoch::wait`].
    ///
    /// # Safety
    ///
    /// No view of a registered [`Area`](crate::Area) of this process is
    /// alive during the call: a blocking wait serves one-sided records
    /// (in active-message mode), which write areas. The C interface has
    /// no such views.
    #[doc(hidden)]
    pub unsafe fn wait_raw(
        &self,
        bsp: &Bsp,
        block: bool,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<bool, Error> {
        self.close_exposure(&mut bsp.process(), block, call, loc)
    }

    /// An access epoch's put (the C interface's `bsp_window_put` to a
    /// started target): `src` at byte `off` of `pid`'s memory, there when
    /// this returns.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::OutOfBounds`].
    ///
    /// # Safety
    ///
    /// An access epoch on `pid` is open (`open_raw`).
    #[doc(hidden)]
    pub unsafe fn epoch_put_raw(
        &self,
        bsp: &Bsp,
        pid: usize,
        off: usize,
        src: &[u8],
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let mut p = bsp.process();
        let off = self.check_raw(&p, pid, off, src.len(), false, call, loc)?;
        // SAFETY: in bounds; the caller's epoch.
        unsafe { self.ep_put(&p, pid, off, src, call, loc)? };
        p.win_note_put(self.id, pid, off, src.len(), call, loc)
    }

    /// An access epoch's accumulate (the C interface's
    /// `bsp_window_accumulate` to a started target): `src`, whole
    /// elements of `ty` (the target refuses a record of part of one),
    /// combined with `op` into byte `off` of `pid`'s
    /// memory at `pid`'s `wait` ([`WinEpoch::accumulate`]).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] without an access epoch of this window to
    /// `pid`, or outside one-sided mode; [`ErrorKind::OutOfBounds`];
    /// [`ErrorKind::AccumulateOperator`].
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub fn epoch_accumulate_raw(
        &self,
        bsp: &Bsp,
        pid: usize,
        off: usize,
        src: &[u8],
        ty: crate::rma::ElemType,
        op: Op,
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let mut p = bsp.process();
        if p.holds.access(self.id).is_none_or(|t| !t.contains(&pid)) {
            let detail = format!("no access epoch of this window to process {pid} is open");
            return Err(p.fail(ErrorKind::NoEpoch { detail }, call, loc));
        }
        let off = self.check_raw(&p, pid, off, src.len(), false, call, loc)?;
        p.win_accumulate(self.id, pid, off, src, ty, op, call, loc)
    }

    /// An access epoch's get (the C interface's `bsp_window_get` from a
    /// started target): `dst.len()` bytes at byte `off` of `pid`'s
    /// memory, in `dst` when this returns.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::OutOfBounds`].
    ///
    /// # Safety
    ///
    /// An access epoch on `pid` is open.
    #[doc(hidden)]
    pub unsafe fn epoch_get_raw(
        &self,
        bsp: &Bsp,
        pid: usize,
        off: usize,
        dst: &mut [u8],
        call: &'static str,
        loc: Option<SourceLocation>,
    ) -> Result<(), Error> {
        let p = bsp.process();
        let off = self.check_raw(&p, pid, off, dst.len(), false, call, loc)?;
        // SAFETY: in bounds; the caller's epoch and `dst`.
        unsafe { self.ep_get(&p, pid, off, dst, call, loc) }
    }

    /// Takes `pid`'s lock, waiting as long as it must (and the run lives).
    fn acquire(
        &self,
        p: &Process,
        pid: usize,
        exclusive: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        let mut tries = 0u32;
        let mut since: Option<std::time::Instant> = None;
        loop {
            let taken = self
                .try_take(pid, exclusive)
                .map_err(|detail| p.fail(ErrorKind::Transport { detail }, call, loc))?;
            if taken {
                return Ok(());
            }
            tries += 1;
            if tries < self.spins {
                std::hint::spin_loop();
                continue;
            }
            // Let the holder run (it may be waiting for this core).
            std::thread::yield_now();
            if tries % 64 == 0 {
                if self.world.poll_stopped() {
                    return Err(p.stopped(call, loc));
                }
                let t0 = *since.get_or_insert_with(std::time::Instant::now);
                if self.world.deadline().is_some_and(|d| t0.elapsed() > d) {
                    return Err(p.interrupted(Interrupt::Deadline, call, loc));
                }
            }
        }
    }

    /// One attempt at `pid`'s lock: true if taken.
    pub(crate) fn try_take(&self, pid: usize, exclusive: bool) -> Result<bool, String> {
        match &self.mem {
            Mem::Shared { .. } => Ok(lockword::try_lock(self.word(pid), exclusive)),
            #[cfg(feature = "mpi")]
            Mem::Mpi(win) => win.try_lock(pid, exclusive),
        }
    }

    /// Releases `pid`'s lock (on `mpi` once the puts under it are
    /// complete at `pid`). An MPI failure fails the run (`p.fail`): the
    /// release is made by drops too, which cannot return it.
    fn release(&self, p: &Process, pid: usize, exclusive: bool) {
        if let Err(detail) = self.give_back(pid, exclusive) {
            p.fail(
                ErrorKind::Transport { detail },
                "a window lock's release",
                None,
            );
        }
    }

    /// Releases `pid`'s lock, MPI's failure as its words.
    pub(crate) fn give_back(&self, pid: usize, exclusive: bool) -> Result<(), String> {
        match &self.mem {
            Mem::Shared { .. } => {
                lockword::unlock(self.word(pid), exclusive);
                Ok(())
            }
            #[cfg(feature = "mpi")]
            Mem::Mpi(win) => win.unlock(pid, exclusive),
        }
    }
}

use crate::engine::processes::{futex_wait, futex_wake};

/// The lock word of a window block (shared memory engines): bit 63 a
/// writer, the bits below the readers. No queue.
mod lockword {
    use super::{AtomicU64, Ordering, WRITER};

    /// One attempt at the lock; true if taken.
    pub(super) fn try_lock(word: &AtomicU64, exclusive: bool) -> bool {
        if exclusive {
            return word
                .compare_exchange_weak(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
                .is_ok();
        }
        if word.load(Ordering::Relaxed) & WRITER != 0 {
            return false;
        }
        enter(word) || {
            back_out(word);
            false
        }
    }

    /// A reader's increment; true if no writer held the lock.
    pub(super) fn enter(word: &AtomicU64) -> bool {
        word.fetch_add(1, Ordering::Acquire) & WRITER == 0
    }

    /// A reader that found a writer takes its increment back.
    pub(super) fn back_out(word: &AtomicU64) {
        word.fetch_sub(1, Ordering::Relaxed);
    }

    /// Releases what [`try_lock`] took. A subtraction, not a store of 0,
    /// for the writer too: a reader that found the writer bit may have
    /// added its 1 meanwhile, and takes it back itself ([`back_out`]).
    pub(super) fn unlock(word: &AtomicU64, exclusive: bool) {
        word.fetch_sub(if exclusive { WRITER } else { 1 }, Ordering::Release);
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_readers_passing_increment_survives_the_writers_release() {
            let w = AtomicU64::new(0);
            assert!(try_lock(&w, true));
            // A reader saw the word free just before the writer took it,
            // and adds its 1 now.
            assert!(!enter(&w));
            unlock(&w, true);
            back_out(&w);
            assert_eq!(w.load(Ordering::Relaxed), 0, "the word is free again");
            assert!(try_lock(&w, false) && try_lock(&w, false));
            assert!(!try_lock(&w, true), "readers hold it");
            unlock(&w, false);
            unlock(&w, false);
            assert!(try_lock(&w, true));
            assert!(!try_lock(&w, false) && !try_lock(&w, true));
        }
    }
}

/// Element counts from byte counts.
fn lens_of<T>(bytes: impl Iterator<Item = u64>) -> Vec<usize> {
    let size = std::mem::size_of::<T>().max(1);
    bytes.map(|b| b as usize / size).collect()
}

/// A counted view of this process's own memory, closed on drop.
struct Hold<'a, T: Pod> {
    win: &'a Window<T>,
    bsp: &'a Bsp,
    exclusive: bool,
}

impl<T: Pod> Drop for Hold<'_, T> {
    fn drop(&mut self) {
        self.win.unview(self.bsp, self.exclusive);
    }
}

/// A read view of this process's own window memory
/// ([`Window::local`]), holding a shared lock of it.
pub struct Local<'a, T: Pod> {
    data: &'a [T],
    hold: Hold<'a, T>,
}

impl<T: Pod> Deref for Local<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.data
    }
}

impl<T: Pod> std::fmt::Debug for Local<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Local")
            .field("pid", &self.hold.win.owner.1)
            .field("len", &self.data.len())
            .finish()
    }
}

/// A read-write view of this process's own window memory
/// ([`Window::local_mut`]), holding an exclusive lock of it.
pub struct LocalMut<'a, T: Pod> {
    data: &'a mut [T],
    hold: Hold<'a, T>,
}

impl<T: Pod> Deref for LocalMut<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.data
    }
}

impl<T: Pod> DerefMut for LocalMut<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.data
    }
}

impl<T: Pod> std::fmt::Debug for LocalMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalMut")
            .field("pid", &self.hold.win.owner.1)
            .field("len", &self.data.len())
            .finish()
    }
}

/// A lock of one process's window memory ([`Window::lock`]); released
/// when dropped or by [`unlock`](WinLock::unlock).
pub struct WinLock<'a, T: Pod> {
    win: &'a Window<T>,
    bsp: &'a mut Bsp,
    pid: usize,
    exclusive: bool,
}

impl<T: Pod> std::fmt::Debug for WinLock<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WinLock")
            .field("pid", &self.pid)
            .field("exclusive", &self.exclusive)
            .finish()
    }
}

impl<'a, T: Pod> WinLock<'a, T> {
    /// The handle this guard holds (for `pid()`, `nprocs()` ...).
    pub fn bsp(&self) -> &Bsp {
        self.bsp
    }

    /// Checks a transfer of `n` elements at `offset` for process `p` (this
    /// guard's), by a writer if `write`; returns its byte offset and
    /// length.
    fn check(
        &self,
        p: &Process,
        offset: usize,
        n: usize,
        write: bool,
        call: &'static str,
        loc: Loc,
    ) -> Result<(usize, usize), Error> {
        let size = std::mem::size_of::<T>();
        self.win.check_bytes(
            p,
            self.pid,
            offset.checked_mul(size),
            n.checked_mul(size),
            (offset.saturating_mul(size), n.saturating_mul(size)),
            write && !self.exclusive,
            call,
            loc,
        )
    }

    /// Writes `src` into the locked memory from element `offset`;
    /// complete at the target when this returns. Needs an exclusive lock.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::OutOfBounds`] if the elements do not fit the target's
    /// memory; [`ErrorKind::NoEpoch`] under a shared lock. Any error stops
    /// the run.
    ///
    /// # BSP cost
    ///
    /// `size_of_val(src)` bytes copied (no superstep).
    ///
    /// # Examples
    ///
    /// See [`Window`].
    #[track_caller]
    pub fn put(&mut self, offset: usize, src: &[T]) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        const CALL: &str = "WinLock::put";
        let p = self.bsp.process();
        let (off, _) = self.check(&p, offset, src.len(), true, CALL, loc)?;
        // SAFETY: in bounds (checked); the exclusive lock of `pid`'s
        // memory is held: nobody else reads or writes these bytes.
        unsafe {
            self.win
                .copy_in(&p, self.pid, off, bytemuck::cast_slice(src), CALL, loc)
        }
    }

    /// Reads the locked memory from element `offset` into `dst`; complete
    /// when this returns.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::OutOfBounds`] if the elements do not fit the target's
    /// memory. Any error stops the run.
    ///
    /// # BSP cost
    ///
    /// `size_of_val(dst)` bytes copied (on `mpi`, a round trip).
    ///
    /// # Examples
    ///
    /// See [`Window`].
    #[track_caller]
    pub fn get(&mut self, offset: usize, dst: &mut [T]) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        const CALL: &str = "WinLock::get";
        let p = self.bsp.process();
        let (off, _) = self.check(&p, offset, dst.len(), false, CALL, loc)?;
        // SAFETY: in bounds; a lock of `pid`'s memory is held: nobody
        // writes these bytes meanwhile.
        unsafe {
            self.win
                .copy_out(&p, self.pid, off, bytemuck::cast_slice_mut(dst), CALL, loc)
        }
    }

    /// Releases the lock (as dropping the guard does).
    ///
    /// # Errors
    ///
    /// None today; a `Result` so that an engine whose unlock can fail
    /// reports it.
    ///
    /// # Examples
    ///
    /// See [`Window`].
    pub fn unlock(self) -> Result<(), Error> {
        drop(self);
        Ok(())
    }
}

impl<T: Element> WinLock<'_, T> {
    /// Combines `src` into the locked memory from element `offset` with
    /// `op` (`dst[offset + i] = dst[offset + i] op src[i]`), with the
    /// library's own kernels (the same results as
    /// [`Bsp::accumulate`]); complete when this returns. Needs an
    /// exclusive lock, which makes it atomic.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::AccumulateOperator`] if `op` is not defined on `T`;
    /// as for [`put`](WinLock::put).
    ///
    /// # BSP cost
    ///
    /// `size_of_val(src)` bytes and `src.len()` operations (on `mpi`, a
    /// get and a put).
    ///
    /// # Examples
    ///
    /// ```
    /// use bsplib::{rma::Op, LockKind, Window};
    /// let r = bsplib::run(4, |bsp| {
    ///     let w = Window::<f64>::new(bsp, 2)?;
    ///     let x = bsp.pid() as f64;
    ///     w.lock(bsp, 0, LockKind::Exclusive)?.accumulate(0, &[x, 1.0], Op::Sum)?;
    ///     bsp.sync()?;
    ///     let v = w.local(bsp)?.to_vec();
    ///     w.free(bsp)?;
    ///     Ok(v)
    /// })?;
    /// assert_eq!(r[0], [6.0, 4.0]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn accumulate(&mut self, offset: usize, src: &[T], op: Op) -> Result<(), Error> {
        const CALL: &str = "WinLock::accumulate";
        let loc = Some(SourceLocation::caller());
        let p = self.bsp.process();
        let (off, _) = self.check(&p, offset, src.len(), true, CALL, loc)?;
        // SAFETY: in bounds (checked); this guard holds `pid`'s lock
        // exclusively (`check` refused a write under a shared one);
        // `src` holds `src.len()` elements of `T::TYPE`.
        unsafe {
            self.win.combine_in(
                &p,
                self.pid,
                off,
                bytemuck::cast_slice(src),
                T::TYPE,
                op,
                CALL,
                loc,
            )
        }
    }
}

impl<T: Pod> Drop for WinLock<'_, T> {
    fn drop(&mut self) {
        self.win.unlock_counted(self.bsp, self.pid, self.exclusive);
    }
}

/// An epoch of post/start/complete/wait on a window ([`Window::epoch`]):
/// an exposure epoch to its origins and an access epoch to its targets.
/// Dropping it completes and waits.
///
/// The groups live in the process's count of what it holds, not in the
/// guard: a guard forgotten with `mem::forget` leaks nothing and stays
/// counted (its calls refuse: [`Window::epoch`]).
pub struct WinEpoch<'a, T: Pod> {
    win: &'a Window<T>,
    bsp: &'a mut Bsp,
    /// The access epoch is open (started, not completed).
    access: bool,
    /// The exposure epoch is open (posted, not waited for).
    exposure: bool,
}

impl<T: Pod> std::fmt::Debug for WinEpoch<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WinEpoch")
            .field("access", &self.access)
            .field("exposure", &self.exposure)
            .finish()
    }
}

impl<'a, T: Pod> WinEpoch<'a, T> {
    /// The handle this guard holds (for `pid()`, `nprocs()` ...).
    pub fn bsp(&self) -> &Bsp {
        self.bsp
    }

    /// Checks a transfer to `pid` of `n` elements at `offset` in the
    /// open access epoch; its byte offset and length.
    fn check(
        &self,
        pid: usize,
        offset: usize,
        n: usize,
        call: &'static str,
        loc: Loc,
    ) -> Result<(usize, usize), Error> {
        let p = self.bsp.process();
        p.check_running(call, loc)?;
        let targets = p.holds.access(self.win.id).filter(|_| self.access);
        if targets.is_none_or(|t| t.binary_search(&pid).is_err()) {
            return Err(p.fail(
                ErrorKind::NoEpoch {
                    detail: if let Some(targets) = targets {
                        format!(
                            "process {pid} is not a target of this access epoch (targets \
                             {targets:?})"
                        )
                    } else {
                        "a transfer after this epoch's complete".into()
                    },
                },
                call,
                loc,
            ));
        }
        let size = std::mem::size_of::<T>();
        let extent = self.win.lens[pid] * size;
        offset
            .checked_mul(size)
            .and_then(|o| Some((o, n.checked_mul(size)?)))
            .filter(|&(o, b)| o.checked_add(b).is_some_and(|end| end <= extent))
            .ok_or_else(|| {
                p.fail(
                    ErrorKind::OutOfBounds {
                        remote: pid,
                        offset: offset.saturating_mul(size),
                        nbytes: n.saturating_mul(size),
                        extent,
                    },
                    call,
                    loc,
                )
            })
    }

    /// Writes `src` into target `pid`'s memory from element `offset`;
    /// in `pid`'s memory when its `wait` returns. `src` may be reused at
    /// once.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] if `pid` is not a target of the epoch or
    /// the access epoch was completed; [`ErrorKind::OutOfBounds`]. Any
    /// error stops the run.
    ///
    /// # BSP cost
    ///
    /// `size_of_val(src)` bytes (a lock of the target's word for the copy
    /// on shared memory; `MPI_Put` of a copy on `mpi`).
    ///
    /// # Examples
    ///
    /// See [`Window::epoch`].
    #[track_caller]
    pub fn put(&mut self, pid: usize, offset: usize, src: &[T]) -> Result<(), Error> {
        const CALL: &str = "WinEpoch::put";
        let loc = Some(SourceLocation::caller());
        let (off, n) = self.check(pid, offset, src.len(), CALL, loc)?;
        let mut p = self.bsp.process();
        // SAFETY: in bounds (checked); the access epoch on `pid` is open.
        unsafe {
            self.win
                .ep_put(&p, pid, off, bytemuck::cast_slice(src), CALL, loc)?;
        }
        p.win_note_put(self.win.id, pid, off, n, CALL, loc)
    }

    /// Reads target `pid`'s memory from element `offset` into `dst`,
    /// which holds the data when this returns (what `pid`'s memory held
    /// then: the puts of other origins of this epoch may or may not be
    /// in it, as in MPI).
    ///
    /// # Errors
    ///
    /// As for [`put`](WinEpoch::put).
    ///
    /// # BSP cost
    ///
    /// `size_of_val(dst)` bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(2, |bsp| {
    ///     let other = 1 - bsp.pid();
    ///     let mut w = bsplib::Window::<u32>::new(bsp, 1)?;
    ///     w.local_mut(bsp)?[0] = 40 + bsp.pid() as u32;
    ///     let mut got = [0u32];
    ///     let mut e = w.epoch(bsp, &[other], &[other])?;
    ///     e.get(other, 0, &mut got)?;
    ///     e.wait()?;
    ///     w.free(bsp)?;
    ///     Ok(got[0])
    /// })?;
    /// assert_eq!(r, [41, 40]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn get(&mut self, pid: usize, offset: usize, dst: &mut [T]) -> Result<(), Error> {
        const CALL: &str = "WinEpoch::get";
        let loc = Some(SourceLocation::caller());
        let (off, _) = self.check(pid, offset, dst.len(), CALL, loc)?;
        let p = self.bsp.process();
        // SAFETY: in bounds; the access epoch on `pid` is open.
        unsafe {
            self.win
                .ep_get(&p, pid, off, bytemuck::cast_slice_mut(dst), CALL, loc)
        }
    }

    /// Ends the access epoch: its targets' `wait` can count this process
    /// (every transfer of the epoch is complete already). Does nothing
    /// without one.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Transport`] when MPI fails.
    ///
    /// # BSP cost
    ///
    /// A counter increment in each target's memory (MPI's
    /// `MPI_Win_complete`).
    ///
    /// # Examples
    ///
    /// See [`test`](WinEpoch::test).
    pub fn complete(&mut self) -> Result<(), Error> {
        if !self.access {
            return Ok(());
        }
        self.access = false;
        self.win
            .close_access(&mut self.bsp.process(), "WinEpoch::complete", None)
    }

    /// Completes the access epoch, then waits until every origin has
    /// completed its access: their puts are in this process's memory.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::EpochUnmatched`] when an origin ends or waits in its
    /// sync without completing (every engine: the status board);
    /// [`ErrorKind::Stopped`].
    ///
    /// # BSP cost
    ///
    /// Waits for one counter per origin (MPI's `MPI_Win_wait`).
    ///
    /// # Examples
    ///
    /// See [`Window::epoch`].
    #[track_caller]
    pub fn wait(mut self) -> Result<(), Error> {
        self.wait_at(Some(SourceLocation::caller()))
    }

    fn wait_at(&mut self, loc: Loc) -> Result<(), Error> {
        self.complete()?;
        if self.exposure {
            let mut p = self.bsp.process();
            self.win
                .close_exposure(&mut p, true, "WinEpoch::wait", loc)?;
            drop(p);
            self.exposure = false;
        }
        Ok(())
    }

    /// Completes the access epoch, then tells without waiting whether
    /// every origin has completed (the exposure epoch ends then: later
    /// calls return true at once).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Stopped`].
    ///
    /// # BSP cost
    ///
    /// One read of each origin's counter (`MPI_Win_test`).
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(2, |bsp| {
    ///     let other = 1 - bsp.pid();
    ///     let mut w = bsplib::Window::<u8>::new(bsp, 1)?;
    ///     let mut e = w.epoch(bsp, &[other], &[other])?;
    ///     e.put(other, 0, &[9])?;
    ///     e.complete()?;
    ///     let mut polls = 0u64;
    ///     while !e.test()? {
    ///         polls += 1; // free to compute meanwhile
    ///     }
    ///     drop(e);
    ///     let got = w.local(bsp)?[0];
    ///     w.free(bsp)?;
    ///     Ok(got)
    /// })?;
    /// assert_eq!(r, [9, 9]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    pub fn test(&mut self) -> Result<bool, Error> {
        self.complete()?;
        if self.exposure {
            let mut p = self.bsp.process();
            let done = self
                .win
                .close_exposure(&mut p, false, "WinEpoch::test", None)?;
            drop(p);
            self.exposure = !done;
        }
        Ok(!self.exposure)
    }
}

impl<T: Element> WinEpoch<'_, T> {
    /// Combines `src` into target `pid`'s memory from element `offset`
    /// with `op` (`dst[offset + i] = dst[offset + i] op src[i]`), at
    /// `pid`'s `wait`: the accumulates of all origins of its exposure
    /// epoch are combined then, origins in pid order and each origin's in
    /// issue order, so floating-point results are bit-identical on every
    /// engine and run (as an [`Area`](crate::Area)'s epoch does). One
    /// operator and type per target and epoch, across origins. `src` may
    /// be reused at once.
    ///
    /// Needs one-sided mode ([`Bsp::rma_init`]): the contributions travel
    /// as records the target combines (a window's puts and gets do not
    /// need it).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoEpoch`] outside one-sided mode, or as for
    /// [`put`](WinEpoch::put); [`ErrorKind::AccumulateOperator`] if `op`
    /// is not defined on `T`; [`ErrorKind::AccumulateMismatch`] (at the
    /// target's `wait`) when two origins, or one, use two operators or
    /// types in one epoch. Any error stops the run.
    ///
    /// # BSP cost
    ///
    /// `size_of_val(src)` bytes to `pid` and `src.len()` operations there
    /// at its `wait`.
    ///
    /// # Examples
    ///
    /// ```
    /// use bsplib::{rma::Op, Window};
    /// let r = bsplib::run(3, |bsp| {
    ///     bsp.rma_init()?;
    ///     let mut w = Window::<f64>::new(bsp, 1)?;
    ///     let me = bsp.pid();
    ///     let all: Vec<usize> = (0..bsp.nprocs()).collect();
    ///     let mut e = w.epoch(bsp, if me == 0 { &all } else { &[] }, &[0])?;
    ///     e.accumulate(0, 0, &[0.1 * (me + 1) as f64], Op::Sum)?;
    ///     e.wait()?;
    ///     let v = w.local(bsp)?[0];
    ///     w.free(bsp)?;
    ///     bsp.rma_term()?;
    ///     Ok(v)
    /// })?;
    /// assert_eq!(r[0].to_bits(), ((0.0 + 0.1) + 0.2 + 0.30000000000000004f64).to_bits());
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn accumulate(
        &mut self,
        pid: usize,
        offset: usize,
        src: &[T],
        op: Op,
    ) -> Result<(), Error> {
        const CALL: &str = "WinEpoch::accumulate";
        let loc = Some(SourceLocation::caller());
        let (off, _) = self.check(pid, offset, src.len(), CALL, loc)?;
        self.bsp.process().win_accumulate(
            self.win.id,
            pid,
            off,
            bytemuck::cast_slice(src),
            T::TYPE,
            op,
            CALL,
            loc,
        )
    }
}

impl<T: Pod> Drop for WinEpoch<'_, T> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Unwinding: complete (so that no target waits for us), but
            // wait for nobody: the run is failing. The memory stays the
            // run's, and no view of it can be made any more.
            let _ = self.complete();
            return;
        }
        // An error here (the run stopped) is the run's already.
        let _ = self.wait_at(None);
    }
}
