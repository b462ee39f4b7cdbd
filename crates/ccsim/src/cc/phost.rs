//! pHost: receiver-driven transport with free tokens, a paced token per packet time and source
//! downgrading, as the AMRT paper's simulations configure it.
//!
//! Sources: Gao et al., "pHost: Distributed Near-Optimal Datacenter Transport Over Commodity
//! Network Fabric", CoNEXT 2015; the AMRT paper (Hu et al., IEEE TNSM 2023) §VIII-A for the
//! settings it compares against: fair scheduling at receivers, one BDP of free tokens per flow,
//! a sender downgraded for 3 RTTs when its unexpired tokens exceed one BDP; the pHost
//! authors' simulator (its capability host, `capability_timeout 1.5`,
//! `capability_resend_timeout 9`) for the token lifetime and the resend timeout.
//!
//! * **Sender:** at start, an RTS to the receiver and `free_tokens` packets (default one BDP of
//!   the flow's path) at line rate; then one packet per token. A token unused for
//!   `token_lifetime` (1.5 packet times) expires. A token naming a packet resends it.
//! * **Receiver** (per host): a pacer sends one token per packet time (a full data packet on
//!   the wire at the receiver's link rate) while some inbound flow needs one, to the next flow in round-robin
//!   order (`policy = "fair"`) or to the one with the fewest packets yet to arrive
//!   (`"srpt"`, the testbed version of §VII). A source that leaves over one BDP (in packets of
//!   its path) of tokens unused is downgraded (skipped) for `downgrade_rtts` RTTs. A receiver
//!   cannot see a token expire at the sender (1.5 packet times after it arrives); it sees a
//!   token answered (a packet sent on a token arrives; answers come in order) or overdue: sent
//!   over one base RTT ago and unanswered, so expired unused, or waiting in a queue. ccsim
//!   counts the overdue tokens against the BDP; a downgrade forgives them (after 3 RTTs every
//!   one has expired). A sender that answers every token has only its queueing's worth
//!   overdue; one kept busy by other receivers falls behind by half its tokens and is
//!   downgraded within about two RTTs. Two readings that do not work, measured: aging tokens
//!   out after one RTT plus their lifetime caps the count just below a BDP, so no flow is ever
//!   downgraded; counting every unanswered token (the pHost simulator's capability gap) puts a
//!   lone flow's own RTT of tokens in flight at the threshold, and with 3-RTT downgrades a
//!   permutation inside one leaf of the AMRT leaf-spine ran at 34 of 100 Gb/s a flow.
//!   Downgrades are counted in the run's `scheme_counters`.
//!   Loss recovery in rounds, as the pHost simulator's receiver does: once a flow has had
//!   every token it needs and `resend_after` has passed since its last one, it owes one token
//!   to each packet that has not arrived, each token naming the packet; those go out through
//!   the pacer like any other, and the next round starts `resend_after` after the last of them.
//!   `resend_after` defaults to the larger of 9 packet times (the simulator's
//!   `capability_resend_timeout`) and one base RTT (ccsim's: a packet still in flight is then
//!   not asked for twice). A long-lived flow has no last packet (the simulator has none):
//!   there a round also starts when the first hole has not moved for `resend_after`, for the
//!   packets missing below the highest one that arrived (ccsim's).
//! * **`clock = "arrival"`** (ccsim's option): pHost as the AMRT paper's §III-A and §VII
//!   describe the one they measured: "once a packet arrives at the receiver, a corresponding
//!   grant is generated". Each data packet that arrives whole earns its own flow one token at
//!   once, so a flow keeps its free packets (one BDP) in flight, clocked by its arrivals; the
//!   pacer only runs the recovery rounds (which also restart a flow whose packets in flight
//!   were all lost). A token that expires unused (its sender busy with another flow) shrinks
//!   the flow's window for good: the AMRT paper's point that this pHost cannot take bandwidth
//!   others leave (its Fig. 2). A lost packet takes its token too, and a flow whose packets
//!   keep arriving never reaches its last token, so a hole that stays `resend_after` starts a
//!   round as for a long-lived flow, and each packet it repairs earns its token back
//!   (ccsim's: with recovery only after the last token, a Web Search flow whose window had
//!   collapsed to two packets kept a hole from 2.3 ms and had 342 KB of 37.7 MB in order at
//!   300 ms). A source gets tokens only for what it delivers, so it cannot pile up unused
//!   ones: the downgrade is the pacer's (`clock = "paced"`) alone.
//! * **Sender backstop** (`cc/backstop.rs`, ccsim's).

