"""A scripted model: the next step of a fixed plan for each request, like tests/fakes/openai_chat.py.

A step is a list of tool calls (run, then answered with their results) or a
string (the final answer of the turn). Real models are not needed to produce
real tool output.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path


class ScriptedModel:
    def __init__(self, steps: list):
        self._steps = iter(steps)
        self._call_ids = itertools.count(1)

    @classmethod
    def from_file(cls, path: Path) -> ScriptedModel:
        return cls(json.loads(Path(path).read_text())["steps"])

    def respond(self, history: list) -> dict:
        """The model's Content for the history so far: function calls or text."""
        step = next(self._steps, "(the script has no more steps)")
        if isinstance(step, str):
            return {"role": "model", "parts": [{"text": step}]}
        return {
            "role": "model",
            "parts": [
                {"functionCall": {"id": f"call_{next(self._call_ids):04d}", "name": call["name"], "args": call["args"]}}
                for call in step
            ],
        }
