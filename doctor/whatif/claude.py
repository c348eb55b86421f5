"""Claude Code 2.1.332 replayed under other limits (see docs/formats.md, "Replay rules: Claude Code").

Bash's layers, in Claude's order: its own gate on the output file's UTF-8 bytes (`Q1()`: the clamped
`bashOutputMaxChars`, else `BASH_MAX_OUTPUT_LENGTH`), then the general persistence layer on the result's
chars (`bashOutputMaxChars`, else 30,000). MCP results meet `MAX_MCP_OUTPUT_TOKENS` (decided by the API's
`count_tokens` between its sure bounds) and then the general layer at 50,000 chars; Read's token limit is
counted by the API too. What the API decided is replayed only where the session's own outcome decides it.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Mapping, Sequence

from msgspec import structs

from doctor.assemble import ReportOptions
from doctor.core.agent_rules import claude as rules
from doctor.core.agent_rules.model import positive_int
from doctor.core.budgets import is_mcp_tool_name
from doctor.core.jsvalues import js_len
from doctor.core.sentinels import NONE, PERSISTED_STUB, sentinel_kind
from doctor.sources.base import LoadedSession
from doctor.whatif import claude_layers as layers
from doctor.whatif.jsstring import js_round
from doctor.whatif.model import FROM_SESSION, FROM_SPILL, UNKNOWN, Outcome, RawOutput, ReplayInput, SessionSettings, \
    SettingKey, unknown
from doctor.whatif.records import merged_settings, recorded_settings, remember_recorded_settings, session_records

CLIENT = "Claude Code"
VERSION = "2.1.332"
BASH_MAX = "bashOutputMaxChars"
READ_BACK = "BASH_MAX_OUTPUT_LENGTH"
MCP_TOKENS = "MAX_MCP_OUTPUT_TOKENS"
READ_TOKENS = "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS"
ENV_KEYS = (READ_BACK, MCP_TOKENS, READ_TOKENS)
BASH_TOOLS = frozenset({"Bash", "PowerShell"})
MCP_GATE_CHARS = 50_000  # l3(mcp tool, 1e5, 50000)
MCP_SAVED = re.compile(r"Error: result \(([\d,]+) characters(?: across [\d,]+ lines?)?\) exceeds maximum allowed "
                       r"tokens\. Output has been saved to (.*?)\.\n")
MARKS = ("persisted-output>", "truncated-output>")  # tags Claude rewrites inside a preview
READ_REFUSED = re.compile(r"File content \([\d.]+KB\) exceeds maximum allowed size \(\d+KB\)")


def _positive(text: str) -> float:
    value = positive_int(text.strip())
    if value is None:
        raise ValueError("a positive whole number")
    return value


KEYS = (
    SettingKey(BASH_MAX, None, _positive, "settings.json (~/.claude, <project>/.claude, settings.local.json)",
               "chars of a Bash output kept inline, clamped to 4,000–128,000 (also the bytes Bash reads back)"),
    SettingKey(READ_BACK, layers.BASH_DEFAULT, _positive, "environment, or the `env` block of settings.json",
               "bytes of a Bash output read back (capped at 150,000); ignored when bashOutputMaxChars is set"),
    SettingKey(MCP_TOKENS, rules.MCP_MAX_TOKENS, _positive, "environment, or the `env` block of settings.json",
               "tokens an MCP result may hold before it is saved to a file"),
    SettingKey(READ_TOKENS, rules.READ_MAX_TOKENS, _positive, "environment, or the `env` block of settings.json",
               "tokens of a file the Read tool returns"),
)


def session_settings(session: LoadedSession, options: ReportOptions) -> SessionSettings:
    """The keys set where Claude Code reads them: its settings files (later wins; their `env` block counts
    as the environment, which Claude copies it into at start) and the environment doctor runs in."""
    merged, used, env = merged_settings(session, options, rules.settings_files)
    values: dict[str, float] = {}
    bash = merged.get(BASH_MAX)
    if isinstance(bash, int) and not isinstance(bash, bool) and bash > 0:  # zod: int().positive(), else unset
        values[BASH_MAX] = bash
    settings_env = merged.get("env") if isinstance(merged.get("env"), Mapping) else {}
    for name in ENV_KEYS:
        value = settings_env.get(name, env.get(name))
        number = positive_int(value) if value is not None else None
        if number is not None:
            values[name] = number
    remember_recorded_settings(session, values)
    return SessionSettings(values, tuple(used))


def replay_inputs(session: LoadedSession, sites: Sequence, spill) -> list[ReplayInput]:
    results = _tool_use_results(session)
    folder = _tool_results_folder(session, sites)
    recorded_under = recorded_settings(session)
    inputs = []
    for site in sites:
        facts = {"folder": folder, **results.get(site.call_id, {})}
        if isinstance(recorded_under, dict):
            facts["recorded_under"] = recorded_under
        raw = _raw(site, facts, spill)
        inputs.append(ReplayInput(site.ordinal, site.call_id, site.tool, site.batch, site.field, site.recorded,
                                  raw, site.args, facts))
    return inputs


def _tool_use_results(session: LoadedSession) -> dict:
    """Per tool_use id, what the session says of its result beyond the text: the Bash output's saved size
    and path, whether it was interrupted or backgrounded, whether Read cut it to its token limit."""
    found: dict = {}
    for record in session_records(session, b'"tool_result"'):
        message = record.get("message") if record.get("type") == "user" else None
        blocks = message.get("content") if isinstance(message, dict) else None
        if not isinstance(blocks, list):
            continue
        result = record.get("toolUseResult")
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                facts = {"is_error": block.get("is_error") is True}
                if isinstance(result, dict):
                    for key in ("persistedOutputPath", "persistedOutputSize", "interrupted", "backgroundTaskId"):
                        if result.get(key) not in (None, False, ""):
                            facts[key] = result[key]
                    file = result.get("file")
                    if isinstance(file, dict) and file.get("truncatedByTokenCap"):
                        facts["read_cut"] = True
                found[block["tool_use_id"]] = facts
    return found


def _tool_results_folder(session: LoadedSession, sites: Sequence) -> str:
    """The session's `tool-results/` folder as Claude wrote it: from a stub in the session, else beside the
    session file (`<session id>/tool-results`)."""
    for site in sites:
        found = layers.SIZE_RE.search(site.recorded[:4096]) if site.recorded.startswith(layers.PERSISTED_OPEN) else None
        path = found.group(2) if found else None
        if path is None and site.recorded.startswith("Error: result ("):
            saved = MCP_SAVED.match(site.recorded)
            path = saved.group(2) if saved else None
        if path and "/tool-results/" in path:
            return path[:path.rindex("/tool-results/") + len("/tool-results")]
    if session.path is not None:
        return posixpath.join(str(session.path.with_suffix("")), "tool-results")
    return "tool-results"


def _raw(site, facts: dict, spill) -> RawOutput:
    """The output before the replayed layers: the session's text, or the file a stub names."""
    text = site.recorded
    if any(mark in text for mark in MARKS) and not text.startswith(layers.PERSISTED_OPEN):
        return RawOutput(None, UNKNOWN, why="the output holds Claude's own stub tags, which it rewrites in a preview")
    if text.startswith(layers.PERSISTED_OPEN):
        found = layers.SIZE_RE.search(text[:4096])
        if found is None:
            return RawOutput(None, UNKNOWN, why="its <persisted-output> stub names no file")
        path = found.group(2)
        saved, why = spill.read(path)
        if saved is None:
            return RawOutput(None, UNKNOWN, path, why)
        facts["saved_by"] = "bash" if facts.get("persistedOutputPath") == path else "general"
        return RawOutput(saved, FROM_SPILL, path)
    saved = MCP_SAVED.match(text)
    if saved is not None:
        saved_text, why = spill.read(saved.group(2))
        facts["mcp_saved"] = True
        return RawOutput(saved_text, FROM_SPILL if saved_text is not None else UNKNOWN, saved.group(2), why)
    if site.field == "error" or facts.get("is_error"):
        return RawOutput(None, UNKNOWN, why="the command failed: Claude records only its error text")
    return RawOutput(text, FROM_SESSION)


