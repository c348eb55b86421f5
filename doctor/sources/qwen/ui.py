"""The interactive UI history a resumed Qwen Code 0.24.4 session shows, rebuilt lazily.

`/doctor memory` in the TUI counts `largeOutputsInUIHistory` over
`context.ui.history`, which on resume is `convertToHistoryItems` (chunk-JVKG7KDB.js
2436) over the whole active chain, compressed turns included. The tool items
are what matter: each function call becomes a tool of the current
`tool_group`, named with the registered tool's displayName (the raw name
when the tool is not registered), and the `tool_result` record that answers
it while the group is still open sets its `resultDisplay`. User prompts,
model text and notices become the other items, with their text only.

`QwenUiHistory` re-reads the chain each time it is iterated, so the displays
(up to 32,000 chars each) are never all in memory at once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from doctor.core.budgets import BUILTIN_TOOLS
from doctor.sources.qwen.transcript import ChainGap, ChainRecords

# What `toolRegistry.getTool(name)?.displayName` gives in a default session.
_DISPLAY_NAMES = {spec.name: spec.display_name for spec in BUILTIN_TOOLS if spec.registered_by_default}
REWIND_NOTICE = "Conversation rewound."


def tool_display_name(name: str) -> str:
    return _DISPLAY_NAMES.get(name) or name


def _text_of(parts: object) -> str:
    """`extractTextFromParts`: non-thought text parts, one per line."""
    if not isinstance(parts, list):
        return ""
    return "\n".join(
        p["text"] for p in parts if type(p) is dict and isinstance(p.get("text"), str) and p["text"] and not p.get("thought")
    )


def _function_calls(parts: object) -> list[tuple[str, str, object]]:
    """`extractFunctionCalls`: (id, name, args), with Qwen's fallbacks for missing fields."""
    calls: list[tuple[str, str, object]] = []
    for part in parts if isinstance(parts, list) else ():
        call = part.get("functionCall") if type(part) is dict else None
        if call and type(call) is dict:
            calls.append((call.get("id") or f"call-{len(calls)}", call.get("name") or "unknown", call.get("args") or {}))
    return calls


class _Builder:
    """`convertToHistoryItems` state: the open tool group and the items finished so far."""

    def __init__(self) -> None:
        self.group: list[dict] = []
        self.ready: list[dict] = []

    def flush(self) -> None:
        if self.group:
            self.ready.append({"type": "tool_group", "tools": self.group})
            self.group = []

    def push(self, item: dict) -> None:
        self.flush()
        self.ready.append(item)

    def system(self, record: dict) -> None:
        subtype = record.get("subtype")
        payload = record.get("systemPayload")
        if subtype == "slash_command":
            self.flush()
            if type(payload) is not dict:
                return
            if payload.get("phase") == "invocation" and payload.get("rawCommand") and not payload.get("hiddenInvocation"):
                self.ready.append({"type": "user", "text": payload["rawCommand"]})
            if payload.get("phase") == "result":
                for raw in payload.get("outputHistoryItems") or ():
                    if type(raw) is dict and isinstance(raw.get("type"), str):
                        self.ready.append(dict(raw))
        elif subtype == "rewind":
            self.ready.append({"type": "info", "text": REWIND_NOTICE})

    def user(self, record: dict) -> None:
        parts = (record.get("message") or {}).get("parts")
        if record.get("subtype") in ("notification", "cron"):
            self.ready.append({"type": "notification", "text": _text_of(parts)})
        elif record.get("subtype") == "mid_turn_user_message":
            text = _text_of(parts)
            if text:
                self.ready.append({"type": "user", "text": text, "sentToModel": False})
        elif record.get("subtype") != "goal_runtime":
            self.flush()
            text = _text_of(parts)
            if text:
                self.ready.append({"type": "user", "text": text})

    def assistant(self, record: dict) -> None:
        parts = (record.get("message") or {}).get("parts")
        text = _text_of(parts)
        if text:
            self.push({"type": "gemini", "text": text})
        for call_id, name, args in _function_calls(parts):
            self.group.append(
                {
                    "callId": call_id,
                    "name": tool_display_name(name),
                    "args": args,
                    "resultDisplay": None,
                    "status": "Success",
                }
            )

    def tool_result(self, record: dict) -> None:
        result = record.get("toolCallResult")
        if not result or type(result) is not dict:
            return
        tool = next((t for t in self.group if t["callId"] == result.get("callId")), None)
        if tool is not None:
            tool["resultDisplay"] = result.get("resultDisplay")
            tool["status"] = "Error" if result.get("status") == "error" else "Success"


def iter_ui_items(records: ChainRecords, gap: ChainGap | None, *, measured: bool = False) -> Iterator[dict]:
    """The resumed UI history, item by item, as the TUI would hold it (`measured`: long display
    strings as MeasuredText, for the retention analysis only)."""
    builder = _Builder()
    index = records.index
    for ident, record in records.iter_records(skip=lambda ident: not index.shown_in_ui(ident), measured=measured):
        if gap is not None and index.uuid(ident) == gap.child_uuid:
            builder.push({"type": "info", "text": f"History gap: the parent record {gap.missing_parent_uuid} is missing."})
        if record is not None:
            handler = {"system": builder.system, "user": builder.user, "assistant": builder.assistant}.get(
                record.get("type"), builder.tool_result
            )
            handler(record)
        yield from builder.ready
        builder.ready.clear()
    builder.flush()
    yield from builder.ready


class QwenUiHistory(Sequence):
    """A read-only, re-iterable view of the rebuilt UI history that keeps nothing in memory.

    Indexing and `len` walk the chain (reading the file); iterate it instead.
    """

    def __init__(self, records: ChainRecords, gap: ChainGap | None, *, measured: bool = False):
        self._records = records
        self._gap = gap
        self._measured = measured

    def __iter__(self) -> Iterator[dict]:
        return iter_ui_items(self._records, self._gap, measured=self._measured)

    def __bool__(self) -> bool:
        return len(self._records) > 0

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __getitem__(self, position):
        items = list(self)
        return items[position]
