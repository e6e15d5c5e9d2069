//! Runs a [`Program`] on the library, through the safe API (and the
//! `unsafe fn`s `hpput` / `hpget`), recording what each process observes.

use std::any::Any;

use bsplib::{Area, Bsp, Error};
use bytemuck::Pod;

use crate::model::{Obs, Observed};
use crate::program::{initial_byte, Collective, Op, Program, PutSource, FILL};

/// An area of either element type.
enum AnyArea {
    Bytes(Area<u8>),
    Words(Area<u32>),
}

impl AnyArea {
    fn bytes(&self, bsp: &Bsp) -> Vec<u8> {
        match self {
            AnyArea::Bytes(x) => x.to_vec(bsp),
            AnyArea::Words(x) => bytemuck::cast_slice(x.as_slice(bsp)).to_vec(),
        }
    }
}

/// The element types of areas.
trait Elem: Pod {
    fn of(area: &AnyArea) -> &Area<Self>;
    fn of_mut(area: &mut AnyArea) -> &mut Area<Self>;
}

impl Elem for u8 {
    fn of(area: &AnyArea) -> &Area<u8> {
        match area {
            AnyArea::Bytes(x) => x,
            AnyArea::Words(_) => panic!("invalid program: a u32 area used as u8"),
        }
    }
    fn of_mut(area: &mut AnyArea) -> &mut Area<u8> {
        match area {
            AnyArea::Bytes(x) => x,
            AnyArea::Words(_) => panic!("invalid program: a u32 area used as u8"),
        }
    }
}

impl Elem for u32 {
    fn of(area: &AnyArea) -> &Area<u32> {
        match area {
            AnyArea::Words(x) => x,
            AnyArea::Bytes(_) => panic!("invalid program: a u8 area used as u32"),
        }
    }
    fn of_mut(area: &mut AnyArea) -> &mut Area<u32> {
        match area {
            AnyArea::Words(x) => x,
            AnyArea::Bytes(_) => panic!("invalid program: a u8 area used as u32"),
        }
    }
}

/// The elements whose bytes are `bytes` (native byte order).
fn from_bytes<T: Pod>(bytes: &[u8]) -> Vec<T> {
    let mut v = vec![T::zeroed(); bytes.len() / std::mem::size_of::<T>()];
    bytemuck::cast_slice_mut(&mut v).copy_from_slice(bytes);
    v
}

/// One observation as a [`bsplib::Portable`] value: `(kind, a, b, bytes)`.
pub type Wire = (u8, u64, u64, Vec<u8>);

/// What one process returns: per superstep, its observations and every
/// area after the sync.
pub type Trace = Vec<(Vec<Wire>, Vec<Vec<u8>>)>;

fn encode(o: Obs) -> Wire {
    match o {
        Obs::Tagsize(n) => (0, n as u64, 0, Vec::new()),
        Obs::Peek(b) => (1, 0, 0, b),
        Obs::Qsize(n, b) => (2, n as u64, b as u64, Vec::new()),
        Obs::GetTag(r, buf) => (3, r.is_some().into(), r.unwrap_or(0) as u64, buf),
        Obs::Move(n, buf) => (4, n as u64, 0, buf),
        Obs::HpMove(None) => (5, 0, 0, Vec::new()),
        Obs::HpMove(Some((mut tag, payload))) => {
            let n = tag.len() as u64;
            tag.extend(payload);
            (5, 1, n, tag)
        }
    }
}

/// The inverse of [`encode`].
pub fn decode(trace: Trace) -> Vec<Observed> {
    let one = |(kind, a, b, mut bytes): Wire| match kind {
        0 => Obs::Tagsize(a as usize),
        1 => Obs::Peek(bytes),
        2 => Obs::Qsize(a as usize, b as usize),
        3 => Obs::GetTag((a == 1).then_some(b as usize), bytes),
        4 => Obs::Move(a as usize, bytes),
        5 if a == 0 => Obs::HpMove(None),
        5 => {
            let payload = bytes.split_off(b as usize);
            Obs::HpMove(Some((bytes, payload)))
        }
        _ => panic!("unknown observation kind {kind}"),
    };
    trace
        .into_iter()
        .map(|(obs, memory)| (obs.into_iter().map(one).collect(), memory))
        .collect()
}

