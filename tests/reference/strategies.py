"""Hypothesis strategies for histories that stress every rule of Qwen's estimator.

Shared by the differential test (against the live 0.24.4 bundle) and by
`make_vectors.py` (which freezes Qwen's answers into vectors.jsonl).
"""

from __future__ import annotations

from hypothesis import strategies as st

from doctor.core.sentinels import PERSISTED_OUTPUT_OPEN_TAG, TOOL_OUTPUT_TRUNCATED_PREFIX

TOOL_NAMES = [
    "run_shell_command", "read_file", "grep_search", "search_file_content", "web_search", "agent",
    "task", "replace", "glob", "mcp__db__query", "mcp__a__b__c", "tool_search", "shell", "",
    "unknown_tool", "Shell", "__proto__", "constructor",
]

# Unicode that changes JS lengths or JSON escaping: astral, lone surrogates, controls, quotes.
_tricky_chars = st.one_of(
    st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    st.characters(min_codepoint=0, max_codepoint=0x1F),
    st.sampled_from(['"', "\\", "\u2028", "\u2029", "\x7f", "é", "中", "\ufeff"]),
)
_any_char = st.characters(codec=None, exclude_categories=())
strings = st.one_of(
    st.text(max_size=40),
    st.text(_tricky_chars, max_size=20),
    st.text(st.one_of(_any_char, _tricky_chars), max_size=60),
    st.builds(lambda n, c: c * n, st.integers(0, 70000), st.sampled_from(["x", "é", "😀", "\n", "\ud83d"])),
    st.builds(lambda p, rest: p + rest, st.sampled_from([TOOL_OUTPUT_TRUNCATED_PREFIX, PERSISTED_OUTPUT_OPEN_TAG, "Tool output truncated."]),
              st.text(max_size=20)),
)
numbers = st.one_of(
    st.integers(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.1, 1e21, 1e-7, 123456789012345680000.0, -0.0, 5e-324, 1.5e300, 2**53 + 1]),
)
keys = st.one_of(st.text(max_size=8), st.sampled_from(["0", "1", "10", "01", "-1", "4294967294", "4294967295", "1.5"]))
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, strings),
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)),
    max_leaves=12,
)
falsy_or_truthy = st.sampled_from([{}, {"data": "x", "mimeType": "image/png"}, "", "abc", 0, 1, None, False, True, []])


def _maybe(key: str, value_strategy) -> st.SearchStrategy:
    return st.one_of(st.just({}), value_strategy.map(lambda v: {key: v}))


def _merge(*dicts) -> dict:
    merged: dict = {}
    for d in dicts:
        merged.update(d)
    return merged


responses = st.one_of(
    st.just({}),
    st.none(),
    st.builds(_merge, _maybe("output", st.one_of(strings, json_values)), _maybe("error", st.one_of(strings, json_values))),
    json_values,
)


def function_responses(parts_strategy) -> st.SearchStrategy:
    return st.builds(
        _merge,
        _maybe("id", st.one_of(st.text(max_size=10), st.none())),
        _maybe("name", st.one_of(st.sampled_from(TOOL_NAMES), st.text(max_size=10), st.none(), st.integers(0, 9))),
        _maybe("response", responses),
        _maybe("parts", st.one_of(st.lists(parts_strategy, max_size=3), json_values)),
    )


def _parts(children) -> st.SearchStrategy:
    function_response_part = st.builds(lambda fr: {"functionResponse": fr}, function_responses(children))
    plain_result = st.builds(
        lambda name, text, key: {"functionResponse": {"id": "c", "name": name, "response": {key: text}}},
        st.sampled_from(TOOL_NAMES), strings, st.sampled_from(["output", "error"]),
    )
    return st.one_of(
        plain_result,
        plain_result,
        function_response_part,
        st.builds(lambda t: {"text": t}, strings),
        st.builds(lambda v: {"inlineData": v}, falsy_or_truthy),
        st.builds(lambda v: {"fileData": v}, falsy_or_truthy),
        st.builds(lambda a: {"functionCall": {"name": "x", "args": a}}, json_values),
        st.dictionaries(keys, json_values, max_size=3),
        st.builds(_merge, _maybe("text", json_values), _maybe("functionResponse", st.one_of(falsy_or_truthy, function_responses(children))),
                  _maybe("inlineData", falsy_or_truthy), _maybe("thought", st.booleans())),
        st.one_of(st.integers(0, 5), st.text(max_size=3), st.lists(st.none(), max_size=1)),
    )


parts = st.recursive(st.builds(lambda t: {"text": t}, strings), _parts, max_leaves=6)
contents = st.builds(
    _merge,
    _maybe("role", st.sampled_from(["user", "model", "function", None])),
    st.one_of(
        st.lists(parts, max_size=5).map(lambda p: {"parts": p}),
        st.lists(parts, max_size=5).map(lambda p: {"parts": p}),
        st.lists(parts, max_size=5).map(lambda p: {"parts": p}),
        st.sampled_from([{}, {"parts": None}, {"parts": {}}, {"parts": "ab"}, {"parts": 3}]),
    ),
)
histories = st.lists(contents, max_size=6)
budget_values = st.one_of(st.integers(0, 70000), st.sampled_from(["Infinity", 0, 10, 100, 500000, 20000]))
options = st.builds(
    _merge,
    _maybe("thresholdChars", st.sampled_from([25000, 30000, 5, 0, 100, 1000, "Infinity", 60000])),
    _maybe("budgets", st.dictionaries(st.sampled_from(TOOL_NAMES), budget_values, max_size=5)),
    _maybe("imageTokenEstimate", st.sampled_from([1600, 800, 2.5, 1])),
)
cases = st.builds(lambda h, p, o: {"history": h, "parts": p, **o}, histories, st.lists(parts, max_size=4), options)
