#!/usr/bin/env python3
"""A one-tool stdio MCP server for the Claude recordings: `big_text` returns a large, deterministic text.

Claude Code starts it from the `--mcp-config` record.py passes (`python mcp_big.py`), so the recorded
session holds what Claude did with a ~150,000-char MCP result under its own MAX_MCP_OUTPUT_TOKENS.
Written with the official `mcp` SDK (the repo's `mcp` extra).
"""
from mcp.server.mcpserver import MCPServer

LINE = "mcp row %05d " + "z" * 45 + "\n"  # 60 chars a line

server = MCPServer("big")


@server.tool()
def big_text(lines: int = 2500) -> str:
    """Return `lines` deterministic 60-char lines (2,500 lines = 150,000 chars)."""
    return "".join(LINE % i for i in range(1, lines + 1))


if __name__ == "__main__":
    server.run()
