//! The `processes` engine's paths for large unbuffered transfers when
//! cross-memory attach is asked for (`BSPLIB_CMA=1`; by default it is
//! chosen per size by measurement, `engine/cma.rs`) and area memory is off
//! (`BSPLIB_AREA_MEMORY=0`): hpputs, owned puts, gets and large
//! active-message data then read other processes' heap memory through the
//! kernel (`process_vm_readv`). Where the kernel refuses it (a seccomp
//! filter, Yama's scope 2 or 3), the library keeps its two-copy paths,
//! which must give the same results (`two_copies.rs` asks for those). The
//! other engines ignore both settings and run the same scenarios.
//!
//! One test in this binary: the settings are read once per process, and
//! are set before its first run.

mod common;
#[path = "support/unbuffered.rs"]
mod unbuffered;

#[test]
fn large_transfers_by_cross_memory_attach_land_whole() {
    std::env::set_var("BSPLIB_CMA", "1");
    std::env::set_var("BSPLIB_AREA_MEMORY", "0");
    unbuffered::on_every_engine();
}
