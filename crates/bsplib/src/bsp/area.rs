//! [`Area`]: memory owned by the library on behalf of one process, the safe
//! target of registration, puts and gets.

use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Bound, Deref, RangeBounds};
use std::ptr::NonNull;
use std::rc::Rc;
use std::sync::Arc;

use bytemuck::Pod;

use crate::engine::area_memory::{GRAIN, MIN_AREA};
use crate::engine::World;
use crate::Bsp;
#[cfg(doc)]
use crate::ErrorKind;

/// The storage of an area, shared with the registrations and pending gets
/// that must keep it alive.
pub(crate) struct Storage<T> {
    cells: Cells<T>,
    /// For an area of zero bytes, whose element pointer is a placeholder
    /// shared by every empty allocation: one real byte whose address is the
    /// area's identity, so that distinct empty areas are distinct
    /// registrations (nothing is ever written there: every transfer into a
    /// zero-byte registration is out of bounds or does nothing).
    anchor: Option<Box<u8>>,
    /// The run and the process that created the area ([`Bsp::owner`]):
    /// the only handle it may be used with.
    owner: (u64, usize),
}

/// Where an area's elements are.
enum Cells<T> {
    /// On the heap.
    Heap(Box<[UnsafeCell<T>]>),
    /// `processes`, from [`MIN_AREA`] bytes: `len` elements at `ptr` in
    /// process `pid`'s region of the run's area memory, which the other
    /// processes read directly (`engine/area_memory.rs`); the world keeps
    /// the mapping alive.
    Shared {
        ptr: NonNull<UnsafeCell<T>>,
        len: usize,
        world: Arc<World>,
        pid: usize,
    },
}

impl<T> Deref for Cells<T> {
    type Target = [UnsafeCell<T>];

    #[inline]
    fn deref(&self) -> &[UnsafeCell<T>] {
        match self {
            Cells::Heap(b) => b,
            // SAFETY: `len` elements allocated for this value alone, aligned
            // for `T` (`GRAIN`), initialised when made, in a mapping the
            // world keeps alive as long as `self`.
            Cells::Shared { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts(ptr.as_ptr(), *len)
            },
        }
    }
}

impl<T> Drop for Cells<T> {
    fn drop(&mut self) {
        if let Cells::Shared {
            ptr,
            len,
            world,
            pid,
        } = self
        {
            if let Some(m) = world.area_memory() {
                m.free(*pid, ptr.cast(), *len * std::mem::size_of::<T>());
            }
        }
    }
}

impl<T: Pod> Cells<T> {
    /// `len` elements in `bsp`'s area memory, if the area is large enough
    /// to go there and there is room: zeroed, then filled by `init`.
    fn shared(bsp: &Bsp, len: usize, init: impl FnOnce(&mut [T])) -> Option<Self> {
        let bytes = len.checked_mul(std::mem::size_of::<T>())?;
        if bytes < MIN_AREA || std::mem::align_of::<T>() > GRAIN {
            return None;
        }
        let world = bsp.area_memory()?;
        let pid = bsp.owner().1;
        let (ptr, used) = world.area_memory()?.alloc(pid, bytes)?;
        let ptr = ptr.cast::<T>();
        if used {
            // SAFETY: `bytes` bytes of our own fresh allocation, which no
            // other process knows of.
            unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, len) };
        }
        // SAFETY: as above; all-zero is a valid `T` (`Pod`).
        init(unsafe { std::slice::from_raw_parts_mut(ptr.as_ptr(), len) });
        Some(Cells::Shared {
            ptr: ptr.cast(),
            len,
            world: world.clone(),
            pid,
        })
    }
}

impl<T> Storage<T> {
    fn new(cells: Cells<T>, owner: (u64, usize)) -> Self {
        let anchor = (std::mem::size_of_val(&*cells) == 0).then(|| Box::new(0u8));
        Storage {
            cells,
            anchor,
            owner,
        }
    }

    /// The address that identifies the area (its first byte, or the anchor).
    #[inline]
    pub(crate) fn addr(&self) -> usize {
        match &self.anchor {
            Some(a) => (&**a as *const u8).addr(),
            // Remote processes write through this address: expose it.
            None => self.cells.as_ptr().expose_provenance(),
        }
    }
}

