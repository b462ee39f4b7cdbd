//! A sender's backstop for receiver-driven schemes (ccsim's, not a paper's): a receiver cannot
//! learn of a flow none of whose packets arrived, so a sender that hears nothing from its
//! receiver for a timeout sends its first unacknowledged packet again. Re-armed lazily: what
//! the sender hears only moves the deadline, so it costs one timer event per timeout.

use super::Tx;

/// The backstop of one flow.
#[derive(Clone, Copy, Debug, Default)]
pub struct Backstop {
    heard_ps: u64,
    timeout_ps: u64,
    /// Resends it made.
    pub fired: u64,
}

impl Backstop {
    /// Start at flow start with `timeout_ps` (0: four base RTTs) on timer `kind`.
    pub fn start(&mut self, tx: &mut Tx, timeout_ps: u64, kind: u8) {
        self.timeout_ps = if timeout_ps > 0 {
            timeout_ps
        } else {
            4 * tx.base_rtt_ps()
        }
        .max(1);
        self.heard_ps = tx.now_ps;
        tx.set_timer(kind, tx.now_ps + self.timeout_ps);
    }
    /// The sender heard from the receiver (a grant, a token, a pull, an ACK).
    #[inline]
    pub fn heard(&mut self, now_ps: u64) {
        self.heard_ps = now_ps;
    }
    /// Timer `kind` fired: after a silent timeout, resend the first unacknowledged packet with
    /// one packet of credit; re-arm.
    pub fn on_timer(&mut self, tx: &mut Tx, kind: u8) {
        if tx.now_ps >= self.heard_ps + self.timeout_ps && tx.snd_una() < tx.snd_nxt() {
            self.fired += 1;
            let seq = tx.snd_una();
            tx.resend(seq);
            let mtu = tx.mtu_payload_bytes();
            let c = tx.ctl();
            c.credit_bytes = c.credit_bytes.saturating_add(mtu);
            self.heard_ps = tx.now_ps;
        }
        // Nothing to resend (all acknowledged so far): wait a whole timeout again.
        let deadline = self.heard_ps + self.timeout_ps;
        let next = if deadline > tx.now_ps {
            deadline
        } else {
            tx.now_ps + self.timeout_ps
        };
        tx.set_timer(kind, next);
    }
}
