//! Bytes on stdin → line framing → JSON-RPC classification → typed request decoding.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    openturn_fuzz::jsonrpc_line(data);
});
