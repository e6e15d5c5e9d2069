//! Strided and io-vector puts and gets on every engine: matrix columns,
//! blocks of a 2-D array, shapes with different blocks on the two sides,
//! pieces that overlap; the same superstep rules as plain puts and gets
//! (gets read the end of the superstep, before puts land; later writes
//! win); every argument error; and the owner's checks of forged strided
//! records.

mod common;

use bsplib::{Area, Bsp, Error, ErrorKind, Piece, Strided};
use common::{expect_error, scenario};

/// What a strided transfer does, element by element: `src` selected by
/// `from` flows in order into `dst` selected by `to`.
fn model<T: Copy>(src: &[T], from: Strided, dst: &mut [T], to: Strided) {
    for (i, j) in from.indices().zip(to.indices()) {
        dst[j] = src[i];
    }
}

/// The first index where two slices differ (a short message, not a dump
/// of both).
fn first_difference<T: PartialEq + std::fmt::Debug>(a: &[T], b: &[T]) -> Option<String> {
    if a.len() != b.len() {
        return Some(format!("lengths {} and {}", a.len(), b.len()));
    }
    let i = a.iter().zip(b).position(|(x, y)| x != y)?;
    Some(format!("element {i}: {:?} != {:?}", a[i], b[i]))
}

macro_rules! same {
    ($bsp:expr, $got:expr, $want:expr) => {
        let diff = first_difference($got, $want);
        check!($bsp, diff.is_none(), "{}", diff.unwrap_or_default());
    };
}

/// The value of element `i` of process `q`'s matrix.
fn value(q: usize, i: usize) -> u64 {
    (q as u64) << 32 | i as u64
}

/// Every process puts column `me` of its `rows × p` matrix into column
/// `me` of every process's matrix (the whole column, and a large one of
/// 100 000 rows through the same one-record path), and column `me` of a
/// small matrix into a row of a transposed one.
fn columns(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    for rows in [5usize, 100_000] {
        let local: Vec<u64> = (0..rows * p).map(|i| value(me, i)).collect();
        let m = Area::<u64>::new(bsp, rows * p);
        let t = Area::<u64>::new(bsp, rows * p);
        bsp.push_reg(&m)?;
        bsp.push_reg(&t)?;
        bsp.sync()?;
        let col = Strided::column(me, rows, p);
        for q in 0..p {
            bsp.put_strided(q, &m, col, &local, col)?;
            // Column `me` becomes row `me` of the transpose.
            bsp.put_strided(q, &t, Strided::contiguous(me * rows, rows), &local, col)?;
        }
        bsp.sync()?;
        let mut want = vec![0u64; rows * p];
        let mut want_t = vec![0u64; rows * p];
        for q in 0..p {
            let theirs: Vec<u64> = (0..rows * p).map(|i| value(q, i)).collect();
            let col = Strided::column(q, rows, p);
            model(&theirs, col, &mut want, col);
            model(
                &theirs,
                col,
                &mut want_t,
                Strided::contiguous(q * rows, rows),
            );
        }
        same!(bsp, m.as_slice(bsp), &want[..]);
        same!(bsp, t.as_slice(bsp), &want_t[..]);
        bsp.pop_reg(&t)?;
        bsp.pop_reg(&m)?;
        bsp.sync()?;
    }
    Ok(())
}

#[test]
fn a_strided_put_writes_the_columns_it_names() {
    scenario(columns);
}

