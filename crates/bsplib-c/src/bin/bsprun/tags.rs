//! The `mpi` engine's output in whole lines (issue 26).
//!
//! `mpirun` forwards each rank's output in the pieces its daemons happen
//! to read, cut anywhere, and pieces of different ranks interleave: a
//! program printing 20,000 lines per rank had 100 to 400 lines cut per run
//! on one host, 4 to 80 across two. No writer on the rank's side can
//! prevent it (standard output is a pseudo-terminal there, read in
//! pieces by the daemon). So `bsprun` runs `mpirun --tag-output`, which
//! starts every piece, and every line within one, with the rank's tag
//! `[job,rank]<stdout>:` (or `<stderr>:`, `<stddiag>:`), and puts each
//! rank's lines back together here ([`Demux`]): a line is written once it
//! is whole, with `[rank] ` before it when `--label` asks. Text without a
//! tag at the start of a line is `mpirun`'s own. A tag is recognised
//! anywhere, so a rank that prints something of the exact form of a tag
//! is misread (it never does by accident).
//!
//! A piece of a rank that ends without a newline has no end mark: text of
//! `mpirun`'s own that follows it at once looks like its continuation.
//! `mpirun`'s reports at the end of a failed job come in blocks between
//! lines of 74 dashes (Open MPI's help messages), so a rank's line that
//! ends with exactly such a line is taken apart there (a rank printing
//! text and 74 dashes on one line is misread).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// A partial line of rank 0 that waited this long is written as it is:
/// a prompt shows before rank 0 reads its input.
pub const PROMPT: Duration = Duration::from_millis(250);

/// A partial line longer than this is written without waiting for its
/// end.
const LONGEST: usize = 64 << 10;

/// The longest tag looked for: `[` job `,` rank `]<stddiag>:`.
const LONGEST_TAG: usize = 40;

/// The line around Open MPI's help messages: 74 dashes.
const RULE: &[u8; 74] =
    b"--------------------------------------------------------------------------";

/// Where `line` (ending with a newline) ends with one of Open MPI's
/// [`RULE`]s after other text: the length of that text.
fn rule_after_text(line: &[u8]) -> Option<usize> {
    let text = line.len().checked_sub(RULE.len() + 1)?;
    (text > 0 && line[text - 1] != b'-' && line[text..].starts_with(RULE) && line.ends_with(b"\n"))
        .then_some(text)
}

/// A piece of output to write: a whole line (ending with `\n`), a piece
/// ending with `\r` (the progress view redraws its line after one), or,
/// at the end or for a prompt, what there is.
#[derive(Debug, PartialEq, Eq)]
pub struct Piece {
    /// The rank it comes from; `None`: `mpirun` itself.
    pub rank: Option<u32>,
    /// It starts a line (a label goes before it).
    pub starts_line: bool,
    pub bytes: Vec<u8>,
}

/// What a tag at the start of `bytes` is.
enum Tag {
    /// A whole tag of `len` bytes, of `rank`.
    Is(usize, u32),
    /// Not a tag.
    Not,
    /// The start of one, cut short: more bytes will tell.
    Short,
}

fn tag(bytes: &[u8]) -> Tag {
    let mut i = 1; // bytes[0] is '['
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < bytes.len() && bytes[*i].is_ascii_digit() && *i - start < 10 {
            *i += 1;
        }
        (start, *i)
    };
    let (_, end) = digits(&mut i);
    if end == bytes.len() {
        return Tag::Short;
    }
    if end == 1 || bytes[i] != b',' {
        return Tag::Not;
    }
    i += 1;
    let (start, end) = digits(&mut i);
    if end == bytes.len() {
        return Tag::Short;
    }
    let Some(rank) = std::str::from_utf8(&bytes[start..end])
        .ok()
        .and_then(|r| r.parse::<u32>().ok())
    else {
        return Tag::Not;
    };
    if bytes[i] != b']' {
        return Tag::Not;
    }
    i += 1;
    for stream in [&b"<stdout>:"[..], b"<stderr>:", b"<stddiag>:"] {
        let have = &bytes[i..];
        if have.starts_with(stream) {
            return Tag::Is(i + stream.len(), rank);
        }
        if stream.starts_with(have) {
            return Tag::Short;
        }
    }
    Tag::Not
}