def replay(inputs: Sequence[ReplayInput], settings: Mapping[str, float]) -> list[Outcome]:
    return [_replay_one(one, settings) for one in inputs]


def _replay_one(one: ReplayInput, settings: Mapping[str, float]) -> Outcome:
    if one.tool in BASH_TOOLS:
        return _bash(one, settings)
    if is_mcp_tool_name(one.tool):
        return _mcp(one, settings)
    if one.tool == "Read":
        return _read(one, settings)
    # Every other built-in tool meets only the general layer at its own fixed threshold: no key moves it.
    return Outcome(one.recorded, sentinel_kind(one.recorded))


def _bash(one: ReplayInput, settings: Mapping[str, float]) -> Outcome:
    read_back = layers.read_back_bytes(settings.get(BASH_MAX), settings.get(READ_BACK))
    inline = layers.bash_inline_chars(settings.get(BASH_MAX))
    if _as_recorded(one, settings, (BASH_MAX, READ_BACK)):
        return Outcome(one.recorded, sentinel_kind(one.recorded))
    if one.facts.get("interrupted") or one.facts.get("backgroundTaskId"):
        return unknown("the command was interrupted or moved to the background: not replayed")
    if one.raw.text is None:
        return unknown(one.raw.why or "the session does not keep the output")
    found = _output_file(one, read_back)
    if isinstance(found, Outcome):
        return found
    output, size = found
    if size > read_back:
        capped = layers.PERSIST_BYTES if size >= layers.PERSIST_BYTES else None
        shown = layers.tool_text(layers.utf8_head(output.encode("utf-8", "surrogatepass"), read_back))
        path = posixpath.join(one.facts["folder"], _bash_file_name(one))
        return Outcome(layers.stub(path, size, shown, capped), PERSISTED_STUB)
    content = layers.tool_text(output)
    if not content:
        return Outcome(f"({one.tool} completed with no output)", NONE)
    if js_len(content) > inline:
        path = posixpath.join(one.facts["folder"], f"{one.call_id}.txt")
        return Outcome(layers.stub(path, js_len(content), layers.utf8_cap(content, layers.GENERAL_PERSIST_BYTES)),
                       PERSISTED_STUB)
    return Outcome(content, NONE)


