"""The model history Qwen Code 0.24.4 holds after `--resume`, streamed one Content at a time.

Three steps, each a generator so that a gigabyte recording never sits in memory:

1. `api_history` ports `SessionApiHistoryAccumulator` (chunk-DPEB6S2R.js
   21559–21715): each material record becomes a copy of its `message`;
   `mid_turn_user_message` merges into the previous user entry; a local slash
   command's result pops the prompt that echoed it. It starts at the last
   `chat_compression` on the chain, since that record replaces everything
   before it. Those edits reach at most two entries back, so only two wait.
2. `getInitialChatHistory` puts one user Content of system reminders first.
   Its text is not recorded; a stand-in with no functionResponse takes its
   place so the Content count stays honest (the numbers do not change).
3. `repair_orphaned_tool_use` ports `repairOrphanedToolUseTurns`
   (chunk-DPEB6S2R.js:34998) over a window holding one model turn with calls
   and the user run that answers it.

`ResumableHistory` runs the same steps on a chain that grows, for `doctor statusline`.

Turns (`doctor.core.turns`): each plain `user` record the history takes is the person's next
prompt and its Content is marked with its number; a local slash command's echo, which Qwen pops,
is uncounted again; prompts before the last compression are counted from the index
(`prompts_before`), so numbering goes on across it. A `mid_turn_user_message` joins the turn in
progress, as Qwen merges it into the user entry before it. The startup context stand-in is no prompt.
"""

from __future__ import annotations

import copy
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from doctor.core.turns import TURN, mark
from doctor.sources.qwen.transcript import COMPRESSION, MATERIAL, SYSTEM_ACTIVE, SYSTEM_QUIET, USER_TYPE, ChainRecords

ORPHAN_TOOL_USE_REPAIR_REASON = (
    "Tool execution result was not recorded \u2014 likely interrupted by network failure, abort, "
    "or process exit. Treat as failure and retry if needed."
)
UPSTREAM_DEGRADED_PLACEHOLDER = "(request timeout)"
STARTUP_CONTEXT_STAND_IN = {
    "role": "user",
    "parts": [
        {
            "text": "<system-reminder>[doctor: stand-in for the startup context, skills and deferred-tools "
            "reminders Qwen prepends on resume; their text is not in the recording]</system-reminder>"
        }
    ],
}

Report = Callable[[str], None]

if TYPE_CHECKING:
    from doctor.core.stored import StoredHistory


def _function_call(part: object) -> dict | None:
    call = part.get("functionCall") if type(part) is dict else None
    return call if type(call) is dict and call else None


def _function_response(part: object) -> dict | None:
    response = part.get("functionResponse") if type(part) is dict else None
    return response if type(response) is dict else None


def _call_ids(parts: Iterable) -> Iterator[str]:
    for part in parts:
        call = _function_call(part)
        if call is not None and call.get("id"):
            yield call["id"]


def _has_call_id(parts: Iterable) -> bool:
    for part in parts:
        if type(part) is dict:
            call = part.get("functionCall")
            if type(call) is dict and call and call.get("id"):
                return True
    return False


def _response_ids(parts: Iterable) -> Iterator[str]:
    for part in parts:
        response = _function_response(part)
        if response is not None and response.get("id"):
            yield response["id"]


def copy_content(content: dict) -> dict:
    """`copyContentForApiHistory`: the Content and its parts copied one level deep."""
    copied = dict(content)
    parts = content.get("parts")
    if isinstance(parts, list):
        copied["parts"] = [_copy_part(part) for part in parts]
    return copied


def _copy_part(part: object) -> object:
    if type(part) is not dict:
        return part  # Qwen throws on these; `check_parts` reports it
    if part.get("functionCall"):
        call = dict(part["functionCall"]) if type(part["functionCall"]) is dict else part["functionCall"]
        if type(call) is dict and type(call.get("args")) is dict:
            call["args"] = dict(call["args"])
        return {**part, "functionCall": call}
    if part.get("functionResponse"):
        response = part["functionResponse"]
        return {**part, "functionResponse": dict(response) if type(response) is dict else response}
    return dict(part)


