//! `bspprof`: turns a profile directory (`bsprun --profile DIR`,
//! `BSPLIB_PROFILE=DIR`, `Runtime::profile`) into one Chrome / Perfetto
//! trace and a self-contained HTML report.
//!
//! ```text
//! bspprof [--g NS_PER_BYTE] [--l US] [--nhalf BYTES] [-o report.html] [--trace trace.json] DIR
//! bspprof --summary [--exclude S,...] [--g ...] DIR
//! ```
//!
//! The report (inline SVG and CSS, no scripts, no fonts, nothing fetched)
//! shows the timeline (one row per process, computing against
//! synchronising), each superstep's measured time against the BSP
//! prediction `w + g·(h + n½·records) + l`, the heaviest supersteps with
//! their source lines, and the load imbalance across processes. g, l and
//! n½ are those `bspprobe` stored for the profile's engine and p on this
//! host (`bsplib::probe`), else the library's defaults, unless given.
//! `--summary` prints, instead, a text table of every superstep's measured
//! time against its prediction and the prediction's error (per superstep:
//! median and maximum; over the run), leaving out the supersteps of
//! `--exclude` (one that reads input, say). The profile format is
//! described in `crates/bsplib/src/PROFILE.md`.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::Value;

#[path = "bspprof/coverage.rs"]
mod coverage;
#[path = "loadavg/mod.rs"]
mod loadavg;

/// Heaviest supersteps listed by default.
const DEFAULT_TOP: usize = 10;

fn usage() -> String {
    format!(
        "\
Usage: bspprof [options] DIR

Reads the profile a run wrote into DIR (bsprun --profile DIR, or
BSPLIB_PROFILE=DIR) and writes one Chrome / Perfetto trace of every
process, and an HTML report with the timeline, each superstep's time
against the prediction w + g*(h + nhalf*records) + l, the heaviest
supersteps with their source lines, and the load imbalance across
processes. g, l and nhalf are those bspprobe measured and stored for the
profile's engine and p on this host (see bspprobe --help), else the
library's defaults (g 0.15 ns/byte, l 2 us, nhalf 378 bytes: the
project's 2-core VM); the report says which.

Options:
  --g G           g, in nanoseconds per byte (then nhalf is 0 unless given:
                  the classic w + g*h + l)
  --l L           l, in microseconds
  --nhalf N       nhalf, in bytes (a put or message of n bytes costs g*(n + N))
  --top N         heaviest supersteps listed (default {DEFAULT_TOP})
  --summary       print a text table of every superstep (measured, predicted,
                  w, h, records, relative error) and the prediction's error
                  (per superstep with a sync: median, 90th percentile and
                  maximum of |predicted - measured| / measured; over the
                  run: the sums), instead of writing the report and trace
  --exclude S,... leave these supersteps out of the summary's errors (a
                  superstep that waits for input, say)
  -o FILE, --output FILE
                  the HTML report (default DIR/report.html)
  --trace FILE    the merged trace (default DIR/trace.json); open it in
                  ui.perfetto.dev or chrome://tracing
  -h, --help      print this help and exit
  --version       print the version and exit

When the profile records that the machine was busy as the run started
(the 1-minute load average, rounded, above the cores the run left free,
or more processes than cores), bspprof says so in one line on standard
error and in the report: the times then include waiting for other
programs, and their comparison with the prediction means little.

Exit status: 0 (also for a partial profile, with a warning); 1 if the
profile cannot be read or the report written; 2 on a usage error.
"
    )
}

/// The short usage printed after a usage error.
const SYNOPSIS: &str = "Usage: bspprof [--summary] [--g G] [--l L] [--nhalf N] [-o FILE] DIR";

/// The command line.
#[derive(Debug)]
struct Options {
    dir: PathBuf,
    g: Option<f64>,
    l_us: Option<f64>,
    nhalf: Option<f64>,
    top: usize,
    output: Option<PathBuf>,
    trace: Option<PathBuf>,
    summary: bool,
    exclude: Vec<u64>,
}

/// What the command line asks for.
#[derive(Debug)]
enum Cli {
    Run(Options),
    Help,
    Version,
}

fn parse(args: &[OsString]) -> Result<Cli, String> {
    let mut dir = None;
    let (mut g, mut l_us, mut nhalf, mut top) = (None, None, None, DEFAULT_TOP);
    let (mut output, mut trace) = (None, None);
    let (mut summary, mut exclude) = (false, Vec::new());
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let text = arg.to_string_lossy();
        let (name, inline) = match text.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (text.to_string(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next().map(|v| v.to_string_lossy().into_owned()))
                .ok_or_else(|| format!("option {name} needs a value"))
        };
        let number = |v: String, what: &str| {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| format!("{name}: {what} must be a number >= 0, not '{v}'"))
        };
        match name.as_str() {
            "-h" | "--help" => return Ok(Cli::Help),
            "--version" => return Ok(Cli::Version),
            "--g" => g = Some(number(value()?, "g")?),
            "--l" => l_us = Some(number(value()?, "l")?),
            "--nhalf" => nhalf = Some(number(value()?, "nhalf")?),
            "--top" => {
                let v = value()?;
                top = v
                    .parse()
                    .map_err(|_| format!("--top: not a count: '{v}'"))?;
            }
            "--summary" => summary = true,
            "--exclude" => {
                let v = value()?;
                for part in v.split(',').filter(|p| !p.is_empty()) {
                    exclude.push(
                        part.trim()
                            .parse()
                            .map_err(|_| format!("--exclude: not a superstep number: '{part}'"))?,
                    );
                }
            }
            "-o" | "--output" => output = Some(PathBuf::from(value()?)),
            "--trace" => trace = Some(PathBuf::from(value()?)),
            _ if name.starts_with('-') && name.len() > 1 => {
                return Err(format!("unknown option '{name}'"))
            }
            _ => {
                if dir.replace(PathBuf::from(arg)).is_some() {
                    return Err("one profile directory only".into());
                }
            }
        }
    }
    let dir = dir.ok_or("no profile directory given")?;
    Ok(Cli::Run(Options {
        dir,
        g,
        l_us,
        nhalf,
        top,
        output,
        trace,
        summary,
        exclude,
    }))
}

