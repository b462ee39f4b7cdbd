//! DCQCN+TCD: DCQCN's reaction point on TCD's ternary marks instead of RED's ECN (Zhang et
//! al., SIGCOMM 2021, as compared against in the ACC paper, section 6.4).
//!
//! Switches run TCD (`cc::tcd`), not RED. The sender is `dcqcn`'s (the HPCC simulator's
//! Mellanox model by default; `model = "paper"` works too, its CNPs then carry the mark):
//! * CE (a congestion port): DCQCN's reaction unchanged: alpha rises, the rate is cut by
//!   alpha / 2 — congested flows are cut as aggressively as DCQCN cuts;
//! * UE (only undetermined ports): the next rate-increase event is skipped — the victim flow
//!   holds its rate instead of being cut (its queue says nothing about its own load) or
//!   growing (it would feed the congestion tree);
//! * no mark: DCQCN's recovery and increase.
//!
//! Reconstruction: ACC (section 6.1) says only that TCD "reduces the rate of congested flows
//! aggressively and adjusts victim flows gently via heuristically modifying the parameters of
//! existing algorithms"; TCD's paper is not in the seeds. The rule above is ccsim's reading:
//! congested flows keep DCQCN's cut, victims neither cut nor grow while UE lasts.

use super::dcqcn::{DcqcnNp, DcqcnParams, DcqcnRp};
use super::tcd::{TcdParams, TcdPort, WithTcd};
use super::{FabricMode, Scheme, SchemeInfo};
use crate::scenario::ScenarioError;

/// The scheme type of `dcqcn_tcd`.
pub struct DcqcnTcd;

impl Scheme for DcqcnTcd {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "dcqcn_tcd",
        description: "DCQCN on TCD's ternary marks: CE cuts as DCQCN does, UE holds the rate (skips the next increase).",
        paper: "Zhang et al., Congestion Detection in Lossless Networks (TCD), SIGCOMM 2021; ACC paper (NSDI 2024) section 6.4",
        fabric: FabricMode::Lossless,
        switch_acks_in_data_queue: true,
        ..SchemeInfo::BASE
    }];
    type Params = DcqcnParams;
    type Sender = DcqcnRp;
    type Receiver = DcqcnNp;
    type Switch = TcdPort;
    fn default_params(_: &str) -> DcqcnParams {
        DcqcnParams {
            tcd: Some(TcdParams::default()),
            ..DcqcnParams::hpcc_sim()
        }
    }
    fn check(_: &str, p: &DcqcnParams) -> Result<(), ScenarioError> {
        p.tcd.as_ref().map_or(Ok(()), TcdParams::validate)
    }
}

impl WithTcd for DcqcnParams {
    fn tcd(&self) -> &TcdParams {
        self.tcd.as_ref().expect("dcqcn_tcd has TCD parameters")
    }
}
