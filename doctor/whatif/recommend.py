"""`doctor whatif --recommend [--keep 0.9]`: per tool, the smallest budget that keeps that share of its results whole.

For each tool, the agent module says which of its keys sets that tool's budget and the smallest value of
it that keeps one result whole (`budget_for(input)`: the result's raw size, or only a lower bound when the
tool capped itself and the recording does not keep the rest). The recommendation is the value at the
keep-share rank (nearest rank) of those sizes; what it saves is a replay with the key at that value, for
that tool's results and for the whole session (in Qwen Code one threshold sets the budget of every tool
without its own, so the others change too). A tool with fewer than MIN_RESULTS sized results gets no
number: the data is too thin, and the answer says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from doctor.core.jsvalues import js_len
from doctor.whatif.replay import Prepared
from doctor.whatif.result import WhatIf
from doctor.whatif.thin_data import MIN_RESULTS, too_few



@dataclass(frozen=True)
class Recommended:
    tool: str
    results: int
    largest: float | None  # the largest raw size known
    budget: float | None  # None: no recommendation (see note)
    key: str  # the agent's key that sets it ("—" when the client has none)
    saved: float | None  # chars this tool's results would save per later turn
    saved_session: float | None  # chars the whole session would save (the key is shared)
    note: str

    def to_dict(self) -> dict:
        return {"tool": self.tool, "results": self.results, "largestRawChars": self.largest, "budget": self.budget,
                "key": self.key, "savedChars": self.saved, "savedSessionChars": self.saved_session, "note": self.note}


@dataclass(frozen=True)
class Recommendation:
    keep: float
    whatif: WhatIf  # the session under its own settings (heading, before figures)
    items: tuple[Recommended, ...]

    def to_dict(self) -> dict:
        return {"keep": self.keep, "minResults": MIN_RESULTS, "tools": [item.to_dict() for item in self.items]}


def recommend(prepared: Prepared, overrides: Mapping[str, float | None], keep: float) -> Recommendation:
    module = prepared.module
    by_tool: dict[str, list] = {}
    for item in prepared.inputs:
        by_tool.setdefault(item.tool, []).append(item)
    items = []
    for tool, inputs in sorted(by_tool.items(), key=lambda pair: (-len(pair[1]), pair[0])):
        items.append(_for_tool(prepared, overrides, module, tool, inputs, keep))
    return Recommendation(keep, prepared.replay(overrides), tuple(items))


def _for_tool(prepared, overrides, module, tool, inputs, keep) -> Recommended:
    key, note = module.budget_key(tool)
    sized = [size for size in (module.budget_for(item) for item in inputs) if size is not None]
    largest = max((value for value, _ in sized), default=None)
    if key is None:
        return Recommended(tool, len(inputs), largest, None, "—", None, None, note)
    if len(sized) < MIN_RESULTS:
        return Recommended(tool, len(inputs), largest, None, key, None, None,
                           too_few(len(sized)))
    sized.sort()
    rank = max(1, math.ceil(keep * len(sized)))
    budget, at_least = sized[rank - 1]
    whatif = prepared.replay({**overrides, key: budget})
    mine = sum(js_len(site.recorded) - (js_len(o.text) if o.text is not None else js_len(site.recorded))
               for site, o in zip(whatif.sites, whatif.outcomes) if site.tool == tool)
    caution = (" (at least: the recording keeps only part of that result, so keeping it whole may need more)"
               if at_least else "")
    return Recommended(tool, len(inputs), largest, budget, key, mine, whatif.saved()["chars"], note + caution)
