//! Output in whole lines (issue 26), on every engine of
//! `BSPLIB_TEST_ENGINES` (default threads and processes; CI's MPI step and
//! the simulated cluster run it with `mpi`): several processes printing
//! thousands of lines each at once, standard output and error redirected
//! to files, through `bsprun`. Every line must come out whole and exactly
//! once, labelled with its own process under `bsprun --label` (refused on
//! `threads`), and what the processes printed must still come out when a
//! process stops the run with `bsp_abort` or process 0 crashes. What
//! process 0 prints after the run (`after N`) goes to the run's own
//! standard output again, after everything of the run (on `mpi`, where
//! ranks' lines travel apart, just once).
//!
//! Two programs: `tests/c/lines.c` (C stdio: standard output fully
//! buffered, cut every 4 KiB; standard error unbuffered, each line in
//! three writes), and this binary itself, re-run as the BSP program with
//! `--lines-child` (Rust: standard output through a 4 KiB buffer written
//! to the descriptor as it fills, standard error in three writes a line).
//! On `threads` each line is printed by one call (`printf`, `println!`):
//! its processes share one stream, whose lock keeps a line whole only
//! call by call.
//! Not a libtest harness (`harness = false`): the child must start a run
//! from a program with one thread, as a real one does.

mod harness;

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness::{bsprun, build, describe, engines, group_members, kill_group, out_dir};

/// Lines each process prints on standard output (standard error: a
/// quarter of them).
const LINES: usize = 4000;
/// A run taking longer than this is a hang.
const TIMEOUT: Duration = Duration::from_secs(90);

const PAD: &str = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--lines-child") {
        child(&args[2..]);
    }
    let c = build("lines.c", "output_lines", false);
    let me = std::env::current_exe().expect("this test's path");
    let mut failures = Vec::new();
    let mut runs = 0;
    for engine in engines() {
        let shape = if engine == "threads" {
            "whole"
        } else {
            "pieces"
        };
        let programs: [(&str, &Path, Vec<String>); 2] = [
            ("C", &c, vec![LINES.to_string()]),
            ("Rust", &me, vec!["--lines-child".into(), LINES.to_string()]),
        ];
        for (language, exe, args) in &programs {
            let cases: &[(usize, &str, bool)] = &[
                (2, "", false),
                (4, "", false),
                (3, "", true),
                (3, "abort", false),
                (3, "crash0", false),
            ];
            for &(p, mode, label) in cases {
                if label && engine == "threads" || mode == "crash0" && *language == "Rust" {
                    continue;
                }
                let mut args = args.clone();
                args.push(if mode.is_empty() { "-" } else { mode }.into());
                args.push(shape.into());
                runs += 1;
                let what = format!(
                    "{language} on {engine}, p = {p}{}{}",
                    if mode.is_empty() { "" } else { ", " },
                    mode
                ) + if label { ", --label" } else { "" };
                if let Err(e) = check(exe, &engine, p, &args, mode, label) {
                    failures.push(format!("{what}: {e}"));
                }
            }
        }
        if engine == "threads" {
            runs += 1;
            if let Err(e) = label_refused(&c) {
                failures.push(format!("--label on threads: {e}"));
            }
        }
    }
    if !failures.is_empty() {
        eprintln!("output_lines: {} of {runs} runs failed:", failures.len());
        for f in &failures {
            eprintln!("- {f}");
        }
        std::process::exit(1);
    }
    println!("output_lines: {runs} runs, every line whole and in its place");
}

/// The BSP program in Rust: `--lines-child N MODE SHAPE` (MODE `abort`
/// or `-`, SHAPE `pieces` or `whole`).
fn child(args: &[String]) -> ! {
    use std::io::Write;
    let n: usize = args.first().and_then(|n| n.parse().ok()).unwrap_or(LINES);
    let abort = args.get(1).is_some_and(|m| m == "abort");
    let pieces = args.get(2).is_none_or(|s| s != "whole");
    let p: usize = std::env::var("BSPLIB_NPROCS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let result = bsplib::Runtime::from_env(p).run(|bsp| {
        let pid = bsp.pid();
        // Standard output as C buffers it for a file: 4 KiB at a time,
        // cut anywhere.
        let raw = std::mem::ManuallyDrop::new(unsafe {
            // SAFETY: descriptor 1 is open for the whole process; the
            // `File` is never dropped, so it never closes it.
            <File as std::os::fd::FromRawFd>::from_raw_fd(1)
        });
        let mut out = std::io::BufWriter::with_capacity(4096, &*raw);
        for i in 0..n {
            if pieces {
                writeln!(out, "o {pid} {i} {}", &PAD[..i % 61]).expect("writing standard output");
            } else {
                println!("o {pid} {i} {}", &PAD[..i % 61]);
            }
        }
        out.flush().expect("writing standard output");
        for i in 0..n / 4 {
            if pieces {
                eprint!("e {pid} ");
                eprint!("{i} ");
                eprintln!("{}", &PAD[..i % 61]);
            } else {
                eprintln!("e {pid} {i} {}", &PAD[..i % 61]);
            }
        }
        bsp.sync()?;
        if abort && pid == bsp.nprocs() - 1 {
            bsp.abort(format!(
                "lines: process {pid} stops the run after {n} lines"
            ));
        }
        bsp.sync()?;
        Ok(())
    });
    match result {
        Ok(_) => {
            println!("after {n}");
            std::process::exit(0)
        }
        Err(e) => {
            let line = format!("bsplib: {e}\n");
            let _ = std::io::stderr().write_all(line.as_bytes());
            std::process::exit(1)
        }
    }
}

