"""The neutral model of a replay: settings keys, one result's replay input, one result's outcome.

Every agent module (`doctor/whatif/<agent>.py`) speaks in these types, so the framework, the
renderers and a future fleet store never look inside an agent's arithmetic. They hold sizes, names
and the raw text the layers need; they are never written anywhere as they are (reports carry sizes).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from msgspec import Struct
from msgspec import field as struct_field

# Where a result's raw output was found.
FROM_SESSION = "session"  # the session file itself kept it whole (no layer cut it)
FROM_SPILL = "spill"  # a file the agent saved the full output to (Qwen's .output / tool-results/, …)
FROM_AGGREGATED_OUTPUT = "aggregated_output"  # Codex's rollout keeps it (up to 64 KiB)
UNKNOWN = "unknown"  # the recording does not keep it


@dataclass(frozen=True, slots=True)
class SettingKey:
    """One limit a user may `--set`, under the agent's own name.

    `parse` turns the VALUE text into what the client would read (raising ValueError with a
    one-line reason); `default` is what the client uses when the key is not set (None: no
    limit); `where` says where the client reads it, for `--help` and refusals.
    """

    name: str
    default: float | None
    parse: Callable[[str], float]
    where: str
    means: str


@dataclass(frozen=True, slots=True)
class SessionSettings:
    """The keys that are set (absent = not set, the client's default applies) and the files read."""

    values: Mapping[str, float] = field(default_factory=dict)
    files: tuple[str, ...] = ()

    def with_overrides(self, overrides: Mapping[str, float | None]) -> SessionSettings:
        """`--set` applied: a value replaces the key; None (`KEY=default`) removes it."""
        values = dict(self.values)
        for key, value in overrides.items():
            if value is None:
                values.pop(key, None)
            else:
                values[key] = value
        return SessionSettings(values, self.files)


# One per result, and an Outcome per result and replayed value: msgspec Structs (frozen, compared and hashed like
# frozen dataclasses) are made in C, where a frozen dataclass sets each field through object.__setattr__.
class RawOutput(Struct, frozen=True):
    """A result's output as the tool produced it, before the layers the replayed keys govern.

    `text` is None when the recording does not keep it (`why` says why). `source` is one of
    FROM_SESSION, FROM_SPILL, FROM_AGGREGATED_OUTPUT, UNKNOWN; `spill` the file it was read
    from, as the session wrote its path. `capped_by` names a cap the tool itself applied under
    the session's settings (Qwen's read_file paging, grep and glob caps): the text is then all
    that exists of the output, and the agent module decides, per setting, whether it suffices.
    """

    text: str | None
    source: str
    spill: str | None = None
    why: str | None = None
    capped_by: str | None = None

    @property
    def known(self) -> bool:
        return self.text is not None


class ReplayInput(Struct, frozen=True):
    """One tool result, with everything the agent's layers need to recompute it.

    `ordinal` and `call_id` are those of `doctor memory --json --results`; `batch` groups the
    results of one model turn's parallel calls; `field` is "output" or "error" (the slot the model
    got it in); `recorded` is the text the model got in the session (kept by reference, not
    copied); `args` the call's arguments; `facts` what else the agent module read about it
    (Qwen: the error type, the shell's appended notices), agent-specific, plain values only.
    """

    ordinal: int
    call_id: str | None
    tool: str
    batch: int
    field: str
    recorded: str
    raw: RawOutput
    args: Mapping = struct_field(default_factory=dict)
    facts: Mapping = struct_field(default_factory=dict)


class Outcome(Struct, frozen=True):
    """What one result would have put into the context under the replayed settings.

    `text` is the exact string the model would have received (None: unknown, `why` says why,
    and `low`/`high` bound its length where the agent's limits do; `high` None = unbounded).
    `layer` is the last layer that changed it, in doctor's layer names (doctor.core.sentinels).
    """

    text: str | None
    layer: str
    why: str | None = None
    low: int = 0
    high: float = math.inf

    @property
    def known(self) -> bool:
        return self.text is not None


def unknown(why: str, low: int = 0, high: float = math.inf, layer: str = "none") -> Outcome:
    return Outcome(None, layer, why, low, high)