/// Shapes whose blocks differ on the two sides (3 elements at stride 5
/// into 2 at stride 4, 1-byte blocks, 16-byte blocks, a source stride of
/// 0 repeating one block), bytes flowing in order; the elements between
/// the blocks stay as they were.
fn shapes(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let right = (me + 1) % p;
    let left = (me + p - 1) % p;
    let n = 64;
    let fill = |q: usize| -> Vec<u8> { (0..n).map(|i| (q * 64 + i) as u8).collect() };
    let mut a = Area::from_vec(bsp, fill(me));
    let w = Area::from_vec(bsp, vec![[me as u64, 1]; 8]);
    bsp.push_reg(&a)?;
    bsp.push_reg(&w)?;
    bsp.sync()?;
    let cases = [
        (Strided::new(1, 3, 5, 4), Strided::new(2, 2, 4, 6)),
        (Strided::new(0, 1, 7, 9), Strided::new(3, 1, 2, 9)),
        (Strided::new(5, 2, 0, 3), Strided::new(40, 3, 4, 2)),
    ];
    // One case per superstep: the later puts would overwrite the earlier.
    for (from, to) in cases {
        let mine = fill(me);
        bsp.put_strided(right, &a, to, &mine, from)?;
        bsp.sync()?;
        let mut want = fill(me);
        model(&fill(left), from, &mut want, to);
        same!(bsp, a.as_slice(bsp), &want[..]);
        a.as_mut_slice(bsp).copy_from_slice(&fill(me));
        bsp.sync()?;
    }
    // Blocks of 16 bytes (`[u64; 2]`), every other one.
    let src = [[me as u64 + 100, 7]; 4];
    bsp.put_strided(
        right,
        &w,
        Strided::new(0, 1, 2, 4),
        &src,
        Strided::contiguous(0, 4),
    )?;
    bsp.sync()?;
    let got = w.as_slice(bsp).to_vec();
    for (i, x) in got.iter().enumerate() {
        let want = if i % 2 == 0 {
            [left as u64 + 100, 7]
        } else {
            [me as u64, 1]
        };
        check_eq!(bsp, *x, want);
    }
    Ok(())
}

#[test]
fn strided_shapes_move_bytes_in_order() {
    scenario(shapes);
}

/// Strided gets: a neighbour's column into a local (unregistered) buffer
/// and into a registered area, in one superstep in which the neighbour
/// overwrites that column with a put: both gets see the values of the end
/// of the superstep. Then a get into the very area another process gets
/// from.
fn strided_gets(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let left = (me + p - 1) % p;
    let right = (me + 1) % p;
    let (rows, cols) = (300usize, 7usize);
    let fill = |q: usize| -> Vec<u64> { (0..rows * cols).map(|i| value(q, i)).collect() };
    let m = Area::from_vec(bsp, fill(me));
    let r = Area::<u64>::new(bsp, rows * cols);
    bsp.push_reg(&m)?;
    bsp.push_reg(&r)?;
    bsp.sync()?;
    let col = Strided::column(3, rows, cols);
    let local = Area::<u64>::new(bsp, rows);
    bsp.get_strided(left, &m, col, &local, Strided::contiguous(0, rows))?;
    bsp.get_strided(left, &m, col, &r, Strided::column(5, rows, cols))?;
    // Overwrite our right neighbour's column 3 (the one it reads of us
    // is ours; this is the one its right neighbour reads).
    bsp.put_strided(
        right,
        &m,
        col,
        &vec![0u64; rows],
        Strided::contiguous(0, rows),
    )?;
    bsp.sync()?;
    let theirs = fill(left);
    let mut want_local = vec![0u64; rows];
    model(&theirs, col, &mut want_local, Strided::contiguous(0, rows));
    same!(bsp, local.as_slice(bsp), &want_local[..]);
    let mut want_r = vec![0u64; rows * cols];
    model(&theirs, col, &mut want_r, Strided::column(5, rows, cols));
    same!(bsp, r.as_slice(bsp), &want_r[..]);
    let mut want_m = fill(me);
    model(
        &vec![0u64; rows],
        Strided::contiguous(0, rows),
        &mut want_m,
        col,
    );
    same!(bsp, m.as_slice(bsp), &want_m[..]);
    Ok(())
}

#[test]
fn a_strided_get_reads_the_end_of_the_superstep() {
    scenario(strided_gets);
}

/// Io-vector puts and gets: pieces in call order (a later piece wins
/// where two overlap), empty pieces, pieces to oneself.
fn io_vectors(bsp: &mut Bsp) -> Result<(), Error> {
    let (me, p) = (bsp.pid(), bsp.nprocs());
    let right = (me + 1) % p;
    let left = (me + p - 1) % p;
    let a = Area::<u32>::new(bsp, 10);
    let b = Area::from_vec(bsp, (0..10).map(|i| (me * 100 + i) as u32).collect());
    bsp.push_reg(&a)?;
    bsp.push_reg(&b)?;
    bsp.sync()?;
    let src: Vec<u32> = (0..8).map(|i| (me * 10 + i) as u32).collect();
    let pieces = [
        Piece::new(0, 0, 4),
        Piece::new(4, 2, 3), // overlaps the first on elements 2 and 3
        Piece::new(7, 9, 1),
        Piece::new(3, 5, 0),
    ];
    bsp.put_vec(right, &a, &pieces, &src)?;
    let got = Area::<u32>::new(bsp, 6);
    let gets = [
        Piece::new(9, 0, 1),
        Piece::new(0, 1, 5),
        Piece::new(1, 2, 1),
    ];
    bsp.get_vec(left, &b, &gets, &got)?;
    bsp.sync()?;
    let l = (left * 10) as u32;
    let want = [l, l + 1, l + 4, l + 5, l + 6, 0, 0, 0, 0, l + 7];
    check_eq!(bsp, a.as_slice(bsp), &want[..]);
    let lb = (left * 100) as u32;
    let want_got = [lb + 9, lb, lb + 1, lb + 2, lb + 3, lb + 4];
    check_eq!(bsp, got.as_slice(bsp), &want_got[..]);
    Ok(())
}

