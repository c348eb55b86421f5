"""Tool output budgets as Qwen Code 0.24.4 resolves them, each with its source.

Qwen compares every retained result with its own tool's `maxOutputChars`,
looked up by canonical registry name, and falls back to the global threshold
when the tool declares none or is not registered at the time `/doctor` runs.
The tables below are read from the 0.24.4 bundle (see
`shared/reference/qwen-0.24.4-facts.md` §a, §f, §g). Reports say where each
number came from, so a budget carries its `source`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from msgspec import Struct, field

from doctor.core.sentinels import ALREADY_TRUNCATED_PREFIXES

INFINITE = math.inf

DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD = 25_000
DEFAULT_TRUNCATE_TOOL_OUTPUT_LINES = 1_000
DEFAULT_SHELL_OUTPUT_THRESHOLD = 30_000
DEFAULT_TOOL_OUTPUT_BATCH_BUDGET = 200_000
GATE_HEADROOM = 3_000
MCP_TOOL_MAX_OUTPUT_CHARS = 500_000
COMBINED_PASS_TOLERANCE_FACTOR = 2
TRUNCATION_FALLBACK_ENVELOPE_SLACK = 500
MAX_PERSISTED_FILE_BYTES = 50 * 1024 * 1024
MAX_PERSISTED_SESSION_BYTES = 500 * 1024 * 1024


class ToolSpec(Struct, frozen=True):
    """One built-in tool: registry name, display name and declared budget.

    `max_output_chars` None means "use the global threshold" (the base class
    default); INFINITE means the tool manages its own size.
    """

    name: str
    display_name: str
    max_output_chars: float | None = None
    registered_by_default: bool = True


SHELL_TOOL = "run_shell_command"

# Tools whose budget differs from the threshold, plus every default-budget tool
# so that display names resolve. `registered_by_default` follows
# `createToolRegistry` in a plain interactive or `-p` session.
BUILTIN_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(SHELL_TOOL, "Shell", DEFAULT_SHELL_OUTPUT_THRESHOLD),
    ToolSpec("read_file", "ReadFile", INFINITE),
    ToolSpec("grep_search", "Grep", 20_000),
    # Registered when a search backend can be derived; a session that used it had one.
    ToolSpec("web_search", "WebSearch", 102_000),
    ToolSpec("agent", "Agent", 32_000),
    ToolSpec("read_mcp_resource", "ReadMcpResource", INFINITE),
    ToolSpec("enter_plan_mode", "EnterPlanMode", INFINITE),
    ToolSpec("exec", "Exec", INFINITE, registered_by_default=False),  # code mode only
    ToolSpec("glob", "Glob"),
    ToolSpec("list_directory", "ListFiles", registered_by_default=False),
    ToolSpec("web_fetch", "WebFetch"),
    ToolSpec("edit", "Edit"),
    ToolSpec("write_file", "WriteFile"),
    ToolSpec("todo_write", "TodoList"),
    ToolSpec("skill", "Skill"),
    ToolSpec("exit_plan_mode", "ExitPlanMode"),
    ToolSpec("ask_user_question", "AskUserQuestion"),
    ToolSpec("tool_call", "ToolCall"),
    ToolSpec("tool_search", "ToolSearch"),
    ToolSpec("list_agents", "ListAgents"),
    ToolSpec("task_stop", "TaskStop"),
    ToolSpec("send_message", "SendMessage"),
    ToolSpec("notebook_edit", "NotebookEdit"),
    ToolSpec("zoom_image", "ZoomImage"),
    ToolSpec("report_findings", "ReportFindings"),
    ToolSpec("enter_worktree", "EnterWorktree"),
    ToolSpec("exit_worktree", "ExitWorktree"),
    ToolSpec("monitor", "Monitor"),
    ToolSpec("lsp", "Lsp"),
    ToolSpec("save_memory", "SaveMemory", registered_by_default=False),
)

# ToolNamesMigration: legacy registry name -> canonical name.
TOOL_NAMES_MIGRATION: Mapping[str, str] = {
    "search_file_content": "grep_search",
    "replace": "edit",
    "task": "agent",
}

# ToolDisplayNamesMigration: legacy display name -> current display name.
TOOL_DISPLAY_NAMES_MIGRATION: Mapping[str, str] = {
    "SearchFiles": "Grep",
    "FindFiles": "Glob",
    "ReadFolder": "ListFiles",
    "Task": "Agent",
    "TodoWrite": "TodoList",
}


def canonical_tool_name(name: str) -> str:
    """Qwen's `canonicalToolName`: the migrated name for a legacy alias, else the name."""
    return TOOL_NAMES_MIGRATION.get(name, name)


