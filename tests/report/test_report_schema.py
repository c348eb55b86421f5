"""`doctor memory --json` validates against the schema in the repo, on every session we have, keys in a stable order.

The schema closes every object (`additionalProperties: false`), so a key added to
the report without documenting it fails here. Key order is checked against the
order the schema lists its properties, which is the order the report promises.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from report_support import SCHEMA, all_sources, run_cli, source_id


@cache
def _schema() -> dict:
    schema = json.loads(SCHEMA.read_text())
    Draft202012Validator.check_schema(schema)
    return schema


def _validate(report: dict) -> None:
    errors = sorted(Draft202012Validator(_schema()).iter_errors(report), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{e.json_path}: {e.message[:300]}" for e in errors[:10])


def _resolve(node: dict) -> dict:
    while "$ref" in node:
        node = _schema()["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _branch(node: dict, value) -> dict:
    """The oneOf branch `value` matches (validation already proved there is exactly one)."""
    node = _resolve(node)
    for option in node.get("oneOf", ()):
        if Draft202012Validator({**option, "$defs": _schema()["$defs"]}).is_valid(value):
            return _resolve(option)
    return node


def _assert_schema_order(node: dict, value, where: str = "$") -> None:
    node = _branch(node, value)
    if isinstance(value, dict) and "properties" in node:
        order = [key for key in node["properties"] if key in value]
        assert list(value) == order, f"{where}: keys {list(value)} not in schema order {order}"
        for key, item in value.items():
            _assert_schema_order(node["properties"][key], item, f"{where}.{key}")
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for index, item in enumerate(value):
            _assert_schema_order(node["items"], item, f"{where}[{index}]")


@pytest.mark.parametrize("path", all_sources(), ids=source_id)
def test_json_report_validates_in_schema_order(capsys, path: Path) -> None:
    code, out, err = run_cli(capsys, "memory", path, "--json")
    assert code in (0, 3), err
    report = json.loads(out)
    _validate(report)
    _assert_schema_order(_schema(), report)


def test_every_optional_part_validates(capsys) -> None:
    """Process diagnostics (with samples and the type summary), previews and hashed paths together."""
    path = all_sources()[0]
    code, out, err = run_cli(capsys, "memory", path, "--json", "--self", "--sample", "--deep",
                             "--include-previews", "--paths", "hash")
    assert code == 0, err
    report = json.loads(out)
    assert report["process"]["samples"]["sampleCount"] == 3 and report["process"]["typeSummary"]
    assert report["previews"]
    _validate(report)
    _assert_schema_order(_schema(), report)


def test_key_order_is_the_same_on_every_run(capsys) -> None:
    path = next(p for p in all_sources() if "oversized-alarm" in str(p))

    def keys(value) -> list:
        if isinstance(value, dict):
            return [(key, keys(item)) for key, item in value.items()]
        if isinstance(value, list):
            return [keys(item) for item in value]
        return []

    first = run_cli(capsys, "memory", path, "--json")[1]
    second = run_cli(capsys, "memory", path, "--json")[1]
    assert keys(json.loads(first)) == keys(json.loads(second))
    assert first == second


def test_qwen_object_is_first_of_the_figures_and_verbatim(capsys) -> None:
    folder = next(p for p in all_sources() if "oversized-alarm" in str(p)).parent
    report = json.loads(run_cli(capsys, "memory", folder / "session.jsonl", "--json")[1])
    assert list(report)[:4] == ["schemaVersion", "generator", "source", "toolResultRetention"]
    assert list(report["toolResultRetention"]) == list(json.loads((folder / "expected.json").read_text())["toolResultRetention"])


def test_unavailable_retention_renders_and_validates() -> None:
    """Where Qwen's analyzer throws, every format says why and the JSON still validates."""
    import dataclasses

    from doctor.assemble import ReportOptions, report_for_session
    from doctor.report.render import FORMATS, render
    from doctor.sources.registry import open_session

    session = open_session(all_sources()[0])
    reason = "Tool result retention diagnostics unavailable: content.parts is not iterable (dict)"
    report = dataclasses.replace(report_for_session(session, ReportOptions()), retention=None,
                                 retention_unavailable=reason)
    for fmt in FORMATS:
        assert "content.parts is not iterable" in render(report, fmt, include_previews=True, session=session)
    data = json.loads(render(report, "json"))
    assert "toolResultRetention" not in data and data["retention"] == {"available": False, "reason": reason}
    assert data["advice"][0]["topic"] == "retention-unavailable"
    _validate(data)