/// A contiguous array of `T` in the local memory of one BSP process, which
/// other processes may read and write through BSPlib operations.
///
/// Safe Rust cannot hand the library a `&mut [T]` to write into "at the next
/// sync", so registered memory and get destinations are `Area`s: the library
/// keeps their storage alive for as long as a registration or pending get
/// refers to it (dropping the `Area` early is memory-safe, but a dropped
/// area can no longer be named by [`Bsp::pop_reg`]), and the local contents
/// are reached through [`as_slice`](Area::as_slice) /
/// [`as_mut_slice`](Area::as_mut_slice), which borrow the [`Bsp`] handle.
/// Since [`Bsp::sync`] takes `&mut Bsp`, no such view can be alive while a
/// sync writes into the area or other processes read it: the borrow checker
/// enforces BSPlib's superstep discipline.
///
/// An `Area` is neither `Send` nor `Sync`: it belongs to its process, and
/// to the run it was created in. Used with the handle of another process
/// or run (an area kept in a `thread_local` from one run to the next, say),
/// the methods of [`Bsp`] that take it return [`ErrorKind::ForeignArea`],
/// and its accessors panic.
///
/// # Examples
///
/// ```
/// let sums = bsplib::run(3, |bsp| {
///     let mut x = bsplib::Area::<u32>::new(bsp, 1);
///     x.as_mut_slice(bsp)[0] = bsp.pid() as u32 + 1;
///     bsp.push_reg(&x)?;
///     bsp.sync()?;
///     let right = (bsp.pid() + 1) % bsp.nprocs();
///     let mine = x.as_slice(bsp)[0];
///     bsp.put(right, &x, 0, &[mine])?;
///     bsp.sync()?;
///     Ok(x.as_slice(bsp)[0])
/// })?;
/// assert_eq!(sums, vec![3, 1, 2]);
/// # Ok::<(), bsplib::Error>(())
/// ```
pub struct Area<T: Pod> {
    storage: Rc<Storage<T>>,
    // An `Area` must not leave its process's thread.
    _not_send: PhantomData<*mut T>,
}

impl<T: Pod> Area<T> {
    /// A new area of `len` zeroed elements, belonging to the process of
    /// `bsp` in its run.
    ///
    /// On `processes`, an area of 4 KiB or more lives in memory the run's
    /// processes share (mapped before the fork), so that hpputs from it
    /// and gets of it are one copy by the receiver; elsewhere on the heap.
    pub fn new(bsp: &Bsp, len: usize) -> Self {
        match Cells::shared(bsp, len, |_| {}) {
            Some(cells) => Self::with(bsp, cells),
            None => Self::from_vec(bsp, vec![T::zeroed(); len]),
        }
    }

    /// A new area holding `values`, belonging to the process of `bsp` in
    /// its run (the vector's memory itself, except where
    /// [`new`](Area::new) says the area goes elsewhere).
    pub fn from_vec(bsp: &Bsp, values: Vec<T>) -> Self {
        if let Some(cells) = Cells::shared(bsp, values.len(), |c| c.copy_from_slice(&values)) {
            return Self::with(bsp, cells);
        }
        let cells: Box<[UnsafeCell<T>]> = values.into_iter().map(UnsafeCell::new).collect();
        Self::with(bsp, Cells::Heap(cells))
    }

    /// A new area holding a copy of `values`, belonging to the process of
    /// `bsp` in its run.
    pub fn from_slice(bsp: &Bsp, values: &[T]) -> Self {
        match Cells::shared(bsp, values.len(), |c| c.copy_from_slice(values)) {
            Some(cells) => Self::with(bsp, cells),
            None => Self::from_vec(bsp, values.to_vec()),
        }
    }

    fn with(bsp: &Bsp, cells: Cells<T>) -> Self {
        Area {
            storage: Rc::new(Storage::new(cells, bsp.owner())),
            _not_send: PhantomData,
        }
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.storage.cells.len()
    }

