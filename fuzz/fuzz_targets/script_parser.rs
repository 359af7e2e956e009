//! Fuzzes `tickwise script`'s parser and the one inputs-file reader (every
//! command's `--inputs FILE`): any text must parse or give an error, never
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = tickwise_cli::script::parse(text) {
            assert!(!e.to_string().is_empty());
        }
    }
    let _ = tickwise_catalog::parse_inputs::<tickwise_sims::island::IslandWorld>(data);
    let _ = tickwise_catalog::parse_inputs::<tickwise_sims::horde::HordeWorld>(data);
});
