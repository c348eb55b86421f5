"""Raw API message dumps: OpenAI chat, OpenAI Responses, Anthropic, Gemini API.

A dump is what a client sent (or would send) to a model API, saved as JSON:
a request body (`{"model", "messages"|"input"|"contents", …}`), a bare list of
messages, or JSON Lines of messages or of request bodies. For a log of request
bodies the last one is the history (each request repeats the whole
conversation). The dialect is read from the shapes the messages use
(`dialects.detect_dialect`); the registry tries this reader last, so the
agents' own recordings are claimed before a generic `messages[]` could be.
"""

from __future__ import annotations

from pathlib import Path

from doctor.core.lazy_pattern import LazyPattern
from doctor.sources.base import LoadedSession, SourceError, SourceIssue, open_session_file
from doctor.sources.dumps.dialects import ANTHROPIC, CONVERTERS, GEMINI_API, OPENAI, OPENAI_RESPONSES, detect_dialect
from doctor.sources.jsonl import iter_json_lines, loads, over_cap_message, read_document

NAME = "dump"
ALIASES = (OPENAI, ANTHROPIC, GEMINI_API, OPENAI_RESPONSES)

_LIST_KEYS = {"messages": None, "input": OPENAI_RESPONSES, "contents": GEMINI_API}
# The first message's first key: agent recordings start their messages with other keys
# (Gemini CLI `{"id"`, Claude `{"parentUuid"`, Codex `{"timestamp"`), so they never match.
_FIRST_ITEM = (rb'\{\s*"(?:role|parts|content)"\s*:'
               rb'|\{\s*"type"\s*:\s*"(?:message|function_call|function_call_output|custom_tool_call|reasoning)"')
_BARE_START = LazyPattern(rb"\[?\s*(?:" + _FIRST_ITEM + rb")")
_LIST_START = LazyPattern(rb'"(?:messages|input|contents)"\s*:\s*\[\s*(?:\]|' + _FIRST_ITEM + rb")")


def sniff(path: Path, head: bytes) -> bool:
    """A message list at the top (bare list, JSON Lines of messages) or under a request-body key."""
    text = head.bytes.lstrip()
    if _BARE_START.match(text):
        return True
    return text.startswith(b"{") and _LIST_START.search(text) is not None


def read(path: Path, dialect: str | None = None) -> LoadedSession:
    # Here, not at the top: Claude's reader imports `dumps.dialects` (so this package) on every status line.
    from doctor.sources import autobot

    path = Path(path)
    issues: list[SourceIssue] = []
    body, items = _load(path, issues)
    dialect = dialect or _dialect_of(body, items)
    convert = CONVERTERS[dialect]
    if dialect == ANTHROPIC:
        system = body.get("system") if isinstance(body, dict) else None
        history = lambda: convert(items, system)  # noqa: E731 - a fresh iterator per call
    else:
        history = lambda: convert(items)  # noqa: E731
    return LoadedSession(
        agent=NAME,
        path=path,
        history=history,
        format=dialect,
        issues=issues,
        spill_roots=autobot.default_roots(base=path.parent),
        meta={"model": body.get("model")} if isinstance(body, dict) and isinstance(body.get("model"), str) else {},
    )


def _load(path: Path, issues: list[SourceIssue]) -> tuple[object, list]:
    """(request body or None, message list) from a JSON document or JSON Lines."""
    data = read_document(path)  # None: longer than one document doctor decodes; its lines may still be
    try:
        document = loads(data) if data is not None else None
    except ValueError:
        document = None
    if document is None:
        lines = [line.value for line in iter_json_lines(path, issues)]
        bodies = [line for line in lines if _message_list(line) is not None]
        if bodies:
            document = bodies[-1]
        elif lines:
            document = lines
    items = _message_list(document)
    if items is None:
        if data is None:
            raise SourceError(path, f"{over_cap_message(path.stat().st_size)}, and no line of it holds a message list")
        raise SourceError(path, "no message list (messages, input, contents, or a JSON array of messages)")
    return document, items


def _message_list(value: object) -> list | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in _LIST_KEYS:
            if isinstance(value.get(key), list):
                return value[key]
    return None


def _dialect_of(body: object, items: list) -> str:
    if isinstance(body, dict):
        for key, dialect in _LIST_KEYS.items():
            if dialect and isinstance(body.get(key), list):
                return dialect
    detected = detect_dialect(items)
    if detected is None and isinstance(body, dict) and "system" in body:
        return ANTHROPIC  # a top-level system prompt is Anthropic's request shape
    return detected or OPENAI
