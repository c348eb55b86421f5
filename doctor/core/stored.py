"""The shapes of the reader states `doctor statusline` keeps between calls, as msgspec Structs.

Each resumable state (Qwen's pass 1 `TranscriptIndex`, its `ResumableHistory`, a `ResultTable`,
Claude's `ClaudeFileReader`) turns itself into one of these (`stored()`) and is made again from
it (`from_stored`/`restored`); `doctor.statusline.cache` writes them as MessagePack and reads
them back with a typed decoder, which builds these Structs and JSON values and nothing else.
JSON values from a session (Contents, records, call ids) are `Any`: the readers' own checks apply
to them as to a freshly read line. Columns of numbers are the bytes of their `array`.

This module does not use `from __future__ import annotations`: a decoder reads these types
from the classes, and string annotations would be compiled one by one on every status line.
"""

from typing import Any, Optional, Union

from msgspec import Struct

from doctor.core.sentinels import StubInfo

Number = Union[int, float]
# A Budget as data, its numbers as they are (a Budget declares floats; settings give ints).
StoredBudget = tuple[Number, str, str, Optional[Number]]


class StoredIssue(Struct, array_like=True):
    """A SourceIssue of the file the state reads (its path is the state's)."""

    line: Optional[int]
    message: str
    severity: str


class StoredTable(Struct, array_like=True):
    """A ResultTable: its settings, each column's bytes, the per-tool lists."""

    threshold: StoredBudget
    image_token_estimate: Number
    exempt: list[str]
    content_index: bytes
    part_index: bytes
    turn: bytes
    chars: bytes
    raw_chars: bytes
    flags: bytes
    tool: bytes
    call_ids: list[Optional[str]]
    tools: list[str]
    budgets: list[StoredBudget]
    limits: list[Number]
    tool_index: list[tuple[Optional[str], int]]
    stubs: dict[int, StubInfo]
    count: int
    total: Number
    largest: Number
    oversized: int
    turns: int
    turns_marked: bool


class StoredIndex(Struct, array_like=True):
    """A Qwen TranscriptIndex: each column's bytes, the uuids, the rest as it is."""

    issues: list[StoredIssue]
    ui_display: tuple[int, int]
    first_record: Any
    session_ids: dict[str, int]
    uuids: list[str]
    columns: list[bytes]
    subtypes: dict[int, str]
    position: dict[int, int]
    extra_fragments: dict[int, list[tuple[int, int]]]
    leaf: Optional[int]


class StoredHistory(Struct, array_like=True):
    """A Qwen ResumableHistory: Contents and records as their JSON values."""

    issues: list[str]
    restarts: int
    pending: list[Any]
    completed: list[str]
    calls: list[tuple[Any, int]]
    results: list[tuple[Any, int]]
    last_material: Any
    frozen: bool
    track_counts: bool
    reason: str
    window: list[Any]
    answering: bool
    done: list[Any]
    prompts: int  # the person's prompts so far (turns go on across a compression)


# Where a Claude functionResponse is: (thread, Content, part), or (ORPHANS, position, 0) (doctor/sources/claude/stored.py).
Place = tuple[int, int, int]


class StoredTally(Struct, array_like=True):
    count: int
    raw_chars: int
    largest_raw: int
    calls: list[Any]


class StoredThread(Struct, array_like=True):
    """A ClaudeThread: its Contents, and the Contents it merges into by position."""

    contents: list[Any]
    results_by_id: dict[str, Place]
    seen: StoredTally
    active: StoredTally
    compacted: StoredTally
    microcompacted: StoredTally
    boundaries: int
    model: Optional[int]  # the Content streamed model lines merge into
    model_id: Any
    results: Optional[int]  # the Content parallel results merge into
    prompts: int  # the person's prompts so far (turns), and what `PromptCounter` and the thread hold over
    after_caveat: bool  # from one record to the next
    resumed: bool


class StoredReader(Struct, array_like=True):
    """A ClaudeFileReader: the cursor, the file so far, its shared functionResponses by place."""

    offset: int
    lines: int
    seen_uuids: list[str]
    result_lines: dict[str, int]
    session_id: Optional[str]
    agent_id: Optional[str]
    started: Any
    version: Any
    cwd: Optional[str]
    is_sidechain_file: Optional[bool]
    side_channel: list[tuple[str, int, int]]
    issues: list[StoredIssue]
    threads: tuple[StoredThread, StoredThread]  # the file's own thread, its inline sidechain
    orphans: list[Any]
    names: dict[str, str]
    pending: list[tuple[Place, Optional[int]]]
    stubs: list[tuple[Place, Any, int]]  # (its functionResponse, its text or None: that one's, compact boundaries before)
