//! The superstep profiler (issue 15; design in `PROFILE.md` beside this
//! file).
//!
//! Turned on for a run by [`Runtime::profile`](crate::Runtime::profile),
//! the environment variable `BSPLIB_PROFILE=DIR` ([`Runtime::from_env`],
//! and so C's `bsp_begin`) or `bsprun --profile DIR`. Each process then
//! records, for every superstep, when it computed and when it synchronised,
//! what it sent and received (the h-relation), and the source location of
//! the sync that ended the superstep; at its end it writes
//! `DIR/profile.<pid>.json`, a Chrome / Perfetto trace-event file with the
//! raw rows beside the events (key `bsplib`). `bspprof DIR` merges the
//! files into one trace and an HTML report.
//!
//! Off, a run pays one predictable branch per sync (`Process::sync`) and
//! nothing per put: the counts are taken at the sync, from the mailbox
//! and the delivered streams, never at the calls.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::bsmp::COLL_RECORD;
use crate::engine::DESCRIPTOR;
use crate::error::SourceLocation;
use crate::mailbox::{HpPut, DATA, GET, REG};
use crate::mem::{pad8, put_len, Payload, Records, VECTOR};
use crate::process::{Loc, Process};
use crate::rma::ACCUMULATE;

/// The version of the file format (key `bsplib.format`).
pub(crate) const FORMAT: u32 = 1;

/// The columns of a row of `bsplib.supersteps`, in order (documented in
/// `PROFILE.md`).
pub(crate) const COLUMNS: [&str; 26] = [
    "superstep",
    "compute_start_ns",
    "sync_start_ns",
    "sync_end_ns",
    "bytes_out",
    "bytes_in",
    "records_out",
    "records_in",
    "puts_out",
    "puts_in",
    "hpputs_out",
    "hpputs_in",
    "gets_out",
    "get_bytes_in",
    "gets_served",
    "messages_out",
    "messages_in",
    "collective_out",
    "collective_in",
    "am_out",
    "am_in",
    "other_out",
    "other_in",
    "failed",
    "at",
    "ended_by",
];

/// A run's profiling set-up, shared by its processes (`World`).
#[derive(Clone, Debug)]
pub(crate) struct Setup {
    dir: PathBuf,
    engine: &'static str,
}

impl Setup {
    /// Makes `dir` (and its parents) and checks that files can be written
    /// in it; `Err` names what failed.
    pub(crate) fn prepare(dir: &Path, engine: &'static str) -> Result<Setup, String> {
        let what = |e: std::io::Error, doing: &str| {
            format!(
                "the profile directory {} (BSPLIB_PROFILE, Runtime::profile or bsprun --profile) {doing}: {e}",
                dir.display()
            )
        };
        std::fs::create_dir_all(dir).map_err(|e| what(e, "cannot be created"))?;
        let probe = dir.join(format!(".bsplib-probe.{}", std::process::id()));
        std::fs::write(&probe, b"").map_err(|e| what(e, "cannot be written"))?;
        let _ = std::fs::remove_file(&probe);
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        Ok(Setup { dir, engine })
    }
}

/// What one process sent and received in one superstep (see `PROFILE.md`,
/// "The h-relation").
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) bytes_out: u64,
    pub(crate) bytes_in: u64,
    pub(crate) records_out: u64,
    pub(crate) records_in: u64,
    pub(crate) puts_out: u64,
    pub(crate) puts_in: u64,
    pub(crate) hpputs_out: u64,
    pub(crate) hpputs_in: u64,
    pub(crate) gets_out: u64,
    pub(crate) get_bytes_in: u64,
    pub(crate) gets_served: u64,
    pub(crate) messages_out: u64,
    pub(crate) messages_in: u64,
    pub(crate) collective_out: u64,
    pub(crate) collective_in: u64,
    pub(crate) am_out: u64,
    pub(crate) am_in: u64,
    /// The generic slot, for record kinds still to come (accumulates):
    /// records this walker does not know are counted here.
    pub(crate) other_out: u64,
    pub(crate) other_in: u64,
}

