"""Reader states that go on from where they stopped: what `doctor statusline` keeps between turns.

Each state holds one agent reader's pass over a transcript up to the last complete line, and
`feed` reads on from there; `settle` does what must be saved with it, and `analysis` gives the
retention analysis `doctor memory` would make of the file as it is. Claude: `ClaudeFileReader`
(the file's thread and tallies so far), whose long strings (tool outputs, prompts) become
`MeasuredText`, their head and JS length, all the retention analysis reads of them, so that
the stored state stays small. Text starting with a sentinel header keeps its first
1,024 characters: the header the analysis parses (spill path, sizes); the status line's
figures need no more. Qwen: `TranscriptIndex`, pass 1's metadata (offsets, chain links,
output lengths), the resumed history built along the chain so far (`ResumableHistory`) and
the measured results of the Contents it finished.

Each state gives itself as data (`stored`, a msgspec Struct of `stored_type()`) and is made
again from it (`restored`), for `cache` to keep between calls.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from doctor.core.jsvalues import MeasuredText, js_len
from doctor.core.sentinels import SENTINEL_PREFIXES

if TYPE_CHECKING:
    from doctor.core.analysis import RetentionAnalysis

# Strings up to this long stay as they are; longer ones keep this many characters of head (a text
# starting with a sentinel header keeps more: the header, which names the spill file and sizes).
KEEP_CHARS = 256
SENTINEL_KEEP_CHARS = 1024


class ClaudeState:
    agent = "claude"

    def __init__(self, path: Path):
        from doctor.sources.claude.file import ClaudeFileReader

        self.reader = ClaudeFileReader(path)
        self._measured: list[tuple[list, int]] = []  # per thread: its contents list, Contents cut so far

    @property
    def offset(self) -> int:
        return self.reader.cursor.offset

    def feed(self, *, whole_lines_only: bool) -> None:
        self.reader.feed(whole_lines_only=whole_lines_only)
        file = self.reader.file
        cut: dict[int, MeasuredText] = {}  # id of a long string -> what replaced it, to share it
        measured = []
        for number, thread in enumerate((file.thread, file.sidechain)):
            contents = thread.contents
            # Only Contents added since the last feed and the two before (a streamed model message and
            # the results after it take more parts); a compact boundary gives a new list, walked whole.
            # A string left uncut is only a bigger index: what is measured stays exact.
            seen = self._measured[number] if number < len(self._measured) else (None, 0)
            start = max(0, seen[1] - 2) if seen[0] is contents else 0
            for content in contents[start:]:
                _measure_parts(content.get("parts"), cut)
            measured.append((contents, len(contents)))
        self._measured = measured
        if cut:  # persisted-output stubs are also listed with their text: the same, now shorter, string
            file.stubs = [(fr, cut.get(id(text), text), boundaries) for fr, text, boundaries in file.stubs]

    def settle(self, options) -> bool:
        """Nothing to do before saving: the analysis reads the thread, which the state keeps."""
        return False

    @staticmethod
    def stored_type() -> type:
        from doctor.sources.claude.stored import StoredReader

        return StoredReader

    def stored(self):
        from doctor.sources.claude.stored import stored

        return stored(self.reader)

    @classmethod
    def restored(cls, path: Path, saved) -> ClaudeState:
        """The state `saved` was made from. Every Content it holds was cut when it was saved."""
        from doctor.sources.claude.stored import restored

        state = cls.__new__(cls)
        state.reader = restored(path, saved)
        file = state.reader.file
        state._measured = [(thread.contents, len(thread.contents)) for thread in (file.thread, file.sidechain)]
        return state

    def analysis(self, options) -> RetentionAnalysis | None:
        """The session's analysis as `doctor memory` makes it. Names late results in place: call it
        last, after the state was saved."""
        from doctor.assemble import session_analysis
        from doctor.sources.claude import session_from_file

        session = session_from_file(self.reader.finish(), details=False)
        return session_analysis(session, options)[1]


class QwenState:
    """Qwen: pass 1 (`TranscriptIndex`), the chain it walked, the history rebuilt along it
    (`ResumableHistory`) and the results of its finished Contents, measured (`ResultTable`).

    A turn whose records only extend the chain (the new leaf descends from the last one, no
    earlier record changed) costs just those records: they go through the history, what it
    finishes is measured into the table, and only what it still holds back is measured again
    each call. Anything else (a rewind's branch, another fragment of an earlier record, a
    filled gap, a loop) walks the chain again and rebuilds the history; so do budgets that
    would measure the table's rows differently (settings or doctor's config changed), since
    the measured Contents are not kept. The UI history is not rebuilt: of the report it feeds
    only `largeOutputsInUIHistory`, which the line does not show.
    """

    agent = "qwen"

    def __init__(self, path: Path):
        from array import array

        from doctor.sources.qwen.transcript import TranscriptIndex

        self.index = TranscriptIndex(path)
        self.offset = 0
        self.lines = 0
        self.walked: tuple = (array("q"), None, None)  # `TranscriptIndex.walk_chain()`: chain, gap, loop
        self._start_history()

    @staticmethod
    def stored_type() -> type:
        from doctor.statusline.stored_qwen import StoredQwenState

        return StoredQwenState

    def stored(self):
        """The state as data, without this call's settings (read from the settings files each time)."""
        from doctor.statusline.stored_qwen import StoredGap, StoredQwenState

        chain, gap, loop = self.walked
        return StoredQwenState(
            self.index.stored(), self.offset, self.lines, chain.tobytes(),
            None if gap is None else StoredGap(gap.child_uuid, gap.missing_parent_uuid), loop,
            self.history.stored(), self.generation, None if self.table is None else self.table.stored(),
            self.measured, self.unmeasured, self.unavailable)

    @classmethod
    def restored(cls, path: Path, saved) -> QwenState:
        """The state `saved` was made from; ValueError when its parts disagree."""
        from array import array

        from doctor.core.result_table import ResultTable
        from doctor.sources.qwen.history import ResumableHistory
        from doctor.sources.qwen.transcript import ChainGap, TranscriptIndex

        state = cls.__new__(cls)
        state.index = TranscriptIndex.from_stored(path, saved.index)
        state.offset, state.lines = saved.offset, saved.lines
        chain = array("q")
        chain.frombytes(saved.chain)
        if chain and not 0 <= min(chain) <= max(chain) < len(state.index._uuids):
            raise ValueError("stored chain names a record the index does not hold")
        gap = None if saved.gap is None else ChainGap(saved.gap.child_uuid, saved.gap.missing_parent_uuid)
        state.walked = (chain, gap, saved.loop)
        state.history = ResumableHistory.from_stored(saved.history)
        state.generation = saved.generation
        state.table = None if saved.table is None else ResultTable.from_stored(saved.table)
        state.measured, state.unmeasured, state.unavailable = saved.measured, saved.unmeasured, saved.unavailable
        return state

    def _start_history(self) -> None:
        from doctor.sources.qwen.history import ResumableHistory

        self.history = ResumableHistory()
        self.generation = self.history.restarts  # the history start the measures below belong to
        self.table = None  # ResultTable of the Contents measured so far (None: nothing measured yet)
        self.measured = 0  # how many Contents it measured: the next one's index
        self.unmeasured: list[dict] = []  # finished, not measured yet
        self.unavailable = False  # a measured Content the analysis cannot read (Qwen's analyzer throws)

    def feed(self, *, whole_lines_only: bool) -> None:
        from doctor.sources.qwen.transcript import extend_index

        index = self.index
        leaf, ids, fragments = index.leaf, len(index._uuids), _fragments(index)
        self.offset, self.lines = extend_index(index, self.offset, self.lines, whole_lines_only=whole_lines_only)
        if index.leaf == leaf and _fragments(index) == fragments:
            return  # no conversation record came
        added = self._extension(leaf, ids, fragments)
        if added is None:
            self._rebuild()
        else:
            chain = self.walked[0]
            start = len(chain)
            chain.extend(added)
            self._extend_history(start)

    def _rebuild(self) -> None:
        self.walked = self.index.walk_chain()
        self._start_history()
        self._extend_history(0)

    def _extend_history(self, start: int) -> None:
        from doctor.sources.qwen.transcript import ChainRecords

        history = self.history
        history.extend(ChainRecords(self.index, self.walked[0]), start, measured=True)
        if history.restarts != self.generation:  # a chat_compression replaced what was measured
            self.generation, self.table, self.measured, self.unmeasured = history.restarts, None, 0, []
            self.unavailable = False
        self.unmeasured.extend(history.take_finished())

    def _extension(self, leaf: int | None, ids: int, fragments: int) -> list[int] | None:
        """The chain records after the last leaf when the chain only grew, oldest first; else None."""
        index = self.index
        chain, gap, loop = self.walked
        if leaf is None or not chain or loop is not None or _fragments(index) != fragments:
            return None
        if gap is not None and index.has_record(index._ids[gap.missing_parent_uuid]):
            return None  # the missing parent came: older records join the chain
        added: list[int] = []
        current = index.leaf
        while current != leaf:
            if len(added) > len(index._uuids) - ids:
                return None  # not new records only: a branch from an earlier one, or a loop
            added.append(current)
            parent = index._parent[current]
            if parent < 0 or not index.has_record(parent):
                return None  # a new root or a gap: the walk does not reach the last leaf
            current = parent
        added.reverse()
        return added

    def settle(self, options) -> bool:
        """Measure the finished Contents with the session's budgets (rebuilding when they changed);
        True when the table changed."""
        from doctor.core.analysis import new_table

        if self.index.first_record is None:
            return False  # no session yet (its settings come from the first record); `analysis` says so
        settings = self._settings_for(options)
        budgets, estimate = settings.budgets, settings.image_token_estimate
        changed = bool(self.unmeasured)
        if self.table is not None and not self.table.measures_alike(budgets.result_budget, budgets.threshold, estimate,
                                                                   budgets.exempt_prefixes):
            self._rebuild()
            changed = True
        if self.table is None:
            self.table = new_table(budgets, estimate, None, turns_marked=True)
        self._measure(self.unmeasured)
        self.unmeasured = []
        return changed

    def analysis(self, options) -> RetentionAnalysis | None:
        """The figures' analysis: the table, then what the history still holds back (measured on
        this call only). None where `doctor memory` finds the analysis unavailable."""
        from doctor.core.analysis import analysis_of_table

        self.settle(options)
        settings = self._settings_for(options)
        self._measure(self.history.held())
        if self.unavailable:
            return None
        return analysis_of_table(self.table, None, settings.budgets, settings.image_token_estimate)

    def _measure(self, contents: list[dict]) -> None:
        from doctor.core.retention import RetentionUnavailable

        if contents and not self.unavailable:
            try:
                self.table.extend(contents, self.measured)
            except RetentionUnavailable:
                self.unavailable = True  # as for `doctor memory`, until a compression replaces these Contents
        self.measured += len(contents)

    def _settings_for(self, options):
        """The session's settings (read once a call): its project's Qwen settings and rules."""
        settings = getattr(self, "_settings", None)
        if settings is None:
            from doctor.assemble import session_settings
            from doctor.sources.qwen import session_from_index

            settings = self._settings = session_settings(session_from_index(self.index, self.walked), options)
        return settings


def _fragments(index) -> int:
    """How many later fragments of earlier records pass 1 has seen (each changes its record)."""
    return sum(map(len, index._extra_fragments.values()))


STATES = {"claude": ClaudeState, "qwen": QwenState}


def _measure_parts(parts: object, cut: dict) -> None:
    """Cut the long texts, tool outputs and errors of `parts` to MeasuredText, in place."""
    for part in parts if type(parts) is list else ():
        if type(part) is not dict:
            continue
        if "text" in part:
            part["text"] = _measured(part["text"], cut)
        fr = part.get("functionResponse")
        response = fr.get("response") if type(fr) is dict else None
        if type(response) is dict:
            for key in ("output", "error"):
                if key in response:
                    response[key] = _measured(response[key], cut)


def _measured(value: object, cut: dict) -> object:
    if type(value) is not str or len(value) <= KEEP_CHARS:
        return value
    keep = SENTINEL_KEEP_CHARS if value.startswith(SENTINEL_PREFIXES) else KEEP_CHARS
    if len(value) <= keep:
        return value
    measured = cut[id(value)] = MeasuredText(value[:keep], js_len(value))
    return measured
