"""Codex CLI rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`.

`history` is what the model holds: the Responses items since the last
compaction, calls as functionCall and outputs as functionResponse named by
`call_id`. An output is the string the rollout stores, as it stands: for the
old `shell` / `apply_patch` tools that string is JSON (`{"output": …,
"metadata": {…}}`), and that JSON text is exactly what Codex sent the model
(`serde_json::to_string(&ExecOutput{output, metadata})` becomes the
function_call_output content), so it is not unwrapped. Codex writes no spill
files; in-place truncation markers stay in the text.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from doctor.sources.base import LoadedSession, SideChannelCopy
from doctor.sources.claude_codex_common import result_text
from doctor.sources.codex.lines import envelope
from doctor.sources.codex.rollout import Rollout, read_rollout
from doctor.sources.dumps.dialects import openai_responses

NAME = "codex"
ALIASES = ("codex-cli",)
ENVELOPE_TYPES = frozenset({
    "session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state", "token_usage_record",
})
COMPACTED = "compacted"
TRUNCATION_MARKERS = ("Warning: truncated output", "chars truncated…", "tokens truncated…", "[... omitted ")
# All but the last marker say this: one search tells which texts may hold them (outputs are long).
_TRUNCATED = "truncated"


def sniff(path: Path, head: bytes) -> bool:
    """The first JSON line is a Codex envelope, or the legacy bare meta / state / item line."""
    for record in head.values(5):
        if record is None:  # an invalid line
            continue
        if not isinstance(record, dict):
            return False
        if "payload" in record:
            return record.get("type") in ENVELOPE_TYPES
        kind, _ = envelope(record)
        return kind == "state" or (kind == "legacy_meta" and ("instructions" in record or "git" in record))
    return False


def read(path: Path) -> LoadedSession:
    path = Path(path)
    rollout = read_rollout(path, _marked)
    contents = list(openai_responses(rollout.items))  # converted once: the analysis and the meta walk it
    session_meta = rollout.meta.get("session", {})
    outputs = rollout.outputs
    session = LoadedSession(
        agent=NAME,
        path=path,
        # Long outputs are kept measured (codex/measured.py): the history decodes them again from the file.
        history=(lambda: outputs.restored(contents)) if outputs else (lambda: iter(contents)),
        # The list itself: the analysis then parses a stub's header only for the rows someone reads.
        measured_history=lambda: contents,
        session_id=session_meta.get("id") or session_meta.get("session_id"),
        format="codex rollout (legacy, no envelope)" if rollout.legacy else "codex rollout",
        side_channel=rollout.side_channel,
        issues=rollout.issues,
        project_dir=Path(session_meta["cwd"]) if isinstance(session_meta.get("cwd"), str) else None,
        started=session_meta.get("timestamp"),
        meta=_meta(rollout, contents),
        # A rollout with no prompt events (the legacy layout) is counted as an unmarked history.
        turns_marked=rollout.prompts > 0,
    )
    if rollout.compacted.count:
        session.side_channel[COMPACTED] = SideChannelCopy(COMPACTED, rollout.compacted.count, rollout.compacted.raw_chars)
    return session


def _meta(rollout: Rollout, contents: list) -> dict:
    session_meta = rollout.meta.get("session", {})
    return {
        "client_version": session_meta.get("cli_version"),
        "model": rollout.meta.get("model"),
        "originator": session_meta.get("originator"),
        "whole_file": rollout.seen.figures(rollout.names),
        "compaction": {"compactions": rollout.compactions, **rollout.compacted.figures(rollout.names)},
        "truncated_in_place": _truncated_in_place(contents, rollout.outputs.marked if rollout.outputs else _marked),
        "encrypted_reasoning": {"count": rollout.reasoning.count, "chars": rollout.reasoning.chars},
        "context_window": rollout.meta.get("context_window"),  # model_context_window of the last token_count
    }


def _truncated_in_place(contents: list, marked: Callable[[str], bool]) -> int:
    """Outputs the tool or Codex cut in the middle (the marker sits in the text the model holds;
    `marked` looks, or says what was seen while a measured output's text was at hand)."""
    count = 0
    for content in contents:
        for part in content["parts"]:
            fr = part.get("functionResponse")
            if fr is not None and marked(result_text(fr)):
                count += 1
    return count


def _marked(text: str) -> bool:
    """A truncation marker is in `text`."""
    if _TRUNCATED in text and any(marker in text for marker in TRUNCATION_MARKERS[:-1]):
        return True
    return TRUNCATION_MARKERS[-1] in text