impl Counts {
    /// The counts as `(column, value)` pairs, in the order of [`COLUMNS`]
    /// (from `bytes_out` to `other_in`): the sync slice's `args` and the
    /// row array both write them from here.
    pub(crate) fn pairs(&self) -> [(&'static str, u64); 19] {
        [
            ("bytes_out", self.bytes_out),
            ("bytes_in", self.bytes_in),
            ("records_out", self.records_out),
            ("records_in", self.records_in),
            ("puts_out", self.puts_out),
            ("puts_in", self.puts_in),
            ("hpputs_out", self.hpputs_out),
            ("hpputs_in", self.hpputs_in),
            ("gets_out", self.gets_out),
            ("get_bytes_in", self.get_bytes_in),
            ("gets_served", self.gets_served),
            ("messages_out", self.messages_out),
            ("messages_in", self.messages_in),
            ("collective_out", self.collective_out),
            ("collective_in", self.collective_in),
            ("am_out", self.am_out),
            ("am_in", self.am_in),
            ("other_out", self.other_out),
            ("other_in", self.other_in),
        ]
    }
}

/// `,"<column>":` for each count of [`Counts::pairs`], as the sync
/// slice's `args` write them.
const ARG_KEYS: [&str; 19] = [
    ",\"bytes_out\":",
    ",\"bytes_in\":",
    ",\"records_out\":",
    ",\"records_in\":",
    ",\"puts_out\":",
    ",\"puts_in\":",
    ",\"hpputs_out\":",
    ",\"hpputs_in\":",
    ",\"gets_out\":",
    ",\"get_bytes_in\":",
    ",\"gets_served\":",
    ",\"messages_out\":",
    ",\"messages_in\":",
    ",\"collective_out\":",
    ",\"collective_in\":",
    ",\"am_out\":",
    ",\"am_in\":",
    ",\"other_out\":",
    ",\"other_in\":",
];

/// One superstep of one process.
#[derive(Clone, Copy)]
struct Row {
    superstep: u64,
    compute_start_ns: u64,
    sync_start_ns: u64,
    sync_end_ns: u64,
    counts: Counts,
    failed: bool,
    at: Option<SourceLocation>,
    /// The call that ended the superstep: `bsp_sync`, a collective's
    /// name, or `bsp_end` for the last one.
    ended_by: &'static str,
}

/// Rows reserved at the start (grown by doubling when full).
const INITIAL_ROWS: usize = 1024;

/// One process's recorder: its rows, written out when it is dropped
/// (the end of the process, however it ends).
pub(crate) struct Recorder {
    setup: Setup,
    pid: usize,
    nprocs: usize,
    start: Instant,
    start_unix_us: u64,
    /// The end of the last sync (the start of the computation of the
    /// current superstep), in ns since `start`.
    last_end_ns: u64,
    rows: Vec<Row>,
    /// Active messages: `(session, sent, handled)` at the last sync, and
    /// the totals of a session a sync closed (`profile_am_closing`).
    am_seen: (u32, u64, u64),
    am_closing: Option<(u64, u64)>,
    superstep: u64,
}

impl Recorder {
    pub(crate) fn new(setup: &Setup, pid: usize, nprocs: usize, start: Instant) -> Recorder {
        let since = start.elapsed();
        let now_unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let start_unix_us = now_unix.saturating_sub(since).as_micros() as u64;
        Recorder {
            setup: setup.clone(),
            pid,
            nprocs,
            start,
            start_unix_us,
            last_end_ns: ns(since),
            rows: Vec::with_capacity(INITIAL_ROWS),
            am_seen: (0, 0, 0),
            am_closing: None,
            superstep: 0,
        }
    }

    fn now_ns(&self) -> u64 {
        ns(self.start.elapsed())
    }

    /// The JSON of the whole profile (a trace-event file), as
    /// [`Recorder::write`] writes it.
    #[cfg(test)]
    pub(crate) fn to_json(&self) -> String {
        let mut out = Vec::with_capacity(256 + self.rows.len() * 900);
        let Ok(()) = self.emit(&mut out, |_| Ok::<(), std::convert::Infallible>(()));
        String::from_utf8(out).expect("the profile is UTF-8")
    }

