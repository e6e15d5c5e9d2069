//! The checks of collective calls: the descriptor each process's call is
//! compared with (its left neighbour's, or on `mpi` every process's in
//! barrier A), and the errors that name both calls when they differ.

use super::{elem_of, DESC, NAMES, SYNC_KIND};
use crate::error::{Error, ErrorKind};
use crate::process::{Loc, Process};

/// A descriptor as received: the fields and where the call was made.
struct Desc {
    fields: [u64; 4],
    line: u64,
    file: String,
}

impl Desc {
    fn name(&self) -> &'static str {
        if self.fields[0] == SYNC_KIND {
            return "bsp_sync";
        }
        NAMES
            .get(self.fields[0] as usize)
            .copied()
            .unwrap_or("a collective")
    }
}

impl Process {
    /// After a sync: the checks of collective calls. A collective's sync
    /// compares its descriptor with its left neighbour's; a plain sync
    /// fails if others ended the superstep with a collective.
    pub(crate) fn check_collective(&mut self, loc: Loc) -> Result<(), Error> {
        if self.world.rendezvous().is_some() {
            // Checked in barrier A (`coll_check_hash`).
            self.sync_desc = None;
            return Ok(());
        }
        let left = (self.pid + self.nprocs - 1) % self.nprocs;
        let Some((name, mine)) = self.sync_desc.take() else {
            if self.last_flags & crate::mailbox::COLL == 0 {
                return Ok(());
            }
            let detail = match self.descriptors().into_iter().next() {
                Some((q, d)) => format!(
                    "process {q} called {} ({}:{}) where this process called bsp_sync",
                    d.name(),
                    d.file,
                    d.line
                ),
                None => {
                    "other processes called a collective where this process called bsp_sync".into()
                }
            };
            return Err(self.fail_in_call(
                ErrorKind::CollectiveMismatch { detail },
                "bsp_sync",
                loc,
            ));
        };
        if self.left_fields(left) == Some(mine) {
            return Ok(());
        }
        let theirs = self.descriptors().into_iter().find(|(q, _)| *q == left);
        let detail = match theirs {
            Some((_, d)) if d.fields == mine => return Ok(()),
            Some((_, d)) => {
                let what = if d.fields[0] != mine[0] {
                    format!("it called {}", d.name())
                } else if d.fields[1] != mine[1] {
                    format!("its root is {}, ours {}", d.fields[1], mine[1])
                } else if d.fields[2] != mine[2] {
                    format!("it gave {} bytes, we {}", d.fields[2], mine[2])
                } else if d.fields[3] >> 32 != mine[3] >> 32 {
                    "it uses another algorithm (Collectives::set_algorithm)".into()
                } else if elem_of(d.fields[3]) != elem_of(mine[3]) {
                    format!(
                        "its elements have {} bytes, ours {}",
                        elem_of(d.fields[3]),
                        elem_of(mine[3])
                    )
                } else {
                    "its operator differs".into()
                };
                format!(
                    "{name} here and on process {left} ({}:{}) do not match: {what}",
                    d.file, d.line
                )
            }
            None => format!("process {left} did not call {name}: it called bsp_sync"),
        };
        Err(self.fail_in_call(ErrorKind::CollectiveMismatch { detail }, name, loc))
    }

    /// [`fail`](Process::fail) naming the superstep of the call (the sync
    /// that found the error has already begun the next one).
    pub(super) fn fail_in_call(&self, kind: ErrorKind, call: &'static str, loc: Loc) -> Error {
        let superstep = self.superstep.saturating_sub(1);
        let err = Error::new(kind, self.call_name(call), self.pid, superstep, loc);
        self.world.fail(err.clone());
        err
    }

