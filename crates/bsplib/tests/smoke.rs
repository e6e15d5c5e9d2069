//! The scenario harness itself: every configuration runs.

mod common;

use common::*;

#[test]
fn harness_runs_every_configuration() {
    for_each_engine(
        |bsp| {
            check!(bsp, bsp.pid() < bsp.nprocs());
            bsp.sync()?;
            Ok(bsp.pid())
        },
        |n, pids| assert_eq!(pids, (0..n).collect::<Vec<_>>().as_slice()),
    );
}
