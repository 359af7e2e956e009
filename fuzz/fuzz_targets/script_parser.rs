//! Fuzzes `tickwise script`'s parser and the `--inputs` JSON reader: any
//! text must parse or give an error naming its line, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = tickwise_cli::script::parse(text) {
            assert!(!e.to_string().is_empty());
        }
    }
    let _ = tickwise_cli::script::parse_inputs(data);
});
