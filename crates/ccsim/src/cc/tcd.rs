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
//! Stated in ACC (seed 000): the three states, CE/UE marking and precedence (section 2.2),
//! threshold 2 MTU and max(T_on) = 24 us in its simulations (section 6.1). Reconstruction: the
//! exact transition rule (TCD's paper is not in the seeds): a port's ON period starts at the
//! RESUME it receives, and the state is judged at dequeue from the queue left behind, as the
//! HPCC simulator marks ECN. `max_t_on` is a parameter (TCD derives it from the PFC thresholds
//! and link rates: the longest time an upstream port keeps sending between a RESUME and the
//! next PAUSE).

use super::{Sw, SwitchPart};
use crate::net::{Mark, Packet, PktKind, Port, NUM_PRIO};
use crate::scenario::units::{Size, Time};
use crate::scenario::ScenarioError;
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
}

impl Default for TcdParams {
    fn default() -> Self {
        TcdParams {
            threshold: Size(2_000),
            max_t_on: Time(24 * PS_PER_US),
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
    /// The state of priority `prio` at `now_ps` with `queue_bytes` queued.
    pub fn state(&self, p: &TcdParams, prio: u8, queue_bytes: u64, now_ps: u64) -> TcdState {
        if queue_bytes <= p.threshold.0 {
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
        let mark = match self.state(p.tcd(), sw.prio, sw.queue_bytes(), sw.now_ps) {
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

    const P: TcdParams = TcdParams {
        threshold: Size(2_000),
        max_t_on: Time(24 * PS_PER_US),
    };

    fn port() -> TcdPort {
        TcdPort {
            on_since_ps: [u64::MAX; NUM_PRIO],
            marked: [0; 3],
        }
    }

    #[test]
    fn a_never_paused_port_judges_by_queue_length() {
        let t = port();
        assert_eq!(t.state(&P, 3, 2_000, 5), TcdState::NonCongestion);
        assert_eq!(t.state(&P, 3, 2_001, 5), TcdState::Congestion);
    }

    #[test]
    fn a_port_in_on_off_is_undetermined_until_on_for_longer_than_max_t_on() {
        let mut t = port();
        let resume = 100 * PS_PER_US;
        t.on_since_ps[3] = resume;
        let q = 50_000;
        assert_eq!(t.state(&P, 3, q, resume + 1), TcdState::Undetermined);
        assert_eq!(
            t.state(&P, 3, q, resume + 24 * PS_PER_US),
            TcdState::Undetermined
        );
        assert_eq!(
            t.state(&P, 3, q, resume + 24 * PS_PER_US + 1),
            TcdState::Congestion
        );
        // Below the threshold it is not congested whatever its history.
        assert_eq!(t.state(&P, 3, 1_000, resume + 1), TcdState::NonCongestion);
        // Other priorities keep their own history.
        assert_eq!(t.state(&P, 4, q, resume + 1), TcdState::Congestion);
    }
}
