"""`doctor mcp`'s server: the session's figures and its spilled outputs as MCP tools over stdio.

An agent that registered doctor as an MCP server can ask for the compact summary
(`memory_report`), the biggest results with where they spilled (`largest_results`), and page a
spilled output in (`read_spilled`) instead of re-running the tool that produced it. Each tool
reuses the code of the command a user would run (`doctor slash`, `doctor memory --json`,
`doctor spill show`), so the figures, the containment rules and the read_file paging are the
same. Only this module imports the `mcp` SDK (the `[mcp]` extra): `doctor memory` never loads it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from doctor.commands.spill import DEFAULT_LIMIT, ShowRefused, show_rows

# What a result row carries: figures and where it spilled, never the payload.
RESULT_FIELDS = ("ordinal", "turn", "tool", "chars", "tokens", "budget", "budgetRatio", "oversized", "layer")
OWN_FIELDS = ("sent", "sentTokens")  # another agent's session: what its model received, in its own measure


def build_server(spill_roots: list[Path]) -> MCPServer:
    server = MCPServer("doctor", log_level="WARNING", instructions=(
        "doctor reports what this coding-agent session keeps of its tool outputs. memory_report: the compact "
        "summary; largest_results: the biggest results and their spill files; read_spilled: page a spilled "
        "output (zero-based line offset, line limit) instead of re-running its tool."))

    @server.tool()
    def memory_report(session: str | None = None, top: int = 3) -> str:
        """The compact memory summary of a session (default: the newest session of this directory)."""
        from doctor.commands.slash import summary

        if not 1 <= top <= 50:
            raise ToolError("top takes 1 to 50")
        text, _code = summary(_session_path(session), top=top)
        return text

    @server.tool(structured_output=True)
    def largest_results(session: str | None = None, top: int = 10) -> dict[str, Any]:
        """The `top` largest tool results of a session: size, budget, retention layer and spill files (no text)."""
        return largest(_session_path(session), top)

    @server.tool()
    def read_spilled(path: str, offset: int = 0, limit: int = DEFAULT_LIMIT) -> str:
        """Lines offset … offset+limit-1 of a spilled tool output (read_file semantics, zero-based), inert."""
        if offset < 0 or limit < 1:
            raise ToolError("offset must be ≥ 0 and limit ≥ 1")
        try:
            return "\n".join(show_rows(Path(path), offset, limit, spill_roots=spill_roots))
        except ShowRefused as exc:
            hint = ("; the user can allow that folder by starting the server as `doctor mcp --spill-root DIR`"
                    if exc.outside else "")
            raise ToolError(f"{exc}{hint}") from None

    return server


def largest(path: Path, top: int) -> dict:
    """`doctor memory --json`'s `retention.largest` rows, trimmed to figures, plus each spill file found."""
    from doctor.assemble import ReportOptions, report_with_spill_audit
    from doctor.config import load_budget_overrides
    from doctor.sources.base import SourceError
    from doctor.sources.registry import open_session

    if not 1 <= top <= 200:
        raise ToolError("top takes 1 to 200")
    try:
        session = open_session(path)
        report = report_with_spill_audit(session, ReportOptions(tool_budgets=load_budget_overrides(),
                                                                path_style="full", top=top))
    except (SourceError, ValueError) as exc:
        raise ToolError(str(exc)) from None
    data = report.to_dict()
    found: dict[int, list[str]] = {}
    for pointer in data.get("spill", {}).get("pointers", []):
        where = (pointer.get("resolution") or {}).get("found")
        if where and pointer.get("ordinal") is not None:
            found.setdefault(pointer["ordinal"], []).append(os.path.abspath(where))
    rows = [{**{key: row[key] for key in RESULT_FIELDS}, **{key: row[key] for key in OWN_FIELDS if key in row},
             "spill": {"written": (row["pointer"] or {}).get("paths", []), "found": found.get(row["ordinal"], [])}}
            for row in data["retention"].get("largest", [])]
    answer = {"session": str(path), "agent": data["source"]["agent"], "sessionId": data["source"]["sessionId"],
              "results": rows}
    own = data.get("agentMeasure")
    if own is not None:  # Claude Code, Gemini CLI, Codex: `sent` / `sentTokens` are in the agent's own measure
        answer["measure"] = {"unit": own["unit"], "tokenEstimate": own["tokenEstimate"]}
    return answer


def _session_path(session: str | None) -> Path:
    if session:
        return Path(session)
    from doctor.sources.discovery import newest_for_cwd

    ref = newest_for_cwd()
    if ref is None:
        raise ToolError(f"no agent session found for {os.getcwd()}; pass session=<path of a session file>")
    return ref.path
