//! Congestion-control schemes. A scheme is one file `cc/<name>.rs` holding up to three parts
//! and its typed parameters, plus one line in `registry!` below; nothing outside `cc/` names a
//! concrete scheme. The parts (each a trait with no-op defaults; `()` is the empty part):
//!
//! * **Sender** (`SenderPart`, per flow): start, ACK/NACK, control packets addressed to the
//!   flow, each data packet sent, its timers, finish. It sets the flow's rate, window, halt
//!   ("send nothing before") and credit through `Tx`, and may send control packets.
//! * **Receiver** (`ReceiverPart`, per flow, with per-host state `Host`): each data arrival,
//!   what each ACK carries (`ack_hdr`), its timers and the host's timers; it may originate
//!   control packets (a CNP with a rate, a grant, a credit, a pull).
//! * **Switch** (`SwitchPart`, per egress port; hooks get the priority): enqueue (drop, trim,
//!   mark, sample, feedback to the source), dequeue (mark, stamp INT or a rate), PFC PAUSE and
//!   RESUME received by the port, its timers (a periodic tick re-arms itself).
//!
//! Dispatch is static: the registry macro generates one state store per part, an enum whose
//! variant per scheme type holds every flow's (host's, port's) state in an array of that
//! type, and each hook is a `match` on (parameters, store). No trait objects, no hashing.
//! Hooks run at the engine's call sites listed in `docs/design.md`; after every sender hook the
//! engine restarts the host's NIC, and control packets a hook asks for are sent right after it.

/// A sender's silence backstop, shared by the receiver-driven schemes.
pub mod backstop;
/// TCD (congestion state per port), shared by the `*_tcd` schemes and ACC.
pub mod tcd;

#[macro_use]
mod registry;
mod ctx;
mod scheme;

pub use crate::sim::{TimerEpochs, TIMER_KINDS};
pub use ctx::*;
pub use registry::{scheme, schemes};
pub use scheme::*;
// Named by the code `registry!` generates.
use crate::net::{Packet, Port, SchemeHdr};
use crate::sim::input::ScenarioError;

// The registry: one line per scheme type (a type may register several names); the line also
// declares the scheme's module `cc/<module>.rs`.
registry! {
    NoCc => none::NoCc,
    Dcqcn => dcqcn::Dcqcn,
    Timely => timely::Timely,
    Hpcc => hpcc::Hpcc,
    Dctcp => dctcp::Dctcp,
    Qcn => qcn::Qcn,
    Acc => acc::Acc,
    DcqcnTcd => dcqcn_tcd::DcqcnTcd,
    TimelyTcd => timely_tcd::TimelyTcd,
    Pcn => pcn::Pcn,
    Rcc => rcc::Rcc,
    Amrt => amrt::Amrt,
    PHost => phost::PHost,
    Ndp => ndp::Ndp,
    Rcp => rcp::Rcp,
    Homa => homa::Homa,
    ExpressPass => expresspass::ExpressPass,
    #[cfg(test)]
    TestScheme => test_scheme::Probe,
    #[cfg(test)]
    TestSrpt => test_srpt::Srpt,
}
