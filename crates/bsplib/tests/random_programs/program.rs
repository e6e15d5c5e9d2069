//! Random BSPlib programs: their representation and their generator.
//!
//! A [`Program`] is concrete and valid by construction: every operation
//! names a live registration, stays inside the registered extents, uses the
//! tag size in force, and respects the contracts of the unbuffered
//! operations. The generator draws a *raw* program of plain numbers
//! (proptest shrinks those towards zero, fewer supersteps and fewer
//! operations) and [`concretize`]s it by walking the registration table, the
//! tag sizes and the message counts superstep by superstep; a raw choice
//! that cannot be made valid is dropped. Shrinking the raw program therefore
//! always yields valid programs.
//!
//! Conflicts inside one superstep are avoided at byte granularity (the
//! [`Claims`] table), so that the outcome is unique: no two puts (buffered
//! or not, from any processes) write the same byte; no two gets write the
//! same byte; a put and a get may write the same byte (the put wins); the
//! destination of an `hpput` or `hpget` is touched by nothing else; the
//! source of an `hpget` or of an `hpput` from an area is written by
//! nothing.

use std::fmt;
use std::ops::RangeInclusive;

use proptest::collection::vec;
use proptest::prelude::*;

/// The byte every receive buffer is filled with before a call.
pub const FILL: u8 = 0xEE;

/// Tag sizes `set_tagsize` is called with.
const TAG_SIZES: [usize; 6] = [0, 1, 2, 3, 4, 8];

/// One area, the same on every process (contents differ).
#[derive(Clone, Copy, Debug)]
pub struct AreaSpec {
    /// Elements are `u32` (else `u8`).
    pub word: bool,
    /// Number of elements.
    pub len: usize,
}

impl AreaSpec {
    /// Size of one element in bytes.
    pub fn elem(&self) -> usize {
        if self.word {
            4
        } else {
            1
        }
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.len * self.elem()
    }
}

/// The initial byte `i` of area `area` on process `pid`.
pub fn initial_byte(pid: usize, area: usize, i: usize) -> u8 {
    (pid * 64 + area * 16 + i + 1) as u8
}

/// A whole program: `p` processes, areas created before the first
/// superstep, then supersteps, each ended by a sync.
#[derive(Clone)]
pub struct Program {
    pub p: usize,
    pub areas: Vec<AreaSpec>,
    pub steps: Vec<Step>,
}

/// One superstep.
#[derive(Clone, Debug)]
pub struct Step {
    /// The collective calls, in call order (the same on every process).
    pub collectives: Vec<Collective>,
    /// Per process, its operations in order; [`Op::Collective`] marks
    /// where it makes collective call `k`.
    pub ops: Vec<Vec<Op>>,
}

/// A collective call, with each process's arguments.
#[derive(Clone, Debug)]
pub enum Collective {
    /// Per process: `push_reg_null` (`None`), or `push_reg_prefix` of the
    /// first `len` elements of an area (`len` = the area's length: `push_reg`).
    Push(Vec<Option<(usize, usize)>>),
    /// Per process: `pop_reg` of an area, or `pop_reg_null`.
    Pop(Vec<Option<usize>>),
    /// `set_tagsize(n)`.
    SetTagsize(usize),
}

/// The source of a put.
#[derive(Clone, Debug)]
pub enum PutSource {
    /// Literal bytes (a multiple of the element size).
    Bytes(Vec<u8>),
    /// Elements `off..off + len` of a local area (of the destination's
    /// element type), read at the call (`put`) or at the sync (`hpput`).
    Area { area: usize, off: usize, len: usize },
}

