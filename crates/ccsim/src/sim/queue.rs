//! The event queue: a binary min-heap ordered by (time, insertion sequence), so equal-time
//! events run in the order they were scheduled and every run is deterministic.
//! Events are small `Copy` values; timers are cancelled by epoch (a stale event is ignored).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Something that happens at an instant. All ids are dense indices into the simulation's vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The port finished serializing its current packet and may start the next one.
    TxDone { port: u32 },
    /// A packet has been fully received at `port` (store-and-forward).
    Arrive { port: u32, pkt: u32 },
    /// A flow becomes active at its sender.
    FlowStart { flow: u32 },
    /// A long-lived flow stops offering new data.
    FlowStop { flow: u32 },
    /// A host NIC re-checks flows whose pacing time has come.
    NicWake { host: u32 },
    /// A congestion-control timer of a flow; ignored unless `epoch` matches the flow's.
    CcTimer { flow: u32, kind: u8, epoch: u32 },
    /// Take the periodic queue / utilization samples.
    SampleQueues,
    /// Take the periodic per-flow rate samples.
    SampleRates,
}

#[derive(Clone, Copy)]
struct Entry {
    time_ps: u64,
    seq: u64,
    ev: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time_ps == o.time_ps && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (time, seq) first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time_ps, o.seq).cmp(&(self.time_ps, self.seq))
    }
}

/// Deterministic pending-event set.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    /// Schedule `ev` at absolute time `time_ps`.
    #[inline]
    pub fn push(&mut self, time_ps: u64, ev: Event) {
        self.seq += 1;
        self.heap.push(Entry {
            time_ps,
            seq: self.seq,
            ev,
        });
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        self.heap.pop().map(|e| (e.time_ps, e.ev))
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|e| e.time_ps)
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_run_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(10, Event::NicWake { host: 1 });
        q.push(5, Event::NicWake { host: 0 });
        q.push(10, Event::NicWake { host: 2 });
        q.push(10, Event::NicWake { host: 3 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let hosts: Vec<u32> = order
            .iter()
            .map(|(_, e)| match e {
                Event::NicWake { host } => *host,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(hosts, vec![0, 1, 2, 3]);
    }

    #[test]
    fn event_is_small() {
        assert!(std::mem::size_of::<Event>() <= 16);
    }
}
