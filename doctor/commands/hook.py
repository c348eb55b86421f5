"""`doctor hook AGENT [--tell-model]`: what an agent's hooks run; reads the hook's JSON on stdin, answers JSON or nothing.

After each tool call (`PostToolUse`; Gemini's `AfterTool`): when the result that just landed is
oversized by that agent's rule, as the model will get it (`doctor.integrations.alarm`), a
`systemMessage` tells the user, and with
`--tell-model` (chosen at install time) `additionalContext` tells the model in one sentence;
silent otherwise, and never blocking the tool.
`UserPromptSubmit` (Codex, which has no custom slash commands): a prompt starting with
`$doctor-memory` (doctor's skill, what its interactive app sends) or `/doctor:memory` (`codex exec`)
is answered with `additionalContext` holding the summary of the hook's own session
(`transcript_path`); every other prompt gets no output. `UserPromptExpansion` (Claude Code, when
its `/doctor:memory` command expands): the same summary, the typed arguments coming as
`command_args` on stdin, where no shell sees them. Gemini's `SessionStart`: the session is recorded
for the Gemini process (`doctor.integrations.current`), since its `/doctor:memory` is told nothing;
no output. A hook must never get in the
agent's way: whatever happens, it exits 0 (exit 2 would block the prompt or the tool) and
prints nothing on stdout but a valid answer; a problem is one line on stderr. Every string of the
answer is made inert on its way out (`doctor.integrations.relay`): the agent shows `systemMessage`
on the user's terminal as it is, and tool output, tool names and paths in it are an attacker's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

from doctor import exitcodes
from doctor.integrations import AGENTS, typed_command

PROMPTS = ("$doctor-memory", "/doctor:memory")  # the skill, then the form `codex exec` passes on
STDIN_CAP = 64 << 20
"""The most of a hook's stdin doctor reads: far above the tool output an agent hands its hooks (the agents cut
a result to tens of KB before the model sees it), and a bound on what one payload can make the hook hold."""


def register(subparsers) -> None:
    parser = subparsers.add_parser("hook", help="what doctor's agent hooks run (JSON on stdin)",
                                   description=__doc__.splitlines()[0])
    parser.add_argument("agent", choices=AGENTS)
    parser.add_argument("--tell-model", action="store_true",
                        help="also tell the model about an oversized result (additionalContext)")
    parser.set_defaults(handler=run)


def plain_args(words: list[str]) -> SimpleNamespace | None:
    """`AGENT [--tell-model]`, the forms install writes, as argparse would read them (`doctor.cli`); else None."""
    if words and words[0] in AGENTS and words[1:] in ([], ["--tell-model"]):
        return SimpleNamespace(command="hook", agent=words[0], tell_model=words[1:] == ["--tell-model"], handler=run)
    return None


def run(args) -> int:
    from doctor.integrations.relay import relayed
    from doctor.report.inert import inert_line

    try:
        data = sys.stdin.buffer.read(STDIN_CAP + 1)
        if len(data) > STDIN_CAP:
            _drain(sys.stdin.buffer)
            print(f"doctor hook: the hook's input is over {STDIN_CAP >> 20} MiB; not read", file=sys.stderr)
            return exitcodes.OK
        payload = json.loads(data or b"{}")
        answer = relayed(respond(args.agent, payload if isinstance(payload, dict) else {}, tell_model=args.tell_model))
    except Exception as exc:  # noqa: BLE001  (a hook that fails must still let the agent go on)
        print(f"doctor hook: {type(exc).__name__}: {inert_line(str(exc).splitlines()[0] if str(exc) else '')}",
              file=sys.stderr)
        return exitcodes.OK
    if answer:
        sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
    return exitcodes.OK


def _drain(stream) -> None:
    """Read the rest and drop it, a block at a time, so the agent writing the payload never meets a broken pipe."""
    while stream.read(1 << 20):
        pass


AFTER_TOOL = ("PostToolUse", "AfterTool")


def respond(agent: str, payload: dict, *, tell_model: bool = False) -> dict | None:
    event = payload.get("hook_event_name")
    if event == "SessionStart" and agent == "gemini":  # which session this Gemini process is in, for /doctor:memory
        from doctor.integrations.current import remember

        remember(agent, payload)
        return None
    if event == "UserPromptSubmit":
        return _prompt(agent, payload)
    if event == "UserPromptExpansion":
        return _expansion(agent, payload)
    if event in AFTER_TOOL:
        return _after_tool(agent, event, payload, tell_model)
    return None


def _after_tool(agent: str, event: str, payload: dict, tell_model: bool) -> dict | None:
    from doctor.integrations.alarm import check

    tool = payload.get("tool_name")
    cwd = payload.get("cwd")
    model = payload.get("model")  # Codex names it: its truncation policy depends on the model
    call_id = payload.get("tool_call_id")  # Qwen's: its spill files are named after it
    alarm = check(agent, tool if isinstance(tool, str) else "", payload.get("tool_response"),
                  Path(cwd) if isinstance(cwd, str) else None, model=model if isinstance(model, str) else None,
                  call_id=call_id if isinstance(call_id, str) else None)
    if alarm is None:
        return None
    answer: dict = {"systemMessage": alarm.for_user(typed_command(agent))}
    if tell_model:
        answer["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": alarm.for_model()}
    return answer


def _prompt(agent: str, payload: dict) -> dict | None:
    prompt = payload.get("prompt")
    typed = prompt.lstrip() if isinstance(prompt, str) else ""
    command = next((each for each in PROMPTS if typed.startswith(each)), None)
    if command is None:
        return None
    rest = typed[len(command):]
    if rest and not rest[0].isspace():
        return None  # `/doctor:memoryfoo` is not the command
    from doctor.integrations.plans import SHOW_AS_IS

    text = _summary(agent, payload, rest.strip())
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": f"{text}\n{SHOW_AS_IS}"}}


def _expansion(agent: str, payload: dict) -> dict | None:
    """Claude's `/doctor:memory` expanding (its command file tells the model to show what this adds)."""
    from doctor.integrations.claude import COMMAND_NAME

    if payload.get("command_name") != COMMAND_NAME or payload.get("expansion_type") != "slash_command":
        return None
    typed = payload.get("command_args")
    text = _summary(agent, payload, typed if isinstance(typed, str) else "")
    return {"hookSpecificOutput": {"hookEventName": "UserPromptExpansion", "additionalContext": text}}


def _summary(agent: str, payload: dict, typed: str) -> str:
    """`/doctor:memory`'s answer for the hook's own session (`transcript_path`), `typed` its arguments."""
    from doctor.commands.slash import compose

    transcript = payload.get("transcript_path")
    cwd = payload.get("cwd")
    text, _ = compose(agent, _text(payload.get("session_id")), Path(transcript) if isinstance(transcript, str) else None,
                      [typed], cwd=Path(cwd) if isinstance(cwd, str) else None)
    return text


def _text(value) -> str | None:
    return value if isinstance(value, str) and value else None