#[test]
fn io_vector_pieces_land_in_call_order() {
    scenario(io_vectors);
}

/// Registers 16 `u32`s everywhere and syncs.
fn setup(bsp: &mut Bsp) -> Result<Area<u32>, Error> {
    let x = Area::<u32>::new(bsp, 16);
    bsp.push_reg(&x)?;
    bsp.sync()?;
    Ok(x)
}

/// The error is `kind` on the process that made the call (the last one),
/// at the call, in superstep 1.
fn at_the_call(call: &'static str, ok: fn(&ErrorKind) -> bool) -> impl Fn(usize, &Error) + Clone {
    move |n, e| {
        assert!(ok(e.kind()), "{e}");
        assert_eq!((e.pid(), e.superstep(), e.call()), (n - 1, 1, call), "{e}");
        assert!(
            e.location()
                .is_some_and(|l| l.file().ends_with("strided.rs")),
            "{e}"
        );
    }
}

#[test]
fn overlapping_destination_blocks_are_an_error() {
    expect_error(
        1,
        |bsp| {
            let x = setup(bsp)?;
            if bsp.pid() == bsp.nprocs() - 1 {
                bsp.put_strided(
                    0,
                    &x,
                    Strided::new(0, 3, 2, 2),
                    &[1u32; 6],
                    Strided::contiguous(0, 6),
                )?;
            }
            bsp.sync()
        },
        at_the_call("bsp_put_strided", |k| {
            matches!(
                k,
                ErrorKind::OverlappingBlocks {
                    block: 12,
                    stride: 8
                }
            )
        }),
    );
}

#[test]
fn shapes_holding_different_counts_are_an_error() {
    expect_error(
        1,
        |bsp| {
            let x = setup(bsp)?;
            if bsp.pid() == bsp.nprocs() - 1 {
                let local = Area::<u32>::new(bsp, 16);
                bsp.get_strided(
                    0,
                    &x,
                    Strided::new(0, 2, 4, 3),
                    &local,
                    Strided::contiguous(0, 5),
                )?;
            }
            bsp.sync()
        },
        at_the_call("bsp_get_strided", |k| {
            matches!(k, ErrorKind::ShapeMismatch { src: 24, dst: 20 })
        }),
    );
}

#[test]
fn a_span_beyond_the_remote_area_is_an_error() {
    expect_error(
        1,
        |bsp| {
            let x = setup(bsp)?;
            if bsp.pid() == bsp.nprocs() - 1 {
                // Blocks at 1, 6, 11, 16: the last one is past element 15.
                bsp.put_strided(
                    0,
                    &x,
                    Strided::new(1, 1, 5, 4),
                    &[1u32; 4],
                    Strided::contiguous(0, 4),
                )?;
            }
            bsp.sync()
        },
        at_the_call("bsp_put_strided", |k| {
            matches!(
                k,
                ErrorKind::OutOfBounds {
                    offset: 4,
                    nbytes: 64,
                    extent: 64,
                    ..
                }
            )
        }),
    );
}

#[test]
fn a_source_shape_beyond_the_local_slice_is_an_error() {
    expect_error(
        1,
        |bsp| {
            let x = setup(bsp)?;
            if bsp.pid() == bsp.nprocs() - 1 {
                bsp.put_strided(
                    0,
                    &x,
                    Strided::contiguous(0, 6),
                    &[1u32; 10],
                    Strided::new(0, 2, 5, 3),
                )?;
            }
            bsp.sync()
        },
        at_the_call("bsp_put_strided", |k| {
            matches!(
                k,
                ErrorKind::LocalBounds {
                    what: "source",
                    needed: 48,
                    available: 40,
                    elem: 4
                }
            )
        }),
    );
}

