"""A regular expression compiled when first used, not when its module is imported.

`doctor statusline` and `doctor hook` run after every turn or tool call, so start-up is most of
their cost, and they import modules (the sentinel headers, the dump sniffer) whose patterns they
seldom or never use. A `LazyPattern` stands in for the compiled pattern: `search`, `match`,
`finditer`, … compile it on the first call (`re` caches it) and answer as it would.
"""

from __future__ import annotations

import re


class LazyPattern:
    __slots__ = ("_pattern", "_flags", "_compiled")

    def __init__(self, pattern: str | bytes, flags: int = 0):
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern | None = None

    def __getattr__(self, name: str):
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._pattern, self._flags)
        return getattr(compiled, name)
