//! libFuzzer on `checks::jsonrpc_stdin`: see what it asserts there.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::jsonrpc_stdin(data));
