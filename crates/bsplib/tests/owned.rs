//! `Bsp::put_owned` on every engine: the library takes the data over
//! (`Vec`, `Box<[T]>`, `Arc<[T]>`, `Arc<Vec<T>>`), the receiver copies it
//! at the sync, and the data is released after the sync.

mod common;

use std::sync::Arc;

use bsplib::{Area, Bsp, Error};
use common::{configurations, run_on};

fn scenario(bsp: &mut Bsp) -> Result<u64, Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let n = 200_000usize; // 1.6 MB: the large-copy path too
    let big = Area::<u64>::new(bsp, n);
    let row = Area::<u32>::new(bsp, 4 * p);
    bsp.push_reg(&big)?;
    bsp.push_reg(&row)?;
    bsp.sync()?;

    let right = (me + 1) % p;
    let left = (me + p - 1) % p;
    // One large Vec to the right neighbour.
    let data: Vec<u64> = (0..n as u64).map(|i| i * 3 + me as u64).collect();
    bsp.put_owned(right, &big, 0, data)?;
    // One Arc to everyone (a copy per receiver, none at the call), a Box
    // and an Arc<Vec> into the other words of our own column.
    let shared: Arc<[u32]> = Arc::from(vec![me as u32 + 1; 2]);
    let watch = Arc::clone(&shared);
    for to in 0..p {
        bsp.put_owned(to, &row, 4 * me, Arc::clone(&shared))?;
        bsp.put_owned(to, &row, 4 * me + 2, Box::from([me as u32 + 10]))?;
        bsp.put_owned(to, &row, 4 * me + 3, Arc::new(vec![me as u32 + 20]))?;
    }
    drop(shared);
    bsp.sync()?;

    // The library released its references after the sync.
    check_eq!(bsp, Arc::strong_count(&watch), 1);
    let got = big.as_slice(bsp);
    check!(
        bsp,
        got.iter()
            .enumerate()
            .all(|(i, &v)| v == i as u64 * 3 + left as u64)
    );
    let want: Vec<u32> = (0..p as u32)
        .flat_map(|j| [j + 1, j + 1, j + 10, j + 20])
        .collect();
    check_eq!(bsp, row.as_slice(bsp), &want[..]);

    // An empty one does nothing; a bad destination is the usual error.
    bsp.put_owned(right, &big, n, Vec::<u64>::new())?;
    let too_long = vec![0u64; n + 1];
    let err = bsp.put_owned(right, &big, 0, too_long).unwrap_err();
    check!(
        bsp,
        matches!(err.kind(), bsplib::ErrorKind::OutOfBounds { .. })
    );
    Ok(got[n - 1])
}

#[test]
fn owned_data_is_delivered_and_released() {
    for (engine, p) in configurations() {
        let r = run_on(engine, p, scenario);
        // The out-of-bounds put stops the run: every process reports it.
        let err = r.expect_err("the last put_owned is out of bounds");
        assert!(
            matches!(err.kind(), bsplib::ErrorKind::OutOfBounds { .. }),
            "{} p={p}: {err}",
            engine.name()
        );
    }
}
