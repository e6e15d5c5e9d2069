//! The example programs of the seeds (the BSPlib paper of 1997 and the
//! `bsp_get` manual page), ported to the Rust API, with their results
//! checked against values computed independently in the test.
//!
//! Every example is a function of the `Bsp` handle, as in the seeds, and
//! runs on every engine and process count of the harness.

mod common;
use common::*;

use bsplib::{Area, Bsp, Error};

// ----- the seeds' functions, ported ---------------------------------------

/// The paper's `reverse`: the result on process `i` is `x` of process
/// `p - i - 1`.
fn reverse(bsp: &mut Bsp, x: i32) -> Result<i32, Error> {
    let xa = Area::from_vec(bsp, vec![x]);
    bsp.push_reg(&xa)?;
    bsp.sync()?;
    // `&x` is both the source and the destination, as in the paper.
    bsp.put(bsp.nprocs() - bsp.pid() - 1, &xa, 0, xa.as_slice(bsp))?;
    bsp.sync()?;
    bsp.pop_reg(&xa)?;
    Ok(xa.as_slice(bsp)[0])
}

/// The paper's `put_array`: `forall i: xs[xs[i]] := xs[i]` on a block
/// distributed array of `n` elements.
fn put_array(bsp: &mut Bsp, xs: &Area<u32>, n: usize) -> Result<(), Error> {
    let p = bsp.nprocs();
    if n % p != 0 {
        bsp.abort(format!("{{put_array}} n={n} not divisible by p={p}"));
    }
    let n_over_p = n / p;
    bsp.push_reg_prefix(xs, n_over_p)?;
    bsp.sync()?;
    for i in 0..n_over_p {
        let v = xs.as_slice(bsp)[i] as usize;
        let (pid, local_idx) = (v / n_over_p, v % n_over_p);
        bsp.put(pid, xs, local_idx, &xs.as_slice(bsp)[i..=i])?;
    }
    bsp.sync()?;
    bsp.pop_reg(xs)?;
    Ok(())
}

/// The manual page's `get_array`: `forall i: xs[i] := xs[xs[i]]`.
fn get_array(bsp: &mut Bsp, xs: &Area<u32>, n: usize) -> Result<(), Error> {
    let p = bsp.nprocs();
    if n % p != 0 {
        bsp.abort(format!("{{get_array}} {n} not divisible by {p}"));
    }
    let n_over_p = n / p;
    bsp.push_reg_prefix(xs, n_over_p)?;
    bsp.sync()?;
    for i in 0..n_over_p {
        let v = xs.as_slice(bsp)[i] as usize;
        let (pid, local_idx) = (v / n_over_p, v % n_over_p);
        bsp.get(pid, xs, local_idx, xs.range(i..i + 1))?;
    }
    bsp.sync()?;
    bsp.pop_reg(xs)?;
    Ok(())
}

/// The manual page's `bsp_sum` (with `bsp_hpget`). Also returns the
/// gathered `local_sums`.
fn bsp_sum(bsp: &mut Bsp, xs: &[i64]) -> Result<(i64, Vec<i64>), Error> {
    let mut result = Area::<i64>::new(bsp, 1);
    result.as_mut_slice(bsp)[0] = xs.iter().sum();
    bsp.push_reg(&result)?;
    bsp.sync()?;
    let p = bsp.nprocs();
    let local_sums = Area::<i64>::new(bsp, p);
    for i in 0..p {
        // SAFETY: `result` is not changed by anyone during this superstep,
        // and element `i` of `local_sums` is written by this hpget only.
        unsafe { bsp.hpget(i, &result, 0, local_sums.range(i..i + 1))? };
    }
    bsp.sync()?;
    let sums = local_sums.to_vec(bsp);
    bsp.pop_reg(&result)?;
    Ok((sums.iter().sum(), sums))
}

/// The left neighbour of this process, cyclically.
fn left(bsp: &Bsp) -> usize {
    if bsp.pid() == 0 {
        bsp.nprocs() - 1
    } else {
        bsp.pid() - 1
    }
}

/// The manual page's first `cyclic_shift` (with `bsp_get`): returns `x` of
/// the left neighbour.
fn cyclic_shift_get(bsp: &mut Bsp, x: i64) -> Result<i64, Error> {
    let xa = Area::from_vec(bsp, vec![x]);
    bsp.push_reg(&xa)?;
    bsp.sync()?;
    bsp.get(left(bsp), &xa, 0, xa.range(..1))?;
    bsp.sync()?;
    bsp.pop_reg(&xa)?;
    Ok(xa.as_slice(bsp)[0])
}

