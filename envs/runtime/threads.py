"""Thread settings that keep training fast when other programs share the cores."""

from __future__ import annotations

import os

#: OpenMP threads that wait for work sleep instead of spinning: a spinning thread burns a core that
#: another process (or a worker of ours) needs, which turned a 0.4 ms layer into 5.7 ms under load.
PASSIVE_WAIT = {"OMP_WAIT_POLICY": "PASSIVE"}


def passive_threads() -> None:
    """Set `PASSIVE_WAIT` unless the user chose otherwise; call it before torch is first imported.

    OpenMP reads its settings when torch loads it, so the entry points (`fowlplay-train`, the
    benchmarks) call this first thing; the number of threads is the config's `torch_threads`.
    """
    for key, value in PASSIVE_WAIT.items():
        os.environ.setdefault(key, value)
