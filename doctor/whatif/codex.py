"""Codex 0.171.0 replayed under another `tool_output_token_limit` (see docs/formats.md, "Replay rules: Codex").

An `exec_command` output is cut to min(the call's `max_output_tokens` or 10,000, the turn's truncation
policy) by `codex_layers`; its exec header (`Chunk ID`, wall time, exit code, original token count) sits
outside the budget and is kept as recorded. The raw output is the session's own text when Codex kept it
whole, else the call's `aggregated_output` when that is complete (Codex keeps at most 64 KiB of it), else
the session's head and tail for a smaller budget; anything more is unknown.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from msgspec import structs

from doctor.assemble import ReportOptions
from doctor.core.agent_homes import CODEX as AGENT, agent_homes
from doctor.core.agent_rules.codex import CATALOG_MODELS, read_config
from doctor.core.sentinels import IN_TOOL_TRUNCATION, NONE
from doctor.sources.base import LoadedSession
from doctor.whatif import codex_layers as layers
from doctor.whatif.model import (
    FROM_AGGREGATED_OUTPUT,
    FROM_SESSION,
    UNKNOWN,
    Outcome,
    RawOutput,
    ReplayInput,
    SessionSettings,
    SettingKey,
    unknown,
)
from doctor.whatif.records import recorded_settings, remember_recorded_settings, session_records

CLIENT = "Codex CLI"
VERSION = "0.171.0"
LIMIT_KEY = "tool_output_token_limit"
EXEC_TOOLS = frozenset({"exec_command"})
OUTPUT_LINE = "Output:\n"
HEADER_SCAN = 1024
WARNING_ALLOWANCE = 200  # the warning and total-lines lines and the marker, with room for their numbers
AGGREGATED_MAX_CHARS = 65_536  # Codex keeps no more; a longer one is not Codex's and is not kept in memory  # the exec header's lines come first; "Output:" is within this many chars


def _token_limit(text: str) -> float:
    value = int(text.strip().replace("_", ""))
    if value < 0:
        raise ValueError("a number of tokens, 0 or more")
    return value


KEYS = (SettingKey(LIMIT_KEY, None, _token_limit, "$CODEX_HOME/config.toml (default ~/.codex)",
                   "tokens a tool output may keep (× 4 bytes under a bytes policy); unset: the model's policy"),)


def session_settings(session: LoadedSession, options: ReportOptions) -> SessionSettings:
    """`tool_output_token_limit` as Codex reads it: `$CODEX_HOME/config.toml`, then files passed to doctor."""
    env = options.env if options.env is not None else os.environ
    files = ([agent_homes(env)[AGENT] / "config.toml"] if options.use_default_settings_files else []) \
        + list(options.settings_files)
    values: dict[str, float] = {}
    used = []
    for path in files:
        if not Path(path).is_file():
            continue
        used.append(str(path))
        value = read_config(Path(path)).get(LIMIT_KEY)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            values[LIMIT_KEY] = value
    remember_recorded_settings(session, values)
    return SessionSettings(values, tuple(used))


def replay_inputs(session: LoadedSession, sites: Sequence, spill) -> list[ReplayInput]:
    catalog = session.meta.get("model") in CATALOG_MODELS
    recorded_under = recorded_settings(session)
    aggregated = _aggregated_outputs(session, {site.call_id for site in sites if site.tool in EXEC_TOOLS})
    inputs = []
    for site in sites:
        facts = {"catalog": catalog, "recorded_under": recorded_under}
        raw = RawOutput(site.recorded, FROM_SESSION)
        if site.tool in EXEC_TOOLS:
            header, body = _split_header(site.recorded)
            if header is None:
                raw = RawOutput(None, UNKNOWN, why="its exec output has no `Output:` header line")
            else:
                facts["header"] = header
                cut = layers.parse_cut(body)
                if cut is None:
                    raw = RawOutput(body, FROM_SESSION)
                else:
                    raw = _from_aggregated(aggregated.get(site.call_id), cut)
                    if raw.text is None:
                        facts["cut_body"] = body
        inputs.append(ReplayInput(site.ordinal, site.call_id, site.tool, site.batch, site.field, site.recorded,
                                  raw, site.args, facts))
    return inputs


def _split_header(text: str) -> tuple[str | None, str]:
    at = text.find("\n" + OUTPUT_LINE, 0, HEADER_SCAN)
    if not text.startswith("Chunk ID: ") and not text.startswith("Wall time: ") or at < 0:
        return None, text
    end = at + 1 + len(OUTPUT_LINE)
    return text[:end], text[end:]


def _from_aggregated(aggregated: str | None, cut: layers.Cut) -> RawOutput:
    """The call's `aggregated_output` when it is the whole output: its size agrees with the original token
    count Codex printed (a longer output keeps only its first and last 32 KiB there)."""
    if aggregated is None:
        return RawOutput(None, UNKNOWN, why="Codex cut it and the rollout has no aggregated_output for the call")
    if cut.omitted_bytes is not None:
        return RawOutput(None, UNKNOWN, why=f"the command printed more than Codex's 1 MiB exec buffer holds "
                                             f"({cut.omitted_bytes:,} bytes were never kept)")
    if layers.approx_tokens(len(aggregated.encode("utf-8", "surrogatepass"))) != cut.original_tokens:
        return RawOutput(None, UNKNOWN, why="Codex cut it and kept only 64 KiB of it in aggregated_output "
                                             f"(original {cut.original_tokens:,} tokens ≈ {cut.original_tokens * 4:,} bytes)")
    return RawOutput(aggregated, FROM_AGGREGATED_OUTPUT)


def _aggregated_outputs(session: LoadedSession, call_ids: set) -> dict[str, str]:
    """`aggregated_output` of each `item_completed` CommandExecution whose id is one of `call_ids`."""
    found: dict[str, str] = {}
    for record in session_records(session, b'"CommandExecution"'):
        payload = record.get("payload") if record.get("type") == "event_msg" else None
        item = payload.get("item") if isinstance(payload, dict) and payload.get("type") == "item_completed" else None
        if isinstance(item, dict) and item.get("type") == "CommandExecution" and item.get("id") in call_ids:
            output = item.get("aggregated_output")
            if isinstance(output, str) and len(output) <= AGGREGATED_MAX_CHARS:
                found[item["id"]] = output
    return found


def replay(inputs: Sequence[ReplayInput], settings: Mapping[str, float]) -> list[Outcome]:
    limit = settings.get(LIMIT_KEY)
    return [_replay_one(one, layers.session_policy(bool(one.facts.get("catalog")),
                                                    None if limit is None else int(limit)))
            for one in inputs]


def _replay_one(one: ReplayInput, policy: layers.Policy) -> Outcome:
    if one.tool not in EXEC_TOOLS:
        return _other_tool(one, policy)
    header = one.facts.get("header")
    if header is None:
        return unknown(one.raw.why or "not an exec output Codex formats")
    budget = layers.exec_policy(policy, one.args.get("max_output_tokens") if isinstance(one.args, Mapping) else None)
    if one.raw.text is not None:
        body = layers.formatted_truncate(one.raw.text, budget)
        return Outcome(header + body, IN_TOOL_TRUNCATION if body is not one.raw.text else NONE)
    recorded_under = one.facts.get("recorded_under")
    if isinstance(recorded_under, dict):
        limit = recorded_under.get(LIMIT_KEY)
        recorded_budget = layers.exec_policy(layers.session_policy(bool(one.facts.get("catalog")),
                                                                   None if limit is None else int(limit)),
                                             one.args.get("max_output_tokens") if isinstance(one.args, Mapping) else None)
        if recorded_budget == budget:
            return Outcome(one.recorded, IN_TOOL_TRUNCATION)
    cut = layers.parse_cut(one.facts.get("cut_body", ""))
    body = layers.recut(cut, budget) if cut is not None else None
    if body is None:
        # At most the budget's bytes (a char is at least one) and the warning lines, after the recorded header.
        return unknown(one.raw.why or "the session does not keep enough of the output",
                       high=len(header) + budget.byte_budget + WARNING_ALLOWANCE)
    return Outcome(header + body, IN_TOOL_TRUNCATION)


def _other_tool(one: ReplayInput, policy: layers.Policy) -> Outcome:
    """Another tool's output: Codex's history truncation of it is not replayed, so it is known only
    when it is whole and fits the replayed policy's bytes as it stands."""
    if layers.parse_cut(one.recorded) is None and "truncated\u2026" not in one.recorded \
            and len(one.recorded.encode("utf-8", "surrogatepass")) <= policy.byte_budget:
        return Outcome(one.recorded, NONE)
    return unknown(f"Codex's own truncation of {one.tool or 'this tool'}'s output is not replayed")