/// The manual page's second `cyclic_shift` (with `bsp_hpget`).
fn cyclic_shift_hpget(bsp: &mut Bsp, x: i64) -> Result<i64, Error> {
    let xa = Area::from_vec(bsp, vec![x]);
    let result = Area::<i64>::new(bsp, 1);
    bsp.push_reg(&xa)?;
    bsp.sync()?;
    // SAFETY: nobody writes `xa` in this superstep, and `result` is only
    // written by this hpget.
    unsafe { bsp.hpget(left(bsp), &xa, 0, result.range(..1))? };
    bsp.sync()?;
    // (The manual page pops `&result` here, which was never registered: a
    // typo; `x` is what was pushed.)
    bsp.pop_reg(&xa)?;
    Ok(result.as_slice(bsp)[0])
}

/// The manual page's `bsp_allsums`: running sums `x_0 + .. + x_pid` in
/// `log p` supersteps.
fn bsp_allsums(bsp: &mut Bsp, x: i64) -> Result<i64, Error> {
    let (pid, p) = (bsp.pid(), bsp.nprocs());
    let left = Area::<i64>::new(bsp, 1);
    let mut right = Area::<i64>::new(bsp, 1);
    bsp.push_reg(&right)?;
    bsp.sync()?;
    right.as_mut_slice(bsp)[0] = x;
    let mut i = 1;
    while i < p {
        if pid >= i {
            bsp.get(pid - i, &right, 0, left.range(..1))?;
        }
        bsp.sync()?;
        if pid >= i {
            let l = left.as_slice(bsp)[0];
            right.as_mut_slice(bsp)[0] += l;
        }
        i *= 2;
    }
    bsp.pop_reg(&right)?;
    Ok(right.as_slice(bsp)[0])
}

/// The paper's `all_gather_sparse_vec`: every nonzero of every process's
/// chunk `dense` is broadcast to all processes with BSMP (tag: the global
/// index). Returns `(sparse, sparse_ivec)` in arrival order.
fn all_gather_sparse_vec(bsp: &mut Bsp, dense: &[f32]) -> Result<(Vec<f32>, Vec<i32>), Error> {
    let n_over_p = dense.len();
    let tag_size = bsp.set_tagsize(std::mem::size_of::<i32>())?;
    bsp.sync()?;
    for (i, &d) in dense.iter().enumerate() {
        if d != 0.0 {
            let global_idx = (n_over_p * bsp.pid() + i) as i32;
            for j in 0..bsp.nprocs() {
                bsp.send_pod(j, &global_idx, &[d])?;
            }
        }
    }
    bsp.sync()?;
    let (nonzeros, nonzeros_size) = bsp.qsize();
    check_eq!(bsp, nonzeros_size, nonzeros * std::mem::size_of::<f32>());
    let mut sparse = Vec::with_capacity(nonzeros);
    let mut sparse_ivec = Vec::with_capacity(nonzeros);
    for _ in 0..nonzeros {
        let mut tag = [0u8; 4];
        let status = bsp.get_tag(&mut tag)?;
        if status != Some(std::mem::size_of::<f32>()) {
            bsp.abort("Should never get here");
        }
        let mut payload = [0u8; 4];
        check_eq!(bsp, bsp.move_payload(&mut payload)?, 4);
        sparse_ivec.push(i32::from_ne_bytes(tag));
        sparse.push(f32::from_ne_bytes(payload));
    }
    // Restore the caller's tag size; the previous value given was ours.
    let ours = bsp.set_tagsize(tag_size)?;
    check_eq!(bsp, ours, 4);
    Ok((sparse, sparse_ivec))
}

// ----- test data ----------------------------------------------------------

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// A permutation of `0..n` that moves most elements across blocks:
/// `i -> (a i + 1) mod n` with `a >= 5` coprime to `n`.
fn permutation(n: usize) -> Vec<u32> {
    let a = (5..).find(|&a| gcd(a, n) == 1).unwrap();
    (0..n).map(|i| ((a * i + 1) % n) as u32).collect()
}

