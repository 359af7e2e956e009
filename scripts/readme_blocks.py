#!/usr/bin/env python3
"""Runs every shell block of README.md, in order, as a newcomer would.

    bash scripts/readme-blocks.sh          # what scripts/test-all.sh runs
    python3 scripts/readme_blocks.py --list   # the blocks and the shortenings, nothing run

A fresh copy of the repository (the files git tracks or would track, as they
are in the work tree: no target/, out/, web/dist or replays) is made in a
temporary directory outside the repository, and each ```sh block of its
README.md runs there,
in order, in a bash of its own, from the repository's root, with `tickwise`
coming from the quick start's `cargo install` (installed into
target/readme-blocks/root instead of ~/.cargo). Each command line must exit
0, or the code its comment names (`# exit 1: ...`). A block's background
jobs are stopped when it ends.

A few lines are slow or are this check's own callers; SHORTER below gives,
beside the exact README line, what runs instead and why. A SHORTER entry
whose line is no longer in the README fails the check, so the list cannot
go stale. Lines that take over 10 s as written must say how long they take
in their comment (`~2 min`, `40 s`); the check fails otherwise.

The copy builds in target/readme-blocks/target, seeded once from
target/release (two trees must not share a target directory: cargo names a
workspace crate's artifacts by its path inside the workspace). The copy
lies outside the repository because cargo reads every .cargo/config.toml
from the working directory up: a copy inside target/ would get the
repository's rustflags twice (its own and the outer tree's), which changes
every artifact's hash and rebuilds the seeded dependencies (about 4 minutes
on 2 cores). The copy is removed when the check passes and kept, with its
path printed, when it fails.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "target", "readme-blocks")
TARGET = os.path.join(WORK, "target")
INSTALL_ROOT = os.path.join(WORK, "root")

# README line (exact, continuation lines joined with a space) -> what runs
# instead (None: skipped), and why.
SHORTER = {
    "bash scripts/test-all.sh":
        (None, "this check is one of test-all's steps"),
    "cargo install --path crates/tickwise-cli --locked":
        ('cargo install --path crates/tickwise-cli --locked --root "$README_INSTALL_ROOT"',
         "installs into target/readme-blocks/root (on PATH here), not ~/.cargo/bin"),
    "tickwise budget --enemies 100000 --hz 20,30 --json":
        ("tickwise budget --enemies 10000 --hz 20,30 --json",
         "10 000 enemies instead of 100 000: ~4 s instead of ~40 s"),
    "bash .ci/setup-web.sh":
        (None, "test-all's browser step runs it"),
    "bash .ci/build-web.sh":
        (None, "test-all's browser step runs it (~3 min)"),
    "npm --prefix web test":
        (None, "test-all's browser step runs it (~90 s)"),
    "tickwise serve --port 8080 &":
        ("mkdir -p web/dist && echo '<p>page</p>' > web/dist/index.html && "
         "{ tickwise serve --port 8080 & } && "
         "until curl -sf http://127.0.0.1:8080/index.html >/dev/null; do sleep 0.2; done",
         "serves a stand-in page (the browser step builds the real ones) and waits until it answers"),
    "tickwise peer --bind 127.0.0.1:7001 --remote 127.0.0.1:7002 --player 0 "
    "--session-key random --ticks 1800 --out out/p0 2>out/p0.log &":
        ("tickwise peer --bind 127.0.0.1:7001 --remote 127.0.0.1:7002 --player 0 "
         "--session-key random --ticks 450 --out out/p0 2>out/p0.log &",
         "450 ticks (15 s) instead of 1800 (1 min of real time at 30 Hz)"),
    "tickwise peer --bind 127.0.0.1:7002 --remote 127.0.0.1:7001 --player 1 "
    "--session-key $key --ticks 1800 --out out/p1 &":
        ("tickwise peer --bind 127.0.0.1:7002 --remote 127.0.0.1:7001 --player 1 "
         "--session-key $key --ticks 450 --out out/p1 &",
         "450 ticks (15 s) instead of 1800 (1 min of real time at 30 Hz)"),
    "tickwise peer --spectate --bind 127.0.0.1:7100 --remote 127.0.0.1:7001 "
    "--session-key $key --ticks 1800":
        ("tickwise peer --spectate --bind 127.0.0.1:7100 --remote 127.0.0.1:7001 "
         "--session-key $key --ticks 450",
         "450 ticks, the players' short match"),
}

# The longest a block may run: the first builds the CLI in release (a few
# minutes on a fresh machine); a block that hangs (a server that never
# answers) is killed with everything it started.
BLOCK_TIMEOUT_S = 900

# Run at the very end, and after a failure: what a block may leave behind
# outside its own jobs (a daemonized redis-server).
CLEANUP = "redis-cli -p 6380 shutdown nosave >/dev/null 2>&1 || true"

DURATION = re.compile(r"~\s*\d|\d\s*(s|min|minutes?|seconds?)\b")
EXIT = re.compile(r"\bexit (\d+)\b")


def blocks(readme: str):
    """[(line number, [(line number, command, comment)])] of every sh block."""
    out = []
    lines = readme.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() in ("```sh", "```bash", "```shell"):
            start = i + 1
            cmds = []
            i += 1
            pending, pending_at = "", None
            while i < len(lines) and lines[i].strip() != "```":
                raw = lines[i]
                i += 1
                if pending_at is None and raw.lstrip().startswith("#"):
                    # A comment line: an indented one continues the comment
                    # of the command above it (`# exit 1: …` counts there);
                    # one at the margin shows output or is a note.
                    if raw[:1].isspace() and cmds:
                        at, cmd, comment = cmds[-1]
                        cmds[-1] = (at, cmd, (comment + " " + raw.strip().lstrip("#").strip()).strip())
                    continue
                text = raw.rstrip()
                if pending_at is None:
                    pending_at = i
                if text.endswith("\\"):
                    pending += text[:-1].strip() + " "
                    continue
                pending += text.strip()
                cmd, comment = split_comment(pending)
                cmds.append((pending_at, cmd, comment))
                pending, pending_at = "", None
            out.append((start, cmds))
        i += 1
    return out


def split_comment(line: str):
    """The command and its trailing comment (a `#` after whitespace, outside
    quotes)."""
    quote = None
    for k, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (k == 0 or line[k - 1] in " \t"):
            return line[:k].strip(), line[k + 1:].strip()
    return line.strip(), ""


def fresh_copy():
    """The work tree's tracked (and trackable) files, mtimes kept, in a new
    temporary directory outside the repository; returns its path."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True).stdout.split(b"\0")
    # An earlier layout kept the copy in target/readme-blocks/repo.
    shutil.rmtree(os.path.join(WORK, "repo"), ignore_errors=True)
    copy = tempfile.mkdtemp(prefix="tickwise-readme-")
    if os.path.commonpath([copy, ROOT]) == ROOT:
        raise SystemExit(f"readme-blocks: the temporary directory {copy} is inside the repository")
    for f in files:
        if not f:
            continue
        rel = f.decode()
        src = os.path.join(ROOT, rel)
        if not os.path.lexists(src):
            continue  # deleted in the work tree, not yet in the index
        dst = os.path.join(copy, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst, follow_symlinks=False)
    # Builds go to a target directory of this check's own, seeded once.
    os.makedirs(TARGET, exist_ok=True)
    subprocess.run(["bash", os.path.join(ROOT, "scripts", "seed-target.sh"),
                    os.path.join(ROOT, "target"), TARGET], check=True)
    os.symlink(TARGET, os.path.join(copy, "target"))
    return copy


