//! Packet traces (`output.trace`): the packets leaving chosen ports, as a pcapng file that
//! Wireshark and tshark open.
//!
//! One interface per traced port, named "from->to", timestamps in ns (`if_tsresol` 9) at the
//! moment the frame starts leaving the port. Each frame is what the packet would carry on a
//! RoCEv2 wire, headers only:
//! * data, ACK, NACK and the scheme's control packets: Ethernet / IPv4 (the ECN field: CE for
//!   a data or control packet's CE mark, ECT(0) otherwise; an ACK's echo of CE is the BTH's
//!   BECN bit) / UDP to port 4791 / InfiniBand BTH (data: RC SEND middle,
//!   ACK and NACK: RC Acknowledge with an AETH, control packets: CNP, opcode 0x81), then the
//!   ccsim header (`CCSIM_HDR_BYTES`, below) as the start of the payload;
//! * PFC PAUSE and RESUME: the MAC control frame of IEEE 802.1Qbb (opcode 0x0101, the class's
//!   bit in the enable vector, its quanta 0xffff for PAUSE and 0 for RESUME).
//!
//! The frame's original length is the packet's size on the wire, and the capture stops after
//! the headers: the IPv4 and UDP lengths count what the frame holds (the headers, the ccsim
//! header and the 4-byte invariant CRC that ends a RoCEv2 packet), so that Wireshark's own
//! InfiniBand dissector parses every frame without ccsim's plugin. The destination QP is
//! 0x800000 + the flow (QPs 0 and 1 are InfiniBand's management QPs). ccsim's ACK and control
//! packets (60 B by default) are smaller than those headers plus the ccsim header: their frames
//! are as long as what was captured, and the ccsim header's `wire_bytes` keeps the size the
//! simulator sent. Hosts are 10.0.0.0 + host id,
//! nodes' MACs 02:cc:00:00:nn:nn (node id). The Lua dissector `ccsim.lua` (in the Python
//! package; `ccsim dissector` prints its path) shows the ccsim header.
//!
//! ccsim header, big-endian: "CCSM", version 1, kind (0 data, 1 ACK, 2 NACK, 3 control),
//! mark (0 none, 1 UE, 2 CE), priority, control code, 1 reserved byte, wire bytes (u16),
//! payload bytes (u16), flow (u32), seq (u64: first payload byte of data, cumulative ACK),
//! timestamp (u64 ps: data's send time, an ACK's echo), the scheme's header fields a, b (u32
//! each) and aux (u32).

use crate::net::{Mark, Packet, PktKind};

/// Bytes of the ccsim header after the InfiniBand headers.
pub const CCSIM_HDR_BYTES: usize = 48;

/// A flow's destination queue pair: this plus the flow id (23 bits).
const FLOW_QP_BASE: u32 = 0x80_0000;

/// The RoCEv2 invariant CRC that ends the InfiniBand packet.
const ICRC_BYTES: usize = 4;
/// RoCEv2's UDP destination port.
const ROCE_PORT: u16 = 4791;

/// A trace being recorded.
#[derive(Clone)]
pub struct Trace {
    /// Port id -> interface id (u32::MAX: not traced).
    iface: Vec<u32>,
    start_ps: u64,
    stop_ps: u64,
    /// Frames recorded and the most that will be.
    pub packets: u64,
    max_packets: u64,
    /// The pcapng file so far.
    buf: Vec<u8>,
}

/// What a frame needs besides the packet: where it is and the hosts it is between.
pub struct Hop {
    pub node: u32,
    pub peer: u32,
    pub src_host: u32,
    pub dst_host: u32,
    /// Payload bytes per full packet (a data packet's PSN is seq / this).
    pub mtu_payload: u32,
}

impl Trace {
    /// A trace of `ports` (named `names`) among `n_ports`, frames sent in [start, stop).
    pub fn new(
        n_ports: usize,
        ports: &[u32],
        names: &[String],
        start_ps: u64,
        stop_ps: u64,
        max_packets: u64,
    ) -> Trace {
        let mut t = Trace {
            iface: vec![u32::MAX; n_ports],
            start_ps,
            stop_ps,
            packets: 0,
            max_packets,
            buf: Vec::new(),
        };
        t.section_header();
        for (i, (&p, name)) in ports.iter().zip(names).enumerate() {
            t.iface[p as usize] = i as u32;
            t.interface(name);
        }
        t
    }

