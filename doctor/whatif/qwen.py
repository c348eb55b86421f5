"""Qwen Code 0.24.4's tool-result layers, replayed exactly (the interface: doctor/whatif/__init__.py).

For each result, in Qwen's order (docs/formats.md, "Replay rules: Qwen Code 0.24.4", says where each
step comes from in the bundle):
1. the tool's own cut: the shell's budget with its head/tail split (`tools.truncateToolOutputThreshold` once
   set, else 30,000), read_file's paging, grep's and glob's caps (doctor.whatif.qwen_tools);
2. the persistence gate: a result over threshold + 3,000 becomes a `<persisted-output>` stub (not the shell,
   which bounds itself, nor the exempt tools); on the error path, execution errors only;
3. the scheduler's per-tool truncation: the tool's `maxOutputChars` by chars, or the threshold and
   `tools.truncateToolOutputLines` for tools that declare none;
4. the batch budget (`tools.toolOutputBatchBudget`) water-filled across the parallel calls of one turn.
The arithmetic is in doctor.whatif.qwen_layers.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from msgspec.structs import replace

from doctor.assemble import ReportOptions, qwen_settings_for
from doctor.core.budgets import (
    DEFAULT_TOOL_OUTPUT_BATCH_BUDGET,
    DEFAULT_TRUNCATE_TOOL_OUTPUT_LINES,
    DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD,
    SHELL_TOOL,
    QwenLimits,
    canonical_tool_name,
)
from doctor.core.jsvalues import js_len
from doctor.core.sentinels import BATCH_TRUNCATED_PREFIX, MICROCOMPACT_CLEARED, sentinel_kind
from doctor.core.settings import qwen_home
from doctor.sources.base import LoadedSession
from doctor.sources.qwen.history import ORPHAN_TOOL_USE_REPAIR_REASON
from doctor.whatif import qwen_layers as layers
from doctor.whatif import qwen_tools
from doctor.whatif.jsstring import from_units, to_units
from doctor.whatif.model import (
    FROM_SESSION,
    FROM_SPILL,
    UNKNOWN,
    Outcome,
    RawOutput,
    ReplayInput,
    SessionSettings,
    SettingKey,
    unknown,
)
from doctor.whatif.spill import SpillReader

AGENT = "qwen"
CLIENT = "Qwen Code"
VERSION = "0.24.4"
THRESHOLD = "tools.truncateToolOutputThreshold"
LINES = "tools.truncateToolOutputLines"
BATCH = "tools.toolOutputBatchBudget"
_SETTINGS_FILES = "settings.json (~/.qwen, <project>/.qwen, system), key tools."


def _number(text: str) -> float:
    """A settings value as Qwen reads it: any JSON number; ≤ 0 means no limit."""
    cleaned = text.strip().replace("_", "").replace(",", "")
    if cleaned.lower() in ("inf", "infinity", "none", "off", "unlimited"):
        return -1
    try:
        value = float(cleaned)
    except ValueError:
        raise ValueError(f"not a number: {text!r} (a number; 0 or less means no limit; `default` unsets it)") from None
    if not math.isfinite(value):
        raise ValueError(f"not a number: {text!r}")
    return int(value) if value.is_integer() else value


KEYS = (
    SettingKey(THRESHOLD, DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD, _number, _SETTINGS_FILES + "truncateToolOutputThreshold",
               "chars a result may keep before it is truncated (≤ 0: never); once set it is also the shell's budget "
               "(30,000 until then); the persistence gate is it + 3,000; read_file and grep cap their text at it"),
    SettingKey(LINES, DEFAULT_TRUNCATE_TOOL_OUTPUT_LINES, _number, _SETTINGS_FILES + "truncateToolOutputLines",
               "lines a result may keep (≤ 0: no limit): read_file pages by it, grep lists at most this many matches, "
               "glob at most min(100, it) files, other tools without a budget of their own are truncated by it"),
    SettingKey(BATCH, DEFAULT_TOOL_OUTPUT_BATCH_BUDGET, _number, _SETTINGS_FILES + "toolOutputBatchBudget",
               "chars all results of one turn's parallel calls may keep together (≤ 0: no limit), water-filled"),
)

# Error types Qwen gives before a tool runs (registry, validation, policy): their message never meets the gate.
PRE_EXECUTION_ERRORS = frozenset({"tool_not_registered", "execution_denied"})
# File kinds read_file does not page as text (chunk-NNN2PKPV.js:3116–3187: binary, svg, pdf, media, notebooks).
_NOT_PAGED = re.compile(r"\.(svg|pdf|ipynb|png|jpe?g|gif|webp|bmp|ico|tiff?|mp[34]|m4a|wav|flac|ogg|aac|mov|mkv|webm|avi"
                        r"|zip|gz|tar|exe|bin|so|dylib|class|jar|woff2?|ttf)$", re.I)
_TEMP_DIR = re.compile(r"(/[^\s\"'<>]*?/tmp/[0-9a-f]{64})/(?:tool-results/|[A-Za-z0-9_.\-]+\.output)")
_SAVED_TO = re.compile(r"The full output has been saved to: ([^\n]+)\n")
_PERSISTED_TO = re.compile(r"Full output saved to: ([^\n]+)\n")
_PGID = "\nProcess Group PGID: "
DISPLAY_CHARS = 32000  # MAX_RETAINED_TOOL_RESULT_DISPLAY_CHARS
_HEADER_ROOM = 1000  # more than any header or stub wrapper adds around a preview (for ranges of unknowns)


def limits(values: Mapping[str, float]) -> QwenLimits:
    """The settings as Qwen's Config holds them (a value ≤ 0 is Infinity; a present threshold is explicit)."""
    return QwenLimits.from_settings({key.removeprefix("tools."): value for key, value in values.items()})