class _ToolIdCounts:
    """Calls and results per id across the history, for `hasUniqueToolResult`."""

    def __init__(self) -> None:
        self.calls: Counter = Counter()
        self.results: Counter = Counter()

    def add(self, parts: Iterable) -> None:
        calls, results = self.calls, self.results
        for part in parts:
            if type(part) is not dict:
                continue
            call = part.get("functionCall")
            if type(call) is dict and call:
                call_id = call.get("id")
                if call_id:
                    calls[call_id] += 1
            response = part.get("functionResponse")
            if type(response) is dict:
                response_id = response.get("id")
                if response_id:
                    results[response_id] += 1

    def unique(self, tool_call_id: object) -> bool:
        return (
            isinstance(tool_call_id, str)
            and bool(tool_call_id)
            and self.calls[tool_call_id] == 1
            and self.results[tool_call_id] == 1
        )


def _copy_fresh_content(content: dict) -> dict:
    """`copy_content` for a message decoded for this history alone: the Content and its parts list.

    Nothing edits a part in place (merges and the orphan repair build new parts
    lists), so a part decoded for this pass need not be copied again; the values
    are the ones `copy_content` gives.
    """
    copied = dict(content)
    parts = content.get("parts")
    if type(parts) is list:
        copied["parts"] = [part if type(part) is dict else _copy_part(part) for part in parts]
    elif isinstance(parts, list):
        copied["parts"] = [_copy_part(part) for part in parts]
    return copied


def _is_plain_prompt(record: dict | None, raw_command: object) -> bool:
    if record is None or record.get("type") != "user" or record.get("subtype") is not None:
        return False
    message = record.get("message") or {}
    parts = message.get("parts")
    return (
        message.get("role") == "user"
        and isinstance(parts, list)
        and len(parts) == 1
        and type(parts[0]) is dict
        and list(parts[0]) == ["text"]
        and isinstance(parts[0]["text"], str)
        and parts[0]["text"] == raw_command
    )


def _is_typed_prompt(record: dict, message: dict) -> bool:
    """A plain `user` record (no subtype) holding the person's text."""
    if record.get("type") != "user" or record.get("subtype") is not None or message.get("role") != "user":
        return False
    parts = message.get("parts")
    return isinstance(parts, list) and any(type(part) is dict and isinstance(part.get("text"), str) for part in parts) \
        and not any(_function_response(part) is not None for part in parts)


def _pops_echo(record: dict, previous: dict | None) -> bool:
    """A local slash command's result, whose echoed prompt `previous` Qwen drops from the history."""
    payload = record.get("systemPayload")
    payload = payload if type(payload) is dict else {}
    items = payload.get("outputHistoryItems")
    return (record.get("subtype") == "slash_command"
            and payload.get("phase") == "result"
            and payload.get("sentToModel") is not True
            and isinstance(items, list)
            and bool(items)
            and all(type(i) is dict and i.get("type") == "assistant" for i in items)
            and _is_plain_prompt(previous, payload.get("rawCommand")))


def prompts_before(records: ChainRecords, stop: int) -> int:
    """The typed prompts on the chain before position `stop` (the last compression, where the
    history starts): plain `user` records, less the echoes of local slash commands. Read from the
    index; only a slash command right after a plain prompt, and that prompt, are decoded."""
    index = records.index
    kinds, types, subtypes, chain = index._kind, index._type, index._subtypes, records.chain
    count = 0
    prompt_at = None  # position of the last material record when it is a plain prompt
    candidates: list[int] = []
    for position in range(stop):
        ident = chain[position]
        kind = kinds[ident]
        if kind == MATERIAL:
            plain = types[ident] == USER_TYPE and ident not in subtypes
            count += plain
            prompt_at = position if plain else None
        elif kind == SYSTEM_ACTIVE and prompt_at is not None:
            candidates += (prompt_at, position)
            prompt_at = None
        elif kind == COMPRESSION:
            prompt_at = None
    if candidates:
        decoded = [record for _, record in records.iter_history_records(0, SYSTEM_QUIET, positions=candidates)]
        count -= sum(_pops_echo(command, prompt) for prompt, command in zip(decoded[::2], decoded[1::2]))
    return count