/// One superstep of one process (the columns of `PROFILE.md`).
#[derive(Clone, Debug, Default)]
struct Row {
    superstep: u64,
    compute_start_ns: u64,
    sync_start_ns: u64,
    sync_end_ns: u64,
    bytes_out: u64,
    bytes_in: u64,
    records_out: u64,
    records_in: u64,
    at: String,
    ended_by: String,
}

/// One process's profile.
struct Process {
    pid: usize,
    nprocs: usize,
    engine: String,
    start_unix_us: u64,
    /// The host it ran on (`None` in files of an older bsplib).
    host: Option<String>,
    /// The host's load average as the run started, and its cores (`None`
    /// in files of an older bsplib).
    load: Option<(f64, usize)>,
    rows: Vec<Row>,
    events: Vec<Value>,
}

fn read_process(path: &Path) -> Result<Process, String> {
    let what = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| what(&e))?;
    let mut v: Value = serde_json::from_str(&text).map_err(|e| what(&e))?;
    let b = &v["bsplib"];
    if b["format"].as_u64() != Some(1) {
        return Err(what(
            &"not a bsplib profile of format 1 (key bsplib.format)",
        ));
    }
    let cols: Vec<&str> = b["columns"]
        .as_array()
        .ok_or_else(|| what(&"no bsplib.columns"))?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let col = |name: &str| {
        cols.iter()
            .position(|c| *c == name)
            .ok_or_else(|| what(&format!("no column {name}")))
    };
    let idx = [
        "superstep",
        "compute_start_ns",
        "sync_start_ns",
        "sync_end_ns",
        "bytes_out",
        "bytes_in",
        "records_out",
        "records_in",
    ]
    .map(col);
    let mut num_idx = [0; 8];
    for (i, r) in idx.into_iter().enumerate() {
        num_idx[i] = r?;
    }
    let (at, ended_by) = (col("at")?, col("ended_by")?);
    let mut rows = Vec::new();
    for r in b["supersteps"]
        .as_array()
        .ok_or_else(|| what(&"no bsplib.supersteps"))?
    {
        let r = r.as_array().ok_or_else(|| what(&"a row is not an array"))?;
        let n = |i: usize| r.get(num_idx[i]).and_then(Value::as_u64).unwrap_or(0);
        let s = |i: usize| {
            r.get(i)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        rows.push(Row {
            superstep: n(0),
            compute_start_ns: n(1),
            sync_start_ns: n(2),
            sync_end_ns: n(3),
            bytes_out: n(4),
            bytes_in: n(5),
            records_out: n(6),
            records_in: n(7),
            at: s(at),
            ended_by: s(ended_by),
        });
    }
    let u = |k: &str| b[k].as_u64().ok_or_else(|| what(&format!("no bsplib.{k}")));
    let p = Process {
        pid: u("pid")? as usize,
        nprocs: u("nprocs")? as usize,
        engine: b["engine"].as_str().unwrap_or("?").to_string(),
        start_unix_us: u("start_unix_us")?,
        host: b["host"].as_str().map(str::to_string),
        load: b["load_average"]
            .as_f64()
            .zip(b["cores"].as_u64().map(|c| c as usize)),
        rows,
        events: match v["traceEvents"].take() {
            Value::Array(a) => a,
            _ => return Err(what(&"no traceEvents")),
        },
    };
    Ok(p)
}

/// Every `profile.<pid>.json` of `dir`, in pid order.
fn read_dir(dir: &Path) -> Result<Vec<Process>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for e in entries {
        let e = e.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name
            .strip_prefix("profile.")
            .and_then(|r| r.strip_suffix(".json"))
            .and_then(|n| n.parse::<usize>().ok())
        {
            files.push((pid, e.path()));
        }
    }
    if files.is_empty() {
        return Err(format!(
            "{} holds no profile.<pid>.json files (run the program with bsprun --profile {0}, \
             or BSPLIB_PROFILE={0})",
            dir.display()
        ));
    }
    files.sort();
    let procs = files
        .iter()
        .map(|(_, path)| read_process(path))
        .collect::<Result<Vec<_>, _>>()?;
    let n = procs[0].nprocs;
    if let Some(p) = procs.iter().find(|p| p.nprocs != n) {
        return Err(format!(
            "{}: profiles of different runs (p = {n} and p = {}): use one directory per run",
            dir.display(),
            p.nprocs
        ));
    }
    Ok(procs)
}