def session_settings(session: LoadedSession, options: ReportOptions) -> SessionSettings:
    settings = qwen_settings_for(options, session.project_dir)
    values = {f"tools.{name}": settings.tools[name] for name in
              ("truncateToolOutputThreshold", "truncateToolOutputLines", "toolOutputBatchBudget")
              if settings.tools.get(name) is not None}
    if options.threshold is not None:
        values[THRESHOLD] = options.threshold
    return SessionSettings(values, tuple(str(f) for f in settings.files))


def after_options(settings: SessionSettings, session: LoadedSession, options: ReportOptions) -> ReportOptions:
    """`doctor memory`'s options for the replayed session: the same settings with the replayed keys."""
    merged = dict(qwen_settings_for(options, session.project_dir).merged)
    tools = {key: value for key, value in (merged.get("tools") or {}).items()
             if f"tools.{key}" not in (THRESHOLD, LINES, BATCH)} if isinstance(merged.get("tools"), Mapping) else {}
    tools.update({key.removeprefix("tools."): value for key, value in settings.values.items()})
    merged["tools"] = tools
    return replace(options, settings_files=(), use_default_settings_files=False, settings=merged, threshold=None)


def after_ui_history(ui_history: list | None, inputs: Sequence[ReplayInput], outcomes: Sequence[Outcome]) -> list | None:
    """The UI history with each shell error's display text replaced by the replayed error: Qwen shows a failed
    command's error message, the text the model got (chunk-DPEB6S2R.js:61219–61224), compacted to about
    32,000 chars for the history (doctor cuts it there)."""
    replaced = {item.call_id: outcome.text for item, outcome in zip(inputs, outcomes)
                if item.field == "error" and item.facts.get("canonical") == SHELL_TOOL and outcome.text is not None
                and outcome.text != item.recorded}
    if not replaced or ui_history is None:
        return None
    items = []
    for item in ui_history:
        if isinstance(item, dict) and item.get("type") == "tool_group" and isinstance(item.get("tools"), list):
            tools = []
            for tool in item["tools"]:
                display = tool.get("resultDisplay") if isinstance(tool, dict) else None
                if isinstance(display, dict) and display.get("type") == "shell_result" and tool.get("callId") in replaced:
                    text = replaced[tool["callId"]]
                    tool = {**tool, "resultDisplay": {**display, "text": text[:DISPLAY_CHARS]}}
                tools.append(tool)
            item = {**item, "tools": tools}
        items.append(item)
    return items


