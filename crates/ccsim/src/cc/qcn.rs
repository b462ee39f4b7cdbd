//! QCN (IEEE 802.1Qau): congestion point (switch egress queue) and reaction point (source rate
//! limiter). The switch half is called from `engine::switch` as a data packet is enqueued.
//!
//! Sources: IEEE 802.1Qau (congestion notification, now in IEEE 802.1Q), whose defaults are
//! those of its management module IEEE8021-CN-MIB: cpQueueSizeSetPoint 26000 octets (Q_eq),
//! cpFeedbackWeight 1 (w = 2^1 = 2), rpgGd 7 (Gd = 1/128), rpgMinDecFac 50% (one cut at most
//! halves the rate), cpMinSampleBase 150000 octets (1% of 1500-byte frames), rpgByteReset
//! 150000 octets, rpgTimeReset 15 ms, rpgThreshold 5 (F), rpgAiRate 5 Mb/s, rpgHaiRate
//! 50 Mb/s, rpgMinRate 5 Mb/s; the reaction point of the DCQCN authors' ns-3 code
//! (bobzhuyb/ns3-rdma, `qbb-net-device.cc`, which keeps QCN's state machine: the same byte
//! counter, F, R_AI and R_HAI, and TR <- CR on feedback only once a byte-counter cycle has
//! passed since the last one, as htsim's QCN does too); Alizadeh, Atikoglu, Kabbani, Lakshmikantha,
//! Pan, Prabhakar, Seaman, "Data Center Transport Mechanisms: Congestion Control Theory and IEEE
//! Standardization", Allerton 2008 (the algorithm; its text was not readable offline). The
//! baseline of the PCN paper. Not confirmed by a source ccsim could read: the 10% top sampling
//! probability and its linear growth with |Fb|, the rounding up of the quantized |Fb|, and the
//! hyper-active step's count (ns3-rdma counts the cycle it is in; ccsim the cycles before),
//! shared with `dcqcn_paper`. ns3-rdma also cuts TR by 8 when it exceeds 10 CR in the first
//! cycle; ccsim does not (no standard text confirms it).
//!
//! Congestion point: an arriving frame is sampled with probability 1% .. 10%, growing linearly
//! with the last quantized |Fb|. At a sample with queue length Q (bytes, the frame's priority):
//!   Q_off = Q - Q_eq, Q_delta = Q - Q_old, Q_old <- Q, Fb = -(Q_off + w Q_delta).
//! If Fb < 0 the switch sends the source a feedback message carrying
//!   |Fb| quantized to 6 bits = min(63, ceil(-Fb x 63 / (Q_eq (2w + 1)))).
//! Reaction point: on feedback, TR <- CR if a byte-counter cycle passed since the last feedback
//! (or this is the first), CR <- max(min_rate, CR (1 - Gd |Fb|)) (Gd |Fb|_max =
//! 1/2), and the byte counter and timer restart. Each byte-counter cycle (150 KB, 75 KB after
//! fast recovery) and each timer cycle (15 ms, 7.5 ms after fast recovery) is an increase
//! event: fast recovery while both counts are below F = 5 (CR <- (CR + TR)/2), hyper-active
//! increase when both exceed F (TR += (min - F) R_HAI), active increase otherwise (TR += R_AI);
//! then CR <- (CR + TR)/2. The limiter is released once CR and TR are back at line rate.
//!
//! Rate scaling: the constants are given at `ref_rate`. Sampling and the byte counter count
//! bytes, so they keep their meaning at any rate; the time- and rate-valued ones are scaled so
//! the dynamics stay those of the reference link: Q_eq by each port's rate, R_AI, R_HAI and
//! min_rate by the source's line rate (as the HPCC simulator scales DCQCN's steps), and the
//! timer by ref_rate / line rate (at 100 Gb/s: 1.5 ms, so a slow flow still recovers by timer
//! as it would at 10 Gb/s). Set `ref_rate` to the line rate to use the values as written.
//! Defaults (at 10 Gb/s): Q_eq 26 KB, w 2, Gd 1/128, sampling 1%..10%, byte counter 150 KB,
//! timer 15 ms, F 5, R_AI 5 Mb/s, R_HAI 50 Mb/s, min_rate 5 Mb/s.
//!
//! `qcn_fixed` samples 1% of frames whatever |Fb| (`sample_max = 0.01`): the PCN paper's QCN,
//! whose "update period is about 20us (time of transmitting 100 packets)" (PCN, section 3).

use super::{CtrlInfo, DataOut, Params, Scheme, SchemeInfo, SenderPart, Sw, SwitchPart, Tx, Verdict};
use crate::net::{Mark, Packet, PktKind, Port, SchemeHdr};
use crate::sim::quantity::{Rate, Size, Time};
use crate::sim::input::ScenarioError;
use crate::sim::PS_PER_US;
use serde::{Deserialize, Serialize};