def _output_file(one: ReplayInput, read_back: int) -> tuple[str, int] | Outcome:
    """The command's output file, as far as it matters here: its text and its size in bytes.

    Bash's own copy is that file (up to 64 MiB; `persistedOutputSize` is its whole size). Otherwise the
    session holds what the tool returned, trimmed: the file had those bytes and the newline the last line
    ended with, unless the session's own read-back limit shows it was no longer than the text."""
    raw = one.raw.text
    kept = len(raw.encode("utf-8", "surrogatepass"))
    if one.facts.get("saved_by") == "bash":
        size = one.facts.get("persistedOutputSize")
        size = size if isinstance(size, int) and size >= kept else kept
        if size > kept and size <= read_back:
            return unknown("Claude kept only the first 64 MiB of the output")
        return raw, size
    if not raw:
        return "", 0
    recorded_read_back = _recorded_read_back(one)
    if one.facts.get("saved_by") is None and recorded_read_back is not None and kept + 1 > recorded_read_back:
        return raw, kept  # Bash kept it whole, so its file was no longer than the text: no final newline
    if read_back == kept:
        return unknown("whether Bash saved it turns on the output's final newline, which Claude trims",
                       high=js_len(raw))
    return raw + "\n", kept + 1


def _as_recorded(one: ReplayInput, settings: Mapping[str, float], keys: tuple[str, ...]) -> bool:
    """The result's raw output is not kept, but the limits that bear on it are the session's own."""
    recorded_under = one.facts.get("recorded_under")
    return one.raw.text is None and isinstance(recorded_under, dict) \
        and all(settings.get(key) == recorded_under.get(key) for key in keys)


def _recorded_read_back(one: ReplayInput) -> int | None:
    recorded_under = one.facts.get("recorded_under")
    if not isinstance(recorded_under, dict):
        return None
    return layers.read_back_bytes(recorded_under.get(BASH_MAX), recorded_under.get(READ_BACK))


def _bash_file_name(one: ReplayInput) -> str:
    """Bash names its copy after the task (a random 9-char id): the session's own name for this result when
    it has one, else any 9 chars (only the length reaches the model)."""
    saved = one.facts.get("persistedOutputPath")
    return posixpath.basename(saved) if isinstance(saved, str) else "b" * 9 + ".txt"


