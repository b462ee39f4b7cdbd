//! TCD, ternary congestion detection at switch egress ports (Zhang et al., "Congestion
//! Detection in Lossless Networks", SIGCOMM 2021), the switch part of `acc`, `acc_nohalt`,
//! `dcqcn_tcd` and `timely_tcd`.
//!
//! Each (egress port, priority) is in one of three states, judged as a data packet leaves, from
//! the queue it leaves behind and the port's PFC history; the state persists from packet to
//! packet, so a congestion episode is judged as a whole:
//! * **undetermined (U)**: the port was resumed (PFC RESUME) within the last `max_t_on`: it is
//!   in PFC's ON/OFF pattern, so its queue says nothing about its own load. Every data packet
//!   leaving it is marked UE (unless already CE);
//! * **congestion (C)**: ON for longer than `max_t_on` with the queue above `threshold` (never
//!   paused, or a queue that did not come from OFF periods, see below). Packets are marked CE;
//! * **non-congestion (N)**: ON for longer than `max_t_on` with the queue at or below it;
//!   unmarked.
//!
//! The backlog a port built while paused is not congestion ("queue buildup not caused by OFF",
//! TCD's definition). When an undetermined port has been ON for `max_t_on`:
//! * a queue at least as long as when the RESUME came means the port cannot drain what arrives
//!   even while ON: congestion;
//! * a shorter one is the OFF backlog draining: the port is **checked** (no mark) once per
//!   `max_t_on`; a queue that grew by more than `TREND_SLACK_BYTES` since the last check is
//!   congestion, one at or below `threshold` is non-congestion.
//!
//! A packet leaving a C port is marked CE; leaving a U port, UE unless already CE (CE is never
//! overridden). Receivers echo the mark on every ACK.
//!
//! Two marking modes, by scheme (`WithTcd::on_ecn`):
//! * **step** (ACC, `timely_tcd`): a congestion port marks every packet while its queue is
//!   above `threshold`: ACC's setting (section 6.1, "the queue length threshold in TCD ...
//!   2MTU").
//! * **on ECN** (`dcqcn_tcd`): TCD gives the fabric's ECN marks their meaning. RED
//!   (`fabric.ecn`, run first at dequeue) decides which packets a congestion port marks CE, and
//!   DCQCN+TCD keeps DCQCN's marking thresholds (ACC section 6.1 gives DCQCN's Kmin = 5 KB,
//!   Kmax = 200 KB). Where PFC never pauses a port its marks are exactly ECN's, as the ACC paper
//!   reports of its testbed incast (section 6.2: "The congestion detection results of TCD are
//!   equal with ECN in this incast scenario"). A port's `ecn_marked` count includes RED marks
//!   that TCD turned into UE.
//!
//! Sources. Stated in ACC (seed 000): the three states, CE/UE marking and precedence (section
//! 2.2), threshold 2 MTU and max(T_on) = 24 us in its simulations (section 6.1). The transition
//! rules, the persistent state, the queue at RESUME, the trend check and its 900 B slack follow
//! the TCD authors' ns-3 code (github.com/Yi-ran/DCQCN-TCD, `qbb-net-device.cc`, "RootECN",
//! whose interval, 40 us by default, is max(T_on)); TCD's paper is not in the seeds. Judged at
//! dequeue from the queue left behind, as that code and the HPCC simulator do. max(T_on) is a
//! property of the fabric's PFC, per port (`Port::max_t_on_ps`): `fabric.pfc.max_t_on` (ACC's
//! large-scale entries set the paper's 24 us), or else derived from what the port's switch can
//! hold for one upstream and the port's rate and delay (`scenario::build::max_t_on_ps`; ACC
//! takes it "according to the equation in [45]", TCD's paper, which is not in the seeds).
//!
//! The earlier reading judged each packet alone (C whenever ON for `max_t_on` with a queue above
//! `threshold`): a port kept draining an OFF backlog after `max_t_on` and called it congestion,
//! so a victim got CE: on ACC's Fig. 1 chain (N = 20) F0's ACKs carried 755 CE in the 3 ms after
//! the bursts, 45 with this rule (19,829 and 8,133 over the 10 ms run).