use super::backstop::Backstop;
use super::{
    AckInfo, BaseRtt, CtrlInfo, DataInfo, DataOut, FabricMode, HostCtx, Params,
    ReceiverPart, Rx, Scheme, SchemeInfo, SenderPart, Tx,
};
use crate::net::{Mark, SchemeHdr};
use crate::sim::input::ScenarioError;
use crate::sim::quantity::Time;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// The scheme type of `phost`.
pub struct PHost;

/// Control codes: the sender's request to send (`hdr.a`: its free packets), and a token
/// (`hdr.b` = 1 + the index of a packet to send again, 0: the next packet).
pub const RTS: u8 = 1;
pub const TOKEN: u8 = 2;
const EXPIRY_TIMER: u8 = 0;
const BACKSTOP_TIMER: u8 = 1;
const PACER_TIMER: u8 = 0;

impl Scheme for PHost {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "phost",
        description: "pHost: RTS plus one BDP of free tokens at line rate, then a receiver pacer sends one token per packet time round-robin over its flows (or SRPT), tokens expire after 1.5 packet times, a source with over a BDP of overdue tokens is downgraded for 3 RTTs, missing packets re-tokened after a resend timeout; clock = \"arrival\": one token per arriving packet instead, the pHost the AMRT paper describes. Lossy fabric.",
        paper: "Gao et al., pHost: Distributed Near-Optimal Datacenter Transport Over Commodity Network Fabric, CoNEXT 2015 (settings of the AMRT paper, IEEE TNSM 2023, §VIII-A)",
        base_rtt: BaseRtt::Path,
        own_recovery: true,
        first_window: true,
        fabric: FabricMode::Lossy,
        ..SchemeInfo::BASE
    }];
    type Params = PHostParams;
    type Sender = PHostSender;
    type Receiver = PHostReceiver;
    type Switch = ();
    fn default_params(_: &str) -> PHostParams {
        PHostParams::default()
    }
}

/// Which inbound flow a receiver tokens next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Round-robin over the flows that may have a token (§VIII-A).
    Fair,
    /// Fewest packets yet to arrive first (the pHost paper and simulator; AMRT's testbed, §VII).
    Srpt,
}

/// What paces a receiver's tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// One token per packet time from the receiver's pacer (the pHost paper; AMRT §VIII-A).
    Paced,
    /// One token per data packet that arrives, to its flow (AMRT §III-A and §VII).
    Arrival,
}

/// pHost parameters (module header: meaning, defaults, source).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PHostParams {
    pub policy: Policy,
    pub clock: Clock,
    /// Packets a flow sends before any token; 0 = one BDP of its path.
    pub free_tokens: u32,
    /// A token unused for this many packet times expires.
    pub token_lifetime: f64,
    /// A source is skipped for this many RTTs when its outstanding tokens exceed one BDP.
    pub downgrade_rtts: f64,
    /// A recovery round starts this long after a flow's last token; 0 = max(9 packet times,
    /// one base RTT).
    pub resend_after: Time,
    /// The sender's backstop; 0 = four base RTTs.
    pub sender_timeout: Time,
}

impl Default for PHostParams {
    fn default() -> Self {
        PHostParams {
            policy: Policy::Fair,
            clock: Clock::Paced,
            free_tokens: 0,
            token_lifetime: 1.5,
            downgrade_rtts: 3.0,
            resend_after: Time(0),
            sender_timeout: Time(0),
        }
    }
}

impl Params for PHostParams {
    fn validate(&self) -> Result<(), ScenarioError> {
        for (field, v) in [
            ("token_lifetime", self.token_lifetime),
            ("downgrade_rtts", self.downgrade_rtts),
        ] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(ScenarioError::new(
                    &format!("cc.params.{field}"),
                    "must be a number > 0",
                ));
            }
        }
        Ok(())
    }
}

/// The time of a full data packet of `wire_bytes` at `rate_bps`.
fn packet_time_ps(wire_bytes: u64, rate_bps: u64) -> u64 {
    crate::sim::tx_time_ps(wire_bytes, rate_bps.max(1)).max(1)
}

/// Free packets of a flow: the parameter, or one BDP of its path (at least one).
fn free_packets(p: &PHostParams, size_packets: u64, bdp_bytes: u64, mtu: u64) -> u64 {
    let free = if p.free_tokens > 0 {
        p.free_tokens as u64
    } else {
        bdp_bytes.div_ceil(mtu).max(1)
    };
    free.min(size_packets)
}

