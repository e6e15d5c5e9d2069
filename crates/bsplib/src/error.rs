//! Errors: every misuse BSPlib calls an error, as a value.
//!
//! An [`Error`] names the BSPlib call that failed (`bsp_put`, `bsp_sync`, ...),
//! the process that made it, the superstep it was made in and, where the call
//! came from Rust, the caller's source location. Its [`ErrorKind`] says what
//! went wrong. The C interface turns the same value into an abort message.

use std::fmt;
use std::panic::Location;

/// Where a BSPlib call was made: the Rust caller (through
/// `#[track_caller]`), or the C caller's `__FILE__` and `__LINE__` (passed
/// by the macros of `bsp.h`). C locations have no column (`column() == 0`).
#[derive(Clone, Copy)]
pub struct SourceLocation {
    file: File,
    line: u32,
    column: u32,
}

/// A source file name: a Rust string, or a C string read only when needed
/// (errors), so that passing `__FILE__` with every call costs nothing.
#[derive(Clone, Copy)]
enum File {
    Rust(&'static str),
    C(CFile),
}

#[derive(Clone, Copy)]
struct CFile(*const std::ffi::c_char);

// SAFETY: a `CFile` points to a string that is never written and lives for
// the rest of the program (the contract of `SourceLocation::from_c`).
unsafe impl Send for CFile {}
// SAFETY: as above.
unsafe impl Sync for CFile {}

impl SourceLocation {
    /// A location from its parts; `column` 0 means unknown.
    pub fn new(file: &'static str, line: u32, column: u32) -> Self {
        SourceLocation {
            file: File::Rust(file),
            line,
            column,
        }
    }

    /// The location a C caller passed (`__FILE__`, `__LINE__`); `None` for
    /// a null `file`.
    ///
    /// # Safety
    ///
    /// A non-null `file` must point to a NUL-terminated string that stays
    /// valid and unchanged for the rest of the program, as a string literal
    /// such as `__FILE__` does.
    pub unsafe fn from_c(file: *const std::ffi::c_char, line: i32) -> Option<Self> {
        (!file.is_null()).then(|| SourceLocation {
            file: File::C(CFile(file)),
            line: u32::try_from(line).unwrap_or(0),
            column: 0,
        })
    }

    /// The location of the caller of the function this is called in (with
    /// `#[track_caller]` along the way).
    #[track_caller]
    #[inline]
    pub fn caller() -> Self {
        Location::caller().into()
    }

    /// The source file.
    pub fn file(&self) -> &'static str {
        match self.file {
            File::Rust(s) => s,
            // SAFETY: the contract of `from_c`.
            File::C(CFile(p)) => unsafe { std::ffi::CStr::from_ptr(p) }
                .to_str()
                .unwrap_or("<a file name that is not UTF-8>"),
        }
    }

    /// The line, from 1.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The column, from 1; 0 when unknown (calls from C).
    pub fn column(&self) -> u32 {
        self.column
    }
}

impl PartialEq for SourceLocation {
    fn eq(&self, other: &Self) -> bool {
        (self.file(), self.line, self.column) == (other.file(), other.line, other.column)
    }
}

impl Eq for SourceLocation {}

impl std::hash::Hash for SourceLocation {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.file(), self.line, self.column).hash(state)
    }
}

impl fmt::Debug for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl From<&'static Location<'static>> for SourceLocation {
    fn from(loc: &'static Location<'static>) -> Self {
        SourceLocation::new(loc.file(), loc.line(), loc.column())
    }
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file(), self.line)?;
        if self.column != 0 {
            write!(f, ":{}", self.column)?;
        }
        Ok(())
    }
}

/// `OutOfBounds`'s message: in elements of `elem` bytes (bytes in
/// parentheses), or in bytes for the pointer API.
fn out_of_bounds(
    remote: usize,
    offset: usize,
    nbytes: usize,
    extent: usize,
    elem: usize,
) -> String {
    let end = offset.saturating_add(nbytes);
    if elem <= 1 {
        return format!(
            "offset {offset} + nbytes {nbytes} = {end} exceeds the {extent} bytes registered on process {remote}"
        );
    }
    format!(
        "offset {} + {} elements = {} exceeds the {} elements registered on process {remote} \
         (bytes: {offset} + {nbytes} = {end} > {extent})",
        offset / elem,
        nbytes / elem,
        end / elem,
        extent / elem
    )
}

