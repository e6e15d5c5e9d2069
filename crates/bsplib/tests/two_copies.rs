//! The `processes` engine's two-copy paths for large unbuffered
//! transfers (`BSPLIB_CMA=0`; by default cross-memory attach is chosen per
//! size by measurement, `engine/cma.rs`, so on a machine where it is the
//! faster copy the other tests take it) with area memory off
//! (`BSPLIB_AREA_MEMORY=0`): hpputs and owned puts buffered in the
//! sender's channel, gets served by their owner into replies, large
//! active-message data in pieces. `cross_memory.rs` runs the same
//! scenarios by the kernel's copy. The other engines ignore both settings.
//!
//! One test in this binary: the settings are read once per process, and
//! are set before its first run.

mod common;
#[path = "support/unbuffered.rs"]
mod unbuffered;

#[test]
fn large_transfers_by_two_copies_land_whole() {
    std::env::set_var("BSPLIB_CMA", "0");
    std::env::set_var("BSPLIB_AREA_MEMORY", "0");
    unbuffered::on_every_engine();
}
