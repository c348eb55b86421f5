"""One Claude Code conversation thread rebuilt as the API request holds it.

The recording differs from the request in three ways this class undoes:
- streaming split: one API message is written as several `assistant` lines
  sharing `message.id`, and tool results may be written between them (the
  tools ran while the message was still streaming). Lines with the id of the
  latest model Content are merged into it, wherever they fall;
- parallel results: each result is its own `user` line, in completion order;
  the request merges consecutive results into one user message, and so do we;
- compaction: `compact_boundary` means the model keeps only what follows it;
  `microcompact_boundary` clears the listed results in the request to
  `[Old tool result content cleared]` while the file keeps the original text.
What compaction and microcompaction took out is tallied, never kept.
"""

from __future__ import annotations

from doctor.core.sentinels import MICROCOMPACT_CLEARED
from doctor.core.jsvalues import js_len
from doctor.sources.claude_codex_common import Tally, result_text


class ClaudeThread:
    """Contents of one thread (the main conversation, or an inline sidechain)."""

    def __init__(self) -> None:
        self.contents: list[dict] = []
        self.results_by_id: dict[str, dict] = {}
        self.seen = Tally()  # every result the file holds for this thread
        self.active = Tally()  # results after the last compact boundary
        self.compacted = Tally()  # results before it
        self.microcompacted = Tally()  # originals of results cleared by microcompaction
        self.boundaries = 0
        self._model: dict | None = None
        self._model_id: object = None
        self._results: dict | None = None

    def add_assistant(self, message_id: object, parts: list) -> None:
        if message_id is not None and message_id == self._model_id and self._model is not None:
            self._model["parts"].extend(parts)
            return
        self._model = {"role": "model", "parts": parts}
        self._model_id = message_id
        self._results = None
        self.contents.append(self._model)

    def add_user(self, parts: list, has_results: bool) -> None:
        self._track_results(parts)
        if has_results and self._results is not None:
            self._results["parts"].extend(parts)
            return
        content = {"role": "user", "parts": parts}
        self.contents.append(content)
        self._results = content if has_results else None
        if not has_results:
            self._model = self._model_id = None

    def _track_results(self, parts: list) -> None:
        for part in parts:
            fr = part.get("functionResponse") if isinstance(part, dict) else None
            if fr is not None:
                size = js_len(result_text(fr))  # measured once for both tallies
                self.seen.add(fr, size)
                self.active.add(fr, size)
                if isinstance(fr.get("id"), str):
                    self.results_by_id[fr["id"]] = fr

    def compact(self) -> None:
        """A compact boundary: everything before it leaves the model's context."""
        self.compacted.absorb(self.active)
        self.active = Tally()
        self.boundaries += 1
        self.contents = []
        self.results_by_id = {}
        self._model = self._model_id = self._results = None

    def microcompact(self, tool_ids: object) -> None:
        """Clear the listed results as the next request will show them."""
        for tool_id in tool_ids if isinstance(tool_ids, list) else ():
            fr = self.results_by_id.get(tool_id) if isinstance(tool_id, str) else None
            if fr is None or fr["response"].get("output") == MICROCOMPACT_CLEARED:
                continue
            self.microcompacted.add(fr)
            fr["response"] = {"output": MICROCOMPACT_CLEARED}
            fr.pop("parts", None)
