import json

import pytest
from triage_support import all_sources


@pytest.fixture(autouse=True)
def clean_home(tmp_path, monkeypatch):
    """Budgets come from Qwen's defaults, not this machine's settings; discovery sees an empty home."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("QWEN_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "DOCTOR_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    """(database, [memory --json --results of each readable session]) for every real session we have."""
    from doctor.cli import main

    home = tmp_path_factory.mktemp("home")
    db = tmp_path_factory.mktemp("answers") / "triage.duckdb"
    reports = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.delenv("QWEN_HOME", raising=False)
        sources = all_sources()
        assert main(["scan", "--db", str(db), "--jobs", "1", "-o", str(db.with_suffix(".txt")),
                     *map(str, sources)]) in (0, 3)
        for path in sources:
            out = tmp_path_factory.mktemp("r") / "r.json"
            assert main(["memory", str(path), "--json", "--results", "-o", str(out)]) in (0, 3)
            report = json.loads(out.read_text())
            if report["retention"]["available"]:
                reports.append(report)
    return db, reports
