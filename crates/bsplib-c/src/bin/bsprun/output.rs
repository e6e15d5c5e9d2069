//! How `bsprun --engine mpi` runs `mpirun`, and what it does with its
//! standard output and error: each rank's lines put back together whole ([`tags`](super::tags),
//! `mpirun --tag-output`), labelled `[rank] ` with `--label`, and the
//! library's error kept as the job's last word ([`StderrFilter`]).

use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Command, ExitCode};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::tags::{Demux, Piece};

/// How long Open MPI's own reports are held back waiting for a `bsplib:`
/// line (which `mpirun` may forward after the `MPI_ABORT` banner that
/// followed it).
const MPI_NOISE_HOLD: Duration = Duration::from_secs(2);

/// How long the library's error line is held back for the ranks' output
/// still on its way, unless `mpirun` ends first (a job that does not end
/// still shows it).
const ERROR_HOLD: Duration = Duration::from_secs(10);

/// The child `mpirun` of [`run_mpirun`], for the signal forwarder.
static MPIRUN_PID: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Passes a termination signal on to `mpirun`, which ends the job.
extern "C" fn forward_signal(signal: libc::c_int) {
    let pid = MPIRUN_PID.load(std::sync::atomic::Ordering::Relaxed);
    if pid > 0 {
        // SAFETY: kill(2) is async-signal-safe and has no memory-safety
        // preconditions.
        unsafe { libc::kill(pid, signal) };
    }
}

/// Runs `mpirun` (the `mpi` engine) as a child rather than replacing this
/// process with it, to put each rank's lines back together (with their
/// labels if `label`) and keep the job's error report to one line: its
/// standard output and error pass through [`relay`] (its standard
/// output stays its own unless `tagged`: when the flags choose how it
/// writes, `own_output_flags` in `bsprun.rs`). Standard input is `mpirun`'s own; `SIGTERM`,
/// `SIGHUP`, `SIGINT` and `SIGQUIT` are passed on to it. Exits with
/// `mpirun`'s status (128 + signal if it was killed).
pub fn run_mpirun(mut command: Command, program: &OsStr, tagged: bool, label: bool) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    if tagged {
        command.stdout(std::process::Stdio::piped());
    }
    let mut child = match command.stderr(std::process::Stdio::piped()).spawn() {
        Ok(child) => child,
        Err(error) => {
            eprintln!(
                "bsprun: cannot run mpirun for {}: {error}",
                program.to_string_lossy()
            );
            return ExitCode::from(127);
        }
    };
    MPIRUN_PID.store(
        i32::try_from(child.id()).unwrap_or(0),
        std::sync::atomic::Ordering::Relaxed,
    );
    for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGQUIT] {
        let handler = forward_signal as extern "C" fn(libc::c_int);
        // SAFETY: installs a handler that only calls kill(2), which is
        // async-signal-safe.
        unsafe { libc::signal(signal, handler as libc::sighandler_t) };
    }
    if let Some(stderr) = child.stderr.take() {
        relay(child.stdout.take(), stderr, tagged, label);
    }
    let status = loop {
        match child.wait() {
            Ok(status) => break status,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => {
                eprintln!("bsprun: waiting for mpirun: {error}");
                return ExitCode::from(1);
            }
        }
    };
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// Writes all of `bytes` to descriptor `fd` (1 or 2) in as few `write`s as
/// the descriptor takes (one, for a line): a line is never cut into
/// pieces that something else could write between.
fn write_fd(fd: i32, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: writes from a live buffer to a descriptor of ours.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n > 0 {
            bytes = &bytes[n as usize..];
            continue;
        }
        match std::io::Error::last_os_error().kind() {
            std::io::ErrorKind::Interrupted if n < 0 => {}
            std::io::ErrorKind::WouldBlock if n < 0 => {
                let mut poll = libc::pollfd {
                    fd,
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: polls one live record.
                unsafe { libc::poll(&mut poll, 1, -1) };
            }
            _ => return,
        }
    }
}

/// `[rank] ` before a piece that starts a rank's line, when labelling.
fn labelled(label: bool, piece: &Piece) -> Vec<u8> {
    let mut out = Vec::with_capacity(piece.bytes.len() + 8);
    if let (true, true, Some(rank)) = (label, piece.starts_line, piece.rank) {
        out.extend_from_slice(format!("[{rank}] ").as_bytes());
    }
    out.extend_from_slice(&piece.bytes);
    out
}

