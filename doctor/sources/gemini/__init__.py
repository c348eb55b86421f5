"""Gemini CLI chat recordings: what the model was sent, rebuilt from the file.

Two container shapes, one state machine (ported from the CLI's own
`loadConversationRecord`, 0.61.0):
- legacy `session-….json`: one ConversationRecord `{sessionId, projectHash,
  startTime, …, messages[]}`, rewritten whole on every update;
- `session-….jsonl` (2026-04+): a metadata line, then message records (an id
  appended again replaces the earlier copy in place: last one wins),
  `{"$set": {…}}` metadata updates (`$set.messages` replaces every message) and
  `{"$rewindTo": id}` (drops that message and everything after it).

The model history is then built as the live CLI sends it: a `gemini` message
becomes a model Content (its text plus one functionCall per `toolCalls[]`
entry); a `user` message is sent as it stands. Since 0.6x the CLI records each
tool round twice — in `toolCalls[].result` and as a `user` message holding the
functionResponse parts, which is the copy the model saw (output masking
rewrites only that one). So a `toolCalls[].result` is model context only when
no user message carries a response with the same call id (legacy files);
otherwise it, like every `resultDisplay`, is a side-channel copy.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from doctor.core.jsvalues import MeasuredText, js_len, js_stringify_len
from doctor.core.turns import mark
from doctor.core.ui_history import is_shell_result_display
from doctor.sources.base import (
    LoadedSession,
    SourceError,
    SourceIssue,
    open_session_file,
)
from doctor.sources.gemini import document, measured, spans
from doctor.sources.jsonl import SEARCH_WINDOW, loads
from doctor.sources.sniffing import outline_values

NAME = "gemini"
FORMAT_LEGACY = "gemini-cli-json"
FORMAT_JSONL = "gemini-cli-jsonl"

UI_DISPLAY = "ui-display"
TOOL_CALL_RESULT_COPY = "toolCalls-result"

_NOT_SENT_TYPES = frozenset({"info", "error", "warning"})
# The CLI's `isIgnoredUserContent`: user text it wrote itself (the session context, hook context) and
# a slash command or `?` help line are not prompts; a resumed chat leaves such messages out.
_CLI_WRITTEN = ("<session_context>", "<hook_context>")
_NOT_PROMPTS = ("/", "?")


# What the CLI's ChatRecordingService writes first, in every session file it creates (0.61.0: the
# JSONL metadata line; the legacy ConversationRecord begins with the same keys, then `messages`).
# sessionId + projectHash alone are not enough: other agents' files carry those two too (a Qwen
# recording's meta.json has both).
_SESSION_KEYS = ("sessionId", "projectHash", "startTime", "lastUpdated")
_DOCUMENT_OPENING = 4096


def sniff(path: Path, head) -> bool:
    """A ConversationRecord: a JSON object opening with the session keys the CLI always writes."""
    text = head.bytes.lstrip()
    if not text.startswith(b"{"):
        return False
    (record,) = head.values(1) or [None]
    if not isinstance(record, dict):  # pretty-printed legacy JSON: outline its opening (the keys come first)
        (record,) = outline_values(io.BytesIO(text[:_DOCUMENT_OPENING]), 1) or [None]
    return _is_session_record(record)


def _is_session_record(record: object) -> bool:
    if not isinstance(record, dict) or not all(isinstance(record.get(key), str) for key in _SESSION_KEYS):
        return False
    return "messages" not in record or isinstance(record["messages"], list)


@dataclass
class ConversationState:
    """The final ConversationRecord after replaying every record of the file."""

    metadata: dict = field(default_factory=dict)
    # insertion order = history order; the reader keeps most messages as `spans.MessageSpan`s
    messages: dict[str, object] = field(default_factory=dict)
    records: int = 0

    def apply(self, record: object) -> None:
        """One record, with the CLI's precedence: rewind, message, $set, metadata."""
        if not isinstance(record, dict):
            return
        self.records += 1
        if isinstance(record.get("$rewindTo"), str):
            self._rewind(record["$rewindTo"])
        elif isinstance(record.get("id"), str):
            self.messages[record["id"]] = record
        elif isinstance(record.get("$set"), dict):
            update = record["$set"]
            if isinstance(update.get("messages"), list):
                self.messages.clear()
                self._add(update["messages"])
            self.metadata.update(update)
        elif isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str):
            self.metadata.update(record)
            if isinstance(record.get("messages"), list):
                self._add(record["messages"])

    def _add(self, messages: list) -> None:
        for message in messages:
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                self.messages[message["id"]] = message

    def _rewind(self, message_id: str) -> None:
        ids = list(self.messages)
        cut = ids.index(message_id) if message_id in self.messages else 0
        for dropped in ids[cut:]:
            del self.messages[dropped]