    /// True when the area has no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.storage.cells.is_empty()
    }

    /// Size in bytes.
    #[inline]
    pub fn size_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.storage.cells)
    }

    /// The local contents, valid until the handle is used mutably (by
    /// [`Bsp::sync`]).
    ///
    /// # Panics
    ///
    /// If `bsp` is not the handle of the process and run that created the
    /// area: the borrow of `bsp` guards the area only against the syncs of
    /// its own run.
    #[inline]
    #[track_caller]
    pub fn as_slice<'a>(&'a self, bsp: &'a Bsp) -> &'a [T] {
        self.assert_owner(bsp, "as_slice");
        // SAFETY: other processes and the sync only touch this memory
        // inside `Bsp::sync`, which needs `&mut Bsp` and so cannot run while
        // the returned borrow of `bsp` lives (the unsafe hp operations
        // aside, whose callers promise not to race). `UnsafeCell<T>` has the
        // layout of `T`.
        unsafe { std::slice::from_raw_parts(self.storage.cells.as_ptr().cast(), self.len()) }
    }

    /// The local contents, mutably.
    ///
    /// # Panics
    ///
    /// As for [`as_slice`](Area::as_slice).
    #[inline]
    #[track_caller]
    pub fn as_mut_slice<'a>(&'a mut self, bsp: &'a Bsp) -> &'a mut [T] {
        self.assert_owner(bsp, "as_mut_slice");
        // SAFETY: as in `as_slice` (the same owner check); `&mut self` excludes other local views
        // of this area (clones of the storage `Rc` are held only by the
        // library, which touches it only inside `Bsp::sync`, and by
        // `AreaRef`s, which make views only inside active-message
        // handlers, which run only inside the `&mut Bsp` calls).
        unsafe {
            std::slice::from_raw_parts_mut(
                UnsafeCell::raw_get(self.storage.cells.as_ptr()),
                self.len(),
            )
        }
    }

    /// A copy of the local contents.
    ///
    /// # Panics
    ///
    /// As for [`as_slice`](Area::as_slice).
    #[track_caller]
    pub fn to_vec(&self, bsp: &Bsp) -> Vec<T> {
        self.assert_owner(bsp, "to_vec");
        self.as_slice(bsp).to_vec()
    }

    /// The run and process that created the area.
    #[inline]
    pub(crate) fn owner(&self) -> (u64, usize) {
        self.storage.owner
    }

    /// Panics unless `bsp` is the handle of the area's process and run.
    #[inline]
    #[track_caller]
    fn assert_owner(&self, bsp: &Bsp, method: &str) {
        if self.owner() != bsp.owner() {
            self.foreign(bsp, method)
        }
    }

    #[cold]
    #[inline(never)]
    #[track_caller]
    fn foreign(&self, bsp: &Bsp, method: &str) -> ! {
        let ((created_run, created_pid), (run, pid)) = (self.owner(), bsp.owner());
        panic!(
            "Area::{method}: this area ({} elements at {:#x}) was created by process \
             {created_pid} of run {created_run}, and is used with the handle of process \
             {pid} of run {run}: an area belongs to the process and run that created it",
            self.len(),
            self.addr()
        )
    }

    /// Address of the first element: the area's identity for registration.
    #[inline]
    pub(crate) fn addr(&self) -> usize {
        self.storage.addr()
    }

    /// Pointer for the library's writes at the sync (never dereferenced
    /// for an area of zero bytes).
    #[inline]
    pub(crate) fn ptr(&self) -> *mut u8 {
        UnsafeCell::raw_get(self.storage.cells.as_ptr()).cast()
    }

    /// A keepalive for the storage.
    #[inline]
    pub(crate) fn keepalive(&self) -> Rc<dyn std::any::Any> {
        self.storage.clone()
    }

    /// The elements `range` of this area, as the destination of a get
    /// ([`Bsp::get`], [`Epoch::get`](crate::Epoch::get),
    /// [`Lock::get`](crate::Lock::get)): the get writes `range.len()`
    /// elements there at the sync. `&area` stands for the whole area.
    ///
    /// The range is checked by the get that uses it
    /// ([`ErrorKind::LocalBounds`]), which names the call and line; this
    /// method never panics.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(2, |bsp| {
    ///     let x = bsplib::Area::from_vec(bsp, vec![bsp.pid() as u8; 4]);
    ///     let y = bsplib::Area::<u8>::new(bsp, 4);
    ///     bsp.push_reg(&x)?;
    ///     bsp.sync()?;
    ///     // Elements 1..3 of the other process's `x` into y[2..4].
    ///     bsp.get(1 - bsp.pid(), &x, 1, y.range(2..))?;
    ///     bsp.sync()?;
    ///     Ok(y.to_vec(bsp))
    /// })?;
    /// assert_eq!(r, vec![vec![0, 0, 1, 1], vec![0, 0, 0, 0]]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    pub fn range(&self, range: impl RangeBounds<usize>) -> AreaRange<'_, T> {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.saturating_add(1),
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.len(),
        };
        AreaRange {
            area: self,
            start,
            end,
        }
    }

    /// A handle on this area for active-message handlers
    /// ([`crate::am`]), which are `'static` closures: it names the area
    /// in a [`Landing`](crate::am::Landing) and gives its elements to a
    /// completion handler ([`Done::area_mut`](crate::am::Done::area_mut)),
    /// and makes no view by itself.
    pub fn am_ref(&self) -> AreaRef<T> {
        AreaRef {
            storage: self.storage.clone(),
            _not_send: PhantomData,
        }
    }
}