/// One source's line in progress.
#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    /// The next piece starts a line (false after a `\r`, or after a
    /// partial line written early).
    mid_line: bool,
    since: Option<Instant>,
}

impl Pending {
    fn take(&mut self, rank: Option<u32>) -> Piece {
        let bytes = std::mem::take(&mut self.bytes);
        let piece = Piece {
            rank,
            starts_line: !self.mid_line,
            bytes,
        };
        self.mid_line = !piece.bytes.ends_with(b"\n");
        self.since = None;
        piece
    }
}

/// One of `mpirun`'s output streams, tagged, split back into each rank's
/// lines.
pub struct Demux {
    /// The stream has tags (else it is passed on in pieces as it is).
    tagged: bool,
    /// Bytes not parsed yet (a tag cut short by the end of a read).
    buf: Vec<u8>,
    /// The source of the text being read: `Some(rank)` after its tag,
    /// until the end of its line; `None` (`mpirun`'s own) else.
    current: Option<u32>,
    pending: BTreeMap<Option<u32>, Pending>,
}

impl Demux {
    /// A stream with tags to take off (`tagged`), or without.
    pub fn new(tagged: bool) -> Self {
        Demux {
            tagged,
            buf: Vec::new(),
            current: None,
            pending: BTreeMap::new(),
        }
    }

    /// Takes the next bytes of the stream; every piece they complete goes
    /// to `emit`, in order.
    pub fn push(&mut self, bytes: &[u8], emit: &mut impl FnMut(Piece)) {
        self.buf.extend_from_slice(bytes);
        let buf = std::mem::take(&mut self.buf);
        let used = self.parse(&buf, false, emit);
        self.buf = buf[used..].to_vec();
    }

    /// The end of the stream: the rest, and every partial line.
    pub fn finish(&mut self, emit: &mut impl FnMut(Piece)) {
        let buf = std::mem::take(&mut self.buf);
        self.parse(&buf, true, emit);
        for (&rank, pending) in &mut self.pending {
            if !pending.bytes.is_empty() {
                emit(pending.take(rank));
            }
        }
    }

    /// Rank 0's partial line, if it waited [`PROMPT`].
    pub fn prompt(&mut self, emit: &mut impl FnMut(Piece)) {
        if let Some(pending) = self.pending.get_mut(&Some(0)) {
            if pending.since.is_some_and(|t| t.elapsed() >= PROMPT) {
                emit(pending.take(Some(0)));
            }
        }
    }