# --- what the recording keeps of each result -----------------------------------------------------------


def replay_inputs(session: LoadedSession, sites: Sequence, spill: SpillReader) -> list[ReplayInput]:
    temp_dir, temp_source = _temp_dir(session, sites)
    error_types = _error_types(session) if any(site.field == "error" and len(site.recorded) > 3000
                                               for site in sites) else {}
    inputs = []
    for site in sites:
        raw, facts = _raw_output(site, spill)
        facts.update(temp_dir=temp_dir, temp_dir_from=temp_source, media=site.media)
        if site.call_id in error_types:
            facts["error_type"] = error_types[site.call_id]
        inputs.append(ReplayInput(site.ordinal, site.call_id, site.tool, site.batch, site.field, site.recorded, raw,
                                  site.args, facts))
    return inputs


def _raw_output(site, spill: SpillReader) -> tuple[RawOutput, dict]:
    recorded = site.recorded
    canonical = canonical_tool_name(site.tool)
    facts: dict = {"canonical": canonical}
    if recorded == MICROCOMPACT_CLEARED or (site.field == "error" and recorded == ORPHAN_TOOL_USE_REPAIR_REASON):
        facts["fixed"] = True  # cleared or synthesized on resume: the same whatever the limits
        return RawOutput(recorded, FROM_SESSION), facts
    text, source, where, why = recorded, FROM_SESSION, None, None
    spilled = _spilled_to(recorded, canonical)
    if spilled is False:
        return RawOutput(None, UNKNOWN, why="Qwen cut it and saved the full output nowhere"), facts
    if spilled is not None:
        text, why = spill.read(spilled)
        source, where = (FROM_SPILL, spilled) if text is not None else (UNKNOWN, spilled)
        if text is not None:
            facts["spilled_to"] = spilled
    if text is None:
        return RawOutput(None, source, where, why), facts
    if _appended_reminder(recorded) or _appended_reminder(text):
        return RawOutput(None, UNKNOWN, where, "a hook or rule appended context to it; that pass is not replayed"), facts
    if canonical == SHELL_TOOL:
        body, notices = _shell_parts(text, recorded, source == FROM_SPILL and spilled.endswith(".output"))
        if body is None:
            return RawOutput(None, UNKNOWN, where, "a shell result of a form doctor does not replay "
                                                  "(timed out or cancelled)"), facts
        facts["notices"] = notices
        text = body
    facts["output_file"] = _output_file(recorded)
    return RawOutput(text, source, where, capped_by=capped_by(canonical, text)), facts


def _appended_reminder(text: str) -> bool:
    """A `<system-reminder>` envelope appended after the output (a hook's or a rule's context)."""
    return text.endswith("</system-reminder>") and "\n<system-reminder>" in text[-200000:]


def _spilled_to(recorded: str, canonical: str) -> str | None | bool:
    """The file holding the text a layer cut (None: nothing was cut; False: cut, saved nowhere)."""
    kind = sentinel_kind(recorded)
    if kind == "none":
        return None
    if recorded.startswith(layers.TOOL_OUTPUT_TRUNCATED_PREFIX):
        found = _SAVED_TO.search(recorded, 0, 4096)
        return found.group(1) if found else False
    if recorded.startswith(layers.PERSISTED_OPEN):
        found = _PERSISTED_TO.search(recorded, 0, 4096)
        return found.group(1) if found else False
    if recorded.startswith(BATCH_TRUNCATED_PREFIX):
        files = _batch_artifacts(recorded)
        if not files:
            return False
        # A shell's own `.output` holds its full output; any other artifact holds the text the batch cut.
        return next((f for f in files if f.endswith(".output") and canonical == SHELL_TOOL), files[0])
    return False  # "(file too large to persist)" and the like


