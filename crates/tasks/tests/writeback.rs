//! Writeback, under the paper's policy and the improved one, never loses,
//! duplicates or reorders a write; reads see the newest data; the queue
//! never exceeds its cap and flush writes stay within their allowance.

use std::collections::{HashMap, VecDeque};

use lull_core::prelude::*;
use lull_tasks::background::{Admission, BackgroundTask, DeviceIo};
use lull_tasks::device::{Disk, ServiceModel};
use lull_tasks::writeback::{Absorb, FlushOrder, Piece, Writeback, WritebackConfig};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Step {
    Write {
        sector: u64,
        sectors: u32,
    },
    Read {
        sector: u64,
    },
    /// Start with a budget in ms (None: until busy) and poll.
    Idle(Option<u64>),
    /// Complete the oldest outstanding device write.
    Complete,
    /// A foreground read at the device completes.
    ReadDone,
    Stop,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u64..64, 1u32..40).prop_map(|(sector, sectors)| Step::Write { sector, sectors }),
        2 => (0u64..104).prop_map(|sector| Step::Read { sector }),
        2 => prop::option::of(1u64..200).prop_map(Step::Idle),
        3 => Just(Step::Complete),
        2 => Just(Step::ReadDone),
        1 => Just(Step::Stop),
    ]
}

/// The paper's policy or the improved one, with small sizes so that the
/// cap, the forced flushes and the high-water mark all come into play.
fn config() -> impl Strategy<Value = WritebackConfig> {
    let model = ServiceModel::default_model();
    prop_oneof![
        Just(WritebackConfig {
            max_outstanding: 8192,
            queue_cap: 32 << 10,
            forced_flush: 16 << 10,
            ..WritebackConfig::paper()
        }),
        (
            prop::sample::select(vec![4096u32, 8192, 16384]),
            1u64..4,
            prop::bool::ANY
        )
            .prop_map(move |(step, forced_steps, read_priority)| WritebackConfig {
                max_outstanding: step,
                queue_cap: 32 << 10,
                forced_flush: u64::from(step) * forced_steps,
                high_water: 16 << 10,
                read_priority,
                ..WritebackConfig::improved(&model)
            }),
    ]
    .prop_flat_map(|c| {
        // Either takes every write, or writes through to an idle disk.
        prop_oneof![Just(Absorb::Always), Just(Absorb::WhenBusy)]
            .prop_map(move |absorb| WritebackConfig { absorb, ..c })
    })
}

/// The disk: sector → tag of the last write applied; per (tag, sector)
/// how often it was written; per sector the tags in the order they landed.
#[derive(Default)]
struct Device {
    data: HashMap<u64, u64>,
    written: HashMap<(u64, u64), u32>,
    order: HashMap<u64, Vec<u64>>,
}

impl Device {
    fn apply(&mut self, pieces: &[Piece]) {
        for p in pieces {
            for s in p.sector..p.sector + p.sectors {
                self.data.insert(s, p.tag);
                *self.written.entry((p.tag, s)).or_default() += 1;
                self.order.entry(s).or_default().push(p.tag);
            }
        }
    }
}

