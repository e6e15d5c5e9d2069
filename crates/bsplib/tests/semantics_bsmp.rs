//! One test per semantic rule of BSPlib's bulk synchronous message passing
//! (the README's semantics, the paper's BSMP section), each run on every engine and
//! process count.

mod common;
use common::*;

// ----- BSMP -----------------------------------------------------------------

#[test]
fn tag_size_abc_rule() {
    // (A, B, C): tag size of the queue read, of messages sent now, last
    // value given. Sending with the new size before the sync: `errors.rs`.
    scenario(|bsp| {
        let (me, l, r) = (bsp.pid() as u8, left(bsp) as u8, right(bsp));
        // (0, 0, 0)
        check_eq!(bsp, bsp.send_tagsize(), 0);
        check_eq!(bsp, bsp.set_tagsize(4)?, 0);
        check_eq!(bsp, bsp.set_tagsize(8)?, 4); // the last call wins
        check_eq!(bsp, bsp.send_tagsize(), 0); // B unchanged this superstep
        bsp.send(r, &[], b"s0")?;
        bsp.sync()?;
        // (0, 8, 8): the queue has the tag size of the sender's superstep.
        check_eq!(bsp, bsp.send_tagsize(), 8);
        let m = bsp.hpmove().expect("one message");
        check_eq!(bsp, (m.tag().len(), m.payload()), (0, &b"s0"[..]));
        check_eq!(bsp, bsp.set_tagsize(2)?, 8);
        bsp.send(r, &[me; 8], b"s1")?;
        bsp.sync()?;
        // (8, 2, 2)
        check_eq!(bsp, bsp.send_tagsize(), 2);
        let mut tag = [0xCC; 16];
        check_eq!(bsp, bsp.get_tag(&mut tag)?, Some(2));
        check_eq!(bsp, tag[..8], [l; 8]);
        check_eq!(bsp, tag[8..], [0xCC; 8]);
        bsp.move_payload(&mut [])?;
        bsp.send(r, &[7, me], b"s2")?;
        bsp.sync()?;
        // (2, 2, 2): C stays without calls.
        let m = bsp.hpmove().expect("one message");
        check_eq!(bsp, (m.tag(), m.payload()), (&[7, l][..], &b"s2"[..]));
        check_eq!(bsp, bsp.set_tagsize(0)?, 2);
        Ok(())
    });
}

#[test]
fn send_copies_tag_and_payload_at_call() {
    scenario(|bsp| {
        bsp.set_tagsize(8)?;
        bsp.sync()?;
        let (me, l, _) = ids(bsp);
        let mut tag = me.to_ne_bytes();
        let mut payload = vec![me as u8; 5];
        bsp.send(right(bsp), &tag, &payload)?;
        tag.fill(0xFF);
        payload.fill(0);
        drop(payload);
        bsp.sync()?;
        let m = bsp.hpmove().expect("one message");
        check_eq!(bsp, m.tag_as::<u64>(), Some(l));
        check_eq!(bsp, m.payload(), &[l as u8; 5][..]);
        check_eq!(bsp, tag, [0xFF; 8]);
        Ok(())
    });
}

#[test]
fn messages_live_one_superstep() {
    scenario(|bsp| {
        let r = right(bsp);
        for j in 0..3u8 {
            bsp.send(r, &[], &[j, 0])?;
        }
        bsp.sync()?;
        check_eq!(bsp, bsp.qsize(), (3, 6));
        bsp.move_payload(&mut [0; 2])?;
        for j in 0..2u8 {
            bsp.send(r, &[], &[j, 1])?;
        }
        check_eq!(bsp, bsp.qsize(), (2, 4)); // new sends are not in it
        bsp.sync()?;
        // The two unconsumed messages of the first superstep are gone.
        check_eq!(bsp, bsp.qsize(), (2, 4));
        let mut markers = vec![];
        while let Some(m) = bsp.hpmove() {
            markers.push(m.payload()[1]);
        }
        check_eq!(bsp, markers, vec![1, 1]);
        bsp.sync()?;
        check_eq!(bsp, bsp.qsize(), (0, 0));
        check!(bsp, bsp.hpmove().is_none());
        check_eq!(bsp, bsp.get_tag(&mut [])?, None);
        Ok(())
    });
}

#[test]
fn qsize_counts_messages_and_bytes() {
    scenario(|bsp| {
        let (pid, p) = (bsp.pid(), bsp.nprocs());
        let count = |s: usize, t: usize| (s + t) % 3 + 1;
        let len = |s: usize, t: usize, j: usize| (s * 5 + t * 3 + j) % 9;
        for t in 0..p {
            for j in 0..count(pid, t) {
                bsp.send(t, &[], &vec![j as u8; len(pid, t, j)])?;
            }
        }
        // Messages arrive in the next superstep only, even to oneself.
        check_eq!(bsp, bsp.qsize(), (0, 0));
        check!(bsp, bsp.hpmove().is_none());
        bsp.sync()?;
        let (mut m, mut b) = (0, 0);
        for s in 0..p {
            m += count(s, pid);
            b += (0..count(s, pid)).map(|j| len(s, pid, j)).sum::<usize>();
        }
        check_eq!(bsp, bsp.qsize(), (m, b));
        while let Some(n) = bsp.get_tag(&mut [])? {
            // get_tag does not consume (and repeats itself); move does.
            check_eq!(bsp, bsp.get_tag(&mut [])?, Some(n));
            check_eq!(bsp, bsp.qsize(), (m, b));
            check_eq!(bsp, bsp.move_payload(&mut [0; 16])?, n);
            (m, b) = (m - 1, b - n);
            check_eq!(bsp, bsp.qsize(), (m, b));
        }
        check_eq!(bsp, (m, b), (0, 0));
        Ok(())
    });
}

