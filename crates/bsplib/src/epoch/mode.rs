//! One-sided mode: entering it (active-message mode, and on `mpi` the
//! run's status board) and leaving it.

use crate::bsp::Bsp;
#[cfg(feature = "mpi")]
use crate::error::ErrorKind;
use crate::error::{Error, SourceLocation};
use crate::process::Loc;
use crate::rma::Rma;

impl Bsp {
    /// On `mpi`, the run's status board (collective: every process enters
    /// one-sided mode in the same sync), so that an epoch's waits find a
    /// process that syncs or ends without posting or completing, as the
    /// shared board shows it on the other engines.
    pub(crate) fn rma_board(&mut self, call: &'static str, loc: Loc) -> Result<(), Error> {
        let _ = (call, loc);
        #[cfg(feature = "mpi")]
        let world = self.process().world.clone();
        #[cfg(feature = "mpi")]
        if let Some(mpi) = world.rendezvous() {
            let now = (self.superstep_now() << 2) as u32;
            let nprocs = self.nprocs();
            let made = mpi
                .ensure_board(now)
                .and_then(|()| mpi.ensure_control(nprocs, crate::window::header(nprocs)));
            return made.map_err(|detail| {
                self.process()
                    .fail(ErrorKind::Transport { detail }, call, loc)
            });
        }
        Ok(())
    }
}

impl Rma<'_> {
    /// Enters one-sided mode: collective, a sync. Post/start/complete/wait
    /// ([`epoch`](Rma::epoch)) and locks ([`lock`](Rma::lock)) need it. It
    /// is active-message mode with no handlers ([`am().init`](crate::am::Am::init)
    /// enables the epochs too): the epochs travel on that path, and every
    /// sync serves what arrives while it waits.
    ///
    /// # Errors
    ///
    /// As for [`am().init`](crate::am::Am::init).
    ///
    /// # BSP cost
    ///
    /// One sync.
    #[track_caller]
    pub fn init(&mut self) -> Result<(), Error> {
        let loc = Some(SourceLocation::caller());
        self.bsp
            .am_init_at(crate::am::Handlers::new(), "am_init", loc)?;
        self.bsp.rma_board("am_init", loc)
    }

    /// Leaves one-sided mode: collective, a sync (see
    /// [`am().term`](crate::am::Am::term)).
    ///
    /// # Errors
    ///
    /// As for [`am().term`](crate::am::Am::term); [`EpochOpen`](crate::ErrorKind::EpochOpen) if an
    /// epoch is open.
    ///
    /// # BSP cost
    ///
    /// One sync.
    #[track_caller]
    pub fn term(&mut self) -> Result<(), Error> {
        self.bsp.am().term()
    }
}

impl Bsp {
    /// MPI-2's one-sided synchronisation on areas ([`Rma`]):
    /// `bsp.rma().init()`, `bsp.rma().epoch(...)`, `bsp.rma().lock(...)`.
    pub fn rma(&mut self) -> Rma<'_> {
        Rma { bsp: self }
    }
}
