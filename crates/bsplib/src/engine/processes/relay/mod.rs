//! The output relay of a `processes` run (`../README.md`, "Output"):
//! every process's standard output and standard error are pipes of their
//! own, which one *relay* process reads, writing each complete line to the
//! run's own standard output or error in one `write`, labelled `[pid] `
//! when `BSPLIB_LABEL` asks. Several processes printing at once then never
//! cut each other's lines: a C process's output to a file goes in 4 KiB
//! pieces cut anywhere, and two processes' pieces used to interleave.
//!
//! The relay is a process rather than a thread of process 0 so that
//! nothing is lost when process 0 dies: whatever ends it (a crash, a
//! signal, `_exit` from its monitor), the relay reads every pipe until its
//! writers are gone (the forked processes die with process 0), writes the
//! rest and exits. Process 0 ends it explicitly only when it goes on after
//! the run ([`Relay::finish`]).

mod lines;

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use lines::Lines;

/// A partial line of process 0 that waited this long is written as it is:
/// a prompt shows before process 0 reads its input.
const PROMPT: Duration = Duration::from_millis(250);

/// At the end, at most this much more is read from one pipe (a program's
/// own helper process that holds a pipe and keeps writing must not keep
/// the run from ending).
const DRAIN: usize = 16 << 20;

/// Process 0's original standard error while its own is relayed (else
/// -1): the progress view draws there, in place, rather than through the
/// relay, which would hold its lines (they end with a carriage return).
static SAVED_STDERR: AtomicI32 = AtomicI32::new(-1);

/// Where this OS process's standard error really goes: the descriptor to
/// draw on the terminal with.
pub(crate) fn original_stderr() -> RawFd {
    match SAVED_STDERR.load(Ordering::Relaxed) {
        fd if fd >= 0 => fd,
        _ => 2,
    }
}

/// `BSPLIB_LABEL` set (and not empty or `0`): every line is labelled with
/// its process.
fn label_from_env() -> bool {
    std::env::var("BSPLIB_LABEL").is_ok_and(|v| !matches!(v.trim(), "" | "0"))
}

/// `BSPLIB_RELAY=0`: no relay (every process writes to the run's standard
/// output and error itself, as before; lines may be cut).
fn off_by_env() -> bool {
    std::env::var("BSPLIB_RELAY").is_ok_and(|v| v.trim() == "0")
}

/// The messages of process 0 to the relay (one per `SOCK_SEQPACKET`
/// packet: two words, `[kind][pid]`; `ADD` carries the read ends of the
/// pid's standard output and error).
const ADD: u64 = 1;
const END: u64 = 2;

/// Process 0's side of a run's relay.
pub(crate) struct Relay {
    /// The relay process.
    pid: libc::pid_t,
    control: Option<OwnedFd>,
    /// Process 0's own standard output and error, while they are relayed.
    saved: Option<[OwnedFd; 2]>,
    /// The run's standard output is a terminal: a relayed process's C
    /// standard output is made line-buffered, as it would have been.
    tty: bool,
}

/// The write ends of one process's two pipes.
pub(crate) struct Ends([OwnedFd; 2]);

fn os_error(what: &str) -> String {
    format!("output relay: {what}: {}", std::io::Error::last_os_error())
}