/// One operation of one process. Offsets and lengths count elements of the
/// named area's type; `area` fields name local areas.
#[derive(Clone, Debug)]
pub enum Op {
    /// Makes collective call `k` of the superstep.
    Collective(usize),
    /// Writes `bytes` into the local area from element `off`.
    Poke {
        area: usize,
        off: usize,
        bytes: Vec<u8>,
    },
    /// Records the local contents of elements `off..off + len`.
    Peek {
        area: usize,
        off: usize,
        len: usize,
    },
    /// `put` (or `hpput`) into the slot of local area `area` on `pid`.
    Put {
        hp: bool,
        pid: usize,
        src: PutSource,
        area: usize,
        off: usize,
    },
    /// `get` (or `hpget`) from the slot of `area` on `pid` into local `dst`.
    Get {
        hp: bool,
        pid: usize,
        area: usize,
        off: usize,
        dst: usize,
        dst_off: usize,
        len: usize,
    },
    /// `send` (or `send_pod`).
    Send {
        pod: bool,
        pid: usize,
        tag: Vec<u8>,
        payload: Vec<u8>,
    },
    Qsize,
    GetTag {
        buf_len: usize,
    },
    Move {
        buf_len: usize,
    },
    HpMove,
    /// `hpmove` until the queue is empty.
    Drain,
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Program {{ p: {}, areas: {:?}", self.p, self.areas)?;
        for (s, step) in self.steps.iter().enumerate() {
            writeln!(f, "  superstep {s}: collectives {:?}", step.collectives)?;
            for (pid, ops) in step.ops.iter().enumerate() {
                writeln!(f, "    process {pid}: {ops:?}")?;
            }
        }
        write!(f, "}}")
    }
}

// ----- the raw program ---------------------------------------------------

/// A raw collective call: kind, and per process an argument and the
/// position of the call among the process's operations.
type RawCollective = (u8, Vec<(u32, u32)>);
/// A raw operation: kind and four arguments.
type RawOp = (u8, [u32; 4]);
/// A raw superstep: collectives, and per process its operations.
type RawStep = (Vec<RawCollective>, Vec<Vec<RawOp>>);

/// Programs with a number of processes in `procs`.
pub fn programs(procs: RangeInclusive<usize>) -> impl Strategy<Value = Program> {
    procs
        .prop_flat_map(|p| {
            // Mostly tiny areas (every overlap and edge is likely); one in
            // eight of 4 KiB or more, which on `processes` lives in area
            // memory (hpputs from it and gets of it read it in place).
            let len = prop_oneof![7 => 0usize..=12, 1 => 4096usize..=4160];
            let areas = vec((any::<bool>(), len), 1..=4);
            let collective = (any::<u8>(), vec((any::<u32>(), any::<u32>()), p));
            let op = (any::<u8>(), proptest::array::uniform4(any::<u32>()));
            let step = (vec(collective, 0..=3), vec(vec(op, 0..=6), p));
            (Just(p), areas, vec(step, 1..=6))
        })
        .prop_map(|(p, areas, steps)| concretize(p, &areas, &steps))
}

// ----- concretization ----------------------------------------------------

/// One registration slot: per process, `(area, extent in bytes)` or NULL.
pub type Slot = Vec<Option<(usize, usize)>>;

/// The most recent slot of `table` in which process `pid` registered `area`.
pub fn resolve(table: &[Slot], pid: usize, area: usize) -> Option<usize> {
    table
        .iter()
        .rposition(|s| matches!(s[pid], Some((a, _)) if a == area))
}

/// Whether every process can name slot `i` of `table` in a pop.
fn poppable(table: &[Slot], i: usize) -> bool {
    let slot = &table[i];
    if slot.iter().all(Option::is_none) {
        return table.iter().rposition(|s| s.iter().all(Option::is_none)) == Some(i);
    }
    slot.iter()
        .enumerate()
        .all(|(pid, e)| e.is_none_or(|(a, _)| resolve(table, pid, a) == Some(i)))
}

/// Per process, per area, per byte: how the superstep uses the byte.
#[derive(Clone)]
struct Claims(Vec<Vec<Vec<u8>>>);

/// Destination of a put or hpput.
const PUT: u8 = 1;
/// Destination of an hpput or hpget: nothing else may touch it.
const HP_DST: u8 = 2;
/// Destination of a get.
const GET_DST: u8 = 4;
/// Source of an hpget or of an hpput from an area: nothing may write it.
const HP_SRC: u8 = 8;
/// Written by the owner (`Poke`).
const POKE: u8 = 16;
/// Read by the owner during the superstep, or by a get at the sync.
const READ: u8 = 32;
const WRITES: u8 = PUT | HP_DST | GET_DST | POKE;

fn conflict(a: u8, b: u8) -> bool {
    let one_way = |x: u8, y: u8| {
        (x & PUT != 0 && y & PUT != 0)
            || (x & HP_DST != 0 && y != 0)
            || (x & GET_DST != 0 && y & GET_DST != 0)
            || (x & HP_SRC != 0 && y & WRITES != 0)
    };
    one_way(a, b) || one_way(b, a)
}

impl Claims {
    fn new(p: usize, areas: &[AreaSpec]) -> Self {
        Claims(vec![areas.iter().map(|a| vec![0; a.bytes()]).collect(); p])
    }