/// Per-flow sender state.
#[derive(Clone, Debug, Default)]
pub struct PHostSender {
    /// Free packets, and those not yet sent.
    free: u64,
    free_left: u64,
    /// Expiry times of the tokens not yet used, oldest first.
    tokens: VecDeque<u64>,
    lifetime_ps: u64,
    pub backstop: Backstop,
    /// Tokens received, and those that expired unused.
    pub tokens_received: u64,
    pub tokens_expired: u64,
}

impl SenderPart<PHostParams> for PHostSender {
    fn new(_: &PHostParams) -> Self {
        PHostSender::default()
    }
    fn on_start(&mut self, p: &PHostParams, tx: &mut Tx) {
        let mtu = tx.mtu_payload_bytes();
        let packet_ps = packet_time_ps(tx.mtu_wire_bytes(), tx.last_hop_bps());
        self.lifetime_ps = (p.token_lifetime * packet_ps as f64) as u64;
        self.free = match tx.first_window_bytes() {
            Some(own) => own.div_ceil(mtu).min(tx.size_bytes().div_ceil(mtu)),
            None => free_packets(p, tx.size_bytes().div_ceil(mtu), tx.bdp_bytes(), mtu),
        };
        self.free_left = self.free;
        tx.ctl().credit_bytes = self.free_left * mtu;
        let a = self.free_left.min(u32::MAX as u64) as u32;
        tx.send_ctrl(RTS, SchemeHdr { a, b: 0 }, Mark::None);
        self.backstop.start(tx, p.sender_timeout.0, BACKSTOP_TIMER);
    }
    fn on_send(&mut self, _: &PHostParams, _: &mut Tx, d: &mut DataOut) {
        // A token is used before a free packet, so none waits behind the free ones to expire.
        // The header tells the receiver the flow's free packets (as the RTS does) and whether
        // this packet answers a token.
        let on_token = self.tokens.pop_front().is_some();
        if !on_token {
            self.free_left = self.free_left.saturating_sub(1);
        }
        d.hdr = SchemeHdr {
            a: self.free.min(u32::MAX as u64) as u32,
            b: on_token as u32,
        };
    }
    fn on_ctrl(&mut self, _: &PHostParams, tx: &mut Tx, c: &CtrlInfo) {
        if c.code != TOKEN {
            return;
        }
        self.tokens_received += 1;
        self.backstop.heard(tx.now_ps);
        if c.hdr.b > 0 {
            let seq = (c.hdr.b as u64 - 1) * tx.mtu_payload_bytes();
            if seq < tx.snd_nxt() {
                tx.resend(seq);
            }
        }
        let expiry = tx.now_ps + self.lifetime_ps;
        if self.tokens.is_empty() {
            tx.set_timer(EXPIRY_TIMER, expiry);
        }
        self.tokens.push_back(expiry);
        let mtu = tx.mtu_payload_bytes();
        let ctl = tx.ctl();
        ctl.credit_bytes = ctl.credit_bytes.saturating_add(mtu);
    }
    fn on_ack(&mut self, _: &PHostParams, tx: &mut Tx, _: &AckInfo) {
        self.backstop.heard(tx.now_ps);
    }
    fn on_timer(&mut self, _: &PHostParams, tx: &mut Tx, kind: u8) {
        if kind == BACKSTOP_TIMER {
            self.backstop.on_timer(tx, kind);
            return;
        }
        let mtu = tx.mtu_payload_bytes();
        while self.tokens.front().is_some_and(|&t| t <= tx.now_ps) {
            self.tokens.pop_front();
            self.tokens_expired += 1;
            let ctl = tx.ctl();
            ctl.credit_bytes = ctl.credit_bytes.saturating_sub(mtu);
        }
        if let Some(&next) = self.tokens.front() {
            tx.set_timer(EXPIRY_TIMER, next);
        }
    }
}

/// Per-flow receiver state: nothing beyond the host's.
#[derive(Clone, Debug, Default)]
pub struct PHostReceiver;

