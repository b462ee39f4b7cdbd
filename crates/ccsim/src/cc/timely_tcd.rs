//! TIMELY+TCD: TIMELY's RTT-gradient sender gated by TCD's ternary marks (Zhang et al.,
//! SIGCOMM 2021, as compared against in the ACC paper, section 6.4).
//!
//! Switches run TCD (`cc::tcd`). At each of TIMELY's once-per-RTT updates the sender takes
//! the strongest mark on the ACKs since the previous update:
//! * CE (a congestion port): TIMELY's law unchanged (its multiplicative decreases on a high
//!   or rising RTT);
//! * UE (only undetermined ports): the rate is held — a victim's RTT grows with the PFC
//!   pauses upstream, not with its own load, so TIMELY would cut it for nothing;
//! * no mark: the additive (then hyper-active) increase, whatever the RTT does.
//!
//! Reconstruction: ACC (section 6.1) says only that TCD "reduces the rate of congested flows
//! aggressively and adjusts victim flows gently via heuristically modifying the parameters of
//! existing algorithms"; TCD's paper is not in the seeds. The rule above is ccsim's reading,
//! the same as `dcqcn_tcd`'s: congested flows keep TIMELY's reaction, victims hold.

use super::tcd::{TcdParams, TcdPort, WithTcd};
use super::timely::{TimelyParams, TimelySender, TS_HEADER_BYTES};
use super::{FabricMode, Scheme, SchemeInfo};
use crate::sim::input::ScenarioError;

/// The scheme type of `timely_tcd`.
pub struct TimelyTcd;

impl Scheme for TimelyTcd {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "timely_tcd",
        description: "TIMELY gated by TCD's ternary marks: CE follows TIMELY's RTT law, UE holds the rate, no mark increases.",
        paper: "Zhang et al., Congestion Detection in Lossless Networks (TCD), SIGCOMM 2021; ACC paper (NSDI 2024) section 6.4",
        header_bytes: TS_HEADER_BYTES,
        fabric: FabricMode::Lossless,
        switch_acks_in_data_queue: true,
        ..SchemeInfo::BASE
    }];
    type Params = TimelyParams;
    type Sender = TimelySender;
    type Receiver = ();
    type Switch = TcdPort;
    fn default_params(_: &str) -> TimelyParams {
        TimelyParams {
            tcd: Some(TcdParams::default()),
            ..TimelyParams::default()
        }
    }
    fn check(_: &str, p: &TimelyParams) -> Result<(), ScenarioError> {
        p.tcd.as_ref().map_or(Ok(()), TcdParams::validate)
    }
}

impl WithTcd for TimelyParams {
    fn tcd(&self) -> &TcdParams {
        self.tcd.as_ref().expect("timely_tcd has TCD parameters")
    }
}
