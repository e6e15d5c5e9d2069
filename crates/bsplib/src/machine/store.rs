//! The probe's store: the file of measured machines (one entry per host,
//! bsplib version, engine and p), where it is, and loading and saving
//! its entries.

use std::io;
use std::path::{Path, PathBuf};

use super::{Machine, Source};
use crate::Engine;

/// A measurement: the figures and how well they are known.
///
/// # Examples
///
/// ```
/// use bsplib::probe::{measure, Options};
/// let m = measure(&bsplib::Runtime::new(2), &Options::quick())?;
/// println!(
///     "g = {:.3} ns/byte ({:.3} to {:.3} over {} repetitions), residual {:.0}%",
///     m.machine.g * 1e9,
///     m.g_range.0 * 1e9,
///     m.g_range.1 * 1e9,
///     m.reps,
///     m.residual * 100.0
/// );
/// # Ok::<(), bsplib::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// The engine measured.
    pub engine: Engine,
    /// The processes measured.
    pub nprocs: usize,
    /// The fit, per h, of the time of a superstep a fifth of the way up
    /// the sorted times of every superstep of every repetition (others'
    /// work on the machine only ever adds time).
    pub machine: Machine,
    /// The smallest and largest g of the repetitions, each fitted alone.
    pub g_range: (f64, f64),
    /// The smallest and largest l of the repetitions, each fitted alone.
    pub l_range: (f64, f64),
    /// The smallest and largest n½ of the repetitions, each fitted alone.
    pub nhalf_range: (f64, f64),
    /// The root-mean-square residual of the single-word fit behind
    /// `machine`, relative to the mean time of its supersteps (0.05: 5%).
    pub residual: f64,
    /// The repetitions counted (fewer than [`Options::reps`](crate::probe::Options::reps) when the
    /// budget ran out).
    pub reps: usize,
    /// The points of the single-word fit: h (8-byte words each process
    /// puts) and seconds per superstep (bspbench's table).
    pub word_points: Vec<(usize, f64)>,
    /// The points of the large-put fit: bytes each process puts, and
    /// seconds per superstep.
    pub bulk_points: Vec<(usize, f64)>,
}

// ----- the store -------------------------------------------------------------

/// The store's file: `$BSPLIB_MACHINE` if set and not empty, else
/// `$XDG_CACHE_HOME/bsplib/machine.json` (an absolute `XDG_CACHE_HOME`),
/// else `$HOME/.cache/bsplib/machine.json`; `None` without any of them.
///
/// # Examples
///
/// ```
/// if let Some(path) = bsplib::probe::store_path() {
///     assert!(path.to_string_lossy().ends_with(".json") || std::env::var_os("BSPLIB_MACHINE").is_some());
/// }
/// ```
pub fn store_path() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(file) = var("BSPLIB_MACHINE") {
        return Some(file.into());
    }
    let cache = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("bsplib").join("machine.json"))
}

/// This machine's host name (`gethostname`), part of a stored entry's
/// key; `"unknown"` if it cannot be read.
///
/// # Examples
///
/// ```
/// assert!(!bsplib::probe::hostname().is_empty());
/// ```
pub fn hostname() -> String {
    crate::engine::host_name()
}

/// One stored entry.
#[derive(Clone, Debug)]
struct Entry {
    host: String,
    version: String,
    engine: String,
    nprocs: usize,
    /// The line as written (kept verbatim when another entry is saved).
    line: String,
    machine: Machine,
}

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The fields of a flat JSON object of strings and numbers, or `None`.
fn parse_flat(line: &str) -> Option<Vec<(String, String)>> {
    let mut chars = line.trim().trim_end_matches(',').chars().peekable();
    let skip_ws = |c: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        while c.peek().is_some_and(|c| c.is_whitespace()) {
            c.next();
        }
    };
    let string = |c: &mut std::iter::Peekable<std::str::Chars<'_>>| -> Option<String> {
        if c.next()? != '"' {
            return None;
        }
        let mut s = String::new();
        loop {
            match c.next()? {
                '"' => return Some(s),
                '\\' => match c.next()? {
                    'u' => {
                        let hex: String = (0..4).filter_map(|_| c.next()).collect();
                        s.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    'n' => s.push('\n'),
                    't' => s.push('\t'),
                    other => s.push(other),
                },
                ch => s.push(ch),
            }
        }
    };
    skip_ws(&mut chars);
    if chars.next()? != '{' {
        return None;
    }
    let mut fields = Vec::new();
    loop {
        skip_ws(&mut chars);
        match chars.peek()? {
            '}' => return Some(fields),
            ',' => {
                chars.next();
                continue;
            }
            _ => {}
        }
        let key = string(&mut chars)?;
        skip_ws(&mut chars);
        if chars.next()? != ':' {
            return None;
        }
        skip_ws(&mut chars);
        let value = if chars.peek() == Some(&'"') {
            string(&mut chars)?
        } else {
            let mut v = String::new();
            while chars
                .peek()
                .is_some_and(|c| !matches!(c, ',' | '}') && !c.is_whitespace())
            {
                v.push(chars.next()?);
            }
            v
        };
        fields.push((key, value));
    }
}

fn parse_entry(line: &str) -> Option<Entry> {
    let fields = parse_flat(line)?;
    let get = |k: &str| {
        fields
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    let num = |k: &str| {
        get(k)?
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
    };
    Some(Entry {
        host: get("host")?.into(),
        version: get("version")?.into(),
        engine: get("engine")?.into(),
        nprocs: get("p")?.parse().ok()?,
        line: line.trim().trim_end_matches(',').to_string(),
        machine: Machine {
            g: num("g")?,
            l: num("l")?,
            nhalf: num("nhalf")?,
            s: num("s")?,
            source: Source::Stored,
        },
    })
}

/// The entries of the store at `path` (none if it does not exist).
fn read_entries(path: &Path) -> io::Result<Vec<Entry>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(io::Error::new(
                e.kind(),
                format!("cannot read the machine store {}: {e}", path.display()),
            ))
        }
    };
    let mut entries = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if !t.starts_with("{\"host\"") {
            continue;
        }
        entries.push(parse_entry(t).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the machine store {} has a malformed entry on line {}: {t}",
                    path.display(),
                    n + 1
                ),
            )
        })?);
    }
    Ok(entries)
}