def _batch_artifacts(recorded: str) -> list[str]:
    head, _, _ = recorded.partition("\n\n")
    if head.startswith("Tool output truncated. Persisted tool-output artifact: "):
        return [head.removeprefix("Tool output truncated. Persisted tool-output artifact: ")]
    if head.startswith("Tool output truncated. Persisted tool-output artifacts:\n"):
        return [line[2:] for line in head.split("\n")[1:] if line.startswith("- ")]
    return []


def _output_file(recorded: str) -> str | None:
    """The `.output` file Qwen named when it truncated this result (reused for the same cut in a replay)."""
    found = _SAVED_TO.search(recorded, 0, 4096)
    if found:
        return found.group(1)
    files = [f for f in _batch_artifacts(recorded) if f.endswith(".output")]
    return files[0] if files else None


def _shell_parts(text: str, recorded: str, from_output_file: bool) -> tuple[str | None, str]:
    """The shell's own output and the notices it appended after it (chunk-DPEB6S2R.js:48585–48640).

    The `.output` file holds the output alone; the recorded text (or a batch artifact) ends with the
    `Process Group PGID:` line and then the notices, each after a blank line."""
    tail_source = recorded if from_output_file else text
    start = tail_source.rfind(_PGID)
    if start < 0:
        return None, ""
    end = tail_source.find("\n", start + len(_PGID))
    notices = tail_source[end:] if end >= 0 else ""
    if notices and not notices.startswith("\n\n"):
        return None, ""
    if from_output_file:
        return text, notices
    return text[: len(text) - len(notices)], notices


def capped_by(canonical: str, text: str) -> str | None:
    if canonical == "read_file" and text.startswith("Showing lines "):
        return "read_file paging"
    if canonical == "grep_search" and text.endswith(" truncated] ...") and re.search(r"\[\d+ lines? truncated\] \.\.\.\Z", text[-64:]):
        return "grep caps"
    if canonical == "glob" and re.search(r"\n---\n\[(\d+ files? truncated\] \.\.\.|Results truncated)", text[-300:]):
        return "glob cap"
    return None


def _temp_dir(session: LoadedSession, sites: Iterable) -> tuple[str, str]:
    """Qwen's project temp folder for this session (`<QWEN_HOME>/tmp/<sha256(project)>`): read off a path the
    session names, else the session file's own place under `<QWEN_HOME>/projects/…/chats/`, else the
    QWEN_HOME doctor reads settings from."""
    for site in sites:
        if site.recorded.find("/tmp/", 0, 4096) < 0:
            continue  # the path's fixed part is absent: no need for the pattern, which costs far more than a find
        found = _TEMP_DIR.search(site.recorded, 0, 4096)
        if found:
            return found.group(1), "a path the session names"
    cwd = str(session.project_dir) if session.project_dir else ""
    digest = hashlib.sha256(cwd.encode()).hexdigest()
    path = session.path
    if path is not None and path.parent.name == "chats" and path.parents[2].name == "projects":
        return str(path.parents[3] / "tmp" / digest), "the session file's place under projects/"
    return str(qwen_home() / "tmp" / digest), "QWEN_HOME on this machine (the session names no spill path)"


def _error_types(session: LoadedSession) -> dict[str, str]:
    """callId -> errorType of the session's tool_result records (only read when a long error needs it)."""
    import json

    types: dict[str, str] = {}
    if session.path is None:
        return types
    with open(session.path, "rb") as handle:
        for line in handle:
            if b'"errorType"' not in line or b'"tool_result"' not in line:
                continue
            try:
                result = json.loads(line).get("toolCallResult") or {}
            except (ValueError, AttributeError):
                continue
            if isinstance(result, dict) and isinstance(result.get("callId"), str) and isinstance(result.get("errorType"), str):
                types[result["callId"]] = result["errorType"]
    return types


# --- the layers -----------------------------------------------------------------------------------------


