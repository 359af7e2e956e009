//! Issue 19, part 2: the game's tool is the game's. A tool for a sim
//! defined here, built through `main_with_args` with its own `ToolInfo`:
//! its `--help`, `--version`, errors and banners name it, and the commands
//! its catalog cannot serve (`horde`, `lab`, `run`) are not offered;
//! `script` drives its own sim.
//!
//! The tool runs in a child process (this test binary, re-run with
//! `OWN_TOOL_ARGS` set) so that its stdout and stderr can be read.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, ExitCode, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use tickwise::{ClockConfig, Pcg32, Sim, StateVisitor, StepLength};
use tickwise_catalog::serde_json::Value;
use tickwise_cli::{Catalog, CatalogSim, ToolInfo, main_with_args};

/// A ball between two walls, pushed by its input.
#[derive(Clone, Debug)]
struct Pong {
    x: i64,
    v: i64,
}

impl Sim for Pong {
    type Input = i32;
    fn step(&mut self, inputs: &[i32]) {
        self.v = (self.v + i64::from(inputs[0].clamp(-1, 1))).clamp(-4, 4);
        self.x += self.v;
        if self.x.abs() > 50 {
            self.v = -self.v;
        }
    }
    fn visit_state(&self, s: &mut dyn StateVisitor) {
        s.field("x");
        s.value_i64(self.x);
        s.field("v");
        s.value_i64(self.v);
    }
}

const STEP: StepLength = match StepLength::from_hz(60) {
    Ok(s) => s,
    Err(_) => panic!("60 Hz is a valid step"),
};

impl CatalogSim for Pong {
    const ID: &'static str = "pong";
    const VERSION: u32 = 1;
    const DEFAULT_CONFIG: &'static [u8] = b"{}";
    type Config = ();
    type ConfigError = &'static str;
    fn parse_config(bytes: &[u8]) -> Result<(), &'static str> {
        (bytes == b"{}").then_some(()).ok_or("the config is {}")
    }
    fn build((): &()) -> Pong {
        Pong { x: 0, v: 0 }
    }
    fn seed((): &()) -> u64 {
        0
    }
    fn clock_config((): &()) -> ClockConfig {
        ClockConfig::new(STEP)
    }
    fn work_per_tick((): &()) -> u64 {
        1
    }
    fn scripted_input(tick: u64) -> i32 {
        if tick % 20 < 10 { 1 } else { -1 }
    }
    fn random_input(rng: &mut Pcg32) -> i32 {
        i32::try_from(rng.next_u32() % 3).unwrap_or(0) - 1
    }
    fn json_input(v: &Value) -> Result<i32, String> {
        v.as_i64()
            .and_then(|x| i32::try_from(x).ok())
            .ok_or_else(|| "an integer".into())
    }
}

const TOOL: ToolInfo = ToolInfo::new("pong", "7.4.2", "Pong's own replay tools.");

/// The tool's process: runs only as the child of the tests below.
#[test]
#[ignore = "the tool's own process, started by the other tests"]
fn pong_tool_process() {
    let Some(args) = std::env::var_os("OWN_TOOL_ARGS") else {
        return;
    };
    let args = args.to_string_lossy().into_owned();
    let argv: Vec<&str> = std::iter::once("whatever-argv0")
        .chain(args.split('\u{1f}'))
        .collect();
    let code = main_with_args(&TOOL, &Catalog::empty().with::<Pong>(), argv);
    let code = [0u8, 1, 2]
        .into_iter()
        .find(|c| ExitCode::from(*c) == code)
        .map_or(3, i32::from);
    std::process::exit(code);
}

fn pong(args: &[&str]) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "pong_tool_process",
        "--exact",
        "--include-ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("OWN_TOOL_ARGS", args.join("\u{1f}"));
    c
}