/// Passes `mpirun`'s standard output (if piped: `None` when it is
/// `mpirun`'s own) and standard error on to ours until both end. `tagged`:
/// `mpirun` runs with `--tag-output`, whose tags are taken off here.
fn relay(
    stdout: Option<impl Read + Send + 'static>,
    stderr: impl Read + Send + 'static,
    tagged: bool,
    label: bool,
) {
    let (tx, rx) = mpsc::channel::<(usize, Option<Vec<u8>>)>();
    let mut open = 0;
    let readers: [(usize, Option<Box<dyn Read + Send>>); 2] = [
        (0, stdout.map(|s| Box::new(s) as Box<dyn Read + Send>)),
        (1, Some(Box::new(stderr))),
    ];
    for (stream, pipe) in readers {
        let Some(mut pipe) = pipe else { continue };
        open += 1;
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut buf = vec![0; 64 << 10];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if tx.send((stream, Some(buf[..n].to_vec()))).is_err() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = tx.send((stream, None));
        });
    }
    drop(tx);
    let mut demux = [Demux::new(tagged), Demux::new(tagged)];
    let mut filter = StderrFilter::default();
    let emit = |filter: &mut StderrFilter, stream: usize, piece: Piece| {
        if stream == 0 {
            write_fd(1, &labelled(label, &piece));
        } else {
            let out = labelled(label, &piece);
            filter.piece(&piece, out);
        }
    };
    while open > 0 {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok((stream, Some(bytes))) => {
                demux[stream].push(&bytes, &mut |p| emit(&mut filter, stream, p));
            }
            Ok((stream, None)) => {
                demux[stream].finish(&mut |p| emit(&mut filter, stream, p));
                open -= 1;
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        for (stream, demux) in demux.iter_mut().enumerate() {
            demux.prompt(&mut |p| emit(&mut filter, stream, p));
        }
        filter.tick();
    }
    filter.end();
}

/// `mpirun`'s standard error, piece by piece, so that the library's error
/// is the last word of a failed job:
///
/// - the first line starting with `bsplib:` (the error, printed by the rank
///   that found it) is held back until `mpirun`'s standard error ends (at
///   most [`ERROR_HOLD`]), then written: the ranks' own lines still on
///   their way come out before it (output is not lost when a job fails);
///   after it, the same error found by another rank and Open MPI's
///   reports of the job ending are dropped;
/// - Open MPI's own reports (blocks between lines of dashes, such as the
///   `MPI_ABORT` banner, and `[host:pid] ...` lines such as
///   `ORTE_ERROR_LOG`) are held back for [`MPI_NOISE_HOLD`], dropped if a
///   `bsplib:` line comes meanwhile, else copied late (a job that fails
///   without a library error keeps Open MPI's explanation);
/// - every other line is copied at once.
#[derive(Default)]
struct StderrFilter {
    reported: bool,
    /// The library's error line, held back, and since when.
    error: Option<(Vec<u8>, Instant)>,
    in_block: bool,
    held: Vec<u8>,
    held_since: Option<Instant>,
    /// Where the surviving processes were when mpirun ended the job, and
    /// mpirun's notice of a rank that died from a signal.
    places: Vec<String>,
    death: Option<(String, String)>,
}

impl StderrFilter {
    /// One piece (`out`: as it is to be written, label included).
    fn piece(&mut self, piece: &Piece, out: Vec<u8>) {
        let line = &piece.bytes[..];
        if let Some(place) = line.strip_prefix(b"bsplib-status: ") {
            self.places
                .push(String::from_utf8_lossy(place).trim_end().to_owned());
            return;
        }
        if let Some(found) = rank_death(line) {
            self.death.get_or_insert(found);
        }
        if self.reported {
            // A rank's own line still comes out; the same error found by
            // another rank, the progress view and mpirun's reports not.
            let library =
                line.starts_with(b"bsplib") || line.starts_with(b"\x1b[K") || line == b"\r";
            if piece.rank.is_some() && !library {
                write_fd(2, &out);
            }
            return;
        }
        let dashes = |l: &[u8]| l.len() > 20 && l.trim_ascii().iter().all(|&b| b == b'-');
        let tagged = |l: &[u8]| l.starts_with(b"[") && l.contains(&b']');
        // The progress view (`--progress`) draws `\r`-led lines `bsplib:
        // superstep ...` and erases them with `\x1b[K`, which the
        // library's error line may start with.
        let text = line.strip_prefix(b"\x1b[K").unwrap_or(line);
        if text.starts_with(b"bsplib:") && !text.starts_with(b"bsplib: superstep ") {
            self.error = Some((out, Instant::now()));
            self.reported = true;
            self.held.clear();
        } else if self.in_block || dashes(line) || tagged(line) {
            if self.held.is_empty() {
                self.held_since = Some(Instant::now());
            }
            if dashes(line) {
                self.in_block = !self.in_block;
            }
            self.held.extend_from_slice(&out);
        } else {
            write_fd(2, &out);
        }
    }