def script_for(copy, cmds):
    """A bash script running one block's commands in `copy`, checking each
    exit code."""
    lines = [
        "set -u",
        f"cd {shlex.quote(copy)}",
        "__stop() { local p; for p in $(jobs -p); do kill $p 2>/dev/null; done; wait 2>/dev/null; }",
        "trap __stop EXIT",
    ]
    for at, cmd, comment in cmds:
        key = cmd
        if key in SHORTER:
            replacement, why = SHORTER[key]
            if replacement is None:
                lines.append(f"printf '\\n$ %s\\n  (README line {at} skipped: %s)\\n' "
                             f"{shlex.quote(cmd)} {shlex.quote(why)}")
                continue
            lines.append(f"printf '\\n$ %s\\n  (README line {at}, shortened: %s)\\n' "
                         f"{shlex.quote(replacement)} {shlex.quote(why)}")
            cmd = replacement
            timed = False
        else:
            lines.append(f"printf '\\n$ %s\\n' {shlex.quote(cmd)}")
            timed = True
        m = EXIT.search(comment)
        want = int(m.group(1)) if m else 0
        background = cmd.rstrip().endswith("&") or re.search(r"&\s+\w+=\$!$", cmd)
        lines += [
            "__t0=$(date +%s%N)",
            f"{{ eval {shlex.quote(cmd)}; }} >__out 2>&1 </dev/null; __rc=$?",
            "__ms=$(( ($(date +%s%N) - __t0) / 1000000 ))",
            # A background job keeps writing to __out: show what is there.
            "tail -n 12 __out | cut -c1-300",
        ]
        if not background:
            lines.append(
                f"if [ $__rc -ne {want} ]; then printf '\\nreadme-blocks: FAILED: README line {at}: "
                f"exit %d, expected {want}: %s\\n' $__rc {shlex.quote(cmd)} >&2; exit 1; fi")
        if timed and not DURATION.search(comment):
            lines.append(
                f"if [ $__ms -gt 10000 ]; then printf '\\nreadme-blocks: FAILED: README line {at} "
                f"took %d ms, over 10 s, and its comment gives no duration: %s\\n' $__ms "
                f"{shlex.quote(cmd)} >&2; exit 1; fi")
    lines.append("rm -f __out")
    return "\n".join(lines) + "\n"


