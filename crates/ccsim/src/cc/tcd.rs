//! TCD, ternary congestion detection at switch egress ports (Zhang et al., "Congestion
//! Detection in Lossless Networks", SIGCOMM 2021), the switch part of `acc`, `acc_nohalt`,
//! `dcqcn_tcd` and `timely_tcd`.
//!
//! Each (egress port, priority) is in one of three states, judged when a data packet leaves:
//! * **congestion (C)**: the queue of that priority is above `threshold` and the port has been
//!   ON (not paused) continuously for longer than `max_t_on`, or has never been paused;
//! * **undetermined (U)**: the queue is above `threshold` but the port has been paused within
//!   the last `max_t_on` (it is in PFC's ON/OFF pattern, so its queue says nothing about its
//!   own load);
//! * **non-congestion (N)**: the queue is at or below `threshold`.
//!
//! A packet leaving a C port is marked CE; leaving a U port, UE unless already CE (CE is never
//! overridden). Receivers echo the mark on every ACK.
//!
//! Two marking modes, by scheme (`WithTcd::on_ecn`):
//! * **step** (ACC, `timely_tcd`): the state is judged against `threshold`, and every data
//!   packet leaving a C or U port is marked: ACC's setting (section 6.1, "the queue length
//!   threshold in TCD ... 2MTU").
//! * **on ECN** (`dcqcn_tcd`): TCD gives the fabric's ECN marks their meaning.
//!   RED (`fabric.ecn`, run first at dequeue) decides which packets this port marks; the
//!   state is judged against the port's Kmin, and a mark made while the port is undetermined
//!   becomes UE. Where PFC never pauses a port its marks are exactly ECN's, as the ACC paper
//!   reports of its testbed incast (section 6.2: "The congestion detection results of TCD are
//!   equal with ECN in this incast scenario"), and DCQCN+TCD keeps DCQCN's marking thresholds
//!   (ACC section 6.1 gives DCQCN's Kmin = 5 KB, Kmax = 200 KB). A port's `ecn_marked`
//!   count then includes the marks that became UE.
//!
//! Stated in ACC (seed 000): the three states, CE/UE marking and precedence (section 2.2),
//! threshold 2 MTU and max(T_on) = 24 us in its simulations (section 6.1). Reconstruction: the
//! exact transition rule (TCD's paper is not in the seeds): a port's ON period starts at the
//! RESUME it receives, and the state is judged at dequeue from the queue left behind, as the
//! HPCC simulator marks ECN. `max_t_on` is a parameter (TCD derives it from the PFC thresholds
//! and link rates: the longest time an upstream port keeps sending between a RESUME and the
//! next PAUSE).

use super::{Sw, SwitchPart};
use crate::net::{Mark, Packet, PktKind, Port, NUM_PRIO};
use crate::sim::input::ScenarioError;
use crate::sim::quantity::{Size, Time};
use crate::sim::PS_PER_US;
use serde::{Deserialize, Serialize};

/// TCD's switch parameters (`[cc.params.tcd]`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcdParams {
    /// Queue length above which a port is congested or undetermined (2 MTU of 1 KB, ACC 6.1).
    pub threshold: Size,
    /// Longest continuous ON period of a port in PFC's ON/OFF pattern (24 us, ACC 6.1).
    pub max_t_on: Time,
    /// How `dcqcn_tcd` and `timely_tcd` treat a victim (UE, no CE) flow: `hold` its rate (ACC
    /// section 6.1: TCD "adjusts victim flows gently"), or `increase` as an uncongested flow
    /// (ACC section 3.3: "victim flows will adjust the sending rate the same as uncongested
    /// flows according to DCQCN", the setting of Figures 2-4). ACC has its own victim rule.
    pub victims: Victims,
}

/// A TCD baseline's reaction to a victim flow (`[cc.params.tcd] victims`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Victims {
    #[default]
    Hold,
    Increase,
}

impl Default for TcdParams {
    fn default() -> Self {
        TcdParams {
            threshold: Size(2_000),
            max_t_on: Time(24 * PS_PER_US),
            victims: Victims::Hold,
        }
    }
}

impl TcdParams {
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.max_t_on.0 == 0 {
            return Err(ScenarioError::new(
                "cc.params.tcd.max_t_on",
                "must be > 0 (e.g. \"24us\")",
            ));
        }
        Ok(())
    }
}

/// A scheme's parameters that include TCD's.
pub trait WithTcd {
    fn tcd(&self) -> &TcdParams;
    /// TCD marks on the fabric's ECN (`dcqcn_tcd`) rather than as a step at its threshold.
    fn on_ecn(&self) -> bool {
        false
    }
}

/// A port's ternary state for one priority.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcdState {
    NonCongestion,
    Undetermined,
    Congestion,
}

/// TCD's state of one egress port: when each priority's current ON period began.
#[derive(Clone, Debug)]
pub struct TcdPort {
    /// Per priority: time of the last RESUME received; `u64::MAX` if never paused.
    on_since_ps: [u64; NUM_PRIO],
    /// Data packets this port marked CE and UE (for tests and experiments).
    pub marked: [u64; 3],
}

