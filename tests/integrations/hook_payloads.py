"""The after-tool hook payload each real client sends, rebuilt from a recording of that client.

Checked against payloads captured from the real clients (a `tee` in front of `doctor hook`):
- Claude Code 2.1.332 `PostToolUse`: `tool_response` is the transcript's `toolUseResult`, unchanged
  (a persisted Bash output keeps a 30,000-char `stdout` and says `persistedOutputPath`; a Read is
  `{type: text, file: {content, startLine, …}}` without the `N\\t` line numbers the model gets).
  Failed calls go to `PostToolUseFailure` instead, so they are left out.
- Gemini CLI 0.61.0 `AfterTool`: `tool_response.llmContent` is the whole output, before truncation:
  for a result Gemini cut, the file its notice names holds exactly that text (168,968 chars for
  `seq 1 30000`, where the model got the 40,285-char notice).
- Codex 0.171.0 `PostToolUse`: `tool_name` is `Bash` for `exec_command`, `tool_response` the output
  already cut to the truncation policy, without the `Chunk ID …\\nOutput:\\n` header the rollout has;
  the payload names the `model`.
- Qwen Code 0.24.4 `PostToolUse` (read from its source, `firePostToolUseHook` in the bundled scheduler):
  `tool_response` is `{llmContent, returnDisplay}` of the tool's result, before Qwen's own truncation.
Each payload comes with the call id `doctor memory --json` knows the result by, and whether the
agent later masked it (Gemini's output masking rewrites results after they landed: the hook judged
the result that landed, `doctor memory` judges what is left).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Landed:
    call_id: str
    payload: dict
    masked_later: bool = False


def session_file(folder: Path) -> Path:
    (session,) = [p for p in (folder / "home").rglob("*.jsonl") if "subagents" not in p.parts]
    return session


def payloads(agent: str, folder: Path) -> Iterator[Landed]:
    meta = json.loads((folder / "meta.json").read_text())
    if agent == "qwen":  # tests/recordings/qwen/* keep the session beside meta.json
        yield from _qwen(folder / "session.jsonl", meta)
        return
    records = [json.loads(line) for line in session_file(folder).read_text(encoding="utf-8").splitlines() if line.strip()]
    base = {"session_id": meta["sessionId"], "transcript_path": str(session_file(folder)), "cwd": meta["cwd"]}
    yield from {"claude": _claude, "gemini": _gemini, "codex": _codex}[agent](records, base, folder, meta)


def _local(folder: Path, meta: dict, path: str) -> Path:
    """A path the client wrote under its HOME, inside the recording's copy of that HOME."""
    return folder / "home" / Path(path).relative_to(meta["home"])


def _claude(records, base, folder, meta):
    calls = {block["id"]: block for r in records if r.get("type") == "assistant"
             for block in r["message"].get("content") or [] if isinstance(block, dict) and block.get("type") == "tool_use"}
    for r in records:
        content = r.get("message", {}).get("content") if r.get("type") == "user" else None
        if not isinstance(content, list) or "toolUseResult" not in r:
            continue
        for block in content:
            if block.get("type") != "tool_result" or block.get("is_error"):
                continue
            call = calls[block["tool_use_id"]]
            yield Landed(block["tool_use_id"], {**base, "hook_event_name": "PostToolUse", "tool_name": call["name"],
                                                 "tool_input": call["input"], "tool_response": r["toolUseResult"],
                                                 "tool_use_id": block["tool_use_id"]})


def _qwen(session: Path, meta: dict):
    base = {"session_id": meta["sessionId"], "transcript_path": str(session), "cwd": meta["cwd"],
            "hook_event_name": "PostToolUse", "permission_mode": "yolo"}
    for line in session.read_text(encoding="utf-8").splitlines():
        record = json.loads(line) if line.strip() else {}
        if record.get("type") != "tool_result" or (record.get("toolCallResult") or {}).get("status") != "success":
            continue
        for part in record["message"]["parts"]:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if response is not None:
                yield Landed(response["id"], {**base, "tool_name": response["name"], "tool_input": {},
                                              "tool_response": {"llmContent": response["response"].get("output", ""),
                                                                "returnDisplay": record["toolCallResult"].get("resultDisplay")},
                                              "tool_use_id": response["id"]})


SEE = re.compile(r"(?:For full output see|available at): (\S+)")


def _gemini(records, base, folder, meta):
    first: dict[str, tuple[dict, str]] = {}
    masked: set[str] = set()
    for r in records:
        for part in r.get("content") or [] if r.get("type") == "user" and isinstance(r.get("content"), list) else ():
            response = (part.get("functionResponse") or {}) if isinstance(part, dict) else {}
            output = response.get("response", {}).get("output")
            if not isinstance(output, str):
                continue  # an error: Gemini's AfterTool then carries no output to measure
            if output.startswith("<tool_output_masked>"):
                masked.add(response["id"])
            first.setdefault(response["id"], (response, output))
    for call_id, (response, output) in first.items():
        cut = SEE.search(output) if output.startswith("Output too large. Showing") else None
        landed = _local(folder, meta, cut.group(1)).read_text(encoding="utf-8") if cut else output
        yield Landed(call_id, {**base, "hook_event_name": "AfterTool", "tool_name": response["name"], "tool_input": {},
                               "tool_response": {"llmContent": landed, "returnDisplay": ""}}, call_id in masked)


def _codex(records, base, folder, meta):
    model = next(r["payload"]["model"] for r in records if r.get("type") == "turn_context")
    names = {r["payload"]["call_id"]: r["payload"]["name"] for r in records
             if r.get("type") == "response_item" and r["payload"].get("type") == "function_call"}
    for r in records:
        item = r.get("payload") or {}
        if r.get("type") != "response_item" or item.get("type") != "function_call_output":
            continue
        output = item["output"]
        text = output if isinstance(output, str) else "".join(x.get("text", "") for x in output)
        tool = {"exec_command": "Bash"}.get(names[item["call_id"]], names[item["call_id"]])
        yield Landed(item["call_id"], {**base, "hook_event_name": "PostToolUse", "model": model, "tool_name": tool,
                                       "tool_input": {}, "tool_response": text.split("\nOutput:\n", 1)[-1],
                                       "tool_use_id": item["call_id"]})
