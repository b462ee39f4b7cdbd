//! The event queue, ordered by (time, insertion sequence), so equal-time events run in the
//! order they were scheduled and every run is deterministic.
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
    /// A scheme's timer `kind` of `owner` number `id`; ignored unless `epoch` is still the
    /// owner's epoch for that kind (setting or cancelling a timer moves the epoch on).
    Timer {
        owner: TimerOwner,
        kind: u8,
        id: u32,
        epoch: u32,
    },
    /// A flow's retransmission timeout (lossy fabric); ignored unless `epoch` matches.
    Rto { flow: u32, epoch: u32 },
    /// A coalesced ACK is due; ignored unless it is the flow's `ack_due_ps`.
    AckTimer { flow: u32 },
    /// Scan for cycles of switch ports paused for the deadlock detection time.
    DeadlockCheck,
    /// The progress watchdog: has any byte been delivered since the last check?
    ProgressCheck,
    /// Take the periodic queue / utilization samples.
    SampleQueues,
    /// Take the periodic per-flow rate samples.
    SampleRates,
}

/// Timer kinds each owner (a flow's sender or receiver, a host, a port) may use: 0..TIMER_KINDS.
pub const TIMER_KINDS: usize = 4;
/// Current epoch per timer kind of one owner; an `Event::Timer` with an older epoch is stale.
pub type TimerEpochs = [u32; TIMER_KINDS];

/// Whose timer an `Event::Timer` is: a flow's sender or receiver part, a host's receiver part,
/// or a switch port's part of the scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TimerOwner {
    Sender,
    Receiver,
    Host,
    Port,
}

impl TimerOwner {
    const ALL: [TimerOwner; 4] = [Self::Sender, Self::Receiver, Self::Host, Self::Port];
}

/// Tags of the two events a run is made of (`Event::pack`), which the run loop dispatches
/// from the stored form without decoding the others (`RawEvent`).
pub const TAG_TX_DONE: u8 = 0;
pub const TAG_ARRIVE: u8 = 1;

/// An event as the queue stores it: a tag and two fields. The run loop dispatches the hot
/// tags on it directly, so one jump decides an event (decoding to `Event` first and then
/// matching that can cost a second jump, mispredicted as often).
#[derive(Clone, Copy, Debug)]
pub struct RawEvent([u64; 2]);

impl RawEvent {
    #[inline(always)]
    pub fn tag(self) -> u8 {
        self.0[0] as u8
    }
    /// The first field (a port, a flow, a host, a timer's owner id).
    #[inline(always)]
    pub fn a(self) -> u32 {
        (self.0[0] >> 32) as u32
    }
    /// The second field (a packet, an epoch).
    #[inline(always)]
    pub fn b(self) -> u32 {
        self.0[1] as u32
    }
    #[inline(always)]
    pub fn event(self) -> Event {
        Event::unpack(self.0)
    }
}

impl Event {
    /// The event in two words: the variant (and a timer's owner and kind) in the low bits of
    /// the first, its first id in the high half, its second id in the second word. Built in
    /// registers, so a push stores two words; an enum built on the stack and copied whole
    /// would wait for its own narrow stores to leave the store buffer.
    #[inline(always)]
    fn pack(self) -> [u64; 2] {
        let (tag, a, b) = match self {
            Event::TxDone { port } => (TAG_TX_DONE as u64, port, 0),
            Event::Arrive { port, pkt } => (TAG_ARRIVE as u64, port, pkt),
            Event::FlowStart { flow } => (2, flow, 0),
            Event::FlowStop { flow } => (3, flow, 0),
            Event::NicWake { host } => (4, host, 0),
            Event::Timer {
                owner,
                kind,
                id,
                epoch,
            } => (5 | (owner as u64) << 8 | (kind as u64) << 16, id, epoch),
            Event::Rto { flow, epoch } => (6, flow, epoch),
            Event::AckTimer { flow } => (7, flow, 0),
            Event::DeadlockCheck => (8, 0, 0),
            Event::ProgressCheck => (9, 0, 0),
            Event::SampleQueues => (10, 0, 0),
            Event::SampleRates => (11, 0, 0),
        };
        [tag | (a as u64) << 32, b as u64]
    }

