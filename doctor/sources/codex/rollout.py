"""One Codex CLI rollout, read in a single streaming pass.

A rollout is the Responses API input the model is sent, one `response_item` at
a time, wrapped in `{timestamp, type, payload}` (since ~Aug 2025) or bare (the
legacy form: a meta object first, `{"record_type": "state"}` lines, bare items).
Model context: the `response_item` payloads since the last `compacted` record
(whose `replacement_history` is what the model holds from then on), converted
by the OpenAI Responses dialect the message-dump reader uses. Reasoning items
are kept out: their `encrypted_content` is opaque, not tool output. `event_msg`
copies of command output (`exec_command_end`, `item_completed` CommandExecution,
`patch_apply_end`, `mcp_tool_call_end`) are side-channel copies. The event Codex writes
after a typed prompt's message (`user_message`, `item_completed` UserMessage) marks that
message as the start of a turn (`doctor.core.turns`); developer and environment messages
get none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from doctor.core.turns import TURN, mark
from doctor.sources.base import SideChannelCopy, SourceIssue
from doctor.sources.claude_codex_common import CallNames, Tally, side_copy, text_chars
from doctor.sources.codex.lines import CONTEXT_WINDOW, TYPED_PROMPT, iter_envelopes
from doctor.sources.codex.measured import Outputs
from doctor.sources.dumps.dialects import openai_responses

CALL_TYPES = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})


@dataclass
class Rollout:
    """The model-visible items of one rollout, and what the file keeps beside them."""

    path: Path
    items: list = field(default_factory=list)
    names: CallNames = field(default_factory=CallNames)
    seen: Tally = field(default_factory=Tally)
    compacted: Tally = field(default_factory=Tally)
    compactions: int = 0
    reasoning: SideChannelCopy = field(default_factory=lambda: SideChannelCopy("encrypted reasoning"))
    side_channel: dict[str, SideChannelCopy] = field(default_factory=dict)
    issues: list[SourceIssue] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    legacy: bool = False
    outputs: Outputs | None = None  # the long outputs kept measured, when the file can be read again
    prompts: int = 0  # typed prompts so far (turns), across compactions
    last_user_message: dict | None = None  # the newest user message item, which a prompt event marks

    def side(self, kind: str) -> SideChannelCopy:
        return side_copy(self.side_channel, kind)


def read_rollout(path: Path, marked: Callable[[str], bool]) -> Rollout:
    """Read `path` (never writing to it) into a Rollout; a regular file's long outputs are kept
    measured (`Outputs`; `marked` tells whether a text holds a truncation marker)."""
    rollout = Rollout(path, outputs=Outputs(path, marked) if path.is_file() else None)
    for number, kind, payload, span in iter_envelopes(path, rollout.issues):
        if kind == "response_item":
            if rollout.outputs is not None and isinstance(payload.get("type"), str) and payload["type"] in OUTPUT_TYPES:
                rollout.outputs.measure(payload, span)  # first: the tallies then read its JS length, not the text
            _take_item(rollout, payload, number)
        elif kind == "compacted":
            _compact(rollout, payload)
        elif kind == "event_msg":
            if payload is not None and payload[0] == TYPED_PROMPT:
                _typed_prompt(rollout)
            elif payload is not None and payload[0] == CONTEXT_WINDOW:
                rollout.meta["context_window"] = payload[1]  # the last one: the model in use
            elif payload is not None:  # (side channel, chars) of the output the event copies
                rollout.side(payload[0]).add(payload[1])
        elif kind == "turn_context" and isinstance(payload.get("model"), str):
            rollout.meta["model"] = payload["model"]  # the last turn's model: its truncation policy applies
        elif kind in ("session_meta", "legacy_meta"):
            rollout.legacy = rollout.legacy or kind == "legacy_meta"
            rollout.meta.setdefault("session", payload)
    rollout.names.resolve(path, rollout.issues, "function_call_output for call_id")
    return rollout


def _take_item(rollout: Rollout, item: dict, number: int) -> None:
    item.pop(TURN, None)  # only this reader marks turns
    kind = item.get("type", "message")
    if not isinstance(kind, str):  # a hostile file may give any type: an item of no known kind
        rollout.items.append(item)
        return
    if kind == "reasoning":
        rollout.reasoning.add(text_chars(item.get("encrypted_content") or ""))
        return
    if kind == "message" and item.get("role") == "user":
        rollout.last_user_message = item
    if kind in CALL_TYPES:
        rollout.names.remember(item.get("call_id"), item.get("name") or ("local_shell" if kind == "local_shell_call" else None))
    elif kind.endswith("_output"):
        for content in openai_responses([item]):
            for part in content["parts"]:
                rollout.names.attach(part["functionResponse"], number)
                rollout.seen.add(part["functionResponse"])
    rollout.items.append(item)


def _typed_prompt(rollout: Rollout) -> None:
    """A prompt event: the user message just written is the person's next prompt (a second event
    for the same message, as 0.171 writes two, counts once)."""
    item = rollout.last_user_message
    if item is not None and TURN not in item:
        rollout.prompts += 1
        mark(item, rollout.prompts)


def _compact(rollout: Rollout, payload: dict) -> None:
    """From here on the model holds `replacement_history` (or, before it existed, the summary)."""
    for content in openai_responses(rollout.items):
        for part in content["parts"]:
            if "functionResponse" in part:
                rollout.compacted.add(part["functionResponse"])
    rollout.compactions += 1
    replacement = payload.get("replacement_history")
    if isinstance(replacement, list):
        rollout.items = [{key: value for key, value in item.items() if key != TURN} for item in replacement
                         if isinstance(item, dict) and item.get("type") != "reasoning"]  # only this reader marks turns
    else:
        summary = payload.get("message") if isinstance(payload.get("message"), str) else ""
        rollout.items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary}]}]
    rollout.last_user_message = None
    if rollout.items and rollout.prompts:  # what follows belongs to the turn in progress
        rollout.items[0] = mark(dict(rollout.items[0]), rollout.prompts)
