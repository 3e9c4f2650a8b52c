//! Arbitrary bytes as a rollout file: the tolerant reader must return, never panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    openturn_fuzz::rollout_reader(data);
});