/// A receiving host's view of one inbound flow.
#[derive(Clone, Debug, Default)]
struct InFlow {
    /// Send times of the tokens no data has answered yet, oldest first (answers come in
    /// order; a downgrade forgives them all).
    unanswered: VecDeque<u64>,
    packets: u64,
    /// Packets tokened for new data (free ones included), and those that arrived whole.
    issued: u64,
    arrived: u64,
    /// The packets beyond the first hole that arrived (the pacer's recovery needs them
    /// outside the flow's hooks).
    got: BTreeSet<u64>,
    /// Tokens still owed to missing packets in this recovery round, and where the round's
    /// search for the next missing packet goes on from.
    owed: u64,
    cursor: u64,
    /// Every byte below it has arrived.
    rcv_nxt: u64,
    bdp_packets: u64,
    rtt_ps: u64,
    /// Skipped until then.
    downgraded_until_ps: u64,
    /// When the flow was last tokened.
    last_token_ps: u64,
    /// A long-lived flow (no last packet): one past the highest packet that arrived, and since
    /// when the first hole has not moved.
    long_lived: bool,
    seen_end: u64,
    hole_since_ps: u64,
}

impl InFlow {
    fn has(&self, i: u64, mtu: u64) -> bool {
        i < self.rcv_nxt / mtu.max(1) || self.got.contains(&i)
    }
    /// The next packet below `issued` that has not arrived, from the cursor on, wrapping to
    /// the first hole.
    fn next_missing(&mut self, mtu: u64) -> Option<u64> {
        let first = self.rcv_nxt / mtu.max(1);
        if self.cursor < first || self.cursor >= self.issued {
            self.cursor = first;
        }
        for _ in 0..2 {
            while self.cursor < self.issued {
                let i = self.cursor;
                self.cursor += 1;
                if !self.has(i, mtu) {
                    return Some(i);
                }
            }
            self.cursor = first;
        }
        None
    }
}

/// A receiving host: its inbound flows and its token pacer.
#[derive(Clone, Debug, Default)]
pub struct PHostHost {
    flows: BTreeMap<u32, InFlow>,
    /// The pacer's period and whether it is running.
    tick_ps: u64,
    running: bool,
    /// The last flow tokened (round-robin cursor).
    last: u32,
    mtu: u64,
    /// Tokens sent, and downgrades.
    pub tokens_sent: u64,
    pub downgrades: u64,
}

impl PHostReceiver {
    /// Learn flow `rx` (with `free` free packets) at the host and start the pacer if idle.
    fn note<'h>(host: &'h mut PHostHost, rx: &mut Rx, free: u64) -> &'h mut InFlow {
        let mtu = rx.mtu_payload_bytes();
        let bdp_bytes = (rx.base_rtt_ps() as u128 * rx.last_hop_bps() as u128
            / 8
            / crate::sim::PS_PER_S as u128) as u64;
        let now = rx.now_ps;
        if host.tick_ps == 0 {
            host.tick_ps = packet_time_ps(rx.mtu_wire_bytes(), rx.last_hop_bps());
            host.mtu = mtu;
        }
        if !host.running {
            host.running = true;
            rx.set_host_timer(PACER_TIMER, now);
        }
        let f = host.flows.entry(rx.flow_id()).or_insert_with(|| {
            let packets = rx.size_bytes().div_ceil(mtu);
            InFlow {
                packets,
                bdp_packets: bdp_bytes.div_ceil(mtu).max(1),
                rtt_ps: rx.base_rtt_ps(),
                last_token_ps: now,
                long_lived: rx.size_bytes() == crate::transport::UNBOUNDED,
                ..InFlow::default()
            }
        });
        f.issued = f.issued.max(free.min(f.packets));
        f
    }
}

