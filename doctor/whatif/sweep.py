"""`doctor whatif --sweep KEY=A..B[:STEP]`: one replay per value of one key, the session read once.

The session, its spill files and the `before` report are read and measured once (replay.Prepared); each
value costs only the agent's layers and the measure of the replayed history.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from doctor.whatif.replay import Prepared
from doctor.whatif.result import WhatIf


@dataclass(frozen=True)
class Sweep:
    key: str
    base_value: float | None  # the session's own value (None: not set)
    points: Sequence[tuple[float | None, WhatIf]]

    def to_dict(self) -> dict:
        """`--json`: the session's figures once, then per value the replayed figures and what they save."""
        first = self.points[0][1]
        return {
            "key": self.key,
            "sessionValue": self.base_value,
            "before": first.before.qwen_stats.to_qwen_json() if first.before.qwen_stats else None,
            "points": [{"value": value,
                        "after": whatif.after.qwen_stats.to_qwen_json() if whatif.after.qwen_stats else None,
                        "saved": whatif.saved()} for value, whatif in self.points],
        }


def run_sweep(prepared: Prepared, overrides: Mapping[str, float | None], key: str,
              values: Sequence[float | None]) -> Sweep:
    points = [(value, prepared.replay({**overrides, key: value})) for value in values]
    return Sweep(key, prepared.base.values.get(key), points)
