//! The reference model: a sequential simulation of a [`Program`] written
//! from the BSPlib semantics (not from the library), and the comparison of
//! what the library did with it.
//!
//! Memories are `Vec<u8>` per process and area. A superstep runs each
//! process's operations in order against its local copy (pokes, peeks,
//! puts copying their source now, sends), then the sync: every get reads
//! its source as it is at the end of the superstep, then get data is
//! written, then put data (so a put and a get into one byte: the put's
//! remains); registration calls are applied in call order to the one slot
//! table; tag sizes go `(A, B, C) := (B, C, C)`; the messages sent become
//! the queue of the next superstep, and the old queue is dropped.
//!
//! The library promises no order within a queue, so received messages are
//! checked by [`queue_consistent`]: some order of the superstep's messages
//! must explain every `qsize`, `get_tag`, `move_payload` and `hpmove`.

use crate::program::{initial_byte, Collective, Op, Program, PutSource, FILL};

/// One observation of a process, in the order it made them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Obs {
    /// What `set_tagsize` returned.
    Tagsize(usize),
    /// The bytes a `Peek` read.
    Peek(Vec<u8>),
    /// `qsize()`.
    Qsize(usize, usize),
    /// `get_tag`'s result and the whole buffer after the call.
    GetTag(Option<usize>, Vec<u8>),
    /// `move_payload`'s result and the whole buffer after the call.
    Move(usize, Vec<u8>),
    /// `hpmove`: `(tag, payload)`.
    HpMove(Option<Msg>),
}

impl Obs {
    /// Observations that do not depend on the order of the queue.
    fn is_exact(&self) -> bool {
        matches!(self, Obs::Tagsize(_) | Obs::Peek(_))
    }
}

/// A message: `(tag, payload)`.
pub type Msg = (Vec<u8>, Vec<u8>);

/// What one process does in one superstep, as the library reports it:
/// observations, and every area after the sync.
pub type Observed = (Vec<Obs>, Vec<Vec<u8>>);

/// The model's prediction for one process and superstep.
#[derive(Clone, Debug)]
pub struct Expected {
    /// The order-independent observations, in order.
    pub exact: Vec<Obs>,
    /// The messages in the queue during the superstep, in any order.
    pub queue: Vec<Msg>,
    /// Every area after the sync that ends the superstep.
    pub memory: Vec<Vec<u8>>,
}

/// A slot of the model's registration table: per process `(area, extent
/// in bytes)`, or NULL.
type Slot = Vec<Option<(usize, usize)>>;

/// The slot a put or get by `me` naming `area` goes through (the most
/// recent one holding `area` in `me`'s column), and what `pid` registered
/// there.
fn remote(table: &[Slot], me: usize, area: usize, pid: usize) -> (usize, usize) {
    let slot = table
        .iter()
        .rev()
        .find(|s| s[me].is_some_and(|(a, _)| a == area))
        .expect("invalid program: area not registered");
    slot[pid].expect("invalid program: remote NULL")
}

/// The slot a pop call removes, given each process's argument.
fn popped(table: &[Slot], names: &[Option<usize>]) -> usize {
    let mut slot = None;
    for (pid, name) in names.iter().enumerate() {
        if let Some(area) = name {
            let i = table
                .iter()
                .rposition(|s| s[pid].is_some_and(|(a, _)| a == *area))
                .expect("invalid program: pop of an unregistered area");
            assert!(slot.is_none_or(|j| j == i), "invalid program: pops differ");
            slot = Some(i);
        }
    }
    let i = slot.unwrap_or_else(|| {
        table
            .iter()
            .rposition(|s| s.iter().all(Option::is_none))
            .expect("invalid program: no NULL slot to pop")
    });
    for (pid, name) in names.iter().enumerate() {
        assert!(
            name.is_some() || table[i][pid].is_none(),
            "invalid program: NULL pop of a non-NULL entry"
        );
    }
    i
}

/// A put recorded during the superstep: destination process, area, byte
/// offset, data.
type PendingPut = (usize, usize, usize, Vec<u8>);
/// A get: source process, area, byte range; destination area, byte offset
/// on the process that issued it.
type PendingGet = (usize, usize, std::ops::Range<usize>, usize, usize, usize);

