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
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from doctor.commands.spill import MAX_LINE_CHARS, ShowRefused, show_rows
from doctor.integrations.relay import relayed
from doctor.report.inert import inert, inert_line
from doctor.safety.reads import Refused
from doctor.safety.roots import Root, locate, open_contained

# What a result row carries: figures and where it spilled, never the payload.
RESULT_FIELDS = ("ordinal", "turn", "tool", "chars", "tokens", "budget", "budgetRatio", "oversized", "layer")
OWN_FIELDS = ("sent", "sentTokens")  # another agent's session: what its model received, in its own measure

# Caps on one answer, stated in the tool descriptions. 20,000 bytes stays under the smallest limit an agent
# puts on an MCP result before bounding it itself (Qwen Code persists text over 28,000 chars to a new spill
# file; Claude Code saves one over 25,000 tokens; Gemini CLI cuts at 40,000 chars), so a page reaches the
# model whole; 2,000 lines is what the agents' own read_file tools return per call.
MAX_LINES = 2_000
MAX_BYTES = 20_000
# Calls at once per kind: a session report parses a whole session file, a page reads a few blocks.
# Separate pools, so slow reports cannot hold up paging (nor the other way round).
SESSION_CALLS = 2
PAGE_CALLS = 4

T = TypeVar("T")


def build_server(spill_roots: tuple[Root, ...], session_roots: tuple[Root, ...]) -> MCPServer:
    """The server; the roots were resolved once when `doctor mcp` started, never from a tool argument."""
    server = MCPServer("doctor", log_level="WARNING", instructions=(
        "doctor reports what this coding-agent session keeps of its tool outputs. memory_report: the compact "
        "summary; largest_results: the biggest results and their spill files; read_spilled: page a spilled "
        "output (zero-based line offset, line limit) instead of re-running its tool."))
    sessions, pages = anyio.CapacityLimiter(SESSION_CALLS), anyio.CapacityLimiter(PAGE_CALLS)

    # memory_report and read_spilled answer text only: with the SDK's structured copy beside it (`{"result": …}`)
    # Qwen Code hands the model both, and Claude Code only the JSON-escaped copy.
    @server.tool(structured_output=False, description=(
        "The compact memory summary of a session (default: the newest session of this directory). `session`: "
        "the path of a session file of Qwen Code, Claude Code, Gemini CLI or Codex in that agent's own "
        f"session folder; no other file is read. At most {MAX_BYTES:,} bytes."))
    async def memory_report(ctx: Context, session: str | None = None, top: int = 3) -> str:
        if not 1 <= top <= 50:
            raise ToolError("top takes 1 to 50")
        asking = _asking(ctx)
        return await _in_thread(sessions, lambda: _memory_report(_current(_session_file(session, session_roots), asking),
                                                                 top))

    @server.tool(structured_output=True, description=(
        "The `top` largest tool results of a session: size, budget, retention layer and spill files (no text). "
        "`session` as for memory_report."))
    async def largest_results(ctx: Context, session: str | None = None, top: int = 10) -> dict[str, Any]:
        asking = _asking(ctx)
        return await _in_thread(sessions, lambda: largest(_current(_session_file(session, session_roots), asking), top))

    @server.tool(structured_output=False, description=(
        "Lines offset … offset+limit-1 of a spilled tool output (read_file semantics, zero-based), inert. "
        "Only the files the agents write as spilled output under their own folders are served (a path "
        "largest_results or a truncation notice names). At most "
        f"{MAX_LINES:,} lines and {MAX_BYTES:,} bytes per call: a longer page ends with a line saying "
        f"which offset to continue from; a line longer than {MAX_LINE_CHARS:,} chars shows its start."))
    async def read_spilled(path: str, offset: int = 0, limit: int = MAX_LINES) -> str:
        if offset < 0 or limit < 1:
            raise ToolError("offset must be ≥ 0 and limit ≥ 1")
        return await _in_thread(pages, lambda: _page(path, offset, limit, spill_roots))

    return server


async def _in_thread(limiter: anyio.CapacityLimiter, work: Callable[[], T]) -> T:
    """Run blocking work on a worker thread of the pool for its kind. A call the client cancels (or every call
    when the client goes away) is let go at once, whatever the thread is still doing."""
    return await anyio.to_thread.run_sync(work, limiter=limiter, abandon_on_cancel=True)


def _asking(ctx: Context) -> str | None:
    """The id of the tool call asking, where the agent names it (Claude Code's `_meta`)."""
    from doctor.integrations.catch_up import call_id

    return call_id(ctx.request_context.meta)