    /// The event `pack` made `w` from.
    #[inline(always)]
    fn unpack(w: [u64; 2]) -> Event {
        let (a, b) = ((w[0] >> 32) as u32, w[1] as u32);
        match w[0] as u8 {
            TAG_TX_DONE => Event::TxDone { port: a },
            TAG_ARRIVE => Event::Arrive { port: a, pkt: b },
            2 => Event::FlowStart { flow: a },
            3 => Event::FlowStop { flow: a },
            4 => Event::NicWake { host: a },
            5 => Event::Timer {
                owner: TimerOwner::ALL[(w[0] >> 8) as usize & 3],
                kind: (w[0] >> 16) as u8,
                id: a,
                epoch: b,
            },
            6 => Event::Rto { flow: a, epoch: b },
            7 => Event::AckTimer { flow: a },
            8 => Event::DeadlockCheck,
            9 => Event::ProgressCheck,
            10 => Event::SampleQueues,
            _ => Event::SampleRates,
        }
    }
}

/// A pending event in the wheel. It holds no insertion sequence: a bucket's entries are kept
/// in the order they were scheduled and sorted stably by time (`EventQueue::advance`).
#[derive(Clone, Copy)]
struct Entry {
    time_ps: u64,
    ev: [u64; 2],
}

/// What a bucket's spare slots hold.
const SPARE: Entry = Entry {
    time_ps: 0,
    ev: [0; 2],
};

/// A pending event beyond the wheel's horizon, ordered by (time, sequence).
#[derive(Clone, Copy)]
struct FarEntry {
    time_ps: u64,
    seq: u64,
    ev: [u64; 2],
}

impl PartialEq for FarEntry {
    fn eq(&self, o: &Self) -> bool {
        self.time_ps == o.time_ps && self.seq == o.seq
    }
}
impl Eq for FarEntry {}
impl PartialOrd for FarEntry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for FarEntry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (time, seq) first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time_ps, o.seq).cmp(&(self.time_ps, self.seq))
    }
}

/// The entries of one bucket: `entries[..len]`. Slots past `len` are spare, so a push is a
/// store into the buffer (with `Vec::push`, whose grow path is a call, the compiler built each
/// entry on the stack and copied it, and the copy stalled on its own narrow stores). An empty
/// bucket holds no buffer; its first push takes a small drained one (`Spares`).
#[derive(Clone, Default)]
struct Bucket {
    entries: Vec<Entry>,
    len: usize,
}

/// Slots of a small buffer.
const SMALL_SLOTS: usize = 64;

/// Drained bucket buffers in two stacks, small (at most `SMALL_SLOTS` slots) and large, each
/// with the most recent (warmest) last. A bucket starts on a small buffer, and a small buffer
/// that must grow (a filling bucket's, or the sort's scratch) is traded for a large spare when
/// there is one: so a bucket of a few far-off timers does not hold a large buffer while a
/// filling bucket grows one of its own, and large buffers are made only when none is spare.
/// (With one stack every occupied bucket came to hold a large buffer: at k = 32, 10k grows
/// during the run and 146 against 110 MB peak.)
#[derive(Clone, Default)]
struct Spares {
    small: Vec<Vec<Entry>>,
    large: Vec<Vec<Entry>>,
}

impl Spares {
    #[inline(always)]
    fn put(&mut self, buffer: Vec<Entry>) {
        match buffer.len() {
            0 => {}
            1..=SMALL_SLOTS => self.small.push(buffer),
            _ => self.large.push(buffer),
        }
    }

