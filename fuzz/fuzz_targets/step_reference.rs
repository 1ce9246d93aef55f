//! libFuzzer on `checks::step_reference`: see what it asserts there.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::step_reference(data));