def _mcp(one: ReplayInput, settings: Mapping[str, float]) -> Outcome:
    limit = settings.get(MCP_TOKENS, rules.MCP_MAX_TOKENS)
    recorded_under = one.facts.get("recorded_under")
    recorded_limit = recorded_under.get(MCP_TOKENS, rules.MCP_MAX_TOKENS) if isinstance(recorded_under, dict) else None
    saved = bool(one.facts.get("mcp_saved"))
    if _as_recorded(one, settings, (MCP_TOKENS, READ_TOKENS)):
        return Outcome(one.recorded, sentinel_kind(one.recorded))
    if one.raw.text is None:
        return unknown(one.raw.why or "the session does not keep the result")
    estimate = js_round(js_len(one.raw.text) / 4)  # `C()`: Math.round(length / 4)
    if estimate <= limit * 0.5:
        passes = True
    elif estimate > limit * 4:
        passes = False
    elif recorded_limit is not None and not saved and limit >= recorded_limit:
        passes = True
    elif recorded_limit is not None and saved and limit <= recorded_limit:
        passes = False
    else:
        return unknown("Claude asks the API's count_tokens whether it fits MAX_MCP_OUTPUT_TOKENS",
                       high=max(js_len(one.recorded), len(_mcp_passed(one))) if saved else math.inf)
    if passes != (not saved):
        if passes and not saved:
            return Outcome(one.recorded, sentinel_kind(one.recorded))
        return unknown("its saved-file notice depends on the output's shape; not replayed")
    if not passes:
        same_read = isinstance(recorded_under, dict) and settings.get(READ_TOKENS) == recorded_under.get(READ_TOKENS)
        return Outcome(one.recorded, PERSISTED_STUB) if same_read else \
            unknown("its saved-file notice quotes the Read limit, which may have changed")
    return Outcome(_mcp_passed(one), PERSISTED_STUB if js_len(one.raw.text) > MCP_GATE_CHARS else NONE)


def _mcp_passed(one: ReplayInput) -> str:
    """An MCP result that passed the token check, after the general layer (50,000 chars)."""
    text = one.raw.text
    if js_len(text) > MCP_GATE_CHARS:
        return layers.stub(posixpath.join(one.facts["folder"], f"{one.call_id}.txt"), js_len(text), text)
    return text


def _read(one: ReplayInput, settings: Mapping[str, float]) -> Outcome:
    if READ_REFUSED.match(one.recorded):
        return Outcome(one.recorded, NONE)  # refused by its byte cap (256 KB), whatever the token limit
    limit = settings.get(READ_TOKENS, rules.READ_MAX_TOKENS)
    recorded_under = one.facts.get("recorded_under")
    if not isinstance(recorded_under, dict):
        return unknown("the session's own Read limit is not known here")
    recorded = recorded_under.get(READ_TOKENS, rules.READ_MAX_TOKENS)
    if limit == recorded or (limit > recorded and not one.facts.get("read_cut") and one.field == "output"):
        return Outcome(one.recorded, sentinel_kind(one.recorded))
    size = js_len(one.recorded)
    return unknown("Claude counts a Read's tokens with the API's count_tokens; not replayed under another limit",
                   low=size if limit > recorded else 0, high=size if limit < recorded else math.inf)


def after_options(settings: SessionSettings, session: LoadedSession, options: ReportOptions) -> ReportOptions:
    """Claude's rules judge the replayed session by the replayed Bash inline limit and token limits."""
    values = settings.values
    budgets = {"Bash": float(layers.bash_inline_chars(values.get(BASH_MAX))),
               "Read": float(values.get(READ_TOKENS, rules.READ_MAX_TOKENS) * 4)}
    return structs.replace(options, tool_budgets={**budgets, **dict(options.tool_budgets)})


def budget_key(tool: str) -> tuple[str | None, str]:
    """The key that sets this tool's budget, in Claude's terms (None: Claude Code fixes it)."""
    if tool in BASH_TOOLS:
        return BASH_MAX, "Bash's inline limit: chars kept, and the bytes read back (clamped to 4,000–128,000)"
    if is_mcp_tool_name(tool) or tool == "Read":
        return None, f"{tool}'s limit is in tokens Claude counts with the API (count_tokens): not sized here"
    fixed = min(rules.MAX_RESULT_SIZE_CHARS.get(tool, rules.PERSISTENCE_CEILING), rules.PERSISTENCE_CEILING)
    return None, f"{tool} is persisted above {fixed:,.0f} chars, fixed in {CLIENT} {VERSION}"


def budget_for(item: ReplayInput) -> tuple[float, bool] | None:
    """The smallest bashOutputMaxChars that keeps this Bash result whole: its output file's bytes (Bash's
    gate) and its chars (the general layer) both fit."""
    if item.tool not in BASH_TOOLS or item.raw.text is None or item.field == "error":
        return None
    found = _output_file(item, 0)
    if isinstance(found, Outcome):
        return None
    output, size = found
    return max(size, js_len(layers.tool_text(output)), layers.BASH_CLAMP[0]), False