/// Whether the profile says the machine was busy as the run started
/// (`loadavg::untrusted`, per host: the processes whose files name it,
/// or all p on one host): why, and what the times include.
fn busy(procs: &[Process]) -> Option<String> {
    let mut hosts: Vec<Option<&str>> = procs.iter().map(|p| p.host.as_deref()).collect();
    hosts.sort();
    hosts.dedup();
    for host in &hosts {
        let here: Vec<&Process> = procs
            .iter()
            .filter(|p| p.host.as_deref() == *host)
            .collect();
        let (load, cores) = here
            .iter()
            .filter_map(|p| p.load)
            .fold(None, |a: Option<(f64, usize)>, (l, c)| {
                Some(a.map_or((l, c), |(al, ac)| (al.max(l), ac)))
            })?;
        let procs_here = if hosts.len() == 1 {
            procs[0].nprocs
        } else {
            here.len()
        };
        if let Some((why, cause)) = loadavg::untrusted(Some(load), cores, procs_here) {
            let place = match host {
                Some(h) if hosts.len() > 1 => format!(" on host {h}"),
                _ => String::new(),
            };
            return Some(format!(
                "the machine was busy as the run started{place}: {why}; its times include {cause}"
            ));
        }
    }
    None
}

/// Which processes left a file, and where they ran.
fn coverage(procs: &[Process]) -> coverage::Coverage<'_> {
    coverage::Coverage {
        nprocs: procs[0].nprocs,
        present: procs.iter().map(|p| (p.pid, p.host.as_deref())).collect(),
    }
}

/// The processes' events on one timeline (shifted by their wall-clock
/// starts), as one trace-event file.
fn merged_trace(procs: &[Process]) -> Value {
    let t0 = procs.iter().map(|p| p.start_unix_us).min().unwrap_or(0);
    let mut events = Vec::new();
    for p in procs {
        let shift = (p.start_unix_us - t0) as f64;
        for e in &p.events {
            let mut e = e.clone();
            if let Some(ts) = e.get("ts").and_then(Value::as_f64) {
                e["ts"] = serde_json::json!(ts + shift);
            }
            events.push(e);
        }
    }
    serde_json::json!({ "traceEvents": events, "displayTimeUnit": "ms" })
}

/// One superstep across the processes.
#[derive(Clone, Debug)]
struct Step {
    s: u64,
    /// Measured: the longest a process took from the end of the last sync
    /// to the end of this one (ns).
    t: f64,
    /// The longest computation (ns), and the mean.
    w: f64,
    w_mean: f64,
    /// max over processes of max(bytes out, bytes in).
    h: u64,
    records: u64,
    at: Vec<String>,
    ended_by: String,
    /// `w + g h + l` (ns); no `l` for the last superstep (no sync).
    predicted: f64,
}

/// The cost model of the predictions: g in ns per byte, l in ns, n½ in
/// bytes, and where they came from.
#[derive(Clone, Debug)]
struct Model {
    g: f64,
    l_ns: f64,
    nhalf: f64,
    source: String,
}

/// The model for a profile of `engine` at `nprocs` processes: the
/// command line's figures, else those `bspprobe` stored, else the
/// library's defaults.
fn model(o: &Options, engine: &str, nprocs: usize) -> Model {
    use bsplib::probe::{self, Machine};
    let stored = bsplib::Engine::from_name(engine).map(|e| probe::load(e, nprocs));
    let (machine, mut source) = match stored {
        Some(Ok(Some(m))) => (
            m,
            format!(
                "measured by <code>bspprobe</code> for {engine}, p = {nprocs} on host {} (stored in <code>{}</code>)",
                esc(&probe::hostname()),
                esc(&probe::store_path().map(|p| p.display().to_string()).unwrap_or_default())
            ),
        ),
        Some(Err(e)) => (
            Machine::defaults(),
            format!(
                "the library's defaults (the store cannot be read: {}; run <code>bspprobe</code>)",
                esc(&e.to_string())
            ),
        ),
        _ => (
            Machine::defaults(),
            format!(
                "the library's defaults, measured on the project's 2-core VM (nothing stored for {}, p = {nprocs} on this host: run <code>bspprobe -p {nprocs}</code>)",
                esc(engine)
            ),
        ),
    };
    let mut given = Vec::new();
    if o.g.is_some() {
        given.push("g");
    }
    if o.l_us.is_some() {
        given.push("l");
    }
    if o.nhalf.is_some() || o.g.is_some() {
        given.push("n½");
    }
    if !given.is_empty() {
        source = format!(
            "{} given on the command line, the rest {source}",
            given.join(", ")
        );
    }
    Model {
        g: o.g.unwrap_or(machine.g * 1e9),
        l_ns: o.l_us.map_or(machine.l * 1e9, |l| l * 1e3),
        nhalf: o
            .nhalf
            .unwrap_or(if o.g.is_some() { 0.0 } else { machine.nhalf }),
        source,
    }
}

