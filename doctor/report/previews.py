"""Bounded, masked, inert previews of the largest results, for `--include-previews` only.

The report keeps no payload text (that is what makes it paste-safe), so a preview
re-reads the session: the history is walked again up to the last wanted result,
and only the head of each wanted output string is kept. Secrets are masked on a
wider window than the preview, so a key cut by the preview's edge is still masked.
"""

from __future__ import annotations

from dataclasses import dataclass

from doctor.core.parts import (
    content_parts,
    function_response,
    response_error,
    response_output,
    response_payload,
)
from doctor.report.inert import inert
from doctor.report.masking import mask_secrets
from doctor.report.paths import paths_in_text

PREVIEW_CHARS = 400
_MASK_WINDOW = 8192


@dataclass(frozen=True)
class Preview:
    ordinal: int
    text: str  # masked and inert
    truncated: bool  # the output goes on beyond the preview

    def to_json(self) -> dict:
        return {"ordinal": self.ordinal, "text": self.text, "truncated": self.truncated}


def _visible_text(part: object) -> str | None:
    """The output (or error) string the model sees for a functionResponse part."""
    response = response_payload(function_response(part))
    for value in (response_output(response), response_error(response)):
        if isinstance(value, str):
            return value
    return None


def _preview(ordinal: int, text: str, limit: int, path_style: str) -> Preview:
    masked = mask_secrets(text[:_MASK_WINDOW])
    shown = paths_in_text(inert(masked[:limit]), path_style)
    return Preview(ordinal, shown, len(masked) > limit or len(text) > _MASK_WINDOW)


def collect_previews(session, results, limit: int = PREVIEW_CHARS, path_style: str = "short") -> dict[int, Preview]:
    """Previews of `results` (ResultMeasure rows) by ordinal; results whose text is gone are left out.

    Paths inside the text are shown as `path_style` (--paths) asks, like the rest of the report.
    """
    wanted: dict[int, list[tuple[int, int]]] = {}
    for result in results:
        wanted.setdefault(result.content_index, []).append((result.part_index, result.ordinal))
    if not wanted or session is None:
        return {}
    last = max(wanted)
    previews: dict[int, Preview] = {}
    for content_index, content in enumerate(session.history()):
        if content_index > last:
            break
        parts = content_parts(content)
        for part_index, ordinal in wanted.get(content_index, ()):
            if isinstance(parts, (list, tuple)) and part_index < len(parts):
                text = _visible_text(parts[part_index])
                if text is not None:
                    previews[ordinal] = _preview(ordinal, text, limit, path_style)
    return previews