def read(path: Path) -> LoadedSession:
    path = Path(path)
    issues: list[SourceIssue] = []
    state = ConversationState()
    if _is_json_lines(path):
        fmt = FORMAT_JSONL
        spans.replay(path, state, issues)
    else:
        fmt = FORMAT_LEGACY
        document.replay(path, state)
    if not state.metadata.get("sessionId"):
        raise SourceError(path, "no Gemini CLI session metadata (sessionId, projectHash) found")
    entries = list(state.messages.values())
    survey = _Survey(measured.iter_measured(path, entries))

    def messages() -> Iterator[dict]:
        return spans.iter_messages(path, entries)

    session = LoadedSession(
        agent=NAME,
        path=path,
        history=lambda: model_history(messages(), survey.response_ids),
        measured_history=lambda: model_history(measured.iter_measured(path, entries), survey.response_ids),
        session_id=state.metadata.get("sessionId"),
        format=fmt,
        ui_history=_Replayed(lambda: ui_tool_groups(messages())),
        measured_ui_history=survey.ui_groups,
        issues=issues,
        started=state.metadata.get("startTime"),
        turns_marked=True,
        meta={
            "projectHash": state.metadata.get("projectHash"),
            "kind": state.metadata.get("kind"),
            "records": state.records,
            "finalMessages": len(entries),
        },
    )
    survey.count_side_channel(session)
    project_temp = project_temp_dir(path)
    if project_temp is not None:
        session.spill_roots = [project_temp / "tool-outputs", project_temp]
        session.project_dir = registered_project(project_temp)
    return session


def _is_json_lines(path: Path) -> bool:
    """JSON Lines: the first line is a complete value of its own (a legacy file is one, usually
    pretty-printed, object)."""
    with open_session_file(path) as handle:
        first = handle.readline(SEARCH_WINDOW + 1)
    if len(first) > SEARCH_WINDOW:  # a record this long (a legacy document is pretty-printed): lines
        return True
    try:
        loads(first.strip())
    except ValueError:
        return False
    return True


def _parts(content: object) -> list:
    """The CLI's `ensurePartArray`: a string or a single part becomes a list of parts."""
    if isinstance(content, list):
        return [{"text": part} if isinstance(part, str) else part for part in content]
    if isinstance(content, str):
        return [{"text": content}]
    return [] if content is None else [content]


def _response_ids(messages: Iterable[dict]) -> set[str]:
    """Call ids whose responses are sent through a `user` message (0.6x recordings)."""
    ids = set()
    for message in messages:
        if message.get("type") != "user":
            continue
        for part in _parts(message.get("content")):
            fr = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(fr, dict) and isinstance(fr.get("id"), str):
                ids.add(fr["id"])
    return ids


def _answered(call_id: object, response_ids: set[str]) -> bool:
    """The call's response went through a user message (an id that is not a string never did: it
    may not even be hashable, a hand-edited file's `{}`)."""
    return isinstance(call_id, str) and call_id in response_ids


