//! Collectives (the paper's Appendix A): broadcast, gather, scatter,
//! all-gather, all-to-all, reductions and scans, typed and safe, with no
//! user-visible registration. The design is in `COLLECTIVES.md` beside this
//! file.
//!
//! Each collective ends the superstep like [`Bsp::sync`] (the puts, gets
//! and sends issued before it are executed by it, and the message queue
//! afterwards holds the messages of the superstep it ended) and uses one
//! superstep. Its data travels as *collective records* in the message
//! section of the streams, read into a queue of the library's; each
//! process also sends its right neighbour a descriptor of its call
//! (collective, root, size, named operator, source location), so that a
//! collective called by some processes only, or with another root, size
//! or operator, fails the run naming both calls.
//!
//! Reductions and scans combine in pid order from the left, `x0 ⊕ x1 ⊕ …`,
//! element by element, on every process and engine: an associative
//! operator that does not commute gives a defined result, and
//! floating-point results are the same on every engine and run.

use bytemuck::Pod;

use crate::bsp::Bsp;
use crate::error::{Error, ErrorKind};
use crate::process::{Loc, Process};
use crate::rma::Op;

mod algorithm;
mod all_to_all;
mod broadcast;
mod descriptor;
mod gather;
#[cfg(feature = "raw")]
#[cfg_attr(docsrs, doc(cfg(feature = "raw")))]
pub mod level1;
mod native;
mod reduce;
mod scan;

pub use algorithm::Algorithm;
pub use reduce::Reducible;

use algorithm::Path;

#[cfg(doc)]
use reduce::fold_parts;

/// The collectives of a run ([`Bsp::collectives`]): broadcast, gather,
/// scatter, all-gather, all-to-all, reductions and scans, each called by
/// every process and each ending the superstep like [`Bsp::sync`].
///
/// The accessor borrows the handle mutably for the call, so compute what
/// the arguments need from it first: `let me = bsp.pid();
/// bsp.collectives().all_gather(&[me])`.
///
/// # Examples
///
/// ```
/// use bsplib::Op;
/// let r = bsplib::run(4, |bsp| {
///     let mut x = [bsp.pid() as u64 + 1];
///     bsp.collectives().all_reduce(&mut x, Op::Sum)?;
///     Ok(x[0])
/// })?;
/// assert_eq!(r, vec![10; 4]);
/// # Ok::<(), bsplib::Error>(())
/// ```
pub struct Collectives<'a> {
    bsp: &'a mut Bsp,
}

impl std::fmt::Debug for Collectives<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collectives").finish_non_exhaustive()
    }
}

impl Bsp {
    /// The collectives ([`Collectives`]): `bsp.collectives().all_reduce(&mut
    /// x, Op::Sum)?`. Each is called by every process and ends the
    /// superstep.
    pub fn collectives(&mut self) -> Collectives<'_> {
        Collectives { bsp: self }
    }
}

/// One process's collectives state: an extension slot of the process
/// (`extension.rs`), installed in every process, which also takes the
/// core's [`DESC`](crate::process::extension::DESC) hook point (the check that
/// every process made the same collective call).
#[derive(Default)]
pub(crate) struct CollState {
    /// How the collectives move large data
    /// ([`Collectives::set_algorithm`](crate::Collectives::set_algorithm)).
    algo: Algorithm,
    /// The receive buffer of MPI's own collectives (`native.rs`), kept at
    /// its largest size: words, so blocks of word-aligned element types
    /// are read in place.
    scratch: Vec<u64>,
    /// The bytes of the descriptor being sent, kept for reuse.
    desc: Vec<u8>,
}

/// Installs the collectives' state in a new process.
pub(crate) fn install(p: &mut Process) {
    p.install(CollState::default());
}

impl crate::process::extension::Slotted for CollState {
    const KEY: usize = 3;
}

impl crate::process::extension::Extension for CollState {
    fn wants(&self) -> u32 {
        crate::process::extension::DESC
    }

    fn desc_hash(&self, p: &Process) -> u64 {
        p.coll_check_hash()
    }

    fn desc_mismatch(&mut self, p: &mut Process, loc: Loc) -> Error {
        p.coll_check_error(loc)
    }