    /// Open MPI's reports held long enough without a `bsplib:` line go out,
    /// and the error line held [`ERROR_HOLD`].
    fn tick(&mut self) {
        if self
            .error
            .as_ref()
            .is_some_and(|(_, since)| since.elapsed() >= ERROR_HOLD)
        {
            if let Some((line, _)) = self.error.take() {
                write_fd(2, &line);
            }
        }
        if !self.held.is_empty()
            && !self.in_block
            && self
                .held_since
                .is_some_and(|t| t.elapsed() >= MPI_NOISE_HOLD)
        {
            write_fd(2, &std::mem::take(&mut self.held));
        }
    }

    /// The end of `mpirun`'s standard error.
    fn end(mut self) {
        if let Some((line, _)) = self.error.take() {
            write_fd(2, &line);
        }
        if self.reported {
            return;
        }
        write_fd(2, &self.held);
        // A rank killed by a signal no handler sees (SIGKILL): name it, with
        // the superstep the others show it was in, as the last word.
        if let Some((rank, signal)) = self.death {
            self.places.sort();
            let superstep = self
                .places
                .iter()
                .filter_map(|p| p.rsplit(' ').next()?.parse::<u64>().ok())
                .max();
            let at = superstep.map_or(String::new(), |s| format!(", superstep {s}"));
            let others = if self.places.is_empty() {
                String::new()
            } else {
                format!("; {}", self.places.join("; "))
            };
            write_fd(
                2,
                format!(
                    "bsplib: the SPMD function (process {rank}{at}): process {rank} was killed by signal {signal}{others}\n"
                )
                .as_bytes(),
            );
        }
    }
}

/// A pipe whose write end the program inherits, and with it every process
/// it starts (the `processes` engine's output relay among them): its end
/// says that they are all gone, and everything they wrote written.
pub struct Holders {
    read: OwnedFd,
    write: Option<OwnedFd>,
}

impl Holders {
    /// The pipe, its write end to be inherited by the next program spawned.
    pub fn new() -> Option<Holders> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into the live array.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return None;
        }
        // SAFETY: both were just made, and are owned here only; clearing
        // the write end's close-on-exec flag lets the program inherit it.
        unsafe {
            libc::fcntl(fds[1], libc::F_SETFD, 0);
            Some(Holders {
                read: OwnedFd::from_raw_fd(fds[0]),
                write: Some(OwnedFd::from_raw_fd(fds[1])),
            })
        }
    }

    /// The program was spawned: only it holds the write end now.
    pub fn spawned(&mut self) {
        self.write = None;
    }

    /// Waits until every holder is gone, at most `limit`.
    pub fn wait(&self, limit: Duration) {
        let end = Instant::now() + limit;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            let mut poll = libc::pollfd {
                fd: self.read.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: polls one live record.
            let n = unsafe { libc::poll(&mut poll, 1, left.as_millis() as i32 + 1) };
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            // Readable: the end of the pipe (nobody writes to it).
            if n != 0 {
                return;
            }
        }
    }
}

/// From mpirun's notice "process rank N with PID ... exited on signal S
/// (Name)": N and "S (Name)".
fn rank_death(line: &[u8]) -> Option<(String, String)> {
    let text = String::from_utf8_lossy(line);
    let rank = text.split("process rank ").nth(1)?.split(' ').next()?;
    let signal = text
        .split("exited on signal ")
        .nth(1)?
        .trim_end()
        .trim_end_matches('.');
    rank.parse::<u64>().ok()?;
    Some((rank.to_owned(), signal.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_go_before_lines_of_ranks_only() {
        let piece = |rank, starts_line| Piece {
            rank,
            starts_line,
            bytes: b"x\n".to_vec(),
        };
        assert_eq!(labelled(true, &piece(Some(3), true)), b"[3] x\n");
        assert_eq!(labelled(true, &piece(Some(3), false)), b"x\n");
        assert_eq!(labelled(true, &piece(None, true)), b"x\n");
        assert_eq!(labelled(false, &piece(Some(3), true)), b"x\n");
    }

    #[test]
    fn a_rank_death_is_read_from_mpiruns_notice() {
        let notice = b"mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9 (Killed).\n";
        assert_eq!(
            rank_death(notice),
            Some(("1".to_owned(), "9 (Killed)".to_owned()))
        );
        assert_eq!(rank_death(b"process rank x exited on signal 9\n"), None);
    }
}
