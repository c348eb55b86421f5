"""What an after-tool hook's payload becomes by the time the model gets it, per agent.

An agent hands its hook the tool's response before its own limits act on it (recorded with the
real clients in tests/integrations/hook_payloads.py, which rebuilds each payload from a recording):
- Claude Code 2.1.332 passes the tool's result object, the transcript's `toolUseResult`. A Bash
  output it persisted says so (`persistedOutputPath`); a Read is the lines the tool kept under its
  token cap, which reach the model with `N\\t` line numbers; any other result longer than the
  tool's persistence threshold becomes a `<persisted-output>` stub after the hook.
- Gemini CLI 0.61.0 passes `llmContent` whole: a `run_shell_command` or MCP output longer than
  `tools.truncateToolOutputThreshold` then reaches the model as its "Output too large. Showing
  first … and last …" notice. Other tools are not cut.
- Codex 0.171.0 passes the exec output already cut to the truncation policy, without the
  `Chunk ID …` header it puts in front for the model (inside the rule's 1,000-char allowance),
  and calls `exec_command` `Bash`.
`sent_text` is the text the model gets (None: persisted), `agent_gate` the size above which the agent
still bounds it itself, `rules_name` the name that agent's rules know the tool by.
"""

from __future__ import annotations

import math

from doctor.core.agent_rules.model import AgentRules

MODEL_FIELDS = ("llmContent", "output", "content", "result", "text")
CODEX_TOOL_NAMES = {"Bash": "exec_command"}  # the hook's name -> the rollout's (what `doctor memory` sees)


def response_text(response) -> str:
    """The model-facing text of a tool response: the agent's model field where it has one, else every string."""
    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        for key in MODEL_FIELDS:
            if key in response:
                return response_text(response[key])
        if "stdout" in response or "stderr" in response:
            return "".join(value for value in (response.get("stdout"), response.get("stderr")) if isinstance(value, str))
        return "".join(response_text(value) for value in response.values())
    if isinstance(response, list):
        return "".join(response_text(value) for value in response)
    return ""


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def rules_name(agent: str, tool: str) -> str:
    """The name the agent's rules (and its session file) give the tool the hook calls `tool`."""
    return CODEX_TOOL_NAMES.get(tool, tool) if agent == "codex" else tool


def sent_text(agent: str, tool: str, response) -> str | None:
    """The text the model will get, as far as the payload alone tells (None: the agent persisted it)."""
    if agent == "claude" and isinstance(response, dict):
        if response.get("persistedOutputPath"):
            return None
        file = response.get("file")
        if tool == "Read" and response.get("type") == "text" and isinstance(file, dict) \
                and isinstance(file.get("content"), str):
            start = file.get("startLine") if isinstance(file.get("startLine"), int) else 1
            return "\n".join(f"{number}\t{line}" for number, line in enumerate(file["content"].split("\n"), start))
    return response_text(response)


def agent_gate(agent: str, name: str, rules: AgentRules) -> float:
    """Chars above which the agent itself bounds a result of tool `name` after the hook ran."""
    rule = rules.rule_for(name)
    if agent == "claude":
        # Read is cut inside the tool; a persisted Bash output says so in the payload (`sent_text`)
        return math.inf if rule.label in ("Read", "Bash") else rule.budget.chars
    if agent == "gemini":
        return math.inf if rule is rules.fallback else rule.budget.chars  # shell and MCP output only
    return math.inf  # Codex: the payload is already cut