proptest! {
    #![proptest_config(lull_testkit::cases(512))]
    #[test]
    fn every_write_lands_once_in_order_and_reads_see_the_latest(
        cfg in config(),
        steps in prop::collection::vec(step(), 1..300),
    ) {
        let model = ServiceModel::default_model();
        let disk = Disk::new(model.clone());
        let mut wb = Writeback::new(cfg, &model);
        let mut dev = Device::default();
        // The device's writes, oldest first, with what they carry (read
        // when issued: the task forgets it at completion): the task's,
        // and the host's it wrote through (`None`).
        let mut fifo: VecDeque<(Option<DeviceIo>, Vec<Piece>)> = VecDeque::new();
        let mut reads_at_device = 0u32;
        let mut truth: HashMap<u64, u64> = HashMap::new();
        let mut host_sectors = 0u64;
        let mut t = Nanos::ZERO;
        let mut out = Vec::new();
        let mut tag = 0u64;
        for s in steps {
            t += Nanos::from_millis(1);
            match s {
                Step::Write { sector, sectors } => {
                    let r = Request::new(t, t, Op::Write, sector, sectors * 512);
                    let idle = fifo.is_empty() && reads_at_device == 0;
                    wb.device_idle(idle);
                    let admitted = wb.on_arrival(&r, t, &mut out);
                    // What the task forced out goes ahead of a write it
                    // passes through.
                    for io in out.drain(..) {
                        let pieces = wb.pieces_of(&io).expect("an issued write").to_vec();
                        fifo.push_back((Some(io), pieces));
                    }
                    if cfg.absorb == Absorb::WhenBusy && idle {
                        prop_assert_eq!(admitted, Admission::Device);
                        let piece = Piece { sector, sectors: u64::from(sectors), tag };
                        fifo.push_back((None, vec![piece]));
                    } else {
                        prop_assert_eq!(admitted, Admission::Absorbed);
                    }
                    for s in sector..sector + u64::from(sectors) {
                        truth.insert(s, tag);
                    }
                    host_sectors += u64::from(sectors);
                    tag += 1;
                }
                Step::Read { sector } => {
                    let r = Request::new(t, t, Op::Read, sector, 512);
                    prop_assert_eq!(wb.on_arrival(&r, t, &mut out), Admission::Device);
                    reads_at_device += 1;
                    tag += 1;
                    // The task's memory (queue, or a write issued and not
                    // complete), else a host write passed through and
                    // waiting at the device (a read never passes one),
                    // else the disk.
                    let passed = fifo.iter().rev().find_map(|(io, pieces)| {
                        io.is_none()
                            .then(|| pieces.iter().find(|p| (p.sector..p.sector + p.sectors).contains(&sector)))
                            .flatten()
                            .map(|p| p.tag)
                    });
                    let seen = wb
                        .latest(sector)
                        .or(passed)
                        .or(dev.data.get(&sector).copied());
                    prop_assert_eq!(seen, truth.get(&sector).copied());
                }
                Step::Idle(budget) => {
                    wb.start(&Context::at(t), budget.map(Nanos::from_millis));
                }
                Step::Complete => {
                    if let Some((io, pieces)) = fifo.pop_front() {
                        dev.apply(&pieces);
                        match io {
                            Some(io) => wb.on_io_done(&io, t),
                            None => wb.on_foreground_done(Op::Write, t, t),
                        }
                    }
                }
                Step::ReadDone => {
                    if reads_at_device > 0 {
                        reads_at_device -= 1;
                        wb.on_foreground_done(Op::Read, t, t);
                    }
                }
                Step::Stop => wb.stop(&Context::at(t)),
            }
            wb.poll(t, t, &disk, &mut out);
            for io in out.drain(..) {
                let pieces = wb.pieces_of(&io).expect("an issued write").to_vec();
                let n: u64 = pieces.iter().map(|p| p.sectors).sum();
                prop_assert_eq!(u64::from(io.bytes).div_ceil(512), n);
                prop_assert_eq!(pieces[0].sector, io.sector);
                fifo.push_back((Some(io), pieces));
            }
            prop_assert!(wb.queue_bytes() <= cfg.queue_cap);
            prop_assert!(wb.outstanding() <= u64::from(cfg.max_outstanding));
            if cfg.order == FlushOrder::Fifo {
                prop_assert!(wb.sector_queue().is_empty());
            }
        }
        // The end: the device finishes, then what is still queued drains.
        while let Some((io, pieces)) = fifo.pop_front() {
            dev.apply(&pieces);
            if let Some(io) = io {
                wb.on_io_done(&io, t);
            }
        }
        wb.drain(&mut out);
        for io in out.drain(..) {
            let pieces = wb.pieces_of(&io).expect("a drained write").to_vec();
            dev.apply(&pieces);
        }
        prop_assert_eq!(wb.queue_bytes(), 0);
        // No write reached the disk twice, and writes to a sector landed
        // in the order they were made ...
        prop_assert!(dev.written.values().all(|&c| c == 1));
        for tags in dev.order.values() {
            prop_assert!(tags.windows(2).all(|w| w[0] < w[1]), "{:?}", tags);
        }
        // ... so the disk holds the newest data of every sector: nothing lost.
        prop_assert_eq!(&dev.data, &truth);
        // Every sector written by the host landed, or was replaced in the
        // queue by a newer write (never under the paper's policy).
        let landed = dev.written.len() as u64;
        prop_assert_eq!(landed + wb.sector_queue().superseded() / 512, host_sectors);
    }
}
