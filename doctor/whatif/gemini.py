"""Gemini CLI 0.61.0 replayed under other limits (see docs/formats.md, "Replay rules: Gemini CLI").

Two layers, in the CLI's order: the truncation threshold (`tools.truncateToolOutputThreshold`, capped
by 4 × the tokens left in the context window) on each shell or one-text MCP output as it returns, then
output masking on the history before every request (`gemini_masking`). The raw output is the session's
text when the CLI kept it whole, the truncation file it names when it was cut, and the masking file it
names when it was masked.
"""

from __future__ import annotations

import json
import math
import posixpath
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from msgspec import structs

from doctor.assemble import ReportOptions
from doctor.core.agent_rules import gemini as rules
from doctor.core.jsvalues import js_len
from doctor.core.sentinels import IN_TOOL_TRUNCATION, NONE, sentinel_kind
from doctor.sources.base import LoadedSession
from doctor.sources.jsonl import loads
from doctor.whatif import gemini_masking as masking
from doctor.whatif.gemini_masking import MIN_PRUNABLE, PROTECT_LATEST, PROTECTION
from doctor.whatif.model import FROM_SESSION, FROM_SPILL, UNKNOWN, Outcome, RawOutput, ReplayInput, SessionSettings, \
    SettingKey, unknown
from doctor.whatif.records import merged_settings, recorded_settings, remember_recorded_settings, session_records
from doctor.whatif.utf16 import js_head, js_tail

CLIENT = "Gemini CLI"
VERSION = "0.61.0"
THRESHOLD = "tools.truncateToolOutputThreshold"
DEFAULT_THRESHOLD = rules.TRUNCATE_THRESHOLD
TOKEN_LIMIT = 1_048_576  # tokenLimit(): every Gemini model, and DEFAULT_TOKEN_LIMIT
GEMMA_TOKEN_LIMIT = 256_000  # GEMMA_4_TOKEN_LIMIT
GEMMA_MODELS = frozenset({"gemma-4-31b-it", "gemma-4-26b-a4b-it"})
NOTICE = re.compile(r"Output too large\. Showing first ([\d,]+) and last ([\d,]+) characters\. "
                    r"For full output see: (.*)\n")
TOOL_OUTPUTS = "tool-outputs"
LEGACY_DOCUMENT_MAX_BYTES = 256 * 1024 * 1024


def _number(text: str) -> float:
    value = float(text.strip().replace("_", ""))
    if value != value:
        raise ValueError("a number")
    return value


def _count(text: str) -> float:
    value = _number(text)
    if value < 0:
        raise ValueError("a number of tokens, 0 or more")
    return value


def _flag(text: str) -> float:
    word = text.strip().lower()
    if word not in ("true", "false"):
        raise ValueError("true or false")
    return 1.0 if word == "true" else 0.0


KEYS = (
    SettingKey(THRESHOLD, DEFAULT_THRESHOLD, _number, "settings.json (~/.gemini, <project>/.gemini, system)",
               "chars a shell or one-text MCP output may keep (0 or less: no truncation)"),
    SettingKey(PROTECTION, rules.MASKING_PROTECTION_TOKENS, _count, "settings.json",
               "estimated tokens of the newest tool output that output masking never touches"),
    SettingKey(MIN_PRUNABLE, rules.MASKING_MIN_PRUNABLE_TOKENS, _count, "settings.json",
               "estimated tokens of older tool output needed before output masking acts"),
    SettingKey(PROTECT_LATEST, 1.0, _flag, "settings.json", "output masking leaves the latest turn alone (true/false)"),
)
KEY_NAMES = tuple(key.name for key in KEYS)


def session_settings(session: LoadedSession, options: ReportOptions) -> SessionSettings:
    """The keys set in the files Gemini CLI merges (system defaults, user, project, system), then doctor's."""
    merged, used, _ = merged_settings(session, options, rules.settings_files)
    values: dict[str, float] = {}
    for name in KEY_NAMES:
        value = _dotted(merged, name)
        if isinstance(value, bool):
            values[name] = 1.0 if value else 0.0
        elif isinstance(value, (int, float)):
            values[name] = float(value)
    if options.threshold is not None:
        values[THRESHOLD] = options.threshold
    remember_recorded_settings(session, values)
    return SessionSettings(values, tuple(used))


def _dotted(mapping: Mapping, name: str) -> object:
    value: object = mapping
    for part in name.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def replay_inputs(session: LoadedSession, sites: Sequence, spill) -> list[ReplayInput]:
    prompts = _prompt_tokens(session)
    recorded_under = recorded_settings(session)
    folder = _tool_outputs_folder(session, sites)
    inputs = []
    for site in sites:
        facts = {"prompt_tokens": prompts.get(site.call_id), "token_limit": _token_limit(prompts.get(("model", site.call_id))),
                 "folder": folder, "session_id": session.session_id or "", "content_index": site.content_index,
                 "recorded_under": recorded_under}
        raw, premask = _raw(site.recorded, spill)
        if premask is not None:
            facts["premask"] = premask
        inputs.append(ReplayInput(site.ordinal, site.call_id, site.tool, site.batch, site.field, site.recorded,
                                  raw, site.args, facts))
    return inputs