/// The scheme type of `qcn` and `qcn_fixed`.
pub struct Qcn;

impl Scheme for Qcn {
    const SCHEMES: &'static [SchemeInfo] = &[
        INFO,
        SchemeInfo {
            name: "qcn_fixed",
            description: "QCN with sampling fixed at 1% (an update about every 100 frames), as the PCN paper describes QCN's update period.",
            ..INFO
        },
    ];
    type Params = QcnParams;
    type Sender = QcnRp;
    type Receiver = ();
    type Switch = QcnCp;
    fn default_params(name: &str) -> QcnParams {
        let p = QcnParams::default();
        match name {
            "qcn_fixed" => QcnParams {
                sample_max: p.sample_min,
                ..p
            },
            _ => p,
        }
    }
}

const INFO: SchemeInfo = SchemeInfo {
    name: "qcn",
    description: "QCN (IEEE 802.1Qau): switches sample arrivals and send quantized feedback Fb = -(Q_off + w Q_delta) to the source; the source cuts by Gd|Fb| and recovers by byte counter and timer (fast recovery, active, hyper-active increase).",
    paper: "Alizadeh et al., Data Center Transport Mechanisms: Congestion Control Theory and IEEE Standardization, Allerton 2008; IEEE 802.1Qau",
    ..SchemeInfo::BASE
};

/// Control code of a feedback message; `hdr.a` carries the quantized |Fb|.
pub const FEEDBACK: u8 = 1;
const TIMER_INCREASE: u8 = 0;

/// Largest quantized |Fb| (6 bits).
pub const FB_MAX: u8 = 63;

/// QCN parameters (module header: meaning, defaults, source).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct QcnParams {
    /// Rate at which q_eq, rate_ai, rate_hai and min_rate are given.
    pub ref_rate: Rate,
    /// Equilibrium queue length at `ref_rate`.
    pub q_eq: Size,
    /// Weight of the queue growth in Fb.
    pub w: f64,
    /// Decrease gain per unit of quantized |Fb|.
    pub gd: f64,
    pub sample_min: f64,
    pub sample_max: f64,
    pub byte_counter: Size,
    pub timer: Time,
    pub fast_recovery_cycles: u32,
    pub rate_ai: Rate,
    pub rate_hai: Rate,
    pub min_rate: Rate,
}

impl Default for QcnParams {
    fn default() -> Self {
        QcnParams {
            ref_rate: Rate(10_000_000_000),
            q_eq: Size(26_000),
            w: 2.0,
            gd: 1.0 / 128.0,
            sample_min: 0.01,
            sample_max: 0.10,
            byte_counter: Size(150_000),
            timer: Time(15_000 * PS_PER_US),
            fast_recovery_cycles: 5,
            rate_ai: Rate(5_000_000),
            rate_hai: Rate(50_000_000),
            min_rate: Rate(5_000_000),
        }
    }
}

impl Params for QcnParams {
    fn validate(&self) -> Result<(), ScenarioError> {
        let e = |f: &str, m: &str| Err(ScenarioError::new(&format!("cc.params.{f}"), m));
        if self.q_eq.0 == 0 {
            return e("q_eq", "must be > 0");
        }
        if self.ref_rate.0 == 0 {
            return e("ref_rate", "must be > 0 bps (the rate the constants are given at)");
        }
        if !(self.w >= 0.0 && self.w.is_finite()) {
            return e("w", "must be >= 0");
        }
        if !(self.gd > 0.0 && self.gd * FB_MAX as f64 <= 1.0) {
            return e(
                "gd",
                "must be in (0, 1/63] so one message cannot cut below zero",
            );
        }
        if !(0.0 < self.sample_min && self.sample_min <= self.sample_max && self.sample_max <= 1.0)
        {
            return e("sample_min", "need 0 < sample_min <= sample_max <= 1");
        }
        if self.byte_counter.0 < 2 {
            return e("byte_counter", "must be >= 2 bytes");
        }
        if self.timer.0 < 2 {
            return e("timer", "must be > 0");
        }
        Ok(())
    }
}

/// Target-rate step of one QCN-style increase event, from the timer and byte-counter cycle
/// counts before the event: 0 in fast recovery (both below `fr`), (min - fr) x `rate_hai` in
/// hyper-active increase (both above `fr`), `rate_ai` otherwise. DCQCN's paper model uses the
/// same staging.
pub(super) fn target_step(timer_cycles: u32, byte_cycles: u32, fr: u32, ai: f64, hai: f64) -> f64 {
    let (hi, lo) = (timer_cycles.max(byte_cycles), timer_cycles.min(byte_cycles));
    if hi < fr {
        0.0
    } else if lo > fr {
        (lo - fr) as f64 * hai
    } else {
        ai
    }
}