/// `LocalBounds`'s message, in elements as [`out_of_bounds`].
fn local_bounds(what: &str, needed: usize, available: usize, elem: usize) -> String {
    if elem <= 1 {
        return format!("the {what} has {available} bytes, the transfer needs {needed}");
    }
    format!(
        "the {what} has {} elements, the transfer needs {} ({available} bytes, {needed} needed)",
        available / elem,
        needed / elem
    )
}

/// What went wrong. Carried inside an [`Error`], which adds where and when.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A process id outside `0..nprocs`.
    #[error("process id {pid} is out of range (there are {nprocs} processes, 0..{})", .nprocs.saturating_sub(1))]
    PidOutOfRange {
        /// The pid that was given.
        pid: i64,
        /// The number of processes.
        nprocs: usize,
    },
    /// A size, offset or count that must not be negative was negative.
    #[error("{what} is negative ({value})")]
    Negative {
        /// Which argument (`nbytes`, `offset`, `size`, ...).
        what: &'static str,
        /// The value given.
        value: i64,
    },
    /// An offset or length so large that it does not fit the address space.
    #[error("{what} overflows the address space")]
    Overflow {
        /// Which argument.
        what: &'static str,
    },
    /// The local address named by a put, get or pop has no live registration
    /// slot on this process.
    #[error("{}", not_registered(*.addr))]
    NotRegistered {
        /// The local address, as an integer.
        addr: usize,
    },
    /// The registration slot exists, but the remote process registered `NULL`
    /// in it (or a zero-size area that the transfer does not fit).
    #[error(
        "process {remote} registered NULL in this registration slot: its area is unregistered"
    )]
    RemoteNull {
        /// The remote process.
        remote: usize,
    },
    /// `offset + nbytes` exceeds the extent the remote process registered.
    /// A typed call's message counts elements, with the bytes in
    /// parentheses.
    #[error("{}", out_of_bounds(*.remote, *.offset, *.nbytes, *.extent, *.elem))]
    OutOfBounds {
        /// The remote process whose area is too small.
        remote: usize,
        /// Offset of the transfer, in bytes.
        offset: usize,
        /// Length of the transfer, in bytes.
        nbytes: usize,
        /// Extent registered on `remote`, in bytes.
        extent: usize,
        /// The size of one element in bytes: `size_of::<T>()` for a typed
        /// call, 1 for the pointer API (whose messages count bytes).
        elem: usize,
    },
    /// A local buffer handed to a typed call is too small for the transfer.
    #[error("{}", local_bounds(what, *.needed, *.available, *.elem))]
    LocalBounds {
        /// What the buffer is (`destination`, `tag`, ...).
        what: &'static str,
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        available: usize,
        /// The size of one element in bytes, as for
        /// [`OutOfBounds`](ErrorKind::OutOfBounds).
        elem: usize,
    },
    /// The processes did not make the same sequence of collective
    /// registration calls (`bsp_push_reg` / `bsp_pop_reg`) in a superstep.
    #[error("registration calls differ between processes: {detail}")]
    RegistrationMismatch {
        /// A sentence saying how the sequences differ.
        detail: String,
    },
    /// The processes did not call `bsp_set_tagsize` alike in a superstep.
    #[error("bsp_set_tagsize calls differ between processes: {detail}")]
    TagSizeMismatch {
        /// A sentence saying how the calls differ.
        detail: String,
    },
    /// `bsp_send` was given a tag whose length is not the tag size in force.
    #[error("the tag has {given} bytes but the tag size for messages sent in this superstep is {expected}")]
    TagLength {
        /// Length of the tag given.
        given: usize,
        /// Tag size in force for messages sent in this superstep.
        expected: usize,
    },
    /// `bsp_move` (or a typed receive) on an empty message queue.
    #[error("the message queue is empty")]
    EmptyQueue,
    /// `bsp_begin` asked for zero processes, or the engine cannot give any.
    #[error("at least one process is needed")]
    NoProcesses,
    /// A BSPlib run was started inside another run (nested parallelism is
    /// not part of BSPlib).
    #[error(
        "a BSPlib run cannot be started inside another (one bsp_begin/bsp_end pair per program)"
    )]
    Nested,
    /// The engine could not be started (e.g. threads could not be spawned).
    #[error("the engine could not start: {detail}")]
    Startup {
        /// What failed.
        detail: String,
    },
    /// The user called `bsp_abort`.
    #[error("aborted: {message}")]
    Aborted {
        /// The user's message.
        message: String,
    },
    /// A process panicked.
    #[error("panicked: {message}")]
    Panicked {
        /// The panic message.
        message: String,
    },
    /// A process returned from its SPMD function while other processes were
    /// waiting for it in `bsp_sync`.
    #[error("process {ended} returned from the SPMD function (bsp_end) while this process waits in bsp_sync")]
    ProcessEnded {
        /// The process that ended.
        ended: usize,
    },
    /// This process was stopped because another process failed; the error
    /// of the run is the other process's.
    #[error("the run was stopped by an error on another process")]
    Stopped,
    /// A BSPlib call made outside `bsp_begin` ... `bsp_end` (C interface).
    #[error("called outside bsp_begin ... bsp_end")]
    OutsideRun,
    /// A pointer argument that must not be null was null (C interface).
    #[error("{what} is NULL")]
    NullPointer {
        /// Which argument.
        what: &'static str,
    },
    /// A value does not fit the C interface's `int` (C interface).
    #[error("{what} ({value}) does not fit in an int")]
    IntOverflow {
        /// Which value.
        what: &'static str,
        /// The value.
        value: u64,
    },
    /// A process died without reaching `bsp_end`: killed by a signal, or
    /// it exited (`processes` engine).
    #[error("{detail}")]
    Died {
        /// What happened, e.g. `process 1 was killed by signal 9 (SIGKILL)`.
        detail: String,
    },
    /// A process waited in `bsp_sync` (or another wait of the library: a
    /// counter, a fence, an epoch, a lock) longer than the run's deadline
    /// ([`Runtime::deadline`](crate::Runtime::deadline), `BSPLIB_DEADLINE`).
    #[error("waited {}.{:03} s (the run's deadline): {laggards}", .limit_ms / 1000, .limit_ms % 1000)]
    Deadline {
        /// The deadline, in milliseconds.
        limit_ms: u64,
        /// The processes that never arrived and where each was last seen.
        laggards: String,
    },
    /// Memory for this call's data could not be allocated.
    #[error("cannot allocate {bytes} bytes for this call's data")]
    OutOfMemory {
        /// The bytes asked for.
        bytes: usize,
    },
    /// A BSPlib call made from a thread that is not a BSP process (a
    /// thread the program created itself), or from a process the program
    /// forked itself.
    #[error("called from {what}, which is not a BSP process: only the processes bsp_begin started may make BSPlib calls")]
    NotABspProcess {
        /// `a thread the program created`, `a process the program forked`.
        what: &'static str,
    },
    /// One superstep's traffic from one process exceeds what the engine can
    /// hold (the `processes` engine reserves a fixed address range per
    /// process).
    #[error("this superstep's traffic needs {needed} bytes; the engine holds {capacity} per process and superstep")]
    Capacity {
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        capacity: usize,
    },
    /// A record another process sent names memory this process does not
    /// have: a registration slot that does not exist here, a range beyond
    /// this process's area in that slot, or a slot where this process
    /// registered `NULL`. The owner of the memory checks every record
    /// against its own registrations before it reads or writes; a sender
    /// following the protocol never sends such a record (its own checks
    /// report the error at the call), so this means a corrupted or forged
    /// stream.
    #[error("a {what} record from process {sender} {detail}: refused by the process that owns the memory")]
    InvalidRecord {
        /// `put`, `hpput` or `get`.
        what: &'static str,
        /// The process that sent the record.
        sender: usize,
        /// What is wrong with it.
        detail: String,
    },
    /// A `processes` run was started from a program with other threads:
    /// the fork would copy the locks those threads hold, held, into the
    /// forked processes, where nothing would ever release them. Refused
    /// unless the caller vouches for its threads
    /// ([`Runtime::fork_with_threads`](crate::Runtime::fork_with_threads)).
    #[error("the processes engine forks, and this program has {threads} threads: a lock another thread holds at the fork would stay locked forever in the forked processes; start the run before starting threads, use the threads engine, or vouch for the threads with Runtime::fork_with_threads")]
    ThreadsAtFork {
        /// The threads of the calling OS process at the fork, the caller's
        /// included.
        threads: usize,
    },
    /// An [`Area`](crate::Area) used with the handle of another process or
    /// another run than the one that created it (kept in a `thread_local`
    /// from one run to the next, say). An area belongs to the process and
    /// run that created it.
    #[error("{}", foreign_area(*.created_run, *.created_pid, *.run))]
    ForeignArea {
        /// The run the area was created in.
        created_run: u64,
        /// The process that created it.
        created_pid: usize,
        /// The run of the handle it was used with (the process is the
        /// error's).
        run: u64,
    },
    /// The blocks of a strided destination overlap (a stride shorter than
    /// the block), so the result would depend on the order of the copies.
    #[error("the destination's blocks overlap: its stride of {stride} bytes is less than the block of {block} bytes")]
    OverlappingBlocks {
        /// The block, in bytes.
        block: usize,
        /// The destination's stride, in bytes.
        stride: usize,
    },
    /// An active message refused at the send ([`crate::am`]), with the LAPI
    /// return code a C caller would get.
    #[error("{code}: {detail}")]
    AmArgument {
        /// The LAPI code (`LAPI_ERR_TGT`, `LAPI_ERR_UHDR_LEN`, ...).
        code: &'static str,
        /// What was wrong.
        detail: String,
    },
    /// An active message that broke a rule on its target (the target
    /// finds it while handling the message: its handler's landing does not
    /// fit the data, it names an unknown handler or counter).
    #[error("active message {seq} from process {origin}: {reason}")]
    AmTarget {
        /// The origin.
        origin: usize,
        /// Its sequence number from that origin (from 1).
        seq: u64,
        /// The rule broken.
        reason: String,
    },
    /// A collective ([`Collectives::broadcast`](crate::Collectives::broadcast), ...) that
    /// the processes did not call alike: another collective, root, size or
    /// named operator on another process, or a plain sync there.
    #[error("collective calls differ between processes: {detail}")]
    CollectiveMismatch {
        /// Which processes and calls disagree, and how.
        detail: String,
    },
    /// Active-message mode misused: `am_init` or `am_term` called by some
    /// processes only, twice, or an active-message call outside the mode.
    #[error("active messages: {detail}")]
    AmMismatch {
        /// What happened.
        detail: String,
    },
    /// An operator of an accumulate or a reduction that is not defined on
    /// the element type (a bitwise operator on floats, `MinLoc` on a
    /// plain number, `Sum` on a value–index pair: see [`Op`](crate::Op)).
    #[error("the operator {op} is not defined on elements of type {ty}")]
    AccumulateOperator {
        /// The operator's name.
        op: &'static str,
        /// The element type's name.
        ty: &'static str,
    },
    /// Accumulates into one registered area in one superstep with
    /// different operators or element types (from one process, found at
    /// the second call; from two, found by the owner at the sync).
    #[error("accumulates into one area in one superstep must use one operator and one element type: {detail}")]
    AccumulateMismatch {
        /// Which accumulates disagree, and where they were made.
        detail: String,
    },
    /// A one-sided epoch (`Bsp::epoch`, `Bsp::lock`; C `bsp_win_post`,
    /// `bsp_win_start`, `bsp_lock`) is open where it may not be: a sync
    /// (or a collective) while one is open, or a second epoch of the same
    /// kind on the same area (and, for a lock, the same target).
    #[error("a one-sided epoch is open: {detail}")]
    EpochOpen {
        /// Which epoch, and the call that opened it.
        detail: String,
    },
    /// A one-sided call with no epoch to act in: `complete` without
    /// `start`, `wait` without `post`, `unlock` without `lock`, a transfer
    /// into an area with an access epoch open to a process outside its
    /// group, or any of these calls outside one-sided mode.
    #[error("no such one-sided epoch: {detail}")]
    NoEpoch {
        /// What was asked, and what is open.
        detail: String,
    },
    /// The other side of an epoch can never come: a `start` naming a
    /// process that entered its sync (or ended) without posting to this
    /// one, a `wait` for an origin that did so without completing, a lock
    /// or unlock waiting for a process that ended.
    #[error("one-sided epoch not matched: {detail}")]
    EpochUnmatched {
        /// Which process, and what it did instead.
        detail: String,
    },
    /// An element type or operator id of an accumulate that names none
    /// (the C interface's `bsp_type` and `bsp_op`).
    #[error("{value} is not a known accumulate {what}")]
    AccumulateUnknown {
        /// `element type` or `operator`.
        what: &'static str,
        /// The id given.
        value: i64,
    },
    /// The source and the destination of a strided transfer hold different
    /// numbers of bytes.
    #[error(
        "the source's blocks hold {src} bytes and the destination's {dst}: they must hold the same"
    )]
    ShapeMismatch {
        /// Bytes in the source's blocks.
        src: usize,
        /// Bytes in the destination's blocks.
        dst: usize,
    },
    /// Checking mode (`BSPLIB_CHECK=1`, `bsprun --check`,
    /// [`Runtime::check`](crate::Runtime::check)), the Oxford check-syncs:
    /// two processes ended the superstep at syncs at different source
    /// lines. The error's superstep is the one those syncs ended.
    #[error(
        "check-syncs: process {} ended the superstep at the sync at {}, process {} at the \
         sync at {}: every process must end a superstep at the same bsp_sync",
        .syncs[0].0, .syncs[0].1, .syncs[1].0, .syncs[1].1
    )]
    SyncMismatch {
        /// The two processes and where their syncs are (`file:line`): the
        /// process of least pid whose sync was checked, and the first
        /// whose sync is elsewhere.
        syncs: Box<[(usize, String); 2]>,
    },
    /// Checking mode: puts (or hpputs) from two processes wrote overlapping
    /// bytes of one area in one superstep, where BSPlib leaves their order
    /// undefined (or, in one exposure epoch of an area or a window, puts
    /// from two origins, or a put and an accumulate). Found by the owner
    /// of the memory; the error's superstep is the puts'.
    #[error(
        "overlapping puts (their order is undefined): process {}'s {} and process {}'s {} \
         both write bytes {}..{} of {} on process {}",
        .puts[0].0, .puts[0].1, .puts[1].0, .puts[1].1, .bytes.start, .bytes.end,
        overlap_memory(*.slot), .owner
    )]
    OverlappingPuts {
        /// The process that owns the memory.
        owner: usize,
        /// The area's registration slot (push order, from 0), or
        /// `u64::MAX` for the owner's memory of a window.
        slot: u64,
        /// The bytes of the area both write (an overlap found: there may
        /// be more).
        bytes: std::ops::Range<usize>,
        /// The two writers and their calls: `(pid, "bsp_put at
        /// file:line")` (`bsp_hpput`, `bsp_put_strided`, ...).
        puts: Box<[(usize, String); 2]>,
    },
    /// Checking mode: this process changed an hpput's source, or an
    /// hpget's destination, between the call and the sync that carries it
    /// out (found by a hash at the call and at the sync).
    #[error(
        "the {what} of the {call} at {} ({len} bytes) changed between the call and the \
         sync at {}: the program wrote it before the sync",
        .places[0], .places[1]
    )]
    HpRegionChanged {
        /// `bsp_hpput` or `bsp_hpget`.
        call: &'static str,
        /// `source` or `destination`.
        what: &'static str,
        /// The region's bytes.
        len: usize,
        /// Where the call was made, and where the sync was called.
        places: Box<[String; 2]>,
    },
    /// A fence hint ([`Hints`](crate::Hints), `bsp_sync_hint`) that was
    /// false: `NO_SUCCEED` at the transfer call that breaks it (always);
    /// `NO_PRECEDE` and `NO_PUT` at the hinted sync, in the checking mode.
    /// Also (hint `flags`) C flags with a bit that names no hint.
    #[error("the fence hint {hint} {detail}")]
    HintViolated {
        /// `NO_PRECEDE`, `NO_SUCCEED`, `NO_PUT`, or `flags`.
        hint: &'static str,
        /// What happened instead (which call, origin and line).
        detail: String,
    },
    /// The engine's transport refused an operation (on `mpi`, an MPI call
    /// of a window returned an error code instead of ending the job).
    #[error("the transport failed: {detail}")]
    Transport {
        /// Which MPI function, its error code and MPI's own words.
        detail: String,
    },
}