impl Relay {
    /// Starts the relay of a run of `nprocs` processes, if it has one: a
    /// run of one process has none (nothing to interleave with) unless its
    /// lines are labelled; `BSPLIB_RELAY=0` turns it off. Called before
    /// any process is forked, by process 0 with its own standard output and
    /// error still the run's.
    ///
    /// The relay holds two descriptors per process: a limit that does not
    /// allow them means no relay, or, when labels were asked for, an error.
    pub(crate) fn start(nprocs: usize) -> Result<Option<Relay>, String> {
        let label = label_from_env();
        if off_by_env() || (nprocs < 2 && !label) {
            return Ok(None);
        }
        let need = 2 * nprocs as u64 + 64;
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the live struct it is given.
        let known = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
        if known && limit.rlim_max != libc::RLIM_INFINITY && limit.rlim_max < need {
            if label {
                return Err(format!(
                    "BSPLIB_LABEL: labelling the output of {nprocs} processes takes {need} \
                     file descriptors in one process, and their hard limit is {} (ulimit -Hn)",
                    limit.rlim_max
                ));
            }
            return Ok(None);
        }
        let mut pair = [0; 2];
        // SAFETY: socketpair writes two descriptors into the live array.
        let made = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                0,
                pair.as_mut_ptr(),
            )
        };
        if made != 0 {
            return Err(os_error("socketpair"));
        }
        // SAFETY: both descriptors were just made, and are owned here only.
        let (ours, theirs) =
            unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
        // SAFETY: isatty has no preconditions.
        let tty = unsafe { libc::isatty(1) } == 1;
        // SAFETY: `fork` has no memory-safety preconditions; the child
        // only relays (reads, writes, epoll, the heap, which glibc makes
        // safe after a fork) and ends with `_exit`, never returning here.
        match unsafe { libc::fork() } {
            0 => {
                drop(ours);
                serve(theirs, label)
            }
            -1 => Err(os_error("fork")),
            pid => Ok(Some(Relay {
                pid,
                control: Some(ours),
                saved: None,
                tty,
            })),
        }
    }

    /// Process 0: its own standard output and error into pipes of the
    /// relay, the originals kept to put back at the end.
    pub(crate) fn redirect_self(&mut self) -> Result<(), String> {
        let save = |fd: RawFd| {
            // SAFETY: duplicates a descriptor of this process.
            let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
            if copy < 0 {
                return Err(os_error("saving standard output"));
            }
            // SAFETY: the copy was just made, and is owned here only.
            Ok(unsafe { OwnedFd::from_raw_fd(copy) })
        };
        let saved = [save(1)?, save(2)?];
        let ends = self.pipes(0)?;
        SAVED_STDERR.store(saved[1].as_raw_fd(), Ordering::Relaxed);
        self.saved = Some(saved);
        ends.install(self.tty);
        Ok(())
    }

    /// Two pipes for process `pid`: their read ends go to the relay, their
    /// write ends are returned (for [`Ends::install`] in the process).
    pub(crate) fn pipes(&self, pid: usize) -> Result<Ends, String> {
        let pipe = || {
            let mut fds = [0; 2];
            // SAFETY: pipe2 writes two descriptors into the live array.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
                return Err(os_error("pipe"));
            }
            // SAFETY: both were just made, and are owned here only.
            Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
        };
        let (out_r, out_w) = pipe()?;
        let (err_r, err_w) = pipe()?;
        let control = self.control.as_ref().ok_or("output relay: ended")?;
        send(
            control,
            ADD,
            pid as u64,
            &[out_r.as_raw_fd(), err_r.as_raw_fd()],
        )
        .map_err(|e| format!("output relay: sending the pipes of process {pid}: {e}"))?;
        Ok(Ends([out_w, err_w]))
    }

    /// Whether the relay makes each process's C standard output
    /// line-buffered (the run's is a terminal).
    pub(crate) fn tty(&self) -> bool {
        self.tty
    }

    /// A forked process: lets go of process 0's side of the relay (its
    /// copies of the socket and of the original descriptors), ending
    /// nothing.
    pub(crate) fn leave_in_child(mut self) {
        SAVED_STDERR.store(-1, Ordering::Relaxed);
        self.control = None;
        self.saved = None;
        std::mem::forget(self);
    }

    /// Process 0, once every other process has exited: writes what its own
    /// output buffers hold (C's, and Rust's when `rust` is set: not from a
    /// thread that may find another holding its lock), puts its standard
    /// output and error back, and waits until the relay has written
    /// everything and exited. Output after this goes where it went before
    /// the run.
    pub(crate) fn finish(mut self, rust: bool) {
        self.end(rust);
    }

    fn end(&mut self, rust: bool) {
        if rust {
            let _ = std::io::Write::flush(&mut std::io::stdout());
        }
        // SAFETY: flushing every C stdio stream has no preconditions.
        unsafe { libc::fflush(std::ptr::null_mut()) };
        if let Some([out, err]) = self.saved.take() {
            // SAFETY: puts copies of this process's own descriptors back
            // on 1 and 2 (closing the pipes' write ends there).
            unsafe {
                libc::dup2(out.as_raw_fd(), 1);
                libc::dup2(err.as_raw_fd(), 2);
            }
            SAVED_STDERR.store(-1, Ordering::Relaxed);
        }
        if let Some(control) = self.control.take() {
            // A relay that is gone already has nothing to write.
            let _ = send(&control, END, 0, &[]);
        }
        loop {
            let mut status = 0;
            // SAFETY: waits for our own child; `status` is a live int.
            let r = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if r >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break;
            }
        }
    }
}

