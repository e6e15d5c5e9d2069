//! Shared by the C test binaries (`c_programs.rs`, `error_endings.rs`,
//! `tools.rs`, `faults.rs`, `fuzz_abi.rs`): building a program of
//! `tests/c/` with `bspcc`, running it with `bsprun` (or any command) in a
//! process group of its own under a time limit, looking for processes it
//! left behind (`/proc`), for shared memory it left in `/dev/shm`, running
//! jobs on [`WORKERS`] threads, reporting outcomes, and a small seeded RNG.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, OnceLock};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

pub const BSPCC: &str = env!("CARGO_BIN_EXE_bspcc");
pub const BSPRUN: &str = env!("CARGO_BIN_EXE_bsprun");

/// Flags of every C build.
pub const C_FLAGS: &[&str] = &[
    "-std=c99",
    "-D_POSIX_C_SOURCE=200809L",
    "-Wall",
    "-Werror",
    "-g",
];
/// Added for an AddressSanitizer build.
pub const ASAN_FLAGS: &[&str] = &["-fsanitize=address", "-fno-omit-frame-pointer"];

/// Runs at once (the machine has 2 cores).
#[path = "../../../bsplib/tests/support/par_map.rs"]
mod par;
// Not every test binary uses it.
#[allow(unused_imports)]
pub use par::{par_map, WORKERS};

/// The engines named in `BSPLIB_TEST_ENGINES` (comma-separated; CI's MPI
/// step sets `mpi`, its valgrind step `serial,threads`), else `threads`
/// and `processes`.
pub fn listed_engines() -> Vec<String> {
    match std::env::var("BSPLIB_TEST_ENGINES") {
        Ok(list) => list.split(',').map(|e| e.trim().to_owned()).collect(),
        Err(_) => vec!["threads".into(), "processes".into()],
    }
}

/// The engines to run on: those of [`listed_engines`] that `bsprun` has.
pub fn engines() -> Vec<String> {
    listed_engines()
        .into_iter()
        .filter(|e| ["threads", "processes", "mpi"].contains(&e.as_str()))
        .collect()
}

/// Whether an executable file `name` is in a directory of `PATH`.
pub fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(name).is_file()))
}

/// Whether this test binary runs under valgrind (CI's memcheck step): the
/// harness itself is then slow, so the campaigns are cut short.
pub fn under_valgrind() -> bool {
    std::env::var("LD_PRELOAD").is_ok_and(|v| v.contains("vgpreload"))
}

/// The number of trials: `name` from the environment, else `default`
/// (a tenth of it under valgrind).
pub fn trials(name: &str, default: u64) -> u64 {
    env_u64(
        name,
        if under_valgrind() {
            default / 10
        } else {
            default
        },
    )
}

/// A number from the environment, else `default`.
pub fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

/// Whether the environment variable `name` is set to something other
/// than `0` or the empty string.
pub fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The seed: `name` from the environment, else one from the clock.
pub fn seed(name: &str) -> u64 {
    let clock = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    env_u64(name, clock % 1_000_000_007)
}

/// splitmix64: small, seedable, good enough to pick test cases.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

pub fn c_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("c")
}

pub fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// Where Cargo built the libbsp this test links: beside this test binary
/// (`target/<profile>/deps`), fresh for this build, whatever an earlier
/// `cargo build` left beside `bspcc`.
pub fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent().expect("a directory").to_path_buf()
}

/// A copy of the libraries `libs` of [`lib_dir`] in `<tmpdir>/<name>/lib`,
/// made once per test binary (the first call's arguments hold): programs
/// linked against the copy cannot have it replaced under them by a
/// concurrent `cargo build` with other features.
pub fn lib_copy(name: &str, libs: &[&str]) -> PathBuf {
    static COPY: OnceLock<PathBuf> = OnceLock::new();
    COPY.get_or_init(|| {
        let dir = out_dir(&format!("{name}/lib"));
        for lib in libs {
            let built = lib_dir().join(lib);
            std::fs::copy(&built, dir.join(lib))
                .unwrap_or_else(|e| panic!("copying {}: {e}", built.display()));
        }
        dir
    })
    .clone()
}

/// `bspcc <C_FLAGS> [ASAN_FLAGS] file -o <out>/<stem>` with the libbsp of
/// [`lib_dir`]; panics if it fails.
pub fn build(file: &str, out: &str, asan: bool) -> PathBuf {
    let flags = [C_FLAGS, if asan { ASAN_FLAGS } else { &[] }].concat();
    try_build(file, out, &flags, &[], &lib_dir()).unwrap_or_else(|e| panic!("{e}"))
}