fn foreign_area(created_run: u64, created_pid: usize, run: u64) -> String {
    if created_run == run {
        format!(
            "the area belongs to process {created_pid}, which created it: \
             an area is used only by the process that created it"
        )
    } else {
        format!(
            "the area was created by process {created_pid} of run {created_run}, \
             and is used in run {run}: an area belongs to the run that created it \
             (make new areas in each run)"
        )
    }
}

fn not_registered(addr: usize) -> String {
    if addr == 0 {
        "the address is NULL, which names no registered area (a NULL registration, \
         bsp_push_reg(NULL, ...), says this process has no area in that slot; \
         name the slot by the address another process registered)"
            .into()
    } else {
        format!(
            "address {addr:#x} is not registered (bsp_push_reg it, then bsp_sync, before using it)"
        )
    }
}

/// A BSPlib error: what went wrong, in which call, on which process, in which
/// superstep, and (for calls made from Rust) at which source line.
///
/// Supersteps are numbered from 0: the code before the first `sync` is
/// superstep 0.
///
/// `Debug` prints what `Display` does (so an `Error` returned from `main`
/// reads as a sentence); `{:#?}` prints the fields.
///
/// # Examples
///
/// ```
/// let err = bsplib::Runtime::new(1)
///     .run(|bsp| bsp.put(3, &bsplib::Area::<u8>::new(bsp, 1), 0, &[1u8]))
///     .unwrap_err();
/// assert_eq!(format!("{err:?}"), format!("{err}"));
/// assert!(format!("{err:#?}").starts_with("Error {"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    call: &'static str,
    pid: usize,
    superstep: u64,
    location: Option<SourceLocation>,
}