/// The SPMD function: runs process `bsp.pid()`'s part of `prog`.
pub fn execute(bsp: &mut Bsp, prog: &Program) -> Result<Trace, Error> {
    let me = bsp.pid();
    assert_eq!(bsp.nprocs(), prog.p, "the run has the program's p");
    let mut areas: Vec<AnyArea> = (prog.areas.iter().enumerate())
        .map(|(a, spec)| {
            let init: Vec<u8> = (0..spec.bytes()).map(|i| initial_byte(me, a, i)).collect();
            if spec.word {
                AnyArea::Words(Area::from_vec(bsp, from_bytes(&init)))
            } else {
                AnyArea::Bytes(Area::from_vec(bsp, init))
            }
        })
        .collect();
    let mut trace = Vec::with_capacity(prog.steps.len());
    for step in &prog.steps {
        let mut obs = Vec::new();
        // The sources of this superstep's hpputs, alive until the sync
        // returns.
        let mut keep: Vec<Box<dyn Any>> = Vec::new();
        for op in &step.ops[me] {
            let word = |area: usize| prog.areas[area].word;
            let bsp = &*bsp;
            match op {
                Op::Collective(k) => collective(bsp, &areas, &step.collectives[*k], &mut obs)?,
                Op::Poke { area, .. }
                | Op::Peek { area, .. }
                | Op::Put { area, .. }
                | Op::Get { area, .. } => {
                    if word(*area) {
                        typed::<u32>(bsp, &mut areas, op, &mut obs, &mut keep)?
                    } else {
                        typed::<u8>(bsp, &mut areas, op, &mut obs, &mut keep)?
                    }
                }
                Op::Send {
                    pod,
                    pid,
                    tag,
                    payload,
                } => send(bsp, *pod, *pid, tag, payload)?,
                Op::Qsize => {
                    let (n, b) = bsp.qsize();
                    obs.push(Obs::Qsize(n, b));
                }
                Op::GetTag { buf_len } => {
                    let mut buf = vec![FILL; *buf_len];
                    let r = bsp.get_tag(&mut buf)?;
                    obs.push(Obs::GetTag(r, buf));
                }
                Op::Move { buf_len } => {
                    let mut buf = vec![FILL; *buf_len];
                    let n = bsp.move_payload(&mut buf)?;
                    obs.push(Obs::Move(n, buf));
                }
                Op::HpMove | Op::Drain => loop {
                    let m = bsp.hpmove();
                    let done = m.is_none();
                    obs.push(Obs::HpMove(
                        m.map(|m| (m.tag().to_vec(), m.payload().to_vec())),
                    ));
                    if done || matches!(op, Op::HpMove) {
                        break;
                    }
                },
            }
        }
        bsp.sync()?;
        drop(keep);
        let memory = areas.iter().map(|a| a.bytes(bsp)).collect();
        trace.push((obs.into_iter().map(encode).collect(), memory));
    }
    Ok(trace)
}

fn collective(
    bsp: &Bsp,
    areas: &[AnyArea],
    c: &Collective,
    obs: &mut Vec<Obs>,
) -> Result<(), Error> {
    let me = bsp.pid();
    match c {
        Collective::Push(entries) => match (entries[me], entries[me].map(|(a, _)| &areas[a])) {
            (Some((_, len)), Some(AnyArea::Bytes(x))) if len == x.len() => bsp.push_reg(x),
            (Some((_, len)), Some(AnyArea::Bytes(x))) => bsp.push_reg_prefix(x, len),
            (Some((_, len)), Some(AnyArea::Words(x))) if len == x.len() => bsp.push_reg(x),
            (Some((_, len)), Some(AnyArea::Words(x))) => bsp.push_reg_prefix(x, len),
            _ => bsp.push_reg_null(),
        },
        Collective::Pop(names) => match names[me].map(|a| &areas[a]) {
            Some(AnyArea::Bytes(x)) => bsp.pop_reg(x),
            Some(AnyArea::Words(x)) => bsp.pop_reg(x),
            None => bsp.pop_reg_null(),
        },
        Collective::SetTagsize(n) => {
            obs.push(Obs::Tagsize(bsp.set_tagsize(*n)?));
            Ok(())
        }
    }
}