class _Accumulator:
    """`SessionApiHistoryAccumulator.add`, with only the last two entries held back; it numbers the
    typed prompts it takes (`prompts`: how many so far, those before it given at the start)."""

    def __init__(self, report: Report, track_counts: bool = True, prompts: int = 0):
        self.report = report
        self.prompts = prompts
        self.track_counts = track_counts  # only a goal_turn_end after a record reads the counts
        self.pending: deque[dict] = deque()
        self.completed: set[str] = set()
        self.counts = _ToolIdCounts()
        self.last_material: dict | None = None
        self.frozen = False  # a compressedHistory that is not an array ends the rebuild

    def drain(self, keep: int) -> Iterator[dict]:
        while len(self.pending) > keep:
            yield self.pending.popleft()

    def compress(self, record: dict) -> None:
        payload = record["systemPayload"]
        compressed = payload["compressedHistory"]
        self.pending.clear()
        self.counts = _ToolIdCounts()
        if not isinstance(compressed, list):
            self.report("chat_compression holds a compressedHistory that is not an array: Qwen 0.24.4 cannot resume this")
            self.frozen = True
            return
        for content in compressed:
            copied = copy_content(content) if type(content) is dict else content
            if type(copied) is dict:
                copied.pop(TURN, None)  # only this reader marks turns
            self.pending.append(copied)
            self.counts.add(_parts_of(copied))
        ids = payload.get("completedToolCallIds")
        self.completed = {i for i in ids if self.counts.unique(i)} if isinstance(ids, list) else set()
        self.last_material = None
        if self.pending and type(self.pending[0]) is dict and self.prompts:
            mark(self.pending[0], self.prompts)  # the compressed history goes on in the turn in progress

    def add(self, record: dict) -> None:
        if self.frozen:
            return
        if record.get("type") == "system":
            self._system(record)
            return
        message = record.get("message")
        if message is None or record.get("subtype") == "realtime_message":
            return
        parts = message.get("parts") or []
        check_parts(parts, self.report)
        if self.completed:
            self.completed.difference_update(_call_ids(parts))
            self.completed.difference_update(_response_ids(parts))
        copied = _copy_fresh_content(message)  # a message is only {role, parts}: no mark of its own
        if _is_typed_prompt(record, message):
            self.prompts += 1
            mark(copied, self.prompts)
        if record.get("subtype") == "mid_turn_user_message" and self._merge(copied):
            pass
        else:
            self.pending.append(copied)
        if self.track_counts:
            self.counts.add(copied.get("parts") or ())
        self.last_material = record

    def _merge(self, message: dict) -> bool:
        if not self.pending:
            return False  # already emitted entries cannot change; only two are ever needed
        previous = self.pending[-1]
        if previous.get("role") != "user":
            return False
        if any(i in self.completed for i in _response_ids(previous.get("parts") or ())):
            return False
        previous["parts"] = [*(previous.get("parts") or ()), *(message.get("parts") or ())]
        return True

    def _system(self, record: dict) -> None:
        subtype = record.get("subtype")
        payload = record.get("systemPayload")
        payload = payload if type(payload) is dict else {}
        previous = self.last_material
        if subtype == "slash_command":
            if _pops_echo(record, previous) and self.pending:
                self.pending.pop()
                self.prompts -= 1  # the echo was counted as a prompt; the model never got it
            if previous is not None and previous.get("type") == "user":
                self.last_material = None
        elif subtype == "goal_turn_end":
            permit = record.get("goalContext")
            context = previous.get("goalContext") if previous else None
            tool_call_id = payload.get("toolCallId")
            if (
                previous is not None
                and previous.get("type") == "tool_result"
                and type(permit) is dict
                and type(context) is dict
                and isinstance(permit.get("goalId"), str)
                and permit["goalId"]
                and isinstance(permit.get("turnId"), str)
                and permit["turnId"]
                and type(permit.get("revision")) is int
                and (context.get("goalId"), context.get("revision"), context.get("turnId"))
                == (permit["goalId"], permit["revision"], permit["turnId"])
                and tool_call_id in set(_response_ids((previous.get("message") or {}).get("parts") or ()))
                and self.counts.unique(tool_call_id)
            ):
                self.completed.add(tool_call_id)