#[test]
fn get_tag_on_empty_queue_is_none() {
    scenario(|bsp| {
        let mut tag = [0xAA; 4];
        check_eq!(bsp, bsp.get_tag(&mut tag)?, None);
        // SAFETY: `tag` is writable for 4 bytes, more than the tag size.
        let raw = unsafe { bsp.raw().get_tag(tag.as_mut_ptr().cast()) }?;
        check_eq!(bsp, raw, None);
        check!(bsp, bsp.hpmove().is_none());
        check_eq!(bsp, tag, [0xAA; 4]); // unchanged
        bsp.set_tagsize(4)?;
        bsp.sync()?;
        check_eq!(bsp, bsp.get_tag(&mut tag)?, None);
        bsp.send(right(bsp), &[1, 2, 3, 4], &[9])?;
        bsp.sync()?;
        check_eq!(bsp, bsp.get_tag(&mut tag)?, Some(1));
        bsp.move_payload(&mut [])?;
        tag = [0xBB; 4];
        check_eq!(bsp, bsp.get_tag(&mut tag)?, None);
        check_eq!(bsp, tag, [0xBB; 4]);
        Ok(())
    });
}

#[test]
fn move_truncates_to_buffer() {
    scenario(|bsp| {
        let payload: Vec<u8> = (1..=10).collect();
        for _ in 0..3 {
            bsp.send(right(bsp), &[], &payload)?;
        }
        bsp.sync()?;
        let mut small = [0xEE; 4];
        check_eq!(bsp, bsp.move_payload(&mut small)?, 4);
        check_eq!(bsp, small, [1, 2, 3, 4]);
        check_eq!(bsp, bsp.qsize(), (2, 20));
        let mut big = [0xEE; 16];
        check_eq!(bsp, bsp.move_payload(&mut big)?, 10);
        check_eq!(bsp, big[..10], payload[..]);
        check_eq!(bsp, big[10..], [0xEE; 6]);
        // Reception size 0 just removes the message.
        check_eq!(bsp, bsp.move_payload(&mut [])?, 0);
        check_eq!(bsp, bsp.qsize(), (0, 0));
        Ok(())
    });
}

#[test]
fn zero_length_tag_and_payload_still_make_a_message() {
    scenario(|bsp| {
        bsp.send(right(bsp), &[], &[])?;
        bsp.send(right(bsp), &[], &[])?;
        bsp.set_tagsize(4)?;
        bsp.sync()?;
        check_eq!(bsp, bsp.qsize(), (2, 0));
        check_eq!(bsp, bsp.get_tag(&mut [])?, Some(0));
        let m = bsp.hpmove().expect("a message");
        check!(bsp, m.tag().is_empty() && m.payload().is_empty());
        check_eq!(bsp, bsp.move_payload(&mut [0; 4])?, 0);
        check_eq!(bsp, bsp.qsize(), (0, 0));
        // A tag-only message.
        bsp.send(right(bsp), &[1, 2, 3, 4], &[])?;
        bsp.sync()?;
        check_eq!(bsp, bsp.qsize(), (1, 0));
        let mut tag = [0; 4];
        check_eq!(bsp, bsp.get_tag(&mut tag)?, Some(0));
        check_eq!(bsp, tag, [1, 2, 3, 4]);
        Ok(())
    });
}

#[test]
fn hpmove_returns_views_valid_in_superstep() {
    scenario(|bsp| {
        let (pid, p) = (bsp.pid(), bsp.nprocs());
        bsp.set_tagsize(8)?;
        bsp.sync()?;
        let word = |s: usize, j: usize, k: usize| (s * 1000 + j * 10 + k) as u64;
        let msg = |s: usize, j: usize| {
            let payload: Vec<u64> = (0..=j).map(|k| word(s, j, k)).collect();
            ((s * 100 + j) as u64, payload)
        };
        for t in 0..p {
            for j in 0..3 {
                let (tag, payload) = msg(pid, j);
                bsp.send_pod(t, &tag, &payload)?;
            }
        }
        bsp.sync()?;
        let mut views = vec![];
        while let Some(m) = bsp.hpmove() {
            views.push(m);
        }
        check_eq!(bsp, bsp.qsize(), (0, 0));
        // Outgoing traffic while the views are held must not disturb them.
        for t in 0..p {
            bsp.send_pod(t, &u64::MAX, &[0xDEAD_u64; 16])?;
        }
        let mut got = vec![];
        for m in &views {
            check_eq!(bsp, m.payload().as_ptr() as usize % 8, 0);
            let payload = m.payload_as::<u64>().expect("8-byte words").to_vec();
            got.push((m.tag_as::<u64>().expect("8-byte tag"), payload));
        }
        got.sort();
        let want: Vec<_> = (0..p).flat_map(|s| (0..3).map(move |j| (s, j))).collect();
        let want: Vec<_> = want.into_iter().map(|(s, j)| msg(s, j)).collect();
        check_eq!(bsp, got, want);
        bsp.sync()?;
        check_eq!(bsp, bsp.qsize(), (p, p * 128));
        Ok(())
    });
}