    /// On `mpi`: the hash barrier A compares (this process's collective's
    /// descriptor, or a plain sync's).
    pub(crate) fn coll_check_hash(&self) -> u64 {
        let fields = self
            .sync_desc
            .map_or([SYNC_KIND, self.check_sync_hash(), 0, 0], |(_, f)| f);
        fields.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &w| {
            (h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)
        })
    }

    /// On `mpi`, when barrier A found processes whose checks differ (every
    /// process learns it in the same barrier): every process sends every
    /// other its descriptor and the place of its call (`MPI_Allgather` of
    /// fixed-size slots; nothing else happens between the barrier and it,
    /// so every process takes part), and the error names the first two
    /// neighbours, in pid order, that disagree.
    pub(crate) fn coll_check_error(&mut self, loc: Loc) -> Error {
        const SLOT: usize = 512;
        let (mine_name, fields) = self
            .sync_desc
            .take()
            .unwrap_or(("bsp_sync", [SYNC_KIND, self.check_sync_hash(), 0, 0]));
        let (file, line) = loc.map_or(("", 0), |l| (l.file(), l.line()));
        let file = &file.as_bytes()[..file.len().min(SLOT - 48)];
        let mut slot = [0u8; SLOT];
        for (i, w) in [
            fields[0],
            fields[1],
            fields[2],
            fields[3],
            u64::from(line),
            file.len() as u64,
        ]
        .iter()
        .enumerate()
        {
            slot[8 * i..8 * i + 8].copy_from_slice(&w.to_ne_bytes());
        }
        slot[48..48 + file.len()].copy_from_slice(file);
        let mut all = vec![0u8; SLOT * self.nprocs];
        if let Some(m) = self.world.rendezvous() {
            m.coll_gather(None, &slot, &mut all);
        }
        let desc = |q: usize| {
            let b = &all[q * SLOT..(q + 1) * SLOT];
            let w =
                |i: usize| u64::from_ne_bytes(b[8 * i..8 * i + 8].try_into().unwrap_or_default());
            let flen = (w(5) as usize).min(SLOT - 48);
            Desc {
                fields: [w(0), w(1), w(2), w(3)],
                line: w(4),
                file: String::from_utf8_lossy(&b[48..48 + flen]).into_owned(),
            }
        };
        let n = self.nprocs;
        // Checking mode: two plain syncs at different lines (`check.rs`).
        let first = (1..n)
            .map(|q| (q - 1, q))
            .chain(std::iter::once((n - 1, 0)))
            .map(|(a, b)| (a, b, desc(a), desc(b)))
            .find(|(_, _, da, db)| da.fields != db.fields);
        if let Some((a, b, da, db)) =
            first.filter(|(_, _, da, db)| da.fields[0] == SYNC_KIND && db.fields[0] == SYNC_KIND)
        {
            let kind = ErrorKind::SyncMismatch {
                syncs: Box::new([
                    (a, format!("{}:{}", da.file, da.line)),
                    (b, format!("{}:{}", db.file, db.line)),
                ]),
            };
            let call = self.call_name(mine_name);
            let err = Error::new(kind, call, self.pid, self.superstep, loc);
            self.world.fail_collective(err.clone(), self.pid);
            return err;
        }
        let detail = (1..n)
            .map(|q| (q - 1, q))
            .chain(std::iter::once((n - 1, 0)))
            .map(|(a, b)| (a, b, desc(a), desc(b)))
            .find(|(_, _, da, db)| da.fields != db.fields)
            .map_or_else(
                || "the processes ended the superstep with different collectives".into(),
                |(a, b, da, db)| {
                    let at = |d: &Desc| format!("{}:{}", d.file, d.line);
                    let what = if da.fields[0] != db.fields[0] {
                        return format!(
                            "process {a} called {} ({}) where process {b} called {} ({})",
                            da.name(),
                            at(&da),
                            db.name(),
                            at(&db)
                        );
                    } else if da.fields[1] != db.fields[1] {
                        format!(
                            "the root is {} on process {a}, {} on process {b}",
                            da.fields[1], db.fields[1]
                        )
                    } else if da.fields[2] != db.fields[2] {
                        format!(
                            "process {a} gave {} bytes, process {b} {}",
                            da.fields[2], db.fields[2]
                        )
                    } else if da.fields[3] >> 32 != db.fields[3] >> 32 {
                        "they use different algorithms (Collectives::set_algorithm)".into()
                    } else if elem_of(da.fields[3]) != elem_of(db.fields[3]) {
                        format!(
                            "process {a}'s elements have {} bytes, process {b}'s {}",
                            elem_of(da.fields[3]),
                            elem_of(db.fields[3])
                        )
                    } else {
                        "their operators differ".into()
                    };
                    format!(
                        "{} on process {a} ({}) and on process {b} ({}) do not match: {what}",
                        da.name(),
                        at(&da),
                        at(&db)
                    )
                },
            );
        let err = Error::new(
            ErrorKind::CollectiveMismatch { detail },
            self.call_name(mine_name),
            self.pid,
            self.superstep,
            loc,
        );
        self.world.fail_collective(err.clone(), self.pid);
        err
    }

    /// The fields of the descriptor process `left` sent in the last sync,
    /// if it sent one (read in place: the check of every collective).
    fn left_fields(&self, left: usize) -> Option<[u64; 4]> {
        self.inbox.coll.iter().find_map(|&(src, m)| {
            // SAFETY: as in `descriptors`.
            let bytes = unsafe { std::slice::from_raw_parts(m.payload, m.len) };
            let w = |i: usize| {
                bytes
                    .get(8 * i..8 * i + 8)
                    .map(|b| u64::from_ne_bytes(b.try_into().unwrap_or_default()))
            };
            if src != left || w(0) != Some(DESC) {
                return None;
            }
            Some([w(1)?, w(2)?, w(3)?, w(4)?])
        })
    }

    /// The descriptors received in the last sync, with their senders.
    fn descriptors(&self) -> Vec<(usize, Desc)> {
        let mut out = Vec::new();
        for &(src, m) in &self.inbox.coll {
            // SAFETY: the record's bytes stay readable until the inbox is
            // cleared (barrier A of the next sync).
            let bytes = unsafe { std::slice::from_raw_parts(m.payload, m.len) };
            let w = |i: usize| {
                bytes
                    .get(8 * i..8 * i + 8)
                    .map(|b| u64::from_ne_bytes(b.try_into().unwrap_or_default()))
            };
            if w(0) != Some(DESC) {
                continue;
            }
            let (Some(f0), Some(f1), Some(f2), Some(f3), Some(line), Some(flen)) =
                (w(1), w(2), w(3), w(4), w(5), w(6))
            else {
                continue;
            };
            let file = bytes
                .get(56..56 + (flen as usize).min(bytes.len().saturating_sub(56)))
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            out.push((
                src,
                Desc {
                    fields: [f0, f1, f2, f3],
                    line,
                    file,
                },
            ));
        }
        out
    }
}
