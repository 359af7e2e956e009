//! `tickwise sync-test` through the real binary.

use std::process::{Command, Output};

fn tickwise(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tickwise"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn island_and_horde_pass() {
    let o = tickwise(&[
        "sync-test",
        "--sim",
        "island",
        "--ticks",
        "5000",
        "--rollback",
        "8",
        "--inputs",
        "random:3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    // (5000 - 8 + 1) rollbacks of 8 steps each.
    assert!(
        out.contains("sync test passed: island 5000 ticks, rollback 8, 39944 steps re-simulated"),
        "{out}"
    );
    let o = tickwise(&[
        "sync-test",
        "--sim",
        "horde",
        "--ticks",
        "60",
        "--rollback",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}

#[test]
fn bad_arguments_exit_2() {
    for args in [
        &["sync-test", "--rollback", "0"][..],
        &["sync-test", "--rollback", "1001"],
        &["sync-test", "--sim", "zombies"],
        &["sync-test", "--inputs", "/nonexistent/inputs.json"],
    ] {
        let o = tickwise(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
    }
}