/// Runs `prog` on the model: `[pid][superstep]` predictions.
pub fn simulate(prog: &Program) -> Vec<Vec<Expected>> {
    let p = prog.p;
    let elem = |area: usize| prog.areas[area].elem();
    let mut mem: Vec<Vec<Vec<u8>>> = (0..p)
        .map(|pid| {
            let areas = prog.areas.iter().enumerate();
            areas
                .map(|(a, s)| (0..s.bytes()).map(|i| initial_byte(pid, a, i)).collect())
                .collect()
        })
        .collect();
    let mut table: Vec<Slot> = Vec::new();
    let (mut tag_send, mut tag_next) = (0usize, 0usize);
    let mut queues: Vec<Vec<Msg>> = vec![Vec::new(); p];
    let mut out: Vec<Vec<Expected>> = vec![Vec::new(); p];
    for step in &prog.steps {
        let mut local = mem.clone();
        let mut puts: Vec<PendingPut> = Vec::new();
        let mut gets: Vec<PendingGet> = Vec::new();
        let mut sent: Vec<Vec<Msg>> = vec![Vec::new(); p];
        let mut exact: Vec<Vec<Obs>> = vec![Vec::new(); p];
        for (me, ops) in step.ops.iter().enumerate() {
            let mut next = tag_next;
            for op in ops {
                match op {
                    Op::Collective(k) => {
                        if let Collective::SetTagsize(n) = step.collectives[*k] {
                            exact[me].push(Obs::Tagsize(next));
                            next = n;
                        }
                    }
                    Op::Poke { area, off, bytes } => {
                        let at = off * elem(*area);
                        local[me][*area][at..at + bytes.len()].copy_from_slice(bytes);
                    }
                    Op::Peek { area, off, len } => {
                        let e = elem(*area);
                        exact[me].push(Obs::Peek(
                            local[me][*area][off * e..(off + len) * e].to_vec(),
                        ));
                    }
                    Op::Put {
                        pid,
                        src,
                        area,
                        off,
                        ..
                    } => {
                        let e = elem(*area);
                        let data = match src {
                            PutSource::Bytes(b) => b.clone(),
                            PutSource::Area { area: c, off, len } => {
                                local[me][*c][off * e..(off + len) * e].to_vec()
                            }
                        };
                        let (b, extent) = remote(&table, me, *area, *pid);
                        assert!(off * e + data.len() <= extent, "invalid program: put");
                        puts.push((*pid, b, off * e, data));
                    }
                    Op::Get {
                        pid,
                        area,
                        off,
                        dst,
                        dst_off,
                        len,
                        ..
                    } => {
                        let e = elem(*area);
                        let (b, extent) = remote(&table, me, *area, *pid);
                        assert!((off + len) * e <= extent, "invalid program: get");
                        gets.push((*pid, b, off * e..(off + len) * e, me, *dst, dst_off * e));
                    }
                    Op::Send {
                        pid, tag, payload, ..
                    } => {
                        assert_eq!(tag.len(), tag_send, "invalid program: tag size");
                        sent[*pid].push((tag.clone(), payload.clone()));
                    }
                    // Receiving: checked against the queue.
                    Op::Qsize | Op::GetTag { .. } | Op::Move { .. } | Op::HpMove | Op::Drain => {}
                }
            }
        }
        // The sync: get sources are read at the end of the superstep; get
        // data is written, then put data.
        let values: Vec<Vec<u8>> = gets
            .iter()
            .map(|(pid, b, range, ..)| local[*pid][*b][range.clone()].to_vec())
            .collect();
        for ((.., me, dst, at), v) in gets.iter().zip(values) {
            local[*me][*dst][*at..at + v.len()].copy_from_slice(&v);
        }
        for (pid, b, at, data) in puts {
            local[pid][b][at..at + data.len()].copy_from_slice(&data);
        }
        mem = local;
        for c in &step.collectives {
            match c {
                Collective::Push(entries) => table.push(
                    entries
                        .iter()
                        .map(|e| e.map(|(a, len)| (a, len * elem(a))))
                        .collect(),
                ),
                Collective::Pop(names) => {
                    let i = popped(&table, names);
                    table.remove(i);
                }
                Collective::SetTagsize(n) => tag_next = *n,
            }
        }
        tag_send = tag_next;
        let queue = std::mem::replace(&mut queues, sent);
        for (pid, (exact, queue)) in exact.into_iter().zip(queue).enumerate() {
            out[pid].push(Expected {
                exact,
                queue,
                memory: mem[pid].clone(),
            });
        }
    }
    out
}

