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
from doctor.core.turns import mark
from doctor.sources.claude.prompts import PromptCounter
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
        self.prompts = PromptCounter()  # the person's prompts so far, across compactions (turns)
        self._resumed = False  # a compact boundary just passed: the next Content carries the turn in progress
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
        self._append(self._model)

    def add_user(self, parts: list, has_results: bool, typed: bool = False) -> None:
        """A `user` record's parts; `typed`: it is the person's next prompt (`PromptCounter` counted it)."""
        self._track_results(parts)
        if has_results and self._results is not None:
            self._results["parts"].extend(parts)
            return
        content = {"role": "user", "parts": parts}
        self._append(content)
        if typed:
            mark(content, self.prompts.count)
        self._results = content if has_results else None
        if not has_results:
            self._model = self._model_id = None

    def _append(self, content: dict) -> None:
        if self._resumed and self.prompts.count:
            mark(content, self.prompts.count)
        self._resumed = False
        self.contents.append(content)

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
        self._resumed = True
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