/// The figures stored at `path` for `engine` at `p` processes on this
/// host and bsplib version, if any.
///
/// # Errors
///
/// The file exists but cannot be read, or holds a malformed entry (the
/// message names the file and the line).
///
/// # Examples
///
/// ```
/// let none = bsplib::probe::load_from("/nonexistent/machine.json".as_ref(), bsplib::Engine::Threads, 2)?;
/// assert!(none.is_none());
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn load_from(path: &Path, engine: Engine, p: usize) -> io::Result<Option<Machine>> {
    let host = hostname();
    Ok(read_entries(path)?
        .into_iter()
        .find(|e| {
            e.host == host && e.version == VERSION && e.engine == engine.name() && e.nprocs == p
        })
        .map(|e| e.machine))
}

/// [`load_from`] the [`store_path`] (`Ok(None)` without one).
///
/// # Errors
///
/// As [`load_from`].
///
/// # Examples
///
/// ```
/// let m = bsplib::probe::load(bsplib::Engine::Threads, 2)?;
/// if let Some(m) = m {
///     assert_eq!(m.source, bsplib::probe::Source::Stored);
/// }
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn load(engine: Engine, p: usize) -> io::Result<Option<Machine>> {
    match store_path() {
        Some(path) => load_from(&path, engine, p),
        None => Ok(None),
    }
}

/// Stores `m` at `path`, replacing the entry of the same host, bsplib
/// version, engine and p and keeping the others (written to a temporary
/// file, then renamed into place; the directory is made if needed).
///
/// # Errors
///
/// The directory or file cannot be made or written, or the existing
/// store is malformed (it is not overwritten; the message names it).
///
/// # Examples
///
/// ```
/// use bsplib::probe::{self, Options};
/// let path = std::env::temp_dir().join(format!("bsplib-doc-machine-{}.json", std::process::id()));
/// let m = probe::measure(&bsplib::Runtime::new(2), &Options::quick())?;
/// probe::save_to(&path, &m)?;
/// let back = probe::load_from(&path, bsplib::Engine::Threads, 2)?.unwrap();
/// assert_eq!((back.g, back.l), (m.machine.g, m.machine.l));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save_to(path: &Path, m: &Measurement) -> io::Result<()> {
    let mut entries = read_entries(path)?;
    let host = hostname();
    let engine = m.engine.name();
    entries.retain(|e| {
        !(e.host == host && e.version == VERSION && e.engine == engine && e.nprocs == m.nprocs)
    });
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mm = &m.machine;
    let line = format!(
        "{{\"host\":{},\"version\":{},\"engine\":{},\"p\":{},\"g\":{:e},\"l\":{:e},\"nhalf\":{:e},\"s\":{:e},\
         \"g_min\":{:e},\"g_max\":{:e},\"l_min\":{:e},\"l_max\":{:e},\"residual\":{:e},\"reps\":{},\"unix_time\":{now}}}",
        json_str(&host),
        json_str(VERSION),
        json_str(engine),
        m.nprocs,
        mm.g,
        mm.l,
        mm.nhalf,
        mm.s,
        m.g_range.0,
        m.g_range.1,
        m.l_range.0,
        m.l_range.1,
        m.residual,
        m.reps
    );
    let mut lines: Vec<String> = entries.into_iter().map(|e| e.line).collect();
    lines.push(line);
    let text = format!(
        "{{\"format\":\"bsplib machine 1\",\"units\":\"g: s/byte, l: s, nhalf: bytes, s: flop/s\",\"entries\":[\n{}\n]}}\n",
        lines.join(",\n")
    );
    let context = |what: &str, e: io::Error| {
        io::Error::new(e.kind(), format!("cannot {what} {}: {e}", path.display()))
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| context("make the directory of", e))?;
    }
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| context("write", e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        context("replace", e)
    })
}

/// [`save_to`] the [`store_path`]; returns the path.
///
/// # Errors
///
/// No store path (none of `BSPLIB_MACHINE`, `XDG_CACHE_HOME`, `HOME` is
/// set: [`io::ErrorKind::NotFound`]), or as [`save_to`].
///
/// # Examples
///
/// ```no_run
/// let m = bsplib::probe::measure(&bsplib::Runtime::new(2), &bsplib::probe::Options::quick())?;
/// let path = bsplib::probe::save(&m)?;
/// println!("stored in {}", path.display());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save(m: &Measurement) -> io::Result<PathBuf> {
    let path = store_path().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            "no place for the machine store: set BSPLIB_MACHINE, XDG_CACHE_HOME or HOME",
        )
    })?;
    save_to(&path, m)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_parse_back() {
        let line = r#"{"host":"a\"b","version":"1","engine":"threads","p":2,"g":1.5e-10,"l":2e-6,"nhalf":3.7e2,"s":1e9,"reps":5}"#;
        let e = parse_entry(line).unwrap();
        assert_eq!((e.host.as_str(), e.nprocs), ("a\"b", 2));
        assert_eq!((e.machine.g, e.machine.nhalf), (1.5e-10, 370.0));
        assert!(parse_entry(r#"{"host":"x","p":"two"}"#).is_none());
        assert_eq!(json_str("a\"b"), r#""a\"b""#);
    }
}
