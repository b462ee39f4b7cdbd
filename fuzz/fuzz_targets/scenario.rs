//! The scenario loader and builder on arbitrary text: an error or a built simulation, never a
//! panic, a hang or an allocation past the size limits.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let dir = std::env::temp_dir();
        if let Ok(sc) = ccsim::Scenario::load(text, &dir, None, &[]) {
            let _ = sc.build();
        }
    }
});