    /// Parses `buf`; returns how much was used (all but a tag cut short,
    /// unless `end`).
    fn parse(&mut self, buf: &[u8], end: bool, emit: &mut impl FnMut(Piece)) -> usize {
        let mut i = 0;
        while i < buf.len() {
            if self.tagged && buf[i] == b'[' {
                match tag(&buf[i..buf.len().min(i + LONGEST_TAG)]) {
                    Tag::Is(len, rank) => {
                        self.current = Some(rank);
                        i += len;
                        continue;
                    }
                    Tag::Short if !end && buf.len() - i < LONGEST_TAG => return i,
                    _ => {}
                }
            }
            // Text, up to a line's end or the next possible tag.
            let stop = buf[i + 1..]
                .iter()
                .position(|&b| b == b'[')
                .map_or(buf.len(), |j| i + 1 + j);
            let text = &buf[i..stop];
            let cut = text.iter().position(|&b| b == b'\n' || b == b'\r');
            let text = cut.map_or(text, |c| &text[..=c]);
            let source = self.current;
            let pending = self.pending.entry(source).or_default();
            if pending.bytes.is_empty() && !text.is_empty() {
                pending.since = Some(Instant::now());
            }
            pending.bytes.extend_from_slice(text);
            match rule_after_text(&pending.bytes) {
                // mpirun's report after a rank's unfinished line: the line
                // waits for its continuation (tagged), the rule is
                // mpirun's.
                Some(keep) if source.is_some() => {
                    let rule = pending.bytes.split_off(keep);
                    emit(Piece {
                        rank: None,
                        starts_line: true,
                        bytes: rule,
                    });
                }
                _ if cut.is_some() || pending.bytes.len() > LONGEST => {
                    emit(pending.take(source));
                }
                _ => {}
            }
            if text.ends_with(b"\n") {
                // Every line of a rank starts with its tag: text after a
                // newline without one is mpirun's.
                self.current = None;
            }
            i += text.len();
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pieces `chunks` give, one `push` each, then `finish`; each as
    /// `[rank or -] text` with `+` before a piece that starts a line.
    fn pieces(chunks: &[&[u8]]) -> Vec<String> {
        let mut demux = Demux::new(true);
        let mut out = Vec::new();
        let mut emit = |p: Piece| {
            let rank = p.rank.map_or("-".to_owned(), |r| r.to_string());
            let start = if p.starts_line { "+" } else { "" };
            out.push(format!(
                "{start}{rank} {}",
                String::from_utf8_lossy(&p.bytes)
            ));
        };
        for chunk in chunks {
            demux.push(chunk, &mut emit);
        }
        demux.finish(&mut emit);
        out
    }

    #[test]
    fn tagged_pieces_make_whole_lines() {
        // As mpirun wrote them: a tag at every piece and every line.
        let stream = b"[1,0]<stdout>:o 0 3[1,1]<stdout>:o 1 0\n[1,1]<stdout>:o 1 1\n\
                       [1,0]<stdout>:2 x\n[1,0]<stdout>:o 0 4\n";
        assert_eq!(
            pieces(&[stream]),
            ["+1 o 1 0\n", "+1 o 1 1\n", "+0 o 0 32 x\n", "+0 o 0 4\n"]
        );
        // The same, whatever the reads: tags cut short are kept for later.
        for step in 1..stream.len() {
            let chunks: Vec<&[u8]> = stream.chunks(step).collect();
            assert_eq!(
                pieces(&chunks),
                ["+1 o 1 0\n", "+1 o 1 1\n", "+0 o 0 32 x\n", "+0 o 0 4\n"],
                "reads of {step} bytes"
            );
        }
    }

    #[test]
    fn untagged_lines_are_mpiruns_and_brackets_are_text() {
        let stream = b"----\nMPI_ABORT was invoked\n[1,2]<stderr>:a[3] = [x,y]\n[vm:12] note\n";
        assert_eq!(
            pieces(&[stream]),
            [
                "+- ----\n",
                "+- MPI_ABORT was invoked\n",
                "+2 a[3] = [x,y]\n",
                "+- [vm:12] note\n"
            ]
        );
    }

    #[test]
    fn a_report_of_mpirun_after_an_unfinished_line_is_taken_apart() {
        let rule = String::from_utf8(RULE.to_vec()).unwrap();
        let stream = format!(
            "[1,0]<stderr>:e 0 4{rule}\nMPI_ABORT was invoked\n{rule}\n[1,0]<stderr>:2 x\n\
             [1,1]<stderr>:{rule}\n"
        );
        assert_eq!(
            pieces(&[stream.as_bytes()]),
            [
                format!("+- {rule}\n"),
                "+- MPI_ABORT was invoked\n".into(),
                format!("+- {rule}\n"),
                "+0 e 0 42 x\n".into(),
                format!("+1 {rule}\n"),
            ]
        );
    }

    #[test]
    fn carriage_returns_end_pieces_and_the_rest_comes_out_at_the_end() {
        let stream =
            b"[1,0]<stderr>:\rbsplib: superstep 1\x1b[K[1,0]<stderr>:\rbsplib: superstep 2";
        assert_eq!(
            pieces(&[stream]),
            [
                "+0 \r",
                "0 bsplib: superstep 1\x1b[K\r",
                "0 bsplib: superstep 2"
            ]
        );
        assert_eq!(pieces(&[b"[1,0]<stdout>:[1,0"]), ["+0 [1,0"]);
    }

    #[test]
    fn a_prompt_of_rank_0_goes_out_after_a_while() {
        let mut demux = Demux::new(true);
        let mut out = Vec::new();
        demux.push(b"[1,0]<stdout>:How many? ", &mut |p| out.push(p));
        demux.prompt(&mut |p| out.push(p));
        assert!(out.is_empty());
        std::thread::sleep(PROMPT);
        demux.prompt(&mut |p| out.push(p));
        demux.push(b"[1,0]<stdout>:4\n", &mut |p| out.push(p));
        let texts: Vec<_> = out.iter().map(|p| (p.starts_line, &p.bytes[..])).collect();
        assert_eq!(texts, [(true, &b"How many? "[..]), (false, b"4\n")]);
    }
}