    /// Whether a frame sent on `port` at `now_ps` is recorded; false once full.
    #[inline]
    pub fn wants(&self, port: u32, now_ps: u64) -> bool {
        self.iface[port as usize] != u32::MAX
            && now_ps >= self.start_ps
            && now_ps < self.stop_ps
            && self.packets < self.max_packets
    }

    /// Whether the trace stopped at `max_packets`.
    pub fn full(&self) -> bool {
        self.packets >= self.max_packets
    }

    /// The pcapng file.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// Record `pkt` leaving `port` at `now_ps` (the caller checked `wants`).
    pub fn record(&mut self, port: u32, now_ps: u64, pkt: &Packet, hop: &Hop) {
        let frame = frame(pkt, hop);
        let wire = (pkt.size_bytes as usize).max(frame.len());
        let iface = self.iface[port as usize];
        let ts_ns = now_ps / 1000;
        let pad = (4 - frame.len() % 4) % 4;
        let total = 32 + frame.len() + pad;
        let b = &mut self.buf;
        put_u32(b, 6); // Enhanced Packet Block
        put_u32(b, total as u32);
        put_u32(b, iface);
        put_u32(b, (ts_ns >> 32) as u32);
        put_u32(b, ts_ns as u32);
        put_u32(b, frame.len() as u32);
        put_u32(b, wire as u32);
        b.extend_from_slice(&frame);
        b.extend(std::iter::repeat_n(0, pad));
        put_u32(b, total as u32);
        self.packets += 1;
    }

    fn section_header(&mut self) {
        let b = &mut self.buf;
        put_u32(b, 0x0A0D_0D0A);
        put_u32(b, 28);
        put_u32(b, 0x1A2B_3C4D); // byte-order magic: the file is in this machine's order
        b.extend_from_slice(&1u16.to_ne_bytes());
        b.extend_from_slice(&0u16.to_ne_bytes());
        b.extend_from_slice(&(-1i64).to_ne_bytes()); // section length: not given
        put_u32(b, 28);
    }

    fn interface(&mut self, name: &str) {
        let mut opts = Vec::new();
        option(&mut opts, 2, name.as_bytes()); // if_name
        option(&mut opts, 9, &[9]); // if_tsresol: 10^-9 s
        option(&mut opts, 0, &[]); // opt_endofopt
        let total = 20 + opts.len() as u32;
        let b = &mut self.buf;
        put_u32(b, 1); // Interface Description Block
        put_u32(b, total);
        b.extend_from_slice(&1u16.to_ne_bytes()); // LINKTYPE_ETHERNET
        b.extend_from_slice(&0u16.to_ne_bytes());
        put_u32(b, 0); // snaplen: no limit
        b.extend_from_slice(&opts);
        put_u32(b, total);
    }
}

fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_ne_bytes());
}

/// A pcapng option: code, length, value padded to 4 bytes.
fn option(b: &mut Vec<u8>, code: u16, value: &[u8]) {
    b.extend_from_slice(&code.to_ne_bytes());
    b.extend_from_slice(&(value.len() as u16).to_ne_bytes());
    b.extend_from_slice(value);
    b.extend(std::iter::repeat_n(0, (4 - value.len() % 4) % 4));
}

fn mac(node: u32) -> [u8; 6] {
    let n = (node as u16).to_be_bytes();
    [0x02, 0xcc, 0, 0, n[0], n[1]]
}

fn ip(host: u32) -> [u8; 4] {
    (0x0A00_0000u32.wrapping_add(host)).to_be_bytes()
}

