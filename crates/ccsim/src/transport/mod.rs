//! RDMA-RC-like reliable flows: byte sequence space, per-packet (or coalesced) cumulative ACKs,
//! NACK on a gap with go-back-N at the sender. The fabric is lossless, so go-back-N is only a
//! safety net; a drop there already fails the run. Send/receive handlers are in `flow.rs`.

pub mod flow;

/// Sentinel size of a long-lived flow that has not been stopped yet.
pub const UNBOUNDED: u64 = u64::MAX;

/// A flow's sender and receiver state (one struct: the simulator sees both ends).
#[derive(Clone, Debug)]
pub struct Flow {
    pub src: u32,
    pub dst: u32,
    /// Bytes to deliver; `UNBOUNDED` for a long-lived flow until it is stopped.
    pub size_bytes: u64,
    pub long_lived: bool,
    pub start_ps: u64,
    /// Long-lived flows stop offering data at this time (u64::MAX = never).
    pub stop_ps: u64,
    // Sender.
    pub started: bool,
    pub snd_nxt: u64,
    pub snd_una: u64,
    pub next_avail_ps: u64,
    pub rate_bps: u64,
    pub line_rate_bps: u64,
    pub mtu_payload_bytes: u64,
    /// The fabric's longest base RTT (set only for schemes with a BDP window; the HPCC
    /// simulator's `GLOBAL_T 1`).
    pub base_rtt_ps: u64,
    /// Maximum bytes in flight (u64::MAX = no window).
    pub window_bytes: u64,
    pub in_active: bool,
    pub finished: bool,
    pub finish_ps: u64,
    pub tx_bytes: u64,
    // Receiver.
    pub rcv_nxt: u64,
    pub rx_since_ack: u32,
    pub ce_since_ack: bool,
    pub last_nack_seq: u64,
    pub nack_ok_ps: u64,
    pub last_cnp_ps: Option<u64>,
    // Derived / probes.
    pub ideal_fct_ps: u64,
    pub sampled_acked: u64,
}

impl Flow {
    /// A flow that starts at `start_ps`; `size_bytes` None = long-lived.
    pub fn new(
        src: u32,
        dst: u32,
        size_bytes: Option<u64>,
        start_ps: u64,
        stop_ps: Option<u64>,
    ) -> Flow {
        Flow {
            src,
            dst,
            size_bytes: size_bytes.unwrap_or(UNBOUNDED),
            long_lived: size_bytes.is_none(),
            start_ps,
            stop_ps: stop_ps.unwrap_or(u64::MAX),
            started: false,
            snd_nxt: 0,
            snd_una: 0,
            next_avail_ps: 0,
            rate_bps: 0,
            line_rate_bps: 0,
            mtu_payload_bytes: 0,
            base_rtt_ps: 0,
            window_bytes: u64::MAX,
            in_active: false,
            finished: false,
            finish_ps: 0,
            tx_bytes: 0,
            rcv_nxt: 0,
            rx_since_ack: 0,
            ce_since_ack: false,
            last_nack_seq: u64::MAX,
            nack_ok_ps: 0,
            last_cnp_ps: None,
            ideal_fct_ps: 0,
            sampled_acked: 0,
        }
    }

    /// True when the sender may put a new packet on the wire now.
    #[inline]
    pub fn can_send(&self, now_ps: u64) -> bool {
        self.snd_nxt < self.size_bytes
            && self.snd_nxt - self.snd_una < self.window_bytes
            && self.next_avail_ps <= now_ps
    }

    /// Bandwidth-delay product of the fabric's longest base RTT at this flow's line rate.
    pub fn bdp_bytes(&self) -> u64 {
        (self.base_rtt_ps as u128 * self.line_rate_bps as u128 / 8 / crate::sim::PS_PER_S as u128)
            as u64
    }

    /// True when all data has been sent at least once (nothing left to offer).
    #[inline]
    pub fn all_sent(&self) -> bool {
        self.snd_nxt >= self.size_bytes
    }
}
