//! The configs compiled into the crate (`crates/tickwise-sims/config/`, so
//! that the published crate is self-contained) must be byte for byte the
//! repository's `config/*.json`, which the Python reference, the docs and
//! users read. Editing one copy without the other fails here.

use std::path::Path;

fn repo_config(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../config")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn compiled_in_configs_equal_the_repository_configs() {
    for (name, compiled) in [
        ("island_loop.json", tickwise_sims::ISLAND_LOOP_JSON),
        (
            "island_lifecycle.json",
            tickwise_sims::ISLAND_LIFECYCLE_JSON,
        ),
        ("horde.json", tickwise_sims::HORDE_JSON),
    ] {
        assert!(
            repo_config(name) == compiled,
            "config/{name} and crates/tickwise-sims/config/{name} differ: copy one onto the other"
        );
    }
}

#[test]
fn the_crate_holds_every_repository_config() {
    // A new file in config/ must get its crate copy (and a constant) too.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["horde.json", "island_lifecycle.json", "island_loop.json"]
    );
}