def _current(path: Path, asking: str | None) -> Path:
    """`path` once it holds the asking call, so every result the model was given is in it (`catch_up`)."""
    from doctor.integrations.catch_up import wait_for_call

    wait_for_call(path, asking)
    return path


def _shown(text: str) -> str:
    """A path from the model, as an error message may repeat it: inert, one line, at most 200 chars."""
    line = inert_line(text)
    return line if len(line) <= 200 else line[:200] + "…"


def _memory_report(path: Path, top: int) -> str:
    from doctor import exitcodes
    from doctor.commands.slash import summary

    text, code = summary(path, top=top, running=True)  # the session is being written: this call is in it
    if code == exitcodes.USAGE_OR_INPUT:
        raise ToolError(inert_line(text.strip()))
    return capped(inert(text))


def capped(text: str, limit: int = MAX_BYTES) -> str:
    """`text` cut to `limit` UTF-8 bytes (on a character boundary), saying so."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    note = f"\n[doctor: cut at {limit:,} bytes]"
    return data[:limit - len(note.encode())].decode("utf-8", "ignore") + note


def _page(path: str, offset: int, limit: int, roots: tuple[Root, ...]) -> str:
    """The page read_spilled answers: rows of `doctor spill show` until a cap, then where to go on."""
    try:
        rows = show_rows(Path(path), offset, min(limit, MAX_LINES + 1), roots=roots)
        return "\n".join(page_rows(rows, offset, limit))
    except ShowRefused as exc:
        hint = ("; the user can allow a folder of copies by starting the server as `doctor mcp --spill-root DIR`"
                if exc.outside else "")
        raise ToolError(f"{exc}{hint}") from None


def page_rows(rows: Iterable[str], offset: int, limit: int) -> Iterator[str]:
    """`rows` (from line `offset`) while they fit in MAX_LINES lines and MAX_BYTES bytes; past a cap, a last
    row naming it and the offset to continue from. A first row longer than the whole budget is cut."""
    lines, budget, shown = min(limit, MAX_LINES), MAX_BYTES - _NOTE_BYTES, 0
    for row in rows:
        if shown == lines:
            if limit > MAX_LINES:
                yield _stopped(f"{MAX_LINES:,} lines", offset + shown)
            return
        size = len(row.encode("utf-8", "surrogatepass")) + (1 if shown else 0)
        if size > budget:
            if not shown:  # one line bigger than a whole answer: its start
                yield row.encode("utf-8", "surrogatepass")[:budget].decode("utf-8", "ignore")
                shown = 1
            yield _stopped(f"{MAX_BYTES:,} bytes", offset + shown)
            return
        budget -= size
        shown += 1
        yield row


_NOTE_BYTES = 100  # room for the closing note and its newline


def _stopped(cap: str, offset: int) -> str:
    return f"[doctor: stopped at {cap} per call; continue with offset={offset}]"


def _session_file(session: str | None, roots: tuple[Root, ...]) -> Path:
    """The session a tool reports on: a regular file in an agent's own session folder, checked before any read.

    A model could otherwise name a FIFO (the call blocks for ever), `/proc/self/fd/1`, a device, or any file
    of the user's that happens to parse (a chat export), and read parts of it back in the answer."""
    if session:
        located = locate(session, roots)
        if located is None:
            raise ToolError(f"{_shown(session)}: not a session file in the session folders of Qwen Code, Claude "
                            "Code, Gemini CLI or Codex; doctor mcp reads no other file")
    else:
        from doctor.sources.discovery import newest_for_cwd

        ref = newest_for_cwd()
        if ref is None:
            raise ToolError(f"no agent session found for {_shown(os.getcwd())}; pass session=<path of a session file>")
        located = locate(ref.path, roots)
        if located is None:
            raise ToolError(f"{_shown(str(ref.path))}: not in the agents' session folders")
    try:
        os.close(open_contained(located))
    except Refused as refused:
        raise ToolError(f"{_shown(session or str(located.path))}: {refused.reason}") from None
    except OSError as exc:
        raise ToolError(f"{_shown(session or str(located.path))}: {exc.strerror or exc}") from None
    return located.path


def largest(path: Path, top: int) -> dict:
    """`doctor memory --json`'s `retention.largest` rows, trimmed to figures, plus each spill file found."""
    from doctor.assemble import ReportOptions, report_with_spill_audit
    from doctor.config import load_budget_overrides
    from doctor.sources.base import SourceError
    from doctor.sources.qwen.history import still_running
    from doctor.sources.registry import open_session

    if not 1 <= top <= 200:
        raise ToolError("top takes 1 to 200")
    try:
        session = still_running(open_session(path))
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
    return relayed(answer)  # tool names and spill paths come from the session file: inert