    /// Formats the profile into `out`, calling `flush(out)` whenever
    /// `out` holds [`FLUSH_AT`] bytes or more and once at the end (`flush`
    /// may empty it: [`Recorder::write`] hands it to the file). The
    /// numbers are formatted by hand (`put_u64`, `put_us`), not through
    /// `fmt`: the file is about 720 bytes a superstep, and on `threads`
    /// every process formats its own at the end of the run at once.
    fn emit<E>(
        &self,
        out: &mut Vec<u8>,
        mut flush: impl FnMut(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let me = self.pid as u64;
        // `,"pid":1,"tid":<me>,"ts":`, the same in every event.
        let mut pid_tid_ts = Vec::with_capacity(32);
        pid_tid_ts.extend_from_slice(b",\"pid\":");
        put_u64(&mut pid_tid_ts, TRACE_PID.into());
        pid_tid_ts.extend_from_slice(b",\"tid\":");
        put_u64(&mut pid_tid_ts, me);
        pid_tid_ts.extend_from_slice(b",\"ts\":");
        let pid_tid = &pid_tid_ts[..pid_tid_ts.len() - 6];
        let mut at = Vec::with_capacity(64);

        out.extend_from_slice(b"{\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"process_name\"");
        out.extend_from_slice(pid_tid);
        out.extend_from_slice(b",\"args\":{\"name\":\"bsplib run (");
        out.extend_from_slice(self.setup.engine.as_bytes());
        out.extend_from_slice(b", p = ");
        put_u64(out, self.nprocs as u64);
        out.extend_from_slice(b")\"}},\n{\"ph\":\"M\",\"name\":\"thread_name\"");
        out.extend_from_slice(pid_tid);
        out.extend_from_slice(b",\"args\":{\"name\":\"process ");
        put_u64(out, me);
        out.extend_from_slice(b"\"}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\"");
        out.extend_from_slice(pid_tid);
        out.extend_from_slice(b",\"args\":{\"sort_index\":");
        put_u64(out, me);
        out.extend_from_slice(b"}}");
        for r in &self.rows {
            let c = &r.counts;
            out.extend_from_slice(b",\n{\"ph\":\"X\",\"cat\":\"compute\",\"name\":\"compute\"");
            out.extend_from_slice(&pid_tid_ts);
            put_us(out, r.compute_start_ns);
            out.extend_from_slice(b",\"dur\":");
            put_us(out, r.sync_start_ns.saturating_sub(r.compute_start_ns));
            out.extend_from_slice(b",\"args\":{\"superstep\":");
            put_u64(out, r.superstep);
            out.extend_from_slice(b"}}");
            if r.ended_by == "bsp_end" {
                continue;
            }
            out.extend_from_slice(b",\n{\"ph\":\"X\",\"cat\":\"sync\",\"name\":");
            put_json_str(out, r.ended_by);
            out.extend_from_slice(&pid_tid_ts);
            put_us(out, r.sync_start_ns);
            out.extend_from_slice(b",\"dur\":");
            put_us(out, r.sync_end_ns.saturating_sub(r.sync_start_ns));
            out.extend_from_slice(b",\"args\":{\"superstep\":");
            put_u64(out, r.superstep);
            out.extend_from_slice(b",\"at\":");
            put_at(&mut at, r.at);
            out.extend_from_slice(&at);
            for (key, (_, value)) in ARG_KEYS.iter().zip(c.pairs()) {
                out.extend_from_slice(key.as_bytes());
                put_u64(out, value);
            }
            out.extend_from_slice(if r.failed {
                b",\"failed\":true}}"
            } else {
                b",\"failed\":false}}"
            });
            out.extend_from_slice(b",\n{\"ph\":\"C\",\"name\":\"h bytes, process ");
            put_u64(out, me);
            out.push(b'"');
            out.extend_from_slice(&pid_tid_ts);
            put_us(out, r.sync_start_ns);
            out.extend_from_slice(b",\"args\":{\"out\":");
            put_u64(out, c.bytes_out);
            out.extend_from_slice(b",\"in\":");
            put_u64(out, c.bytes_in);
            out.extend_from_slice(b"}}");
            if out.len() >= FLUSH_AT {
                flush(out)?;
            }
        }
        out.extend_from_slice(b"\n],\n\"displayTimeUnit\":\"ms\",\n\"bsplib\":{\"format\":");
        put_u64(out, FORMAT.into());
        out.extend_from_slice(b",\"engine\":");
        put_json_str(out, self.setup.engine);
        out.extend_from_slice(b",\"nprocs\":");
        put_u64(out, self.nprocs as u64);
        out.extend_from_slice(b",\"pid\":");
        put_u64(out, me);
        out.extend_from_slice(b",\"start_unix_us\":");
        put_u64(out, self.start_unix_us);
        out.extend_from_slice(
            b",\"clock\":\"ts in microseconds and the *_ns columns in nanoseconds, since this process's start (start_unix_us, wall clock)\",\n\"columns\":[",
        );
        for (i, c) in COLUMNS.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            put_json_str(out, c);
        }
        out.extend_from_slice(b"],\n\"supersteps\":[");
        for (i, r) in self.rows.iter().enumerate() {
            out.extend_from_slice(if i > 0 { b",\n[" } else { b"\n[" });
            put_u64(out, r.superstep);
            for value in [r.compute_start_ns, r.sync_start_ns, r.sync_end_ns] {
                out.push(b',');
                put_u64(out, value);
            }
            for (_, value) in r.counts.pairs() {
                out.push(b',');
                put_u64(out, value);
            }
            out.extend_from_slice(if r.failed { b",1," } else { b",0," });
            put_at(&mut at, r.at);
            out.extend_from_slice(&at);
            out.push(b',');
            put_json_str(out, r.ended_by);
            out.push(b']');
            if out.len() >= FLUSH_AT {
                flush(out)?;
            }
        }
        out.extend_from_slice(b"\n]}}\n");
        flush(out)
    }