    /// Replace `buffer` (a small one) by a large spare, if any, keeping its first `keep`
    /// entries; false when there is none.
    fn trade_up(&mut self, buffer: &mut Vec<Entry>, keep: usize) -> bool {
        let Some(large) = self.large.pop() else {
            return false;
        };
        let small = std::mem::replace(buffer, large);
        buffer[..keep].copy_from_slice(&small[..keep]);
        self.put(small);
        true
    }
}

impl Bucket {
    /// Make room for one more entry: a small buffer when the bucket has none (most buckets),
    /// a large one when it outgrows a small one, else twice the slots.
    #[inline(always)]
    fn reserve(&mut self, spares: &mut Spares) {
        if self.entries.is_empty() {
            if let Some(buffer) = spares.small.pop() {
                self.entries = buffer;
                return;
            }
        }
        self.grow(spares);
    }

    /// Trade a full small buffer for a large spare, else double the slots.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, spares: &mut Spares) {
        let small = (1..=SMALL_SLOTS).contains(&self.entries.len());
        if !(small && spares.trade_up(&mut self.entries, self.len)) {
            self.entries.resize((2 * self.len).max(SMALL_SLOTS), SPARE);
        }
    }

    /// Append an entry; `reserve` first when `len == entries.len()`.
    #[inline(always)]
    fn put(&mut self, time_ps: u64, ev: [u64; 2]) {
        let slot = &mut self.entries[self.len];
        slot.time_ps = time_ps;
        slot.ev = ev;
        self.len += 1;
    }

    #[inline(always)]
    fn push(&mut self, e: Entry, spares: &mut Spares) {
        if self.len == self.entries.len() {
            self.reserve(spares);
        }
        self.put(e.time_ps, e.ev);
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<Entry> {
        self.len = self.len.checked_sub(1)?;
        Some(self.entries[self.len])
    }

    /// The time of the entry `pop` returns next, if any.
    #[inline(always)]
    fn last_time_ps(&self) -> Option<u64> {
        self.len.checked_sub(1).map(|i| self.entries[i].time_ps)
    }

    /// Insert into entries sorted by descending time: after (below) every entry of a later
    /// time, before the entries of its own time, which were scheduled earlier and run first.
    fn insert_sorted(&mut self, e: Entry, spares: &mut Spares) {
        let at = self.events().partition_point(|x| x.time_ps > e.time_ps);
        self.push(e, spares);
        self.entries[at..self.len].rotate_right(1);
    }

    fn events(&self) -> &[Entry] {
        &self.entries[..self.len]
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// log2 of a wheel bucket's width in picoseconds (8.192 ns).
const BUCKET_SHIFT: u32 = 13;
/// A time's offset within its bucket.
const BUCKET_MASK_PS: u64 = (1 << BUCKET_SHIFT) - 1;
/// Number of wheel buckets (a horizon of 2048 x 8.192 ns = 16.8 us).
const NUM_BUCKETS: usize = 2048;
// The radix sort takes the time bits in two passes of at most 7.
const _: () = assert!(BUCKET_SHIFT <= 14);
/// Words of the bitmap of occupied buckets.
const OCCUPIED_WORDS: usize = NUM_BUCKETS / 64;
/// Buckets with fewer events are sorted in place by insertion, larger ones through keys.
const KEY_SORT_MIN_EVENTS: usize = 8;
/// Buckets with fewer events sort their keys by comparison, larger ones by radix.
const RADIX_MIN_EVENTS: usize = 32;

/// Deterministic pending-event set: a timing wheel of 8 ns buckets over a 16.8 us horizon
/// (where almost every packet event lands), the bucket being executed kept sorted (sorted once
/// when reached), a bitmap of occupied buckets to skip empty ones, and an overflow heap for
/// far-future timers. Pop order is exactly (time, insertion sequence), the same as one global
/// heap, at a fraction of the cost when 10k+ events are pending.
///
/// Why a bucket needs no sequence numbers: its events arrive in the order they are scheduled.
/// Those from the overflow heap were scheduled before any of the wheel's (an event goes to
/// the overflow only while its bucket is beyond the horizon, and the horizon only moves on),
/// and those scheduled into the bucket being executed come after both. So the insertion order
/// is the bucket's position order, and a stable sort by time gives (time, sequence).
///
/// Events scheduled into the bucket being executed (a short packet's transmission ending
/// within 8 ns) are kept apart in `soon`, all of them newer than the bucket's: inserting them
/// among a large fabric's thousand events of the bucket would move half of them each time.
#[derive(Clone)]
pub struct EventQueue {
    /// Events of the current bucket [cur_bucket << SHIFT, (cur_bucket + 1) << SHIFT), sorted
    /// by descending (time, insertion order) so the next event is the last one.
    current: Bucket,
    /// Events scheduled into the current bucket while it runs, sorted the same way; on equal
    /// times `current`'s run first.
    soon: Bucket,
    cur_bucket: u64,
    buckets: Vec<Bucket>,
    /// Bit `s` set: wheel slot `s` holds events.
    occupied: [u64; OCCUPIED_WORDS],
    in_wheel: usize,
    overflow: BinaryHeap<FarEntry>,
    /// Insertion sequence of the overflow's events.
    far_seq: u64,
    /// Drained bucket buffers.
    spares: Spares,
    /// Scratch for sorting a bucket (kept to reuse the allocations).
    keys: Vec<u64>,
    radix: Vec<u64>,
    sorted: Vec<Entry>,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            current: Bucket::default(),
            soon: Bucket::default(),
            cur_bucket: 0,
            buckets: (0..NUM_BUCKETS).map(|_| Bucket::default()).collect(),
            occupied: [0; OCCUPIED_WORDS],
            in_wheel: 0,
            overflow: BinaryHeap::new(),
            far_seq: 0,
            spares: Spares::default(),
            keys: Vec::new(),
            radix: Vec::new(),
            sorted: Vec::new(),
        }
    }
}