def _parts_of(content: object) -> list:
    parts = content.get("parts") if type(content) is dict else None
    return parts if isinstance(parts, list) else []


def check_parts(parts: list, report: Report) -> None:
    """Qwen's rebuild reads `part.functionCall` and `"functionCall" in part`: a non-object part throws."""
    for part in parts:
        if type(part) is dict:
            continue
        report("a message part is not an object: Qwen 0.24.4 fails to resume this session")
        return


def api_history(records: ChainRecords, report: Report, *, measured: bool = False) -> Iterator[dict]:
    """`buildSessionHistoryFromConversation(...).apiHistory`, streamed (`measured`: long tool
    outputs as MeasuredText, see `ChainRecords.iter_history_records`)."""
    kinds = records.index._kind
    chain = records.chain
    start = 0
    active = False  # a slash_command or goal_turn_end after `start`: only they read the tool id counts
    for position, ident in enumerate(chain):
        kind = kinds[ident]
        if kind == COMPRESSION:
            start = position
            active = False
        elif kind == SYSTEM_ACTIVE:
            active = True
    accumulator = _Accumulator(report, track_counts=active, prompts=prompts_before(records, start) if start else 0)
    pending = accumulator.pending
    for ident, record in records.iter_history_records(start, SYSTEM_QUIET, measured=measured):
        if kinds[ident] == COMPRESSION:
            accumulator.compress(record)
            pending = accumulator.pending
        else:
            accumulator.add(record)
        while len(pending) > 2:
            yield pending.popleft()
    if not accumulator.frozen:
        yield from accumulator.drain(keep=0)


def is_degraded_placeholder(content: dict) -> bool:
    """`isDegradedPlaceholderTurn`: a model turn that only says "(request timeout)"."""
    parts = _parts_of(content)
    if not parts or not all(type(p) is dict and "functionCall" not in p and (p.get("thought") or "text" in p) for p in parts):
        return False
    text = "".join(p.get("text") or "" for p in parts if not p.get("thought"))
    return text.strip() == UPSTREAM_DEGRADED_PLACEHOLDER


def repair_orphaned_tool_use(contents: Iterable[dict], reason: str = ORPHAN_TOOL_USE_REPAIR_REASON) -> Iterator[dict]:
    """`repairOrphanedToolUseTurns`, one model turn and its answering user run at a time."""
    repair = OrphanRepair(reason)
    out: list[dict] = []
    for content in contents:
        repair.push(content, out)
        if out:
            yield from out
            out.clear()
    repair.finish(out)
    yield from out


def calls_in_progress(contents: Iterable[dict]) -> Iterator[dict]:
    """`contents` without the repair of the last model turn's unanswered calls. In a session still being
    written those calls are running (an MCP call that asks about this session is one of them), not
    interrupted: Qwen answers them with `ORPHAN_TOOL_USE_REPAIR_REASON` only when it resumes the file."""
    last = None
    for content in contents:
        if last is not None:
            yield last
        last = content
    if last is None:
        return
    parts = _parts_of(last)
    kept = [part for part in parts if not _is_repair(part)]
    if last.get("role") != "user" or len(kept) == len(parts):
        yield last
    elif kept:
        yield {**last, "parts": kept}


def _is_repair(part: object) -> bool:
    response = _function_response(part)
    return response is not None and response.get("response") == {"error": ORPHAN_TOOL_USE_REPAIR_REASON}


