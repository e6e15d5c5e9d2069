//! Vector transfers (the LAPI seed's `lapi_vec_t`): the three kinds of
//! vector, the checks an origin vector passes at the call (each failure a
//! LAPI return code), the checks a target vector passes against its
//! origin, and the one copy routine every kind uses. Step 1 of the
//! active-messages design (`engine/ACTIVE_MESSAGES.md`, sections 5 and
//! 11): no engine uses it yet.
//!
//! A vector is a list of blocks `(address, length)`. The copy walks the
//! origin's blocks and the target's in order, moving `min(left in the
//! origin block, left in the target block)` bytes at a time, and stops
//! when either side runs out: origin bytes beyond the target's total are
//! not copied, target bytes beyond the origin's total are untouched.
//! IOVECTOR and STRIDED pairs are checked to have matching blocks, so for
//! them the walk is block to block.

#![cfg_attr(not(test), allow(dead_code))]

/// The largest total length of a vector (and of a strided extent): it
/// fits C's `int` counts.
pub(crate) const MAX_MSG_SZ: usize = (1 << 31) - 1;

/// The kinds of vector (`lapi_vectype_t`), with LAPI's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub(crate) enum Kind {
    /// `LAPI_GEN_IOVECTOR`: block `i` to block `i`, same counts and lengths.
    IoVector = 0,
    /// `LAPI_GEN_STRIDED_XFER`: `info = {base, block, stride}`, `num_vecs`
    /// blocks of `block` bytes, `stride` apart.
    Strided = 1,
    /// `LAPI_GEN_GENERIC`: any counts and lengths; the bytes flow in order.
    Generic = 2,
}

impl Kind {
    /// The kind with LAPI's value `v`.
    pub(crate) fn from_raw(v: i32) -> Option<Kind> {
        match v {
            0 => Some(Kind::IoVector),
            1 => Some(Kind::Strided),
            2 => Some(Kind::Generic),
            _ => None,
        }
    }
}

/// Why an origin vector is refused at the call: the LAPI return codes of
/// the seed (plus `HdrHndlrNull` and the others of the call, checked
/// elsewhere).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OriginError {
    /// `LAPI_ERR_ORG_VEC_NULL`: no vector.
    VecNull,
    /// `LAPI_ERR_ORG_VEC_TYPE`: not one of the three kinds.
    VecType,
    /// `LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL`: a strided vector without its
    /// `info` array or base address.
    StrideAddrNull,
    /// `LAPI_ERR_ORG_STRIDE`: a stride smaller than its block.
    Stride,
    /// `LAPI_ERR_ORG_EXTENT`: a strided extent (`stride × num_vecs`)
    /// beyond [`MAX_MSG_SZ`].
    Extent,
    /// `LAPI_ERR_ORG_VEC_LEN`: no length array, or a total beyond
    /// [`MAX_MSG_SZ`].
    VecLen,
    /// `LAPI_ERR_ORG_VEC_ADDR`: a block of nonzero length without an
    /// address.
    VecAddr,
}

/// A vector as a C caller describes it: its kind (raw, checked here), its
/// count, and its `info` and `len` arrays (`None` for a NULL array; an
/// address 0 is a NULL address). For a strided vector `info` holds
/// `{base, block, stride}` and `len` is not read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Raw<'a> {
    pub(crate) kind: i32,
    pub(crate) num_vecs: usize,
    pub(crate) info: Option<&'a [usize]>,
    pub(crate) len: Option<&'a [usize]>,
}

/// A checked vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Vector<'a> {
    /// IOVECTOR or GENERIC: `(address, length)` of each block.
    Blocks {
        kind: Kind,
        addrs: &'a [usize],
        lens: &'a [usize],
    },
    /// STRIDED.
    Strided {
        base: usize,
        block: usize,
        stride: usize,
        count: usize,
    },
}

