"""Read Contents and Parts of any shape without converting or copying them.

Histories arrive as plain dicts (camelCase from JSON recordings, snake_case from
some Python hosts) or as attribute objects (google-genai `types.Content` and
`types.Part`). The analysis reads fields through these accessors, so a live host's
objects are never rebuilt, and JavaScript's `??` is mirrored by returning None
for both a missing and a null field.
"""

from __future__ import annotations

from collections.abc import Mapping

# camelCase field -> snake_case spelling used by Python SDKs.
_SNAKE = {
    "functionResponse": "function_response",
    "functionCall": "function_call",
    "inlineData": "inline_data",
    "fileData": "file_data",
}


def field(obj: object, name: str) -> object:
    """`obj[name]` (or its snake_case twin) for a mapping, else the attribute; None if absent."""
    if isinstance(obj, Mapping):
        value = obj.get(name)
        if value is None:
            snake = _SNAKE.get(name)
            if snake is not None:
                value = obj.get(snake)
        return value
    if obj is None or isinstance(obj, (str, int, float, list, tuple)):
        return None
    snake = _SNAKE.get(name)
    if snake is not None:
        value = getattr(obj, snake, None)
        if value is not None:
            return value
    return getattr(obj, name, None)


def content_parts(content: object) -> object:
    """`content.parts ?? []` — may return a non-list; callers check."""
    parts = field(content, "parts")
    return () if parts is None else parts


def content_role(content: object) -> str | None:
    role = field(content, "role")
    return role if isinstance(role, str) else None


def function_response(part: object) -> object:
    return field(part, "functionResponse")


def response_payload(fr: object) -> object:
    """`functionResponse.response`, which holds `output` or `error`."""
    return field(fr, "response")


def response_output(response: object) -> object:
    return field(response, "output")


def response_error(response: object) -> object:
    return field(response, "error")