def still_running(session):
    """A Qwen session read while it is being written: its last model turn's calls are running, not interrupted
    (`calls_in_progress`); a session of another agent as it is (their readers add no such answer)."""
    from dataclasses import replace

    if session.agent != "qwen":
        return session
    history, measured = session.history, session.measured_history
    return replace(session, history=lambda: calls_in_progress(history()),
                   measured_history=None if measured is None else lambda: calls_in_progress(measured()))


class OrphanRepair:
    """`repairOrphanedToolUseTurns` fed one Content at a time: what it can no longer change goes to `out`.

    It holds back a window (a model turn with calls, and the user run answering it) until the
    next Content shows the window closed. `finish` closes it as the end of the history would.
    """

    def __init__(self, reason: str = ORPHAN_TOOL_USE_REPAIR_REASON):
        self.reason = reason
        self.window: list[dict] = []
        self.answering = False  # the window holds a user turn after its model turn

    def push(self, content: dict, out: list[dict]) -> None:
        role = content.get("role")
        window = self.window
        if window:
            if role == "user":
                window.append(content)
                self.answering = True
                return
            if role == "model" and not self.answering and is_degraded_placeholder(content):
                window.append(content)
                return
            out.extend(_repair_window(window, self.reason))
            self.window = []
        if role == "model" and _has_call_id(_parts_of(content)):
            self.window = [content]
            self.answering = False
        else:
            out.append(content)

    def finish(self, out: list[dict]) -> None:
        if self.window:
            out.extend(_repair_window(self.window, self.reason))
            self.window = []


def _repair_window(window: list[dict], reason: str) -> list[dict]:
    expected: dict[str, object] = {}
    for call in filter(None, map(_function_call, _parts_of(window[0]))):
        if call.get("id"):
            name = call.get("name")
            expected[call["id"]] = "unknown" if name is None else name
    adjacent = 1
    while adjacent < len(window) and window[adjacent].get("role") == "model":
        adjacent += 1
    if _answered_in_place(window, expected, adjacent):
        return window
    matched: dict[str, list[tuple[int, int, dict]]] = {}
    for turn in range(adjacent, len(window)):
        for slot, part in enumerate(_parts_of(window[turn])):
            response = _function_response(part)
            if response is not None and response.get("id"):
                matched.setdefault(response["id"], []).append((turn, slot, part))
    synthesized: list[dict] = []
    hoisted: list[dict] = []
    removals: list[tuple[int, int]] = []
    for call_id, name in expected.items():
        locations = matched.get(call_id)
        if not locations:
            synthesized.append({"functionResponse": {"id": call_id, "name": name, "response": {"error": reason}}})
            continue
        turn, slot, part = locations[0]
        if turn != adjacent:
            hoisted.append(part)
            removals.append((turn, slot))
        removals.extend((t, s) for t, s, _ in locations[1:])
    if not synthesized and not removals:
        return window
    for turn, slot in sorted(removals, reverse=True):
        del window[turn]["parts"][slot]
    for turn in range(len(window) - 1, adjacent, -1):
        if window[turn].get("role") == "user" and not _parts_of(window[turn]):
            del window[turn]
    injected = synthesized + hoisted
    if not injected:
        return window
    if adjacent < len(window) and window[adjacent].get("role") == "user":
        existing = _parts_of(window[adjacent])
        insert_at = next((i for i, p in enumerate(existing) if _function_response(p) is None), len(existing))
        window[adjacent]["parts"] = [*existing[:insert_at], *injected, *existing[insert_at:]]
    else:
        window.insert(adjacent, {"role": "user", "parts": injected})
    return window


def _answered_in_place(window: list[dict], expected: dict, adjacent: int) -> bool:
    """Every expected call answered exactly once, in the user turn right after the calls: nothing to repair."""
    seen = set()
    for turn in range(adjacent, len(window)):
        for part in _parts_of(window[turn]):
            response = part.get("functionResponse") if type(part) is dict else None
            if type(response) is not dict:
                continue
            response_id = response.get("id")
            if response_id and response_id in expected:
                if turn != adjacent or response_id in seen:
                    return False
                seen.add(response_id)
    return len(seen) == len(expected)


