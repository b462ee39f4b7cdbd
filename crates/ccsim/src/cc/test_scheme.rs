//! `test_probe`: a scheme that exists only in the unit tests, to show (and check) that a scheme
//! with all three parts is one file plus one registry line. It is receiver-driven:
//! * sender: holds for `hold` after start (a halt ended by its own timer), then sends only on
//!   credit: `initial_credit` packets, plus one MTU per grant;
//! * receiver: grants one MTU per in-order data packet (a control packet of its own kind), and
//!   every ACK carries the number of packets received so far;
//! * switch: stamps each data packet with the egress port (id + 1) and runs a port timer that
//!   ticks `ticks` times from the first data packet on.

use super::{
    AckInfo, CtrlInfo, DataInfo, Params, ReceiverPart, Rx, Scheme, SchemeInfo, SenderPart, Sw,
    SwitchPart, Tx,
};
use crate::net::{Mark, Packet, PktKind, Port, SchemeHdr};
use crate::scenario::units::Time;
use serde::{Deserialize, Serialize};

pub struct Probe;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProbeParams {
    pub initial_credit: u64,
    pub hold: Time,
    pub ticks: u32,
}

impl Default for ProbeParams {
    fn default() -> Self {
        ProbeParams {
            initial_credit: 2,
            hold: Time(10_000_000),
            ticks: 5,
        }
    }
}

impl Params for ProbeParams {}

impl Scheme for Probe {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "test_probe",
        description: "test only: credit-gated sender, granting receiver, stamping switch",
        header_bytes: 4,
        ..SchemeInfo::BASE
    }];
    type Params = ProbeParams;
    type Sender = ProbeTx;
    type Receiver = ProbeRx;
    type Switch = ProbeSw;
    fn default_params(_: &str) -> ProbeParams {
        ProbeParams::default()
    }
}

const GRANT: u8 = 7;

#[derive(Clone, Debug, Default)]
pub struct ProbeTx {
    pub grants: u64,
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
    fn on_ctrl(&mut self, _: &ProbeParams, tx: &mut Tx, c: &CtrlInfo) {
        if c.code == GRANT {
            self.grants += 1;
            let mtu = tx.mtu_payload_bytes();
            tx.ctl().credit_bytes += mtu;
        }
    }
    fn on_ack(&mut self, _: &ProbeParams, _: &mut Tx, ack: &AckInfo) {
        self.max_acked_count = self.max_acked_count.max(ack.hdr.a);
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
}

impl ReceiverPart<ProbeParams> for ProbeRx {
    type Host = ProbeHost;
    fn new(_: &ProbeParams) -> Self {
        ProbeRx::default()
    }
    fn on_data(&mut self, host: &mut ProbeHost, _: &ProbeParams, rx: &mut Rx, d: &DataInfo) {
        host.packets += 1;
        self.received += 1;
        self.stamp = d.hdr.b;
        if d.in_order {
            rx.send_ctrl(GRANT, SchemeHdr::default(), Mark::None);
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
    pub ticks: u32,
}

impl SwitchPart<ProbeParams> for ProbeSw {
    fn new(_: &ProbeParams, _: &Port) -> Self {
        ProbeSw::default()
    }
    fn on_dequeue(&mut self, _: &ProbeParams, sw: &mut Sw, pkt: &mut Packet) {
        if pkt.kind == PktKind::Data {
            pkt.hdr.b = sw.port_id + 1;
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
    use super::super::{ReceiverState, SenderState, SwitchState};
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
        let SenderState::TestScheme(tx) = &sim.senders[0] else {
            unreachable!()
        };
        // The last grant leaves right after the last ACK and finds the flow finished.
        assert_eq!(tx.grants, 19);
        assert!(tx.timer_fired);
        assert_eq!(
            tx.max_acked_count, 20,
            "every ACK carries the receiver's count"
        );
        let ReceiverState::TestScheme(rx) = &sim.receivers[0] else {
            unreachable!()
        };
        // The switch stamped its egress port toward h1 on each data packet.
        let sw_port = (0..sim.ports.len() as u32)
            .find(|&p| {
                !sim.ports[p as usize].is_host
                    && sim.ports[sim.ports[p as usize].peer as usize].node == sim.topo.hosts[1]
            })
            .unwrap();
        assert_eq!(rx.stamp, sw_port + 1);
        let dequeued: u64 = sim
            .sw_parts
            .iter()
            .map(|s| match s {
                SwitchState::TestScheme(s) => s.dequeued,
                _ => unreachable!(),
            })
            .sum();
        assert_eq!(dequeued, 20);
        let SwitchState::TestScheme(s) = &sim.sw_parts[sw_port as usize] else {
            unreachable!()
        };
        assert_eq!(s.ticks, 5, "a port timer re-armed by its own hook");
        // Held 10 us, then two packets per grant round trip: the FCT is the hold plus ten
        // round trips of (one packet + one grant) at least.
        let fct_ps = f.finish_ps - f.start_ps;
        assert!(fct_ps > 10_000_000 + 10 * 4_000_000, "FCT {fct_ps} ps");
    }
}