    /// Claims every `(pid, area, byte range, use)` of one operation, or
    /// nothing (returning false) if any conflicts.
    fn claim(&mut self, uses: &[(usize, usize, std::ops::Range<usize>, u8)]) -> bool {
        let mut next = self.clone();
        for (pid, area, range, how) in uses {
            for b in &mut next.0[*pid][*area][range.clone()] {
                if conflict(*b, *how) {
                    return false;
                }
                *b |= how;
            }
        }
        *self = next;
        true
    }
}

/// The state the generator tracks from superstep to superstep.
struct Gen<'a> {
    p: usize,
    areas: &'a [AreaSpec],
    /// The registration table in force in this superstep.
    table: Vec<Slot>,
    /// The table after this superstep's collective calls.
    pending: Vec<Slot>,
    /// Tag size of the messages in the queue (A), of messages sent now (B),
    /// and after this superstep's calls (C).
    tag_queue: usize,
    tag_send: usize,
    tag_next: usize,
    /// Per process: messages left in its queue as its operations are made.
    queued: Vec<usize>,
    /// Per process: messages sent to it in this superstep.
    sent: Vec<usize>,
    claims: Claims,
}

/// `off..off + len` inside `0..n`, from two raw numbers.
fn range(n: usize, a: u32, b: u32) -> (usize, usize) {
    let off = a as usize % (n + 1);
    let len = b as usize % (n - off + 1);
    (off, len)
}

/// `n` bytes of a pattern seeded by `x`.
fn pattern(x: u32, n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| (x as usize).wrapping_mul(31).wrapping_add(i * 7 + 0x80) as u8)
        .collect()
}

/// Turns a raw program into a valid concrete one.
fn concretize(p: usize, raw_areas: &[(bool, usize)], raw_steps: &[RawStep]) -> Program {
    let areas: Vec<AreaSpec> = raw_areas
        .iter()
        .map(|&(word, len)| AreaSpec { word, len })
        .collect();
    let mut g = Gen {
        p,
        areas: &areas,
        table: Vec::new(),
        pending: Vec::new(),
        tag_queue: 0,
        tag_send: 0,
        tag_next: 0,
        queued: vec![0; p],
        sent: vec![0; p],
        claims: Claims::new(p, &areas),
    };
    let steps = raw_steps.iter().map(|s| g.step(s)).collect();
    Program { p, areas, steps }
}

