//! The `[topology]` section: a built-in shape selected by `kind`, or a topology file.

use crate::sim::quantity::{Rate, Time};
use serde::{Deserialize, Serialize};

/// A link's rate and one-way propagation delay.
#[derive(Clone, Copy, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    pub rate: Rate,
    pub delay: Time,
}

/// Topology, selected by `kind`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologyCfg {
    /// N hosts on one switch.
    Star { hosts: u32, link: LinkCfg },
    /// Two switches joined by one bottleneck link, hosts on each side.
    Dumbbell {
        left_hosts: u32,
        right_hosts: u32,
        host_link: LinkCfg,
        bottleneck: LinkCfg,
    },
    /// Two-tier Clos: every leaf connects to every spine.
    LeafSpine {
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
        host_link: LinkCfg,
        fabric_link: LinkCfg,
    },
    /// Three-tier fat-tree. Give `k` for the classic k-ary fat-tree, or the explicit shape
    /// (`pods`, `tors_per_pod`, `aggs_per_pod`, `cores`, `hosts_per_tor`), e.g. the ACC/RCC
    /// fabric: 5 pods x (4 ToR + 4 agg), 16 cores, 16 hosts per ToR = 320 hosts.
    FatTree {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        k: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pods: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tors_per_pod: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        aggs_per_pod: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cores: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hosts_per_tor: Option<u32>,
        host_link: LinkCfg,
        fabric_link: LinkCfg,
    },
    /// The chain of ACC Figure 1(a): S0,S1 -> SW1 -> SW2 -> SW3 -> SW4; R0, R1 and the burst
    /// senders H1..HN on SW4. F0 (S0 -> R0) shares P1-P3 (SW1 -> SW2 -> SW3 -> SW4) with F1
    /// (S1 -> R1) but not P4 = SW4 -> R1, the congestion root (ACC sections 3.3 and 6.3).
    Chain { bursts: u32, link: LinkCfg },
    /// The parking lot of PCN Figure 19(a): switches sw0..swN in a line, bottleneck link i from
    /// sw(i-1) to swi. F0 (h0 -> h1) crosses all N links: h0 on sw0, h1 on swN; flow i
    /// (h(2i) -> h(2i+1)) crosses link i only: h(2i) on sw(i-1), h(2i+1) on swi.
    ParkingLot { bottlenecks: u32, link: LinkCfg },
    /// ccsim's own topology file (TOML with `[[node]]` and `[[link]]`).
    File { path: String },
    /// A topology file of the HPCC ns-3 simulator.
    Hpcc { path: String },
}
