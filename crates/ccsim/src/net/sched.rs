//! Egress scheduling at a switch port: priority 0 (control) first, then the data priorities by
//! the fabric's discipline (round-robin, as the HPCC ns-3 simulator, or strict priority),
//! skipping paused ones. A scheme's rate-limited control queue (ExpressPass credits) goes
//! ahead of them when its time has come.

use crate::net::config::Scheduler;
use crate::net::Port;

impl Port {
    /// The priority to send from next, if any (round-robin advances its pointer).
    #[inline]
    pub(crate) fn pick_priority(&mut self, scheduler: Scheduler) -> Option<usize> {
        // Bit p: priority p has packets and is not paused.
        let ready = self.nonempty_mask & !self.paused_mask;
        if ready & 1 != 0 {
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
}
