//! The HPCC simulator's flow file parser on arbitrary text, for a 320-host fabric.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = ccsim::workload::parse_hpcc_flows(text, "fuzz.txt", 320);
    }
});