/// The captured bytes of `pkt`'s frame (see the module header).
pub fn frame(pkt: &Packet, hop: &Hop) -> Vec<u8> {
    let mut f = Vec::with_capacity(14 + 20 + 8 + 16 + CCSIM_HDR_BYTES);
    if let PktKind::Pause | PktKind::Resume = pkt.kind {
        f.extend_from_slice(&[0x01, 0x80, 0xc2, 0, 0, 0x01]);
        f.extend_from_slice(&mac(hop.node));
        f.extend_from_slice(&0x8808u16.to_be_bytes());
        f.extend_from_slice(&0x0101u16.to_be_bytes());
        let class = pkt.sub.min(7);
        f.extend_from_slice(&(1u16 << class).to_be_bytes());
        for c in 0..8u8 {
            let quanta: u16 = if c == class && pkt.kind == PktKind::Pause {
                0xffff
            } else {
                0
            };
            f.extend_from_slice(&quanta.to_be_bytes());
        }
        f.resize(60, 0); // the shortest Ethernet frame without its FCS
        return f;
    }
    let kind: u8 = match pkt.kind {
        PktKind::Data => 0,
        PktKind::Ack => 1,
        PktKind::Nack => 2,
        _ => 3,
    };
    let aeth = matches!(pkt.kind, PktKind::Ack | PktKind::Nack);
    let ib = 12 + if aeth { 4 } else { 0 };
    let ce = pkt.mark == Mark::Ce;
    // Ethernet
    f.extend_from_slice(&mac(hop.peer));
    f.extend_from_slice(&mac(hop.node));
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    // IPv4
    // An ACK's mark is its echo, which RoCEv2 carries in the BTH's BECN bit, not in IP's ECN.
    let ecn: u8 = if ce && !aeth { 0b11 } else { 0b10 };
    // IPv4 and UDP lengths count what the frame holds (headers, ccsim header, ICRC), so that
    // Wireshark's own RoCEv2 dissector parses it; the size on the wire is the frame's
    // original length and the ccsim header's `wire_bytes`.
    let ip_len = (20 + 8 + ib + CCSIM_HDR_BYTES + ICRC_BYTES) as u16;
    let mut iph = [0u8; 20];
    iph[0] = 0x45;
    iph[1] = (pkt.prio << 5) | ecn; // DSCP: the priority as a class selector
    iph[2..4].copy_from_slice(&ip_len.to_be_bytes());
    iph[6] = 0x40; // don't fragment
    iph[8] = 64;
    iph[9] = 17;
    iph[12..16].copy_from_slice(&ip(hop.src_host));
    iph[16..20].copy_from_slice(&ip(hop.dst_host));
    let sum = checksum(&iph);
    iph[10..12].copy_from_slice(&sum.to_be_bytes());
    f.extend_from_slice(&iph);
    // UDP (no checksum)
    let src_port = 0xC000 | (pkt.flow as u16 & 0x3fff);
    f.extend_from_slice(&src_port.to_be_bytes());
    f.extend_from_slice(&ROCE_PORT.to_be_bytes());
    f.extend_from_slice(&(ip_len.saturating_sub(20)).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    // InfiniBand BTH: opcode, flags, P_Key, destination QP (the flow), PSN
    let opcode = match pkt.kind {
        PktKind::Data => 0x01,
        PktKind::Ack | PktKind::Nack => 0x11,
        _ => 0x81,
    };
    let psn = (pkt.seq / hop.mtu_payload.max(1) as u64) as u32 & 0x00ff_ffff;
    f.extend_from_slice(&[opcode, 0, 0xff, 0xff]);
    let becn = if ce && aeth { 0x40 } else { 0 };
    // The destination QP names the flow, above InfiniBand's management QPs 0 and 1.
    let qp = FLOW_QP_BASE | (pkt.flow & 0x007f_ffff);
    f.extend_from_slice(&((becn << 24) | qp).to_be_bytes());
    f.extend_from_slice(&psn.to_be_bytes());
    if aeth {
        // AETH: syndrome (ACK with no credit count; NAK: PSN sequence error) and MSN
        let syndrome: u8 = if pkt.kind == PktKind::Nack {
            0x60
        } else {
            0x1f
        };
        f.extend_from_slice(&[syndrome, 0, 0, 0]);
    }
    // ccsim header
    f.extend_from_slice(b"CCSM");
    f.extend_from_slice(&[1, kind, pkt.mark as u8, pkt.prio, pkt.sub, 0]);
    f.extend_from_slice(&pkt.size_bytes.to_be_bytes());
    f.extend_from_slice(&pkt.payload_bytes.to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(&pkt.flow.to_be_bytes());
    f.extend_from_slice(&pkt.seq.to_be_bytes());
    f.extend_from_slice(&pkt.ts_ps.to_be_bytes());
    f.extend_from_slice(&pkt.hdr.a.to_be_bytes());
    f.extend_from_slice(&pkt.hdr.b.to_be_bytes());
    f.extend_from_slice(&pkt.aux.to_be_bytes());
    let crc = icrc(&f[14..]);
    f.extend_from_slice(&crc.to_le_bytes());
    debug_assert_eq!(f.len(), 14 + ip_len as usize);
    f
}

/// RoCEv2's invariant CRC of an IPv4 packet `ip` (from the IP header to the end of the
/// InfiniBand payload): CRC-32 over 8 bytes of ones (in place of InfiniBand's LRH), then the
/// packet with the fields a router may change set to ones (IP's DSCP/ECN, TTL and checksum,
/// UDP's checksum, the BTH's FECN/BECN byte). Sent least significant byte first.
fn icrc(ip: &[u8]) -> u32 {
    let mut masked = Vec::with_capacity(8 + ip.len());
    masked.extend_from_slice(&[0xff; 8]);
    masked.extend_from_slice(ip);
    let at = 8;
    masked[at + 1] = 0xff; // DSCP and ECN
    masked[at + 8] = 0xff; // TTL
    masked[at + 10..at + 12].fill(0xff); // IP checksum
    masked[at + 26..at + 28].fill(0xff); // UDP checksum
    masked[at + 28 + 4] = 0xff; // BTH: FECN, BECN and reserved bits
    super::crc32(&masked)
}

/// The IPv4 header checksum (RFC 791).
fn checksum(h: &[u8]) -> u16 {
    let mut s: u32 = h
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]) as u32)
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop() -> Hop {
        Hop {
            node: 5,
            peer: 2,
            src_host: 1,
            dst_host: 0,
            mtu_payload: 1000,
        }
    }

    #[test]
    fn the_invariant_crc_is_rocev2s() {
        // The reference value is scapy's (scapy.contrib.roce's compute_icrc) for this frame.
        let mut p = Packet::new(PktKind::Data, 3, 0, 1048, 3);
        p.seq = 5000;
        let f = frame(&p, &hop());
        let n = f.len();
        assert_eq!(
            u32::from_le_bytes(f[n - 4..].try_into().unwrap()),
            icrc(&f[14..n - 4])
        );
        assert_eq!(&f[n - 4..], &[0x84, 0xca, 0x45, 0xb1]);
    }

    #[test]
    fn ip_checksum_of_a_header_with_its_checksum_is_zero() {
        let mut p = Packet::new(PktKind::Data, 3, 0, 1048, 3);
        p.seq = 5000;
        let f = frame(&p, &hop());
        assert_eq!(checksum(&f[14..34]), 0);
        assert_eq!(&f[30..34], &[10, 0, 0, 0]);
        // IPv4's length counts what the frame holds: 20 + 8 + BTH 12 + ccsim 48 + ICRC 4.
        assert_eq!(u16::from_be_bytes([f[16], f[17]]), 92);
        assert_eq!(f.len(), 14 + 92);
        assert_eq!(&f[36..38], &4791u16.to_be_bytes());
        assert_eq!(u32::from_be_bytes([0, f[51], f[52], f[53]]), 5); // PSN
    }

    #[test]
    fn a_pause_frame_pauses_only_its_class() {
        let mut p = Packet::new(PktKind::Pause, 0, 0, 64, 0);
        p.sub = 3;
        let f = frame(&p, &hop());
        assert_eq!(f.len(), 60);
        assert_eq!(&f[12..16], &[0x88, 0x08, 0x01, 0x01]);
        assert_eq!(&f[16..18], &[0, 0b1000]);
        let quanta: Vec<u16> = (0..8)
            .map(|c| u16::from_be_bytes([f[18 + 2 * c], f[19 + 2 * c]]))
            .collect();
        assert_eq!(quanta, [0, 0, 0, 0xffff, 0, 0, 0, 0]);
    }

    #[test]
    fn blocks_are_whole_words_and_their_lengths_agree() {
        let mut t = Trace::new(4, &[1, 3], &["a->b".into(), "c->d".into()], 0, u64::MAX, 10);
        let p = Packet::new(PktKind::Ack, 3, 0, 60, 0);
        assert!(t.wants(3, 7) && !t.wants(0, 7));
        t.record(3, 7_000, &p, &hop());
        let b = t.into_bytes();
        let mut at = 0;
        let mut kinds = Vec::new();
        while at < b.len() {
            let word = |i: usize| u32::from_ne_bytes(b[i..i + 4].try_into().unwrap());
            let (kind, len) = (word(at), word(at + 4) as usize);
            assert_eq!(len % 4, 0);
            assert_eq!(word(at + len - 4) as usize, len);
            kinds.push(kind);
            at += len;
        }
        assert_eq!(at, b.len());
        assert_eq!(kinds, [0x0A0D_0D0A, 1, 1, 6]);
    }
}
