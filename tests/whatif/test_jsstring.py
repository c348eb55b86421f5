"""The UTF-16 unit form the replays cut text in, against JavaScript's definition: one item per UTF-16 code unit.

`to_units` and `from_units` remember which unit forms came from texts without surrogates (so a result the layers
leave as it was is not converted back); texts holding their own surrogates, lone or as a pair of separate code
points, must still come back exactly as a UTF-16 decoder joins them.
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from doctor.whatif.jsstring import from_units, to_units
from doctor.whatif.utf16 import js_head, js_tail

CHARACTERS = st.one_of(st.characters(max_codepoint=0x7F), st.characters(min_codepoint=0x80, max_codepoint=0x7FF),
                       st.characters(blacklist_categories=()),  # surrogates too
                       st.characters(min_codepoint=0x10000), st.sampled_from("\ud83d\ude00\udfff"))
TEXTS = st.text(alphabet=CHARACTERS, max_size=12)


def js_units(text: str) -> str:
    """JavaScript's view of a string: each UTF-16 code unit one item."""
    data = text.encode("utf-16-le", "surrogatepass")
    return "".join(chr(int.from_bytes(data[i:i + 2], "little")) for i in range(0, len(data), 2))


def decoded(units: str) -> str:
    """What a UTF-16 decoder makes of units: pairs joined, lone surrogates kept."""
    return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


@given(st.lists(TEXTS, max_size=6), st.integers(min_value=0, max_value=14))
@example(["\ud83d\ude00\U0001F600", "\U0001F600"], 1)  # a pair kept as two code points beside an astral character
@example(["a\ud83d", "\ude00b\U0001F600"], 2)
def test_unit_forms_and_their_way_back_are_javascripts(texts, cut):
    forms = [to_units(text) for text in texts]  # all converted first, as a replay does, then turned back
    for text, units in zip(texts, forms):
        assert units == js_units(text)
        assert from_units(units) == decoded(units)
        assert from_units(units[:cut]) == decoded(units[:cut]) and from_units(units[cut:]) == decoded(units[cut:])
        assert js_head(text, cut) == decoded(js_units(text)[:cut])
        assert js_tail(text, cut) == (text if cut == 0 else decoded(js_units(text)[-cut:]))
