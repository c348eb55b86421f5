"""`doctor mcp [--spill-root DIR]`: a stdio MCP server an agent registers to ask doctor about its own session.

Tools: `memory_report` (the compact summary `/doctor:memory` prints), `largest_results` (sizes,
budgets, spill files; no payload) and `read_spilled` (page a spilled output with `doctor spill
show`'s containment rules). The folders they may read (the agents' spill and session folders, and
each `--spill-root`) are fixed here, once, before the first request. Needs the `[mcp]` extra;
without it, one line saying how to install it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from doctor import exitcodes


def register(subparsers) -> None:
    parser = subparsers.add_parser("mcp", help="a stdio MCP server with doctor's tools (needs the [mcp] extra)",
                                   description=__doc__.splitlines()[0])
    parser.add_argument("--spill-root", dest="spill_roots", action="append", type=Path, default=[], metavar="DIR",
                        help="a folder of copied spill files (repeatable): read_spilled serves every regular file "
                             "below it, besides the agents' own spill files")
    parser.set_defaults(handler=run)


def run(args) -> int:
    try:
        from doctor.integrations.mcp_server import build_server
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("mcp"):
            raise
        print("doctor: `doctor mcp` needs the MCP SDK: pip install 'doctor-memory[mcp]'", file=sys.stderr)
        return exitcodes.USAGE_OR_INPUT
    from doctor.safety.roots import session_roots, spill_roots

    build_server(spill_roots(os.environ, args.spill_roots), session_roots(os.environ)).run("stdio")
    # The client closed stdin: nobody is left to answer. A call still on a worker thread would keep the
    # interpreter waiting for it at exit, so leave now.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(exitcodes.OK)