    /// Writes `DIR/profile.<pid>.json` (through a temporary file renamed
    /// into place, the file of an earlier run removed first), formatted
    /// into one buffer handed to the file every [`FLUSH_AT`] bytes; `Err`
    /// names the file and the reason.
    pub(crate) fn write(&self) -> Result<PathBuf, String> {
        use std::io::Write as _;
        let path = self.setup.dir.join(format!("profile.{}.json", self.pid));
        let tmp = self
            .setup
            .dir
            .join(format!(".profile.{}.json.{}", self.pid, std::process::id()));
        let written = std::fs::File::create(&tmp).and_then(|mut file| {
            let mut buf = Vec::with_capacity(FLUSH_AT + 4096);
            self.emit(&mut buf, |buf| {
                let r = file.write_all(buf);
                buf.clear();
                r
            })
        });
        // A file of an earlier run is removed before the rename: renaming
        // over it makes ext4 (`auto_da_alloc`) start writing the new file
        // out in the rename, about 2.5 ms for LU's 870 kB here.
        written
            .and_then(|()| match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            })
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!("cannot write the profile {}: {e}", path.display())
            })?;
        Ok(path)
    }
}

/// The bytes [`Recorder::emit`] gathers before handing them on.
const FLUSH_AT: usize = 64 * 1024;

impl Recorder {
    /// Drops the recorder without writing its file (the tests): frees
    /// what it holds on the heap, then skips its `Drop` (which writes).
    #[cfg(test)]
    fn discard(mut self) {
        self.rows = Vec::new();
        self.setup.dir = PathBuf::new();
        std::mem::forget(self);
    }
}

impl Drop for Recorder {
    /// The end of the process: its last superstep (computation only,
    /// ended by `bsp_end`), then the file. A file that cannot be written
    /// is reported on standard error (the run's outcome stands).
    fn drop(&mut self) {
        let end = self.now_ns();
        self.rows.push(Row {
            superstep: self.superstep,
            compute_start_ns: self.last_end_ns,
            sync_start_ns: end,
            sync_end_ns: end,
            counts: Counts::default(),
            failed: false,
            at: None,
            ended_by: "bsp_end",
        });
        if let Err(e) = self.write() {
            let line = format!("bsplib: process {}: {e}\n", self.pid);
            let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
        }
    }
}

/// The trace's one process id (every BSP process is a thread track of it).
const TRACE_PID: u32 = 1;

fn ns(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// `"00" "01" ... "99"`: two digits at a time for [`put_u64`].
const DIGITS: [u8; 200] = {
    let mut t = [0; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// `n` in decimal, as `{}` writes it. The digits are made left-aligned
/// in a 20-byte array, copied whole (a copy of constant length, inlined,
/// where one of the number's length is a call of `memcpy`) and the tail
/// cut off.
fn put_u64(out: &mut Vec<u8>, mut n: u64) {
    if n < 10 {
        out.push(b'0' + n as u8);
        return;
    }
    let len = n.ilog10() as usize + 1;
    let mut tmp = [0u8; 20];
    let mut i = len;
    while n >= 100 {
        let d = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&DIGITS[d..d + 2]);
    }
    if n >= 10 {
        let d = n as usize * 2;
        tmp[0..2].copy_from_slice(&DIGITS[d..d + 2]);
    } else {
        tmp[0] = b'0' + n as u8;
    }
    let end = out.len() + len;
    out.extend_from_slice(&tmp);
    out.truncate(end);
}

/// Nanoseconds as microseconds with three decimals (the trace's `ts`), as
/// `format!("{}.{:03}", ns / 1000, ns % 1000)` writes them.
fn put_us(out: &mut Vec<u8>, ns: u64) {
    put_u64(out, ns / 1000);
    let frac = (ns % 1000) as usize;
    out.push(b'.');
    out.push(b'0' + (frac / 100) as u8);
    out.extend_from_slice(&DIGITS[(frac % 100) * 2..(frac % 100) * 2 + 2]);
}

/// Nanoseconds as microseconds with three decimals (the trace's `ts`).
#[cfg(test)]
fn us(ns: u64) -> String {
    let mut out = Vec::new();
    put_us(&mut out, ns);
    String::from_utf8(out).expect("digits")
}

/// The `at` of a row as a JSON string literal (`"file:line"`, or `""`),
/// into `at` (emptied first).
fn put_at(at: &mut Vec<u8>, loc: Option<SourceLocation>) {
    at.clear();
    at.push(b'"');
    if let Some(l) = loc {
        put_json_escaped(at, l.file());
        at.push(b':');
        put_u64(at, l.line().into());
    }
    at.push(b'"');
}

/// `s` as a JSON string literal.
#[cfg(test)]
pub(crate) fn json_str(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    put_json_str(&mut out, s);
    String::from_utf8(out).expect("the input was UTF-8")
}

/// `s` as a JSON string literal, into `out`.
fn put_json_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    put_json_escaped(out, s);
    out.push(b'"');
}

/// `s` escaped for the inside of a JSON string: `"`, `\\`, and the control
/// characters (`\n`, `\r`, `\t`, else `\u00XX`); every other byte as it is.
fn put_json_escaped(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let mut done = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escaped: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[done..i]);
        done = i + 1;
        if escaped.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 15)]);
        } else {
            out.extend_from_slice(escaped);
        }
    }
    out.extend_from_slice(&bytes[done..]);
}

