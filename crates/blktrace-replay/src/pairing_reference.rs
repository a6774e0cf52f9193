//! The pairing as first written (a `VecDeque` of waiting requests per key,
//! `BTreeMap` counts), kept as the reference the faster
//! [`super::Pairing`] is checked against on generated event streams. It
//! follows the rules of [`super`]'s docs as they are now (a D marks the
//! most recently queued undispatched request, an R takes one back, a C
//! completes the oldest issued one), written the plainest way.

use std::collections::{BTreeMap, VecDeque};

use lull_core::request::{DeviceId, Op, Request};
use lull_core::time::Nanos;
use rustc_hash::FxHashMap as HashMap;

use super::{
    Action, BlockEvent, DeviceCounts, MAX_CLOCK_GAP, MAX_RESPONSE, dev_name, never_completed_note,
};
use crate::text::Devices;
use crate::trace::Trace;

#[derive(Clone, Copy, Debug)]
struct Pending {
    arrival: u64,
    last_seen: u64,
    sector: u64,
    /// First sector after the request, merged bios included.
    end: u64,
    bytes: u32,
    op: Op,
    issued: bool,
    /// Index of the host in `followers_of`, when merged bios wait on it.
    group: Option<usize>,
}

/// The pairing state machine (see the module docs).
#[derive(Debug, Default)]
pub(super) struct Pairing {
    pending: HashMap<(u32, u64), VecDeque<Pending>>,
    /// `(device, end sector)` to the start sector of the request ending there.
    ends: HashMap<(u32, u64), u64>,
    groups: Vec<Vec<Pending>>,
    free_groups: Vec<usize>,
    names: HashMap<u32, DeviceId>,
    devices: Devices,
    counts: BTreeMap<u32, DeviceCounts>,
}

fn sectors(bytes: u32) -> u64 {
    u64::from(bytes / 512)
}

impl Pairing {
    fn device(&mut self, trace: &mut Trace, dev: u32) -> Result<DeviceId, String> {
        if let Some(&id) = self.names.get(&dev) {
            return Ok(id);
        }
        let id = self.devices.id(trace, &dev_name(dev))?;
        self.names.insert(dev, id);
        Ok(id)
    }

    fn emit(
        &mut self,
        trace: &mut Trace,
        dev: u32,
        p: Pending,
        completion: u64,
    ) -> Result<(), String> {
        let id = self.device(trace, dev)?;
        let completion = completion.max(p.arrival);
        trace.requests.push(
            Request::new(Nanos(p.arrival), Nanos(completion), p.op, p.sector, p.bytes)
                .on_device(id),
        );
        if let Some(g) = p.group {
            let followers = std::mem::take(&mut self.groups[g]);
            self.free_groups.push(g);
            for f in followers {
                self.emit(trace, dev, f, completion)?;
            }
        }
        Ok(())
    }

    fn never_completed(&mut self, trace: &mut Trace, dev: u32, p: Pending) -> Result<(), String> {
        let counts = self.counts.entry(dev).or_default();
        counts.never_completed += 1;
        counts.never_issued += u64::from(!p.issued);
        let last = p.last_seen;
        self.emit(trace, dev, p, last)
    }

    fn forget_end(&mut self, dev: u32, p: &Pending) {
        let end = (dev, p.end);
        if self.ends.get(&end) == Some(&p.sector) {
            self.ends.remove(&end);
        }
    }

    fn attach(&mut self, host: &mut Pending, bio: Pending) {
        let g = match host.group {
            Some(g) => g,
            None => {
                let g = self.free_groups.pop().unwrap_or_else(|| {
                    self.groups.push(Vec::new());
                    self.groups.len() - 1
                });
                host.group = Some(g);
                g
            }
        };
        self.groups[g].push(bio);
    }