/// Congestion-point state of one switch egress port.
#[derive(Clone, Debug, Default)]
pub struct QcnCp {
    pub q_eq_bytes: u64,
    q_old_bytes: u64,
    last_fb: u8,
}

impl SwitchPart<QcnParams> for QcnCp {
    fn new(p: &QcnParams, port: &Port) -> Self {
        QcnCp::at_rate(p, port.rate_bps)
    }
    /// Maybe sample an arriving data frame and send its source a feedback message.
    fn on_enqueue(&mut self, p: &QcnParams, sw: &mut Sw, pkt: &mut Packet) -> Verdict {
        if pkt.kind == PktKind::Data && sw.rng().uniform() < self.sample_probability(p) {
            if let Some(fb) = self.sample(p, sw.queue_bytes()) {
                let hdr = SchemeHdr { a: fb as u32, b: 0 };
                sw.send_to_source(pkt.flow, FEEDBACK, hdr, Mark::Ce);
            }
        }
        Verdict::Enqueue
    }
}

impl QcnCp {
    /// A congestion point with `q_eq` scaled to a port of `rate_bps`.
    pub fn at_rate(p: &QcnParams, rate_bps: u64) -> QcnCp {
        QcnCp {
            q_eq_bytes: (p.q_eq.0 as u128 * rate_bps as u128 / p.ref_rate.0 as u128) as u64,
            ..Default::default()
        }
    }

    /// Probability of sampling the next arriving frame.
    #[inline]
    pub fn sample_probability(&self, p: &QcnParams) -> f64 {
        p.sample_min + (p.sample_max - p.sample_min) * self.last_fb as f64 / FB_MAX as f64
    }

    /// A sampled frame found `q_bytes` queued: the quantized |Fb| to send, if congested.
    pub fn sample(&mut self, p: &QcnParams, q_bytes: u64) -> Option<u8> {
        let q_off = q_bytes as f64 - self.q_eq_bytes as f64;
        let q_delta = q_bytes as f64 - self.q_old_bytes as f64;
        self.q_old_bytes = q_bytes;
        let fb = -(q_off + p.w * q_delta);
        if fb >= 0.0 {
            self.last_fb = 0;
            return None;
        }
        let fb_span = self.q_eq_bytes as f64 * (2.0 * p.w + 1.0);
        let q = (-fb * FB_MAX as f64 / fb_span).ceil().min(FB_MAX as f64) as u8;
        self.last_fb = q;
        Some(q)
    }
}

/// Reaction-point (rate limiter) state of one flow.
#[derive(Clone, Debug, Default)]
pub struct QcnRp {
    limited: bool,
    rate_bps: f64,
    target_bps: f64,
    line_bps: f64,
    /// line rate / ref_rate: scales R_AI, R_HAI and min_rate.
    scale: f64,
    byte_cycles: u32,
    timer_cycles: u32,
    bytes_since: u64,
}

impl SenderPart<QcnParams> for QcnRp {
    fn new(_: &QcnParams) -> Self {
        QcnRp::default()
    }

    fn on_start(&mut self, p: &QcnParams, tx: &mut Tx) {
        self.line_bps = tx.line_rate_bps() as f64;
        self.rate_bps = tx.rate_bps() as f64; // the line rate, or the flow's start_rate
        self.target_bps = self.rate_bps;
        self.scale = self.line_bps / p.ref_rate.0 as f64;
    }

    fn on_ctrl(&mut self, p: &QcnParams, tx: &mut Tx, c: &CtrlInfo) {
        if c.code == FEEDBACK {
            self.on_feedback(p, tx, c.hdr.a as u8);
        }
    }

    fn on_send(&mut self, p: &QcnParams, tx: &mut Tx, d: &mut DataOut) {
        let bytes = d.size_bytes as u64;
        if !self.limited {
            return;
        }
        self.bytes_since += bytes;
        loop {
            let cycle = if self.byte_cycles < p.fast_recovery_cycles {
                p.byte_counter.0
            } else {
                p.byte_counter.0 / 2
            };
            if self.bytes_since < cycle || !self.limited {
                break;
            }
            self.bytes_since -= cycle;
            self.increase(p, tx);
            self.byte_cycles += 1;
        }
        self.apply(tx);
    }

    fn on_timer(&mut self, p: &QcnParams, tx: &mut Tx, _: u8) {
        if !self.limited {
            return;
        }
        self.increase(p, tx);
        self.timer_cycles += 1;
        self.apply(tx);
        if self.limited {
            tx.set_timer(TIMER_INCREASE, tx.now_ps + self.timer_period_ps(p));
        }
    }
}

