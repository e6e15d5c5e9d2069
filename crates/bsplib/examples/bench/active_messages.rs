//! Section i: an active-message round trip, p = 2, against the same
//! exchange with `bsp_send` and two syncs, on threads and processes.

use std::time::Instant;

use bsplib::{Area, Engine, Error, Runtime};

use super::report::{ns, stats, Row, Target};
use super::timing::first;
use super::Config;

// ----- i. active-message round trip --------------------------------------------------

/// Seconds per round trip between the 2 processes of a run of `engine`:
/// an active message and its answer (`am`), or a `bsp_send` each way with
/// a sync after each; one per repetition.
fn bench_roundtrip(engine: Engine, am: bool, reps: usize, cfg: &Config) -> Result<Vec<f64>, Error> {
    use bsplib::am::{CounterId, Counters, Handler, Handlers, Landing};
    use std::cell::Cell;
    use std::rc::Rc;
    let trips = if cfg.quick { 200 } else { 5000 };
    let results = Runtime::new(2).engine(engine).run(move |bsp| {
        let me = bsp.pid();
        let mut out = Vec::with_capacity(reps);
        if !am {
            for round in 0..=reps {
                bsp.sync()?;
                let t0 = Instant::now();
                for i in 0..trips as u64 {
                    if me == 0 {
                        bsp.send(1, &[], &i.to_ne_bytes())?;
                    }
                    bsp.sync()?;
                    if me == 1 {
                        let m = bsp.hpmove().expect("the question");
                        let v = u64::from_ne_bytes(m.payload().try_into().unwrap_or_default());
                        bsp.send(0, &[], &(v + 1).to_ne_bytes())?;
                    }
                    bsp.sync()?;
                    if me == 0 && bsp.hpmove().is_none() {
                        bsp.abort("no answer");
                    }
                }
                if round > 0 {
                    out.push(t0.elapsed().as_secs_f64() / trips as f64);
                }
            }
            return Ok(out);
        }
        // Process 1's "ask" handler answers with "answer", which moves the
        // counter of process 0 whose id travels in the question.
        let answer: Rc<Cell<Option<Handler<u64, u8>>>> = Rc::new(Cell::new(None));
        let a2 = answer.clone();
        let mut hs = Handlers::new();
        let ask = hs.add::<CounterId, u8>("ask", move |a| {
            let id = a.header()[0];
            let (src, h) = (a.src(), a2.get().expect("registered"));
            Landing::none().then(move |d| {
                let c = Counters::none().tgt(id);
                d.send(src, h, &[0u64], &[], c)
                    .expect("an answer can be sent");
            })
        });
        answer.set(Some(hs.add::<u64, u8>("answer", |_| Landing::none())));
        bsp.am().init(hs)?;
        // Process 0 waits on `answered`, process 1 on `asked` (moved by
        // each question); the ids travel by a put.
        let answered = bsp.am().counter()?;
        let asked = bsp.am().counter()?;
        let ids = Area::<CounterId>::new(bsp, 1);
        bsp.push_reg(&ids)?;
        bsp.sync()?;
        if me == 1 {
            bsp.put(0, &ids, 0, &[asked.id()])?;
        }
        bsp.sync()?;
        let theirs = ids.as_slice(bsp)[0];
        for round in 0..=reps {
            bsp.sync()?;
            let t0 = Instant::now();
            for _ in 0..trips {
                if me == 0 {
                    let c = Counters::none().tgt(theirs);
                    bsp.am().send(1, ask, &[answered.id()], &[], c)?;
                    bsp.am().wait_counter(&answered, 1)?;
                } else {
                    bsp.am().wait_counter(&asked, 1)?;
                }
            }
            if round > 0 {
                out.push(t0.elapsed().as_secs_f64() / trips as f64);
            }
        }
        bsp.pop_reg(&ids)?;
        bsp.am().term()?;
        Ok(out)
    })?;
    Ok(first(results))
}

/// Section i: active-message round trips against `bsp_send` and syncs.
pub(super) fn section(cfg: &Config, rows: &mut Vec<Row>) -> Result<(), Box<dyn std::error::Error>> {
    // i. active-message round trip against bsp_send and two syncs.
    for engine in [Engine::Threads, Engine::Processes] {
        eprintln!("[bench] {}: active-message round trip", engine.name());
        let (mut am, mut send) = (vec![], vec![]);
        for _ in 0..cfg.reps {
            am.extend(bench_roundtrip(engine, true, 1, cfg)?);
            send.extend(bench_roundtrip(engine, false, 1, cfg)?);
        }
        let name = engine.name();
        rows.push(Row {
            name: format!("{name} AM round trip"),
            unit: "ns",
            value: ns(stats(&am)),
            baseline: Some((format!("bsp_send + 2 syncs, {name}"), ns(stats(&send)))),
            target: Target::Info("(no target: the issue asks for the numbers)"),
        });
    }
    Ok(())
}