    /// Feeds one event.
    pub(crate) fn event(&mut self, trace: &mut Trace, ev: BlockEvent) -> Result<(), String> {
        let counts = self.counts.entry(ev.device).or_default();
        let key = (ev.device, ev.sector);
        match ev.action {
            Action::Queue | Action::Issue | Action::Complete => {
                counts.first_ns = Some(counts.first_ns.map_or(ev.time, |t| t.min(ev.time)));
                counts.last_ns = Some(counts.last_ns.map_or(ev.time, |t| t.max(ev.time)));
            }
            Action::BackMerge | Action::FrontMerge | Action::Requeue => {}
        }
        let fresh = Pending {
            arrival: ev.time,
            last_seen: ev.time,
            sector: ev.sector,
            end: ev.sector + sectors(ev.bytes),
            bytes: ev.bytes,
            op: ev.op,
            issued: false,
            group: None,
        };
        match ev.action {
            Action::Queue => {
                counts.queued += 1;
                self.pending.entry(key).or_default().push_back(fresh);
                self.ends
                    .insert((ev.device, ev.sector + sectors(ev.bytes)), ev.sector);
            }
            Action::Issue => {
                counts.issued += 1;
                let queue = self.pending.entry(key).or_default();
                // The most recently queued undispatched request.
                if let Some(p) = queue.iter_mut().rev().find(|p| !p.issued) {
                    p.issued = true;
                    p.last_seen = p.last_seen.max(ev.time);
                } else {
                    counts.issue_only += 1;
                    queue.push_back(Pending {
                        issued: true,
                        ..fresh
                    });
                    self.ends
                        .insert((ev.device, ev.sector + sectors(ev.bytes)), ev.sector);
                }
            }
            Action::Requeue => {
                let queue = self.pending.get_mut(&key);
                if let Some(p) = queue.and_then(|q| q.iter_mut().rev().find(|p| p.issued)) {
                    p.issued = false;
                    p.last_seen = p.last_seen.max(ev.time);
                }
            }
            Action::Complete => {
                counts.completed += 1;
                let mut stale = Vec::new();
                let mut found = None;
                if let Some(queue) = self.pending.get_mut(&key) {
                    // Every request waiting longer than MAX_RESPONSE never
                    // completed; of the rest, the oldest issued one, else
                    // the oldest, completes.
                    let mut rest = VecDeque::new();
                    for p in queue.drain(..) {
                        if p.arrival + MAX_RESPONSE.0 < ev.time {
                            stale.push(p);
                        } else {
                            rest.push_back(p);
                        }
                    }
                    let at = rest.iter().position(|p| p.issued).unwrap_or(0);
                    found = rest.remove(at);
                    *queue = rest;
                    if queue.is_empty() {
                        self.pending.remove(&key);
                    }
                }
                for p in stale {
                    self.forget_end(ev.device, &p);
                    self.never_completed(trace, ev.device, p)?;
                }
                match found {
                    Some(p) => {
                        self.forget_end(ev.device, &p);
                        self.emit(trace, ev.device, p, ev.time)?;
                    }
                    None => {
                        self.counts.entry(ev.device).or_default().completion_only += 1;
                        self.emit(trace, ev.device, fresh, ev.time)?;
                    }
                }
            }
            Action::BackMerge => {
                // The bio at `sector` was appended to the request ending there.
                let Some(&host_start) = self.ends.get(&key) else {
                    return Ok(());
                };
                let host_key = (ev.device, host_start);
                if host_key == key {
                    return Ok(());
                }
                let Some(mut host) = self.take_last_queued(host_key) else {
                    return Ok(());
                };
                if let Some(bio) = self.take_last_queued(key) {
                    self.ends.remove(&key);
                    self.forget_end(ev.device, &bio);
                    self.attach(&mut host, bio);
                    host.end = host.end.max(ev.sector + sectors(ev.bytes));
                    self.ends.insert((ev.device, host.end), host_start);
                    self.counts.entry(ev.device).or_default().merged += 1;
                }
                self.pending.entry(host_key).or_default().push_back(host);
            }
            Action::FrontMerge => {
                // The bio at `sector` was prepended to the request starting
                // right after it; the host now completes at `sector`.
                let host_key = (ev.device, ev.sector + sectors(ev.bytes));
                if host_key == key {
                    return Ok(());
                }
                let Some(mut host) = self.take_last_queued(host_key) else {
                    return Ok(());
                };
                match self.take_last_queued(key) {
                    Some(bio) => {
                        self.forget_end(ev.device, &bio);
                        self.attach(&mut host, bio);
                        host.sector = ev.sector;
                        self.ends.insert((ev.device, host.end), ev.sector);
                        self.pending.entry(key).or_default().push_back(host);
                        self.counts.entry(ev.device).or_default().merged += 1;
                    }
                    None => self.pending.entry(host_key).or_default().push_back(host),
                }
            }
        }
        Ok(())
    }

    fn take_last_queued(&mut self, key: (u32, u64)) -> Option<Pending> {
        let queue = self.pending.get_mut(&key)?;
        let bio = queue.pop_back();
        if queue.is_empty() {
            self.pending.remove(&key);
        }
        bio
    }

    /// Ends the trace: every request still waiting never completed. Sorts,
    /// drops clock outliers, rebases, and writes the notes.
    pub(crate) fn finish(
        mut self,
        trace: &mut Trace,
    ) -> Result<BTreeMap<String, DeviceCounts>, String> {
        let mut left: Vec<((u32, u64), VecDeque<Pending>)> = self.pending.drain().collect();
        left.sort_by_key(|(k, _)| *k);
        for ((dev, _), queue) in left {
            for p in queue {
                self.never_completed(trace, dev, p)?;
            }
        }
        let dropped = trace.drop_time_outliers(MAX_CLOCK_GAP);
        if dropped > 0 {
            trace.skipped += dropped as u64;
            trace.notes.push(format!(
                "dropped {dropped} request(s) whose time is cut off from the rest of the trace by more than 30 days (a CPU clock gone wrong)"
            ));
        }
        trace.rebase();
        if let Some(note) = never_completed_note(self.counts.values()) {
            trace.notes.push(note);
        }
        let orphans: u64 = self.counts.values().map(|c| c.completion_only).sum();
        if orphans > 0 {
            trace.notes.push(format!(
                "{orphans} completion(s) had no Q or D; each is a request of its own lasting 1 ns"
            ));
        }
        Ok(self
            .counts
            .into_iter()
            .map(|(dev, c)| (dev_name(dev), c))
            .collect())
    }
}