/// Checks an origin vector in the order of the design (section 5), the
/// first failure winning; `vec == None` is a NULL vector.
pub(crate) fn check_origin<'a>(vec: Option<Raw<'a>>) -> Result<Vector<'a>, OriginError> {
    let v = vec.ok_or(OriginError::VecNull)?;
    let kind = Kind::from_raw(v.kind).ok_or(OriginError::VecType)?;
    let n = v.num_vecs;
    if kind == Kind::Strided {
        let (base, block, stride) = match v.info {
            Some(&[base, block, stride, ..]) if base != 0 => (base, block, stride),
            _ if n == 0 => return Ok(empty_strided()),
            _ => return Err(OriginError::StrideAddrNull),
        };
        if stride < block {
            return Err(OriginError::Stride);
        }
        match stride.checked_mul(n) {
            Some(extent) if extent <= MAX_MSG_SZ => {}
            _ => return Err(OriginError::Extent),
        }
        return Ok(Vector::Strided {
            base,
            block,
            stride,
            count: n,
        });
    }
    // No blocks, or only empty ones without addresses: nothing to move.
    let nothing = Vector::Blocks {
        kind,
        addrs: &[],
        lens: &[],
    };
    if n == 0 {
        return Ok(nothing);
    }
    let lens = match v.len {
        Some(l) if l.len() >= n => &l[..n],
        _ => return Err(OriginError::VecLen),
    };
    let addrs = match v.info {
        Some(a) if a.len() >= n => &a[..n],
        _ if lens.iter().all(|&l| l == 0) => return Ok(nothing),
        _ => return Err(OriginError::VecAddr),
    };
    if addrs.iter().zip(lens).any(|(&a, &l)| a == 0 && l != 0) {
        return Err(OriginError::VecAddr);
    }
    let mut total = 0usize;
    for &l in lens {
        total = total
            .checked_add(l)
            .filter(|&t| t <= MAX_MSG_SZ)
            .ok_or(OriginError::VecLen)?;
    }
    Ok(Vector::Blocks { kind, addrs, lens })
}

fn empty_strided() -> Vector<'static> {
    Vector::Strided {
        base: 0,
        block: 0,
        stride: 0,
        count: 0,
    }
}

/// Why a target vector does not fit its origin (a failure on the target:
/// the origin's call returned long ago).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TargetError {
    /// The target's kind is not the origin's.
    Kind,
    /// IOVECTOR: another count, or block `i` of another length.
    IoVector { block: Option<usize> },
    /// STRIDED: another count or block size, or a stride below the block.
    Strided,
    /// A block of nonzero length without an address.
    NullAddress { block: usize },
}

impl Vector<'_> {
    /// The kind.
    pub(crate) fn kind(&self) -> Kind {
        match self {
            Vector::Blocks { kind, .. } => *kind,
            Vector::Strided { .. } => Kind::Strided,
        }
    }

    /// Block `i`: `(address, length)`.
    fn block(&self, i: usize) -> (usize, usize) {
        match *self {
            Vector::Blocks { addrs, lens, .. } => (addrs[i], lens[i]),
            Vector::Strided {
                base,
                block,
                stride,
                ..
            } => (base.wrapping_add(i.wrapping_mul(stride)), block),
        }
    }

    /// The number of blocks.
    pub(crate) fn count(&self) -> usize {
        match self {
            Vector::Blocks { lens, .. } => lens.len(),
            Vector::Strided { count, .. } => *count,
        }
    }

    /// The total length.
    pub(crate) fn total(&self) -> usize {
        (0..self.count()).map(|i| self.block(i).1).sum()
    }

    /// Checks that `self`, the target's vector, fits `origin`.
    pub(crate) fn check_target(&self, origin: &Vector<'_>) -> Result<(), TargetError> {
        if self.kind() != origin.kind() {
            return Err(TargetError::Kind);
        }
        match (self, origin) {
            (Vector::Blocks { lens: t, .. }, Vector::Blocks { lens: o, .. })
                if self.kind() == Kind::IoVector =>
            {
                if t.len() != o.len() {
                    return Err(TargetError::IoVector { block: None });
                }
                if let Some(i) = (0..t.len()).find(|&i| t[i] != o[i]) {
                    return Err(TargetError::IoVector { block: Some(i) });
                }
            }
            (
                Vector::Strided {
                    block: tb,
                    stride: ts,
                    count: tc,
                    ..
                },
                Vector::Strided {
                    block: ob,
                    count: oc,
                    ..
                },
            ) if tc != oc || tb != ob || ts < tb => return Err(TargetError::Strided),
            _ => {}
        }
        if let Some(i) = (0..self.count()).find(|&i| {
            let (a, l) = self.block(i);
            a == 0 && l != 0
        }) {
            return Err(TargetError::NullAddress { block: i });
        }
        Ok(())
    }
}

/// The in-order walk of every kind: calls `copy(origin block, offset in
/// it, target block, offset in it, bytes)` for each piece, in order, and
/// returns the bytes moved (the smaller of the two totals).
pub(crate) fn walk(origin: &Vector<'_>, target: &Vector<'_>, mut copy: impl FnMut(Piece)) -> usize {
    let (mut oi, mut oat, mut ti, mut tat, mut moved) = (0, 0, 0, 0, 0);
    while oi < origin.count() && ti < target.count() {
        let (oa, ol) = origin.block(oi);
        let (ta, tl) = target.block(ti);
        let n = (ol - oat).min(tl - tat);
        if n > 0 {
            copy(Piece {
                src: oa.wrapping_add(oat),
                dst: ta.wrapping_add(tat),
                len: n,
            });
            moved += n;
        }
        oat += n;
        tat += n;
        if oat == ol {
            oi += 1;
            oat = 0;
        }
        if tat == tl {
            ti += 1;
            tat = 0;
        }
    }
    moved
}