/// `bspcc <flags> file -o <tmpdir>/<out>/<stem>` with `env` and
/// `BSPLIB_LIBDIR=<libs>`, run in `tests/c` so that `__FILE__` is the bare
/// file name; the error says how bspcc failed.
pub fn try_build(
    file: &str,
    out: &str,
    flags: &[&str],
    env: &[(&str, &str)],
    libs: &Path,
) -> Result<PathBuf, String> {
    let exe = out_dir(out).join(file.trim_end_matches(".c"));
    let output = Command::new(BSPCC)
        .env("BSPLIB_LIBDIR", libs)
        .envs(env.iter().copied())
        .current_dir(c_dir())
        .args(flags)
        .arg(file)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| format!("cannot run bspcc: {e}"))?;
    if output.status.success() {
        Ok(exe)
    } else {
        Err(format!(
            "bspcc {} {file} failed ({}):\n{}{}",
            flags.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// What one run produced.
pub struct Outcome {
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    /// When `bsprun` (the program's process 0) was seen to have exited.
    pub ended: SystemTime,
    /// From the start of the run to its end.
    pub elapsed: Duration,
    /// A hang, processes left behind, or a problem of the hook.
    pub problems: Vec<String>,
}

impl Outcome {
    /// The problems of the run, if any, in one text.
    pub fn problem(&self) -> Option<String> {
        (!self.problems.is_empty()).then(|| self.problems.join("; "))
    }
}

/// `bsprun --engine <engine> -np <p> <exe> <args>` with `env`, to be run
/// by [`run_command`]. Cargo points LD_LIBRARY_PATH at target/<profile>,
/// where an older libbsp.so may lie: it is removed, so that the programs
/// load the one they were built against (bspcc's rpath).
pub fn bsprun(
    exe: &Path,
    engine: &str,
    p: usize,
    args: &[String],
    env: &[(&str, String)],
) -> Command {
    let mut cmd = Command::new(BSPRUN);
    cmd.env_remove("LD_LIBRARY_PATH")
        .args(["--engine", engine, "-np", &p.to_string()])
        .arg(exe)
        .args(args);
    if engine == "mpi" {
        // Each job its own session directory: Open MPI 4.1's `mpirun`
        // makes `/tmp/ompi.<host>.<uid>` when it starts and removes it when
        // it ends, and of two jobs racing there one fails in `orte_init`
        // ("A call to mkdir was unable to create the desired directory
        // ... File exists": seen once in CI, where these tests start jobs
        // in parallel). A short path: the directory holds Unix sockets.
        static JOBS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = JOBS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir()
            .join("bsplib-ompi")
            .join(format!("{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot make {}: {e}", dir.display()));
        cmd.env("OMPI_MCA_orte_tmpdir_base", dir);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// [`bsprun`] run by [`run_command`], stdin `/dev/null`.
pub fn run(
    exe: &Path,
    engine: &str,
    p: usize,
    args: &[String],
    env: &[(&str, String)],
    timeout: Duration,
    hook: impl FnMut(&Child, i32) -> Option<String>,
) -> Outcome {
    run_command(&mut bsprun(exe, engine, p, args, env), None, timeout, hook)
}

/// Runs `cmd` in a process group of its own (the group's id is the
/// child's pid), its stdin `stdin` (`/dev/null` if none), its stdout and
/// stderr captured; `hook(child, group)` is called every 2 ms while the
/// run lasts (it may return a problem). A run still going after `timeout`
/// is a hang: its group is killed. After the run, the group must be empty.
pub fn run_command(
    cmd: &mut Command,
    stdin: Option<&str>,
    timeout: Duration,
    mut hook: impl FnMut(&Child, i32) -> Option<String>,
) -> Outcome {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .process_group(0);
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", cmd.get_program()));
    let group = child.id() as i32;
    let (tx, rx) = mpsc::channel();
    let pipes: [Box<dyn Read + Send>; 2] = [
        Box::new(child.stdout.take().unwrap()),
        Box::new(child.stderr.take().unwrap()),
    ];
    for (i, mut pipe) in pipes.into_iter().enumerate() {
        let tx = tx.clone();
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            let _ = tx.send((i, bytes));
        });
    }
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let _ = pipe.write_all(text.as_bytes()); // the program may not read it
    }
    let deadline = start + timeout;
    let mut problems = Vec::new();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the command") {
            break Some(status);
        }
        if let Some(problem) = hook(&child, group) {
            problems.push(problem);
        }
        if Instant::now() >= deadline {
            problems.push(format!(
                "no exit after {timeout:?}: a hang (group killed); group was {:?}",
                group_members(group)
            ));
            kill_group(group);
            break child.wait().ok();
        }
        thread::sleep(Duration::from_millis(2));
    };
    let ended = SystemTime::now();
    let elapsed = start.elapsed();
    // Processes left behind: the group must empty (zombies aside) soon.
    let settle = Instant::now() + Duration::from_secs(2);
    loop {
        let left = group_members(group);
        if left.is_empty() {
            break;
        }
        if Instant::now() >= settle {
            problems.push(format!(
                "processes left behind in the group after the run (killed): {left:?}"
            ));
            kill_group(group);
            break;
        }
        thread::sleep(Duration::from_millis(5));
    }
    let mut output = [Vec::new(), Vec::new()];
    for _ in 0..2 {
        let (i, bytes) = match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(received) => received,
            Err(_) => {
                problems.push("stdout/stderr held open after the run (group killed)".into());
                kill_group(group);
                rx.recv_timeout(Duration::from_secs(10))
                    .unwrap_or((2, Vec::new()))
            }
        };
        if i < 2 {
            output[i] = bytes;
        }
    }
    let [stdout, stderr] = output.map(|b| String::from_utf8_lossy(&b).into_owned());
    Outcome {
        status,
        stdout,
        stderr,
        ended,
        elapsed,
        problems,
    }
}

