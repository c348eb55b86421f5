"""One meaning of "turn" in every agent: the n-th prompt the person typed and sent to the model.

A recording holds more user messages than the person typed: Claude Code's `isMeta` reminders,
local-command echoes and interrupt notices, Gemini CLI's `<session_context>`, Codex's developer
and environment messages, Qwen Code's startup context. Counting every user text as a turn made
the same first prompt "turn 2" in Gemini and "turn 3" in Codex. So each reader, which knows its
agent's records, marks the Contents where a typed prompt starts a turn: `content[TURN] = n`,
counted over the whole session (prompts a compaction dropped from the history still count, so
the first prompt after a compaction keeps its number). A reader also marks the first Content
after a compaction with the turn in progress. The result table reads the marks
(`turns_marked`); a history no reader marked (a live host, a message dump) is counted as
before: a user Content with text and no tool result opens a turn.

Results before the first typed prompt (a subagent's file, a history that starts with a summary)
are in turn 0.
"""

from __future__ import annotations

# The key a reader sets on a Content dict it builds: from this Content on, results belong to the
# person's n-th prompt. Not a Gemini Content field: nothing else reads it.
TURN = "doctorTurn"


def mark(content: dict, turn: int) -> dict:
    """`content` marked as where the person's `turn`-th prompt starts (returned for chaining)."""
    content[TURN] = turn
    return content
