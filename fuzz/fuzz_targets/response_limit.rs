//! libFuzzer on `checks::response_limit`: see what it asserts there.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::response_limit(data));
