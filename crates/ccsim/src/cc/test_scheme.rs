//! `test_probe`: a scheme that exists only in the unit tests, to show (and check) that a scheme
//! with all three parts is one file plus one registry line. It is receiver-driven:
//! * sender: holds for `hold` after start (a halt ended by its own timer), then sends only on
//!   credit: `initial_credit` packets, plus one MTU per grant;
//! * receiver: grants one MTU per in-order data packet (a control packet of its own kind), and
//!   every ACK carries the number of packets received so far; the first data packet starts a
//!   host timer that ticks `ticks` times;
//! * switch: stamps each data packet with the egress port (id + 1) and runs a port timer that
//!   ticks `ticks` times from the first data packet on.
//!
//! `test_probe_trim` is `test_probe` whose packets a lossy switch trims instead of dropping.
//! `test_probe_paced` is the same with its grants in a rate-limited control queue (1/20 of
//! the link, 2 deep), as ExpressPass credits, and data packets alternating priorities 3 (the
//! default) and 4 (`prio_per_packet`).

use super::{
    AckInfo, CtrlInfo, CtrlQueue, DataInfo, DataOut, HostCtx, Params, ReceiverPart, Rx, Scheme, SchemeInfo,
    SenderPart, Sw, SwitchPart, Tx,
};
use crate::net::{Mark, Packet, PktKind, Port, SchemeHdr};
use crate::sim::quantity::Time;
use serde::{Deserialize, Serialize};

pub struct Probe;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProbeParams {
    pub initial_credit: u64,
    pub hold: Time,
    pub ticks: u32,
    /// Alternate data priorities 3 and 4, packet by packet.
    pub alternate_prio: bool,
    /// Restore `initial_credit` when the engine goes back (a NACK, a timeout).
    pub credit_on_rewind: bool,
}

impl Default for ProbeParams {
    fn default() -> Self {
        ProbeParams {
            initial_credit: 2,
            hold: Time(10_000_000),
            ticks: 5,
            alternate_prio: false,
            credit_on_rewind: false,
        }
    }
}

impl Params for ProbeParams {}

impl Scheme for Probe {
    const SCHEMES: &'static [SchemeInfo] = &[
        SchemeInfo {
            name: "test_probe",
            description: "test only: credit-gated sender, granting receiver, stamping switch",
            header_bytes: 4,
            ..SchemeInfo::BASE
        },
        SchemeInfo {
            name: "test_probe_trim",
            description: "test only: test_probe with trimming on a lossy fabric",
            header_bytes: 4,
            trim: true,
            ..SchemeInfo::BASE
        },
        SchemeInfo {
            name: "test_probe_paced",
            description: "test only: test_probe with grants in a rate-limited control queue",
            header_bytes: 4,
            prio_per_packet: true,
            ctrl_queue: Some(CtrlQueue {
                code: GRANT,
                share_num: 1,
                share_den: 20,
                limit_packets: 2,
            }),
            ..SchemeInfo::BASE
        },
    ];
    type Params = ProbeParams;
    type Sender = ProbeTx;
    type Receiver = ProbeRx;
    type Switch = ProbeSw;
    fn default_params(name: &str) -> ProbeParams {
        ProbeParams {
            alternate_prio: name == "test_probe_paced",
            ..ProbeParams::default()
        }
    }
}

const GRANT: u8 = 7;

#[derive(Clone, Debug, Default)]
pub struct ProbeTx {
    pub grants: u64,
    /// Arrival time of each grant.
    pub grant_times_ps: Vec<u64>,
    pub timer_fired: bool,
    pub max_acked_count: u32,
}

