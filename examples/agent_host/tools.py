"""The host's tools: real shell, file reading and grep, under Qwen Code's names and budgets.

Each tool returns the text the model is given; `spill` bounds it first, so a
`seq 1 200000` or a grep over a big tree leaves a pointer in the history, not
the whole output.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from spill import THRESHOLD, persistence_gate, truncate_in_tool

SHELL_BUDGET = 30_000
MAX_GREP_MATCHES = 1_000


@dataclass
class ToolBox:
    """Runs tool calls in `workdir`; spill files go to `spill_dir`."""

    workdir: Path
    spill_dir: Path

    def run(self, name: str, args: dict, call_id: str) -> tuple[str, bool]:
        """(text for the model, is_error)."""
        tool: Callable[[dict, str], str] | None = getattr(self, f"_{name}", None)
        if tool is None:
            return f"Tool {name!r} not found.", True
        try:
            return tool(args, call_id), False
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            return f"Error executing {name}: {exc}", True

    def _run_shell_command(self, args: dict, call_id: str) -> str:
        """The shell bounds its own output (and so skips the persistence gate), as Qwen's does."""
        done = subprocess.run(
            args["command"], shell=True, cwd=self.workdir, capture_output=True, text=True, timeout=120, errors="replace",
            check=False,
        )
        text = (
            f"Command: {args['command']}\nDirectory: (root)\nOutput: {done.stdout}"
            f"Error: {done.stderr.strip() or '(none)'}\nExit Code: {done.returncode}"
        )
        return truncate_in_tool(text, "run_shell_command", SHELL_BUDGET, self.spill_dir)

    def _read_file(self, args: dict, call_id: str) -> str:
        """read_file is exempt from the gate; the scheduler's truncation at the threshold applies."""
        path = self.workdir / args["absolute_path"] if not Path(args["absolute_path"]).is_absolute() else Path(args["absolute_path"])
        return truncate_in_tool(path.read_text(errors="replace"), "read_file", THRESHOLD, self.spill_dir)

    def _grep_search(self, args: dict, call_id: str) -> str:
        """Matching lines under `path`; a big answer goes through the persistence gate."""
        pattern = re.compile(args["pattern"])
        root = self.workdir / args.get("path", ".")
        matches = []
        for file in sorted(p for p in root.rglob("*") if p.is_file()):
            for number, line in enumerate(file.read_text(errors="replace").splitlines(), 1):
                if pattern.search(line) and len(matches) < MAX_GREP_MATCHES:
                    matches.append(f"{file.relative_to(root)}:{number}:{line}")
        text = f"Found {len(matches)} match(es) for pattern \"{args['pattern']}\":\n" + "\n".join(matches)
        return persistence_gate(text, call_id, self.spill_dir)
