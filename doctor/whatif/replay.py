"""The replay, the same for every agent: find the results, ask the agent's module, measure before and after.

`prepare(session, options)` reads the session's history once (the Contents `doctor memory`
measures, full text), finds every tool result in it (`result_sites`: the same ordinals as
`retention.results[]`), lets the agent's module (`doctor.whatif.<agent>`) find each result's raw output
and run its layers under the replayed settings, puts each known outcome's text in place of what the
model got (`replayed_history`) and measures both histories with `doctor memory`'s own analysis (`Prepared.replay(overrides)`, as often as
wanted: a sweep replays one Prepared under twenty settings). So
`before` is what `doctor memory --json --results` reports and `after` is the same report of the
counterfactual session; nothing is estimated on the way.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType

from msgspec import Struct

from doctor.assemble import ReportOptions, report_for_session, scan_facts
from doctor.core.parts import content_role, field
from doctor.core.result_table import function_response_of
from doctor.core.ui_history import MeasuredUi
from doctor.sources.base import LoadedSession
from doctor.whatif.model import Outcome, ReplayInput, SessionSettings
from doctor.whatif.result import WhatIf
from doctor.whatif.spill import SpillReader

# doctor's agent names whose modules exist; each is imported only for a session of that agent.
AGENTS = ("qwen", "claude", "gemini", "codex")


class UnsupportedAgent(ValueError):
    """doctor has no replay for this agent's sessions (yet); the message says which agents it has."""


class ResultSite(Struct, frozen=True):
    """Where one tool result sits in the history, and what the model got there (a msgspec Struct, made in C:
    a frozen dataclass's fields are each set through object.__setattr__, and a session has thousands of results).

    `batch` counts the model turns with function calls before it (parallel calls of one turn share
    it); `args` are the arguments of the call it answers (empty when no call in that turn has its id);
    `later_turns` is how many model turns came after it, each of which re-sent it.
    """

    ordinal: int
    content_index: int
    part_index: int
    call_id: str | None
    tool: str
    field: str
    recorded: str
    batch: int
    args: Mapping
    media: bool = False  # the functionResponse carries nested parts (an image, a file) beside its text
    later_turns: int = 0


def agent_module(agent: str) -> ModuleType:
    if agent not in AGENTS:
        names = ", ".join(AGENTS)
        raise UnsupportedAgent(f"doctor whatif replays {names} sessions; this one is a {agent} session")
    return importlib.import_module(f"doctor.whatif.{agent}")


def result_sites(history: Sequence) -> list[ResultSite]:
    """Every functionResponse of `history`, numbered as `doctor.core.result_table` numbers them."""
    sites: list[tuple] = []
    batch = -1
    calls: dict[str, Mapping] = {}
    model_turns_at: list[int] = []  # per site: model turns with any content before it
    model_turns = 0
    for content_index, content in enumerate(history):
        parts = content.get("parts") if type(content) is dict else field(content, "parts")
        if not isinstance(parts, list):
            continue
        if (content.get("role") if type(content) is dict else content_role(content)) == "model":
            model_turns += 1
            turn_calls = _calls(parts)
            if turn_calls:
                batch += 1
                calls = turn_calls
            continue
        for part_index, part in enumerate(parts):
            if type(part) is dict and "functionResponse" not in part and "function_response" not in part:
                continue  # a text part, most of them: no lookups
            fr = function_response_of(part) if part is not None else None
            if fr is None:
                continue
            name, call_id, response = _get(fr, "name"), _get(fr, "id"), _get(fr, "response")
            output = _get(response, "output") if response is not None else None
            error = _get(response, "error") if response is not None and output is None else None
            slot, text = ("output", output) if output is not None else ("error", error)
            sites.append((content_index, part_index, call_id if isinstance(call_id, str) else None,
                          name if isinstance(name, str) else "", slot, text if isinstance(text, str) else "",
                          max(batch, 0), calls.get(call_id, {}) if isinstance(call_id, str) else {},
                          bool(_get(fr, "parts"))))
            model_turns_at.append(model_turns)
    return [ResultSite(ordinal, *site, later_turns=model_turns - before)
            for ordinal, (site, before) in enumerate(zip(sites, model_turns_at))]


