//! Writeback never loses, duplicates or reorders a write, reads see the
//! newest data, and the queue never exceeds its cap.

use std::collections::HashMap;

use lull_core::prelude::*;
use lull_tasks::background::{Admission, BackgroundTask, DeviceIo};
use lull_tasks::device::{Disk, ServiceModel};
use lull_tasks::writeback::{Writeback, WritebackConfig};
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
    Stop,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u64..64, 1u32..40).prop_map(|(sector, sectors)| Step::Write { sector, sectors }),
        2 => (0u64..104).prop_map(|sector| Step::Read { sector }),
        2 => prop::option::of(1u64..200).prop_map(Step::Idle),
        3 => Just(Step::Complete),
        1 => Just(Step::Stop),
    ]
}

/// The device: sector → tag of the last write applied, and per tag how many
/// times each of its sectors was written.
#[derive(Default)]
struct Device {
    data: HashMap<u64, u64>,
    written: HashMap<(u64, u64), u32>,
    /// Per sector, the tags in the order they reached the disk.
    order: HashMap<u64, Vec<u64>>,
}

impl Device {
    fn apply(&mut self, io: &DeviceIo) {
        for s in io.sector..io.sector + u64::from(io.bytes).div_ceil(512) {
            self.data.insert(s, io.tag);
            *self.written.entry((io.tag, s)).or_default() += 1;
            self.order.entry(s).or_default().push(io.tag);
        }
    }
}

proptest! {
    #[test]
    fn every_byte_once_in_order_and_reads_see_the_latest(steps in prop::collection::vec(step(), 1..300)) {
        let cfg = WritebackConfig { max_outstanding: 8192, queue_cap: 32 << 10, forced_flush: 16 << 10 };
        let model = ServiceModel::default_model();
        let disk = Disk::new(model.clone());
        let mut wb = Writeback::new(cfg, &model);
        let mut dev = Device::default();
        // The device queue: FIFO, served in order.
        let mut fifo: std::collections::VecDeque<DeviceIo> = Default::default();
        let mut truth: HashMap<u64, u64> = HashMap::new();
        let mut writes: Vec<(u64, u64, u32)> = Vec::new();
        let mut t = Nanos::ZERO;
        let mut out = Vec::new();
        let mut tag = 0u64;
        for s in steps {
            t += Nanos::from_millis(1);
            match s {
                Step::Write { sector, sectors } => {
                    let bytes = sectors * 512;
                    let r = Request::new(t, t, Op::Write, sector, bytes);
                    let adm = wb.on_arrival(&r, t, &mut out);
                    prop_assert_eq!(adm, Admission::Absorbed);
                    for s in sector..sector + u64::from(sectors) {
                        truth.insert(s, tag);
                    }
                    writes.push((tag, sector, sectors));
                    tag += 1;
                }
                Step::Read { sector } => {
                    let r = Request::new(t, t, Op::Read, sector, 512);
                    prop_assert_eq!(wb.on_arrival(&r, t, &mut out), Admission::Device);
                    tag += 1;
                    // Queued writes ahead in the FIFO reach the disk before
                    // this read; queued data overlays it.
                    let mut view = Device { data: dev.data.clone(), ..Default::default() };
                    for io in &fifo { view.apply(io); }
                    for io in &out { view.apply(io); }
                    let seen = wb.queue().latest(sector).or(view.data.get(&sector).copied());
                    prop_assert_eq!(seen, truth.get(&sector).copied());
                }
                Step::Idle(budget) => {
                    wb.start(&Context::at(t), budget.map(Nanos::from_millis));
                    wb.poll(t, t, &disk, &mut out);
                }
                Step::Complete => {
                    if let Some(io) = fifo.pop_front() {
                        dev.apply(&io);
                        wb.on_io_done(&io, t);
                        wb.poll(t, t, &disk, &mut out);
                    }
                }
                Step::Stop => wb.stop(&Context::at(t)),
            }
            fifo.extend(out.drain(..));
            prop_assert!(wb.queue().bytes() <= cfg.queue_cap);
            let idle_outstanding: u64 = fifo
                .iter()
                .filter(|io| io.class == lull_tasks::IoClass::Idle)
                .map(|io| u64::from(io.bytes))
                .sum();
            prop_assert!(idle_outstanding <= u64::from(cfg.max_outstanding));
        }
        // The end: serve the device queue, then drain what is still queued.
        while let Some(io) = fifo.pop_front() {
            dev.apply(&io);
            wb.on_io_done(&io, t);
        }
        wb.drain(&mut out);
        for io in out.drain(..) {
            dev.apply(&io);
        }
        prop_assert!(wb.queue().is_empty());
        // Every sector of every write reached the disk exactly once.
        for (tag, sector, sectors) in &writes {
            for s in *sector..*sector + u64::from(*sectors) {
                prop_assert_eq!(dev.written.get(&(*tag, s)).copied(), Some(1), "tag {} sector {}", tag, s);
            }
        }
        let total: u32 = dev.written.values().sum();
        let want: u32 = writes.iter().map(|w| w.2).sum();
        prop_assert_eq!(total, want);
        // Writes to one sector reached the disk in the order they were made,
        // so the disk ends up with the newest data.
        for tags in dev.order.values() {
            prop_assert!(tags.windows(2).all(|w| w[0] < w[1]), "{:?}", tags);
        }
        prop_assert_eq!(dev.data, truth);
    }
}
