//! The flow-size CDF parser on arbitrary text; a parsed CDF is also sampled and averaged.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(cdf) = ccsim::workload::Cdf::parse(text, "fuzz.cdf") {
            let _ = cdf.mean();
            for u in [0.0, 0.25, 0.5, 0.999, 1.0] {
                let _ = cdf.quantile(u);
            }
        }
    }
});