fn steps(procs: &[Process], model: &Model) -> Vec<Step> {
    let (g, l_ns, nhalf) = (model.g, model.l_ns, model.nhalf);
    let n = procs.iter().map(|p| p.rows.len()).max().unwrap_or(0);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let rows: Vec<&Row> = procs.iter().filter_map(|p| p.rows.get(i)).collect();
        let w: Vec<f64> = rows
            .iter()
            .map(|r| r.sync_start_ns.saturating_sub(r.compute_start_ns) as f64)
            .collect();
        let t = rows
            .iter()
            .map(|r| r.sync_end_ns.saturating_sub(r.compute_start_ns) as f64)
            .fold(0.0, f64::max);
        let wmax = w.iter().copied().fold(0.0, f64::max);
        let h = rows
            .iter()
            .map(|r| r.bytes_out.max(r.bytes_in))
            .max()
            .unwrap_or(0);
        // The busiest process's bytes, each record counted n½ more.
        let cost_h = rows
            .iter()
            .map(|r| {
                let out = r.bytes_out as f64 + nhalf * r.records_out as f64;
                let inn = r.bytes_in as f64 + nhalf * r.records_in as f64;
                out.max(inn)
            })
            .fold(0.0, f64::max);
        let mut at: Vec<String> = rows
            .iter()
            .map(|r| r.at.clone())
            .filter(|a| !a.is_empty())
            .collect();
        at.sort();
        at.dedup();
        let ended_by = rows.first().map(|r| r.ended_by.clone()).unwrap_or_default();
        let sync = ended_by != "bsp_end";
        out.push(Step {
            s: rows.first().map_or(i as u64, |r| r.superstep),
            t,
            w: wmax,
            w_mean: w.iter().sum::<f64>() / w.len().max(1) as f64,
            h,
            records: rows
                .iter()
                .map(|r| r.records_out.max(r.records_in))
                .max()
                .unwrap_or(0),
            at,
            ended_by,
            predicted: wmax + if sync { g * cost_h + l_ns } else { 0.0 },
        });
    }
    out
}

