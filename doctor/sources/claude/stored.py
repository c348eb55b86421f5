"""A Claude reader's state as data, for `doctor statusline`'s index: `stored(reader)`, `restored(path, stored)`.

The reader's objects share functionResponse dicts: a thread's `results_by_id`, the call-name join's
pending results and the persisted-output stubs point at parts of the threads' Contents, which
microcompaction and the late name join change in place. Data shares nothing, so each such
functionResponse is stored once, where its Content holds it, and named elsewhere by that place:
(thread, Content, part). One that no Content holds any more (compaction dropped its Content) is
stored once among `orphans` and named (ORPHANS, its position, 0). A stub's text that is its
functionResponse's text (the same object) is stored as None, not twice. The Contents are JSON
values (their long texts `MeasuredText`, which the index's encoder keeps as such).
"""

from __future__ import annotations

from pathlib import Path

from doctor.core.stored import Place, StoredReader, StoredTally, StoredThread
from doctor.sources.base import SideChannelCopy, restored_issue, stored_issue
from doctor.sources.claude.file import ClaudeFile, ClaudeFileReader
from doctor.sources.claude.thread import ClaudeThread
from doctor.sources.claude_codex_common import Tally, result_text
from doctor.sources.jsonl import Cursor

ORPHANS = 2


def stored(reader: ClaudeFileReader) -> StoredReader:
    file = reader.file
    threads = (file.thread, file.sidechain)
    places = _places(threads)
    orphans: list = []

    def place(fr: dict) -> Place:
        found = places.get(id(fr))
        if found is None:
            found = places[id(fr)] = (ORPHANS, len(orphans), 0)
            orphans.append(fr)
        return found

    names = file.names
    return StoredReader(
        reader.cursor.offset, reader.cursor.lines, list(reader._seen_uuids), reader._result_lines,
        file.session_id, file.agent_id, file.started, file.version, file.cwd, file.is_sidechain_file,
        [(copy.kind, copy.count, copy.chars) for copy in file.side_channel.values()],
        [stored_issue(issue) for issue in file.issues],
        tuple(_stored_thread(thread, place) for thread in threads), orphans, names._names,
        [(place(fr), line) for fr, line in names._pending],
        [(place(fr), None if text is result_text(fr) else text, boundaries) for fr, text, boundaries in file.stubs])


def restored(path: Path, saved: StoredReader) -> ClaudeFileReader:
    """The reader `saved` was made from, reading `path` on from where it stopped (its long texts stay
    measured: no MeasuredOutputs). Raises ValueError when a place names nothing there."""
    reader = ClaudeFileReader.__new__(ClaudeFileReader)
    reader.cursor = Cursor(saved.offset, saved.lines)
    reader._seen_uuids, reader._result_lines = set(saved.seen_uuids), saved.result_lines
    file = reader.file = ClaudeFile(path)
    file.session_id, file.agent_id, file.started = saved.session_id, saved.agent_id, saved.started
    file.version, file.cwd, file.is_sidechain_file = saved.version, saved.cwd, saved.is_sidechain_file
    file.side_channel = {kind: SideChannelCopy(kind, count, chars) for kind, count, chars in saved.side_channel}
    file.issues = [restored_issue(path, issue) for issue in saved.issues]
    threads = [_restored_thread(thread) for thread in saved.threads]
    file.thread, file.sidechain = threads

    def at(place: Place) -> dict:
        thread, content, part = place
        try:
            fr = saved.orphans[content] if thread == ORPHANS else threads[thread].contents[content]["parts"][part]["functionResponse"]
        except (LookupError, TypeError):
            fr = None
        if type(fr) is not dict:
            raise ValueError(f"stored place {place} holds no functionResponse")
        return fr

    for thread, kept in zip(threads, saved.threads):
        thread.results_by_id = {call_id: at(place) for call_id, place in kept.results_by_id.items()}
    file.names._names = saved.names
    file.names._pending = [(at(place), line) for place, line in saved.pending]
    file.stubs = [(fr, result_text(fr) if text is None else text, boundaries)
                  for fr, text, boundaries in ((at(place), text, boundaries) for place, text, boundaries in saved.stubs)]
    return reader


def _places(threads) -> dict[int, Place]:
    """Where each functionResponse of the threads' Contents is, by its id()."""
    places = {}
    for number, thread in enumerate(threads):
        for position, content in enumerate(thread.contents):
            parts = content.get("parts")
            for slot, part in enumerate(parts if type(parts) is list else ()):
                fr = part.get("functionResponse") if type(part) is dict else None
                if type(fr) is dict:
                    places[id(fr)] = (number, position, slot)
    return places


def _stored_thread(thread: ClaudeThread, place) -> StoredThread:
    contents = thread.contents
    return StoredThread(
        contents, {call_id: place(fr) for call_id, fr in thread.results_by_id.items()},
        *(StoredTally(t.count, t.raw_chars, t.largest_raw, t.calls)
          for t in (thread.seen, thread.active, thread.compacted, thread.microcompacted)),
        thread.boundaries, _position(contents, thread._model), thread._model_id, _position(contents, thread._results),
        thread.prompts.count, thread.prompts._after_caveat, thread._resumed)


def _restored_thread(saved: StoredThread) -> ClaudeThread:
    thread = ClaudeThread()
    contents = thread.contents = saved.contents
    for content in contents:
        if type(content) is not dict or type(content.get("parts")) is not list:
            raise ValueError("stored Contents are not Contents")
    thread.seen, thread.active, thread.compacted, thread.microcompacted = (
        Tally(t.count, t.raw_chars, t.largest_raw, t.calls)
        for t in (saved.seen, saved.active, saved.compacted, saved.microcompacted))
    thread.boundaries, thread._model_id = saved.boundaries, saved.model_id
    thread.prompts.count, thread.prompts._after_caveat, thread._resumed = saved.prompts, saved.after_caveat, saved.resumed
    try:
        thread._model = None if saved.model is None else contents[saved.model]
        thread._results = None if saved.results is None else contents[saved.results]
    except IndexError:
        raise ValueError("stored thread names a Content it does not hold") from None
    return thread


def _position(contents: list, content: dict | None) -> int | None:
    """Where `content` (the object itself) is in `contents`: near the end, where streaming merges."""
    if content is None:
        return None
    for position in range(len(contents) - 1, -1, -1):
        if contents[position] is content:
            return position
    raise ValueError("a thread's open Content is not among its Contents")
