//! Egress scheduling at a switch port: priority 0 (control) first, then the data priorities by
//! the fabric's discipline (round-robin, as the HPCC ns-3 simulator, or strict priority),
//! skipping paused ones.

use crate::net::{Port, NUM_PRIO};
use crate::scenario::config::Scheduler;

impl Port {
    /// True when priority `p` has packets and is not paused.
    #[inline]
    fn ready(&self, p: usize) -> bool {
        !self.queues[p].is_empty() && self.paused_mask & (1 << p) == 0
    }

    /// The priority to send from next, if any (round-robin advances its pointer).
    #[inline]
    pub(crate) fn pick_priority(&mut self, scheduler: Scheduler) -> Option<usize> {
        if self.ready(0) {
            return Some(0);
        }
        match scheduler {
            Scheduler::Strict => (1..NUM_PRIO).find(|&p| self.ready(p)),
            Scheduler::Rr => {
                for i in 1..NUM_PRIO {
                    let p = 1 + (self.rr_last as usize + i - 1) % (NUM_PRIO - 1);
                    if self.ready(p) {
                        self.rr_last = p as u8;
                        return Some(p);
                    }
                }
                None
            }
        }
    }
}