@dataclass
class _Entry:
    """One result on its way through the layers: its text (UTF-16 units) and Qwen's `persistedOutputFiles`."""

    text: str | None
    files: list[str] | None = None
    why: str | None = None
    high: float = math.inf
    fixed: bool = False
    units: bool = True  # the text may hold surrogate pairs that `from_units` joins back (False: it has none)

    def add_files(self, files: list[str] | None) -> None:
        if files is not None:
            self.files = list(dict.fromkeys([*(self.files or []), *files]))


def replay(inputs: Sequence[ReplayInput], values: Mapping[str, float]) -> list[Outcome]:
    limits_ = limits(values)
    persisted = layers.PersistBudget()
    outcomes: list[Outcome] = []
    start = 0
    while start < len(inputs):
        end = start
        while end < len(inputs) and inputs[end].batch == inputs[start].batch:
            end += 1
        batch = inputs[start:end]
        entries = [_one_result(item, limits_, persisted) for item in batch]
        _batch_budget(batch, entries, limits_.batch_budget, persisted)
        outcomes.extend(_outcome(item, entry) for item, entry in zip(batch, entries))
        start = end
    return outcomes


def _outcome(item: ReplayInput, entry: _Entry) -> Outcome:
    if entry.text is None:
        return unknown(entry.why or "unknown", 0, entry.high, "unknown")
    if entry.fixed:
        return Outcome(item.recorded, sentinel_kind(item.recorded))
    text = from_units(entry.text) if entry.units else entry.text
    return Outcome(item.recorded if text == item.recorded else text, sentinel_kind(text))


def _one_result(item: ReplayInput, limits_: QwenLimits, persisted: layers.PersistBudget) -> _Entry:
    """Steps 1–3 for one result (the batch budget spans results)."""
    if item.facts.get("fixed"):
        return _Entry(item.recorded, fixed=True)
    if item.raw.text is None:
        return _Entry(None, why=item.raw.why, high=_ceiling(item, limits_))
    units = to_units(item.raw.text)
    try:
        entry = _layers(item, limits_, persisted, units)
    except qwen_tools.NotKept as exc:
        return _Entry(None, why=str(exc), high=_ceiling(item, limits_))
    entry.units = units is not item.raw.text or to_units(item.facts.get("notices", "")) is not item.facts.get("notices", "")
    return entry


def _layers(item: ReplayInput, limits_: QwenLimits, persisted: layers.PersistBudget, units: str) -> _Entry:
    canonical = item.facts["canonical"]
    entry = _Entry(_tool_output(item, limits_, units))
    if canonical == SHELL_TOOL:
        entry = _shell(item, limits_, entry.text)
        if item.field == "error":
            return entry  # the shell bounded it itself: no gate on the error path (`errorBodyAlreadyBounded`)
    elif item.field == "error":
        return _error_gate(item, limits_, entry, persisted)
    elif canonical not in layers.GATE_EXEMPT and entry.text and not layers.is_already_truncated(entry.text) \
            and len(entry.text) > limits_.threshold + layers.GATE_HEADROOM:
        stub, path = layers.persist_and_truncate(item.call_id or "", entry.text, f"{item.facts['temp_dir']}/tool-results",
                                                 persisted)
        entry = _Entry(stub)
        entry.add_files([path] if path else [])
    _scheduler_truncation(item, limits_, entry)
    return entry


def _tool_output(item: ReplayInput, limits_: QwenLimits, raw: str) -> str:
    """Step 1 for the tools that cut their own output by these settings (the shell's own cut is `_shell`)."""
    if item.field == "error":
        return raw
    canonical = item.facts["canonical"]
    if canonical == "read_file":
        path = item.args.get("file_path")
        if item.facts.get("media") or (isinstance(path, str) and _NOT_PAGED.search(path)):
            return raw  # not a text file: read_file does not page it
        return qwen_tools.read_file_under(raw, item.args, limits_.threshold, limits_.line_cap)
    if canonical == "grep_search":
        return qwen_tools.grep_under(raw, item.args, limits_.threshold, limits_.line_cap)
    if canonical == "glob":
        return qwen_tools.glob_under(raw, item.args, limits_.line_cap)
    return raw


