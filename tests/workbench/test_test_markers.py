"""The test suite's own honesty: a test that starts a process is marked slow (so the quick loop
stays quick)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_a_fast_test_that_starts_a_process_fails_with_the_fix_in_its_message():
    with pytest.raises(AssertionError, match="mark it slow"):
        subprocess.run(["true"], check=False)


@pytest.mark.slow
def test_a_slow_test_may_start_a_process():
    done = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "42"