/// Compares what the library did (`[pid][superstep]`) with the model.
pub fn compare(expected: &[Vec<Expected>], got: &[Vec<Observed>]) -> Result<(), String> {
    if got.len() != expected.len() {
        return Err(format!(
            "{} results for {} processes",
            got.len(),
            expected.len()
        ));
    }
    for (pid, (exp, got)) in expected.iter().zip(got).enumerate() {
        if exp.len() != got.len() {
            return Err(format!(
                "process {pid}: {} supersteps, expected {}",
                got.len(),
                exp.len()
            ));
        }
        for (s, (e, (obs, memory))) in exp.iter().zip(got).enumerate() {
            let at = format!("process {pid}, superstep {s}");
            let (exact, msgs): (Vec<&Obs>, Vec<&Obs>) = obs.iter().partition(|o| o.is_exact());
            if exact.iter().copied().ne(e.exact.iter()) {
                return Err(format!(
                    "{at}: observed {exact:?}, the model says {:?}",
                    e.exact
                ));
            }
            if !queue_consistent(&msgs, &mut e.queue.clone(), None) {
                return Err(format!(
                    "{at}: no order of the queue {:?} explains the receives {msgs:?}",
                    e.queue
                ));
            }
            if *memory != e.memory {
                return Err(format!(
                    "{at}: memory after the sync {memory:?}, the model says {:?}",
                    e.memory
                ));
            }
        }
    }
    Ok(())
}

/// What a `move_payload` into a buffer of `len` bytes gives for `m`.
fn moved(m: &Msg, len: usize) -> (usize, Vec<u8>) {
    let n = len.min(m.1.len());
    let mut buf = m.1[..n].to_vec();
    buf.resize(len, FILL);
    (n, buf)
}

/// What a `get_tag` into a buffer of `len` bytes gives for `m`.
fn tagged(m: &Msg, len: usize) -> (Option<usize>, Vec<u8>) {
    let mut buf = m.0.clone();
    buf.resize(len, FILL);
    (Some(m.1.len()), buf)
}

/// Whether some order of the messages `left` explains the receive
/// observations `obs`; `front` is the message a `get_tag` already showed
/// to be first. Equal messages are tried once.
pub fn queue_consistent(obs: &[&Obs], left: &mut Vec<Msg>, front: Option<usize>) -> bool {
    let Some((first, rest)) = obs.split_first() else {
        return true;
    };
    // Candidates for the first message of the queue.
    let candidates: Vec<usize> = match front {
        Some(i) => vec![i],
        None => (0..left.len())
            .filter(|&i| !left[..i].contains(&left[i]))
            .collect(),
    };
    let removing = |i: usize, left: &mut Vec<Msg>| {
        let m = left.remove(i);
        let ok = queue_consistent(rest, left, None);
        left.insert(i, m);
        ok
    };
    match first {
        Obs::Qsize(n, bytes) => {
            *n == left.len()
                && *bytes == left.iter().map(|m| m.1.len()).sum::<usize>()
                && queue_consistent(rest, left, front)
        }
        Obs::GetTag(None, buf) => {
            left.is_empty() && buf.iter().all(|&b| b == FILL) && queue_consistent(rest, left, front)
        }
        Obs::HpMove(None) => left.is_empty() && queue_consistent(rest, left, front),
        Obs::GetTag(Some(_), buf) => candidates.into_iter().any(|i| {
            let (len, expect) = tagged(&left[i], buf.len());
            **first == Obs::GetTag(len, expect) && queue_consistent(rest, left, Some(i))
        }),
        Obs::Move(n, buf) => candidates
            .into_iter()
            .any(|i| moved(&left[i], buf.len()) == (*n, buf.clone()) && removing(i, left)),
        Obs::HpMove(Some(m)) => candidates
            .into_iter()
            .any(|i| left[i] == *m && removing(i, left)),
        Obs::Tagsize(_) | Obs::Peek(_) => unreachable!("not a receive"),
    }
}