/// Counts the put records of one stream: `(puts, hpputs, payload bytes,
/// unknown records)`. The layout is `superstep::apply_puts`'s; a record
/// this walker does not recognise stops the walk and counts one unknown.
pub(crate) fn count_puts(puts: Records<'_>) -> (u64, u64, u64, u64) {
    let (mut n, mut hp, mut bytes) = (0, 0, 0);
    let mut at = 0;
    while at < puts.len() {
        let (Some(slot), Some(word)) = (puts.try_word(at), puts.try_word(at + 16)) else {
            return (n, hp, bytes, 1);
        };
        let slot = slot as u64;
        if slot & ACCUMULATE != 0 {
            // Not a put (its header is a word longer): counted as unknown
            // until accumulates have their own columns (PROFILE.md).
            return (n, hp, bytes, 1);
        }
        if slot & VECTOR != 0 {
            n += 1;
            bytes += word as u64;
            at += 40 + pad8(word);
        } else if slot & DESCRIPTOR != 0 {
            n += 1;
            bytes += word as u64;
            at += 24;
        } else {
            let (len, pad, payload) = put_len(word);
            bytes += len as u64;
            match payload {
                Payload::Remote => {
                    hp += 1;
                    at += 32;
                }
                Payload::Bulk => {
                    n += 1;
                    at += 32;
                }
                Payload::Inline => {
                    n += 1;
                    at += pad8(24 + pad + len);
                }
            }
        }
    }
    (n, hp, bytes, 0)
}

/// Counts get requests: `(requests, bytes asked for)`.
pub(crate) fn count_gets(gets: Records<'_>) -> (u64, u64) {
    let (mut n, mut bytes) = (0, 0);
    let mut at = 0;
    while at < gets.len() {
        let (Some(slot), Some(len)) = (gets.try_word(at), gets.try_word(at + 16)) else {
            break;
        };
        n += 1;
        bytes += len as u64;
        at += if slot as u64 & VECTOR != 0 { 40 } else { 24 };
    }
    (n, bytes)
}

/// Counts message records: `(messages, collective records, bytes of tags
/// and payloads)`.
pub(crate) fn count_sends(sends: Records<'_>) -> (u64, u64, u64) {
    let (mut n, mut coll, mut bytes) = (0, 0, 0);
    let mut at = 0;
    while at < sends.len() {
        let (Some(tag), Some(len)) = (sends.try_word(at), sends.try_word(at + 8)) else {
            break;
        };
        if tag == COLL_RECORD {
            coll += 1;
            bytes += len as u64;
            at += 16 + pad8(len);
        } else {
            n += 1;
            bytes += (tag + len) as u64;
            at += 16 + pad8(tag) + pad8(len);
        }
    }
    (n, coll, bytes)
}

