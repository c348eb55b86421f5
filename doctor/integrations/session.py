"""Which transcript `/doctor:memory` is about: the agent's own session where it says, else the project's newest.

Claude passes its session id on the command line (`${CLAUDE_SESSION_ID}`), Qwen in the
environment (`QWEN_CODE_SESSION_ID`, with the project's data folder in `QWEN_CODE_PROJECT_DIR`;
its status line passes the id and the working directory on stdin),
a hook's stdin carries `transcript_path`; Gemini passes nothing to its command, so doctor's
`SessionStart` hook recorded the session of the Gemini process (`doctor.integrations.current`):
without that record the session is not known (`Located.known` False), and no other session of the
folder stands in for it. A known id whose file is not there yet is a normal state (a session's
first prompt): `Located.path` is None and the caller says so briefly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from msgspec import Struct


class Located(Struct, frozen=True):
    session_id: str | None
    path: Path | None
    known: bool = True  # False: which session this is cannot be told (Gemini without doctor's record)


def locate(agent: str, session_id: str | None, cwd: Path, env: Mapping[str, str] = os.environ,
           transcript: Path | None = None) -> Located:
    if transcript is not None:
        return Located(session_id or transcript.stem, transcript if transcript.is_file() else None)
    # Only now: with the transcript given (Claude's hooks and status line) discovery is not needed.
    from doctor.sources.discovery import CLAUDE, GEMINI, QWEN, agent_homes, find_sessions, sanitize_cwd

    if agent == GEMINI and not session_id:
        from doctor.integrations.current import recorded

        found = recorded(GEMINI)
        if found is None:
            return Located(None, None, known=False)
        return Located(found.session_id, found.transcript if found.transcript and found.transcript.is_file() else None)

    if agent == QWEN:
        session_id = session_id or env.get("QWEN_CODE_SESSION_ID") or None
        data = env.get("QWEN_CODE_PROJECT_DIR")
        if session_id and data and (Path(data) / "chats" / f"{session_id}.jsonl").is_file():
            return Located(session_id, Path(data) / "chats" / f"{session_id}.jsonl")
        direct = agent_homes(env)[QWEN] / "projects" / sanitize_cwd(cwd) / "chats" / f"{session_id}.jsonl"
        if session_id and direct.is_file():  # the status line's stdin names the session and the project dir
            return Located(session_id, direct)
    if agent == CLAUDE and session_id:
        direct = agent_homes(env)[CLAUDE] / "projects" / sanitize_cwd(cwd) / f"{session_id}.jsonl"
        if direct.is_file():
            return Located(session_id, direct)
    if session_id:
        for ref in find_sessions(agent=agent, env=env):
            if ref.id == session_id:
                return Located(session_id, ref.path)
        return Located(session_id, None)
    refs = find_sessions(agent=agent, project=cwd, env=env)
    return Located(refs[0].id, refs[0].path) if refs else Located(None, None)
