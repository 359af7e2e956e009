"""scripts/base_build.py without building anything: how each way of
compiling is named and passed to cargo, the refusals, and a kept
executable reused without a worktree.

    python3 -m unittest scripts/test_base_build.py
"""

import hashlib
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import base_build as bb  # noqa: E402


def head():
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=bb.ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()


def refuse_to_run(name, cmd, cwd=None, env=None):
    raise AssertionError(f"{name} ran {cmd}: nothing should be built")


class BaseBuildTest(unittest.TestCase):
    def test_an_unknown_commit_is_refused(self):
        with self.assertRaisesRegex(RuntimeError, "cannot resolve no-such-commit"):
            bb.BaseBuild("no-such-commit")

    def test_unknown_flags_are_refused(self):
        with self.assertRaisesRegex(ValueError, "unknown flags 'fast'"):
            bb.BaseBuild("HEAD", "fast")

    def test_each_way_of_compiling_has_its_name_and_cargo_arguments(self):
        b = bb.BaseBuild("HEAD", "cpu=x86-64")
        self.assertEqual(b.sha, head()[:12])
        self.assertEqual((b.tag, b.env, b.cargo),
                         ("cpu-x86-64", {"RUSTFLAGS": "-C target-cpu=x86-64"}, ["cargo"]))
        b = bb.BaseBuild("HEAD", "as-shipped")
        self.assertEqual((b.tag, b.env, b.cargo), ("as-shipped", {}, ["cargo"]))
        # This tree's config, named by its contents: a changed config is
        # another build.
        config = os.path.join(bb.ROOT, ".cargo", "config.toml")
        with open(config, "rb") as f:
            want = "config-" + hashlib.sha256(f.read()).hexdigest()[:8]
        b = bb.BaseBuild("HEAD")
        self.assertEqual((b.tag, b.cargo), (want, ["cargo", "--config", config]))

    def test_a_kept_executable_is_reused_without_a_worktree(self):
        with tempfile.TemporaryDirectory() as keep:
            b = bb.BaseBuild("HEAD", "as-shipped", keep=keep, run=refuse_to_run)
            self.addCleanup(b.close)
            kept = os.path.join(keep, f"netplay-{head()[:12]}-as-shipped")
            open(kept, "w").close()
            self.assertEqual(b.executable("netplay"), kept)
            self.assertIsNone(b.src)
            # The CLI of the same build is not kept: it would be built.
            with self.assertRaisesRegex(AssertionError, "nothing should be built"):
                b.executable("cli")
            b.close()
            self.assertIsNone(b.src)


if __name__ == "__main__":
    unittest.main()
