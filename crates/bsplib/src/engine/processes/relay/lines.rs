//! Whole lines out of one process's stream of bytes: what the relay
//! (`mod.rs`) writes for each pipe it reads. Pure logic, no descriptor.

use std::time::Instant;

/// A partial line longer than this is written as it is, without waiting
/// for its newline (output with no newline at all, such as binary data,
/// would otherwise be held without bound).
pub(crate) const LONGEST: usize = 64 << 10;

/// One source (a process's standard output, or its standard error): the
/// line it is in the middle of, and its label.
pub(crate) struct Lines {
    /// `[pid] ` when the run labels its lines, else empty.
    label: Vec<u8>,
    /// The bytes of the line not finished yet.
    pending: Vec<u8>,
    /// The next byte written starts a line (so its label is due): false
    /// after a partial line was written as it was.
    at_start: bool,
    /// When `pending` got its first byte.
    since: Option<Instant>,
}

impl Lines {
    /// A source of process `pid`, labelled with `[pid] ` when `label`.
    pub(crate) fn new(pid: usize, label: bool) -> Self {
        Lines {
            label: if label {
                format!("[{pid}] ").into_bytes()
            } else {
                Vec::new()
            },
            pending: Vec::new(),
            at_start: true,
            since: None,
        }
    }

    /// Takes `bytes`, the next bytes of the source, and appends to `out`
    /// every line they complete (each with its label), keeping the
    /// unfinished rest; a rest longer than [`LONGEST`] goes out as it is.
    pub(crate) fn push(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        match bytes.iter().rposition(|&b| b == b'\n') {
            None => {
                if !bytes.is_empty() && self.pending.is_empty() {
                    self.since = Some(Instant::now());
                }
                self.pending.extend_from_slice(bytes);
                if self.pending.len() > LONGEST {
                    self.flush(out);
                }
            }
            Some(last) => {
                let (done, rest) = bytes.split_at(last + 1);
                if self.label.is_empty() {
                    out.append(&mut self.pending);
                    out.extend_from_slice(done);
                } else {
                    // The pending bytes (no newline) start the first line.
                    for (i, line) in done.split_inclusive(|&b| b == b'\n').enumerate() {
                        if self.at_start {
                            out.extend_from_slice(&self.label);
                        }
                        if i == 0 {
                            out.append(&mut self.pending);
                        }
                        out.extend_from_slice(line);
                        self.at_start = true;
                    }
                }
                self.at_start = true;
                self.pending.extend_from_slice(rest);
                self.since = (!rest.is_empty()).then(Instant::now);
                if self.pending.len() > LONGEST {
                    self.flush(out);
                }
            }
        }
    }

    /// Appends the unfinished line to `out` as it is (its source closed, or
    /// it waited long enough); what follows it continues that line.
    pub(crate) fn flush(&mut self, out: &mut Vec<u8>) {
        if self.pending.is_empty() {
            return;
        }
        if self.at_start {
            out.extend_from_slice(&self.label);
        }
        out.append(&mut self.pending);
        self.at_start = false;
        self.since = None;
    }

    /// Since when an unfinished line waits, if one does.
    pub(crate) fn waiting_since(&self) -> Option<Instant> {
        self.since
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `pieces` pushed one after the other give, then the flush.
    fn run(label: bool, pieces: &[&[u8]]) -> (Vec<Vec<u8>>, Vec<u8>) {
        let mut lines = Lines::new(3, label);
        let mut writes = Vec::new();
        for piece in pieces {
            let mut out = Vec::new();
            lines.push(piece, &mut out);
            writes.push(out);
        }
        let mut last = Vec::new();
        lines.flush(&mut last);
        (writes, last)
    }

    #[test]
    fn only_whole_lines_are_written() {
        let (writes, last) = run(false, &[b"ab", b"c\nde", b"f\ng\nh", b"", b"\n"]);
        assert_eq!(writes, [&b""[..], b"abc\n", b"def\ng\n", b"", b"h\n"]);
        assert!(last.is_empty());
        let (_, last) = run(false, &[b"x\nend"]);
        assert_eq!(last, b"end");
    }

    #[test]
    fn every_line_is_labelled_once() {
        let (writes, last) = run(true, &[b"ab", b"c\n\nde", b"f\ng\nh"]);
        assert_eq!(writes, [&b""[..], b"[3] abc\n[3] \n", b"[3] def\n[3] g\n"]);
        assert_eq!(last, b"[3] h");
    }

    #[test]
    fn a_line_written_early_is_continued_without_label() {
        let mut lines = Lines::new(0, true);
        let mut out = Vec::new();
        lines.push(b"How many? ", &mut out);
        assert!(out.is_empty() && lines.waiting_since().is_some());
        lines.flush(&mut out);
        assert_eq!(out, b"[0] How many? ");
        assert!(lines.waiting_since().is_none());
        out.clear();
        lines.push(b"4\nnext\n", &mut out);
        assert_eq!(out, b"4\n[0] next\n");
    }

    #[test]
    fn a_line_too_long_goes_out_in_pieces() {
        let mut lines = Lines::new(1, false);
        let mut out = Vec::new();
        let long = vec![b'x'; LONGEST + 1];
        lines.push(&long, &mut out);
        assert_eq!(out.len(), LONGEST + 1);
        out.clear();
        lines.push(b"y\n", &mut out);
        assert_eq!(out, b"y\n");
    }

    #[test]
    fn any_cut_gives_the_same_lines() {
        let text: Vec<u8> = (0..200)
            .flat_map(|i| format!("line {i} {}\n", "x".repeat(i % 37)).into_bytes())
            .collect();
        let mut labelled = Vec::new();
        for line in text.split_inclusive(|&b| b == b'\n') {
            labelled.extend_from_slice(b"[3] ");
            labelled.extend_from_slice(line);
        }
        for step in [1, 2, 7, 64, 4096] {
            for (label, want) in [(false, &text), (true, &labelled)] {
                let mut lines = Lines::new(3, label);
                let mut out = Vec::new();
                for piece in text.chunks(step) {
                    let before = out.len();
                    lines.push(piece, &mut out);
                    // Every write ends a line.
                    assert!(out.len() == before || out.ends_with(b"\n"));
                }
                lines.flush(&mut out);
                assert_eq!(&out, want, "step {step}, label {label}");
            }
        }
    }
}