/// One contiguous piece of a vector copy: `len` bytes from address `src`
/// to address `dst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) src: usize,
    pub(crate) dst: usize,
    pub(crate) len: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Addresses (provenance exposed) of the blocks of `buf` at
    /// `offsets`, to read from or, through them, to write.
    fn addrs(buf: &mut [u8], offsets: &[usize]) -> Vec<usize> {
        let base = buf.as_mut_ptr().expose_provenance();
        offsets.iter().map(|&o| base + o).collect()
    }

    /// Runs the walk with real copies between two buffers.
    fn copy_between(origin: &Vector<'_>, target: &Vector<'_>) -> usize {
        walk(origin, target, |p| {
            // SAFETY: the tests' vectors lie inside live buffers whose
            // addresses were exposed from mutable pointers, not borrowed
            // meanwhile, and not overlapping each other.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    std::ptr::with_exposed_provenance::<u8>(p.src),
                    std::ptr::with_exposed_provenance_mut::<u8>(p.dst),
                    p.len,
                )
            }
        })
    }

    fn blocks<'a>(kind: Kind, a: &'a [usize], l: &'a [usize]) -> Vector<'a> {
        check_origin(Some(Raw {
            kind: kind as i32,
            num_vecs: l.len(),
            info: Some(a),
            len: Some(l),
        }))
        .expect("a valid vector")
    }

    #[test]
    fn generic_5_10_5_into_12_2_4_2_fills_in_order() {
        let mut src: Vec<u8> = (1..=20).collect();
        let mut dst = vec![0u8; 24];
        let (oa, ol) = (addrs(&mut src, &[0, 5, 15]), [5, 10, 5]);
        let (ta, tl) = (addrs(&mut dst, &[0, 12, 14, 18]), [12, 2, 4, 2]);
        let o = blocks(Kind::Generic, &oa, &ol);
        let t = blocks(Kind::Generic, &ta, &tl);
        t.check_target(&o).unwrap();
        assert_eq!((o.total(), t.total()), (20, 20));
        let mut pieces = Vec::new();
        walk(&o, &t, |p| {
            pieces.push((p.src - oa[0], p.dst - ta[0], p.len))
        });
        // The design's walk-through: o0[0..5]->t0[0..5], o1[0..7]->t0[5..12],
        // o1[7..9]->t1, o1[9..10]->t2[0..1], o2[0..3]->t2[1..4], o2[3..5]->t3.
        assert_eq!(
            pieces,
            vec![
                (0, 0, 5),
                (5, 5, 7),
                (12, 12, 2),
                (14, 14, 1),
                (15, 15, 3),
                (18, 18, 2)
            ]
        );
        assert_eq!(copy_between(&o, &t), 20);
        assert_eq!(&dst[..20], &src[..]);
        assert_eq!(&dst[20..], &[0; 4]);
    }

    #[test]
    fn generic_20_into_5_10_drops_the_rest() {
        let mut src: Vec<u8> = (1..=20).collect();
        let mut dst = vec![0u8; 40];
        let (oa, ol) = (addrs(&mut src, &[0]), [20]);
        let (ta, tl) = (addrs(&mut dst, &[0, 20]), [5, 10]);
        let o = blocks(Kind::Generic, &oa, &ol);
        let t = blocks(Kind::Generic, &ta, &tl);
        assert_eq!(copy_between(&o, &t), 15);
        assert_eq!(&dst[..5], &src[..5]);
        assert_eq!(&dst[5..20], &[0; 15]);
        assert_eq!(&dst[20..30], &src[5..15]);
        assert_eq!(&dst[30..], &[0; 10]);
    }

    #[test]
    fn iovector_goes_block_to_block_and_must_match() {
        let mut src: Vec<u8> = (1..=12).collect();
        let mut dst = vec![0u8; 30];
        let (oa, ol) = (addrs(&mut src, &[0, 3, 7]), [3, 4, 5]);
        let (ta, tl) = (addrs(&mut dst, &[20, 0, 10]), [3, 4, 5]);
        let o = blocks(Kind::IoVector, &oa, &ol);
        let t = blocks(Kind::IoVector, &ta, &tl);
        t.check_target(&o).unwrap();
        assert_eq!(copy_between(&o, &t), 12);
        assert_eq!(&dst[20..23], &src[0..3]);
        assert_eq!(&dst[0..4], &src[3..7]);
        assert_eq!(&dst[10..15], &src[7..12]);
        let bad = [3, 5, 4];
        let t = blocks(Kind::IoVector, &ta, &bad);
        assert_eq!(
            t.check_target(&o),
            Err(TargetError::IoVector { block: Some(1) })
        );
        let t = blocks(Kind::IoVector, &ta[..2], &tl[..2]);
        assert_eq!(
            t.check_target(&o),
            Err(TargetError::IoVector { block: None })
        );
        let t = blocks(Kind::Generic, &ta, &tl);
        assert_eq!(t.check_target(&o), Err(TargetError::Kind));
    }

    #[test]
    fn strided_3_blocks_of_5_at_stride_8() {
        let mut src: Vec<u8> = (1..=24).collect();
        let mut dst = vec![0u8; 40];
        let info = [src.as_mut_ptr().expose_provenance(), 5, 8];
        let o = check_origin(Some(Raw {
            kind: Kind::Strided as i32,
            num_vecs: 3,
            info: Some(&info),
            len: None,
        }))
        .unwrap();
        let tinfo = [dst.as_mut_ptr().expose_provenance(), 5, 12];
        let t = check_origin(Some(Raw {
            kind: Kind::Strided as i32,
            num_vecs: 3,
            info: Some(&tinfo),
            len: None,
        }))
        .unwrap();
        t.check_target(&o).unwrap();
        assert_eq!(copy_between(&o, &t), 15);
        assert_eq!(&dst[0..5], &src[0..5]);
        assert_eq!(&dst[12..17], &src[8..13]);
        assert_eq!(&dst[24..29], &src[16..21]);
        assert_eq!(dst.iter().filter(|&&b| b != 0).count(), 15);
        // Another block size, or a stride below the block: refused.
        let bad = [tinfo[0], 4, 12];
        let t = check_origin(Some(Raw {
            kind: 1,
            num_vecs: 3,
            info: Some(&bad),
            len: None,
        }))
        .unwrap();
        assert_eq!(t.check_target(&o), Err(TargetError::Strided));
    }

    #[test]
    fn origin_checks_give_the_seeds_codes_in_order() {
        let a = [8usize, 16];
        let l = [4usize, 4];
        let raw = |kind, n, info, len| {
            Some(Raw {
                kind,
                num_vecs: n,
                info,
                len,
            })
        };
        assert_eq!(check_origin(None), Err(OriginError::VecNull));
        assert_eq!(
            check_origin(raw(7, 2, Some(&a), Some(&l))),
            Err(OriginError::VecType)
        );
        // Strided: no info, a NULL base, a stride below the block, an
        // extent beyond the limit.
        assert_eq!(
            check_origin(raw(1, 2, None, None)),
            Err(OriginError::StrideAddrNull)
        );
        assert_eq!(
            check_origin(raw(1, 2, Some(&[0, 4, 8]), None)),
            Err(OriginError::StrideAddrNull)
        );
        assert_eq!(
            check_origin(raw(1, 2, Some(&[8, 9, 8]), None)),
            Err(OriginError::Stride)
        );
        assert_eq!(
            check_origin(raw(1, 3, Some(&[8, 4, MAX_MSG_SZ / 2]), None)),
            Err(OriginError::Extent)
        );
        assert_eq!(
            check_origin(raw(1, 2, Some(&[8, 4, usize::MAX]), None)),
            Err(OriginError::Extent)
        );
        // Blocks: no lengths, a NULL address with a length, a total beyond
        // the limit.
        for kind in [0, 2] {
            assert_eq!(
                check_origin(raw(kind, 2, Some(&a), None)),
                Err(OriginError::VecLen)
            );
            assert_eq!(
                check_origin(raw(kind, 2, None, Some(&l))),
                Err(OriginError::VecAddr)
            );
            assert_eq!(
                check_origin(raw(kind, 2, Some(&[8, 0]), Some(&l))),
                Err(OriginError::VecAddr)
            );
            assert_eq!(
                check_origin(raw(kind, 2, Some(&a), Some(&[MAX_MSG_SZ, 1]))),
                Err(OriginError::VecLen)
            );
            // A NULL address of an empty block, and empty vectors, are fine.
            assert!(check_origin(raw(kind, 2, Some(&[8, 0]), Some(&[4, 0]))).is_ok());
            assert!(check_origin(raw(kind, 0, None, None)).is_ok());
            assert!(check_origin(raw(kind, 2, None, Some(&[0, 0]))).is_ok());
        }
        // The order: a NULL vector before a bad kind, a bad kind before
        // anything about the arrays.
        assert_eq!(
            check_origin(raw(9, 2, None, None)),
            Err(OriginError::VecType)
        );
    }

    #[test]
    fn a_target_block_without_address_is_refused() {
        let mut src = [1u8; 8];
        let (oa, ol) = (addrs(&mut src, &[0]), [8]);
        let o = blocks(Kind::Generic, &oa, &ol);
        let t = Vector::Blocks {
            kind: Kind::Generic,
            addrs: &[0],
            lens: &[8],
        };
        assert_eq!(
            t.check_target(&o),
            Err(TargetError::NullAddress { block: 0 })
        );
    }
}
