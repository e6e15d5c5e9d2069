//! The profiler's recorder: one process's rows, one per superstep, and
//! the trace-event file (`DIR/profile.<pid>.json`) written from them at
//! the end of the process.

use std::path::PathBuf;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::counts::Counts;
use super::gather::{report, write_file};
use super::json::{put_at, put_json_str, put_u64, put_us};
use super::{Setup, COLUMNS, FORMAT};
use crate::engine::host_name;
use crate::error::SourceLocation;

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
pub(super) struct Row {
    pub(super) superstep: u64,
    pub(super) compute_start_ns: u64,
    pub(super) sync_start_ns: u64,
    pub(super) sync_end_ns: u64,
    pub(super) counts: Counts,
    pub(super) failed: bool,
    pub(super) at: Option<SourceLocation>,
    /// The call that ended the superstep: `bsp_sync`, a collective's
    /// name, or `bsp_end` for the last one.
    pub(super) ended_by: &'static str,
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
    /// The host the process runs on (`gethostname`).
    host: String,
    /// The end of the last sync (the start of the computation of the
    /// current superstep), in ns since `start`.
    pub(super) last_end_ns: u64,
    pub(super) rows: Vec<Row>,
    /// Active messages: `(session, sent, handled)` at the last sync.
    pub(super) am_seen: (u32, u64, u64),
    pub(super) superstep: u64,
    /// The sync in progress, from its `before_sync` hook to its
    /// `after_sync` (`sync.rs`).
    pub(super) pending: Option<super::sync::InSync>,
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
            host: host_name(),
            last_end_ns: ns(since),
            rows: Vec::with_capacity(INITIAL_ROWS),
            am_seen: (0, 0, 0),
            superstep: 0,
            pending: None,
        }
    }

    pub(super) fn now_ns(&self) -> u64 {
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
        out.extend_from_slice(b",\"host\":");
        put_json_str(out, &self.host);
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

    /// Writes `DIR/profile.<pid>.json` (`gather::write_file`: through a
    /// temporary file renamed into place), formatted into one buffer
    /// handed to the file every [`FLUSH_AT`] bytes; `Err` names the file
    /// and the reason.
    pub(crate) fn write(&self) -> Result<PathBuf, String> {
        use std::io::Write as _;
        write_file(&self.setup.dir, self.pid, |file| {
            let mut buf = Vec::with_capacity(FLUSH_AT + 4096);
            self.emit(&mut buf, |buf| {
                let r = file.write_all(buf);
                buf.clear();
                r
            })
        })
    }

    /// The whole file in memory (`mpi`: it travels to process 0).
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(1024 + self.rows.len() * 720);
        let Ok(()) = self.emit(&mut out, |_| Ok::<(), std::convert::Infallible>(()));
        out
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
        self.host = String::new();
        std::mem::forget(self);
    }
}

impl Drop for Recorder {
    /// The end of the process: its last superstep (computation only,
    /// ended by `bsp_end`), then the file: written here, or on `mpi` left
    /// formatted for the gathering at the end of the run (`gather.rs`). A
    /// file that cannot be written is reported on standard error (the
    /// run's outcome stands).
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
        if let Some(handoff) = &self.setup.handoff {
            handoff.leave(self.pid, &self.setup.dir, self.to_bytes());
        } else if let Err(e) = self.write() {
            report(self.pid, &e);
        }
    }
}

/// The trace's one process id (every BSP process is a thread track of it).
const TRACE_PID: u32 = 1;

fn ns(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::super::json::{json_str, us};
    use super::*;

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
            handoff: None,
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
        "\n],\n\"displayTimeUnit\":\"ms\",\n\"bsplib\":{{\"format\":{FORMAT},\"engine\":{},\"nprocs\":{},\"pid\":{},\"start_unix_us\":{},\"host\":{},\
         \"clock\":\"ts in microseconds and the *_ns columns in nanoseconds, since this process's start (start_unix_us, wall clock)\",\n\"columns\":[",
        json_str(this.setup.engine),
        this.nprocs,
        this.pid,
        this.start_unix_us,
        json_str(&this.host)
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
            handoff: None,
        };
        let mut r = Recorder::new(&setup, 13, 16, Instant::now());
        r.start_unix_us = 1_763_863_200_123_456;
        r.host = "node\"07\\x\u{1}".into();
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
