"""One replay's answer: `before`, `after`, what changed per result, and what it saved.

`WhatIf.to_dict()` is the object `doctor whatif --json` prints, exactly four keys:
- `before`, `after`: each `doctor memory --json --results` (the session, and the session as it
  would have been under the replayed settings: `retention.results[]` with the same ordinals and
  call ids, `rawChars` what the model got or would have got, in JavaScript string length);
- `changes`: one entry per result, in ordinal order: `ordinal`, `callId`, `tool`, `beforeChars`,
  `afterChars` (the same measure as `rawChars`), `afterLayer` (the layer that bounded it under the
  replayed settings), `known`, and `why` when not known (then `afterChars` is the recorded size and
  `afterCharsRange` the range the agent's limits allow, null for no upper limit);
- `saved`: what the replayed settings save (negative: cost) in Qwen's measure of retained context
  (the same figures as `toolResultRetention.totalChars`), per later turn (each model request re-sends
  every earlier result) and summed over the turns that followed each result; results cut before and
  after; results unknown, and whether the figures are exact or a bound off by at most `couldBeOffBy`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from doctor.core.estimator import tokens_for_chars
from doctor.core.jsvalues import js_len
from doctor.core.sentinels import NONE, sentinel_kind
from doctor.whatif.model import Outcome, ReplayInput, SessionSettings

if TYPE_CHECKING:
    from doctor.report.model import MemoryReport
    from doctor.whatif.replay import ResultSite


@dataclass(frozen=True)
class WhatIf:
    client: str
    version: str
    base: SessionSettings
    settings: SessionSettings
    overrides: Mapping[str, float | None]
    before: MemoryReport
    after: MemoryReport
    sites: Sequence[ResultSite]
    inputs: Sequence[ReplayInput]
    outcomes: Sequence[Outcome]

    def to_dict(self) -> dict:
        return {"before": self.before.to_dict(), "after": self.after.to_dict(),
                "changes": self.changes(), "saved": self.saved()}

    def to_json(self) -> str:
        return whatif_json(self.to_dict())

    def changes(self) -> list[dict]:
        rows = []
        for site, outcome, before, after in zip(self.sites, self.outcomes, self._before_sizes, self._after_sizes):
            row = {"ordinal": site.ordinal, "callId": site.call_id, "tool": site.tool, "beforeChars": before,
                   "afterChars": after, "afterLayer": outcome.layer, "known": outcome.text is not None}
            if outcome.text is None:
                row["why"] = outcome.why
                row["afterCharsRange"] = [outcome.low, _number(outcome.high)]
            rows.append(row)
        return rows

    @cached_property
    def _before_sizes(self) -> list[int]:
        """Each result's recorded size (JS length): `changes`, `saved` and `off_by` all read it, and measuring
        a long text walks all of it."""
        return [js_len(site.recorded) for site in self.sites]

    @cached_property
    def _after_sizes(self) -> list[int]:
        """Each result's size after the replay (the recorded size when unknown)."""
        return [before if outcome.text is None else (before if outcome.text is site.recorded else js_len(outcome.text))
                for site, outcome, before in zip(self.sites, self.outcomes, self._before_sizes)]

    @property
    def unknown_count(self) -> int:
        return sum(1 for outcome in self.outcomes if not outcome.known)

    def off_by(self) -> float:
        """How far the after totals could be from the truth: the unknown results' widest miss."""
        total = 0.0
        for outcome, recorded in zip(self.outcomes, self._before_sizes):
            if outcome.text is None:
                total += max(outcome.high - recorded, recorded - outcome.low)
        return total

    def saved(self) -> dict:
        before_total = self.before.qwen_stats.total_chars if self.before.qwen_stats else 0
        after_total = self.after.qwen_stats.total_chars if self.after.qwen_stats else 0
        over_turns = 0
        for site, outcome, before, after in zip(self.sites, self.outcomes, self._before_sizes, self._after_sizes):
            if outcome.text is not None:
                over_turns += (before - after) * site.later_turns
        off = self.off_by()
        return {
            "chars": _number(before_total - after_total),
            "tokensPerLaterTurn": _tokens(before_total - after_total),
            "charsOverLaterTurns": over_turns,
            "tokensOverLaterTurns": _tokens(over_turns),
            "resultsCutBefore": sum(1 for site in self.sites if sentinel_kind(site.recorded) != NONE),
            "resultsCut": sum(1 for site, o in zip(self.sites, self.outcomes) if _layer_after(site, o) != NONE),
            "resultsUnknown": self.unknown_count,
            "exact": self.unknown_count == 0,
            "couldBeOffBy": {"chars": _number(off), "tokensPerLaterTurn": None if not math.isfinite(off) else _tokens(off)},
        }


def _layer_after(site: ResultSite, outcome: Outcome) -> str:
    return sentinel_kind(site.recorded) if outcome.text is None else outcome.layer


def _tokens(chars: float) -> int:
    """Qwen's estimate (chars / 4, rounded up) of a difference, keeping its sign."""
    return tokens_for_chars(chars) if chars >= 0 else -tokens_for_chars(-chars)


def _number(value: float) -> float | int | None:
    if not math.isfinite(value):
        return None
    return int(value) if float(value).is_integer() else value


def whatif_json(data: dict) -> str:
    """`data` as `doctor whatif --json` prints it: indented, inert, a final newline."""
    text = whatif_json_output(data)
    return text.decode() if isinstance(text, bytes) else text


def whatif_json_output(data: dict) -> bytes | str:
    """`whatif_json(data)` as the command writes it: orjson's UTF-8 bytes, made inert as they are, or the json
    module's text when orjson refuses a string (a lone surrogate, which a session may hold; same meaning).

    `before` and `after` each hold every result's row, so the text runs to megabytes on a big session;
    Python's json module indents in pure Python (~1 s per 10 MB), orjson in C, and decoding its bytes to
    print them (encoding them again) cost six times its own work."""
    from doctor.report.inert import inert_json, inert_json_bytes

    try:
        import orjson

        return inert_json_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2)) + b"\n"
    except (ImportError, TypeError, ValueError):
        import json

        return inert_json(json.dumps(data, indent=2, ensure_ascii=False)) + "\n"