impl Error {
    /// An error: `kind`, in `call`, on process `pid`, in `superstep`, at
    /// `location`. For front doors outside this crate (the C interface:
    /// a call outside a run, a null pointer); errors of the library are
    /// made by the library.
    #[doc(hidden)]
    pub fn new(
        kind: ErrorKind,
        call: &'static str,
        pid: usize,
        superstep: u64,
        location: Option<SourceLocation>,
    ) -> Self {
        Error {
            kind,
            call,
            pid,
            superstep,
            location,
        }
    }

    /// The error of an engine that could not start.
    pub(crate) fn startup(detail: String, location: Option<SourceLocation>) -> Self {
        Self::new(ErrorKind::Startup { detail }, "bsp_begin", 0, 0, location)
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The BSPlib call that reported the error, by its C name (`bsp_put`).
    pub fn call(&self) -> &'static str {
        self.call
    }

    /// The process that made the call.
    pub fn pid(&self) -> usize {
        self.pid
    }

    /// The superstep the call was made in (the first superstep is 0).
    pub fn superstep(&self) -> u64 {
        self.superstep
    }

    /// Where the call was made, when known (Rust callers; C callers through
    /// the macros of `bsp.h`).
    pub fn location(&self) -> Option<SourceLocation> {
        self.location
    }