impl Gen<'_> {
    fn step(&mut self, (raw_colls, raw_ops): &RawStep) -> Step {
        let mut collectives = Vec::new();
        let mut positions = Vec::new();
        for (kind, args) in raw_colls {
            if let Some(c) = self.collective(*kind, args) {
                collectives.push(c);
                positions.push(args);
            }
        }
        let mut ops = Vec::with_capacity(self.p);
        for (pid, raw) in raw_ops.iter().enumerate() {
            let local: Vec<Op> = raw
                .iter()
                .filter_map(|&(k, a)| self.op(pid, k, a))
                .collect();
            // Insert the collective calls, in their order, at raw positions.
            let mut merged = Vec::with_capacity(local.len() + positions.len());
            let mut at = 0;
            let mut local = local.into_iter().peekable();
            for (k, args) in positions.iter().enumerate() {
                let pos = (args[pid].1 as usize % (raw.len() + 1)).max(at);
                while at < pos && local.peek().is_some() {
                    merged.push(local.next().expect("peeked"));
                    at += 1;
                }
                at = pos;
                merged.push(Op::Collective(k));
            }
            merged.extend(local);
            ops.push(merged);
        }
        // The sync.
        self.table = self.pending.clone();
        self.tag_queue = self.tag_send;
        self.tag_send = self.tag_next;
        self.queued = std::mem::replace(&mut self.sent, vec![0; self.p]);
        self.claims = Claims::new(self.p, self.areas);
        Step { collectives, ops }
    }

    fn collective(&mut self, kind: u8, args: &[(u32, u32)]) -> Option<Collective> {
        let n = self.areas.len();
        match kind % 4 {
            0 | 1 => {
                let entries: Slot = args
                    .iter()
                    .map(|&(x, _)| {
                        let x = x as usize;
                        if x % 5 == 0 {
                            return None;
                        }
                        let area = (x / 5) % n;
                        let spec = self.areas[area];
                        let len = if (x / (5 * n)) % 3 == 0 {
                            (x / (15 * n)) % (spec.len + 1)
                        } else {
                            spec.len
                        };
                        Some((area, len))
                    })
                    .collect();
                self.pending.push(
                    entries
                        .iter()
                        .map(|e| e.map(|(a, len)| (a, len * self.areas[a].elem())))
                        .collect(),
                );
                Some(Collective::Push(entries))
            }
            2 => {
                let choices: Vec<usize> = (0..self.pending.len())
                    .filter(|&i| poppable(&self.pending, i))
                    .collect();
                if choices.is_empty() {
                    return None;
                }
                let i = choices[args[0].0 as usize % choices.len()];
                let slot = self.pending.remove(i);
                Some(Collective::Pop(
                    slot.iter().map(|e| e.map(|(a, _)| a)).collect(),
                ))
            }
            _ => {
                let n = TAG_SIZES[args[0].0 as usize % TAG_SIZES.len()];
                self.tag_next = n;
                Some(Collective::SetTagsize(n))
            }
        }
    }

    /// The areas `pid` may name in a put or get: those it registered in a
    /// slot in force.
    fn registered(&self, pid: usize) -> Vec<usize> {
        (0..self.areas.len())
            .filter(|&a| resolve(&self.table, pid, a).is_some())
            .collect()
    }

    /// The remote side of a transfer by `me` naming `area`: a process
    /// (starting from `want`) that registered a non-NULL area in the slot,
    /// that area and its extent in elements of `area`'s type.
    fn remote(&self, me: usize, area: usize, want: u32) -> Option<(usize, usize, usize)> {
        let slot = &self.table[resolve(&self.table, me, area)?];
        (0..self.p)
            .map(|i| (want as usize + i) % self.p)
            .find_map(|pid| slot[pid].map(|(b, ext)| (pid, b, ext / self.areas[area].elem())))
    }

    fn op(&mut self, me: usize, kind: u8, a: [u32; 4]) -> Option<Op> {
        let n = self.areas.len();
        let bytes = |area: usize, off: usize, len: usize| {
            let e = self.areas[area].elem();
            off * e..(off + len) * e
        };
        match kind % 16 {
            0 => {
                let area = a[0] as usize % n;
                let (off, len) = range(self.areas[area].len, a[1], a[2]);
                self.claims
                    .claim(&[(me, area, bytes(area, off, len), READ)])
                    .then_some(Op::Peek { area, off, len })
            }
            1 => {
                let area = a[0] as usize % n;
                let (off, len) = range(self.areas[area].len, a[1], a[2]);
                let data = pattern(a[3], len * self.areas[area].elem());
                self.claims
                    .claim(&[(me, area, bytes(area, off, len), POKE)])
                    .then_some(Op::Poke {
                        area,
                        off,
                        bytes: data,
                    })
            }
            k @ 2..=5 => {
                let hp = k == 5;
                let names = self.registered(me);
                let area = *names.get(a[0] as usize % names.len().max(1))?;
                let (pid, b, ext) = self.remote(me, area, a[1])?;
                let (off, len) = range(ext, a[2], a[3]);
                let dst_use = if hp { PUT | HP_DST } else { PUT };
                let mut uses = vec![(pid, b, bytes(area, off, len), dst_use)];
                let word = self.areas[area].word;
                let same_type: Vec<usize> = (0..n)
                    .filter(|&c| self.areas[c].word == word && self.areas[c].len >= len)
                    .collect();
                let src = if a[3] % 3 == 0 && !same_type.is_empty() {
                    let c = same_type[a[2] as usize % same_type.len()];
                    let c_off = a[1] as usize % (self.areas[c].len - len + 1);
                    uses.push((me, c, bytes(c, c_off, len), if hp { HP_SRC } else { READ }));
                    PutSource::Area {
                        area: c,
                        off: c_off,
                        len,
                    }
                } else {
                    PutSource::Bytes(pattern(a[0] ^ a[3], len * self.areas[area].elem()))
                };
                self.claims.claim(&uses).then_some(Op::Put {
                    hp,
                    pid,
                    src,
                    area,
                    off,
                })
            }
            k @ 6..=8 => {
                let hp = k == 8;
                let names = self.registered(me);
                let area = *names.get(a[0] as usize % names.len().max(1))?;
                let (pid, b, ext) = self.remote(me, area, a[1])?;
                let word = self.areas[area].word;
                let dsts: Vec<usize> = (0..n).filter(|&c| self.areas[c].word == word).collect();
                let dst = dsts[a[3] as usize % dsts.len()];
                let (dst_off, len) = range(self.areas[dst].len, a[3] / 7, a[2]);
                let len = len.min(ext);
                let off = a[2] as usize / 3 % (ext - len + 1);
                let (src_use, dst_use) = if hp {
                    (HP_SRC, HP_DST)
                } else {
                    (READ, GET_DST)
                };
                let uses = [
                    (pid, b, bytes(area, off, len), src_use),
                    (me, dst, bytes(dst, dst_off, len), dst_use),
                ];
                self.claims.claim(&uses).then_some(Op::Get {
                    hp,
                    pid,
                    area,
                    off,
                    dst,
                    dst_off,
                    len,
                })
            }
            9 | 10 => {
                let pid = a[0] as usize % self.p;
                self.sent[pid] += 1;
                Some(Op::Send {
                    pod: a[2] % 2 == 1,
                    pid,
                    tag: pattern(a[1], self.tag_send),
                    payload: pattern(a[3], a[2] as usize / 2 % 13),
                })
            }
            11 => Some(Op::Qsize),
            12 => Some(Op::GetTag {
                buf_len: self.tag_queue + a[0] as usize % 3,
            }),
            13 if self.queued[me] > 0 => {
                self.queued[me] -= 1;
                Some(Op::Move {
                    buf_len: a[0] as usize % 10,
                })
            }
            13 | 14 => {
                self.queued[me] = self.queued[me].saturating_sub(1);
                Some(Op::HpMove)
            }
            _ => {
                self.queued[me] = 0;
                Some(Op::Drain)
            }
        }
    }
}
