//! The event queue, ordered by (time, canonical key): events at one instant run in an order
//! taken from the events themselves (`tie_key`), never from when or where they were
//! scheduled, so one simulation and any partitioning of it run the same events in the same
//! order. Events are small `Copy` values; timers are cancelled by epoch (a stale event is
//! ignored).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Something that happens at an instant. All ids are dense indices into the simulation's vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The port finished serializing its current packet and may start the next one.
    TxDone { port: u32 },
    /// A packet has been fully received at `port` (store-and-forward). `link_seq` is the
    /// sending port's bytes sent, this packet included, mod 2^32: it orders two arrivals of one
    /// link at one instant (a packet slot `pkt` depends on the partitioning and cannot).
    Arrive { port: u32, pkt: u32, link_seq: u32 },
    /// A flow becomes active at its sender.
    FlowStart { flow: u32 },
    /// A long-lived flow stops offering new data.
    FlowStop { flow: u32 },
    /// The receiver of a stopped long-lived flow hears of it (`Flow::rx_size_bytes`).
    StopHeard { flow: u32 },
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
    /// The event's place among events of its instant (`tie_key`).
    pub fn tie_key(self) -> (u64, u64) {
        tie_key(self.0)
    }
    #[inline(always)]
    pub fn event(self) -> Event {
        Event::unpack(self.0)
    }
}

impl Event {
    /// The event in two words: the variant (and a timer's owner and kind) in the low bits of
    /// the first, its first id in the high half, its second id in the low half of the second
    /// word (an arrival's `link_seq` in the high half). Built in
    /// registers, so a push stores two words; an enum built on the stack and copied whole
    /// would wait for its own narrow stores to leave the store buffer.
    #[inline(always)]
    fn pack(self) -> [u64; 2] {
        let (tag, a, b) = match self {
            Event::TxDone { port } => (TAG_TX_DONE as u64, port, 0),
            Event::Arrive {
                port,
                pkt,
                link_seq,
            } => (
                TAG_ARRIVE as u64,
                port,
                pkt as u64 | (link_seq as u64) << 32,
            ),
            Event::FlowStart { flow } => (2, flow, 0),
            Event::FlowStop { flow } => (3, flow, 0),
            Event::NicWake { host } => (4, host, 0),
            Event::Timer {
                owner,
                kind,
                id,
                epoch,
            } => (
                5 | (owner as u64) << 8 | (kind as u64) << 16,
                id,
                epoch as u64,
            ),
            Event::Rto { flow, epoch } => (6, flow, epoch as u64),
            Event::AckTimer { flow } => (7, flow, 0),
            Event::DeadlockCheck => (8, 0, 0),
            Event::ProgressCheck => (9, 0, 0),
            Event::SampleQueues => (10, 0, 0),
            Event::SampleRates => (11, 0, 0),
            Event::StopHeard { flow } => (12, flow, 0),
        };
        [tag | (a as u64) << 32, b]
    }

    /// The event `pack` made `w` from.
    #[inline(always)]
    fn unpack(w: [u64; 2]) -> Event {
        let (a, b) = ((w[0] >> 32) as u32, w[1] as u32);
        match w[0] as u8 {
            TAG_TX_DONE => Event::TxDone { port: a },
            TAG_ARRIVE => Event::Arrive {
                port: a,
                pkt: b,
                link_seq: (w[1] >> 32) as u32,
            },
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
            11 => Event::SampleRates,
            _ => Event::StopHeard { flow: a },
        }
    }
}

/// Where each tag's events run among the events of one instant: the whole-fabric checks
/// first (a parallel run makes them between windows, before the instant's events), then the
/// samples, then arrivals, departures, flow starts and stops, NIC wake-ups, timers, and
/// receivers hearing of stops.
const TIE_RANK: [u8; 13] = [5, 4, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 12];

/// The canonical order of events at one instant: the tag's rank, then the entity (port, flow,
/// host, timer owner), the timer's owner and kind, then the second field (an epoch; for an
/// arrival its place on the link, `link_seq`). Two events with equal keys are equal events,
/// so which runs first cannot matter.
#[inline]
fn tie_key(ev: [u64; 2]) -> (u64, u64) {
    let tag = ev[0] as u8;
    let rank = TIE_RANK[tag as usize] as u64;
    let second = if tag == TAG_ARRIVE {
        ev[1] >> 32
    } else {
        ev[1]
    };
    (rank << 56 | ev[0] >> 8, second)
}