impl EventQueue {
    /// Schedule `ev` at absolute time `time_ps` (never earlier than the last popped event).
    #[inline(always)]
    pub fn push(&mut self, time_ps: u64, ev: Event) {
        let b = time_ps >> BUCKET_SHIFT;
        if b > self.cur_bucket && b < self.cur_bucket + NUM_BUCKETS as u64 {
            let slot = b as usize % NUM_BUCKETS;
            let bucket = &mut self.buckets[slot];
            if bucket.len == bucket.entries.len() {
                if bucket.len == 0 {
                    self.occupied[slot / 64] |= 1 << (slot % 64);
                }
                bucket.reserve(&mut self.spares);
            }
            bucket.put(time_ps, ev.pack());
            self.in_wheel += 1;
        } else {
            self.push_near_or_far(time_ps, ev.pack());
        }
    }

    /// An event for the bucket being executed (kept sorted) or beyond the wheel's horizon.
    #[inline(never)]
    fn push_near_or_far(&mut self, time_ps: u64, ev: [u64; 2]) {
        if time_ps >> BUCKET_SHIFT <= self.cur_bucket {
            (self.soon).insert_sorted(Entry { time_ps, ev }, &mut self.spares);
        } else {
            self.far_seq += 1;
            let seq = self.far_seq;
            self.overflow.push(FarEntry { time_ps, seq, ev });
        }
    }

    /// The first occupied wheel bucket after the current one.
    fn next_occupied(&self) -> Option<u64> {
        if self.in_wheel == 0 {
            return None;
        }
        let start = (self.cur_bucket + 1) as usize % NUM_BUCKETS;
        let mut word = start / 64;
        let mut bits = self.occupied[word] >> (start % 64) << (start % 64);
        // One more word than the bitmap: the start word again, for the slots before `start`.
        for _ in 0..=OCCUPIED_WORDS {
            if bits != 0 {
                let slot = word * 64 + bits.trailing_zeros() as usize;
                let ahead = (slot + NUM_BUCKETS - start) % NUM_BUCKETS;
                return Some(self.cur_bucket + 1 + ahead as u64);
            }
            word = (word + 1) % OCCUPIED_WORDS;
            bits = self.occupied[word];
        }
        unreachable!("events in the wheel but no bucket marked occupied")
    }