impl TcdPort {
    /// The state of priority `prio` at `now_ps` with `queue_bytes` queued, against
    /// `threshold_bytes`.
    pub fn state(
        &self,
        p: &TcdParams,
        prio: u8,
        queue_bytes: u64,
        threshold_bytes: u64,
        now_ps: u64,
    ) -> TcdState {
        if queue_bytes <= threshold_bytes {
            return TcdState::NonCongestion;
        }
        let on_since = self.on_since_ps[prio as usize];
        if on_since == u64::MAX || now_ps - on_since > p.max_t_on.0 {
            TcdState::Congestion
        } else {
            TcdState::Undetermined
        }
    }
}

impl<P: WithTcd> SwitchPart<P> for TcdPort {
    fn new(_: &P, _: &Port) -> Self {
        TcdPort {
            on_since_ps: [u64::MAX; NUM_PRIO],
            marked: [0; 3],
        }
    }
    fn on_resume(&mut self, _: &P, sw: &mut Sw) {
        self.on_since_ps[sw.prio as usize] = sw.now_ps;
    }
    fn on_pause(&mut self, _: &P, sw: &mut Sw) {
        // Paused now: the next ON period starts at the RESUME. Until then the port sends
        // nothing of this priority, so nothing is judged.
        self.on_since_ps[sw.prio as usize] = sw.now_ps;
    }
    fn on_dequeue(&mut self, p: &P, sw: &mut Sw, pkt: &mut Packet) {
        if pkt.kind != PktKind::Data {
            return;
        }
        let on_ecn = p.on_ecn();
        let p = p.tcd();
        if on_ecn {
            if sw.red_marked() {
                let kmin = sw.port().kmin_bytes;
                let mark = match self.state(p, sw.prio, sw.queue_bytes(), kmin, sw.now_ps) {
                    TcdState::Undetermined => Mark::Ue,
                    _ => Mark::Ce,
                };
                self.marked[mark as usize] += 1;
                pkt.mark = mark;
            }
            return;
        }
        let mark = match self.state(p, sw.prio, sw.queue_bytes(), p.threshold.0, sw.now_ps) {
            TcdState::Congestion => Mark::Ce,
            TcdState::Undetermined => Mark::Ue,
            TcdState::NonCongestion => return,
        };
        self.marked[mark as usize] += 1;
        pkt.mark = pkt.mark.merge(mark);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::with_sw;

    const P: TcdParams = TcdParams {
        threshold: Size(2_000),
        max_t_on: Time(24 * PS_PER_US),
        victims: Victims::Hold,
    };
    const T: u64 = 2_000;

    fn port_state() -> TcdPort {
        TcdPort {
            on_since_ps: [u64::MAX; NUM_PRIO],
            marked: [0; 3],
        }
    }

    #[test]
    fn a_never_paused_port_judges_by_queue_length() {
        let t = port_state();
        assert_eq!(t.state(&P, 3, 2_000, T, 5), TcdState::NonCongestion);
        assert_eq!(t.state(&P, 3, 2_001, T, 5), TcdState::Congestion);
    }

    #[test]
    fn a_port_in_on_off_is_undetermined_until_on_for_longer_than_max_t_on() {
        let mut t = port_state();
        let resume = 100 * PS_PER_US;
        t.on_since_ps[3] = resume;
        let q = 50_000;
        assert_eq!(t.state(&P, 3, q, T, resume + 1), TcdState::Undetermined);
        assert_eq!(
            t.state(&P, 3, q, T, resume + 24 * PS_PER_US),
            TcdState::Undetermined
        );
        assert_eq!(
            t.state(&P, 3, q, T, resume + 24 * PS_PER_US + 1),
            TcdState::Congestion
        );
        // Below the threshold it is not congested whatever its history.
        assert_eq!(
            t.state(&P, 3, 1_000, T, resume + 1),
            TcdState::NonCongestion
        );
        // Other priorities keep their own history.
        assert_eq!(t.state(&P, 4, q, T, resume + 1), TcdState::Congestion);
    }

    #[test]
    fn on_ecn_a_red_mark_means_ce_at_a_congestion_port_and_ue_at_an_undetermined_one() {
        // dcqcn_tcd: RED (Kmin 5 KB) has marked the packet; TCD names the mark by the port's
        // state against Kmin.
        let p = crate::cc::dcqcn::DcqcnParams {
            tcd: Some(P),
            ..Default::default()
        };
        let mut port = Port::new(0, 1, 100_000_000_000, 0, false);
        port.kmin_bytes = 5_000;
        let mut t = port_state();
        let leave = |t: &mut TcdPort, queue: u64, now: u64, red: bool| {
            let mut pkt = Packet::new(PktKind::Data, 0, 1, 1_048, 3);
            with_sw(&port, queue, now, red, |sw| t.on_dequeue(&p, sw, &mut pkt));
            pkt.mark
        };
        // Never paused: RED's marks stay CE, unmarked packets stay unmarked (no step at 2 KB).
        assert_eq!(leave(&mut t, 50_000, 10, true), Mark::Ce);
        assert_eq!(leave(&mut t, 50_000, 10, false), Mark::None);
        // Resumed 5 us ago (max(T_on) 24 us): undetermined, so RED's mark becomes UE.
        let resume = 100 * PS_PER_US;
        t.on_since_ps[3] = resume;
        assert_eq!(
            leave(&mut t, 50_000, resume + 5 * PS_PER_US, true),
            Mark::Ue
        );
        // ON for longer than max(T_on): congestion again.
        assert_eq!(
            leave(&mut t, 50_000, resume + 30 * PS_PER_US, true),
            Mark::Ce
        );
        assert_eq!(t.marked, [0, 1, 2]);
    }
}