fn run(args: &[&str]) -> Output {
    pong(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn help_and_version_are_the_tools_own() {
    let o = run(&["--help"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let help = text(&o.stdout);
    assert!(help.contains("Pong's own replay tools."), "{help}");
    assert!(help.contains("Usage: pong <COMMAND>"), "{help}");
    assert!(!help.contains("tickwise"), "{help}");
    // What the catalog serves is offered; the built-in worlds' commands are not.
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for offered in [
        "script",
        "record",
        "verify",
        "compare",
        "sync-test",
        "budget",
        "verifyd",
    ] {
        assert!(commands.contains(&offered), "{offered} in {commands:?}");
    }
    for hidden in ["horde", "lab", "run"] {
        assert!(!commands.contains(&hidden), "{hidden} in {commands:?}");
    }

    let o = run(&["--version"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        text(&o.stdout).contains("pong 7.4.2\n"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn commands_the_catalog_cannot_serve_are_refused_with_the_reason() {
    for (cmd, sim) in [
        (&["horde"][..], "horde"),
        (&["lab"], "island"),
        (&["run"], "island"),
    ] {
        let o = run(cmd);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}: {o:?}");
        let err = text(&o.stderr);
        assert!(
            err.contains(&format!(
                "pong: `{}` drives the built-in {sim} sim, which is not in pong's catalog (sims: pong)",
                cmd[0]
            )),
            "{cmd:?}: {err}"
        );
    }
    // Errors are prefixed with the tool's name.
    let o = run(&["verify", "/nonexistent/x.twr"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let o = run(&[
        "record",
        "--sim",
        "ball",
        "--ticks",
        "3",
        "--out",
        "/dev/null",
    ]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        text(&o.stderr).contains("pong: unknown sim id \"ball\" (known: pong)"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn the_verifyd_banner_is_the_tools_own() {
    let mut child = pong(&["verifyd", "--bind", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if line.contains("listening") {
                let _ = tx.send(line);
            }
        }
    });
    let banner = rx.recv_timeout(Duration::from_secs(30));
    let _ = child.kill();
    let _ = child.wait();
    let banner = banner.expect("a banner");
    // libtest names the test on the same line before the tool prints.
    let banner = banner
        .strip_prefix("test pong_tool_process ... ")
        .unwrap_or(&banner);
    assert!(
        banner.starts_with("pong verifyd listening on http://127.0.0.1:"),
        "{banner}"
    );
}

#[test]
fn script_drives_the_tools_own_sim() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("own_tool_script");
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("pong.script");
    std::fs::write(
        &script,
        "advance 5\npause\nresume-after 1000\npush popup\nframes 2 50\n",
    )
    .unwrap();
    let o = run(&["script", script.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let lines: Vec<Value> = text(&o.stdout)
        .lines()
        .filter_map(|l| l.find('{').map(|at| &l[at..]))
        .map(|l| tickwise_catalog::serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5, "{lines:?}");
    // By hand: pong's scripted input is +1 for ticks 0..10, so after 5
    // steps v = 1, 2, 3, 4, 4 and x = 1, 3, 6, 10, 14.
    assert_eq!(lines[0]["tick"], 5);
    assert_eq!(lines[0]["steps"], 5);
    assert_eq!(lines[0]["digest"], Pong { x: 14, v: 4 }.digest());
    // The island's own key is the island's only.
    assert!(lines[0].get("droppedMs").is_none(), "{}", lines[0]);
    assert_eq!(lines[1]["ok"], true);
    // Pong has no catch-up cap: a second away at 60 Hz is 60 steps.
    assert_eq!(lines[2]["ok"], true);
    assert_eq!(lines[2]["catchUpSteps"], 60);
    assert_eq!(lines[2]["tick"], 65);
    assert_eq!(lines[3]["scenes"], "menu=paused,game=paused,popup=active");
    // 100 ms of frames at 60 Hz: 6 steps.
    assert_eq!(lines[4]["steps"], 6);
    assert_eq!(lines[4]["tick"], 71);
    // The island's configs are the island's.
    let o = run(&["script", "--loop", "x.json", script.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        text(&o.stderr)
            .contains("--loop and --lifecycle are the island's configs; pong takes --config"),
        "{}",
        text(&o.stderr)
    );
}