/// Adds one stream's records to `c`, as sent (`out`) or received.
fn add_stream(
    c: &mut Counts,
    out: bool,
    puts: Records<'_>,
    hpputs: &[HpPut],
    sends: Records<'_>,
    gets: Option<Records<'_>>,
) {
    let (n, hp, pbytes, unknown) = count_puts(puts);
    let hpbytes: u64 = hpputs.iter().map(|h| h.len as u64).sum();
    let hp = hp + hpputs.len() as u64;
    let (msgs, coll, sbytes) = count_sends(sends);
    let (served, _) = gets.map_or((0, 0), count_gets);
    let bytes = pbytes + hpbytes + sbytes;
    // Served get requests are counted apart (`gets_served`), not as
    // records in: where the requester reads the owner's memory itself
    // (shared memory, destinations outside its registered memory) no
    // request travels, and the counts would differ between engines.
    let records = n + hp + msgs + coll + unknown;
    if out {
        c.puts_out += n;
        c.hpputs_out += hp;
        c.messages_out += msgs;
        c.collective_out += coll;
        c.other_out += unknown;
        c.bytes_out += bytes;
        c.records_out += records;
    } else {
        c.puts_in += n;
        c.hpputs_in += hp;
        c.messages_in += msgs;
        c.collective_in += coll;
        c.other_in += unknown;
        c.gets_served += served;
        c.bytes_in += bytes;
        c.records_in += records;
    }
}

impl Process {
    /// A sync switches active-message mode (`superstep.rs`, after barrier
    /// A, where every message sent before it has been handled): keeps the
    /// totals of the session it may close.
    #[cold]
    pub(crate) fn profile_am_closing(&mut self) {
        let totals = self.am.as_ref().map(|am| am.message_totals());
        if let Some(r) = &mut self.profile {
            r.am_closing = totals;
        }
    }

    /// The active-message totals `(sent, handled)` the profiler saw last
    /// in this process's current session (zero in a new session).
    fn am_seen(&self) -> (u64, u64) {
        match &self.profile {
            Some(r) if r.am_seen.0 == self.am_sessions => (r.am_seen.1, r.am_seen.2),
            _ => (0, 0),
        }
    }

    /// `bsp_sync` with the profiler on: counts what this superstep sends,
    /// runs the sync, counts what it received, and keeps the row.
    #[cold]
    #[inline(never)]
    pub(crate) fn sync_profiled(&mut self, loc: Loc) -> Result<(), Error> {
        let start_ns = match &self.profile {
            Some(r) => r.now_ns(),
            None => return self.sync_unprofiled(loc),
        };
        let mut c = Counts::default();
        // What we send: our mailbox half of this superstep (shared memory
        // reads it in place; exchange engines compose their streams from
        // it), and our gets.
        let out = self.out_ref();
        for dest in 0..self.nprocs {
            if let Some(to) = out.for_dest(dest) {
                add_stream(
                    &mut c,
                    true,
                    Records::of(&to.puts),
                    &to.hpputs,
                    Records::of(&to.sends),
                    None,
                );
            }
        }
        c.gets_out = self.gets.len() as u64;
        c.get_bytes_in = self.gets.iter().map(|g| g.len as u64).sum();
        c.records_out += c.gets_out;
        c.bytes_in += c.get_bytes_in;
        // Active messages: those sent in this superstep (counted before
        // the sync: messages its completion handlers send while it waits
        // belong to the next one), and those handled up to the end of this
        // sync, whose fence handles every message sent before it.
        let am_before = self.am.as_ref().map(|am| am.message_totals());
        if let Some((sent, _)) = am_before {
            c.am_out = sent.saturating_sub(self.am_seen().0);
        }
        let ended_by = self.call_name(self.coll.map_or("bsp_sync", |(name, _)| name));
        let superstep = self.superstep;
        let q = self.parity;

        let result = self.sync_unprofiled(loc);

        if result.is_ok() && self.last_flags & (REG | GET | DATA) != 0 {
            self.for_each_received(q, |puts, hpputs, sends, gets| {
                add_stream(&mut c, false, puts, hpputs, sends, Some(gets));
            });
        }
        // After `am_term` the session is gone: its last count is the one
        // taken as the sync closed it (`profile_am_closing`).
        let closing = self.profile.as_mut().and_then(|r| r.am_closing.take());
        let am_after = self.am.as_ref().map(|am| am.message_totals()).or(closing);
        if let Some((_, handled)) = am_after {
            c.am_in = handled.saturating_sub(self.am_seen().1);
        }
        c.records_out += c.am_out;
        c.records_in += c.am_in;
        if self.am.is_some() {
            // The session after the sync: the one before it (a plain
            // sync), or a new one (`am_init`), in which nothing was sent
            // before the sync.
            let sent = am_before.map_or(0, |(sent, _)| sent);
            let handled = am_after.map_or(0, |(_, handled)| handled);
            let session = self.am_sessions;
            if let Some(r) = &mut self.profile {
                r.am_seen = (session, sent, handled);
            }
        }
        if let Some(r) = &mut self.profile {
            let end = r.now_ns();
            r.rows.push(Row {
                superstep,
                compute_start_ns: r.last_end_ns,
                sync_start_ns: start_ns,
                sync_end_ns: end,
                counts: c,
                failed: result.is_err(),
                at: loc,
                ended_by,
            });
            r.last_end_ns = end;
            r.superstep = self.superstep;
        }
        result
    }
}

