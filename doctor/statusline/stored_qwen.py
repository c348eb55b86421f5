"""The Qwen status-line state (`resume.QwenState`) as data: pass 1's index, the chain it walked, the
resumed history and the measured results, each as its own module stores it. No string annotations
here either (see doctor/core/stored.py)."""

from typing import Any, Optional

from msgspec import Struct

from doctor.core.stored import StoredHistory, StoredIndex, StoredTable


class StoredGap(Struct, array_like=True):
    child_uuid: str
    missing_parent_uuid: str


class StoredQwenState(Struct, array_like=True):
    index: StoredIndex
    offset: int
    lines: int
    chain: bytes  # `walk_chain()`'s ids, an array("q")
    gap: Optional[StoredGap]
    loop: Optional[str]
    history: StoredHistory
    generation: int
    table: Optional[StoredTable]
    measured: int
    unmeasured: list[Any]
    unavailable: bool
