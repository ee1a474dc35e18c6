"""Time limits for tests that scale with the machine (issue 26.4).

A test may check that an operation ends *because of a configured timeout* (not because a stalled server
finally gave up), but never that the machine is fast: speed is measured by benchmarks/ (docs/benchmarks.md).
Shared 2-core machines here run 3-30x slower than a quiet one, so a bound is

    configured timeout (a wall-clock timer: load does not stretch it)
    + the work around it, measured on a quiet machine, x ``SLOWDOWN``

``SLOWDOWN`` is 10 by default; set ``ASSISTANT_TEST_SLOWDOWN`` on a machine that is slower still. Where the
fault being tested lasts a known time (a 30 s stall), a test also asserts that the bound is below it, so the
check keeps its meaning: the timeout, not the fault's end, finished the operation.
"""

from __future__ import annotations

import os

#: How much slower than a quiet 2-core machine the test machine may be.
SLOWDOWN = float(os.environ.get("ASSISTANT_TEST_SLOWDOWN", "10"))


def time_bound_s(timeout_s: float, work_s: float) -> float:
    """Seconds an operation may take: ``timeout_s`` plus ``work_s`` (quiet-machine seconds) x :data:`SLOWDOWN`."""
    return timeout_s + work_s * SLOWDOWN