use super::{Sw, SwitchPart};
use crate::net::{Mark, Packet, PktKind, Port, NUM_PRIO};
use crate::sim::input::ScenarioError;
use crate::sim::quantity::{Size, Time};
use serde::{Deserialize, Serialize};

/// TCD's switch parameters (`[cc.params.tcd]`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcdParams {
    /// Queue length above which a port is congested or undetermined (2 MTU of 1 KB, ACC 6.1).
    pub threshold: Size,
    /// Moved to `fabric.pfc.max_t_on` (refused here, naming the new place).
    #[serde(skip_serializing)]
    pub max_t_on: Option<Time>,
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
            max_t_on: None,
            victims: Victims::Hold,
        }
    }
}

impl TcdParams {
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.max_t_on.is_some() {
            return Err(ScenarioError::new(
                "cc.params.tcd.max_t_on",
                "max(T_on) is a property of the fabric's PFC: set fabric.pfc.max_t_on (e.g. \"24us\"), or leave it unset to derive it per port",
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

/// A port's ternary state for one priority, with TCD's check of a draining OFF backlog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcdState {
    NonCongestion,
    /// ON for `max_t_on` after being undetermined, with a shorter queue than at the RESUME: the
    /// OFF backlog draining, checked once per `max_t_on` (no mark).
    Checking,
    Undetermined,
    Congestion,
}

/// A queue may grow this much from one check to the next and still be an OFF backlog draining
/// (the TCD authors' code: 0.9 of a 1000 B packet).
pub const TREND_SLACK_BYTES: u64 = 900;

/// TCD's state of one priority of an egress port.
#[derive(Clone, Copy, Debug)]
pub struct TcdPrio {
    /// Time of the last RESUME received; `u64::MAX` if never paused.
    on_since_ps: u64,
    /// The queue when that RESUME came, bytes.
    queue_at_resume: u64,
    state: TcdState,
    /// The last trend check (`Checking`): its time and the queue then.
    check_ps: u64,
    check_queue: u64,
}

/// TCD's state of one egress port.
#[derive(Clone, Debug)]
pub struct TcdPort {
    /// max(T_on) of this port (`Port::max_t_on_ps`).
    max_t_on_ps: u64,
    prio: [TcdPrio; NUM_PRIO],
    /// Data packets this port marked CE and UE (for tests and experiments).
    pub marked: [u64; 3],
}

impl TcdPort {
    fn fresh(max_t_on_ps: u64) -> TcdPort {
        TcdPort {
            max_t_on_ps,
            prio: [TcdPrio {
                on_since_ps: u64::MAX,
                queue_at_resume: 0,
                state: TcdState::NonCongestion,
                check_ps: 0,
                check_queue: 0,
            }; NUM_PRIO],
            marked: [0; 3],
        }
    }

    /// The state of priority `prio` now (the last packet's judgement).
    pub fn state(&self, prio: u8) -> TcdState {
        self.prio[prio as usize].state
    }

    /// A RESUME for `prio` at `now_ps`, `queue_bytes` queued.
    pub fn resume(&mut self, prio: u8, queue_bytes: u64, now_ps: u64) {
        let s = &mut self.prio[prio as usize];
        s.on_since_ps = now_ps;
        s.queue_at_resume = queue_bytes;
    }

    /// Judge priority `prio` as a data packet leaves at `now_ps` with `queue_bytes` left
    /// behind; `congested`: the queue calls for a CE mark (above `threshold`, or RED marked the
    /// packet). Returns the mark to give the packet.
    pub fn judge(
        &mut self,
        p: &TcdParams,
        prio: u8,
        queue_bytes: u64,
        congested: bool,
        now_ps: u64,
    ) -> Mark {
        let t_on = self.max_t_on_ps;
        let s = &mut self.prio[prio as usize];
        if s.on_since_ps != u64::MAX && now_ps - s.on_since_ps <= t_on {
            s.state = TcdState::Undetermined;
            return Mark::Ue;
        }
        let ce = |s: &mut TcdPrio| {
            s.state = TcdState::Congestion;
            if congested {
                Mark::Ce
            } else {
                Mark::None
            }
        };
        match s.state {
            TcdState::Undetermined if queue_bytes >= s.queue_at_resume => ce(s),
            TcdState::Undetermined => {
                (s.check_ps, s.check_queue) = (now_ps, queue_bytes);
                s.state = TcdState::Checking;
                Mark::None
            }
            TcdState::Checking if now_ps - s.check_ps >= t_on => {
                if queue_bytes >= s.check_queue + TREND_SLACK_BYTES {
                    return ce(s);
                }
                (s.check_ps, s.check_queue) = (now_ps, queue_bytes);
                if queue_bytes <= p.threshold.0 {
                    s.state = TcdState::NonCongestion;
                }
                Mark::None
            }
            TcdState::Checking => {
                if queue_bytes <= p.threshold.0 {
                    s.state = TcdState::NonCongestion;
                }
                Mark::None
            }
            TcdState::NonCongestion | TcdState::Congestion if congested => ce(s),
            TcdState::NonCongestion | TcdState::Congestion => {
                s.state = TcdState::NonCongestion;
                Mark::None
            }
        }
    }
}

impl<P: WithTcd> SwitchPart<P> for TcdPort {
    fn new(_: &P, port: &Port) -> Self {
        TcdPort::fresh(port.max_t_on_ps)
    }
    fn on_resume(&mut self, _: &P, sw: &mut Sw) {
        self.resume(sw.prio, sw.queue_bytes(), sw.now_ps);
    }
    fn on_dequeue(&mut self, p: &P, sw: &mut Sw, pkt: &mut Packet) {
        if pkt.kind != PktKind::Data {
            return;
        }
        let congested = if p.on_ecn() {
            sw.red_marked()
        } else {
            sw.queue_bytes() > p.tcd().threshold.0
        };
        let mark = self.judge(p.tcd(), sw.prio, sw.queue_bytes(), congested, sw.now_ps);
        if congested && p.on_ecn() && mark != Mark::Ce {
            // TCD names this port's RED mark (the packet was not CE before it): UE at an
            // undetermined port, none at a checked one (an upstream UE is lost with it).
            pkt.mark = Mark::None;
        }
        if mark == Mark::None {
            return;
        }
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
        max_t_on: None,
        victims: Victims::Hold,
    };
    const US: u64 = crate::sim::PS_PER_US;

    /// Judge one packet in step mode (congested: above the 2 KB threshold).
    fn step(t: &mut TcdPort, queue: u64, now: u64) -> Mark {
        t.judge(&P, 3, queue, queue > P.threshold.0, now)
    }

    #[test]
    fn a_never_paused_port_judges_by_queue_length() {
        let mut t = TcdPort::fresh(24 * US);
        assert_eq!(step(&mut t, 2_000, 5), Mark::None);
        assert_eq!(t.state(3), TcdState::NonCongestion);
        assert_eq!(step(&mut t, 2_001, 6), Mark::Ce);
        assert_eq!(t.state(3), TcdState::Congestion);
        assert_eq!(step(&mut t, 1_000, 7), Mark::None);
        assert_eq!(t.state(3), TcdState::NonCongestion);
    }

    #[test]
    fn every_packet_within_max_t_on_of_a_resume_is_undetermined() {
        let mut t = TcdPort::fresh(24 * US);
        let r = 100 * US;
        t.resume(3, 50_000, r);
        // UE whatever the queue, up to and including max(T_on) = 24 us after the RESUME.
        assert_eq!(step(&mut t, 50_000, r + 1), Mark::Ue);
        assert_eq!(step(&mut t, 0, r + 10 * US), Mark::Ue);
        assert_eq!(step(&mut t, 40_000, r + 24 * US), Mark::Ue);
        assert_eq!(t.state(3), TcdState::Undetermined);
        // Other priorities keep their own history.
        assert_eq!(t.judge(&P, 4, 40_000, true, r + 1), Mark::Ce);
    }

    #[test]
    fn an_off_backlog_that_drains_is_checked_not_congestion() {
        // Resumed with 50 KB queued; 24 us later 30 KB is left (the backlog draining): checked,
        // unmarked. Each further max(T_on) the queue has shrunk or grown by under 900 B: still
        // checked; once at or below 2 KB the port is non-congested.
        let mut t = TcdPort::fresh(24 * US);
        let r = 100 * US;
        t.resume(3, 50_000, r);
        step(&mut t, 45_000, r + 5 * US);
        assert_eq!(step(&mut t, 30_000, r + 25 * US), Mark::None);
        assert_eq!(t.state(3), TcdState::Checking);
        assert_eq!(step(&mut t, 20_000, r + 40 * US), Mark::None);
        assert_eq!(step(&mut t, 30_800, r + 49 * US), Mark::None); // 800 B above the check
        assert_eq!(t.state(3), TcdState::Checking);
        assert_eq!(step(&mut t, 2_000, r + 60 * US), Mark::None);
        assert_eq!(t.state(3), TcdState::NonCongestion);
        assert_eq!(step(&mut t, 5_000, r + 61 * US), Mark::Ce);
    }

    #[test]
    fn a_queue_that_grows_while_on_is_congestion() {
        let r = 100 * US;
        // No shorter than at the RESUME after max(T_on): congestion at once.
        let mut t = TcdPort::fresh(24 * US);
        t.resume(3, 50_000, r);
        step(&mut t, 50_000, r + 5 * US);
        assert_eq!(step(&mut t, 50_000, r + 25 * US), Mark::Ce);
        assert_eq!(t.state(3), TcdState::Congestion);
        // Shorter, then 900 B or more above the last check one max(T_on) later: congestion.
        let mut t = TcdPort::fresh(24 * US);
        t.resume(3, 50_000, r);
        step(&mut t, 45_000, r + 5 * US);
        step(&mut t, 30_000, r + 25 * US);
        assert_eq!(step(&mut t, 30_900, r + 49 * US), Mark::Ce);
        assert_eq!(t.state(3), TcdState::Congestion);
        assert_eq!(t.marked, [0, 0, 0]); // judge() counts nothing; on_dequeue does
    }

    #[test]
    fn on_ecn_a_red_mark_means_ce_at_a_congestion_port_ue_at_an_undetermined_one() {
        // dcqcn_tcd: RED (Kmin 5 KB) decides which packets a congestion port marks; TCD names
        // the mark by the port's state.
        let p = crate::cc::dcqcn::DcqcnParams {
            tcd: Some(P),
            ..Default::default()
        };
        let port = Port::new(0, 1, 100_000_000_000, 0, false);
        let mut t = TcdPort::fresh(24 * US);
        let leave = |t: &mut TcdPort, queue: u64, now: u64, red: bool| {
            let mut pkt = Packet::new(PktKind::Data, 0, 1, 1_048, 3);
            if red {
                pkt.mark = Mark::Ce; // the engine's RED ran first
            }
            with_sw(&port, queue, now, red, |sw| t.on_dequeue(&p, sw, &mut pkt));
            pkt.mark
        };
        // Never paused: RED's marks stay CE, unmarked packets stay unmarked (no step at 2 KB).
        assert_eq!(leave(&mut t, 50_000, 10, true), Mark::Ce);
        assert_eq!(leave(&mut t, 50_000, 11, false), Mark::None);
        // Resumed 5 us ago (max(T_on) 24 us): undetermined, RED's mark or not, UE.
        let r = 100 * US;
        t.resume(3, 50_000, r);
        assert_eq!(leave(&mut t, 50_000, r + 5 * US, true), Mark::Ue);
        assert_eq!(leave(&mut t, 50_000, r + 6 * US, false), Mark::Ue);
        // ON for longer than max(T_on), the backlog shorter than at the RESUME: checked, and
        // RED's mark is taken back.
        assert_eq!(leave(&mut t, 40_000, r + 30 * US, true), Mark::None);
        // The backlog grew past the check by 900 B a max(T_on) later: congestion, CE again.
        assert_eq!(leave(&mut t, 41_000, r + 55 * US, true), Mark::Ce);
        assert_eq!(t.marked, [0, 2, 2]);
    }
}