class ResumableHistory:
    """`resumed_history` built as the chain grows, one record at a time, able to stop and go on.

    `doctor statusline` keeps one between turns (`stored`) and feeds it only the chain records a
    turn added. Contents no later record can change are handed over once (`take_finished`);
    the last two (which `_Accumulator` may still merge into or pop) and an open repair window
    follow them (`held`, closed on copies). Together, in order, they are what
    `resumed_history` gives for the chain fed so far. A `chat_compression` starts it again
    (`restarts` counts it), as `api_history` starts at the last one; so only the records after
    it report issues. The tool id counts are always kept; `api_history` skips them when no
    record after its start reads them, which gives the same Contents.
    """

    def __init__(self) -> None:
        self.issues: list[str] = []  # what the records fed since the start (or compression) reported
        self.restarts = -1
        self._restart()

    def _restart(self) -> None:
        self.restarts += 1
        self.issues.clear()
        prompts = self.accumulator.prompts if self.restarts else 0  # turns go on across a compression
        self.accumulator = _Accumulator(self.issues.append, prompts=prompts)  # not a method of self: no reference cycle
        self.repair = OrphanRepair()
        self.done: list[dict] = []
        self.repair.push(copy_content(STARTUP_CONTEXT_STAND_IN), self.done)

    def stored(self) -> StoredHistory:
        accumulator, repair = self.accumulator, self.repair
        from doctor.core.stored import StoredHistory

        return StoredHistory(
            self.issues, self.restarts, list(accumulator.pending), list(accumulator.completed),
            list(accumulator.counts.calls.items()), list(accumulator.counts.results.items()),
            accumulator.last_material, accumulator.frozen, accumulator.track_counts,
            repair.reason, repair.window, repair.answering, self.done, accumulator.prompts)

    @classmethod
    def from_stored(cls, stored: StoredHistory) -> ResumableHistory:
        history = cls.__new__(cls)
        history.issues, history.restarts, history.done = stored.issues, stored.restarts, stored.done
        accumulator = history.accumulator = _Accumulator(history.issues.append, stored.track_counts, stored.prompts)
        accumulator.pending.extend(stored.pending)
        accumulator.completed = set(stored.completed)
        accumulator.counts.calls.update(dict(stored.calls))
        accumulator.counts.results.update(dict(stored.results))
        accumulator.last_material, accumulator.frozen = stored.last_material, stored.frozen
        history.repair = OrphanRepair(stored.reason)
        history.repair.window, history.repair.answering = stored.window, stored.answering
        return history

    def extend(self, records: ChainRecords, start: int, *, measured: bool = False) -> None:
        """Add the chain's records from position `start` on (`measured`: see `api_history`)."""
        kinds = records.index._kind
        for ident, record in records.iter_history_records(start, SYSTEM_QUIET, measured=measured):
            if kinds[ident] == COMPRESSION:
                self._restart()
                self.accumulator.compress(record)
            else:
                self.accumulator.add(record)
            pending = self.accumulator.pending
            while len(pending) > 2:
                self.repair.push(pending.popleft(), self.done)

    def take_finished(self) -> list[dict]:
        """The Contents finished since the last call (since the last restart, if there was one)."""
        finished, self.done = self.done, []
        return finished

    def held(self) -> list[dict]:
        """What follows the finished Contents if the chain ended here (copies: this object is left as it was)."""
        contents: list[dict] = []
        repair = copy.deepcopy(self.repair)
        if not self.accumulator.frozen:
            for content in copy.deepcopy(self.accumulator.pending):
                repair.push(content, contents)
        repair.finish(contents)
        return contents


def resumed_history(records: ChainRecords, report: Report, *, measured: bool = False) -> Iterator[dict]:
    """The LlmChat history right after `startChat` on resume: what `/doctor memory` analyses."""
    contents = api_history(records, report, measured=measured)
    yield from repair_orphaned_tool_use(_with_startup_context(contents))


def _with_startup_context(contents: Iterable[dict]) -> Iterator[dict]:
    yield copy_content(STARTUP_CONTEXT_STAND_IN)
    yield from contents
