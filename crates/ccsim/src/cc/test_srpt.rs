//! `test_srpt`: a receiver-driven scheme that exists only in the unit tests, to show (and
//! check) that the interface carries one: one file plus one registry line, no engine change.
//! * sender: one BDP unscheduled (from its own size, `Tx::size_bytes`), then one MTU of credit
//!   per grant; each data packet carries its unscheduled bytes (`hdr.b`) and a "room" field
//!   (`hdr.a = 1`) that switches AND, and a path key that sprays it over equal-cost paths; a
//!   trimmed packet is sent again (`Tx::resend`), as the receiver's NACK names it;
//! * receiver: per host, shortest remaining first: every whole data arrival grants one MTU to
//!   the inbound flow with the fewest bytes left to schedule (`Rx::inbound`,
//!   `Rx::send_ctrl_to`); a trimmed header puts its packet back to be scheduled;
//! * switch: clears "room" on a data packet leaving a port with a queue behind it, and counts
//!   the control packets it sees (`switch_sees_ctrl`).

use super::{
    AckInfo, BaseRtt, CtrlInfo, DataInfo, DataOut, FabricMode, Params, ReceiverPart, Rx, Scheme,
    SchemeInfo, SenderPart, Sw, SwitchPart, Tx,
};
use crate::net::{Packet, PktKind, Port, SchemeHdr};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub struct Srpt;

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SrptParams {}

impl Params for SrptParams {}

const GRANT: u8 = 9;
/// Bytes on the wire of a grant.
pub const GRANT_BYTES: u32 = 72;

impl Scheme for Srpt {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "test_srpt",
        description: "test only: SRPT grants per receiving host, sprayed, trimmed, own resends",
        header_bytes: 8,
        base_rtt: BaseRtt::Fabric,
        trim: true,
        ctrl_bytes: &[(GRANT, GRANT_BYTES)],
        path_per_packet: true,
        own_recovery: true,
        inbound_flows: true,
        switch_sees_ctrl: true,
        fabric: FabricMode::Lossy,
        ..SchemeInfo::BASE
    }];
    type Params = SrptParams;
    type Sender = SrptTx;
    type Receiver = SrptRx;
    type Switch = SrptSw;
    fn default_params(_: &str) -> SrptParams {
        SrptParams {}
    }
}

#[derive(Clone, Debug, Default)]
pub struct SrptTx {
    unscheduled_bytes: u64,
    sent: u32,
    pub resends: u64,
}