def _token_limit(model: object) -> int:
    return GEMMA_TOKEN_LIMIT if model in GEMMA_MODELS else TOKEN_LIMIT


def _raw(recorded: str, spill) -> tuple[RawOutput, str | None]:
    """The output before the truncation layer (the session's text, or the file a notice names), and for
    a masked result the text masking replaced (its file's `output`)."""
    text, source, path, premask = recorded, FROM_SESSION, None, None
    if recorded.startswith(masking.OPEN_TAG):
        path = masking.masked_file(recorded)
        if path is None:
            return RawOutput(None, UNKNOWN, why="its masking notice names no file"), None
        saved, why = spill.read(path)
        if saved is None:
            return RawOutput(None, UNKNOWN, path, why), None
        premask = _saved_output(saved)
        if premask is None:
            return RawOutput(None, UNKNOWN, path, "its masking file does not hold the response's output"), None
        text, source = premask, FROM_SPILL
    notice = NOTICE.match(text)
    if notice is not None:
        path = notice.group(3)
        saved, why = spill.read(path)
        if saved is None:
            return RawOutput(None, UNKNOWN, path, why), premask
        head, tail = (int(group.replace(",", "")) for group in notice.group(1, 2))
        if not _consistent(text, saved, head, tail):
            return RawOutput(None, UNKNOWN, path, "its truncation file is not the output the notice cut"), premask
        return RawOutput(saved, FROM_SPILL, path), premask
    return RawOutput(text, source, path), premask


def _saved_output(saved: str) -> str | None:
    try:
        response = json.loads(saved)
    except ValueError:
        return None
    output = response.get("output") if isinstance(response, dict) else None
    return output if isinstance(output, str) else None


def _consistent(notice_text: str, saved: str, head: int, tail: int) -> bool:
    """The saved file is what the notice cut: same length left out, same head and tail."""
    omitted = re.search(r"\n\n\.\.\. \[([\d,]+) characters omitted\] \.\.\.\n\n", notice_text)
    return (omitted is not None and int(omitted.group(1).replace(",", "")) == js_len(saved) - head - tail
            and notice_text.endswith(js_tail(saved, tail)))


def _prompt_tokens(session: LoadedSession) -> dict:
    """Per call id: the prompt token count of the response that asked for it (`tokens.input` of the
    `gemini` message holding the call: `lastPromptTokenCount` when the call ran), and that message's model."""
    found: dict = {}
    for record in _messages(session):
        calls = record.get("toolCalls") if record.get("type") == "gemini" else None
        tokens = record.get("tokens")
        if not isinstance(calls, list) or not isinstance(tokens, dict):
            continue
        for call in calls:
            if isinstance(call, dict) and isinstance(call.get("id"), str) and isinstance(tokens.get("input"), int):
                found[call["id"]] = tokens["input"]
                found[("model", call["id"])] = record.get("model")
    return found


def _messages(session: LoadedSession):
    if session.path is not None and session.path.suffix == ".json":
        yield from _document_messages(session.path)
        return
    for record in session_records(session, b'"tokens"'):
        if isinstance(record.get("$set"), dict) and isinstance(record["$set"].get("messages"), list):
            yield from (m for m in record["$set"]["messages"] if isinstance(m, dict))
        elif isinstance(record.get("messages"), list):
            yield from (m for m in record["messages"] if isinstance(m, dict))
        else:
            yield record


def _document_messages(path: Path):
    """The messages of a legacy single-document session (read whole, as the CLI does; capped)."""
    try:
        if path.stat().st_size > LEGACY_DOCUMENT_MAX_BYTES:
            return
        document = loads(path.read_bytes())
    except (OSError, ValueError):
        return
    messages = document.get("messages") if isinstance(document, dict) else None
    yield from (m for m in messages if isinstance(m, dict)) if isinstance(messages, list) else ()


def _tool_outputs_folder(session: LoadedSession, sites: Sequence) -> str:
    """`<project temp>/tool-outputs` as the CLI wrote it: from a path a notice in the session names, else
    beside the session's `chats/` folder (a session moved since then gives another length)."""
    for site in sites:
        for text in (site.recorded, ):
            notice = NOTICE.match(text)
            path = notice.group(3) if notice else masking.masked_file(text) if text.startswith(masking.OPEN_TAG) else None
            if path and f"/{TOOL_OUTPUTS}/" in path:
                return path[:path.index(f"/{TOOL_OUTPUTS}/") + len(TOOL_OUTPUTS) + 1]
    if session.path is not None:
        return posixpath.join(str(session.path.parent.parent), TOOL_OUTPUTS)
    return TOOL_OUTPUTS


