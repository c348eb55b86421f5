"""Which Claude Code `user` records are prompts the person typed (a turn each, `doctor.core.turns`).

Claude Code 2.1.332 classifies a `user` record with no `tool_result` block as `user_summary` when
`isCompactSummary`, `user_meta` when `isMeta`, else `user_prompt`. Among its `user_prompt`s are
records Claude writes itself, which the person never typed:
- interrupt notices (`[Request interrupted by user]`, `… for tool use]`);
- what a local command printed (`<local-command-stdout>`, `<local-command-stderr>`), the output of
  `!` shell mode (`<bash-stdout>`, `<bash-stderr>`), background task notices (`<task-notification>`);
- a local command's own line (`<command-name>/compact</command-name>`, `/mcp`, `/model`), which
  runs in Claude Code and is not sent to the model as a prompt: Claude writes it right after an
  `isMeta` `<local-command-caveat>` record. A prompt command (a custom `/doctor:memory`) has no
  caveat before it and is a prompt (the model answers it).
Subagent (`isSidechain`) prompts come from the model, not the person.
"""

from __future__ import annotations

CLAUDE_WRITTEN = (
    "[Request interrupted by user",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
)
LOCAL_COMMAND_CAVEAT = "<local-command-caveat>"
COMMAND_LINE = ("<command-name>", "<command-message>")


def first_text(content: object) -> str | None:
    """The prompt's text: the content string, or its first text block's."""
    if isinstance(content, str):
        return content
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            return block["text"]
    return None


class PromptCounter:
    """Counts the typed prompts of one thread as its `user` records come, in file order."""

    __slots__ = ("count", "_after_caveat")

    def __init__(self) -> None:
        self.count = 0
        self._after_caveat = False

    def typed(self, content: object, *, meta: bool, summary: bool, sidechain: bool) -> bool:
        """Whether this `user` record (no tool results in it) is a prompt the person typed; counts it."""
        text = (first_text(content) or "").lstrip()
        after_caveat, self._after_caveat = self._after_caveat, meta and text.startswith(LOCAL_COMMAND_CAVEAT)
        if meta or summary or sidechain or text.startswith(CLAUDE_WRITTEN):
            return False
        if after_caveat and text.startswith(COMMAND_LINE):
            return False  # a local command: it runs in Claude Code, the model gets no prompt
        self.count += 1
        return True