    fn desc_check(&mut self, p: &mut Process, loc: Loc) -> Result<(), Error> {
        p.check_collective(loc)
    }
}

impl Process {
    /// The collectives' buffer of kind `which` (taken out; give it back
    /// with [`give_buffer`](Process::give_buffer)).
    fn take_buffer<B: Default>(&mut self, which: fn(&mut CollState) -> &mut B) -> B {
        self.if_ext(|c: &mut CollState, _| std::mem::take(which(c)))
            .unwrap_or_default()
    }

    fn give_buffer<B>(&mut self, which: fn(&mut CollState) -> &mut B, buffer: B) {
        self.if_ext(|c: &mut CollState, _| *which(c) = buffer);
    }
}

/// The collectives, by the index their descriptors carry: the Rust
/// methods, then the C functions of `bsp_level1.h` (`level1`), so that
/// a mismatch names the call the program made.
pub(crate) const NAMES: [&str; 45] = [
    "broadcast",
    "gather",
    "scatter",
    "all_gather",
    "all_to_all",
    "reduce",
    "all_reduce",
    "scan",
    "exscan",
    "bsp_bcast",
    "bsp_gather",
    "bsp_scatter",
    "bsp_fold",
    "bsp_scan",
    "bsp_exchange",
    "bsp_all",
    "bsp_any",
    "bsp_sumI",
    "bsp_sumI_prefix",
    "bsp_sumR",
    "bsp_sumR_prefix",
    "bsp_sumD",
    "bsp_sumD_prefix",
    "bsp_productI",
    "bsp_productI_prefix",
    "bsp_productR",
    "bsp_productR_prefix",
    "bsp_productD",
    "bsp_productD_prefix",
    "bsp_minI",
    "bsp_minI_prefix",
    "bsp_minR",
    "bsp_minR_prefix",
    "bsp_minD",
    "bsp_minD_prefix",
    "bsp_maxI",
    "bsp_maxI_prefix",
    "bsp_maxR",
    "bsp_maxR_prefix",
    "bsp_maxD",
    "bsp_maxD_prefix",
    // `window/mod.rs`: KIND_NEW, KIND_FREE, KIND_NEW_C, KIND_FREE_C.
    "Window::new",
    "Window::free",
    "bsp_window_create",
    "bsp_window_free",
];

/// The first word of a collective record's payload.
const DESC: u64 = 0;
const DATA: u64 = 1;

/// The collective "index" of a plain sync in the checks of `mpi`.
const SYNC_KIND: u64 = u64::MAX;

/// The element size of a collective that splits its data into blocks of
/// whole elements (broadcasts, reductions), in bits 16..32 of the
/// descriptor's operator word: the same bytes in elements of another size
/// would make other blocks (and on `mpi` MPI calls whose sizes differ).
fn elem_size<T>() -> u64 {
    (std::mem::size_of::<T>() as u64 & 0xffff) << 16
}

/// Bits 16..32 of a descriptor's operator word ([`elem_size`]).
fn elem_of(word: u64) -> u64 {
    word >> 16 & 0xffff
}

/// What a collective checks and sends before its sync.
struct Call {
    kind: usize,
    root: usize,
    nbytes: usize,
    op: u64,
    path: Path,
}

impl Process {
    /// The data record of `len` bytes process `from` sent us in the last
    /// sync, if any (one of another length, which only a corrupted stream
    /// holds once the descriptors matched, counts as none).
    fn coll_data(&self, from: usize, len: usize) -> Option<&[u8]> {
        self.inbox.coll.iter().find_map(|&(src, m)| {
            // SAFETY: as in `descriptors`.
            let bytes = unsafe { std::slice::from_raw_parts(m.payload, m.len) };
            (src == from && bytes.get(..8) == Some(&DATA.to_ne_bytes()[..]) && m.len == 8 + len)
                .then(|| &bytes[8..])
        })
    }

