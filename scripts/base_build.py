"""An earlier commit of this repository, built for a comparison with this tree.

    python3 scripts/base_build.py [--flags FLAGS] [--what cli|netplay]
                                  [--keep DIR] [--keep-worktree] COMMIT

builds COMMIT's `tickwise` CLI (`--what cli`, the default) or its netplay
criterion bench (`--what netplay`) and prints the executable's path. The
scripts that compare builds (`scripts/bench-compare.sh`,
`scripts/bench_goals.py`) build their base here, so there is one way to
do it:

* The commit is checked out in a git worktree in a temporary directory
  outside this tree: cargo reads every .cargo/config.toml from the working
  directory up, so a worktree inside this tree would also get this tree's
  rustflags. It is removed at the end (`--keep-worktree`: left for the
  caller, whose comparison runs the base in its own tree, and printed as a
  second tab-separated field).
* It is built in a target directory of its own (cargo names a workspace
  crate's artifacts by its path inside the workspace, so two trees must
  never share one), `DIR/target-<sha>`; with this tree's flags that
  directory is first seeded with this tree's release dependencies
  (`scripts/seed-target.sh`), so only the workspace's crates compile.
* The executable is kept as `DIR/<tickwise|netplay>-<sha>-<flags>` (DIR:
  `target/base-builds/` by default), so a second run builds nothing.

FLAGS says how the base is compiled:

* `this-config` (the default): with this tree's .cargo/config.toml
  (x86_64: target-cpu=x86-64-v2), so a ratio measures code, not compiler
  flags. Without such a file, the same as `as-shipped`.
* `as-shipped`: with the commit's own configuration, as it was released
  (round 1 and the build issue 21 measured had none: plain x86-64).
* `cpu=LEVEL`: `RUSTFLAGS=-C target-cpu=LEVEL`.

Errors (an unknown commit, a build that fails) go to stderr, exit 1.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
CONFIG = os.path.join(ROOT, ".cargo", "config.toml")


def target_dir():
    """This tree's cargo target directory."""
    t = os.environ.get("CARGO_TARGET_DIR") or "target"
    return t if os.path.isabs(t) else os.path.join(ROOT, t)


def run_to_stderr(name, cmd, cwd=ROOT, env=None):
    """Runs `cmd`, its output to stderr; returns its stdout as text."""
    print(f"$ {' '.join(cmd)}  ({name})", file=sys.stderr, flush=True)
    p = subprocess.run(cmd, cwd=cwd, env={**os.environ, **(env or {})},
                       stdout=subprocess.PIPE, text=True, check=False)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}) in {cwd}")
    return p.stdout


def netplay_bench(run, name, cwd, target, cargo=("cargo",), env=None):
    """Builds the netplay bench of the tree at `cwd` and returns its executable."""
    text = run(name, [*cargo, "bench", "--locked", "-p", "tickwise-net", "--bench", "netplay",
                      "--no-run", "--message-format=json", "--target-dir", target],
               cwd=cwd, env=env)
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") \
                and msg["target"]["name"] == "netplay":
            return msg["executable"]
    raise RuntimeError(f"no netplay bench executable in {name}'s build output")


class BaseBuild:
    """One commit with one way of compiling it (see the module's docs).
    The worktree is made on the first build (or `source()`); `close()`
    removes it. `run(name, cmd, cwd=..., env=...)` runs a command and
    returns its stdout (default: its output to stderr)."""

    def __init__(self, commit, flags="this-config", keep=None, run=run_to_stderr):
        p = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"],
                           cwd=ROOT, capture_output=True, text=True, check=False)
        if p.returncode != 0:
            raise RuntimeError(f"cannot resolve {commit} (a shallow clone? fetch it first)")
        self.sha = p.stdout.strip()[:12]
        self.run = run
        self.keep = keep or os.path.join(target_dir(), "base-builds")
        self.src = None
        self.env, self.cargo = {}, ["cargo"]
        if flags == "this-config" and os.path.exists(CONFIG):
            with open(CONFIG, "rb") as f:
                self.tag = "config-" + hashlib.sha256(f.read()).hexdigest()[:8]
            self.cargo = ["cargo", "--config", CONFIG]
        elif flags in ("this-config", "as-shipped"):
            self.tag = "as-shipped"
        elif flags.startswith("cpu="):
            self.tag = "cpu-" + flags[4:]
            self.env = {"RUSTFLAGS": f"-C target-cpu={flags[4:]}"}
        else:
            raise ValueError(f"unknown flags {flags!r}: this-config, as-shipped or cpu=LEVEL")

    def source(self):
        """The commit's worktree, outside this tree."""
        if self.src is None:
            src = tempfile.mkdtemp(prefix="tickwise-base-")
            if os.path.commonpath([src, ROOT]) == ROOT:
                raise RuntimeError(f"the temporary directory {src} is inside {ROOT}")
            p = subprocess.run(["git", "worktree", "add", "--detach", src, self.sha],
                               cwd=ROOT, capture_output=True, text=True, check=False)
            if p.returncode != 0:
                shutil.rmtree(src, ignore_errors=True)
                raise RuntimeError(f"cannot make a worktree of {self.sha}: {p.stderr.strip()}")
            self.src = src
        return self.src

    def executable(self, what="cli"):
        """The kept `tickwise` CLI (`cli`) or netplay bench (`netplay`),
        built first if it is not kept yet."""
        name = {"cli": "tickwise", "netplay": "netplay"}[what]
        kept = os.path.join(self.keep, f"{name}-{self.sha}-{self.tag}")
        if os.path.exists(kept):
            return kept
        os.makedirs(self.keep, exist_ok=True)
        target = os.path.join(self.keep, f"target-{self.sha}")
        if self.tag.startswith("config-"):
            # Only the same flags reuse this tree's dependencies.
            subprocess.run(["bash", os.path.join(ROOT, "scripts", "seed-target.sh"),
                            target_dir(), target], check=True, stdout=sys.stderr)
        if what == "cli":
            self.run(f"base-{name}", [*self.cargo, "build", "--release", "--locked",
                                      "-p", "tickwise-cli", "--target-dir", target],
                     cwd=self.source(), env=self.env)
            built = os.path.join(target, "release", "tickwise")
        else:
            built = netplay_bench(self.run, f"base-{name}", self.source(), target,
                                  cargo=self.cargo, env=self.env)
        shutil.copy(built, kept)
        return kept

    def close(self):
        """Removes the worktree, if one was made."""
        if self.src:
            subprocess.run(["git", "worktree", "remove", "--force", self.src], cwd=ROOT,
                           check=False, capture_output=True)
            shutil.rmtree(self.src, ignore_errors=True)
            subprocess.run(["git", "worktree", "prune"], cwd=ROOT, check=False)
            self.src = None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("commit")
    ap.add_argument("--flags", default="this-config",
                    help="this-config (default), as-shipped or cpu=LEVEL")
    ap.add_argument("--what", default="cli", choices=("cli", "netplay"))
    ap.add_argument("--keep", help="where executables are kept (default target/base-builds)")
    ap.add_argument("--keep-worktree", action="store_true",
                    help="leave the worktree and print its path after the executable's")
    a = ap.parse_args()
    try:
        b = BaseBuild(a.commit, a.flags, a.keep)
    except (RuntimeError, ValueError) as e:
        print(f"base_build: {e}", file=sys.stderr)
        return 1
    try:
        exe = b.executable(a.what)
        if a.keep_worktree:
            print(f"{exe}\t{b.source()}")
            b.src = None  # the caller's now
        else:
            print(exe)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        print(f"base_build: {e}", file=sys.stderr)
        return 1
    finally:
        b.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