impl Drop for Relay {
    /// A run that ends early (its start failed) ends its relay too.
    fn drop(&mut self) {
        if self.control.is_some() {
            self.end(true);
        }
    }
}

impl Ends {
    /// Makes the pipes this process's standard output and error (in
    /// process 0 after saving its own, in a forked process at once), C's
    /// standard output line-buffered when `tty`.
    pub(crate) fn install(self, tty: bool) {
        let [out, err] = &self.0;
        // SAFETY: duplicates descriptors of this process onto 1 and 2.
        unsafe {
            libc::dup2(out.as_raw_fd(), 1);
            libc::dup2(err.as_raw_fd(), 2);
        }
        if tty {
            // SAFETY: glibc's `stdout`, a valid stream for the life of the
            // program; `setvbuf` with a null buffer only sets the mode.
            unsafe { libc::setvbuf(c_stdout(), std::ptr::null_mut(), libc::_IOLBF, 0) };
        }
    }
}

extern "C" {
    /// glibc's standard output stream.
    #[link_name = "stdout"]
    static C_STDOUT: *mut libc::FILE;
}

fn c_stdout() -> *mut libc::FILE {
    // SAFETY: glibc initialises `stdout` before `main`; it is only read.
    unsafe { C_STDOUT }
}

/// One message `[kind][pid]` on the relay's socket, with `fds`.
fn send(control: &OwnedFd, kind: u64, pid: u64, fds: &[RawFd]) -> std::io::Result<()> {
    let words = [kind, pid];
    let mut iov = libc::iovec {
        iov_base: words.as_ptr() as *mut libc::c_void,
        iov_len: std::mem::size_of_val(&words),
    };
    let mut space = [0u64; 8];
    // SAFETY: an all-zero msghdr is valid; the pointers set below are to
    // live locals that outlive the call; the control message is built
    // with the CMSG macros inside `space` (64 bytes, enough for two
    // descriptors).
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if !fds.is_empty() {
            let bytes = std::mem::size_of_val(fds) as u32;
            msg.msg_control = space.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(bytes) as usize;
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(bytes) as usize;
            std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(cmsg).cast(), fds.len());
        }
        if libc::sendmsg(control.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// What the relay received on its socket.
enum Message {
    Add(u64, Vec<OwnedFd>),
    End,
    /// Process 0 is gone (its end of the socket closed).
    Closed,
    /// Nothing usable (interrupted, or a malformed packet).
    Nothing,
}

/// One message from process 0.
fn receive(control: &OwnedFd) -> Message {
    let mut words = [0u64; 2];
    let mut iov = libc::iovec {
        iov_base: words.as_mut_ptr().cast(),
        iov_len: std::mem::size_of_val(&words),
    };
    let mut space = [0u64; 8];
    // SAFETY: as in `send`; the kernel writes at most `msg_controllen`
    // bytes of control data into `space`, and the descriptors it carries
    // are new ones of this process (owned here from now on).
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = space.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&space);
        let n = libc::recvmsg(control.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
        if n == 0 {
            return Message::Closed;
        }
        if n < 0 {
            return match std::io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR | libc::EAGAIN) => Message::Nothing,
                _ => Message::Closed,
            };
        }
        let mut fds = Vec::new();
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
                let count =
                    ((*cmsg).cmsg_len - libc::CMSG_LEN(0) as usize) / std::mem::size_of::<RawFd>();
                for i in 0..count {
                    fds.push(OwnedFd::from_raw_fd(data.add(i).read_unaligned()));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
        match words {
            [ADD, pid] if n as usize == std::mem::size_of_val(&words) && fds.len() == 2 => {
                Message::Add(pid, fds)
            }
            [END, _] => Message::End,
            _ => Message::Nothing,
        }
    }
}

