//! Desync forensics of a local run: which pair of peers diverged first,
//! which fields differ, and the bundle (two replays and a report) that
//! `tickwise verify` and `tickwise compare` read.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;

use tickwise::{ReplayHeader, ReplayInput, Sim};

use crate::session::{Desync, Session};

use super::error::RunError;
use super::report::{BundleFile, Finding};

pub(super) fn first_desync<S: Sim + Clone>(sessions: &[Session<S>]) -> Option<(u8, u8)>
where
    S::Input: ReplayInput,
{
    let (i, d) = sessions
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.desync().map(|d| (i, d)))
        .min_by_key(|(i, d)| (d.tick, *i))?;
    #[allow(clippy::cast_possible_truncation, reason = "at most 4 players")]
    let a = i as u8;
    Some((a, d.peer))
}

pub(super) fn finding<S: Sim + Clone>(sessions: &[Session<S>], a: u8, b: u8) -> Finding
where
    S::Input: ReplayInput,
{
    let sa = &sessions[usize::from(a)];
    let d = sa.desync().cloned().unwrap_or(Desync {
        tick: 0,
        peer: b,
        local: 0,
        remote: 0,
        fields: None,
    });
    // The peers' own field hashes (both are in this process); the names a
    // session learned over the wire are the same list.
    let fields = match (
        sa.field_hashes_at(d.tick),
        sessions
            .get(usize::from(b))
            .and_then(|s| s.field_hashes_at(d.tick)),
    ) {
        (Some(x), Some(y)) => x
            .iter()
            .zip(y.iter())
            .filter(|(p, q)| p.1 != q.1)
            .map(|(p, _)| p.0)
            .collect(),
        _ => d.fields.clone().unwrap_or_default(),
    };
    Finding {
        tick: d.tick,
        players: (a, b),
        checksums: (d.local, d.remote),
        fields,
        snapshot: sa.snapshot_before_desync().map(|(t, s)| (t, s.checksum())),
    }
}

pub(super) fn bundle<S: Sim + Clone>(
    a: &Session<S>,
    b: &Session<S>,
    f: &Finding,
    header: &ReplayHeader,
) -> Result<Vec<BundleFile>, RunError>
where
    S::Input: ReplayInput,
{
    let (pa, pb) = f.players;
    let name_a = format!("peer{pa}.twr");
    let name_b = format!("peer{pb}.twr");
    let mut text = String::new();
    let _ = writeln!(text, "tickwise netplay desync report");
    let _ = writeln!(
        text,
        "sim: {} version {}",
        header.sim_id, header.sim_version
    );
    let _ = writeln!(
        text,
        "first divergent checked confirmed tick: {} (checks every {} tick(s), so the fault lies in the ticks since the previous check)",
        f.tick,
        a.config().check_every
    );
    let _ = writeln!(
        text,
        "checksums: player {pa} {:016x}, player {pb} {:016x}",
        f.checksums.0, f.checksums.1
    );
    let _ = writeln!(text, "fields that differ: {}", f.fields.join(", "));
    match f.snapshot {
        Some((t, c)) => {
            let _ = writeln!(
                text,
                "kept confirmed snapshot before the desync: tick {t}, checksum {c:016x}"
            );
        }
        None => {
            let _ = writeln!(text, "kept confirmed snapshot before the desync: none");
        }
    }
    let _ = writeln!(text, "per-field hashes at tick {}:", f.tick);
    if let (Some(x), Some(y)) = (a.field_hashes_at(f.tick), b.field_hashes_at(f.tick)) {
        for ((name, h1), (_, h2)) in x.iter().zip(y.iter()) {
            let mark = if h1 == h2 { "" } else { "   <- differs" };
            let _ = writeln!(text, "  {name:<20} {h1:016x} {h2:016x}{mark}");
        }
    }
    let _ = writeln!(text);
    let _ = writeln!(
        text,
        "{name_a} and {name_b}: each player's confirmed inputs (the same on both: they are confirmed) with that player's own checkpoints of its confirmed states."
    );
    let _ = writeln!(
        text,
        "  tickwise verify {name_a} {name_b}   re-simulates each with this build; the file whose recorded states it rejects came from the non-deterministic peer"
    );
    let _ = writeln!(
        text,
        "  tickwise compare {name_a} {name_b}  re-simulates both in lockstep: no divergence and no input difference means the peers agreed on every input and the desync is non-determinism, not a netcode fault"
    );
    Ok(alloc::vec![
        BundleFile {
            name: name_a,
            bytes: a.replay()?.to_bytes(),
        },
        BundleFile {
            name: name_b,
            bytes: b.replay()?.to_bytes(),
        },
        BundleFile {
            name: "report.txt".into(),
            bytes: text.into_bytes(),
        },
    ])
}
