//! The rendezvous of large put payloads, where an engine has one (`mpi`):
//! the descriptor bit of a put record, the size from which a payload goes
//! point to point, and the engine type that carries it (none without the
//! `mpi` feature).

#[cfg(feature = "mpi")]
use super::mpi;

/// The bit of a put record's slot word that makes the record a rendezvous
/// *descriptor* `[slot | DESCRIPTOR][offset][len]`, whose payload comes
/// point to point (`mpi/rendezvous.rs`). No registration slot has it: an
/// engine without rendezvous refuses a descriptor as naming a slot the
/// owner does not have.
pub(crate) const DESCRIPTOR: u64 = 1 << 63;

/// Put payloads of at least this many bytes go by rendezvous where the
/// engine has one ([`World::rendezvous`](super::World::rendezvous)).
pub(crate) const MIN_LARGE: usize = 32 << 10;

/// The engine that moves large put payloads by rendezvous.
#[cfg(feature = "mpi")]
pub(crate) type Rendezvous = mpi::Mpi;
/// The engine that moves large put payloads by rendezvous: none without
/// the `mpi` feature.
#[cfg(not(feature = "mpi"))]
pub(crate) enum Rendezvous {}

/// A wait of the rendezvous ended because the run failed elsewhere.
pub(crate) struct RendezvousStopped;

#[cfg(not(feature = "mpi"))]
#[allow(clippy::missing_safety_doc, clippy::unused_self)]
impl Rendezvous {
    pub(crate) unsafe fn stage(
        &self,
        _: usize,
        _: *const u8,
        _: usize,
        _: bool,
    ) -> Result<(), usize> {
        match *self {}
    }
    pub(crate) fn post_sends(&self) {
        match *self {}
    }
    pub(crate) fn receive(&self, _: usize, _: *mut u8, _: usize) -> Result<(), RendezvousStopped> {
        match *self {}
    }
    pub(crate) fn before_write(&self, _: *mut u8, _: usize) -> Result<(), RendezvousStopped> {
        match *self {}
    }
    pub(crate) fn settle(&self) -> Result<(), RendezvousStopped> {
        match *self {}
    }
    pub(crate) fn abandon(&self) {
        match *self {}
    }
    pub(crate) fn coll_bcast(&self, _: usize, _: &mut [u8]) {
        match *self {}
    }
    pub(crate) fn coll_gather(&self, _: Option<usize>, _: &[u8], _: &mut [u8]) {
        match *self {}
    }
    pub(crate) fn set_check(&self, _: u64) {
        match *self {}
    }
    pub(crate) fn stage_streams(&self, _: usize, _: bool) {
        match *self {}
    }
    pub(crate) fn check_failed(&self) -> bool {
        match *self {}
    }
    pub(crate) fn coll_scatter_blocks(
        &self,
        _: &[u8],
        _: &dyn Fn(usize) -> usize,
        _: &mut [u8],
        _: usize,
    ) {
        match *self {}
    }
    pub(crate) fn coll_gather_blocks(
        &self,
        _: Option<usize>,
        _: &[u8],
        _: &dyn Fn(usize) -> usize,
        _: &mut [u8],
    ) {
        match *self {}
    }
}