impl ReceiverPart<PHostParams> for PHostReceiver {
    type Host = PHostHost;
    fn new(_: &PHostParams) -> Self {
        PHostReceiver
    }
    fn on_ctrl(&mut self, host: &mut PHostHost, _: &PHostParams, rx: &mut Rx, c: &CtrlInfo) {
        if c.code == RTS {
            Self::note(host, rx, c.hdr.a as u64);
        }
    }
    fn on_data(&mut self, host: &mut PHostHost, p: &PHostParams, rx: &mut Rx, d: &DataInfo) {
        let (now, rcv_nxt, mtu) = (rx.now_ps, rx.rcv_nxt(), rx.mtu_payload_bytes());
        let f = Self::note(host, rx, d.hdr.a as u64);
        let i = d.seq / mtu;
        let new = !d.trimmed && i < f.packets && !f.has(i, mtu);
        if rcv_nxt != f.rcv_nxt {
            f.hole_since_ps = now;
        }
        f.rcv_nxt = rcv_nxt;
        if new {
            f.seen_end = f.seen_end.max(i + 1);
        }
        let first_hole = rcv_nxt / mtu;
        while f.got.first().is_some_and(|&g| g < first_hole) {
            f.got.pop_first();
        }
        if new {
            if i >= first_hole {
                f.got.insert(i);
            }
            f.arrived += 1;
            if d.hdr.b == 1 && p.clock == Clock::Paced {
                f.unanswered.pop_front();
            }
            if p.clock == Clock::Arrival && f.issued < f.packets {
                f.issued += 1;
                f.last_token_ps = now;
                host.tokens_sent += 1;
                rx.send_ctrl(TOKEN, SchemeHdr { a: 0, b: 0 }, Mark::None);
            }
        }
        if rcv_nxt >= rx.size_bytes() {
            host.flows.remove(&rx.flow_id());
        }
    }
    fn counters(hosts: &[PHostHost], _: &[PHostReceiver]) -> Vec<(&'static str, u64)> {
        vec![
            ("tokens_sent", hosts.iter().map(|h| h.tokens_sent).sum()),
            ("downgrades", hosts.iter().map(|h| h.downgrades).sum()),
        ]
    }
    fn on_host_timer(host: &mut PHostHost, p: &PHostParams, hx: &mut HostCtx, _: u8) {
        let now = hx.now_ps;
        let mut next_wake = u64::MAX;
        let mut pick: Option<(u64, u32)> = None;
        for (&id, f) in host.flows.iter_mut() {
            if f.downgraded_until_ps > now {
                next_wake = next_wake.min(f.downgraded_until_ps);
                continue;
            }
            // Overdue: sent over one base RTT ago and still unanswered.
            let due = now.saturating_sub(f.rtt_ps);
            if p.clock == Clock::Paced
                && f.unanswered.partition_point(|&t| t < due) as u64 > f.bdp_packets
            {
                f.downgraded_until_ps = now + (p.downgrade_rtts * f.rtt_ps as f64) as u64;
                f.unanswered.clear();
                host.downgrades += 1;
                next_wake = next_wake.min(f.downgraded_until_ps);
                continue;
            }
            let new_data = p.clock == Clock::Paced && f.issued < f.packets;
            let after = if p.resend_after.0 > 0 {
                p.resend_after.0
            } else {
                (9 * host.tick_ps).max(f.rtt_ps)
            };
            let first = f.rcv_nxt / host.mtu.max(1);
            if f.owed == 0 && (f.long_lived || p.clock == Clock::Arrival) && f.seen_end > first {
                // No last packet to wait for (long-lived), or no last token while packets keep
                // arriving (arrival clock): a hole that stays `resend_after` starts a round for
                // the packets missing below the highest arrival.
                if now >= f.hole_since_ps + after {
                    f.owed = f.seen_end - first - f.got.len() as u64;
                    f.cursor = 0;
                    f.hole_since_ps = now;
                } else {
                    next_wake = next_wake.min(f.hole_since_ps + after);
                }
            }
            if f.owed == 0 && !new_data {
                // A recovery round: once `resend_after` has passed since the flow's last token,
                // one token for each packet issued so far that has not arrived.
                let missing = f.issued.saturating_sub(f.arrived);
                if missing == 0 {
                    continue;
                }
                if now < f.last_token_ps + after {
                    next_wake = next_wake.min(f.last_token_ps + after);
                    continue;
                }
                f.owed = missing;
                f.cursor = 0;
            }
            let key = match p.policy {
                // Round-robin: the first flow after the last one served, wrapping.
                Policy::Fair => (id <= host.last) as u64,
                Policy::Srpt => f.packets.saturating_sub(f.arrived),
            };
            if pick.is_none_or(|(k, pid)| (key, id) < (k, pid)) {
                pick = Some((key, id));
            }
        }
        let Some((_, id)) = pick else {
            host.running = next_wake != u64::MAX;
            if host.running {
                hx.set_timer(PACER_TIMER, next_wake);
            }
            return;
        };
        let f = host.flows.get_mut(&id).expect("picked");
        let b = if f.owed > 0 {
            f.owed -= 1;
            f.next_missing(host.mtu).map_or(0, |i| (i + 1).min(u32::MAX as u64) as u32)
        } else {
            f.issued += 1;
            0
        };
        if p.clock == Clock::Paced {
            f.unanswered.push_back(now);
        }
        f.last_token_ps = now;
        host.last = id;
        host.tokens_sent += 1;
        hx.send_ctrl_to(id, TOKEN, SchemeHdr { a: 0, b });
        hx.set_timer(PACER_TIMER, now + host.tick_ps);
    }
}