def _shell(item: ReplayInput, limits_: QwenLimits, body: str) -> _Entry:
    """The shell's own budget (chunk-DPEB6S2R.js:48585–48640): head and tail kept, notices appended after."""
    notices = to_units(item.facts.get("notices", ""))
    budget = layers.shell_body_budget(limits_.shell_budget, len(notices))
    text, output_file = layers.truncate_tool_output(body, _output_path(item, SHELL_TOOL), budget, math.inf, "both",
                                                    min(layers.SHELL_PREVIEW_CHARS, budget))
    entry = _Entry(text + notices)
    entry.add_files([output_file] if output_file else ([] if text != body else None))
    return entry


def _error_gate(item: ReplayInput, limits_: QwenLimits, entry: _Entry, persisted: layers.PersistBudget) -> _Entry:
    """An execution error's message is persisted like a result over the gate (chunk-DPEB6S2R.js:61200–61215)."""
    message = entry.text
    if item.facts["canonical"] == "exec" or len(message) <= limits_.threshold + layers.GATE_HEADROOM \
            or layers.is_already_truncated(message):
        return entry
    error_type = item.facts.get("error_type")
    if error_type in PRE_EXECUTION_ERRORS or (error_type == "invalid_tool_params" and item.facts["canonical"] != "read_file"):
        return entry  # refused before the tool ran: never gated
    if error_type is None or error_type == "invalid_tool_params":
        return _Entry(None, why="whether Qwen gated this error depends on where it arose, which the session does "
                                "not say", high=_ceiling(item, limits_))
    stub, path = layers.persist_and_truncate(item.call_id or "", message, f"{item.facts['temp_dir']}/tool-results",
                                             persisted)
    gated = _Entry(stub)
    gated.add_files([path] if path else [])
    return gated


def _scheduler_truncation(item: ReplayInput, limits_: QwenLimits, entry: _Entry) -> None:
    """`truncateLlmContent` with the tool's limits (`qwen_layers.truncate_llm_content`)."""
    cut, output_file = layers.truncate_llm_content(item.tool, item.facts["canonical"], entry.text, limits_,
                                                   _output_path(item, item.tool))
    if cut != entry.text:
        entry.text = cut
        entry.add_files([output_file] if output_file else [])


def _output_path(item: ReplayInput, tool_name: str) -> str:
    """Where Qwen would save the full output of this cut: the session's own file for this result when it
    has one (the 12 hex digits are random; the length is what counts), else one of the same length."""
    recorded = item.facts.get("output_file")
    if recorded:
        return recorded
    return f"{item.facts['temp_dir']}/{tool_name.rsplit('/', 1)[-1]}_{'0' * 12}.output"


def _batch_budget(batch: Sequence[ReplayInput], entries: list[_Entry], budget: float,
                  persisted: layers.PersistBudget) -> None:
    """`finalizeToolResponses` (chunk-DPEB6S2R.js:14009–14140) over one turn's results."""
    if not math.isfinite(budget) or budget <= 0:
        return
    slots = [i for i, (item, entry) in enumerate(zip(batch, entries))
             if item.field == "error" or entry.text is None or entry.text != ""]
    unknown_slots = [i for i in slots if entries[i].text is None]
    lengths_low = {i: (0 if entries[i].text is None else len(entries[i].text)) for i in slots}
    lengths_high = {i: (entries[i].high if entries[i].text is None else len(entries[i].text)) for i in slots}
    if unknown_slots and sum(lengths_high.values()) > budget:
        low = layers.allocate_text_budget([lengths_low[i] for i in slots], budget)
        high_lengths = [min(lengths_high[i], 2 * budget + 1) for i in slots]
        high = layers.allocate_text_budget(high_lengths, budget)
        for position, i in enumerate(slots):
            if entries[i].text is not None and low[position] != high[position]:
                entries[i] = _Entry(None, why="its turn's batch budget depends on a result whose size is unknown",
                                    high=max(low[position], high[position]))
        return _batch_cut(batch, entries, slots, [lengths_low[i] for i in slots], low, persisted)
    if sum(lengths_low[i] for i in slots) <= budget:
        return
    allocations = layers.allocate_text_budget([lengths_low[i] for i in slots], budget)
    _batch_cut(batch, entries, slots, [lengths_low[i] for i in slots], allocations, persisted)