/// A whole line of Open MPI's own, `[host:pid] text` (mpirun's daemons
/// write them: across the simulated cluster's hosts, "plm:rsh: Warning:
/// setpgid(...) failed", see .ci/CLUSTER.md): not a rank's line.
fn open_mpi_notice(line: &[u8]) -> bool {
    let Some(rest) = line.strip_prefix(b"[") else {
        return false;
    };
    let Some(end) = rest.iter().position(|&b| b == b']') else {
        return false;
    };
    let (host_pid, after) = (&rest[..end], &rest[end + 1..]);
    let Some(colon) = host_pid.iter().rposition(|&b| b == b':') else {
        return false;
    };
    let (host, pid) = (&host_pid[..colon], &host_pid[colon + 1..]);
    !host.is_empty()
        && !pid.is_empty()
        && pid.iter().all(u8::is_ascii_digit)
        && after.starts_with(b" ")
        && after.len() > 1
}

/// Runs `exe args` with `bsprun` (and `--label`), its standard output and
/// error into files, and checks them.
fn check(
    exe: &Path,
    engine: &str,
    p: usize,
    args: &[String],
    mode: &str,
    label: bool,
) -> Result<(), String> {
    let dir = out_dir("output_lines/runs");
    static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (out_path, err_path) = (dir.join(format!("{n}.out")), dir.join(format!("{n}.err")));
    let mut cmd = bsprun(exe, engine, p, args, &[]);
    if label {
        // `bsprun --label --engine E -np P ...`: options in any order.
        let rest: Vec<_> = cmd.get_args().map(ToOwned::to_owned).collect();
        let mut labelled = Command::new(cmd.get_program());
        labelled.arg("--label").args(rest);
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => labelled.env(k, v),
                None => labelled.env_remove(k),
            };
        }
        cmd = labelled;
    }
    let status = run_to_files(&mut cmd, &out_path, &err_path)?;
    let out = std::fs::read(&out_path).map_err(|e| e.to_string())?;
    let err = std::fs::read(&err_path).map_err(|e| e.to_string())?;
    let failing = !mode.is_empty();
    if status.success() == failing {
        return Err(format!(
            "{} (stderr: {})",
            describe(Some(status)),
            tail(&err)
        ));
    }
    // Outside the run: on `mpi` still rank 0's output, labelled.
    let after = format!("after {LINES}");
    let labelled_after = format!("[0] {after}");
    let after_ok = |line: &[u8]| {
        line == after.as_bytes() || label && engine == "mpi" && line == labelled_after.as_bytes()
    };
    let afters = lines(&out, b'o', p, LINES, label, &mut |line| after_ok(line))
        .map_err(|e| format!("standard output: {e}"))?;
    let last = out.strip_suffix(b"\n").unwrap_or(&out);
    let last = &last[last.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)..];
    match (failing, afters) {
        (true, 0) => {}
        (false, 1) if engine == "mpi" || after_ok(last) => {}
        _ => {
            return Err(format!(
                "standard output has {afters} lines {after:?} (expected {}), its last {:?}",
                usize::from(!failing),
                String::from_utf8_lossy(last)
            ))
        }
    }
    let mut library = Vec::new();
    lines(&err, b'e', p, LINES / 4, label, &mut |line| {
        let text = strip_label(line, label).1;
        let ours = text.starts_with(b"bsplib: ");
        if ours {
            library.push(String::from_utf8_lossy(text).into_owned());
        }
        ours || engine == "mpi" && open_mpi_notice(line)
    })
    .map_err(|e| format!("standard error: {e}"))?;
    let expected = match mode {
        "abort" => Some(format!(
            "lines: process {} stops the run after {LINES} lines",
            p - 1
        )),
        "crash0" => Some("process 0 was killed by signal 11".to_owned()),
        _ => None,
    };
    match (&expected, &library[..]) {
        (None, []) => Ok(()),
        (Some(want), [line]) if line.contains(want.as_str()) => Ok(()),
        _ => Err(format!(
            "the library's lines on standard error are {library:?}, expected one saying {expected:?}"
        )),
    }
}