/// True when entry `a` runs before entry `b`.
#[inline(always)]
fn runs_before(a: &Entry, b: &Entry) -> bool {
    a.time_ps < b.time_ps || (a.time_ps == b.time_ps && tie_key(a.ev) < tie_key(b.ev))
}

/// A pending event in the wheel. Its order is its time and then its own content
/// (`tie_key`), so no insertion sequence is kept.
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

/// A pending event beyond the wheel's horizon, ordered by (time, tie key).
#[derive(Clone, Copy)]
struct FarEntry(Entry);

impl PartialEq for FarEntry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for FarEntry {}
impl PartialOrd for FarEntry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for FarEntry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.0.time_ps.cmp(&self.0.time_ps)).then_with(|| tie_key(o.0.ev).cmp(&tie_key(self.0.ev)))
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

    /// The entry `pop` returns next, if any.
    #[inline(always)]
    fn last(&self) -> Option<&Entry> {
        self.len.checked_sub(1).map(|i| &self.entries[i])
    }

    /// The time of the entry `pop` returns next, if any.
    #[inline(always)]
    fn last_time_ps(&self) -> Option<u64> {
        self.last().map(|e| e.time_ps)
    }

    /// Insert into entries sorted in descending run order: below every entry that runs after
    /// it.
    fn insert_sorted(&mut self, e: Entry, spares: &mut Spares) {
        let at = self.events().partition_point(|x| runs_before(&e, x));
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

/// log2 of a wheel bucket's width in picoseconds (4.096 ns). Half of 8.192 ns took 6% of
/// the instructions off the k = 8 fat-tree (a bucket there held 8-31 events, which a
/// comparison sort orders at about 60 instructions each) and added 3% to a 16-to-1 incast,
/// whose sparse events each take a bucket of their own (docs/benchmarks.md).
const BUCKET_SHIFT: u32 = 12;
/// A time's offset within its bucket.
const BUCKET_MASK_PS: u64 = (1 << BUCKET_SHIFT) - 1;
/// Number of wheel buckets (a horizon of 4096 x 4.096 ns = 16.8 us).
const NUM_BUCKETS: usize = 4096;
// The radix sort takes the time bits in two passes of at most 7.
const _: () = assert!(BUCKET_SHIFT <= 14);
/// Words of the bitmap of occupied buckets.
const OCCUPIED_WORDS: usize = NUM_BUCKETS / 64;
/// Buckets with fewer events are sorted in place by insertion, larger ones through keys.
const KEY_SORT_MIN_EVENTS: usize = 8;
/// Buckets with fewer events sort their keys by comparison, larger ones by radix.
const RADIX_MIN_EVENTS: usize = 32;

/// Deterministic pending-event set: a timing wheel of 4 ns buckets over a 16.8 us horizon
/// (where almost every packet event lands), the bucket being executed kept sorted (sorted once
/// when reached), a bitmap of occupied buckets to skip empty ones, and an overflow heap for
/// far-future timers. Pop order is exactly (time, `tie_key`), the same as one global heap's,
/// at a fraction of the cost when 10k+ events are pending. A bucket is sorted by time, and
/// only runs of equal times (rare but for synchronized starts and identical links) by key.
///
/// Events scheduled into the bucket being executed (a short packet's transmission ending
/// within 4 ns) are kept apart in `soon`: inserting them among a large fabric's thousand
/// events of the bucket would move half of them each time.
#[derive(Clone)]
pub struct EventQueue {
    /// Events of the current bucket [cur_bucket << SHIFT, (cur_bucket + 1) << SHIFT), sorted
    /// by descending (time, tie key) so the next event is the last one.
    current: Bucket,
    /// Events scheduled into the current bucket while it runs, sorted the same way.
    soon: Bucket,
    cur_bucket: u64,
    buckets: Vec<Bucket>,
    /// Bit `s` set: wheel slot `s` holds events.
    occupied: [u64; OCCUPIED_WORDS],
    in_wheel: usize,
    overflow: BinaryHeap<FarEntry>,
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

    /// `push` of an event as stored (`pop_raw`).
    pub fn push_raw(&mut self, time_ps: u64, ev: RawEvent) {
        self.push(time_ps, ev.event());
    }

    /// An event for the bucket being executed (kept sorted) or beyond the wheel's horizon.
    #[inline(never)]
    fn push_near_or_far(&mut self, time_ps: u64, ev: [u64; 2]) {
        if time_ps >> BUCKET_SHIFT <= self.cur_bucket {
            (self.soon).insert_sorted(Entry { time_ps, ev }, &mut self.spares);
        } else {
            self.overflow.push(FarEntry(Entry { time_ps, ev }));
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
            (self.overflow.peek()).map(|e| (e.0.time_ps >> BUCKET_SHIFT).max(self.cur_bucket + 1));
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
        if self.overflow.peek().is_some_and(|e| e.0.time_ps < end) {
            self.prepend_overflow(end);
        }
        debug_assert!(!self.current.is_empty());
        self.sort_current();
        // Far-future events that now fall inside the horizon move into the wheel lazily:
        // they stay in `overflow` until their bucket comes up (checked above).
        true
    }

    /// Add the overflow's events before `end` to the current bucket (which is sorted next).
    #[cold]
    fn prepend_overflow(&mut self, end: u64) {
        self.sorted.clear();
        while self.overflow.peek().is_some_and(|e| e.0.time_ps < end) {
            let e = self.overflow.pop().expect("peeked");
            self.sorted.push(e.0);
        }
        self.sorted.extend_from_slice(self.current.events());
        self.current.len = self.sorted.len();
        std::mem::swap(&mut self.current.entries, &mut self.sorted);
    }

    /// Sort the current bucket into descending run order (the next event last). Small
    /// buckets by insertion in place; larger ones sort integer keys (time within the bucket,
    /// position) and gather the entries, cheaper than comparing and moving whole entries,
    /// each run of equal times sorted by tie key.
    fn sort_current(&mut self) {
        let n = self.current.len;
        if n < KEY_SORT_MIN_EVENTS {
            let v = &mut self.current.entries[..n];
            for i in 1..n {
                let e = v[i];
                let mut j = i;
                while j > 0 && runs_before(&v[j - 1], &e) {
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
        // Each run of equal times (keys equal above the position bits) by tie key.
        let mut i = 1;
        while i < n {
            if (self.keys[i] ^ self.keys[i - 1]) >> 32 != 0 {
                i += 1;
                continue;
            }
            let from = i - 1;
            while i < n && (self.keys[i] ^ self.keys[from]) >> 32 == 0 {
                i += 1;
            }
            self.keys[from..i].sort_unstable_by_key(|&k| tie_key(entries[k as u32 as usize].ev));
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
            Some(t)
                if self.current.last().is_some_and(|c| {
                    c.time_ps < t
                        || (c.time_ps == t && !runs_before(self.soon.last().expect("some"), c))
                }) =>
            {
                self.current.pop()
            }
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
    pub fn ahead(&self, n: usize) -> Option<RawEvent> {
        let ev = self.current.events();
        (ev.len() > n).then(|| RawEvent(ev[ev.len() - 1 - n].ev))
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

    /// Events at one instant, each kind once, in the order `tie_key` gives them.
    fn one_of_each_in_tie_order() -> Vec<Event> {
        let timer = |owner, kind, id, epoch| Event::Timer {
            owner,
            kind,
            id,
            epoch,
        };
        vec![
            Event::DeadlockCheck,
            Event::ProgressCheck,
            Event::SampleQueues,
            Event::SampleRates,
            Event::Arrive {
                port: 0,
                pkt: 9,
                link_seq: 5,
            },
            Event::Arrive {
                port: 0,
                pkt: 3,
                link_seq: 6,
            },
            Event::Arrive {
                port: 2,
                pkt: 1,
                link_seq: 0,
            },
            Event::TxDone { port: 1 },
            Event::TxDone { port: 4 },
            Event::FlowStart { flow: 3 },
            Event::FlowStop { flow: 3 },
            Event::NicWake { host: 0 },
            timer(TimerOwner::Sender, 0, 1, 7),
            timer(TimerOwner::Receiver, 0, 1, 2),
            timer(TimerOwner::Sender, 2, 1, 1),
            timer(TimerOwner::Port, 0, 2, 1),
            Event::Rto { flow: 0, epoch: 1 },
            Event::AckTimer { flow: 0 },
            Event::StopHeard { flow: 0 },
        ]
    }

    #[test]
    fn ties_run_in_the_canonical_order_whatever_the_insertion_order() {
        // The order of one instant's events is theirs alone (`tie_key`): any insertion order,
        // into the wheel, the overflow or the bucket being executed, gives the same pops. An
        // arrival is placed by its place on the link, never by its packet slot.
        let want = one_of_each_in_tie_order();
        let mut rng = crate::sim::Rng::new(5, 0);
        for t in [70_000, 200_000_000] {
            for _ in 0..50 {
                let mut evs = want.clone();
                for i in (1..evs.len()).rev() {
                    evs.swap(i, rng.below(i as u64 + 1) as usize);
                }
                let mut q = EventQueue::default();
                q.push(t - 1, Event::NicWake { host: 99 });
                let (half, rest) = evs.split_at(evs.len() / 2);
                for &e in half {
                    q.push(t, e);
                }
                assert_eq!(q.pop().map(|p| p.0), Some(t - 1));
                for &e in rest {
                    q.push(t, e);
                }
                let got: Vec<Event> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
                assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn an_event_at_the_current_instant_with_a_smaller_key_runs_next() {
        let mut q = EventQueue::default();
        for port in [5, 6] {
            q.push(100, Event::TxDone { port });
        }
        assert_eq!(q.pop(), Some((100, Event::TxDone { port: 5 })));
        q.push(100, Event::TxDone { port: 1 });
        q.push(100, Event::TxDone { port: 9 });
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        let ports = [1, 6, 9].map(|port| Event::TxDone { port });
        assert_eq!(rest, ports);
    }

    #[test]
    fn equal_times_run_in_key_order_across_overflow_wheel_and_current_bucket() {
        let host = |e: Option<(u64, Event)>| match e {
            Some((_, Event::NicWake { host })) => host,
            other => panic!("{other:?}"),
        };
        let mut q = EventQueue::default();
        let t = (12_207 << BUCKET_SHIFT) + 4_000; // ~50 us: beyond the horizon
        q.push(t, Event::NicWake { host: 2 });
        q.push(t - 100, Event::NicWake { host: 50 });
        q.push(t - 5_000_000, Event::NicWake { host: 99 });
        assert_eq!(host(q.pop()), 99);
        q.push(t, Event::NicWake { host: 0 }); // now within the horizon: the wheel
        assert_eq!(host(q.pop()), 50); // t's bucket: overflow and wheel entries merged
        q.push(t, Event::NicWake { host: 1 }); // into the bucket being executed
        let rest: Vec<u32> = (0..3).map(|_| host(q.pop())).collect();
        assert_eq!(rest, vec![0, 1, 2]);
        assert!(q.pop().is_none());
    }

    #[test]
    fn matches_a_reference_heap_on_random_schedules() {
        // Model check against BinaryHeap<(time, host)>, `tie_key`'s order for NIC wake-ups:
        // random pushes near and far (beyond the wheel horizon), interleaved with pops; the pop
        // sequences must be identical.
        let mut rng = crate::sim::Rng::new(42, 0);
        for round in 0..20 {
            let mut q = EventQueue::default();
            let mut model = BinaryHeap::new();
            let mut now = 0u64;
            for _ in 0..5000 {
                if rng.below(3) > 0 {
                    let far = rng.below(10) == 0;
                    let dt = if far {
                        rng.below(200_000_000)
                    } else {
                        rng.below(40_000)
                    };
                    let host = rng.below(1 << 20) as u32;
                    q.push(now + dt, Event::NicWake { host });
                    model.push(std::cmp::Reverse((now + dt, host)));
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
            Event::Arrive {
                port: 7,
                pkt: m,
                link_seq: m - 1,
            },
            Event::FlowStart { flow: 3 },
            Event::FlowStop { flow: m },
            Event::StopHeard { flow: 9 },
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