def is_mcp_tool_name(name: str) -> bool:
    return name.startswith("mcp__") and name.count("__") >= 2


def mcp_server_of(name: str) -> str | None:
    """Server part of `mcp__<server>__<tool>`, or None for other names."""
    if not is_mcp_tool_name(name):
        return None
    server, _, _ = name[len("mcp__") :].partition("__")
    return server or None


class SetBudget(float):
    """A budget the user gave doctor, remembering where: `[budgets] NAME in <config file>` or `--tool-budget NAME`.

    It is the number everywhere a budget is compared or stored (`float(...)` where a Struct keeps it);
    `origin` is what a report says the budget came from, so doctor's own budget is never credited to the
    agent nor to a flag the user did not pass."""

    origin: str

    def __new__(cls, value: float, origin: str) -> "SetBudget":
        budget = super().__new__(cls, value)
        budget.origin = origin
        return budget


def override_origin(value: float, name: str) -> str:
    """Where an override of tool `name` was set (a plain number: the command line's `--tool-budget`)."""
    return getattr(value, "origin", None) or f"--tool-budget {name}"


class Budget(Struct, frozen=True):
    """A budget in chars (INFINITE allowed) and where it came from.

    source: "tool" (the tool declares it), "mcp" (MCP tool default),
    "threshold" (global fallback), "override" (user flag or config file, `detail` says which);
    other agents' budgets say "default", "env" or "settings" (doctor.core.agent_rules).
    """

    chars: float
    source: str
    detail: str = ""
    # Another agent's rule: oversized above this many raw chars (None: Qwen's 2 × budget + 500).
    oversized_above: float | None = None

    @property
    def finite(self) -> bool:
        return math.isfinite(self.chars)

    def as_json_number(self) -> float | int | None:
        """The budget for JSON output: null when infinite."""
        if not self.finite:
            return None
        return int(self.chars) if float(self.chars).is_integer() else self.chars


class QwenLimits(Struct, frozen=True):
    """Global limits from Qwen settings (`tools.*`), already resolved like Qwen's Config."""

    threshold: float = DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD
    threshold_explicit: bool = False
    line_cap: float = DEFAULT_TRUNCATE_TOOL_OUTPUT_LINES
    batch_budget: float = DEFAULT_TOOL_OUTPUT_BATCH_BUDGET

    @classmethod
    def from_settings(cls, tools_settings: Mapping | None) -> "QwenLimits":
        """Mirror Config: a value ≤ 0 disables (INFINITE); a present key makes the threshold explicit."""
        tools_settings = tools_settings or {}
        raw_threshold = tools_settings.get("truncateToolOutputThreshold")
        return cls(
            threshold=_positive_or_infinite(raw_threshold, DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD),
            threshold_explicit=raw_threshold is not None,
            line_cap=_positive_or_infinite(
                tools_settings.get("truncateToolOutputLines"), DEFAULT_TRUNCATE_TOOL_OUTPUT_LINES
            ),
            batch_budget=_positive_or_infinite(
                tools_settings.get("toolOutputBatchBudget"), DEFAULT_TOOL_OUTPUT_BATCH_BUDGET
            ),
        )

    @property
    def gate_threshold(self) -> float:
        """Results longer than this are persisted to `tool-results/` by the gate."""
        return self.threshold + GATE_HEADROOM

    @property
    def shell_budget(self) -> float:
        """30,000 unless the threshold is set explicitly, then the threshold."""
        return self.threshold if self.threshold_explicit else DEFAULT_SHELL_OUTPUT_THRESHOLD


def _positive_or_infinite(value: object, default: float) -> float:
    if value is None:
        value = default
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return default
    return INFINITE if value <= 0 else value