def _calls(parts: list) -> dict[str, Mapping]:
    """call id -> arguments of the function calls among a model Content's parts."""
    found = {}
    for part in parts:
        call = (part.get("functionCall") or part.get("function_call")) if type(part) is dict else (
            field(part, "functionCall") if part is not None else None)
        if call is not None:
            call_id, args = _get(call, "id"), _get(call, "args")
            if type(call_id) is str or isinstance(call_id, str):
                found[call_id] = args if type(args) is dict or isinstance(args, Mapping) else {}
    return found


def _get(obj: object, name: str) -> object:
    """`field(obj, name)` for a name without a snake_case twin; a plain dict (nearly every one) without the
    generic lookup, which a session's thousands of results otherwise pay several times each."""
    return obj.get(name) if type(obj) is dict else field(obj, name)


def replayed_history(history: Sequence, sites: Sequence[ResultSite], outcomes: Sequence[Outcome]) -> list:
    """`history` with each known outcome's text where the model got the recorded one.

    Contents and parts that do not change are the same objects (nothing is copied); an unknown
    outcome keeps the recorded text, so the totals are a bound (`WhatIf.saved` says by how much).
    """
    changed: dict[int, dict[int, str]] = {}
    for site, outcome in zip(sites, outcomes):
        if outcome.text is not None and outcome.text is not site.recorded and outcome.text != site.recorded:
            changed.setdefault(site.content_index, {})[site.part_index] = (site.field, outcome.text)
    if not changed:
        return list(history)
    out = list(history)
    for content_index, parts_changed in changed.items():
        content = out[content_index]
        parts = list(field(content, "parts"))
        for part_index, (slot, text) in parts_changed.items():
            part = parts[part_index]
            fr = function_response_of(part)
            response = dict(field(fr, "response"))
            response[slot] = text
            parts[part_index] = {**part, "functionResponse": {**fr, "response": response}}
        out[content_index] = {**content, "parts": parts}
    return out


@dataclass
class Prepared:
    """Everything a replay needs that does not depend on the replayed settings, read once.

    A sweep replays the same Prepared under twenty settings: the session, its spill files and the
    `before` report are read and measured once.
    """

    session: LoadedSession
    options: ReportOptions
    module: ModuleType
    base: SessionSettings
    history: list
    sites: list[ResultSite]
    inputs: list[ReplayInput]
    before: object  # MemoryReport
    facts: dict
    ui_history: list | None  # the session's UI items, read once (measured: long strings as lengths)
    measured_ui: MeasuredUi | None = None  # their displays measured once, for every report that shows them as they are

    def replay(self, overrides: Mapping[str, float | None]) -> WhatIf:
        settings = self.base.with_overrides(overrides)
        outcomes = self.module.replay(self.inputs, settings.values)
        after_options = self.module.after_options(settings, self.session, self.options)
        after_history = replayed_history(self.history, self.sites, outcomes)
        after_ui = getattr(self.module, "after_ui_history", None)
        ui_history = after_ui(self.ui_history, self.inputs, outcomes) if after_ui is not None else None
        ui_history = self.measured_ui if ui_history is None else ui_history
        after = replace(report_for_session(self.session, after_options, history=after_history, ui_history=ui_history),
                        scan_facts=self.facts)
        return WhatIf(self.module.CLIENT, self.module.VERSION, self.base, settings, dict(overrides),
                      self.before, after, self.sites, self.inputs, outcomes)


def prepare(session: LoadedSession, options: ReportOptions, *, spill_roots: Sequence[Path] = (),
            base: SessionSettings | None = None) -> Prepared:
    module = agent_module(session.agent)
    base = base if base is not None else module.session_settings(session, options)
    history = list(session.history())
    sites = result_sites(history)
    inputs = module.replay_inputs(session, sites, SpillReader(session, spill_roots))
    facts = scan_facts(session)
    ui = session.ui_history_to_measure()
    ui = [item for item in ui] if ui is not None else None  # iterated once (`list()` would ask its len: a second walk)
    measured_ui = MeasuredUi(ui) if ui is not None else None
    before = replace(report_for_session(session, options, history=history, ui_history=measured_ui), scan_facts=facts)
    return Prepared(session, options, module, base, history, sites, inputs, before, facts, ui, measured_ui)
