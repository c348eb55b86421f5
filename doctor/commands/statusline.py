"""`doctor statusline AGENT`: the status line command of Claude Code (`statusLine`) and Qwen Code (`ui.statusLine`).

The agent runs it after each turn with a JSON object on stdin (Claude: `transcript_path`,
`session_id`, `cwd`; Qwen: `session_id`, `workspace.current_dir`; both `context_window`) and shows
what it prints: one line with the tool output the session keeps in context (chars, tokens, results),
how many results are oversized and the tool keeping the most, the figures of `doctor memory --json`,
and the share of the model's context window those tokens hold when the payload states the window.
It resumes from where the last call stopped (`doctor.statusline`). It never
breaks the agent's screen: stdout gets that line, or a short neutral one (no transcript yet, or
a problem, whose one-line reason goes to stderr and `<cache>/statusline/last-error.txt`); the
exit code is always 0.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

from doctor import exitcodes
from doctor.core.gc_pause import cyclic_gc_paused

AGENTS = ("claude", "qwen")
UNAVAILABLE = "doctor: —"
NO_RESULTS = "doctor: no tool results yet"


def register(subparsers) -> None:
    parser = subparsers.add_parser("statusline", help="the one-line status of Claude Code's or Qwen Code's status line",
                                   description=__doc__.splitlines()[0])
    parser.add_argument("agent", choices=AGENTS)
    parser.set_defaults(handler=run)


def plain_args(words: list[str]) -> SimpleNamespace | None:
    """`AGENT`, the form the agents' settings call, as argparse would read it (`doctor.cli`); else None."""
    if len(words) == 1 and words[0] in AGENTS:
        return SimpleNamespace(command="statusline", agent=words[0], handler=run)
    return None


def run(args) -> int:
    # A short run that decodes an index of tens of thousands of objects: no cyclic collection.
    with cyclic_gc_paused():
        try:
            line = status(args.agent, sys.stdin.buffer.read(1 << 20))
        except Exception as exc:  # noqa: BLE001  (a status line must never show a traceback)
            _log(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            line = UNAVAILABLE
    sys.stdout.write(line + "\n")
    return exitcodes.OK


def status(agent: str, stdin: bytes) -> str:
    from doctor.integrations.session import locate

    payload = json.loads(stdin or b"{}")
    payload = payload if isinstance(payload, dict) else {}
    transcript = _text(payload.get("transcript_path"))
    workspace = payload.get("workspace")
    cwd = _text(payload.get("cwd")) or (_text(workspace.get("current_dir")) if isinstance(workspace, dict) else None)
    found = locate(agent, _text(payload.get("session_id")), Path(cwd) if cwd else Path.cwd(),
                   transcript=Path(transcript) if transcript else None)
    if found.path is None or _empty(found.path):  # Qwen creates the file before its first record
        return NO_RESULTS
    from doctor.core.context_window import from_status_payload
    from doctor.statusline.line import render
    from doctor.statusline.update import NothingYet, current_figures

    try:
        found_figures = current_figures(agent, found.path)
    except NothingYet:
        return NO_RESULTS
    if found_figures is None:
        _log(f"{found.path}: retention diagnostics unavailable for this history (see doctor memory)")
        return UNAVAILABLE
    window = from_status_payload(agent, payload)
    if window is not None:
        from doctor.statusline.window import remember

        try:  # for the summary /doctor:memory prints later, which the agent does not tell the window
            remember(agent, found.path, window)
        except OSError as exc:  # the line is still right; only the summary will not know the window
            _log(f"could not keep the context window: {exc.strerror or exc}")
    return render(found_figures, window)


def _empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except OSError:
        return False  # reading it says why


def _text(value) -> str | None:
    return value if isinstance(value, str) and value else None


def _log(message: str) -> None:
    """The reason on stderr, and in `last-error.txt` of the private cache folder when there is one."""
    print(f"doctor statusline: {message}", file=sys.stderr)
    from doctor.safety.private_folders import private_cache_folder
    from doctor.statusline.cache import FOLDER

    folder = private_cache_folder(FOLDER)
    if folder is None:
        return
    with folder:
        try:
            folder.write("last-error.txt", (message + "\n").encode("utf-8", "backslashreplace"))
        except OSError:
            pass