impl SenderPart<ProbeParams> for ProbeTx {
    fn new(_: &ProbeParams) -> Self {
        ProbeTx::default()
    }
    fn on_start(&mut self, p: &ProbeParams, tx: &mut Tx) {
        let mtu = tx.mtu_payload_bytes();
        let end = tx.now_ps + p.hold.0;
        tx.ctl().credit_bytes = p.initial_credit * mtu;
        tx.ctl().hold_until_ps = end;
        tx.set_timer(0, end);
    }
    fn on_timer(&mut self, _: &ProbeParams, _: &mut Tx, _: u8) {
        self.timer_fired = true;
    }
    fn on_send(&mut self, p: &ProbeParams, tx: &mut Tx, _: &mut DataOut) {
        if p.alternate_prio {
            let c = tx.ctl();
            c.data_prio ^= 7;
        }
    }
    fn on_ctrl(&mut self, _: &ProbeParams, tx: &mut Tx, c: &CtrlInfo) {
        if c.code == GRANT {
            self.grants += 1;
            self.grant_times_ps.push(tx.now_ps);
            let mtu = tx.mtu_payload_bytes();
            tx.ctl().credit_bytes += mtu;
        }
    }
    fn on_ack(&mut self, p: &ProbeParams, tx: &mut Tx, ack: &AckInfo) {
        self.max_acked_count = self.max_acked_count.max(ack.hdr.a);
        if ack.nack && p.credit_on_rewind {
            let mtu = tx.mtu_payload_bytes();
            tx.ctl().credit_bytes = p.initial_credit * mtu;
        }
    }
    fn on_timeout(&mut self, p: &ProbeParams, tx: &mut Tx) {
        if p.credit_on_rewind {
            let mtu = tx.mtu_payload_bytes();
            tx.ctl().credit_bytes = p.initial_credit * mtu;
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct ProbeRx {
    pub received: u32,
    pub stamp: u32,
}

#[derive(Clone, Debug, Default)]
pub struct ProbeHost {
    pub packets: u64,
    pub ticks: u32,
}

impl ReceiverPart<ProbeParams> for ProbeRx {
    type Host = ProbeHost;
    fn new(_: &ProbeParams) -> Self {
        ProbeRx::default()
    }
    fn on_data(&mut self, host: &mut ProbeHost, _: &ProbeParams, rx: &mut Rx, d: &DataInfo) {
        if host.packets == 0 {
            rx.set_host_timer(2, rx.now_ps + 1_000_000);
        }
        host.packets += 1;
        self.received += 1;
        self.stamp = d.hdr.b;
        if d.in_order {
            rx.send_ctrl(GRANT, SchemeHdr::default(), Mark::None);
        }
    }
    fn on_host_timer(host: &mut ProbeHost, p: &ProbeParams, hx: &mut HostCtx, kind: u8) {
        assert_eq!(kind, 2);
        host.ticks += 1;
        if host.ticks < p.ticks {
            hx.set_timer(2, hx.now_ps + 1_000_000);
        }
    }
    fn ack_hdr(&self, _: &ProbeParams) -> SchemeHdr {
        SchemeHdr {
            a: self.received,
            b: 0,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct ProbeSw {
    pub dequeued: u64,
    /// Bit p: a data packet of priority p left through this port.
    pub prios_seen: u8,
    pub ticks: u32,
}

impl SwitchPart<ProbeParams> for ProbeSw {
    fn new(_: &ProbeParams, _: &Port) -> Self {
        ProbeSw::default()
    }
    fn on_dequeue(&mut self, _: &ProbeParams, sw: &mut Sw, pkt: &mut Packet) {
        if pkt.kind == PktKind::Data {
            pkt.hdr.b = sw.port_id + 1;
            self.prios_seen |= 1 << sw.prio;
            if self.dequeued == 0 {
                sw.set_timer(1, sw.now_ps + 1_000_000);
            }
            self.dequeued += 1;
        }
    }
    fn on_timer(&mut self, p: &ProbeParams, sw: &mut Sw, kind: u8) {
        assert_eq!(kind, 1);
        self.ticks += 1;
        if self.ticks < p.ticks {
            sw.set_timer(1, sw.now_ps + 1_000_000);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{HostRxStates, ReceiverStates, SenderStates, SwitchStates};
    use crate::Scenario;

    /// One 20-packet flow h0 -> h1 through one switch, 100G, 1 us links.
    const SCEN: &str = r#"
        [topology]
        kind = "star"
        hosts = 2
        link = { rate = "100Gbps", delay = "1us" }
        [cc]
        scheme = "test_probe"
        [[flows]]
        src = 0
        dst = 1
        size = "20KB"
    "#;

    #[test]
    fn a_scheme_with_all_three_parts_runs_through_the_engine() {
        let sc = Scenario::load(SCEN, std::path::Path::new("."), None, &[]).unwrap();
        let mut sim = sc.build().unwrap();
        sim.run().unwrap();
        let f = &sim.flows[0];
        assert!(f.finished && f.snd_una == 20_000);
        // Links carried 20 data packets, 20 ACKs and 20 grants, two links each.
        assert_eq!(sim.link_traversals, 120);
        let tx = sim.probe_sender(0);
        // The last grant leaves right after the last ACK and finds the flow finished.
        assert_eq!(tx.grants, 19);
        assert!(tx.timer_fired);
        assert_eq!(
            tx.max_acked_count, 20,
            "every ACK carries the receiver's count"
        );
        let ReceiverStates::TestScheme(rx) = &sim.receivers else {
            unreachable!("a test_probe run")
        };
        let rx = &rx[0];
        // The switch stamped its egress port toward h1 on each data packet.
        let sw_port = (0..sim.ports.len() as u32)
            .find(|&p| {
                !sim.ports[p as usize].is_host
                    && sim.ports[sim.ports[p as usize].peer as usize].node == sim.topo.hosts[1]
            })
            .unwrap();
        assert_eq!(rx.stamp, sw_port + 1);
        let parts = sim.probe_switches();
        assert_eq!(parts.iter().map(|s| s.dequeued).sum::<u64>(), 20);
        let s = &parts[sw_port as usize];
        assert_eq!(s.ticks, 5, "a port timer re-armed by its own hook");
        assert_eq!(s.prios_seen, 1 << 3, "one data priority");
        assert_eq!(
            sim.host_rx_ticks(1),
            5,
            "a host timer started by data, re-armed by itself"
        );
        // Held 10 us, then two packets per grant round trip: the FCT is the hold plus ten
        // round trips of (one packet + one grant) at least.
        let fct_ps = f.finish_ps - f.start_ps;
        assert!(fct_ps > 10_000_000 + 10 * 4_000_000, "FCT {fct_ps} ps");
    }

    /// The same flow under `test_probe_paced`, with `credit` packets of initial credit.
    fn paced(credit: u64) -> (crate::Simulation, Result<(), crate::SimError>) {
        let text = SCEN.replace("\"test_probe\"", "\"test_probe_paced\"")
            + &format!("[cc.params]\ninitial_credit = {credit}\n");
        let sc = Scenario::load(&text, std::path::Path::new("."), None, &[]).unwrap();
        let mut sim = sc.build().unwrap();
        let r = sim.run();
        (sim, r)
    }

    #[test]
    fn a_rate_limited_control_queue_paces_its_packets_at_its_share_of_the_link() {
        let (sim, r) = paced(2);
        r.unwrap();
        assert!(sim.flows[0].finished);
        assert_eq!(sim.ports.iter().map(|p| p.ctrl_drops).sum::<u64>(), 0);
        let tx = sim.probe_sender(0);
        assert_eq!(tx.grants, 19);
        let parts = sim.probe_switches();
        let seen = parts.iter().fold(0, |m, s| m | s.prios_seen);
        assert_eq!(seen, 0b11000, "data packets alternate priorities 3 and 4");
        // A 64 B grant (60 B + the scheme's 4) takes 5.12 ns at 100 Gb/s; at 1/20 of the link
        // the queue sends one per 102.4 ns, so grants never arrive closer than that.
        let gap_ps = 64 * 80 * 20;
        let min_gap = tx
            .grant_times_ps
            .windows(2)
            .map(|w| w[1] - w[0])
            .min()
            .unwrap();
        assert!(
            min_gap >= gap_ps,
            "grants {min_gap} ps apart, limit {gap_ps} ps"
        );
    }

    #[test]
    fn a_full_rate_limited_control_queue_drops() {
        // All 20 packets at once: grants come every 84 ns, leave every 102.4 ns, and the
        // queue holds two, so some are dropped (dropped grants only lose credit the flow no
        // longer needs).
        let (sim, r) = paced(20);
        r.unwrap();
        assert!(sim.flows[0].finished);
        let drops: u64 = sim.ports.iter().map(|p| p.ctrl_drops).sum();
        assert!(drops > 0);
        let tx = sim.probe_sender(0);
        // One grant per packet: each arrives, is dropped, or (late ones, held back by the
        // pacing) finds the flow already done.
        assert!(tx.grants + drops <= 20, "{} + {drops}", tx.grants);
    }

    #[test]
    fn a_run_that_runs_out_of_events_with_open_flows_reports_a_stall() {
        // No initial credit, so no data, so no grant: nothing can ever happen again.
        let text = format!("{SCEN}[cc.params]\ninitial_credit = 0\n");
        let sc = Scenario::load(&text, std::path::Path::new("."), None, &[]).unwrap();
        let mut sim = sc.build().unwrap();
        let e = sim.run().unwrap_err().to_string();
        assert!(e.contains("stall") && e.contains("flow 0 (0 -> 1)"), "{e}");
    }

    #[test]
    fn the_watchdog_reports_a_stall_that_probes_keep_alive() {
        // The same stall, but a queue probe keeps the event queue busy forever: the progress
        // watchdog ends the run after host.stall_after with no byte delivered.
        let text = format!(
            "{SCEN}[cc.params]\ninitial_credit = 0\n[output]\nqueues = {{ interval = \"10us\", ports = [\"all\"] }}\n"
        );
        let ov = ["host.stall_after=\"2ms\"".to_string()];
        let sc = Scenario::load(&text, std::path::Path::new("."), None, &ov).unwrap();
        let mut sim = sc.build().unwrap();
        let e = sim.run().unwrap_err().to_string();
        assert!(
            e.contains("no byte delivered for 2000.000 us") && e.contains("flow 0 (0 -> 1)"),
            "{e}"
        );
        // The user shortened the wait: the error says so before it blames the transport.
        assert!(
            e.contains("host.stall_after is 2000.000 us, shorter than its default"),
            "{e}"
        );
        assert!(
            sim.now_ps <= 4 * crate::sim::PS_PER_MS,
            "ended at {} ps",
            sim.now_ps
        );
    }

    /// `senders` flows of 20 KB into one port of a lossy star whose queue holds 4 packets,
    /// under `scheme` with `loss` added to the loss table and `params` to the scheme's.
    fn probe_incast(
        scheme: &str,
        senders: u32,
        loss: &str,
        params: &str,
    ) -> (crate::Simulation, Result<(), crate::SimError>) {
        let mut text = format!(
            r#"
            [topology]
            kind = "star"
            hosts = {}
            link = {{ rate = "100Gbps", delay = "1us" }}
            [fabric]
            pfc = {{ enabled = false }}
            loss = {{ mode = "drop_tail", queue_packets = 4{loss} }}
            [cc]
            scheme = "{scheme}"
            params = {{ hold = "0us", {params} }}
            "#,
            senders + 1
        );
        for src in 0..senders {
            text += &format!("[[flows]]\nsrc = {src}\ndst = {senders}\nsize = \"20KB\"\n");
        }
        let sc = Scenario::load(&text, std::path::Path::new("."), None, &[]).unwrap();
        let mut sim = sc.build().unwrap();
        let r = sim.run();
        (sim, r)
    }

    /// `senders` trimming senders with ample credit; the priority-0 queue (trimmed headers)
    /// holds `ctrl_packets` (0: no limit).
    fn trimmed_incast(senders: u32, ctrl_packets: u32) -> crate::Simulation {
        let loss = format!(", ctrl_packets = {ctrl_packets}");
        let (sim, r) = probe_incast("test_probe_trim", senders, &loss, "initial_credit = 1000000");
        r.unwrap();
        sim
    }

    #[test]
    fn a_lossy_switch_trims_instead_of_dropping_and_every_byte_arrives_once() {
        // Packets that find the queue full lose their payload, the receiver NACKs them, and
        // go-back-N resends.
        let sim = trimmed_incast(2, 0);
        let trims: u64 = sim.ports.iter().map(|p| p.trims).sum();
        let drops: u64 = sim.ports.iter().map(|p| p.drops).sum();
        assert!(trims > 0);
        assert_eq!(drops, 0, "trimmed, not dropped");
        assert!(sim.flows.iter().all(|f| f.finished && f.snd_una == 20_000));
        assert_eq!(
            sim.metrics.delivered_bytes, 40_000,
            "each byte delivered once"
        );
    }

    #[test]
    fn a_bounded_header_queue_drops_what_it_cannot_hold_and_timeouts_recover() {
        // Three senders: two of every three packets are trimmed, so headers arrive faster than
        // one per data packet sent and a one-header queue overflows.
        let sim = trimmed_incast(3, 1);
        let drops: u64 = sim.ports.iter().map(|p| p.drops).sum();
        assert!(drops > 0, "a one-header queue overflowed");
        assert!(sim.flows.iter().all(|f| f.finished && f.snd_una == 20_000));
        assert_eq!(sim.metrics.delivered_bytes, 60_000);
    }

    #[test]
    fn a_credit_gated_scheme_gives_credit_back_on_the_engines_timeout() {
        // Drops leave a credit-gated sender without credit when the engine goes back (a NACK,
        // a timeout): the scheme must give credit back (on_ack with ack.nack, on_timeout).
        // Without it the run stalls and the watchdog names that fix; with it every byte
        // arrives once.
        // An 8-to-1 incast under test_probe (one grant per in-order packet).
        let (_, r) = probe_incast("test_probe", 8, "", "initial_credit = 8");
        let e = r.unwrap_err().to_string();
        assert!(
            e.contains("no credit left") && e.contains("SenderPart::on_timeout") && e.contains("AckInfo::nack"),
            "{e}"
        );
        let (sim, r) = probe_incast("test_probe", 8, "", "initial_credit = 8, credit_on_rewind = true");
        r.unwrap();
        assert!(sim.ports.iter().map(|p| p.drops).sum::<u64>() > 0, "no drop");
        let timeouts: u64 = sim.flows.iter().map(|f| f.loss.timeouts).sum();
        assert!(timeouts > 0, "no timeout: on_timeout untried");
        assert!(sim.flows.iter().all(|f| f.finished && f.snd_una == 20_000));
        assert_eq!(sim.metrics.delivered_bytes, 160_000, "each byte once");
    }

    impl crate::Simulation {
        /// `test_probe`'s sender state of flow `flow`.
        fn probe_sender(&self, flow: usize) -> &super::ProbeTx {
            let SenderStates::TestScheme(s) = &self.senders else {
                unreachable!("a test_probe run")
            };
            &s[flow]
        }
        /// `test_probe`'s switch state of every port.
        fn probe_switches(&self) -> &[super::ProbeSw] {
            let SwitchStates::TestScheme(s) = &self.sw_parts else {
                unreachable!("a test_probe run")
            };
            s
        }
        /// Host timer ticks of `test_probe`'s receiver part at host `host`.
        fn host_rx_ticks(&self, host: usize) -> u32 {
            match &self.host_rx {
                HostRxStates::TestScheme(h) => h[host].ticks,
                _ => unreachable!(),
            }
        }
    }
}
