//! The HPCC simulator's topology file parser (and the topology checks) on arbitrary text.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(t) = ccsim::topo::parse_hpcc_file(text, "fuzz.txt") {
            let _ = t.check();
        }
    }
});
