//! The receives of active-message records, posted ahead (`am.rs`, module
//! docs; `README.md` beside this file, "Active messages").

use mpi::ffi;
use mpi::raw::AsRaw;

use super::am::TAG;
use super::progress;
use super::rendezvous::Request;

/// The receives of active-message records posted ahead (module docs):
/// two, so that the next record has a receive while the last is taken
/// and handled, and a receive is posted again when its process next
/// polls, not between a record's arrival and its handling.
///
/// MPI matches receives in the order they were posted: `front` is the
/// slot posted first of those posted or completed, and the other slot is
/// posted after it, or idle. When the front is idle, both are.
#[derive(Default)]
pub(super) struct Posted {
    pub(super) slots: [Slot; 2],
    front: usize,
}

/// One posted receive: idle (neither), posted (`req`) or completed and
/// not taken yet (`ready`).
#[derive(Default)]
pub(super) struct Slot {
    /// [`AM_RING`](crate::engine::AM_RING) bytes once a receive was
    /// posted; never resized or freed while one is active.
    pub(super) buf: Vec<u8>,
    /// The active receive, if one is posted.
    req: Option<Request>,
    /// The length of the record a completed receive left in `buf`, not
    /// taken yet.
    ready: Option<usize>,
}

impl Posted {
    /// Whether a record has come and waits (`next` takes it); posts the
    /// idle receives first (the front's, then the other's).
    pub(super) fn arrived(&mut self, comm: &super::Comm) -> bool {
        let _mpi = progress::hold();
        for i in [self.front, 1 - self.front] {
            if self.slots[i].idle() {
                self.slots[i].post(comm);
            }
        }
        self.slots[self.front].test()
    }

    /// The slot and length of the next record, if one came: the caller
    /// reads it there before the next call to [`arrived`](Self::arrived),
    /// which posts that slot's receive again. Posts nothing while the
    /// other slot's receive is posted (a take stays as short as it can).
    pub(super) fn next(&mut self, comm: &super::Comm) -> Option<(usize, usize)> {
        let ready = if self.slots[self.front].idle() {
            self.arrived(comm)
        } else {
            self.slots[self.front].test()
        };
        if !ready {
            return None;
        }
        let i = self.front;
        let n = self.slots[i].ready.take()?;
        self.front = 1 - i;
        Some((i, n))
    }

    /// Cancels the posted receives (the end of the run).
    pub(super) fn cancel(&mut self) {
        for s in &mut self.slots {
            s.cancel();
        }
    }
}

impl Slot {
    fn idle(&self) -> bool {
        self.req.is_none() && self.ready.is_none()
    }

    /// Whether this slot's record has come (tests its receive, if
    /// posted). A receive that completed is tested no more.
    fn test(&mut self) -> bool {
        let _mpi = progress::hold();
        if self.ready.is_some() {
            return true;
        }
        let Some(req) = self.req.as_mut() else {
            return false;
        };
        let mut flag = 0;
        let mut status = std::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
        // SAFETY: `req` is this rank's active receive; `flag` and `status`
        // are out-parameters.
        unsafe { ffi::MPI_Test(&mut req.0, &mut flag, status.as_mut_ptr()) };
        if flag == 0 {
            return false;
        }
        let mut count = 0;
        // SAFETY: `MPI_Test` completed the receive and wrote `status`.
        unsafe { ffi::MPI_Get_count(status.as_ptr(), ffi::RSMPI_UINT8_T, &mut count) };
        self.req = None;
        // A byte count is never negative, nor MPI_UNDEFINED for bytes;
        // MPI received at most `buf.len()` bytes (a longer message is an
        // error of the job, never a cut record).
        self.ready = Some(usize::try_from(count).unwrap_or(0).min(self.buf.len()));
        true
    }

    /// Posts the receive of the next record into `buf`.
    fn post(&mut self, comm: &super::Comm) {
        if self.buf.is_empty() {
            self.buf = vec![0; crate::engine::AM_RING];
        }
        let len = i32::try_from(self.buf.len()).expect("a record fits an i32 count");
        let mut req = std::mem::MaybeUninit::<ffi::MPI_Request>::uninit();
        // SAFETY: `buf` is `len` bytes, neither resized, read nor freed
        // until the receive completes (`test`) or is cancelled and
        // completed (`cancel`; leaked if MPI has ended); `comm` is this
        // run's communicator; `req` is an out-parameter.
        unsafe {
            ffi::MPI_Irecv(
                self.buf.as_mut_ptr().cast(),
                len,
                ffi::RSMPI_UINT8_T,
                ffi::RSMPI_ANY_SOURCE,
                TAG,
                comm.as_raw(),
                req.as_mut_ptr(),
            );
            self.req = Some(Request(req.assume_init()));
        }
    }

    /// Cancels the posted receive: after `MPI_Cancel`, `MPI_Wait` returns
    /// once it is cancelled or, had a record matched it meanwhile,
    /// received (that record is dropped: the run has ended). If MPI has
    /// ended already, the buffer is leaked instead (MPI may still hold
    /// it).
    fn cancel(&mut self) {
        let Some(mut req) = self.req.take() else {
            return;
        };
        if mpi::environment::is_finalized() {
            std::mem::forget(std::mem::take(&mut self.buf));
            return;
        }
        // SAFETY: `req` is this rank's active receive.
        unsafe {
            ffi::MPI_Cancel(&mut req.0);
            ffi::MPI_Wait(&mut req.0, ffi::RSMPI_STATUS_IGNORE);
        }
    }
}