    /// True for the secondary error a process gets when the run was stopped
    /// by a failure elsewhere.
    pub fn is_stopped(&self) -> bool {
        matches!(self.kind, ErrorKind::Stopped)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (process {}, superstep {}",
            self.call, self.pid, self.superstep
        )?;
        if let Some(loc) = self.location {
            write!(f, ", {loc}")?;
        }
        write!(f, "): {}", self.kind)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !f.alternate() {
            return fmt::Display::fmt(self, f);
        }
        f.debug_struct("Error")
            .field("kind", &self.kind)
            .field("call", &self.call)
            .field("pid", &self.pid)
            .field("superstep", &self.superstep)
            .field("location", &self.location)
            .finish()
    }
}

impl std::error::Error for Error {}

/// The memory an [`ErrorKind::OverlappingPuts`] names.
fn overlap_memory(slot: u64) -> String {
    if slot == u64::MAX {
        "its memory of a window".into()
    } else {
        format!("the area in registration slot {slot}")
    }
}

/// Writes `line` (a whole line, its newline included) to standard error
/// in one `write`, retrying short writes: a line of the library is never
/// cut into pieces that interleave with other processes' output (on one
/// host, or relayed from several), and no lock of the standard library
/// is taken (this runs at exit too). `eprintln!` writes each formatted
/// piece on its own.
pub(crate) fn eprint_line(line: &str) {
    let mut bytes = line.as_bytes();
    while !bytes.is_empty() {
        // SAFETY: writes from a live buffer to a descriptor.
        let n = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            return;
        }
        bytes = &bytes[n as usize..];
    }
}
