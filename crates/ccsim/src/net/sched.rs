//! Egress scheduling at a switch port: priority 0 (control) first, then the data priorities by
//! the fabric's discipline (round-robin, as the HPCC ns-3 simulator, or strict priority),
//! skipping paused ones. A trimming scheme's header queue instead gets `hdr_ratio` turns in
//! every `hdr_ratio` + 1 while data waits (`fabric.loss.header_turns`; by default the NDP
//! authors' htsim CompositeQueue: 10 to 1), so headers cannot starve data. A scheme's rate-limited control queue (ExpressPass credits) goes
//! ahead of them when its time has come.

use crate::net::config::Scheduler;
use crate::net::Port;

/// Header turns per data turn of a trimming scheme's switch port by default
/// (`fabric.loss.header_turns`): the NDP authors' htsim of the paper's time (CompositeQueue
/// `_ratio_high` 10, `_ratio_low` 1). Broadcom's csg-htsim serves headers all but strictly
/// (100000 to 1); with strict priority a storm of headers can starve data for good (a
/// receiver pulling at 25G through a 10G core with 256 B packets did).
pub const HDR_RATIO: u32 = 10;

impl Port {
    /// The priority to send from next, if any (round-robin advances its pointer).
    #[inline]
    pub(crate) fn pick_priority(&mut self, scheduler: Scheduler, hdr_ratio: u32) -> Option<usize> {
        // Bit p: priority p has packets and is not paused.
        let ready = self.nonempty_mask & !self.paused_mask;
        if ready & 1 != 0 && (hdr_ratio == 0 || !self.data_turn(hdr_ratio, ready)) {
            return Some(0);
        }
        let data = ready & !1;
        if data == 0 {
            return None;
        }
        let p = match scheduler {
            Scheduler::Strict => data.trailing_zeros(),
            Scheduler::Rr => {
                // The first ready priority after the last one served, wrapping to 1.
                let after = data & (u8::MAX.checked_shl(self.rr_last as u32 + 1).unwrap_or(0));
                let p = if after != 0 { after } else { data }.trailing_zeros();
                self.rr_last = p as u8;
                p
            }
        };
        Some(p as usize)
    }

    /// With control waiting under a trimming scheme: whether this turn goes to data (one in
    /// `hdr_ratio` + 1, if data waits).
    #[cold]
    #[inline(never)]
    fn data_turn(&mut self, hdr_ratio: u32, ready: u8) -> bool {
        self.hdr_turn = if self.hdr_turn >= hdr_ratio {
            0
        } else {
            self.hdr_turn + 1
        };
        ready & !1 != 0 && self.hdr_turn >= hdr_ratio
    }
}