def _batch_cut(batch, entries, slots, lengths, allocations, persisted) -> None:
    over = [(i, allocation) for i, length, allocation in zip(slots, lengths, allocations)
            if entries[i].text is not None and length > allocation]
    counts: dict[str, int] = {}
    normalized = [layers.normalize_call_id(item.call_id or "") for item in batch]
    for call_id in normalized:
        if call_id:
            counts[call_id] = counts.get(call_id, 0) + 1
    reserved = {call_id for call_id in normalized if call_id}
    used: set[str] = set()
    for i, allocation in over:
        entry, item = entries[i], batch[i]
        if entry.files is None:
            persistence_id = item.call_id or ""
            call_id = normalized[i]
            if call_id:
                if counts[call_id] == 1 and call_id not in used:
                    persistence_id = call_id
                else:
                    suffix = 1
                    while f"{call_id}-{suffix}" in reserved or f"{call_id}-{suffix}" in used:
                        suffix += 1
                    persistence_id = f"{call_id}-{suffix}"
                used.add(persistence_id)
            _, path = layers.persist_and_truncate(persistence_id, entry.text, f"{item.facts['temp_dir']}/tool-results",
                                                  persisted)
            entry.files = [path] if path else []
        entry.text = layers.fit_text(entry.text, allocation, entry.files)


def _ceiling(item: ReplayInput, limits_: QwenLimits) -> float:
    """The most this result could put into the context under these limits (the range of an unknown)."""
    canonical = item.facts.get("canonical", item.tool)
    room = _HEADER_ROOM + len(item.facts.get("temp_dir", ""))
    if canonical == SHELL_TOOL:
        tool_cap = limits_.shell_budget + room + js_len(item.facts.get("notices", ""))
    elif canonical == "read_file":
        tool_cap = limits_.threshold + room
    else:
        own = layers.max_output_chars(canonical, limits_)
        tool_cap = (limits_.threshold if own is None else own) + room
        if canonical not in layers.GATE_EXEMPT and math.isfinite(limits_.threshold):
            tool_cap = min(tool_cap, max(limits_.threshold + layers.GATE_HEADROOM, layers.PREVIEW_SIZE_CHARS + room))
    return min(tool_cap, limits_.batch_budget)


# --- what sets each tool's budget (for --recommend) ---------------------------------------------------


def budget_key(tool: str) -> tuple[str | None, str]:
    """The key that sets this tool's budget, and a note in Qwen's terms (None: the client fixes it)."""
    canonical = canonical_tool_name(tool)
    if canonical == SHELL_TOOL:
        return THRESHOLD, "the shell's budget follows the threshold once it is set (30,000 until then)"
    if canonical == "read_file":
        return THRESHOLD, "read_file pages at the threshold (and at truncateToolOutputLines lines)"
    own = layers.max_output_chars(canonical, QwenLimits())
    if own is not None:
        return None, f"{tool}'s budget ({'none' if math.isinf(own) else f'{own:,.0f}'} chars) is fixed in {CLIENT} {VERSION}"
    return THRESHOLD, "shared: one threshold sets every tool without a budget of its own"


def budget_for(item: ReplayInput) -> tuple[float, bool] | None:
    """The smallest threshold that keeps this result whole, and whether that is only a lower bound."""
    if item.raw.text is None or item.field == "error" or item.facts.get("fixed"):
        return None
    size = js_len(item.raw.text)
    if item.facts.get("canonical") == SHELL_TOOL:
        size += js_len(item.facts.get("notices", ""))  # the shell keeps room for its notices
    return size, item.raw.capped_by is not None