/// A mapping of `0..n` into itself that is not injective (many elements are
/// not hit): `i -> (i + 1)^2 mod n`.
fn squares(n: usize) -> Vec<u32> {
    (0..n).map(|i| ((i + 1) * (i + 1) % n) as u32).collect()
}

/// `forall i: xs[xs[i]] := xs[i]`, sequentially (every colliding write
/// writes the same value, so the concurrent assignment is well defined).
fn put_array_reference(xs: &[u32]) -> Vec<u32> {
    let mut out = xs.to_vec();
    for &v in xs {
        out[v as usize] = v;
    }
    out
}

/// `forall i: xs[i] := xs[xs[i]]`, all reads before all writes.
fn get_array_reference(xs: &[u32]) -> Vec<u32> {
    xs.iter().map(|&v| xs[v as usize]).collect()
}

/// Elements per process in the array examples.
const BLOCK: usize = 3;

/// `put_array` or `get_array`.
type ArrayFn = fn(&mut Bsp, &Area<u32>, usize) -> Result<(), Error>;

/// Runs `f` on this process's block of `global(n)`, with `n = BLOCK * p`,
/// and returns the block afterwards.
fn on_block(
    bsp: &mut Bsp,
    global: fn(usize) -> Vec<u32>,
    f: &[ArrayFn],
) -> Result<Vec<u32>, Error> {
    let n = BLOCK * bsp.nprocs();
    let all = global(n);
    let start = bsp.pid() * BLOCK;
    let xs = Area::from_slice(bsp, &all[start..start + BLOCK]);
    for g in f {
        g(bsp, &xs, n)?;
    }
    // Let the last pop take effect before the run ends.
    bsp.sync()?;
    Ok(xs.to_vec(bsp))
}

/// Checks the concatenated blocks against `reference(global(n))`.
fn check_blocks(n: usize, blocks: &[Vec<u32>], global: fn(usize) -> Vec<u32>, want: Vec<u32>) {
    let got: Vec<u32> = blocks.concat();
    let input = global(BLOCK * n);
    assert_ne!(got, input, "p={n}: the array did not change");
    assert_eq!(got, want, "p={n}: input {input:?}");
}

// ----- the tests ------------------------------------------------------------

#[test]
fn reverse_gives_x_of_the_mirror_process() {
    for_each_engine(
        |bsp| {
            let x = 100 + 7 * bsp.pid() as i32;
            let r = reverse(bsp, x)?;
            // Twice: the pop of the first call and the push of the second
            // share a superstep.
            let back = reverse(bsp, r)?;
            check_eq!(bsp, back, x);
            bsp.sync()?;
            Ok(r)
        },
        |n, got| {
            let want: Vec<i32> = (0..n).map(|i| 100 + 7 * (n - 1 - i) as i32).collect();
            assert_eq!(got, want.as_slice());
        },
    );
}

#[test]
fn put_array_with_a_permutation() {
    for_each_engine(
        |bsp| on_block(bsp, permutation, &[put_array]),
        |n, got| {
            // For a permutation the assignment gives the identity.
            let want = put_array_reference(&permutation(BLOCK * n));
            assert_eq!(want, (0..(BLOCK * n) as u32).collect::<Vec<_>>());
            check_blocks(n, got, permutation, want);
        },
    );
}

/// Under `BSPLIB_CHECK` (the checking mode): colliding puts from different
/// processes, whose order BSPlib leaves undefined, are what it reports;
/// every run with two processes or more must fail saying so (`true`:
/// checked, nothing more to run).
fn overlap_found_when_checking<R, F>(spmd: F) -> bool
where
    F: Fn(&mut Bsp) -> Result<R, Error> + Sync + Send + Clone + 'static,
    R: bsplib::Portable + Send + 'static,
{
    if !checking_from_env() {
        return false;
    }
    for (engine, p, _) in configurations_with(2) {
        match run_on(engine, p, spmd.clone()) {
            Err(e) => assert!(
                matches!(e.kind(), bsplib::ErrorKind::OverlappingPuts { .. }),
                "{} p={p}: {e}",
                engine.name()
            ),
            Ok(_) => panic!("{} p={p}: colliding puts not reported", engine.name()),
        }
    }
    true
}

