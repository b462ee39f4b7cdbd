//! DCQCN+TCD: DCQCN's reaction point on TCD's ternary marks instead of RED's ECN (Zhang et
//! al., SIGCOMM 2021, as compared against in the ACC paper, section 6.4).
//!
//! Switches run TCD on the fabric's ECN (`cc::tcd`, `WithTcd::on_ecn`): RED with DCQCN's
//! thresholds decides which packets a port marks, and TCD makes a mark UE where the port is
//! undetermined (paused within max(T_on)). Where no port is paused, the marks, and so the run,
//! are DCQCN's. The sender is `dcqcn`'s (the HPCC simulator's Mellanox model by default;
//! `model = "paper"` works too, its CNPs then carry the mark):
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
use crate::sim::input::ScenarioError;

/// The scheme type of `dcqcn_tcd`.
pub struct DcqcnTcd;

impl Scheme for DcqcnTcd {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "dcqcn_tcd",
        description: "DCQCN on TCD's ternary marks over the fabric's ECN: CE cuts as DCQCN does, UE holds the rate (skips the next increase).",
        paper: "Zhang et al., Congestion Detection in Lossless Networks (TCD), SIGCOMM 2021; ACC paper (NSDI 2024) section 6.4",
        fabric: FabricMode::Lossless,
        switch_acks_in_data_queue: true,
        ecn: Some(super::DEFAULT_ECN),
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
        let tcd = p
            .tcd
            .as_ref()
            .expect("dcqcn_tcd's defaults have TCD parameters");
        if tcd.threshold != TcdParams::default().threshold {
            return Err(ScenarioError::new(
                "cc.params.tcd.threshold",
                "dcqcn_tcd judges TCD's states against the fabric's ECN Kmin: set fabric.ecn.kmin instead",
            ));
        }
        tcd.validate()
    }
}

impl WithTcd for DcqcnParams {
    fn tcd(&self) -> &TcdParams {
        self.tcd.as_ref().expect("dcqcn_tcd has TCD parameters")
    }
    fn on_ecn(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::{AckInfo, CcParams, SenderPart, TestFlow};
    use super::*;
    use crate::net::{Mark, SchemeHdr};

    fn params(toml: &str) -> Result<DcqcnParams, ScenarioError> {
        match CcParams::parse("dcqcn_tcd", &toml.parse().unwrap())? {
            CcParams::DcqcnTcd(p) => Ok(p),
            _ => unreachable!(),
        }
    }

    #[test]
    fn the_threshold_is_the_fabric_s_kmin_not_a_parameter() {
        let e = params("tcd = { threshold = \"10KB\" }").unwrap_err();
        assert!(e.to_string().contains("fabric.ecn.kmin"), "{e}");
        // max(T_on) is the fabric's (`fabric.pfc.max_t_on`), not TCD's parameter.
        let e = params("tcd = { max_t_on = \"50us\" }").unwrap_err();
        assert!(e.to_string().contains("fabric.pfc.max_t_on"), "{e}");
    }

    #[test]
    fn victims_hold_through_an_increase_event_or_increase_as_uncongested_flows() {
        // A UE ACK arrives, then the rate-increase timer fires: with `hold` the rate stays,
        // with `increase` (ACC section 3.3) it grows as an unmarked flow's would.
        let after_ue = |victims: &str| {
            let p = params(&format!("tcd = {{ victims = \"{victims}\" }}")).unwrap();
            let mut f = TestFlow::new(100_000_000_000);
            let mut rp = DcqcnRp::new(&p);
            rp.on_start(&p, &mut f.tx(0));
            let ack = |mark| AckInfo {
                nack: false,
                ack_seq: 1000,
                newly_acked_bytes: 1000,
                mark,
                rtt_ps: 0,
                hdr: SchemeHdr::default(),
                int: &[],
                sack_seq: None,
                trimmed: false,
            };
            // A CE, then the mlx decrease check 4 us later cuts the rate.
            rp.on_ack(&p, &mut f.tx(1), &ack(Mark::Ce));
            rp.on_timer(&p, &mut f.tx(5_000_000), 0);
            let cut = f.f.ctl.rate_bps;
            assert!(cut < 100_000_000_000);
            rp.on_ack(&p, &mut f.tx(400_000_000), &ack(Mark::Ue));
            rp.on_timer(&p, &mut f.tx(700_000_000), 1);
            (cut, f.f.ctl.rate_bps)
        };
        let (cut, held) = after_ue("hold");
        assert_eq!(held, cut);
        let (cut, grown) = after_ue("increase");
        assert!(grown > cut, "{grown} vs {cut}");
    }
}