def after_options(settings: SessionSettings, session: LoadedSession, options: ReportOptions) -> ReportOptions:
    """Codex's rules judge the replayed session by the replayed policy (its bytes, as chars) for every tool."""
    limit = settings.values.get(LIMIT_KEY)
    policy = layers.session_policy(session.meta.get("model") in CATALOG_MODELS, None if limit is None else int(limit))
    tools = {name: float(policy.byte_budget) for name in _tool_names(session)}
    return structs.replace(options, tool_budgets={**tools, **dict(options.tool_budgets)})


def _tool_names(session: LoadedSession) -> set[str]:
    names = set()
    for content in session.history():
        for part in content.get("parts") or [] if isinstance(content, dict) else []:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict) and isinstance(response.get("name"), str):
                names.add(response["name"])
    return names


def budget_key(tool: str) -> tuple[str | None, str]:
    """The key that sets this tool's budget, in Codex's terms."""
    if tool in EXEC_TOOLS:
        return LIMIT_KEY, ("tokens (× 4 bytes under a bytes policy); a call that does not ask for more "
                           "(max_output_tokens) is held to 10,000 tokens whatever it is")
    return LIMIT_KEY, "the same policy bounds every tool's output"


def budget_for(item: ReplayInput) -> tuple[float, bool] | None:
    """The smallest tool_output_token_limit that keeps this exec output whole: its bytes ÷ 4, rounded up (the
    original token count Codex printed, when it cut it); None when the call's own max_output_tokens (or its
    10,000 default) would cut it anyway."""
    if item.tool not in EXEC_TOOLS or "header" not in item.facts:
        return None
    if item.raw.text is not None:
        tokens = layers.approx_tokens(len(item.raw.text.encode("utf-8", "surrogatepass")))
    else:
        cut = layers.parse_cut(item.facts.get("cut_body", ""))
        if cut is None:
            return None
        tokens = cut.original_tokens
    requested = item.args.get("max_output_tokens") if isinstance(item.args, Mapping) else None
    allowed = requested if isinstance(requested, int) and not isinstance(requested, bool) and requested >= 0 \
        else layers.EXEC_DEFAULT_MAX_TOKENS
    return (tokens, False) if tokens <= allowed else None