#[test]
fn put_array_with_colliding_indices() {
    if overlap_found_when_checking(|bsp| on_block(bsp, squares, &[put_array])) {
        return;
    }
    for_each_engine(
        |bsp| on_block(bsp, squares, &[put_array]),
        |n, got| check_blocks(n, got, squares, put_array_reference(&squares(BLOCK * n))),
    );
}

#[test]
fn get_array_with_a_permutation() {
    for_each_engine(
        |bsp| on_block(bsp, permutation, &[get_array]),
        |n, got| {
            let want = get_array_reference(&permutation(BLOCK * n));
            check_blocks(n, got, permutation, want);
        },
    );
}

#[test]
fn get_array_with_colliding_indices() {
    for_each_engine(
        |bsp| on_block(bsp, squares, &[get_array]),
        |n, got| check_blocks(n, got, squares, get_array_reference(&squares(BLOCK * n))),
    );
}

#[test]
fn put_array_then_get_array_compose() {
    if overlap_found_when_checking(|bsp| on_block(bsp, squares, &[put_array, get_array, get_array]))
    {
        return;
    }
    for_each_engine(
        |bsp| on_block(bsp, squares, &[put_array, get_array, get_array]),
        |n, got| {
            let once = put_array_reference(&squares(BLOCK * n));
            let want = get_array_reference(&get_array_reference(&once));
            check_blocks(n, got, squares, want);
        },
    );
}

/// The elements process `pid` sums in the `bsp_sum` test: `pid + 2` of them.
fn sum_input(pid: usize) -> Vec<i64> {
    (0..pid + 2)
        .map(|j| (j as i64 - 2) * (pid as i64 + 3) + 1000 * pid as i64)
        .collect()
}

#[test]
fn bsp_sum_with_hpget() {
    for_each_engine(
        |bsp| {
            let xs = sum_input(bsp.pid());
            let first = bsp_sum(bsp, &xs)?;
            // Once more, on other data, right after the first call's pop.
            let doubled: Vec<i64> = xs.iter().map(|x| 2 * x).collect();
            let second = bsp_sum(bsp, &doubled)?;
            check_eq!(bsp, second.0, 2 * first.0);
            bsp.sync()?;
            Ok(first)
        },
        |n, got| {
            let per_process: Vec<i64> = (0..n).map(|i| sum_input(i).iter().sum()).collect();
            let total: i64 = per_process.iter().sum();
            for (pid, (sum, local_sums)) in got.iter().enumerate() {
                assert_eq!(*sum, total, "process {pid}");
                assert_eq!(local_sums, &per_process, "process {pid}");
            }
        },
    );
}

fn shift_input(pid: usize) -> i64 {
    (pid as i64 * pid as i64) * 3 - 11
}

#[test]
fn cyclic_shift_with_get() {
    for_each_engine(
        |bsp| {
            let r = cyclic_shift_get(bsp, shift_input(bsp.pid()))?;
            bsp.sync()?;
            Ok(r)
        },
        |n, got| {
            for (pid, &r) in got.iter().enumerate() {
                assert_eq!(r, shift_input((pid + n - 1) % n), "process {pid}");
            }
        },
    );
}

#[test]
fn cyclic_shift_with_hpget() {
    for_each_engine(
        |bsp| {
            let once = cyclic_shift_hpget(bsp, shift_input(bsp.pid()))?;
            // Shifting p times in total comes back to the start (mixing both
            // versions).
            let mut x = once;
            for k in 1..bsp.nprocs() {
                x = if k % 2 == 0 {
                    cyclic_shift_hpget(bsp, x)?
                } else {
                    cyclic_shift_get(bsp, x)?
                };
            }
            check_eq!(bsp, x, shift_input(bsp.pid()));
            bsp.sync()?;
            Ok(once)
        },
        |n, got| {
            for (pid, &r) in got.iter().enumerate() {
                assert_eq!(r, shift_input((pid + n - 1) % n), "process {pid}");
            }
        },
    );
}

