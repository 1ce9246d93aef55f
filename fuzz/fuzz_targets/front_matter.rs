//! libFuzzer on `checks::front_matter`: see what it asserts there.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::front_matter(data));
