"""Claude Code content blocks → neutral parts, as the Messages API request carries them.

A `tool_result` becomes a functionResponse whose output (or error, with
`is_error`) is the text the model was sent: the `content` string as it stands,
or the `text` blocks of a content list joined with nothing between them (the
API sends them as separate blocks, so no separator is invented). Images in the
list become nested `inlineData` parts; other blocks (`tool_reference`,
`document`, `search_result`, MCP resources) stay nested as they are and are
measured as JSON. `<persisted-output>` stubs are kept verbatim: that stub is
what the model holds, the full output sits in the spill file.
"""

from __future__ import annotations

from doctor.core.agent_measure import TEXT_BLOCKS
from doctor.core.jsvalues import js_len
from doctor.sources.claude_codex_common import CallNames, inline_data_part
from doctor.sources.dumps.dialects import function_response_part


def _media_part(block: dict) -> dict:
    """An image or document block as inlineData when it carries base64 data; else as it stands."""
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "base64" and isinstance(source.get("data"), str):
        return inline_data_part(source.get("media_type"), source["data"])
    return block


def tool_result_text(block: dict) -> tuple[str, list]:
    """The text the model was sent for one `tool_result` block, and its other blocks (nested parts)."""
    content = block.get("content")
    nested: list = []
    if isinstance(content, str):
        return content, nested
    if not isinstance(content, list):
        return "", nested
    texts = []
    for item in content:
        if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
            texts.append(item["text"])
        elif isinstance(item, dict) and item.get("type") in ("image", "document"):
            nested.append(_media_part(item))
        else:
            nested.append(item)
    return "".join(texts), nested


def tool_result_part(block: dict, names: CallNames, line: int | None) -> dict:
    """One `tool_result` block as a functionResponse part (its name joined from the call). With
    several text blocks, their lengths go with it: Claude's own token estimate rounds each one."""
    text, nested = tool_result_text(block)
    part = function_response_part(block.get("tool_use_id"), "", text,
                                  is_error=block.get("is_error") is True, nested=nested)
    content = block.get("content")
    if isinstance(content, list):
        blocks = [js_len(item["text"]) for item in content if isinstance(item, dict) and item.get("type") == "text"
                  and isinstance(item.get("text"), str)]
        if len(blocks) > 1:
            part["functionResponse"][TEXT_BLOCKS] = blocks
    names.attach(part["functionResponse"], line)
    return part


def assistant_parts(blocks: object, names: CallNames, line: int | None) -> list:
    """Model parts of one assistant record; tool calls are remembered for the result join."""
    if isinstance(blocks, str):
        return [{"text": blocks}]
    parts = []
    for block in blocks if isinstance(blocks, list) else ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append({"text": block.get("text") or ""})
        elif kind == "thinking":
            parts.append({"text": block.get("thinking") or "", "thought": True})
        elif kind in ("tool_use", "server_tool_use"):
            names.remember(block.get("id"), block.get("name"))
            parts.append({"functionCall": {"id": block.get("id"), "name": block.get("name"),
                                           "args": block.get("input") or {}}})
        elif isinstance(kind, str) and kind.endswith("_tool_result"):
            # Server tools (web search, code execution) answer inside the assistant message.
            parts.append(tool_result_part(block, names, line))
        elif kind != "redacted_thinking":  # opaque, never shown to doctor's measure
            parts.append(block)
    return parts


def user_parts(content: object, names: CallNames, line: int | None) -> tuple[list, bool]:
    """Parts of one user record and whether it carries tool results."""
    if isinstance(content, str):
        return [{"text": content}], False
    parts = []
    has_results = False
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_result":
            parts.append(tool_result_part(block, names, line))
            has_results = True
        elif kind == "text":
            parts.append({"text": block.get("text") or ""})
        elif kind in ("image", "document"):
            parts.append(_media_part(block))
        else:
            parts.append(block)
    return parts, has_results
