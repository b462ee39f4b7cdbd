//! Loss recovery on a lossy fabric, two ways (`host.recovery`):
//!
//! * **Go-back-N** (RoCE's default): the receiver NACKs the first gap; the sender goes back to
//!   the NACKed byte, or on a retransmission timeout to the first unacknowledged byte.
//! * **IRN** (Mittal et al., "Revisiting Network Support for RDMA", SIGCOMM 2018, §3.1-3.2):
//!   the receiver keeps packets beyond a gap and NACKs each one with the cumulative ACK and the
//!   index of the packet that arrived (a selective ACK). The sender then enters recovery: it
//!   retransmits every packet between the cumulative ACK and the highest selectively acked one
//!   that has not been selectively acked, before any new packet, and leaves recovery once the
//!   cumulative ACK passes what was outstanding when it entered. A timeout (RTO_low while at
//!   most N packets are in flight, else RTO_high) retransmits every unacknowledged packet that
//!   was not selectively acked. In-flight bytes are capped at one BDP (`host.window` defaults to
//!   the fabric's BDP under IRN).
//!
//! Sequence numbers are bytes; packet i covers [i x MTU, min((i + 1) x MTU, size)).
//!
//! This file holds the recovery state and settings; the handlers run in `engine::loss`.

use crate::sim::quantity::Time;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// How hosts recover lost packets on a lossy fabric.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryMode {
    /// Go-back-N on NACK and on a retransmission timeout (RoCE's default).
    GoBackN,
    /// IRN selective retransmission (Mittal et al., SIGCOMM 2018).
    Irn,
}

/// Host loss recovery (`[host.recovery]`, lossy fabric only).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Recovery {
    pub mode: RecoveryMode,
    /// Go-back-N retransmission timeout.
    pub rto: Time,
    /// IRN: timeout while at most `rto_low_packets` packets are in flight.
    pub rto_low: Time,
    /// IRN: timeout otherwise.
    pub rto_high: Time,
    pub rto_low_packets: u32,
}

impl Default for Recovery {
    /// Go-back-N with IRN's RTO_high as its timeout, so the two compare on equal terms; IRN's
    /// values from its paper (RTO_low 100 us for N = 3 packets, RTO_high 320 us).
    fn default() -> Self {
        Recovery {
            mode: RecoveryMode::GoBackN,
            rto: Time(320 * crate::sim::PS_PER_US),
            rto_low: Time(100 * crate::sim::PS_PER_US),
            rto_high: Time(320 * crate::sim::PS_PER_US),
            rto_low_packets: 3,
        }
    }
}

/// A set of packet indices at or above a moving base, as a bitmap.
#[derive(Clone, Debug, Default)]
pub struct IndexSet {
    base: u64,
    words: VecDeque<u64>,
}

impl IndexSet {
    /// True when packet `idx` is in the set (indices below the base are not).
    pub fn contains(&self, idx: u64) -> bool {
        if idx < self.base {
            return false;
        }
        let off = idx - self.base;
        self.words
            .get((off / 64) as usize)
            .is_some_and(|w| w & (1 << (off % 64)) != 0)
    }
    /// Add packet `idx` (ignored below the base).
    pub fn insert(&mut self, idx: u64) {
        if idx < self.base {
            return;
        }
        let off = idx - self.base;
        let w = (off / 64) as usize;
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << (off % 64);
    }
    /// Forget every index below `idx`.
    pub fn advance_to(&mut self, idx: u64) {
        // Move the base in whole words, then clear the bits below `idx` in the first word.
        while idx >= self.base + 64 {
            self.words.pop_front();
            self.base += 64;
        }
        if let Some(w) = self.words.front_mut() {
            if idx > self.base {
                *w &= !((1u64 << (idx - self.base)) - 1);
            }
        }
        if self.words.is_empty() {
            self.base = idx - idx % 64;
        }
    }
}

