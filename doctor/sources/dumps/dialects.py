"""Turn raw API message lists into neutral Gemini-style Contents, one dialect each.

Each converter takes the message list of one request and yields Contents:
calls become `functionCall` parts, results become `functionResponse` parts
named after the call they answer (OpenAI and Anthropic results carry only the
call id, so names are joined from the calls first). Consecutive results are
grouped into one user Content, as Gemini sends a tool round. System prompts
are sent as user text: they are context, not tool output.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from doctor.core.turns import TURN

OPENAI = "openai"
OPENAI_RESPONSES = "openai-responses"
ANTHROPIC = "anthropic"
GEMINI_API = "gemini-api"

RESPONSES_ITEM_TYPES = frozenset({
    "message", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
    "local_shell_call", "local_shell_call_output", "reasoning", "web_search_call", "compaction",
})
ANTHROPIC_BLOCK_TYPES = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"})


def _json_text(value: object) -> str:
    """What a JSON value reads as in a prompt (JSON.stringify spacing)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _arguments(raw: object) -> object:
    """OpenAI sends arguments as a JSON string; keep the raw text when it does not parse."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def function_response_part(call_id: object, name: object, text: str, *, is_error: bool = False,
                           nested: list | None = None) -> dict:
    """`{"functionResponse": {id, name, response: {output|error}, parts?}}` for one result.

    `text` is what the model was sent (output, or error); `nested` the media it
    carried; a name that is not a string (its call is unknown) becomes "".
    """
    response = {"error": text} if is_error else {"output": text}
    fr = {"id": call_id, "name": name if isinstance(name, str) else "", "response": response}
    if nested:
        fr["parts"] = nested
    return {"functionResponse": fr}


class _Rounds:
    """Collects Contents, merging consecutive tool results into one user Content."""

    def __init__(self) -> None:
        self.pending: list[dict] = []

    def add_result(self, part: dict) -> None:
        self.pending.append(part)

    def content(self, role: str, parts: list, turn: object = None) -> Iterator[dict]:
        """A Content of `role`; `turn`: the reader's mark on the item it comes from (`doctor.core.turns`)."""
        yield from self.flush()
        if parts:
            yield {"role": role, "parts": parts} if turn is None else {"role": role, "parts": parts, TURN: turn}

    def flush(self) -> Iterator[dict]:
        if self.pending:
            yield {"role": "user", "parts": self.pending}
            self.pending = []


# --- OpenAI Chat Completions -------------------------------------------------

def _openai_parts(content: object) -> list[dict]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    parts = []
    for item in content if isinstance(content, list) else ():
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("text"), str):
            parts.append({"text": item["text"]})
        elif item.get("type") == "image_url":
            parts.append(_image_from_url((item.get("image_url") or {}).get("url")))
        elif item.get("type") == "input_audio":
            audio = item.get("input_audio") or {}
            parts.append({"inlineData": {"mimeType": f"audio/{audio.get('format', 'wav')}", "data": audio.get("data", "")}})
    return parts


def _image_from_url(url: object) -> dict:
    """A `data:` URL is inline bytes; anything else is a reference."""
    url = url if isinstance(url, str) else ""
    if url.startswith("data:") and "," in url:
        header, data = url[5:].split(",", 1)
        return {"inlineData": {"mimeType": header.split(";", 1)[0], "data": data}}
    return {"fileData": {"fileUri": url}}


