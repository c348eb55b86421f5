"""`doctor mcp` through the seam an agent uses: the server started as a subprocess, spoken to with the MCP SDK's
own stdio client, on a session recorded by the real Qwen Code (tests/recordings/qwen/persist-gate), put back
where Qwen keeps it in a throwaway HOME (`~/.qwen/projects/<project>/chats/`, spill files under
`~/.qwen/tmp/<sha256 of the project>/`): the server reads only the agents' own folders.

Expected figures come from `doctor memory --json` of the same file and the spill file's own lines."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

RECORDING = Path(__file__).resolve().parents[1] / "recordings" / "qwen" / "persist-gate"
SESSION = RECORDING / "session.jsonl"
GLOB_SPILL = RECORDING / "tmp" / "tool-results" / "call_bf09bc32a94e4795.txt"


def _env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": os.environ.get("PATH", "")}


def _install(tmp_path: Path) -> tuple[Path, Path]:
    """The recording where Qwen wrote it, under the test's HOME: (session file, the glob's spill file)."""
    meta = json.loads((RECORDING / "meta.json").read_text())
    qwen = tmp_path / "home" / ".qwen"
    session = qwen / "projects" / meta["cwd"].replace("/", "-") / "chats" / f"{meta['sessionId']}.jsonl"
    session.parent.mkdir(parents=True)
    shutil.copyfile(SESSION, session)
    shutil.copytree(RECORDING / "tmp", qwen / "tmp" / meta["projectHash"])
    return session, qwen / "tmp" / meta["projectHash"] / GLOB_SPILL.relative_to(RECORDING / "tmp")


def _talk(tmp_path: Path, calls: list[tuple[str, dict]]) -> tuple[list[str], list]:
    """Start `doctor mcp`, list its tools, make `calls` in order; the tool names and each CallToolResult."""
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "doctor", "mcp", "--spill-root", str(RECORDING / "tmp")],
                                   env=_env(tmp_path), cwd=str(tmp_path))

    async def run():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = [tool.name for tool in (await session.list_tools()).tools]
            return tools, [await session.call_tool(name, arguments) for name, arguments in calls]

    return asyncio.run(asyncio.wait_for(run(), 60))


def _text(result) -> str:
    return "".join(part.text for part in result.content if part.type == "text")


def _memory_json(tmp_path: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "doctor", "memory", str(SESSION), "--json", "--paths", "full"],
                          capture_output=True, text=True, env=_env(tmp_path), check=True)
    return json.loads(done.stdout)


def test_tools_answer_with_the_figures_of_doctor_memory_and_page_the_spill_file(tmp_path):
    expected = _memory_json(tmp_path)
    session, spill = _install(tmp_path)
    tools, (report, largest, page, copy, outside, nothing) = _talk(tmp_path, [
        ("memory_report", {"session": str(session)}),
        ("largest_results", {"session": str(session), "top": 3}),
        ("read_spilled", {"path": str(spill), "offset": 5, "limit": 4}),
        ("read_spilled", {"path": str(GLOB_SPILL), "limit": 2}),  # the recording's copy, under --spill-root
        ("read_spilled", {"path": str(session)}),  # the agent's own file, but not a spill file
        ("memory_report", {}),  # no session argument: the newest of the server's cwd (none in this HOME)
    ])
    assert sorted(tools) == ["largest_results", "memory_report", "read_spilled"]

    stats = expected["toolResultRetention"]
    summary = _text(report)
    assert not report.is_error, summary
    assert f"{stats['toolResultCount']} results, {stats['totalChars']:,} chars retained" in summary
    for row in expected["retention"]["largest"][:3]:
        assert f"{row['tool']}: {row['chars']:,} chars" in summary

    assert not largest.is_error
    rows = largest.structured_content["results"]
    assert [(r["ordinal"], r["tool"], r["chars"], r["tokens"], r["budget"], r["oversized"], r["layer"]) for r in rows] \
        == [(r["ordinal"], r["tool"], r["chars"], r["tokens"], r["budget"], r["oversized"], r["layer"])
            for r in expected["retention"]["largest"][:3]]
    glob = next(r for r in rows if r["tool"] == "glob")
    assert glob["spill"]["found"] == [str(spill)]
    assert glob["spill"]["written"] == next(r for r in expected["retention"]["largest"]
                                            if r["tool"] == "glob")["pointer"]["paths"]

    assert not page.is_error
    assert _text(page).split("\n") == GLOB_SPILL.read_text().splitlines()[5:9]
    assert not copy.is_error and _text(copy).split("\n") == GLOB_SPILL.read_text().splitlines()[:2]

    assert outside.is_error and "not a spill file" in _text(outside)
    assert "--allow-outside" not in _text(outside) and "doctor mcp --spill-root DIR" in _text(outside)
    assert nothing.is_error and "no agent session found" in _text(nothing)