#[test]
fn bsp_allsums_gives_running_sums() {
    for_each_engine(
        |bsp| {
            // The manual page's main: y = pid + 1.
            let y = bsp.pid() as i64 + 1;
            let sums = bsp_allsums(bsp, y)?;
            // Other data: x_i = (5 i) mod 7 - 3 (some negative).
            let x = (5 * bsp.pid() as i64) % 7 - 3;
            let other = bsp_allsums(bsp, x)?;
            bsp.sync()?;
            Ok((sums, other))
        },
        |n, got| {
            let mut running = (0, 0);
            for (pid, &(sums, other)) in got.iter().enumerate() {
                running.0 += pid as i64 + 1;
                running.1 += (5 * pid as i64) % 7 - 3;
                assert_eq!((sums, other), running, "process {pid}");
            }
            if n == 4 {
                // The manual page's run on four processors: sums 1, 3, 6, 10.
                let printed: Vec<i64> = got.iter().map(|r| r.0).collect();
                assert_eq!(printed, [1, 3, 6, 10]);
            }
        },
    );
}

/// The test vector of the sparse broadcast: `5 p` elements, zero where the
/// global index is a multiple of 3 and everywhere on process 1 (so one
/// process sends nothing when `p > 1`).
fn dense(p: usize, pid: usize) -> Vec<f32> {
    let n_over_p = 5;
    (0..n_over_p)
        .map(|i| {
            let g = pid * n_over_p + i;
            if g % 3 == 0 || (p > 1 && pid == 1) {
                0.0
            } else {
                g as f32 * 1.5 - 2.0
            }
        })
        .collect()
}

#[test]
fn all_gather_sparse_vec_with_bsmp() {
    for_each_engine(
        |bsp| {
            let (pid, p) = (bsp.pid(), bsp.nprocs());
            check_eq!(bsp, bsp.send_tagsize(), 0);
            let (sparse, ivec) = all_gather_sparse_vec(bsp, &dense(p, pid))?;
            check_eq!(bsp, sparse.len(), ivec.len());
            // The restored tag size (0) is in force after the next sync, and
            // a second call sees it as the previous value.
            let scaled: Vec<f32> = dense(p, pid).iter().map(|x| x * 2.0).collect();
            let (sparse2, ivec2) = all_gather_sparse_vec(bsp, &scaled)?;
            bsp.sync()?;
            check_eq!(bsp, bsp.send_tagsize(), 0);
            let mut first: Vec<(i32, f32)> = ivec.into_iter().zip(sparse).collect();
            let mut second: Vec<(i32, f32)> = ivec2.into_iter().zip(sparse2).collect();
            first.sort_by_key(|e| e.0);
            second.sort_by_key(|e| e.0);
            Ok((first, second))
        },
        |n, got| {
            let want: Vec<(i32, f32)> = (0..n)
                .flat_map(|pid| {
                    dense(n, pid)
                        .into_iter()
                        .enumerate()
                        .filter(|&(_, v)| v != 0.0)
                        .map(move |(i, v)| ((pid * 5 + i) as i32, v))
                })
                .collect();
            assert!(!want.is_empty());
            let want2: Vec<(i32, f32)> = want.iter().map(|&(g, v)| (g, v * 2.0)).collect();
            for (pid, (first, second)) in got.iter().enumerate() {
                assert_eq!(first, &want, "process {pid}");
                assert_eq!(second, &want2, "process {pid}");
            }
        },
    );
}

#[test]
fn examples_compose_in_one_program() {
    for_each_engine(
        |bsp| {
            let (pid, p) = (bsp.pid(), bsp.nprocs());
            let r = reverse(bsp, pid as i32)?;
            let s = cyclic_shift_get(bsp, r as i64)?;
            let sums = bsp_allsums(bsp, s)?;
            let (total, _) = bsp_sum(bsp, &[sums])?;
            // total >= 0, so every process has one nonzero to broadcast.
            let (sparse, _) = all_gather_sparse_vec(bsp, &[total as f32 + 1.0])?;
            bsp.sync()?;
            check_eq!(bsp, sparse.len(), p);
            Ok((r, s, sums, total))
        },
        |n, got| {
            let sums: Vec<i64> = (0..n)
                .map(|i| {
                    // After reverse, process j holds n-1-j; after the shift,
                    // process j holds n-1-left(j).
                    (0..=i).map(|j| (n - 1 - (j + n - 1) % n) as i64).sum()
                })
                .collect();
            let total: i64 = sums.iter().sum();
            for (pid, &(r, s, su, t)) in got.iter().enumerate() {
                assert_eq!(r as usize, n - 1 - pid);
                assert_eq!(s as usize, n - 1 - (pid + n - 1) % n);
                assert_eq!((su, t), (sums[pid], total), "process {pid}");
            }
        },
    );
}