/// The relay process: never returns.
fn serve(control: OwnedFd, label: bool) -> ! {
    // SAFETY: prctl(PR_SET_NAME) names this thread (for `ps`); the
    // signals are set to be ignored: Ctrl-C or a SIGTERM to the whole
    // process group ends the processes, whose pipes the relay then reads
    // to the end, and a write to a closed pipe is an error to handle.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, c"bsp-relay".as_ptr());
        for signal in [
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGPIPE,
        ] {
            libc::signal(signal, libc::SIG_IGN);
        }
        // Two descriptors per process: as many as the hard limit allows.
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
    let relayed = std::panic::catch_unwind(AssertUnwindSafe(|| {
        if let Some(mut server) = Server::new(control, label) {
            server.run();
        }
    }));
    // SAFETY: ends the relay process without running anything of the
    // program it was forked from.
    unsafe { libc::_exit(i32::from(relayed.is_err())) }
}

/// One pipe the relay reads.
struct Source {
    pid: u64,
    /// 0: standard output, 1: standard error.
    stream: usize,
    /// `None` once closed.
    fd: Option<OwnedFd>,
    lines: Lines,
}

/// The epoll token of the socket.
const CONTROL: u64 = u64::MAX;

struct Server {
    epoll: OwnedFd,
    control: Option<OwnedFd>,
    sources: Vec<Source>,
    label: bool,
    /// Destinations (1, 2) that failed: their output is dropped. When
    /// their reader went away (`EPIPE`), their sources are closed too, so
    /// that the writers see the error they would have seen (`SIGPIPE`).
    dead: [bool; 2],
    buf: Vec<u8>,
    out: Vec<u8>,
}

impl Server {
    fn new(control: OwnedFd, label: bool) -> Option<Self> {
        // SAFETY: makes a new epoll descriptor, owned here.
        let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epoll < 0 {
            return None;
        }
        // SAFETY: just made, owned here only.
        let epoll = unsafe { OwnedFd::from_raw_fd(epoll) };
        let server = Server {
            epoll,
            control: Some(control),
            sources: Vec::new(),
            label,
            dead: [false; 2],
            buf: vec![0; 64 << 10],
            out: Vec::new(),
        };
        server.watch(server.control.as_ref()?.as_raw_fd(), CONTROL);
        Some(server)
    }

