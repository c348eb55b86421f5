"""`MemoryReport.to_dict()` is the object, `to_json()` the text `--json` prints; dict use of `to_json()` still works, warned.

Through both seams a caller has: the CLI (`doctor memory --json`) and the live
host API (`doctor.attach(history).report()`).
"""

from __future__ import annotations

import json
import warnings

import pytest
from report_support import RECORDINGS, qwen_scenarios, run_cli

import doctor
from doctor.assemble import ReportOptions, report_for_session
from doctor.sources.registry import open_session

SESSION = qwen_scenarios()[0] / "session.jsonl"


@pytest.fixture(scope="module")
def report():
    return report_for_session(open_session(SESSION), ReportOptions())


def test_to_json_is_the_text_the_cli_prints(report, capsys):
    code, out, _ = run_cli(capsys, "memory", SESSION, "--json")
    assert code == 0
    printed = json.loads(out)
    for added in ("spill", "advice"):  # the command adds the spill audit (and advice on it) to its report
        printed.pop(added)
    for fact in ("agentVersion", "projectHash", "sizeBytes", "records"):  # and the file's facts (assemble.scan_facts)
        printed["source"].pop(fact)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # text use warns about nothing
        text = report.to_json()
        assert isinstance(text, str) and text.endswith("}\n")
        assert {k: v for k, v in json.loads(text).items() if k != "advice"} == printed
        assert json.loads(text) == report.to_dict()
        assert text.startswith('{\n  "schemaVersion"')


def test_to_dict_is_a_fresh_object_each_time(report):
    first = report.to_dict()
    first["toolResultRetention"]["toolResultCount"] = -1
    assert report.to_dict()["toolResultRetention"]["toolResultCount"] != -1


def test_old_dict_callers_keep_working_with_a_deprecation_warning(report):
    expected = report.to_dict()
    with pytest.warns(DeprecationWarning, match="to_dict"):
        assert report.to_json()["toolResultRetention"] == expected["toolResultRetention"]
    with pytest.warns(DeprecationWarning):
        assert report.to_json() == expected
    with pytest.warns(DeprecationWarning):
        assert report.to_json().get("schemaVersion") == expected["schemaVersion"]
    with pytest.warns(DeprecationWarning):
        assert list(report.to_json().keys()) == list(expected)
    assert report.to_json()[:1] == "{"  # str indexing is a str's


def test_a_live_host_gets_the_same_two_forms():
    """A host's history: the `contents` Gemini CLI sent to the model (a real request body, captured)."""
    history = json.loads((RECORDINGS / "dumps" / "gemini-api.request.json").read_text())["contents"]
    live = doctor.attach(history).report()
    data = live.to_dict()
    assert data["toolResultRetention"]["toolResultCount"] > 0
    assert json.loads(live.to_json()) == data
