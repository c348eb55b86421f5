"""`MemoryReport.to_json()`'s return type: the JSON text, still readable as the old dict for one release.

Until doctor 0.x `to_json()` returned the report as a dict although its name
says text. It now returns the text `doctor memory --json` prints; callers that
index it like a dict (`report.to_json()["toolResultRetention"]`) keep working
for one release and get a DeprecationWarning pointing them to `to_dict()`.
Everything a str does (slicing, `in`, writing it out) behaves as a str.
"""

from __future__ import annotations

import json
import warnings

from doctor.report.inert import inert_json

MIGRATION = "MemoryReport.to_json() returns JSON text now; use to_dict() for the object (dict use of to_json() goes away in the next release)"


class JsonText(str):
    """JSON text that also answers the dict operations old callers of `to_json()` used, with a warning."""

    __slots__ = ("_data",)

    def __new__(cls, text: str, data: dict):
        self = super().__new__(cls, text)
        self._data = data
        return self

    def _legacy(self) -> dict:
        warnings.warn(MIGRATION, DeprecationWarning, stacklevel=3)
        return self._data

    def __getitem__(self, key):
        if isinstance(key, str):
            return self._legacy()[key]
        return str.__getitem__(self, key)

    def __eq__(self, other):
        if isinstance(other, dict):
            return self._legacy() == other
        return str.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    __hash__ = str.__hash__

    def get(self, key, default=None):
        return self._legacy().get(key, default)

    def keys(self):
        return self._legacy().keys()

    def values(self):
        return self._legacy().values()

    def items(self):
        return self._legacy().items()


def json_text(data: dict) -> JsonText:
    """`data` as `doctor memory --json` prints it (indented, inert, final newline), dict access deprecated."""
    return JsonText(inert_json(json.dumps(data, indent=2, ensure_ascii=False)) + "\n", data)