/// `bsprun --label` on `threads` stops before running anything, saying why.
fn label_refused(c: &Path) -> Result<(), String> {
    let output = Command::new(harness::BSPRUN)
        .args(["--label", "--engine", "threads", "-np", "2"])
        .arg(c)
        .arg("10")
        .output()
        .map_err(|e| e.to_string())?;
    let err = String::from_utf8_lossy(&output.stderr);
    if output.status.code() != Some(2)
        || !output.stdout.is_empty()
        || !err.contains("--label is not available on the threads engine")
    {
        return Err(format!(
            "{}, stdout {:?}, stderr {err:?}",
            describe(Some(output.status)),
            String::from_utf8_lossy(&output.stdout)
        ));
    }
    Ok(())
}

/// Runs `cmd` in a process group of its own, standard output and error
/// into the files, under [`TIMEOUT`]; the group must be empty after it.
fn run_to_files(
    cmd: &mut Command,
    out: &Path,
    err: &Path,
) -> Result<std::process::ExitStatus, String> {
    let file = |p: &Path| File::create(p).map_err(|e| format!("{}: {e}", p.display()));
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(file(out)?)
        .stderr(file(err)?)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run bsprun: {e}"))?;
    let group = child.id() as i32;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            kill_group(group);
            let _ = child.wait();
            return Err(format!("no end after {TIMEOUT:?}: a hang (group killed)"));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // The relay may outlive process 0 a moment; nothing may stay.
    let settle = Instant::now() + Duration::from_secs(5);
    while !group_members(group).is_empty() {
        if Instant::now() > settle {
            let left = group_members(group);
            kill_group(group);
            return Err(format!("processes left behind: {left:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(status)
}

/// The label of `line` (when `label`), and the rest.
fn strip_label(line: &[u8], label: bool) -> (Option<usize>, &[u8]) {
    if !label {
        return (None, line);
    }
    let Some(rest) = line.strip_prefix(b"[") else {
        return (None, line);
    };
    let Some(close) = rest.iter().position(|&b| b == b']') else {
        return (None, line);
    };
    let pid = std::str::from_utf8(&rest[..close])
        .ok()
        .and_then(|s| s.parse().ok());
    match (pid, rest[close + 1..].strip_prefix(b" ")) {
        (Some(pid), Some(text)) => (Some(pid), text),
        _ => (None, line),
    }
}

/// Checks the lines of `text` marked `kind` (`o`, `e`): each whole (`kind
/// pid i` and `i % 61` x's), labelled with its pid when `label`, and every
/// process's `0..n` exactly once. A line of another shape is passed to
/// `other`, which says whether it is allowed. Returns the number of lines
/// of another shape allowed.
fn lines(
    text: &[u8],
    kind: u8,
    p: usize,
    n: usize,
    label: bool,
    other: &mut impl FnMut(&[u8]) -> bool,
) -> Result<usize, String> {
    let mut seen = vec![vec![false; n]; p];
    let mut others = 0;
    let mut bad = Vec::new();
    if !text.is_empty() && !text.ends_with(b"\n") {
        bad.push("the text does not end with a newline".to_owned());
    }
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let (tag, rest) = strip_label(line, label);
        let parsed = (|| {
            let rest = rest.strip_prefix(&[kind, b' '])?;
            let mut words = rest.splitn(3, |&b| b == b' ');
            let pid: usize = std::str::from_utf8(words.next()?).ok()?.parse().ok()?;
            let i: usize = std::str::from_utf8(words.next()?).ok()?.parse().ok()?;
            let pad = words.next()?;
            (pid < p && i < n && pad.len() == i % 61 && pad.iter().all(|&b| b == b'x'))
                .then_some((pid, i))
        })();
        match parsed {
            Some((pid, i)) if !label || tag == Some(pid) => {
                if std::mem::replace(&mut seen[pid][i], true) {
                    bad.push(format!("line {i} of process {pid} twice"));
                }
            }
            Some((pid, _)) => bad.push(format!(
                "a line of process {pid} labelled {tag:?}: {:?}",
                String::from_utf8_lossy(line)
            )),
            None if other(line) => others += 1,
            None => bad.push(format!(
                "a broken line: {:?}",
                String::from_utf8_lossy(line)
            )),
        }
    }
    for (pid, seen) in seen.iter().enumerate() {
        let missing = seen.iter().filter(|&&s| !s).count();
        if missing > 0 {
            bad.push(format!(
                "{missing} of the {n} lines of process {pid} missing"
            ));
        }
    }
    if bad.is_empty() {
        return Ok(others);
    }
    let count = bad.len();
    bad.truncate(5);
    Err(format!("{count} problems, first {}", bad.join("; ")))
}

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let start = text.len().saturating_sub(600);
    let start = (start..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    text[start..].to_owned()
}