def _tool_calls(message: dict) -> list[dict]:
    calls = message.get("toolCalls")
    return [call for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []


def _result_parts(call: dict) -> list:
    """`toolCalls[].result` as the CLI turns it into functionResponse parts."""
    result = call.get("result")
    if not result:
        return []
    if isinstance(result, str):
        return [{"functionResponse": {"id": call.get("id"), "name": call.get("name"), "response": {"output": result}}}]
    return _parts(result)


def model_history(messages: Iterable[dict], sent_separately: set[str]) -> Iterator[dict]:
    """Neutral Contents for the final messages, as the CLI sends them to the model
    (`sent_separately`: their `_response_ids`); a typed prompt's Content is marked with its turn."""
    prompts = 0
    for message in messages:
        kind = message.get("type")
        if kind == "user":
            content = {"role": "user", "parts": _parts(message.get("content"))}
            if typed_prompt(content["parts"]):
                prompts += 1
                mark(content, prompts)
            yield content
        elif kind == "gemini":
            yield from _gemini_turn(message, sent_separately)


def typed_prompt(parts: list) -> bool:
    """A user message holds a prompt the person typed: the CLI's `isIgnoredUserContent`, applied to its
    text parts one by one (after output masking rewrote the history, the session context and the first
    prompt share one message), and no tool response in it."""
    texts = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if part.get("functionResponse") is not None:
            return False
        text = part.get("text")
        if isinstance(text, str) and not text.strip().startswith(_CLI_WRITTEN):
            texts.append(text)
    typed = "".join(texts).strip()
    return bool(typed) and not typed.startswith(_NOT_PROMPTS)


def _gemini_turn(message: dict, sent_separately: set[str]) -> Iterator[dict]:
    parts = _parts(message.get("content")) if message.get("content") else []
    calls = _tool_calls(message)
    if not any(isinstance(part, dict) and (part.get("functionCall") or part.get("thought")) for part in parts):
        parts = _thought_parts(message) + parts
        parts += [{"functionCall": {"id": c.get("id"), "name": c.get("name"), "args": c.get("args")}} for c in calls]
    if parts:
        yield {"role": "model", "parts": parts}
    responses = [part for call in calls if not _answered(call.get("id"), sent_separately) for part in _result_parts(call)]
    if responses:
        yield {"role": "user", "parts": responses}


def _thought_parts(message: dict) -> list[dict]:
    """Recorded thought summaries, sent back as `thought` text parts (as on resume)."""
    thoughts = message.get("thoughts")
    parts = []
    for thought in thoughts if isinstance(thoughts, list) else ():
        if isinstance(thought, dict):
            subject, description = thought.get("subject"), thought.get("description")
            parts.append({"text": f"**{subject}** {description}" if subject else description, "thought": True})
    return parts


def ui_tool_groups(messages: list[dict]) -> Iterator[dict]:
    """The displays the CLI's UI shows, as `tool_group` items the UI-history scan reads."""
    for message in messages:
        calls = _tool_calls(message)
        if calls:
            yield {
                "type": "tool_group",
                "tools": [
                    {"name": c.get("name"), "callId": c.get("id"), "resultDisplay": c.get("resultDisplay")} for c in calls
                ],
            }


class _Replayed:
    """A list-like view that decodes the messages again each time it is walked (the full UI history,
    for whoever wants the displays themselves; the analysis reads `_Survey.ui_groups`)."""

    def __init__(self, walk) -> None:
        self._walk = walk

    def __iter__(self) -> Iterator[dict]:
        return self._walk()


class _Survey:
    """One walk over the final messages (long outputs and displays measured), each decoded once:
    the call ids answered by user messages, the UI tool groups with long display texts measured
    (MeasuredText: head and JS length, for the retention analysis), and the side-channel copies'
    lengths."""

    def __init__(self, messages: Iterable[dict]) -> None:
        self.response_ids: set[str] = set()
        self.ui_groups: list[dict] = []
        self._displays: list[int] = []
        self._results: list[tuple[object, int]] = []  # (call id, output chars) of each call with a result
        for message in messages:
            self.response_ids |= _response_ids((message,))
            for group in ui_tool_groups((message,)):
                self.ui_groups.append({**group, "tools": [_measured_tool(tool) for tool in group["tools"]]})
            for call in _tool_calls(message):
                display = call.get("resultDisplay")
                if display is not None:
                    self._displays.append(js_len(display) if isinstance(display, str) else js_stringify_len(display) or 0)
                if call.get("result"):
                    self._results.append((call.get("id"), _output_chars(_result_parts(call))))

    def count_side_channel(self, session: LoadedSession) -> None:
        for chars in self._displays:
            session.side(UI_DISPLAY).add(chars)
        for call_id, chars in self._results:
            if _answered(call_id, self.response_ids):
                session.side(TOOL_CALL_RESULT_COPY).add(chars)


# A display text longer than this is kept as its head and JS length (every sentinel prefix is shorter).
_HEAD = 256


def _measured(text: object) -> object:
    return MeasuredText(text[:_HEAD], js_len(text)) if type(text) is str and len(text) > _HEAD else text


def _measured_tool(tool: dict) -> dict:
    """A UI tool with its display's long texts measured: the display string, or a shell result's
    text and output (what the UI scan measures; other structured displays stay whole: their
    length is JSON.stringify's)."""
    display = tool["resultDisplay"]
    if isinstance(display, str):
        return {**tool, "resultDisplay": _measured(display)}
    if is_shell_result_display(display):
        return {**tool, "resultDisplay": {**display, "text": _measured(display["text"]),
                                          "output": _measured(display["output"])}}
    return tool


def _output_chars(parts: list) -> int:
    """Length of the output (or error) strings a response copy holds."""
    total = 0
    for part in parts:
        fr = part.get("functionResponse") if isinstance(part, dict) else None
        response = fr.get("response") if isinstance(fr, dict) else None
        if isinstance(response, dict):
            text = response.get("output") if isinstance(response.get("output"), str) else response.get("error")
            total += js_len(text) if isinstance(text, str) else 0
    return total


def project_temp_dir(path: Path) -> Path | None:
    """`~/.gemini/tmp/<project>` for a file under its `chats/` (subagents sit one level deeper)."""
    for parent in path.resolve().parents:
        if parent.name == "chats":
            return parent.parent
    return None


def registered_project(project_temp: Path) -> Path | None:
    """The project root for a temp dir: its `.project_root` marker, else `projects.json`."""
    marker = project_temp / ".project_root"
    try:
        return Path(marker.read_text(encoding="utf-8").strip())
    except OSError:
        pass
    registry = project_temp.parent.parent / "projects.json"
    try:
        projects = loads(registry.read_bytes()).get("projects", {})
    except (OSError, ValueError, AttributeError):
        return None
    for root, slug in projects.items() if isinstance(projects, dict) else ():
        if slug == project_temp.name:
            return Path(root)
    return None