/// Elements of an [`Area`], the destination of a get: `&area` (all of
/// it) or [`area.range(a..b)`](Area::range).
pub struct AreaRange<'a, T: Pod> {
    pub(crate) area: &'a Area<T>,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

impl<T: Pod> Clone for AreaRange<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Pod> Copy for AreaRange<'_, T> {}

impl<'a, T: Pod> From<&'a Area<T>> for AreaRange<'a, T> {
    fn from(area: &'a Area<T>) -> Self {
        area.range(..)
    }
}

impl<T: Pod> AreaRange<'_, T> {
    /// Number of elements (zero for a range whose end precedes its start,
    /// which a get refuses).
    pub fn len(&self) -> usize {
        self.end.saturating_sub(self.start)
    }

    /// True when the range has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T: Pod> fmt::Debug for AreaRange<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}[{}..{}]", self.area, self.start, self.end)
    }
}

/// A handle on an [`Area`] for active-message handlers ([`Area::am_ref`]).
/// It keeps the storage alive and belongs to the area's process and run;
/// views of the elements exist only inside handlers
/// ([`Arrival::area`](crate::am::Arrival::area),
/// [`Done::area_mut`](crate::am::Done::area_mut)), which run inside the
/// `&mut Bsp` calls, when no other view can be alive.
pub struct AreaRef<T: Pod> {
    storage: Rc<Storage<T>>,
    _not_send: PhantomData<*mut T>,
}

impl<T: Pod> Clone for AreaRef<T> {
    fn clone(&self) -> Self {
        AreaRef {
            storage: self.storage.clone(),
            _not_send: PhantomData,
        }
    }
}

impl<T: Pod> fmt::Debug for AreaRef<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AreaRef").field("len", &self.len()).finish()
    }
}

impl<T: Pod> AreaRef<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.storage.cells.len()
    }

    /// True when the area has no elements.
    pub fn is_empty(&self) -> bool {
        self.storage.cells.is_empty()
    }

    pub(crate) fn owner(&self) -> (u64, usize) {
        self.storage.owner
    }

    pub(crate) fn ptr(&self) -> *mut u8 {
        UnsafeCell::raw_get(self.storage.cells.as_ptr()).cast()
    }

    pub(crate) fn size_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.storage.cells)
    }

    pub(crate) fn keepalive(&self) -> Rc<dyn std::any::Any> {
        self.storage.clone()
    }
}

impl<T: Pod> fmt::Debug for Area<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (run, pid) = self.owner();
        f.debug_struct("Area")
            .field("addr", &format_args!("{:#x}", self.addr()))
            .field("len", &self.len())
            .field("run", &run)
            .field("pid", &pid)
            .finish()
    }
}
