"""The seed's example (examples/continue_task.py): a task stated in one process is continued by
a new process that knows only the session id, and its answer knows the goal and next action."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest

from .env import KEY, URL, needs_server

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "continue_task.py")


def run_example(*args: str) -> str:
    env = dict(os.environ, CARRYON_SERVER=URL, CARRYON_KEY=KEY)
    out = subprocess.run([sys.executable, EXAMPLE, *args], env=env, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise AssertionError(f"the example failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
    return out.stdout


@needs_server
class SeedExample(unittest.TestCase):
    def test_continue_this_mornings_task(self) -> None:
        session_id = run_example().strip()
        self.assertTrue(session_id.startswith("sess_"), session_id)
        afternoon = run_example(session_id)
        self.assertIn("goal: Write a short guide to brewing green tea", afternoon)
        self.assertIn("next action: Research the water temperature", afternoon)
        self.assertIn("reply: Continuing the task. Goal: Write a short guide to brewing green tea", afternoon)
        self.assertIn("next action now: Draft the steps", afternoon)