    /// Move to the next bucket with events (the wheel's or the overflow's, whichever comes
    /// first) and sort it; false when nothing is pending.
    fn advance(&mut self) -> bool {
        let wheel = self.next_occupied();
        let far =
            (self.overflow.peek()).map(|e| (e.time_ps >> BUCKET_SHIFT).max(self.cur_bucket + 1));
        self.cur_bucket = match (wheel, far) {
            (None, None) => return false,
            (Some(w), Some(f)) => w.min(f),
            (Some(b), None) | (None, Some(b)) => b,
        };
        if wheel == Some(self.cur_bucket) {
            let slot = self.cur_bucket as usize % NUM_BUCKETS;
            self.occupied[slot / 64] &= !(1 << (slot % 64));
            (self.spares).put(std::mem::take(&mut self.current.entries));
            self.current = std::mem::take(&mut self.buckets[slot]);
            self.in_wheel -= self.current.len;
        }
        let end = (self.cur_bucket + 1) << BUCKET_SHIFT;
        if self.overflow.peek().is_some_and(|e| e.time_ps < end) {
            self.prepend_overflow(end);
        }
        debug_assert!(!self.current.is_empty());
        self.sort_current();
        // Far-future events that now fall inside the horizon move into the wheel lazily:
        // they stay in `overflow` until their bucket comes up (checked above).
        true
    }

    /// Put the overflow's events before `end` ahead of the current bucket's, in their order:
    /// they were scheduled first.
    #[cold]
    fn prepend_overflow(&mut self, end: u64) {
        self.sorted.clear();
        while self.overflow.peek().is_some_and(|e| e.time_ps < end) {
            let e = self.overflow.pop().expect("peeked");
            let (time_ps, ev) = (e.time_ps, e.ev);
            self.sorted.push(Entry { time_ps, ev });
        }
        self.sorted.extend_from_slice(self.current.events());
        self.current.len = self.sorted.len();
        std::mem::swap(&mut self.current.entries, &mut self.sorted);
    }

    /// Sort the current bucket, whose entries are in insertion order, stably by time into
    /// descending order (the next event last). Small buckets by insertion in place; larger
    /// ones sort integer keys (time within the bucket, position) and gather the entries,
    /// cheaper than comparing and moving whole entries.
    fn sort_current(&mut self) {
        let n = self.current.len;
        if n < KEY_SORT_MIN_EVENTS {
            let v = &mut self.current.entries[..n];
            // Reversed, equal times are latest-inserted first; the insertion keeps them so.
            v.reverse();
            for i in 1..n {
                let e = v[i];
                let mut j = i;
                while j > 0 && v[j - 1].time_ps < e.time_ps {
                    v[j] = v[j - 1];
                    j -= 1;
                }
                v[j] = e;
            }
            return;
        }
        let entries = self.current.events();
        self.keys.clear();
        self.keys.extend(
            (entries.iter().enumerate())
                .map(|(i, e)| (e.time_ps & BUCKET_MASK_PS) << 32 | i as u64),
        );
        if n < RADIX_MIN_EVENTS {
            self.keys.sort_unstable();
        } else {
            // Stable LSD radix sort on the 13 bits of time (the position bits are in order):
            // no compare to mispredict, where a comparison sort mispredicts about half.
            for (shift, bits) in [(32, 7), (39, BUCKET_SHIFT - 7)] {
                let mask = (1 << bits) - 1;
                let mut at = [0u32; 1 << 7];
                for &k in &self.keys {
                    at[(k >> shift) as usize & mask] += 1;
                }
                let mut sum = 0;
                for a in &mut at[..1 << bits] {
                    (*a, sum) = (sum, sum + *a);
                }
                self.radix.resize(n, 0);
                for &k in &self.keys {
                    let d = (k >> shift) as usize & mask;
                    self.radix[at[d] as usize] = k;
                    at[d] += 1;
                }
                std::mem::swap(&mut self.keys, &mut self.radix);
            }
        }
        // Written over, not cleared and extended: a buffer keeps its slots as it goes between
        // buckets, the sort and the spares, so it grows only where a bucket outgrows it.
        if n > SMALL_SLOTS && self.sorted.len() <= SMALL_SLOTS {
            self.spares.trade_up(&mut self.sorted, 0);
        }
        if self.sorted.len() < n {
            self.sorted.resize(n, SPARE);
        }
        for (slot, &k) in self.sorted.iter_mut().zip(self.keys.iter().rev()) {
            *slot = entries[k as u32 as usize];
        }
        std::mem::swap(&mut self.current.entries, &mut self.sorted);
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        self.pop_raw().map(|(t, e)| (t, e.event()))
    }

