//! No congestion control: every flow sends at line rate (within `host.window`, if set); on a
//! lossless fabric PFC alone prevents loss. The reference point for every other scheme.

use super::{Params, Scheme, SchemeInfo};
use serde::{Deserialize, Serialize};

/// The scheme type of `none`.
pub struct NoCc;

/// `none` has no parameters.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

impl Params for NoParams {}

impl Scheme for NoCc {
    const SCHEMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "none",
        description:
            "No congestion control: every flow sends at line rate; PFC alone prevents loss.",
        ..SchemeInfo::BASE
    }];
    type Params = NoParams;
    type Sender = ();
    type Receiver = ();
    type Switch = ();
    fn default_params(_: &str) -> NoParams {
        NoParams {}
    }
}