def _text_of(content: object) -> str:
    """A result's text: the string, or the text items of a list joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(item.get("text", "") for item in content if isinstance(item, dict) and isinstance(item.get("text"), str))
    return "" if content is None else _json_text(content)


def openai_chat(messages: list) -> Iterator[dict]:
    names = {
        call.get("id"): (call.get("function") or {}).get("name")
        for message in messages if isinstance(message, dict)
        for call in message.get("tool_calls") or () if isinstance(call, dict)
    }
    rounds = _Rounds()
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            rounds.add_result(function_response_part(call_id, names.get(call_id), _text_of(message.get("content"))))
        elif role == "function":
            rounds.add_result(function_response_part(None, message.get("name"), _text_of(message.get("content"))))
        elif role == "assistant":
            parts = _openai_parts(message.get("content"))
            for call in message.get("tool_calls") or ():
                if not isinstance(call, dict):
                    continue
                function = call.get("function") or {}
                parts.append({"functionCall": {"id": call.get("id"), "name": function.get("name"),
                                               "args": _arguments(function.get("arguments"))}})
            yield from rounds.content("model", parts)
        else:
            yield from rounds.content("user", _openai_parts(message.get("content")))
    yield from rounds.flush()


# --- OpenAI Responses --------------------------------------------------------

def _responses_call(item: dict) -> dict:
    if item.get("type") == "local_shell_call":
        return {"id": item.get("call_id"), "name": "local_shell", "args": item.get("action")}
    raw = item.get("arguments") if item.get("type") == "function_call" else item.get("input")
    return {"id": item.get("call_id"), "name": item.get("name"), "args": _arguments(raw)}


def _responses_output(output: object) -> tuple[str, list]:
    """`output` is a string or a list of input_text / input_image items."""
    if not isinstance(output, list):
        return _text_of(output), []
    images = [_image_from_url(item.get("image_url")) for item in output
              if isinstance(item, dict) and item.get("type") == "input_image"]
    return _text_of(output), images


def _id_key(call_id: object) -> object:
    """A call id usable as a dict key: JSON objects and arrays (a hostile file) match nothing."""
    return object() if isinstance(call_id, (dict, list)) else call_id


def openai_responses(items: list) -> Iterator[dict]:
    names = {_id_key(item.get("call_id")): _responses_call(item)["name"] for item in items
             if isinstance(item, dict) and item.get("type") in ("function_call", "custom_tool_call", "local_shell_call")}
    rounds = _Rounds()
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind in ("function_call", "custom_tool_call", "local_shell_call"):
            yield from rounds.content("model", [{"functionCall": _responses_call(item)}], item.get(TURN))
        elif isinstance(kind, str) and kind.endswith("_output"):
            text, images = _responses_output(item.get("output"))
            rounds.add_result(function_response_part(item.get("call_id"), names.get(_id_key(item.get("call_id"))), text,
                                                  nested=images))
        elif kind == "message":
            role = "model" if item.get("role") == "assistant" else "user"
            yield from rounds.content(role, _openai_parts(item.get("content")), item.get(TURN))
    yield from rounds.flush()


# --- Anthropic Messages --------------------------------------------------------

def _anthropic_media(block: dict) -> dict:
    source = block.get("source") or {}
    if source.get("type") == "base64":
        return {"inlineData": {"mimeType": source.get("media_type", ""), "data": source.get("data", "")}}
    return {"fileData": {"fileUri": source.get("url") or source.get("file_id") or ""}}


def _anthropic_result(block: dict, names: dict) -> dict:
    content = block.get("content")
    media = [_anthropic_media(item) for item in content or () if isinstance(item, dict)
             and item.get("type") in ("image", "document") and isinstance(item.get("source"), dict)] \
        if isinstance(content, list) else []
    if block.get("type") == "tool_result":
        text = _text_of(content)
    else:  # server tool results (web_search_tool_result, …) hold structured content
        text = content if isinstance(content, str) else _json_text(content)
    call_id = block.get("tool_use_id")
    return function_response_part(call_id, names.get(call_id), text, is_error=bool(block.get("is_error")), nested=media)


def _anthropic_part(block: object) -> dict | None:
    if isinstance(block, str):
        return {"text": block}
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text":
        return {"text": block.get("text", "")}
    if kind == "thinking":
        return {"text": block.get("thinking", ""), "thought": True}
    if kind in ("tool_use", "server_tool_use"):
        return {"functionCall": {"id": block.get("id"), "name": block.get("name"), "args": block.get("input")}}
    if kind in ("image", "document") and isinstance(block.get("source"), dict):
        return _anthropic_media(block)
    return None


def anthropic(messages: list, system: object = None) -> Iterator[dict]:
    names = {
        block.get("id"): block.get("name")
        for message in messages if isinstance(message, dict) and isinstance(message.get("content"), list)
        for block in message["content"] if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use")
    }
    rounds = _Rounds()
    if system:
        yield from rounds.content("user", [{"text": _text_of(system)}])
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = "model" if message.get("role") == "assistant" else "user"
        content = message.get("content")
        parts: list[dict] = []
        for block in content if isinstance(content, list) else [content]:
            if isinstance(block, dict) and str(block.get("type", "")).endswith("tool_result"):
                rounds.add_result(_anthropic_result(block, names))
                continue
            part = _anthropic_part(block)
            if part is not None:
                parts.append(part)
        yield from rounds.content(role, parts)
    yield from rounds.flush()


# --- Gemini API ----------------------------------------------------------------

def gemini_api(contents: Iterable) -> Iterator[dict]:
    """Already neutral; the legacy `function` role is the user side of a tool round."""
    for content in contents:
        if isinstance(content, dict) and content.get("role") == "function":
            content = {**content, "role": "user"}
        yield content


CONVERTERS = {OPENAI: openai_chat, OPENAI_RESPONSES: openai_responses, ANTHROPIC: anthropic, GEMINI_API: gemini_api}


def detect_dialect(items: list) -> str | None:
    """Which API a message list is written for, from the shapes its items use; None if any would do.

    Every item is looked at before deciding: Claude Code sends a `role: "system"`
    message among Anthropic blocks, so the strongest evidence wins, not the first.
    """
    evidence = set()
    for item in items:
        if not isinstance(item, dict):
            continue
        if "parts" in item:
            evidence.add(GEMINI_API)
        elif item.get("type") in RESPONSES_ITEM_TYPES:
            evidence.add(OPENAI_RESPONSES)
        elif _has_anthropic_blocks(item.get("content")):
            evidence.add(ANTHROPIC)
        elif item.get("role") in ("tool", "function", "system", "developer") or item.get("tool_calls"):
            evidence.add(OPENAI)
    return next((dialect for dialect in (GEMINI_API, OPENAI_RESPONSES, ANTHROPIC, OPENAI) if dialect in evidence), None)


def _has_anthropic_blocks(content: object) -> bool:
    return isinstance(content, list) and any(
        isinstance(block, dict) and (block.get("type") in ANTHROPIC_BLOCK_TYPES
                                     or block.get("type") in ("image", "document") and "source" in block)
        for block in content
    )
