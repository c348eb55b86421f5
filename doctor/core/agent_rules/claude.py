"""Claude Code 2.1.332's limits on what a tool result may put in the model's context.

Read from the client's own code (the native binary's embedded JavaScript; the
test in tests/reference/test_client_budgets.py extracts them again from the
installed package):
- a result longer than its tool's persistence threshold is saved to
  `tool-results/<id>.txt` and the model gets a `<persisted-output>` stub with a
  2,000-byte preview. The threshold is `l3(name, maxResultSizeChars, ceiling)`:
  `min(maxResultSizeChars, ceiling)`, the ceiling 50,000 (`mw`) unless the tool
  sets `persistenceThresholdCeiling`; a tool whose `maxResultSizeChars` is
  Infinity (Read) is never persisted. A remote flag (`tengu_velvet_ibis`) can
  set other per-tool thresholds; doctor cannot see it.
- Bash: `maxResultSizeChars` is `bashOutputMaxChars` from settings, clamped to
  4,000–128,000, else 30,000; its ceiling is 128,000. `BASH_MAX_OUTPUT_LENGTH`
  (default 30,000, capped at 150,000) only sizes the read-back window.
- Read: refuses a file over 262,144 bytes (the model gets `File content (…KB)
  exceeds maximum allowed size (256KB)…`); a file over
  `CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS` tokens (default 25,000, counted by
  the API's count_tokens) is cut to the lines that fit, with no marker in the
  result (`toolUseResult.file.truncatedByTokenCap`, and a separate
  `read_truncation_notice` message): recorded in tests/recordings/claude/limits.
- MCP tools: `MAX_MCP_OUTPUT_TOKENS` (default 25,000) tokens; above it the result
  is saved and the model gets `Error: result (N characters) exceeds maximum
  allowed tokens. Output has been saved to …`. Claude's own char cap for it is
  tokens × 4 (`S9e()`), used here to convert. A result under that limit still
  meets the persistence gate: the MCP tool template declares maxResultSizeChars
  1e5, so above 50,000 chars it is persisted (recorded in
  tests/recordings/claude/raised-limits: MAX_MCP_OUTPUT_TOKENS=60000 let a
  152,513-char result past the token check, and Claude persisted it). The MCP
  budget is therefore min(tokens × 4, 50,000) chars.

Settings are read where Claude Code reads them: `$CLAUDE_CONFIG_DIR/settings.json`
(default `~/.claude`), `<project>/.claude/settings.json` and
`<project>/.claude/settings.local.json`, later files winning; an `env` block in
them counts as the environment (Claude copies it into its process env at start).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from doctor.core.agent_homes import CLAUDE, agent_homes
from doctor.core.agent_rules.model import (
    CHARS,
    TOKENS,
    AgentBudget,
    AgentRules,
    ToolRule,
    positive_int,
)
from doctor.core.budgets import is_mcp_tool_name
from doctor.core.sentinels import MICROCOMPACTED, PERSISTED_STUB, SENTINEL_PREFIXES
from doctor.core.settings import deep_merge, read_settings_file

AGENT = CLAUDE
CLIENT = "Claude Code"
VERSION = "2.1.332"
DEFAULT = f"built-in default of {CLIENT} {VERSION}"

PERSISTENCE_CEILING = 50_000  # `mw`
PREVIEW_BYTES = 2_000  # `r$`
BASH_DEFAULT = 30_000  # `ATs`
BASH_CLAMP = (4_000, 128_000)  # `GWo`, `RLt`
BASH_READ_BACK_CAP = 150_000  # `nBi`
READ_MAX_TOKENS = 25_000  # `esa`
READ_MAX_BYTES = 262_144  # `N7t`
MCP_MAX_TOKENS = 25_000  # `E` beside MAX_MCP_OUTPUT_TOKENS
MCP_CHARS_PER_TOKEN = 4  # `S9e() = d() * 4`
MCP_MAX_RESULT_SIZE_CHARS = 100_000  # the MCP tool template's (`isMcp:!0, name:"mcp"`) maxResultSizeChars
# Claude's words for the layers doctor recognises: both the `<persisted-output>` stub and the MCP
# "Output has been saved to" notice point into the session's tool-results/ folder.
LAYER_NAMES = {PERSISTED_STUB: "persisted to tool-results/", MICROCOMPACTED: "cleared (microcompact)"}
# maxResultSizeChars per built-in tool, as 2.1.332 declares it.
MAX_RESULT_SIZE_CHARS: Mapping[str, float] = {
    "Read": math.inf,
    "Grep": 20_000,
    "Glob": 100_000,
    "Edit": 100_000,
    "Write": 100_000,
    "NotebookEdit": 100_000,
    "TodoWrite": 100_000,
    "WebSearch": 100_000,
    "WebFetch": 50_000,
    "Agent": 100_000,
    "Skill": 100_000,
}
RULE = ("A result is oversized when the model got more than the tool's persistence threshold "
        "(min(maxResultSizeChars, 50,000); Bash: bashOutputMaxChars or 30,000; Read: its token limit; "
        "MCP: min(MAX_MCP_OUTPUT_TOKENS × 4, 50,000) chars) and Claude Code did not persist, refuse or clear it.")


def settings_files(project_dir: Path | None, env: Mapping[str, str]) -> list[Path]:
    files = [agent_homes(env)[CLAUDE] / "settings.json"]
    if project_dir is not None:
        files += [project_dir / ".claude" / "settings.json", project_dir / ".claude" / "settings.local.json"]
    return files


def load(project_dir: Path | None, env: Mapping[str, str], extra_files: tuple[Path, ...] = (),
         overrides: Mapping[str, float] | None = None, use_default_files: bool = True) -> AgentRules:
    merged: dict = {}
    used: list[str] = []
    origin: dict[str, str] = {}  # key -> file it came from
    for path in (settings_files(project_dir, env) if use_default_files else []) + list(extra_files):
        if not path.is_file():
            continue
        data = read_settings_file(path)
        for key in data:
            origin[key] = str(path)
        for key in (data.get("env") or {}) if isinstance(data.get("env"), Mapping) else ():
            origin["env." + key] = str(path)
        merged = deep_merge(merged, data)
        used.append(str(path))
    settings_env = merged.get("env") if isinstance(merged.get("env"), Mapping) else {}

    def env_value(name: str) -> tuple[object, str] | None:
        if name in settings_env:
            return settings_env[name], f"env.{name} in {origin.get('env.' + name)}"
        if name in env:
            return env[name], f"{name} (environment)"
        return None

    bash = _bash(merged.get("bashOutputMaxChars"), origin.get("bashOutputMaxChars"))
    read = _tokens_budget(env_value("CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS"), READ_MAX_TOKENS,
                          "chars ÷ 4 (doctor's estimate: Claude counts Read tokens itself)", 4)
    mcp = _mcp(_tokens_budget(env_value("MAX_MCP_OUTPUT_TOKENS"), MCP_MAX_TOKENS,
                              "× 4, Claude Code's own char cap for MCP results", MCP_CHARS_PER_TOKEN))
    tools = [ToolRule("Bash", bash, frozenset({"Bash"})), ToolRule("Read", read, frozenset({"Read"})),
             ToolRule("MCP tools (mcp__*)", mcp, matches=is_mcp_tool_name)]
    for name, declared in MAX_RESULT_SIZE_CHARS.items():
        if name != "Read":
            threshold = min(declared, PERSISTENCE_CEILING)
            tools.append(ToolRule(name, AgentBudget(threshold, CHARS, threshold, "default",
                                                    f"{DEFAULT}: maxResultSizeChars {declared:,.0f}, "
                                                    f"persisted above {threshold:,.0f}"), frozenset({name})))
    fallback = ToolRule("other tools", AgentBudget(PERSISTENCE_CEILING, CHARS, PERSISTENCE_CEILING, "default",
                                                   f"{DEFAULT}: persistence threshold for any other tool"))
    read_back = env_value("BASH_MAX_OUTPUT_LENGTH")
    read_back_chars = min(positive_int(read_back[0]) or BASH_DEFAULT, BASH_READ_BACK_CAP) if read_back else BASH_DEFAULT
    extras = (("BASH_MAX_OUTPUT_LENGTH (Bash read-back window)",
               AgentBudget(read_back_chars, CHARS, read_back_chars, "env" if read_back else "default",
                           read_back[1] if read_back else DEFAULT)),
              ("persisted-output preview", AgentBudget(PREVIEW_BYTES, "bytes", PREVIEW_BYTES, "default", DEFAULT)))
    return AgentRules(AGENT, CLIENT, VERSION, tuple(tools), fallback, RULE, 0, dict(overrides or {}),
                      extras, tuple(used), exempt_prefixes=SENTINEL_PREFIXES, layer_names=LAYER_NAMES)


def _mcp(tokens: AgentBudget) -> AgentBudget:
    """The MCP token limit, held to the persistence gate every MCP result meets after it."""
    gate = min(MCP_MAX_RESULT_SIZE_CHARS, PERSISTENCE_CEILING)
    if tokens.chars <= gate:
        return tokens
    return AgentBudget(tokens.value, TOKENS, gate, tokens.source, tokens.detail,
                       f"{tokens.conversion}; persisted above {gate:,} chars (maxResultSizeChars "
                       f"{MCP_MAX_RESULT_SIZE_CHARS:,}, ceiling {PERSISTENCE_CEILING:,})")


def _bash(setting: object, where: str | None) -> AgentBudget:
    value = positive_int(setting)
    if value is None:
        return AgentBudget(BASH_DEFAULT, CHARS, BASH_DEFAULT, "default", f"{DEFAULT}: Bash inline limit")
    clamped = min(max(value, BASH_CLAMP[0]), BASH_CLAMP[1])
    note = "" if clamped == value else f" (clamped from {value:,})"
    return AgentBudget(clamped, CHARS, clamped, "settings", f"bashOutputMaxChars in {where}{note}")


def _tokens_budget(found: tuple[object, str] | None, default: int, conversion: str, per_token: int) -> AgentBudget:
    value = positive_int(found[0]) if found else None
    if value is None:
        return AgentBudget(default, TOKENS, default * per_token, "default", DEFAULT, conversion)
    source = "settings" if " in " in found[1] else "env"
    return AgentBudget(value, TOKENS, value * per_token, source, found[1], conversion)