def main(argv):
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    found = blocks(readme)
    every = {cmd for _, cmds in found for _, cmd, _ in cmds}
    stale = [k for k in SHORTER if k not in every]
    if stale:
        for k in stale:
            print(f"readme-blocks: FAILED: the shortened line is no longer in README.md: {k}",
                  file=sys.stderr)
        return 1
    if "--list" in argv:
        for start, cmds in found:
            print(f"block at README line {start}:")
            for at, cmd, _ in cmds:
                extra = ""
                if cmd in SHORTER:
                    r, why = SHORTER[cmd]
                    extra = f"\n      -> {'(skipped)' if r is None else r}  [{why}]"
                print(f"  {at}: {cmd}{extra}")
        return 0
    copy = fresh_copy()
    env = dict(os.environ)
    env["README_INSTALL_ROOT"] = INSTALL_ROOT
    env["PATH"] = os.path.join(INSTALL_ROOT, "bin") + os.pathsep + env.get("PATH", "")
    env.pop("CARGO_TARGET_DIR", None)
    started = time.monotonic()
    passed = False
    try:
        for n, (start, cmds) in enumerate(found, 1):
            print(f"\n==> README block {n} of {len(found)} (line {start})", flush=True)
            t0 = time.monotonic()
            proc = subprocess.Popen(["bash", "-c", script_for(copy, cmds)], env=env, cwd=copy,
                                    start_new_session=True)
            try:
                rc = proc.wait(timeout=BLOCK_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                # The block and everything it started (its own process group).
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                print(f"readme-blocks: FAILED: README block at line {start} ran over "
                      f"{BLOCK_TIMEOUT_S} s", file=sys.stderr)
                return 1
            if rc != 0:
                print(f"readme-blocks: README block at line {start} failed", file=sys.stderr)
                return 1
            print(f"  (block took {time.monotonic() - t0:.1f} s)", flush=True)
        passed = True
    finally:
        subprocess.run(["bash", "-c", CLEANUP], env=env)
        if passed:
            shutil.rmtree(copy, ignore_errors=True)
        else:
            print(f"readme-blocks: the copy the blocks ran in is kept: {copy}", file=sys.stderr)
    lines = sum(len(c) for _, c in found)
    print(f"\nreadme-blocks: PASS: {len(found)} blocks, {lines} command lines, "
          f"{len(SHORTER)} shortened or skipped, in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