/// A number with up to 4 significant digits, no trailing zeros.
fn fmt_num(x: f64) -> String {
    let s = format!("{x:.4}");
    let s = if x.abs() >= 1.0 { format!("{x:.3}") } else { s };
    let s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    if s.is_empty() || s == "-" {
        "0".into()
    } else {
        s
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A duration in ns, readable.
fn dur(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

const COMPUTE: &str = "#4e79a7";
const SYNC: &str = "#f28e2b";
const PREDICTED: &str = "#59a14f";

/// The timeline: one row per process; each superstep a compute and a sync
/// rectangle (or, past a few thousand rectangles, one column per pixel
/// coloured by what the process did most in it).
fn timeline(procs: &[Process], html: &mut String) {
    // The axis starts at the first process's first computation (not at
    // the run's start: forking or spawning the processes comes before).
    let t0 = procs.iter().map(|p| p.start_unix_us).min().unwrap_or(0);
    let first = procs
        .iter()
        .filter_map(|p| {
            let r = p.rows.first()?;
            Some((p.start_unix_us - t0) as f64 * 1e3 + r.compute_start_ns as f64)
        })
        .fold(f64::INFINITY, f64::min);
    let first = if first.is_finite() { first } else { 0.0 };
    let shift = |p: &Process| (p.start_unix_us - t0) as f64 * 1e3 - first;
    let end = procs
        .iter()
        .map(|p| shift(p) + p.rows.last().map_or(0, |r| r.sync_end_ns) as f64)
        .fold(1.0, f64::max);
    let (left, width, row_h) = (90.0, 900.0, 18.0);
    let height = 30.0 + row_h * procs.len() as f64;
    let x = |ns: f64| left + ns / end * width;
    let _ = write!(
        html,
        "<svg class=\"timeline\" width=\"{}\" height=\"{height}\" viewBox=\"0 0 {} {height}\" xmlns=\"http://www.w3.org/2000/svg\">",
        left + width + 10.0,
        left + width + 10.0
    );
    let rects: usize = procs.iter().map(|p| p.rows.len() * 2).sum();
    for (k, p) in procs.iter().enumerate() {
        let y = 4.0 + k as f64 * row_h;
        let _ = write!(
            html,
            "<text x=\"4\" y=\"{:.1}\" class=\"lbl\">process {}</text>",
            y + 12.0,
            p.pid
        );
        let sh = shift(p);
        if rects <= 6000 {
            for r in &p.rows {
                for (a, b, colour, what) in [
                    (r.compute_start_ns, r.sync_start_ns, COMPUTE, "compute"),
                    (r.sync_start_ns, r.sync_end_ns, SYNC, "sync"),
                ] {
                    if b <= a {
                        continue;
                    }
                    let (xa, xb) = (x(sh + a as f64), x(sh + b as f64));
                    let _ = write!(
                        html,
                        "<rect x=\"{xa:.2}\" y=\"{y:.1}\" width=\"{:.2}\" height=\"{:.1}\" fill=\"{colour}\"><title>process {} superstep {}: {what} {}</title></rect>",
                        (xb - xa).max(0.3),
                        row_h - 4.0,
                        p.pid,
                        r.superstep,
                        dur((b - a) as f64)
                    );
                }
            }
        } else {
            // Per pixel: the time spent syncing in it, against computing.
            let bins = width as usize;
            let mut sync = vec![0.0f64; bins];
            let mut busy = vec![0.0f64; bins];
            let bin_ns = end / bins as f64;
            let mut add = |a: f64, b: f64, into_sync: bool| {
                let (mut t, stop) = (a, b);
                while t < stop {
                    let i = ((t / bin_ns) as usize).min(bins - 1);
                    let edge = ((i + 1) as f64 * bin_ns).min(stop).max(t + 1.0);
                    let d = edge - t;
                    busy[i] += d;
                    if into_sync {
                        sync[i] += d;
                    }
                    t = edge;
                }
            };
            for r in &p.rows {
                add(
                    sh + r.compute_start_ns as f64,
                    sh + r.sync_start_ns as f64,
                    false,
                );
                add(sh + r.sync_start_ns as f64, sh + r.sync_end_ns as f64, true);
            }
            for i in 0..bins {
                if busy[i] > 0.0 {
                    let colour = if sync[i] * 2.0 > busy[i] {
                        SYNC
                    } else {
                        COMPUTE
                    };
                    let _ = write!(
                        html,
                        "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"1\" height=\"{:.1}\" fill=\"{colour}\"/>",
                        left + i as f64,
                        row_h - 4.0
                    );
                }
            }
        }
    }
    let ya = height - 12.0;
    let _ = write!(
        html,
        "<line x1=\"{left}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>",
        ya - 8.0,
        left + width,
        ya - 8.0
    );
    for k in 0..=4 {
        let t = end * k as f64 / 4.0;
        let _ = write!(
            html,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"lbl\" text-anchor=\"middle\">{}</text>",
            x(t).min(left + width - 20.0),
            ya + 6.0,
            dur(t)
        );
    }
    html.push_str("</svg>\n");
}

/// Per-superstep bars: measured against predicted (at most `limit`
/// supersteps: the heaviest, in superstep order, when there are more).
fn bars(all: &[Step], limit: usize, html: &mut String) {
    let mut shown: Vec<&Step> = all.iter().collect();
    if shown.len() > limit {
        shown.sort_by(|a, b| b.t.total_cmp(&a.t));
        shown.truncate(limit);
        shown.sort_by_key(|s| s.s);
        let _ = write!(
            html,
            "<p>The {limit} longest of {} supersteps, in order.</p>",
            all.len()
        );
    }
    let max = shown
        .iter()
        .map(|s| s.t.max(s.predicted))
        .fold(1.0, f64::max);
    let (left, height, plot) = (70.0, 230.0, 180.0);
    let bw = (900.0 / shown.len().max(1) as f64).clamp(2.0, 40.0);
    let width = left + bw * shown.len() as f64 + 10.0;
    let _ = write!(
        html,
        "<svg class=\"bars\" width=\"{width:.0}\" height=\"{height}\" viewBox=\"0 0 {width:.0} {height}\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    for k in 0..=4 {
        let v = max * k as f64 / 4.0;
        let y = 10.0 + plot - plot * k as f64 / 4.0;
        let _ = write!(
            html,
            "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{:.1}\" y=\"{:.1}\" class=\"lbl\" text-anchor=\"end\">{}</text>",
            width - 10.0,
            left - 4.0,
            y + 4.0,
            dur(v)
        );
    }
    for (i, s) in shown.iter().enumerate() {
        let x0 = left + i as f64 * bw;
        for (j, (v, colour, what)) in [
            (s.t, SYNC, "measured"),
            (s.predicted, PREDICTED, "predicted"),
        ]
        .into_iter()
        .enumerate()
        {
            let h = plot * v / max;
            let _ = write!(
                html,
                "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{h:.2}\" fill=\"{colour}\"><title>superstep {}: {what} {} (w {}, h {} bytes)</title></rect>",
                x0 + j as f64 * bw * 0.45,
                10.0 + plot - h,
                (bw * 0.42).max(0.8),
                s.s,
                dur(v),
                dur(s.w),
                s.h
            );
        }
        if shown.len() <= 40 {
            let _ = write!(
                html,
                "<text x=\"{:.1}\" y=\"{:.1}\" class=\"lbl\" text-anchor=\"middle\">{}</text>",
                x0 + bw * 0.45,
                height - 22.0,
                s.s
            );
        }
    }
    html.push_str("</svg>\n");
}

fn report(procs: &[Process], o: &Options) -> String {
    let p0 = &procs[0];
    let m = model(o, &p0.engine, p0.nprocs);
    let all = steps(procs, &m);
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>bspprof: {}</title>\n<style>\
body{{font-family:sans-serif;margin:1.5em;color:#222}} table{{border-collapse:collapse}} \
td,th{{border:1px solid #ccc;padding:2px 8px;text-align:right}} th{{background:#f4f4f4}} td.at{{text-align:left;font-family:monospace}} \
.lbl{{font-size:11px;font-family:sans-serif}} .key span{{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}}\
</style></head><body>\n",
        esc(&o.dir.display().to_string())
    );
    let syncs = all.iter().filter(|s| s.ended_by != "bsp_end").count();
    let total: f64 = all.iter().map(|s| s.t).sum();
    let predicted: f64 = all.iter().map(|s| s.predicted).sum();
    let cover = coverage(procs);
    let _ = write!(
        html,
        "<h1>bspprof</h1>\n<p>Profile <code>{}</code>: engine <b>{}</b>, p = <b>{}</b> (<span id=\"coverage\">{}</span>), \
         <b id=\"supersteps\">{}</b> supersteps ({syncs} syncs and the end), measured <b>{}</b>, predicted <b>{}</b>.</p>\n",
        esc(&o.dir.display().to_string()),
        esc(&p0.engine),
        p0.nprocs,
        esc(&cover.line()),
        all.len(),
        dur(total),
        dur(predicted)
    );
    if let Some(warning) = cover.warning(&o.dir, &p0.engine) {
        let _ = write!(
            html,
            "<p id=\"missing\"><b>Warning:</b> {}</p>",
            esc(&warning)
        );
    }
    if let Some(warning) = busy(procs) {
        let _ = write!(html, "<p id=\"busy\"><b>Warning:</b> {}</p>", esc(&warning));
    }
    let _ = writeln!(
        html,
        "<p>Prediction per superstep: <code>w + g·(h + n½·r) + l</code>, with w the longest computation of the superstep, \
         h and r the bytes and records (puts, messages, ...) of the process sending or receiving the most (each record counts n½ bytes more), \
         <b id=\"model\">g = {} ns per byte, l = {} µs, n½ = {} bytes</b>: {}. \
         Single 8-byte puts cost g·(8 + n½)/8 = {:.3} ns per byte.</p>",
        fmt_num(m.g),
        fmt_num(m.l_ns / 1e3),
        fmt_num(m.nhalf),
        m.source,
        m.g * (8.0 + m.nhalf) / 8.0
    );

    html.push_str("<h2>Timeline</h2>\n<p class=\"key\"><span style=\"background:#4e79a7\"></span>computing<span style=\"background:#f28e2b\"></span>in a sync (waiting and exchanging)</p>\n");
    timeline(procs, &mut html);

    html.push_str("<h2>Supersteps: measured against predicted</h2>\n<p class=\"key\"><span style=\"background:#f28e2b\"></span>measured<span style=\"background:#59a14f\"></span>predicted w + g·(h + n½·r) + l</p>\n");
    bars(&all, 300, &mut html);

    let _ = write!(html, "<h2>Heaviest supersteps</h2>\n<table><tr><th>superstep</th><th>measured</th><th>predicted</th><th>w (max)</th><th>w (mean)</th><th>h (bytes)</th><th>records (max)</th><th>ended by</th><th>at</th></tr>\n");
    let mut heavy: Vec<&Step> = all.iter().collect();
    heavy.sort_by(|a, b| b.t.total_cmp(&a.t));
    for s in heavy.iter().take(o.top) {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"at\">{}</td><td class=\"at\">{}</td></tr>",
            s.s,
            dur(s.t),
            dur(s.predicted),
            dur(s.w),
            dur(s.w_mean),
            s.h,
            s.records,
            esc(&s.ended_by),
            esc(&s.at.join(", "))
        );
    }
    html.push_str("</table>\n");

    // Load imbalance: per process, total computing and syncing.
    html.push_str("<h2>Load imbalance</h2>\n");
    let per: Vec<(usize, f64, f64)> = procs
        .iter()
        .map(|p| {
            let c: f64 = p
                .rows
                .iter()
                .map(|r| r.sync_start_ns.saturating_sub(r.compute_start_ns) as f64)
                .sum();
            let s: f64 = p
                .rows
                .iter()
                .map(|r| r.sync_end_ns.saturating_sub(r.sync_start_ns) as f64)
                .sum();
            (p.pid, c, s)
        })
        .collect();
    let mean = per.iter().map(|x| x.1).sum::<f64>() / per.len() as f64;
    let maxc = per.iter().map(|x| x.1).fold(0.0, f64::max);
    let step_imb: f64 =
        all.iter().map(|s| s.w).sum::<f64>() / all.iter().map(|s| s.w_mean).sum::<f64>().max(1.0);
    let _ = writeln!(
        html,
        "<p>Computation, most loaded process against the mean: <b id=\"imbalance\">{:.2}</b>x over the run; \
         summed per superstep (Σ max w / Σ mean w): <b>{step_imb:.2}</b>x. A process's sync time is mostly \
         waiting for the slowest one.</p>",
        if mean > 0.0 { maxc / mean } else { 1.0 }
    );
    let widest = per.iter().map(|x| x.1 + x.2).fold(1.0, f64::max);
    let (left, w, rh) = (90.0, 700.0, 18.0);
    let height = 8.0 + rh * per.len() as f64;
    let _ = write!(
        html,
        "<svg class=\"imbalance\" width=\"{}\" height=\"{height}\" viewBox=\"0 0 {} {height}\" xmlns=\"http://www.w3.org/2000/svg\">",
        left + w + 200.0,
        left + w + 200.0
    );
    for (k, (pid, c, s)) in per.iter().enumerate() {
        let y = 4.0 + k as f64 * rh;
        let (wc, ws) = (w * c / widest, w * s / widest);
        let _ = write!(
            html,
            "<text x=\"4\" y=\"{:.1}\" class=\"lbl\">process {pid}</text>\
             <rect x=\"{left}\" y=\"{y:.1}\" width=\"{wc:.2}\" height=\"{:.1}\" fill=\"{COMPUTE}\"><title>computing {}</title></rect>\
             <rect x=\"{:.2}\" y=\"{y:.1}\" width=\"{ws:.2}\" height=\"{:.1}\" fill=\"{SYNC}\"><title>in syncs {}</title></rect>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"lbl\">{} / {}</text>",
            y + 12.0,
            rh - 4.0,
            dur(*c),
            left + wc,
            rh - 4.0,
            dur(*s),
            left + wc + ws + 4.0,
            y + 12.0,
            dur(*c),
            dur(*s)
        );
    }
    html.push_str("</svg>\n");

    html.push_str("<h2>Every superstep</h2>\n<table><tr><th>superstep</th><th>measured</th><th>predicted</th><th>w (max)</th><th>h (bytes)</th><th>ended by</th><th>at</th></tr>\n");
    for s in all.iter().take(2000) {
        let _ = writeln!(
            html,
            "<tr class=\"step\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"at\">{}</td><td class=\"at\">{}</td></tr>",
            s.s,
            dur(s.t),
            dur(s.predicted),
            dur(s.w),
            s.h,
            esc(&s.ended_by),
            esc(&s.at.join(", "))
        );
    }
    html.push_str("</table>\n");
    if all.len() > 2000 {
        let _ = writeln!(html, "<p>(the first 2000 of {})</p>", all.len());
    }
    html.push_str("</body></html>\n");
    html
}

/// `s` without its HTML tags and entities (the model's source, for text).
fn plain(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_tag = false;
    for ch in s.chars() {
        match ch {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// The prediction's error over `steps`: `(n, median, 90th percentile,
/// max)` of the relative error |predicted - measured| / measured of the
/// supersteps ended by a sync, the median of the signed error
/// (predicted - measured) / measured (below 0: the prediction is short),
/// and `(measured, predicted, relative error)` of their sums over every
/// superstep given.
#[allow(clippy::type_complexity)]
fn errors(steps: &[&Step]) -> ((usize, f64, f64, f64, f64), (f64, f64, f64)) {
    let mut signed: Vec<f64> = steps
        .iter()
        .filter(|s| s.ended_by != "bsp_end" && s.t > 0.0)
        .map(|s| (s.predicted - s.t) / s.t)
        .collect();
    signed.sort_by(f64::total_cmp);
    let signed_median = if signed.is_empty() {
        0.0
    } else {
        signed[(signed.len() - 1) / 2]
    };
    let mut rel: Vec<f64> = signed.iter().map(|e| e.abs()).collect();
    rel.sort_by(f64::total_cmp);
    let at = |q: f64| {
        if rel.is_empty() {
            0.0
        } else {
            rel[((rel.len() - 1) as f64 * q).round() as usize]
        }
    };
    let (median, p90, max) = (at(0.5), at(0.9), rel.last().copied().unwrap_or(0.0));
    let measured: f64 = steps.iter().map(|s| s.t).sum();
    let predicted: f64 = steps.iter().map(|s| s.predicted).sum();
    let total = if measured > 0.0 {
        (predicted - measured) / measured
    } else {
        0.0
    };
    (
        (rel.len(), median, p90, max, signed_median),
        (measured, predicted, total),
    )
}

/// `bspprof --summary`: every superstep, measured against predicted, and
/// the prediction's error (see `usage`).
fn summary(procs: &[Process], o: &Options) -> String {
    let p0 = &procs[0];
    let m = model(o, &p0.engine, p0.nprocs);
    let all = steps(procs, &m);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "bspprof: {}: engine {}, p = {}, {} supersteps, {}",
        o.dir.display(),
        p0.engine,
        p0.nprocs,
        all.len(),
        coverage(procs).line()
    );
    let _ = writeln!(
        out,
        "model: w + g*(h + nhalf*records) + l, g = {} ns/byte, l = {} us, nhalf = {} bytes: {}",
        fmt_num(m.g),
        fmt_num(m.l_ns / 1e3),
        fmt_num(m.nhalf),
        plain(&m.source)
    );
    let _ = writeln!(
        out,
        "{:>9} {:>14} {:>14} {:>14} {:>10} {:>8} {:>9}  {:<10} at",
        "superstep",
        "measured_us",
        "predicted_us",
        "w_us",
        "h_bytes",
        "records",
        "error",
        "ended_by"
    );
    for s in &all {
        let err = if s.ended_by == "bsp_end" || s.t <= 0.0 {
            "-".to_string()
        } else {
            format!("{:+.1}%", 100.0 * (s.predicted - s.t) / s.t)
        };
        let excluded = if o.exclude.contains(&s.s) {
            " (excluded)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{:>9} {:>14.3} {:>14.3} {:>14.3} {:>10} {:>8} {:>9}  {:<10} {}{excluded}",
            s.s,
            s.t / 1e3,
            s.predicted / 1e3,
            s.w / 1e3,
            s.h,
            s.records,
            err,
            s.ended_by,
            if s.at.is_empty() {
                "-".to_string()
            } else {
                s.at.join(",")
            }
        );
    }
    let kept: Vec<&Step> = all.iter().filter(|s| !o.exclude.contains(&s.s)).collect();
    let ((n, median, p90, max, signed), (measured, predicted, total)) = errors(&kept);
    let excluded = if o.exclude.is_empty() {
        "none".to_string()
    } else {
        o.exclude
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    let _ = writeln!(
        out,
        "per superstep: |predicted - measured| / measured over {n} supersteps with a sync (excluded: {excluded}): median {:.1}%, p90 {:.1}%, max {:.1}% (signed median {:+.1}%)",
        100.0 * median,
        100.0 * p90,
        100.0 * max,
        100.0 * signed
    );
    let _ = writeln!(
        out,
        "total: measured {:.3} us, predicted {:.3} us over {} supersteps (excluded: {excluded}): error {:+.1}%",
        measured / 1e3,
        predicted / 1e3,
        kept.len(),
        100.0 * total
    );
    out
}

fn main() -> ExitCode {
    // A closed standard output (`bspprof --summary DIR | head -1`) ends
    // bspprof as it ends C tools, by SIGPIPE, silently (Rust's default,
    // ignoring it, makes print! panic). The files are written before
    // anything is printed.
    // SAFETY: restores the default action of one signal, before any
    // thread is started.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let o = match parse(&args) {
        Ok(Cli::Run(o)) => o,
        Ok(Cli::Help) => {
            print!("{}", usage());
            return ExitCode::SUCCESS;
        }
        Ok(Cli::Version) => {
            println!("bspprof (bsplib) {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("bspprof: {e}\n{SYNOPSIS}\nTry 'bspprof --help' for more information.");
            return ExitCode::from(2);
        }
    };
    let procs = match read_dir(&o.dir) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("bspprof: {e}");
            return ExitCode::FAILURE;
        }
    };
    // A partial profile is still shown (exit status 0), with the warning.
    if let Some(warning) = coverage(&procs).warning(&o.dir, &procs[0].engine) {
        eprintln!("bspprof: warning: {warning}");
    }
    if let Some(warning) = busy(&procs) {
        eprintln!("bspprof: warning: {warning}");
    }
    if o.summary {
        print!("{}", summary(&procs, &o));
        return ExitCode::SUCCESS;
    }
    let trace_path = o.trace.clone().unwrap_or_else(|| o.dir.join("trace.json"));
    let html_path = o
        .output
        .clone()
        .unwrap_or_else(|| o.dir.join("report.html"));
    let trace = serde_json::to_string(&merged_trace(&procs)).expect("a JSON value serialises");
    for (path, text) in [(&trace_path, trace), (&html_path, report(&procs, &o))] {
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("bspprof: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    println!(
        "bspprof: {} ({} of {} processes); trace {}",
        html_path.display(),
        procs.len(),
        procs[0].nprocs,
        trace_path.display()
    );
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The options of a run, `None` for `--help` and `--version`.
    fn opts(line: &str) -> Result<Option<Options>, String> {
        let args: Vec<OsString> = line.split_whitespace().map(Into::into).collect();
        parse(&args).map(|cli| match cli {
            Cli::Run(o) => Some(o),
            Cli::Help | Cli::Version => None,
        })
    }

    #[test]
    fn options() {
        let o = opts("--g 2.5 --l=3 -o r.html dir").unwrap().unwrap();
        assert_eq!((o.g, o.l_us, o.nhalf), (Some(2.5), Some(3.0), None));
        let m = model(&o, "threads", 2);
        assert_eq!((m.g, m.l_ns, m.nhalf), (2.5, 3000.0, 0.0));
        assert!(m.source.starts_with("g, l, n½ given"), "{}", m.source);
        assert_eq!(o.dir, PathBuf::from("dir"));
        assert_eq!(o.output, Some(PathBuf::from("r.html")));
        assert!(opts("--help").unwrap().is_none());
        let args: Vec<OsString> = vec!["d".into(), "--version".into()];
        assert!(matches!(parse(&args), Ok(Cli::Version)));
        assert_eq!(opts("").unwrap_err(), "no profile directory given");
        assert_eq!(
            opts("--g x d").unwrap_err(),
            "--g: g must be a number >= 0, not 'x'"
        );
        assert_eq!(opts("--bogus d").unwrap_err(), "unknown option '--bogus'");
    }

    #[test]
    fn summary_options_and_errors() {
        let o = opts("--summary --exclude 0,3 d").unwrap().unwrap();
        assert!(o.summary);
        assert_eq!(o.exclude, vec![0, 3]);
        assert_eq!(
            opts("--exclude x d").unwrap_err(),
            "--exclude: not a superstep number: 'x'"
        );
        let step = |t: f64, predicted: f64, ended_by: &str| Step {
            s: 0,
            t,
            w: 0.0,
            w_mean: 0.0,
            h: 0,
            records: 0,
            at: Vec::new(),
            ended_by: ended_by.into(),
            predicted,
        };
        let steps = [
            step(100.0, 150.0, "bsp_sync"),
            step(200.0, 100.0, "bsp_sync"),
            step(100.0, 110.0, "bsp_sync"),
            step(50.0, 50.0, "bsp_end"),
        ];
        let refs: Vec<&Step> = steps.iter().collect();
        let ((n, median, _, max, signed), (measured, predicted, total)) = errors(&refs);
        assert!((signed - 0.1).abs() < 1e-12, "{signed}");
        assert_eq!(n, 3, "the end has no sync");
        assert!((median - 0.5).abs() < 1e-12, "{median}");
        assert!((max - 0.5).abs() < 1e-12);
        assert_eq!((measured, predicted), (450.0, 410.0));
        assert!((total + 40.0 / 450.0).abs() < 1e-12);
        assert_eq!(plain("a <code>b</code> &amp; c"), "a b & c");
    }

    #[test]
    fn prediction_is_w_plus_g_h_plus_l() {
        let row = |s, c, ss, se, out, inn| Row {
            superstep: s,
            compute_start_ns: c,
            sync_start_ns: ss,
            sync_end_ns: se,
            bytes_out: out,
            bytes_in: inn,
            ended_by: "bsp_sync".into(),
            ..Row::default()
        };
        let proc_ = |pid, rows| Process {
            pid,
            nprocs: 2,
            engine: "threads".into(),
            start_unix_us: 0,
            host: None,
            load: None,
            rows,
            events: Vec::new(),
        };
        let procs = [
            proc_(0, vec![row(0, 0, 1000, 1500, 100, 10)]),
            proc_(1, vec![row(0, 0, 400, 1500, 0, 300)]),
        ];
        let m = Model {
            g: 2.0,
            l_ns: 50.0,
            nhalf: 0.0,
            source: String::new(),
        };
        let s = steps(&procs, &m);
        assert_eq!(s[0].h, 300);
        assert_eq!(s[0].w, 1000.0);
        assert_eq!(s[0].t, 1500.0);
        assert_eq!(s[0].predicted, 1000.0 + 2.0 * 300.0 + 50.0);
    }
}