impl SenderPart<SrptParams> for SrptTx {
    fn new(_: &SrptParams) -> Self {
        SrptTx::default()
    }
    fn on_start(&mut self, _: &SrptParams, tx: &mut Tx) {
        self.unscheduled_bytes = super::first_window_bytes(crate::sim::quantity::Size(0), tx);
        tx.ctl().credit_bytes = self.unscheduled_bytes;
    }
    fn on_send(&mut self, _: &SrptParams, _: &mut Tx, d: &mut DataOut) {
        d.hdr = SchemeHdr {
            a: 1,
            b: self.unscheduled_bytes as u32,
        };
        d.path_key = self.sent;
        self.sent += 1;
    }
    fn on_ctrl(&mut self, _: &SrptParams, tx: &mut Tx, c: &CtrlInfo) {
        if c.code == GRANT {
            tx.ctl().credit_bytes += c.hdr.a as u64;
        }
    }
    fn on_ack(&mut self, _: &SrptParams, tx: &mut Tx, ack: &AckInfo) {
        if let (true, Some(seq)) = (ack.trimmed, ack.sack_seq) {
            self.resends += 1;
            tx.resend(seq);
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct SrptRx {
    /// Payload bytes that arrived whole (not trimmed), duplicates included.
    pub payload_bytes: u64,
    /// Data packets that arrived with "room" still set, and cleared.
    pub room: [u64; 2],
}

/// Per receiving host: bytes scheduled (unscheduled + granted) per flow.
#[derive(Clone, Debug, Default)]
pub struct SrptHost {
    scheduled: BTreeMap<u32, u64>,
}

impl ReceiverPart<SrptParams> for SrptRx {
    type Host = SrptHost;
    fn new(_: &SrptParams) -> Self {
        SrptRx::default()
    }
    fn on_data(&mut self, host: &mut SrptHost, _: &SrptParams, rx: &mut Rx, d: &DataInfo) {
        let mtu = rx.mtu_payload_bytes();
        let grant = SchemeHdr { a: mtu as u32, b: 0 };
        let scheduled = host.scheduled.entry(rx.flow_id()).or_insert(d.hdr.b as u64);
        if d.trimmed {
            // The lost packet goes back to be scheduled: its resend waits for a grant in
            // shortest-first order, so trims shrink what is in flight.
            *scheduled = scheduled.saturating_sub(mtu);
            return;
        }
        self.payload_bytes += d.payload_bytes as u64;
        self.room[(d.hdr.a == 0) as usize] += 1;
        // Shortest remaining to schedule first; ties to the lowest flow id.
        let next = rx
            .inbound()
            .iter()
            .filter_map(|f| {
                let scheduled = *host.scheduled.get(&f.flow)?;
                (scheduled < f.size_bytes).then(|| (f.size_bytes - scheduled, f.flow))
            })
            .min();
        if let Some((_, flow)) = next {
            *host.scheduled.get_mut(&flow).expect("listed") += mtu;
            rx.send_ctrl_to(flow, GRANT, grant);
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct SrptSw {
    /// Flows whose data left through this port (bit per flow id < 64).
    pub flows_seen: u64,
    pub ctrl_seen: u64,
}

impl SwitchPart<SrptParams> for SrptSw {
    fn new(_: &SrptParams, _: &Port) -> Self {
        SrptSw::default()
    }
    fn on_dequeue(&mut self, _: &SrptParams, sw: &mut Sw, pkt: &mut Packet) {
        match pkt.kind {
            PktKind::Data if pkt.payload_bytes > 0 => {
                self.flows_seen |= 1 << (pkt.flow % 64);
                pkt.hdr.a &= (sw.queue_bytes() == 0) as u32;
            }
            PktKind::Data | PktKind::Ctrl => self.ctrl_seen += 1,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ReceiverStates, SenderStates, SwitchStates};
    use crate::Scenario;

    /// Eight senders in the other pods of a k = 4 fat tree into host 0, sizes 20-90 KB, on a
    /// lossy fabric whose queues hold 8 packets.
    fn incast() -> crate::Simulation {
        let mut text = String::from(
            r#"
            [topology]
            kind = "fat_tree"
            k = 4
            host_link = { rate = "10Gbps", delay = "1us" }
            fabric_link = { rate = "10Gbps", delay = "1us" }
            [fabric]
            pfc = { enabled = false }
            loss = { mode = "drop_tail", queue_packets = 8 }
            [cc]
            scheme = "test_srpt"
            "#,
        );
        for i in 0..8 {
            let size_kb = 20 + 10 * ((i * 3) % 8);
            text += &format!("[[flows]]\nsrc = {}\ndst = 0\nsize = \"{size_kb}KB\"\n", 4 + i);
        }
        let sc = Scenario::load(&text, std::path::Path::new("."), None, &[]).unwrap();
        let mut sim = sc.build().unwrap();
        sim.run().unwrap();
        sim
    }

    #[test]
    fn a_receiver_driven_scheme_delivers_every_byte_once_on_a_lossy_incast() {
        let sim = incast();
        let total: u64 = sim.flows.iter().map(|f| f.size_bytes).sum();
        assert!(sim.flows.iter().all(|f| f.finished && f.snd_una == f.size_bytes));
        assert_eq!(sim.metrics.delivered_bytes, total);
        let ReceiverStates::TestSrpt(rx) = &sim.receivers else {
            unreachable!("a test_srpt run")
        };
        let arrived: u64 = rx.iter().map(|r| r.payload_bytes).sum();
        assert_eq!(arrived, total, "every byte arrived exactly once");
        let trims: u64 = sim.ports.iter().map(|p| p.trims).sum();
        let SenderStates::TestSrpt(tx) = &sim.senders else {
            unreachable!()
        };
        let resends: u64 = tx.iter().map(|t| t.resends).sum();
        assert!(trims > 0 && resends == trims, "{trims} trims, {resends} resends");
        // The "room" field was ANDed to 0 on some packets and reached the receiver set on
        // others.
        let room = rx.iter().fold([0, 0], |a, r| [a[0] + r.room[0], a[1] + r.room[1]]);
        assert!(room[0] > 0 && room[1] > 0, "{room:?}");
    }

    #[test]
    fn srpt_grants_finish_flows_shortest_first() {
        let sim = incast();
        let mut by_finish: Vec<_> = sim.flows.iter().map(|f| (f.finish_ps, f.size_bytes)).collect();
        by_finish.sort();
        let sizes: Vec<u64> = by_finish.iter().map(|&(_, s)| s).collect();
        let mut sorted = sizes.clone();
        sorted.sort();
        assert_eq!(sizes, sorted, "finish order by size: {by_finish:?}");
    }

    #[test]
    fn path_keys_spray_a_flow_and_switch_hooks_see_control_packets() {
        let sim = incast();
        let SwitchStates::TestSrpt(sw) = &sim.sw_parts else {
            unreachable!()
        };
        // Flow 0 (host 4, pod 1) reaches pod 0 through one core switch per packet: count the
        // core ports that carried it.
        let core_ports = (0..sim.ports.len())
            .filter(|&p| {
                let node = sim.ports[p].node as usize;
                sim.topo.nodes[node].layer == crate::topo::Layer::Core && sw[p].flows_seen & 1 != 0
            })
            .count();
        assert!(core_ports > 1, "flow 0 crossed {core_ports} core ports");
        assert!(sw.iter().map(|s| s.ctrl_seen).sum::<u64>() > 0);
    }
}