/// A process of a group, from `/proc/<pid>/stat`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub pid: i32,
    pub ppid: i32,
    pub state: char,
}

/// The live (not zombie) processes whose process group is `group`.
pub fn group_members(group: i32) -> Vec<Member> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut v = Vec::new();
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...; comm may hold spaces and ')'.
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let (Some(state), Some(ppid), Some(pgrp)) = (fields.first(), fields.get(1), fields.get(2))
        else {
            continue;
        };
        if pgrp.parse::<i32>() == Ok(group) && *state != "Z" && *state != "X" {
            v.push(Member {
                pid,
                ppid: ppid.parse().unwrap_or(0),
                state: state.chars().next().unwrap_or('?'),
            });
        }
    }
    v
}

/// SIGKILL to every process of the group `group`.
pub fn kill_group(group: i32) {
    // SAFETY: kill(2) with a negative pid signals a process group; it has
    // no memory-safety preconditions.
    unsafe { libc::kill(-group, libc::SIGKILL) };
}

/// SIGKILL to the process `pid`.
pub fn kill_process(pid: i32) -> bool {
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe { libc::kill(pid, libc::SIGKILL) == 0 }
}

/// The names in `/dev/shm`.
pub fn shm_entries() -> BTreeSet<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Entries of `/dev/shm` that are new since `before` and that no living
/// process maps or holds open (so not another job's, in use): leaked.
pub fn shm_leaks(before: &BTreeSet<String>) -> Vec<String> {
    let new: Vec<String> = shm_entries().difference(before).cloned().collect();
    if new.is_empty() {
        return new;
    }
    let mut used = BTreeSet::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let dir = entry.path();
        if let Ok(maps) = std::fs::read_to_string(dir.join("maps")) {
            for name in &new {
                if maps.contains(&format!("/dev/shm/{name}")) {
                    used.insert(name.clone());
                }
            }
        }
        for fd in std::fs::read_dir(dir.join("fd"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                if let Some(name) = target.to_str().and_then(|t| t.strip_prefix("/dev/shm/")) {
                    used.insert(name.to_owned());
                }
            }
        }
    }
    new.into_iter().filter(|n| !used.contains(n)).collect()
}

pub fn describe(status: Option<ExitStatus>) -> String {
    match status {
        None => "unknown".into(),
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            _ => s.to_string(),
        },
    }
}

/// Whether `line` contains `needle` not followed by another digit (so that
/// "superstep 1" does not match "superstep 12").
pub fn has_number(line: &str, needle: &str) -> bool {
    line.match_indices(needle)
        .any(|(i, _)| !line[i + needle.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

/// The line (from 1) of the single `/* ERROR */` marker in `file` of
/// `tests/c`.
pub fn marker_line(file: &str) -> Result<usize, String> {
    let text = std::fs::read_to_string(c_dir().join(file)).map_err(|e| format!("{file}: {e}"))?;
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("/* ERROR */"))
        .map(|(i, _)| i + 1)
        .collect();
    match lines[..] {
        [line] => Ok(line),
        _ => Err(format!(
            "{file} must have exactly one /* ERROR */ marker, has {}",
            lines.len()
        )),
    }
}

/// `text` indented, its last 3000 bytes only if long.
pub fn indent(text: &str) -> String {
    indent_tail(text, 3000)
}

/// `text` indented, its last `max` bytes only if longer.
pub fn indent_tail(text: &str, max: usize) -> String {
    let start = text.len().saturating_sub(max);
    let start = (start..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let mut s: String = text[start..]
        .lines()
        .map(|l| format!("    | {l}\n"))
        .collect();
    if start > 0 {
        s.insert_str(0, "    | [...]\n");
    }
    s
}