    /// The data records of `len` bytes every other process sent us in the
    /// last sync, in pid order, `None` in this process's place (what
    /// [`fold_parts`] takes).
    fn coll_parts(
        &self,
        len: usize,
        name: &'static str,
        loc: Loc,
    ) -> Result<Vec<Option<&[u8]>>, Error> {
        (0..self.nprocs)
            .map(|q| {
                if q == self.pid {
                    Ok(None)
                } else {
                    self.coll_data(q, len)
                        .map(Some)
                        .ok_or_else(|| lost_p(self, name, q, loc))
                }
            })
            .collect()
    }

    /// Sends `data` to `to` as this collective's data record.
    fn coll_put(
        &mut self,
        to: usize,
        data: &[u8],
        call: &'static str,
        loc: Loc,
    ) -> Result<(), Error> {
        self.coll_send(to, DATA, data, call, loc)
    }
}

impl Bsp {
    /// The frame of every collective: checks, `send` (the data records),
    /// the descriptor to the right neighbour, the sync and its checks;
    /// then `read` gets the process to read what arrived.
    fn collective<R>(
        &mut self,
        call: Call,
        loc: Loc,
        send: impl FnOnce(&mut Process) -> Result<(), Error>,
        read: impl FnOnce(&Process) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let name = NAMES[call.kind];
        {
            let p = &mut *self.process();
            p.check_running(name, loc)?;
            if call.root >= p.nprocs {
                return Err(p.fail(
                    ErrorKind::PidOutOfRange {
                        pid: i64::try_from(call.root).unwrap_or(i64::MAX),
                        nprocs: p.nprocs,
                    },
                    name,
                    loc,
                ));
            }
            send(p)?;
            let fields = [
                call.kind as u64,
                call.root as u64,
                call.nbytes as u64,
                call.op | (call.path as u64) << 32,
            ];
            // On `mpi` barrier A checks the calls (`coll_check_hash`);
            // elsewhere the right neighbour compares this descriptor, sent
            // from a buffer kept for it (no allocation per call).
            if p.world.rendezvous().is_none() {
                let (file, line) = loc.map_or(("", 0), |l| (l.file(), l.line()));
                let mut desc = p.take_buffer(|c| &mut c.desc);
                desc.clear();
                for w in [fields[0], fields[1], fields[2], fields[3], u64::from(line)] {
                    desc.extend_from_slice(&w.to_ne_bytes());
                }
                desc.extend_from_slice(&(file.len() as u64).to_ne_bytes());
                desc.extend_from_slice(file.as_bytes());
                let right = (p.pid + 1) % p.nprocs;
                let sent = p.coll_send(right, DESC, &desc, name, loc);
                p.give_buffer(|c| &mut c.desc, desc);
                sent?;
            }
            p.sync_desc = Some((name, fields));
        }
        self.sync_at(loc)?;
        let p = &mut *self.process();
        p.check_library_wrote();
        read(p)
    }
}

/// The error of a collective whose data from `from` did not come (only
/// when the descriptors matched but the record is missing: a corrupted or
/// forged stream).
fn lost(bsp: &mut Bsp, name: &'static str, from: usize, loc: Loc) -> Error {
    lost_p(&bsp.process(), name, from, loc)
}

fn lost_p(p: &Process, name: &'static str, from: usize, loc: Loc) -> Error {
    p.fail_in_call(
        ErrorKind::CollectiveMismatch {
            detail: format!(
                "the data of {name} from process {from} did not come with the bytes of this \
                 process's call (it called another collective, or with another size)"
            ),
        },
        name,
        loc,
    )
}

/// The byte offsets of the blocks a collective of `m` elements of `T`
/// splits into for `p` processes: block `q` is `bounds(q) ..
/// bounds(q + 1)`, whole elements, the first `m mod p` blocks one element
/// shorter than the others at most.
fn block_bounds<T>(m: usize, p: usize) -> impl Fn(usize) -> usize {
    let size = std::mem::size_of::<T>();
    move |q: usize| ((q as u128 * m as u128 / p as u128) as usize) * size
}

/// The `T`s whose bytes are `b` (copied: `b` need not be aligned).
fn to_vec<T: Pod>(b: &[u8]) -> Vec<T> {
    let size = std::mem::size_of::<T>();
    if size == 0 {
        return Vec::new();
    }
    let n = b.len() / size;
    let mut v = vec![T::zeroed(); n];
    bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(&b[..n * size]);
    v
}