    /// `pop`, the event as stored.
    #[inline(always)]
    pub fn pop_raw(&mut self) -> Option<(u64, RawEvent)> {
        let e = match self.soon.last_time_ps() {
            None => {
                if self.current.is_empty() && !self.advance() {
                    return None;
                }
                self.current.pop()
            }
            Some(t) if self.current.last_time_ps().is_some_and(|c| c <= t) => self.current.pop(),
            Some(_) => self.soon.pop(),
        };
        e.map(|e| (e.time_ps, RawEvent(e.ev)))
    }

    /// The time of the event `pop_raw` would return next, without removing it.
    pub fn peek_time(&mut self) -> Option<u64> {
        match self.soon.last_time_ps() {
            None => {
                if self.current.is_empty() && !self.advance() {
                    return None;
                }
                self.current.last_time_ps()
            }
            Some(t) => Some(self.current.last_time_ps().map_or(t, |c| c.min(t))),
        }
    }

    /// The event `n` places after the next one, when it is already in the bucket being
    /// executed (not counting `soon`'s few): the run loop prefetches the state it will touch.
    #[inline(always)]
    pub fn ahead(&self, n: usize) -> Option<Event> {
        let ev = self.current.events();
        (ev.len() > n).then(|| Event::unpack(ev[ev.len() - 1 - n].ev))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.current.len + self.soon.len + self.in_wheel + self.overflow.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
    fn equal_times_run_in_insertion_order_across_overflow_wheel_and_current_bucket() {
        let host = |e: Option<(u64, Event)>| match e {
            Some((_, Event::NicWake { host })) => host,
            other => panic!("{other:?}"),
        };
        let mut q = EventQueue::default();
        let t = (12_207 << BUCKET_SHIFT) + 4_000; // ~100 ms: beyond the horizon
        q.push(t, Event::NicWake { host: 0 });
        q.push(t - 100, Event::NicWake { host: 50 });
        q.push(t - 5_000_000, Event::NicWake { host: 99 });
        assert_eq!(host(q.pop()), 99);
        q.push(t, Event::NicWake { host: 1 }); // now within the horizon: the wheel
        assert_eq!(host(q.pop()), 50); // t's bucket: overflow and wheel entries merged
        q.push(t, Event::NicWake { host: 2 }); // into the bucket being executed
        let rest: Vec<u32> = (0..3).map(|_| host(q.pop())).collect();
        assert_eq!(rest, vec![0, 1, 2]);
        assert!(q.pop().is_none());
    }

    #[test]
    fn matches_a_reference_heap_on_random_schedules() {
        // Model check against BinaryHeap<(time, seq)>: random pushes near and far (beyond the
        // wheel horizon), interleaved with pops; the pop sequences must be identical.
        let mut rng = crate::sim::Rng::new(42, 0);
        for round in 0..20 {
            let mut q = EventQueue::default();
            let mut model = BinaryHeap::new();
            let mut now = 0u64;
            let mut seq = 0u32;
            for _ in 0..5000 {
                if rng.below(3) > 0 {
                    let far = rng.below(10) == 0;
                    let dt = if far {
                        rng.below(200_000_000)
                    } else {
                        rng.below(40_000)
                    };
                    seq += 1;
                    q.push(now + dt, Event::NicWake { host: seq });
                    model.push(std::cmp::Reverse((now + dt, seq)));
                } else {
                    let a = q.pop();
                    let b = model
                        .pop()
                        .map(|std::cmp::Reverse((t, s))| (t, Event::NicWake { host: s }));
                    assert_eq!(a, b, "round {round}");
                    if let Some((t, _)) = a {
                        now = t;
                    }
                }
            }
            while let Some(b) = model.pop() {
                let std::cmp::Reverse((t, s)) = b;
                assert_eq!(q.pop(), Some((t, Event::NicWake { host: s })));
            }
            assert!(q.pop().is_none() && q.is_empty());
        }
    }

    #[test]
    fn buckets_of_far_off_timers_keep_small_buffers() {
        // Each bucket run leaves 200 or 20 events two buckets on and one timer near the
        // horizon, as a large fabric's packets and timers do: only the few filling buckets
        // need large buffers, whatever the run's length.
        let mut q = EventQueue::default();
        let width = 1u64 << BUCKET_SHIFT;
        let mut due = [0usize; NUM_BUCKETS];
        for b in 0..4 * NUM_BUCKETS {
            q.push(
                (b + NUM_BUCKETS - 2) as u64 * width,
                Event::NicWake { host: 1 },
            );
            due[(b + NUM_BUCKETS - 2) % NUM_BUCKETS] += 1;
            // Every other bucket small enough for a small buffer but sorted through the
            // scratch buffer.
            let events = if b % 2 == 0 { 200 } else { 20 };
            for i in 0..events {
                q.push((b as u64 + 2) * width + i, Event::NicWake { host: 0 });
            }
            due[(b + 2) % NUM_BUCKETS] += events as usize;
            for _ in 0..std::mem::take(&mut due[b % NUM_BUCKETS]) {
                let (t, _) = q.pop().expect("due");
                assert_eq!(t / width, b as u64);
            }
        }
        let held = (q.buckets.iter().map(|b| &b.entries))
            .chain([&q.current.entries, &q.soon.entries, &q.sorted])
            .chain(&q.spares.small)
            .chain(&q.spares.large);
        let large = held.filter(|v| v.len() > SMALL_SLOTS).count();
        assert!(large <= 6, "{large} large buffers");
    }

    #[test]
    fn every_event_survives_packing() {
        let m = u32::MAX;
        let mut events = vec![
            Event::TxDone { port: m },
            Event::Arrive { port: 7, pkt: m },
            Event::FlowStart { flow: 3 },
            Event::FlowStop { flow: m },
            Event::NicWake { host: 5 },
            Event::Rto { flow: 6, epoch: m },
            Event::AckTimer { flow: m },
            Event::DeadlockCheck,
            Event::ProgressCheck,
            Event::SampleQueues,
            Event::SampleRates,
        ];
        for owner in TimerOwner::ALL {
            for (kind, id, epoch) in [(0, 0, 0), (255, m, m), (3, 1, m)] {
                events.push(Event::Timer {
                    owner,
                    kind,
                    id,
                    epoch,
                });
            }
        }
        for e in events {
            assert_eq!(Event::unpack(e.pack()), e);
        }
    }

    #[test]
    fn event_is_small() {
        assert!(std::mem::size_of::<Event>() <= 16);
        assert_eq!(std::mem::size_of::<Entry>(), 24);
    }
}