    fn watch(&self, fd: RawFd, token: u64) {
        let mut event = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: registers a descriptor of this process with the live
        // event record (copied by the kernel).
        unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut event) };
    }

    fn open(&self) -> bool {
        self.sources.iter().any(|s| s.fd.is_some())
    }

    /// Relays until process 0 says the run ended (then reads what is left)
    /// or, if process 0 is gone, until every pipe is closed.
    fn run(&mut self) {
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 64];
        while self.control.is_some() || self.open() {
            let timeout = self.prompt_timeout();
            // SAFETY: waits into the live array of `events.len()` records.
            let n = unsafe {
                libc::epoll_wait(
                    self.epoll.as_raw_fd(),
                    events.as_mut_ptr(),
                    events.len() as i32,
                    timeout,
                )
            };
            if n < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                break;
            }
            for event in &events[..n as usize] {
                let token = event.u64;
                if token == CONTROL {
                    if self.message() {
                        self.drain();
                        return;
                    }
                } else if let Some(i) = usize::try_from(token)
                    .ok()
                    .filter(|&i| i < self.sources.len())
                {
                    self.read(i, usize::MAX);
                }
            }
            self.prompts();
        }
        self.drain();
    }

    /// Takes one message; true at the end of the run.
    fn message(&mut self) -> bool {
        let Some(control) = &self.control else {
            return false;
        };
        match receive(control) {
            Message::Add(pid, fds) => {
                for (stream, fd) in fds.into_iter().enumerate() {
                    let token = self.sources.len() as u64;
                    self.watch(fd.as_raw_fd(), token);
                    self.sources.push(Source {
                        pid,
                        stream,
                        fd: Some(fd),
                        lines: Lines::new(pid as usize, self.label),
                    });
                }
                false
            }
            Message::End => true,
            Message::Closed => {
                // Process 0 is gone: its processes die with it, and the
                // pipes close; what they wrote is still written.
                self.control = None;
                false
            }
            Message::Nothing => false,
        }
    }

    /// Reads once from source `i` (at most `budget` bytes), writing the
    /// lines completed; at the end of the pipe, its last partial line too.
    /// Returns the bytes read (0 at the end or when nothing was there).
    fn read(&mut self, i: usize, budget: usize) -> usize {
        let Some(fd) = self.sources[i].fd.as_ref() else {
            return 0;
        };
        let want = self.buf.len().min(budget);
        // SAFETY: reads into the live buffer, at most its length.
        let n = unsafe { libc::read(fd.as_raw_fd(), self.buf.as_mut_ptr().cast(), want) };
        let source = &mut self.sources[i];
        if n > 0 {
            source.lines.push(&self.buf[..n as usize], &mut self.out);
        } else if n == 0
            || !matches!(
                std::io::Error::last_os_error().raw_os_error(),
                Some(libc::EINTR | libc::EAGAIN)
            )
        {
            source.lines.flush(&mut self.out);
            source.fd = None;
        }
        let stream = source.stream;
        self.emit(stream);
        n.max(0) as usize
    }

    /// Writes `out` to the destination of `stream`, whole.
    fn emit(&mut self, stream: usize) {
        if self.out.is_empty() {
            return;
        }
        if !self.dead[stream] {
            if let Err(e) = write_all(1 + stream as RawFd, &self.out) {
                self.dead[stream] = true;
                if e == libc::EPIPE {
                    for s in self.sources.iter_mut().filter(|s| s.stream == stream) {
                        s.fd = None;
                    }
                }
            }
        }
        self.out.clear();
    }

    /// Process 0's partial lines that waited [`PROMPT`] go out as they are.
    fn prompts(&mut self) {
        for i in 0..self.sources.len() {
            let s = &mut self.sources[i];
            if s.pid == 0
                && s.lines
                    .waiting_since()
                    .is_some_and(|t| t.elapsed() >= PROMPT)
            {
                s.lines.flush(&mut self.out);
                let stream = s.stream;
                self.emit(stream);
            }
        }
    }

    /// Milliseconds until a partial line of process 0 is due (-1: none).
    fn prompt_timeout(&self) -> i32 {
        let now = Instant::now();
        self.sources
            .iter()
            .filter(|s| s.pid == 0 && s.fd.is_some())
            .filter_map(|s| s.lines.waiting_since())
            .map(|t| (t + PROMPT).saturating_duration_since(now).as_millis() as i32 + 1)
            .min()
            .unwrap_or(-1)
    }

    /// The end of the run: whatever is in the pipes, then every partial
    /// line, goes out.
    fn drain(&mut self) {
        for i in 0..self.sources.len() {
            if let Some(fd) = &self.sources[i].fd {
                // SAFETY: sets a flag of a descriptor of this process.
                unsafe {
                    let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
                    libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
                }
            }
            let mut left = DRAIN;
            while left > 0 && self.sources[i].fd.is_some() {
                let n = self.read(i, left);
                if n == 0 {
                    break;
                }
                left -= n;
            }
            self.sources[i].lines.flush(&mut self.out);
            let stream = self.sources[i].stream;
            self.emit(stream);
            self.sources[i].fd = None;
        }
    }
}

/// Writes all of `bytes` to `fd` (retrying short writes, and waiting
/// when a non-blocking destination is full); the error number on an
/// error.
fn write_all(fd: RawFd, mut bytes: &[u8]) -> Result<(), i32> {
    while !bytes.is_empty() {
        // SAFETY: writes from a live buffer to a descriptor.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n > 0 {
            bytes = &bytes[n as usize..];
            continue;
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) if n < 0 => {}
            Some(libc::EAGAIN) if n < 0 => {
                let mut poll = libc::pollfd {
                    fd,
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: polls one live record.
                unsafe { libc::poll(&mut poll, 1, -1) };
            }
            Some(e) if n < 0 => return Err(e),
            _ => return Err(libc::EIO),
        }
    }
    Ok(())
}
