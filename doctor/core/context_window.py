"""The model's context window, where the agent tells doctor its size.

doctor never guesses a window from a model name. Three agents state it:
- Codex CLI writes `model_context_window` in each `token_count` event of the rollout (the reader keeps
  the last one: the model in use);
- Claude Code and Qwen Code hand their status-line command `context_window.context_window_size`
  with every call; `doctor statusline` shows the share at once and leaves the number in its cache
  folder (`doctor.statusline.window`) for the summary `/doctor:memory` prints later.
The share is the tool results' tokens by the agent's own estimate (Qwen's chars ÷ 4 for a Qwen
session) over the window's tokens (`doctor.report.window` words it).
"""

from __future__ import annotations

from msgspec import Struct

CODEX_ROLLOUT = "model_context_window in the rollout's token_count events"
STATUS_LINE = {"claude": "Claude Code's status line (context_window.context_window_size)",
               "qwen": "Qwen Code's status line (context_window.context_window_size)"}
# A window doctor believes: a positive whole number of tokens, not absurdly large (hostile input).
MAX_WINDOW_TOKENS = 100_000_000


class ContextWindow(Struct, frozen=True):
    """The window's size in tokens, and who told it."""

    tokens: int
    told_by: str

    def share(self, tokens: float) -> float:
        return tokens / self.tokens

    def to_json(self, tokens: float) -> dict:
        return {"tokens": self.tokens, "toldBy": self.told_by, "share": round(self.share(tokens), 6)}


def window_tokens(value: object) -> int | None:
    """`value` when it is a window size doctor believes, else None."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_WINDOW_TOKENS:
        return None
    return value


def from_session_meta(agent: str, meta: dict) -> ContextWindow | None:
    """The window a session file states (a Codex rollout's `context_window`, its reader's meta), else None."""
    tokens = window_tokens(meta.get("context_window")) if agent == "codex" else None
    return ContextWindow(tokens, CODEX_ROLLOUT) if tokens is not None else None


def from_status_payload(agent: str, payload: dict) -> ContextWindow | None:
    """The window a status-line payload states (Claude Code, Qwen Code), else None."""
    window = payload.get("context_window")
    tokens = window_tokens(window.get("context_window_size")) if isinstance(window, dict) else None
    return ContextWindow(tokens, STATUS_LINE[agent]) if tokens is not None and agent in STATUS_LINE else None