/// Sender-side recovery state of one flow.
#[derive(Clone, Debug)]
pub struct TxLoss {
    /// Epoch of the pending `Event::Rto`; bumping it cancels the event.
    pub rto_epoch: u32,
    /// A timeout event is pending.
    pub rto_pending: bool,
    /// When the retransmission timer expires (u64::MAX: disarmed). The pending event is moved
    /// forward lazily, so an ACK costs no event.
    pub rto_deadline_ps: u64,
    /// Timeouts that fired.
    pub timeouts: u64,
    /// IRN state (None: go-back-N).
    pub irn: Option<Box<IrnTx>>,
    /// Packets (first bytes) the scheme asked to send again after `rtx_seq`, in order
    /// (`SchemeInfo::own_recovery` only; None otherwise).
    pub resend: Option<Box<VecDeque<u64>>>,
}

impl Default for TxLoss {
    fn default() -> Self {
        TxLoss {
            rto_epoch: 0,
            rto_pending: false,
            rto_deadline_ps: u64::MAX,
            timeouts: 0,
            irn: None,
            resend: None,
        }
    }
}

/// IRN sender: selectively acked packets and the recovery episode.
#[derive(Clone, Debug, Default)]
pub struct IrnTx {
    pub sacked: IndexSet,
    pub in_recovery: bool,
    /// Leave recovery once the cumulative ACK reaches this byte.
    pub recovery_end: u64,
    /// Retransmit unsacked packets below this byte.
    pub rtx_limit: u64,
    /// Next byte to consider for retransmission.
    pub rtx_cursor: u64,
}

impl IrnTx {
    /// Enter recovery (or widen it) so that unsacked packets below `limit` are retransmitted.
    pub fn recover(&mut self, snd_una: u64, snd_nxt: u64, limit: u64) {
        if !self.in_recovery {
            self.in_recovery = true;
            self.recovery_end = snd_nxt;
            self.rtx_cursor = snd_una;
            self.rtx_limit = 0;
        }
        self.rtx_limit = self.rtx_limit.max(limit);
    }

    /// The cumulative ACK moved to `snd_una`: forget acked state, maybe leave recovery.
    pub fn on_cum_ack(&mut self, snd_una: u64, mtu: u64) {
        self.sacked.advance_to(snd_una / mtu);
        if self.in_recovery && snd_una >= self.recovery_end {
            self.in_recovery = false;
        }
    }

    /// The next byte to retransmit, or u64::MAX.
    pub fn next_rtx(&mut self, snd_una: u64, mtu: u64) -> u64 {
        if !self.in_recovery {
            return u64::MAX;
        }
        let mut s = self.rtx_cursor.max(snd_una);
        while s < self.rtx_limit {
            if !self.sacked.contains(s / mtu) {
                self.rtx_cursor = s;
                return s;
            }
            s += mtu;
        }
        self.rtx_cursor = s;
        u64::MAX
    }
}

/// Receiver side of selective repeat: packets held beyond the in-order point.
#[derive(Clone, Debug, Default)]
pub struct OooRx {
    pub held: IndexSet,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_set_tracks_members_across_word_moves() {
        let mut s = IndexSet::default();
        for i in [3u64, 64, 65, 200] {
            s.insert(i);
        }
        assert!(s.contains(3) && s.contains(64) && s.contains(200) && !s.contains(4));
        s.advance_to(65);
        assert!(!s.contains(3) && !s.contains(64) && s.contains(65) && s.contains(200));
        s.advance_to(300);
        assert!(!s.contains(200));
        s.insert(301);
        assert!(s.contains(301) && !s.contains(300));
    }

    #[test]
    fn irn_retransmits_only_unsacked_packets_below_the_highest_sack() {
        // Packets 0..10 of 1000 B sent; 2 and 5 lost; 3, 4, 6, 7 selectively acked.
        let mut irn = IrnTx::default();
        for i in [3u64, 4, 6, 7] {
            irn.sacked.insert(i);
        }
        irn.recover(2000, 10_000, 8000);
        assert_eq!(irn.next_rtx(2000, 1000), 2000);
        irn.rtx_cursor = 3000; // packet 2 retransmitted
        assert_eq!(irn.next_rtx(2000, 1000), 5000);
        irn.rtx_cursor = 6000;
        assert_eq!(irn.next_rtx(2000, 1000), u64::MAX);
        irn.on_cum_ack(10_000, 1000);
        assert!(!irn.in_recovery);
    }
}
