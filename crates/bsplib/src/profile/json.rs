//! The profiler's hand-written JSON: numbers, microseconds, source
//! locations and string literals written into byte buffers, without `fmt`.

use crate::error::SourceLocation;

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
pub(super) fn put_u64(out: &mut Vec<u8>, mut n: u64) {
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
pub(super) fn put_us(out: &mut Vec<u8>, ns: u64) {
    put_u64(out, ns / 1000);
    let frac = (ns % 1000) as usize;
    out.push(b'.');
    out.push(b'0' + (frac / 100) as u8);
    out.extend_from_slice(&DIGITS[(frac % 100) * 2..(frac % 100) * 2 + 2]);
}

/// Nanoseconds as microseconds with three decimals (the trace's `ts`).
#[cfg(test)]
pub(super) fn us(ns: u64) -> String {
    let mut out = Vec::new();
    put_us(&mut out, ns);
    String::from_utf8(out).expect("digits")
}

/// The `at` of a row as a JSON string literal (`"file:line"`, or `""`),
/// into `at` (emptied first).
pub(super) fn put_at(at: &mut Vec<u8>, loc: Option<SourceLocation>) {
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
pub(super) fn put_json_str(out: &mut Vec<u8>, s: &str) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_str("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\"");
    }

    #[test]
    fn microseconds_keep_three_decimals() {
        assert_eq!(us(1_234_567), "1234.567");
        assert_eq!(us(5), "0.005");
    }
}