def _sanitize(part: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", part)


def truncation_file(folder: str, session_id: str, tool: str, call_id: str) -> str:
    """`saveTruncatedToolOutput`'s path for this call."""
    safe_tool, safe_id = _sanitize(tool).lower(), _sanitize(call_id).lower()
    name = f"{safe_id}.txt" if safe_id.startswith(safe_tool) else f"{safe_tool}_{safe_id}.txt"
    return posixpath.join(folder, f"session-{_sanitize(session_id)}", name)


def format_truncated(content: str, output_file: str, max_chars: int) -> str:
    """`formatTruncatedToolOutput`."""
    if js_len(content) <= max_chars:
        return content
    head_chars = math.floor(max_chars * 0.2)
    tail_chars = max_chars - head_chars
    omitted = js_len(content) - head_chars - tail_chars
    return (f"Output too large. Showing first {head_chars:,} and last {tail_chars:,} characters. For full output "
            f"see: {output_file}\n{js_head(content, head_chars)}\n\n... [{omitted:,} characters omitted] ...\n\n"
            f"{js_tail(content, tail_chars)}")


def truncates(tool: str) -> bool:
    """The tools the truncation layer cuts: the shell, and MCP tools (a one-text result)."""
    return tool == rules.SHELL_TOOL or rules.is_mcp_tool(tool)


def replay(inputs: Sequence[ReplayInput], settings: Mapping[str, float]) -> list[Outcome]:
    threshold = settings.get(THRESHOLD, DEFAULT_THRESHOLD)
    truncated: list[Outcome] = []
    growth = 0.0  # an upper bound on how many more prompt tokens the replayed history holds so far
    for one in inputs:
        outcome = _truncate_one(one, threshold, growth)
        truncated.append(outcome)
        if outcome.text is None:
            growth = math.inf if not math.isfinite(outcome.high) else growth + 3 * outcome.high
        elif outcome.text != one.recorded:
            growth += len(outcome.text.encode("utf-8", "surrogatepass"))
    return masking.mask(inputs, truncated, masking.Config.from_settings(settings))


def _truncate_one(one: ReplayInput, threshold: float, growth: float) -> Outcome:
    raw = one.raw.text
    if not truncates(one.tool) or one.field != "output":
        if raw is None:
            return unknown(one.raw.why or "the session does not keep it")
        return Outcome(raw, NONE)
    if raw is None:
        recorded_under = one.facts.get("recorded_under")
        if isinstance(recorded_under, dict) and recorded_under.get(THRESHOLD, DEFAULT_THRESHOLD) == threshold \
                and not one.recorded.startswith(masking.OPEN_TAG):
            return Outcome(one.recorded, sentinel_kind(one.recorded))
        return unknown(one.raw.why or "the session does not keep it")
    size = js_len(raw)
    prompt = one.facts.get("prompt_tokens")
    limit = one.facts.get("token_limit", TOKEN_LIMIT)
    wanted = size if threshold <= 0 else min(size, threshold)
    if not isinstance(prompt, int):
        cap_low = -math.inf
    else:
        cap_low = 4 * (limit - prompt - growth)
    if threshold > 0 and wanted <= cap_low:
        effective = threshold
    elif threshold <= 0 and size <= cap_low:
        return Outcome(raw, NONE)
    else:
        why = ("the session does not say how full the context was when it ran" if not isinstance(prompt, int) else
               "the context window left (4 × tokens) may have cut it below the threshold")
        path = truncation_file(one.facts["folder"], one.facts["session_id"], one.tool, one.call_id or "")
        return unknown(why, high=js_len(raw if threshold <= 0 else format_truncated(raw, path, int(threshold))))
    if size <= effective:
        return Outcome(raw, NONE)
    path = truncation_file(one.facts["folder"], one.facts["session_id"], one.tool, one.call_id or "")
    return Outcome(format_truncated(raw, path, int(effective)), IN_TOOL_TRUNCATION)


def after_options(settings: SessionSettings, session: LoadedSession, options: ReportOptions) -> ReportOptions:
    """Gemini's rules judge the replayed session by the replayed threshold (doctor's `--threshold`)."""
    return structs.replace(options, threshold=settings.values.get(THRESHOLD, DEFAULT_THRESHOLD))



def budget_key(tool: str) -> tuple[str | None, str]:
    """The key that sets this tool's budget, in Gemini CLI's terms (None: the CLI does not cut it)."""
    if truncates(tool):
        return THRESHOLD, "shell and one-text MCP output are cut past it (and past 4 × the tokens left in the window)"
    return None, f"{CLIENT} {VERSION} does not cut {tool}'s output; only output masking bounds it, later"


def budget_for(item: ReplayInput) -> tuple[float, bool] | None:
    """The smallest threshold that keeps this result whole: its length."""
    if not truncates(item.tool) or item.raw.text is None or item.field != "output":
        return None
    return js_len(item.raw.text), False
