//! libFuzzer on `checks::entity_id`: see what it asserts there.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::entity_id(data));