#[test]
fn an_io_vector_piece_beyond_the_remote_area_is_an_error() {
    expect_error(
        1,
        |bsp| {
            let x = setup(bsp)?;
            if bsp.pid() == bsp.nprocs() - 1 {
                let pieces = [Piece::new(0, 0, 2), Piece::new(0, 15, 2)];
                bsp.put_vec(0, &x, &pieces, &[1u32; 2])?;
            }
            bsp.sync()
        },
        at_the_call("bsp_put_vec", |k| {
            matches!(
                k,
                ErrorKind::OutOfBounds {
                    offset: 60,
                    nbytes: 8,
                    ..
                }
            )
        }),
    );
}

/// The run's error is an `InvalidRecord` of kind `what` from process 0,
/// refused by the owner (the last process) in its sync of superstep 1,
/// mentioning `needle`.
fn refused(what: &'static str, needle: &'static str) -> impl Fn(usize, &Error) + Clone {
    move |n, e| {
        match e.kind() {
            ErrorKind::InvalidRecord {
                what: w,
                sender,
                detail,
            } => {
                assert_eq!((*w, *sender), (what, 0), "{e}");
                assert!(detail.contains(needle), "{e}");
            }
            k => panic!("expected InvalidRecord, got {k:?}: {e}"),
        }
        assert_eq!(
            (e.pid(), e.superstep(), e.call()),
            (n - 1, 1, "bsp_sync"),
            "{e}"
        );
    }
}

/// Process 0 forges a strided put record for the last process, whose
/// 16-word area is slot 0; the owner must refuse it and write nothing.
fn forged_put(
    len: usize,
    block: usize,
    stride: usize,
    data: usize,
) -> impl Fn(&mut Bsp) -> Result<(), Error> + Clone {
    move |bsp| {
        let x = setup(bsp)?;
        if bsp.pid() == 0 {
            let owner = bsp.nprocs() as i64 - 1;
            // SAFETY: a test of the owner's checks: the forged strided put
            // is one the owner must refuse, writing nothing.
            unsafe {
                bsp.raw()
                    .forge_put_strided(owner, 0, 0, len, block, stride, &vec![0xab; data])
            }?;
        }
        let r = bsp.sync();
        // Nothing written on the owner, whatever the record claimed.
        if bsp.pid() == bsp.nprocs() - 1 {
            assert!(x.as_slice(bsp).iter().all(|&v| v == 0));
        }
        r
    }
}

#[test]
fn a_strided_record_whose_blocks_do_not_divide_it_is_refused() {
    expect_error(1, forged_put(10, 4, 8, 10), refused("put", "do not divide"));
    expect_error(1, forged_put(8, 0, 8, 8), refused("put", "do not divide"));
}

#[test]
fn a_strided_record_writing_overlapping_blocks_is_refused() {
    expect_error(1, forged_put(16, 8, 4, 16), refused("put", "overlap"));
}

#[test]
fn a_strided_record_spanning_past_the_area_is_refused() {
    // 4 blocks of 4 bytes at a stride of 20: bytes 0..64 are the area,
    // the span is 64 + 4.
    expect_error(
        1,
        forged_put(16, 4, 21, 16),
        refused("put", "whose area on this process has 64 bytes"),
    );
    expect_error(
        1,
        forged_put(16, 4, usize::MAX / 2, 16),
        refused("put", "overflows"),
    );
}

#[test]
fn a_strided_record_cut_short_is_refused() {
    expect_error(1, forged_put(64, 4, 4, 8), refused("put", "cut short"));
}

#[test]
fn a_strided_get_request_spanning_past_the_area_is_refused() {
    expect_error(
        1,
        |bsp| {
            setup(bsp)?;
            if bsp.pid() == 0 {
                let owner = bsp.nprocs() as i64 - 1;
                // Blocks at bytes 8, 28, 48, 68: the last is past the area.
                // SAFETY: a test of the owner's checks: the forged strided
                // get spans past the owner's area, which it must refuse.
                unsafe { bsp.raw().forge_get_strided(owner, 0, 8, 4, 20, 4) }?;
            }
            bsp.sync()
        },
        refused("get", "whose area on this process has 64 bytes"),
    );
}
