//! A reader that closes the pipe early (`tickwise horde … | head -c 1`) must
//! not make the tool panic: it stops quietly with exit code 141, as a tool
//! killed by SIGPIPE would be reported by the shell.

use std::process::{Command, Stdio};

fn with_closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tickwise"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tickwise starts");
    // Close the read end before the tool prints anything.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("tickwise ends");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn commands_stop_quietly_with_141_when_the_reader_is_gone() {
    for args in [
        &["horde", "--enemies", "1000", "--ticks", "30"][..],
        &["horde", "--enemies", "1000", "--ticks", "30", "--json"][..],
        &["netplay", "--ticks", "120"][..],
        &["budget", "--sim", "horde", "--enemies", "100"][..],
    ] {
        let (code, stderr) = with_closed_stdout(args);
        assert_eq!(code, Some(141), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?} printed to stderr: {stderr}");
    }
}
