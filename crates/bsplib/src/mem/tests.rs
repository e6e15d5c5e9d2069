//! The record buffer's and the small put record's unit tests.
use super::*;

#[test]
fn a_spike_is_given_back_and_steady_use_is_not() {
    let mut b = AlignedBuf::default();
    let big = vec![7u8; 8 << 20];
    // SAFETY: `big` is readable for its length.
    unsafe { b.push_raw(big.as_ptr(), big.len()) };
    assert!(b.lines.capacity() * 64 >= 8 << 20);
    for _ in 0..40 {
        b.clear();
        // SAFETY: as above.
        unsafe { b.push_raw(big.as_ptr(), 1000) };
    }
    assert!(
        b.lines.capacity() * 64 <= KEEP,
        "{}",
        b.lines.capacity() * 64
    );
    // Steady use of 3 MiB: no shrinking once grown.
    for _ in 0..4 {
        b.clear();
        // SAFETY: as above.
        unsafe { b.push_raw(big.as_ptr(), 3 << 20) };
    }
    let steady = b.lines.capacity();
    for _ in 0..40 {
        b.clear();
        // SAFETY: as above.
        unsafe { b.push_raw(big.as_ptr(), 3 << 20) };
        assert_eq!(b.lines.capacity(), steady);
    }
}

#[test]
fn records_are_padded_and_aligned() {
    let mut b = AlignedBuf::default();
    let bytes = [1u8, 2, 3];
    // SAFETY: `bytes` is a live array of 3 bytes.
    unsafe {
        b.push_record([7, 3], bytes.as_ptr(), 3);
        b.push_raw(bytes.as_ptr(), 3);
    }
    assert_eq!(b.len(), 32);
    assert_eq!((b.word(0), b.word(8)), (7, 3));
    assert_eq!(b.as_ptr() as usize % 8, 0);
    b.clear();
    assert!(b.is_empty());
}

#[test]
fn a_small_put_word_round_trips_and_refuses_what_it_cannot_hold() {
    for len in 1..=SMALL_PUT_MAX {
        for (slot, offset) in [(0, 0), (5, 12345), ((1 << 17) - 1, (1 << 40) - 1)] {
            let w = small_put_word(slot, offset, len).expect("fits");
            assert_ne!(w & SMALL, 0);
            // None of the flags above it (EXTENDED, VECTOR, the rendezvous's DESCRIPTOR).
            assert_eq!(w >> 61, 0);
            assert_eq!(small_put_fields(w), (slot, offset, len));
        }
    }
    assert_eq!(small_put_word(0, 0, 0), None);
    assert_eq!(small_put_word(0, 0, SMALL_PUT_MAX + 1), None);
    assert_eq!(small_put_word(1 << 17, 0, 8), None);
    assert_eq!(small_put_word(0, 1 << 40, 8), None);
}

#[test]
fn small_put_records_hold_their_bytes_zero_padded() {
    let mut b = AlignedBuf::default();
    let src = [1u8, 2, 3, 4, 5, 6, 7, 8];
    for len in 1..=SMALL_PUT_MAX {
        let w = small_put_word(3, 40 + len, len).expect("fits");
        // SAFETY: `src` holds 8 readable bytes.
        unsafe { b.push_small_put(w, src.as_ptr(), len) }.expect("memory");
    }
    assert_eq!(b.len(), 16 * SMALL_PUT_MAX);
    let r = Records::of(&b);
    for len in 1..=SMALL_PUT_MAX {
        let at = 16 * (len - 1);
        assert_eq!(small_put_fields(r.word(at) as u64), (3, 40 + len, len));
        let payload = r.word(at + 8).to_ne_bytes();
        assert_eq!(&payload[..len], &src[..len]);
        assert!(payload[len..].iter().all(|&x| x == 0));
    }
}