/// `send`, or `send_pod` with a tag type of the tag's size and `u32`
/// elements when the payload allows.
fn send(bsp: &Bsp, pod: bool, pid: usize, tag: &[u8], payload: &[u8]) -> Result<(), Error> {
    if !pod {
        return bsp.send(pid, tag, payload);
    }
    if payload.len() % 4 == 0 {
        let words: Vec<u32> = from_bytes(payload);
        send_pod_tag(bsp, pid, tag, &words)
    } else {
        send_pod_tag(bsp, pid, tag, payload)
    }
}

fn send_pod_tag<T: Pod>(bsp: &Bsp, pid: usize, tag: &[u8], payload: &[T]) -> Result<(), Error> {
    match tag.len() {
        0 => bsp.send_pod(pid, &(), payload),
        1 => bsp.send_pod(pid, &tag[0], payload),
        2 => bsp.send_pod(pid, &u16::from_ne_bytes([tag[0], tag[1]]), payload),
        3 => bsp.send_pod(pid, &[tag[0], tag[1], tag[2]], payload),
        4 => bsp.send_pod(pid, &bytemuck::pod_read_unaligned::<u32>(tag), payload),
        8 => bsp.send_pod(pid, &bytemuck::pod_read_unaligned::<u64>(tag), payload),
        _ => bsp.send(pid, tag, bytemuck::cast_slice(payload)),
    }
}

/// The operations on areas whose element type is `T`.
fn typed<T: Elem>(
    bsp: &Bsp,
    areas: &mut [AnyArea],
    op: &Op,
    obs: &mut Vec<Obs>,
    keep: &mut Vec<Box<dyn Any>>,
) -> Result<(), Error> {
    match op {
        Op::Poke { area, off, bytes } => {
            let values: Vec<T> = from_bytes(bytes);
            let x = T::of_mut(&mut areas[*area]).as_mut_slice(bsp);
            x[*off..off + values.len()].copy_from_slice(&values);
        }
        Op::Peek { area, off, len } => {
            let x = T::of(&areas[*area]).as_slice(bsp);
            obs.push(Obs::Peek(
                bytemuck::cast_slice(&x[*off..off + len]).to_vec(),
            ));
        }
        Op::Put {
            hp,
            pid,
            src,
            area,
            off,
        } => {
            let dst = T::of(&areas[*area]);
            match src {
                PutSource::Bytes(bytes) => {
                    let values: Vec<T> = from_bytes(bytes);
                    if *hp {
                        // SAFETY: `values` moves into `keep` (its heap
                        // buffer stays where it is) and is dropped only
                        // after the sync; the generator gives this hpput's
                        // destination bytes to no other access in the
                        // superstep.
                        unsafe { bsp.hpput(*pid, dst, *off, &values)? };
                        keep.push(Box::new(values));
                    } else {
                        bsp.put(*pid, dst, *off, &values)?;
                    }
                }
                PutSource::Area {
                    area: c,
                    off: c_off,
                    len,
                } => {
                    let values = &T::of(&areas[*c]).as_slice(bsp)[*c_off..c_off + len];
                    if *hp {
                        // SAFETY: the areas live until the end of the run;
                        // the generator lets nothing write this source
                        // range (no poke, put or get into it) in this
                        // superstep, and gives the destination bytes to no
                        // other access.
                        unsafe { bsp.hpput(*pid, dst, *off, values)? };
                    } else {
                        bsp.put(*pid, dst, *off, values)?;
                    }
                }
            }
        }
        Op::Get {
            hp,
            pid,
            area,
            off,
            dst,
            dst_off,
            len,
        } => {
            let (src, dst) = (T::of(&areas[*area]), T::of(&areas[*dst]));
            if *hp {
                // SAFETY: the generator lets nothing write the source range
                // on `pid`, and nothing else read or write the destination
                // range here, in this superstep.
                unsafe { bsp.hpget(*pid, src, *off, dst.range(*dst_off..*dst_off + (*len)))? };
            } else {
                bsp.get(*pid, src, *off, dst.range(*dst_off..*dst_off + (*len)))?;
            }
        }
        _ => unreachable!("not an area operation"),
    }
    Ok(())
}