class BudgetRegistry(Struct, dict=True):
    """The tool registry as Qwen has it when `/doctor memory` runs.

    `mcp_servers` are the configured MCP server names (their tools are
    registered with a 500,000 budget); `extra_registered` adds built-in tools
    registered beyond the defaults; `host_tools` are a live host's own tools
    (replacing built-ins of the same name); `overrides` are the user's per-tool
    budgets (by registry or display name) and win over everything. The lookups
    built from them and the budgets resolved so far are plain attributes (`dict=True`).
    """

    limits: QwenLimits = field(default_factory=QwenLimits)
    mcp_servers: frozenset[str] = frozenset()
    overrides: Mapping[str, float] = field(default_factory=dict)
    extra_registered: frozenset[str] = frozenset()
    host_tools: tuple[ToolSpec, ...] = ()

    def __post_init__(self) -> None:
        registered = [
            spec
            for spec in BUILTIN_TOOLS
            if spec.registered_by_default or spec.name in self.extra_registered
        ]
        registered.extend(self.host_tools)
        self._by_name: dict[str, ToolSpec] = {spec.name: spec for spec in registered}
        self._by_display: dict[str, ToolSpec] = {spec.display_name: spec for spec in registered}
        self._resolved: dict[str, Budget | None] = {}

    @property
    def threshold(self) -> Budget:
        return Budget(self.limits.threshold, "threshold", "tools.truncateToolOutputThreshold")

    # Results starting with these are never oversized (Qwen's analyzer skips them).
    exempt_prefixes = ALREADY_TRUNCATED_PREFIXES

    def registered_budget(self, name: str) -> Budget | None:
        """Qwen's `resolveToolBudgetChars(name)`: registry lookup by canonical name.

        None where Qwen gets `undefined` (unregistered, or no declared budget).
        """
        if name in self._resolved:
            return self._resolved[name]
        budget = self._lookup(name)
        self._resolved[name] = budget
        return budget

    def _lookup(self, name: str) -> Budget | None:
        override = self.overrides.get(name)
        if override is not None:
            return Budget(float(override), "override", override_origin(override, name))
        canonical = canonical_tool_name(name)
        override = self.overrides.get(canonical)
        if override is not None:
            return Budget(float(override), "override", override_origin(override, canonical))
        spec = self._by_name.get(canonical)
        if spec is not None:
            return self._spec_budget(spec)
        server = mcp_server_of(canonical)
        if server is not None and server in self.mcp_servers:
            return Budget(MCP_TOOL_MAX_OUTPUT_CHARS, "mcp", f"MCP server {server}")
        return None

    def _spec_budget(self, spec: ToolSpec) -> Budget | None:
        override = self.overrides.get(spec.name)
        if override is not None:
            return Budget(float(override), "override", override_origin(override, spec.name))
        if spec.name == SHELL_TOOL:
            if self.limits.threshold_explicit:
                return Budget(self.limits.shell_budget, "tool", "shell follows the explicit threshold")
            return Budget(DEFAULT_SHELL_OUTPUT_THRESHOLD, "tool", "shell default")
        if spec.max_output_chars is None:
            return None
        return Budget(spec.max_output_chars, "tool", spec.name)

    def result_budget(self, name: str) -> Budget:
        """The budget Qwen compares a model-history result against."""
        return self.registered_budget(name) or self.threshold

    def display_budget(self, name: str) -> Budget:
        """The budget for a UI `tool_group` item, looked up as Qwen's doctor does:
        by display name, by migrated display name, by registry name, then the threshold.
        """
        override = self.overrides.get(name)
        if override is not None:
            return Budget(float(override), "override", override_origin(override, name))
        for display in (name, TOOL_DISPLAY_NAMES_MIGRATION.get(name, name)):
            spec = self._by_display.get(display)
            if spec is not None:
                budget = self._spec_budget(spec)
                if budget is not None:
                    return budget
                # A display name whose tool declares nothing maps to undefined,
                # and Qwen's `??` chain moves on.
        mcp = self._mcp_display_budget(name)
        if mcp is not None:
            return mcp
        return self.result_budget(name)

    def _mcp_display_budget(self, name: str) -> Budget | None:
        """MCP display names read `<tool> (<server> MCP Server)`."""
        if not name.endswith(" MCP Server)") or "(" not in name:
            return None
        server = name[name.rindex("(") + 1 : -len(" MCP Server)")]
        if server in self.mcp_servers:
            return Budget(MCP_TOOL_MAX_OUTPUT_CHARS, "mcp", f"MCP server {server}")
        return None


def parse_budget_value(text: str) -> float:
    """A budget as the user writes it: an integer, or `inf`/`none`/`-1`/`0` for no limit."""
    lowered = text.strip().lower().replace("_", "").replace(",", "")
    if lowered in ("inf", "infinity", "none", "unlimited"):
        return INFINITE
    value = int(lowered)
    return INFINITE if value <= 0 else value


def parse_tool_budget_overrides(pairs: Iterable[str]) -> dict[str, float]:
    """`NAME=N` pairs from the command line or a config file."""
    overrides: dict[str, float] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"expected NAME=N, got {pair!r}")
        try:
            overrides[name.strip()] = SetBudget(parse_budget_value(value), f"--tool-budget {name.strip()}")
        except ValueError:
            raise ValueError(f"budget for {name.strip()!r} is not a number: {value!r}") from None
    return overrides