impl QcnRp {
    /// Current rate limit (tests, probes).
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    fn apply(&self, tx: &mut Tx) {
        tx.ctl().rate_bps = (self.rate_bps.round() as u64).max(1);
    }

    fn timer_period_ps(&self, p: &QcnParams) -> u64 {
        let full = (p.timer.0 as f64 / self.scale) as u64;
        if self.timer_cycles < p.fast_recovery_cycles {
            full
        } else {
            full / 2
        }
    }

    /// A feedback message carrying the quantized |Fb| `fb`.
    pub fn on_feedback(&mut self, p: &QcnParams, tx: &mut Tx, fb: u8) {
        // Feedback within the first byte-counter cycle after a cut keeps the target the cut left.
        if !self.limited || self.byte_cycles > 0 {
            self.target_bps = self.rate_bps;
        }
        self.limited = true;
        self.rate_bps =
            (self.rate_bps * (1.0 - p.gd * fb as f64)).max(p.min_rate.0 as f64 * self.scale);
        self.byte_cycles = 0;
        self.timer_cycles = 0;
        self.bytes_since = 0;
        tx.set_timer(TIMER_INCREASE, tx.now_ps + self.timer_period_ps(p));
        self.apply(tx);
    }

    /// One increase event; releases the limiter once back at line rate.
    fn increase(&mut self, p: &QcnParams, tx: &mut Tx) {
        self.target_bps += target_step(
            self.timer_cycles,
            self.byte_cycles,
            p.fast_recovery_cycles,
            p.rate_ai.0 as f64 * self.scale,
            p.rate_hai.0 as f64 * self.scale,
        );
        self.target_bps = self.target_bps.min(self.line_bps);
        self.rate_bps = (self.rate_bps + self.target_bps) / 2.0;
        if self.target_bps >= self.line_bps && self.line_bps - self.rate_bps < 1.0 {
            self.rate_bps = self.line_bps;
            self.limited = false;
            tx.cancel_timer(TIMER_INCREASE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feedback_is_zero_below_q_eq_and_quantized_above() {
        let p = QcnParams::default();
        let mut cp = QcnCp::at_rate(&p, 100_000_000_000); // Q_eq = 260 KB at 100G
        assert_eq!(cp.q_eq_bytes, 260_000);
        // A steady queue below Q_eq (after the sample that saw it grow): Fb > 0, no message,
        // and sampling back at the base rate.
        cp.sample(&p, 200_000);
        for _ in 0..3 {
            assert_eq!(cp.sample(&p, 200_000), None);
        }
        assert_eq!(cp.sample_probability(&p), 0.01);
        // Steady above Q_eq: |Fb| = Q_off, quantized against Q_eq (2w + 1).
        cp.sample(&p, 400_000);
        let fb = cp.sample(&p, 400_000).unwrap();
        assert_eq!(fb, (140_000.0f64 * 63.0 / (260_000.0 * 5.0)).ceil() as u8);
        // A queue growing fast below Q_eq is congestion too (the w Q_delta term).
        cp.sample(&p, 100_000);
        assert!(cp.sample(&p, 300_000).is_some());
        // Saturation at 63, and sampling at the maximum rate then.
        assert_eq!(cp.sample(&p, 5_000_000), Some(FB_MAX));
        assert!((cp.sample_probability(&p) - 0.10).abs() < 1e-12);
    }

    #[test]
    fn reaction_point_cuts_by_gd_fb_and_recovers_to_the_target() {
        let p = QcnParams::default();
        let mut f = crate::cc::TestFlow::new(100_000_000_000);
        let mut rp = QcnRp::default();
        rp.on_start(&p, &mut f.tx(0));
        rp.on_feedback(&p, &mut f.tx(0), 32);
        assert_eq!(f.f.ctl.rate_bps, (100e9 * (1.0 - 32.0 / 128.0)) as u64);
        // A second message before any increase cycle cuts the rate again but keeps the target
        // (the line rate) the first left.
        rp.on_feedback(&p, &mut f.tx(0), 32);
        let cut = 100e9 * 0.75 * 0.75;
        assert_eq!(f.f.ctl.rate_bps, cut as u64);
        // Fast recovery: five byte-counter cycles halve the distance to the target each time.
        let mut gap = 100e9 - cut;
        for _ in 0..5 {
            rp.on_send(&p, &mut f.tx(0), &mut DataOut::test(150_000));
            gap /= 2.0;
            assert!((100e9 - rp.rate_bps() - gap).abs() < 1.0);
        }
        // After an increase cycle, feedback moves the target down to the rate it cuts.
        let before = rp.rate_bps();
        rp.on_feedback(&p, &mut f.tx(0), 8);
        assert_eq!(rp.target_bps, before);
    }
}
