//! Run-wide settings are process 0's on `mpi` (`engine/mpi/README.md`,
//! "Start"): a setting in the environment of rank 0 only means the same on
//! every rank. CI's mpi step starts this binary as one job of two programs
//! (`mpirun -np 1 -x BSPLIB_CHECK=1 -x BSPLIB_WINDOW_MEMORY=64K prog : -np 1
//! prog`, `BSPLIB_TEST_RANK0_SETTINGS=1` everywhere), which before the
//! settings were agreed gave a false check-syncs error and a hang in
//! `MPI_Win_allocate`. Elsewhere (no such job) the test has nothing to
//! check and returns.

use bsplib::{Area, ErrorKind, Runtime, Window};

#[test]
fn every_rank_runs_with_rank_0s_settings() {
    if std::env::var_os("BSPLIB_TEST_RANK0_SETTINGS").is_none() {
        return;
    }
    // The checking mode on rank 0 only: the others check too (the checks
    // compare every process's records; one process checking alone used to
    // report its own line as a conflict).
    let r = Runtime::from_env(usize::MAX)
        .return_everywhere(true)
        .run(|bsp| {
            let (me, p) = (bsp.pid(), bsp.nprocs());
            let x = Area::<u64>::new(bsp, p);
            bsp.push_reg(&x)?;
            bsp.sync()?;
            for step in 0..3u64 {
                bsp.put((me + 1) % p, &x, me, &[step])?;
                bsp.sync()?;
            }
            Ok(x.to_vec(bsp)[(me + p - 1) % p])
        });
    assert_eq!(r.as_deref().ok(), Some(&[2u64, 2][..]), "{r:?}");
    // 64 KiB of window memory per process on rank 0 only: a window of
    // 1 MiB is refused on every rank alike (before: rank 0 refused, the
    // others waited in MPI_Win_allocate).
    let r = Runtime::from_env(usize::MAX)
        .return_everywhere(true)
        .run(|bsp| {
            let w = Window::<u8>::new(bsp, 1 << 20)?;
            w.free(bsp)?;
            Ok(())
        });
    match r {
        Err(e) => assert!(matches!(e.kind(), ErrorKind::OutOfMemory { .. }), "{e}"),
        Ok(_) => panic!("a window beyond rank 0's BSPLIB_WINDOW_MEMORY was allowed"),
    }
}