use crate::error::Error;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_str("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\"");
    }

    #[test]
    fn counts_are_written_alike_in_the_sync_slice_and_the_row() {
        let mut c = Counts::default();
        let fields = [
            &mut c.bytes_out,
            &mut c.bytes_in,
            &mut c.records_out,
            &mut c.records_in,
            &mut c.puts_out,
            &mut c.puts_in,
            &mut c.hpputs_out,
            &mut c.hpputs_in,
            &mut c.gets_out,
            &mut c.get_bytes_in,
            &mut c.gets_served,
            &mut c.messages_out,
            &mut c.messages_in,
            &mut c.collective_out,
            &mut c.collective_in,
            &mut c.am_out,
            &mut c.am_in,
            &mut c.other_out,
            &mut c.other_in,
        ];
        for (i, f) in fields.into_iter().enumerate() {
            *f = i as u64 + 1;
        }
        let names: Vec<&str> = c.pairs().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, COLUMNS[4..23]);
        let keys: Vec<String> = names.iter().map(|n| format!(",\"{n}\":")).collect();
        assert_eq!(keys, ARG_KEYS);
        let setup = Setup {
            dir: PathBuf::from("/nonexistent"),
            engine: "threads",
        };
        let mut r = Recorder::new(&setup, 0, 2, Instant::now());
        r.rows.push(Row {
            superstep: 2,
            compute_start_ns: 1000,
            sync_start_ns: 2500,
            sync_end_ns: 3000,
            counts: c,
            failed: false,
            at: None,
            ended_by: "bsp_sync",
        });
        let json = r.to_json();
        r.discard(); // no file
        let slice = ",\n{\"ph\":\"X\",\"cat\":\"sync\",\"name\":\"bsp_sync\",\"pid\":1,\"tid\":0,\"ts\":2.500,\"dur\":0.500,\
            \"args\":{\"superstep\":2,\"at\":\"\",\"bytes_out\":1,\"bytes_in\":2,\"records_out\":3,\"records_in\":4,\
            \"puts_out\":5,\"puts_in\":6,\"hpputs_out\":7,\"hpputs_in\":8,\"gets_out\":9,\"get_bytes_in\":10,\
            \"gets_served\":11,\"messages_out\":12,\"messages_in\":13,\"collective_out\":14,\"collective_in\":15,\
            \"am_out\":16,\"am_in\":17,\"other_out\":18,\"other_in\":19,\"failed\":false}}";
        assert!(json.contains(slice), "{json}");
        let row = "\n[2,1000,2500,3000,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,0,\"\",\"bsp_sync\"]";
        assert!(json.contains(row), "{json}");
    }

    #[test]
    fn microseconds_keep_three_decimals() {
        assert_eq!(us(1_234_567), "1234.567");
        assert_eq!(us(5), "0.005");
    }

    /// The formatter before the hand-written one (`write!` argument by
    /// argument), kept to pin the output byte for byte.
    fn reference_json(this: &Recorder) -> String {
        use std::fmt::Write as _;
        let mut s = String::with_capacity(256 + this.rows.len() * 900);
        let pid = TRACE_PID;
        let me = this.pid;
        s.push_str("{\"traceEvents\":[\n");
        let _ = write!(
        s,
        "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{pid},\"tid\":{me},\"args\":{{\"name\":\"bsplib run ({}, p = {})\"}}}},\n\
         {{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{pid},\"tid\":{me},\"args\":{{\"name\":\"process {me}\"}}}},\n\
         {{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{pid},\"tid\":{me},\"args\":{{\"sort_index\":{me}}}}}",
        this.setup.engine, this.nprocs
    );
        for r in &this.rows {
            let at = r.at.map(|l| format!("{}:{}", l.file(), l.line()));
            let at = json_str(at.as_deref().unwrap_or(""));
            let c = &r.counts;
            let _ = write!(
            s,
            ",\n{{\"ph\":\"X\",\"cat\":\"compute\",\"name\":\"compute\",\"pid\":{pid},\"tid\":{me},\"ts\":{},\"dur\":{},\"args\":{{\"superstep\":{}}}}}",
            us(r.compute_start_ns),
            us(r.sync_start_ns.saturating_sub(r.compute_start_ns)),
            r.superstep
        );
            if r.ended_by == "bsp_end" {
                continue;
            }
            let _ = write!(
            s,
            ",\n{{\"ph\":\"X\",\"cat\":\"sync\",\"name\":{},\"pid\":{pid},\"tid\":{me},\"ts\":{},\"dur\":{},\"args\":{{\"superstep\":{},\"at\":{at}",
            json_str(r.ended_by),
            us(r.sync_start_ns),
            us(r.sync_end_ns.saturating_sub(r.sync_start_ns)),
            r.superstep,
        );
            for (name, value) in c.pairs() {
                let _ = write!(s, ",\"{name}\":{value}");
            }
            let _ = write!(s, ",\"failed\":{}}}}}", r.failed);
            let _ = write!(
            s,
            ",\n{{\"ph\":\"C\",\"name\":\"h bytes, process {me}\",\"pid\":{pid},\"tid\":{me},\"ts\":{},\"args\":{{\"out\":{},\"in\":{}}}}}",
            us(r.sync_start_ns),
            c.bytes_out,
            c.bytes_in
        );
        }
        let _ = write!(
        s,
        "\n],\n\"displayTimeUnit\":\"ms\",\n\"bsplib\":{{\"format\":{FORMAT},\"engine\":{},\"nprocs\":{},\"pid\":{},\"start_unix_us\":{},\
         \"clock\":\"ts in microseconds and the *_ns columns in nanoseconds, since this process's start (start_unix_us, wall clock)\",\n\"columns\":[",
        json_str(this.setup.engine),
        this.nprocs,
        this.pid,
        this.start_unix_us
    );
        for (i, c) in COLUMNS.iter().enumerate() {
            let _ = write!(s, "{}{}", if i > 0 { "," } else { "" }, json_str(c));
        }
        s.push_str("],\n\"supersteps\":[");
        for (i, r) in this.rows.iter().enumerate() {
            let c = &r.counts;
            let at = r.at.map(|l| format!("{}:{}", l.file(), l.line()));
            let _ = write!(
                s,
                "{}\n[{},{},{},{}",
                if i > 0 { "," } else { "" },
                r.superstep,
                r.compute_start_ns,
                r.sync_start_ns,
                r.sync_end_ns,
            );
            for (_, value) in c.pairs() {
                let _ = write!(s, ",{value}");
            }
            let _ = write!(
                s,
                ",{},{},{}]",
                u8::from(r.failed),
                json_str(at.as_deref().unwrap_or("")),
                json_str(r.ended_by),
            );
        }
        s.push_str("\n]}}\n");
        s
    }

    #[test]
    fn the_output_is_that_of_the_fmt_formatter() {
        let setup = Setup {
            dir: PathBuf::from("/nonexistent"),
            engine: "processes",
        };
        let mut r = Recorder::new(&setup, 13, 16, Instant::now());
        r.start_unix_us = 1_763_863_200_123_456;
        let values = [
            0,
            1,
            9,
            10,
            99,
            100,
            999,
            1000,
            1001,
            12_345,
            987_654_321,
            u64::MAX,
        ];
        let locs = [
            None,
            Some(SourceLocation::new("main.rs", 12, 5)),
            Some(SourceLocation::new(
                "dir/\"odd\"\\name\t\u{1}\u{1f}é.c",
                4_000_000_000,
                0,
            )),
        ];
        for (i, &v) in values.iter().enumerate() {
            let c = Counts {
                bytes_out: v,
                bytes_in: values[(i + 3) % values.len()],
                records_in: i as u64,
                am_in: v / 7,
                other_out: values[(i + 5) % values.len()],
                ..Counts::default()
            };
            r.rows.push(Row {
                superstep: i as u64,
                compute_start_ns: v / 3,
                sync_start_ns: v / 2,
                sync_end_ns: v,
                counts: c,
                failed: i % 3 == 1,
                at: locs[i % locs.len()],
                ended_by: ["bsp_sync", "bsp_fold", "bsp_end"][i % 3],
            });
        }
        let json = r.to_json();
        assert_eq!(json, reference_json(&r));
        // The same through the file writer's flushes.
        let mut chunks = Vec::new();
        let mut buf = Vec::new();
        let Ok(()) = r.emit(&mut buf, |b| {
            chunks.extend_from_slice(b);
            b.clear();
            Ok::<(), std::convert::Infallible>(())
        });
        assert!(buf.is_empty());
        assert_eq!(chunks, json.as_bytes());
        r.discard(); // no file
        for v in values {
            let mut out = Vec::new();
            put_u64(&mut out, v);
            assert_eq!(out, v.to_string().as_bytes());
            assert_eq!(us(v), format!("{}.{:03}", v / 1000, v % 1000));
        }
    }
}
