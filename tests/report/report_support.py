"""What the report tests share: every real session we have, and the CLI driven in-process.

Sources are found by pattern, so re-recorded scenarios are picked up without
editing the tests.
"""

from __future__ import annotations

import json
from pathlib import Path

from doctor.cli import main

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = ROOT / "tests" / "recordings"
FIXTURES = Path("/work/shared/session-fixtures")
SCHEMA = ROOT / "doctor" / "report" / "schema" / "memory-report.schema.json"


def qwen_scenarios() -> list[Path]:
    qwen = RECORDINGS / "qwen"
    return sorted(p for p in qwen.iterdir() if (p / "meta.json").is_file() and (p / "session.jsonl").is_file())


def qwen_runs() -> list[tuple[Path, str, dict]]:
    """(scenario folder, expected file name, doctor run settings) for every recorded Qwen doctor run."""
    runs = []
    for folder in qwen_scenarios():
        meta = json.loads((folder / "meta.json").read_text())
        for name, run in sorted(meta.get("doctorRuns", {}).items()):
            if (folder / name).is_file():
                runs.append((folder, name, run))
    return runs


def all_sources() -> list[Path]:
    """Every session file: our recordings of each agent, the dumps, and the shared fixtures."""
    sources = [folder / "session.jsonl" for folder in qwen_scenarios()]
    sources += sorted(RECORDINGS.glob("claude/*/home/.claude/projects/*/*.jsonl"))
    sources += sorted(RECORDINGS.glob("codex/*/home/.codex/sessions/*/*/*/rollout-*.jsonl"))
    sources += sorted(RECORDINGS.glob("gemini/*/home/.gemini/tmp/*/chats/*.jsonl"))
    sources += sorted(p for p in RECORDINGS.glob("dumps/*") if p.suffix in (".json", ".jsonl") and p.name != "expected.json")
    if FIXTURES.is_dir():
        sources += sorted(p for p in FIXTURES.glob("*/*") if p.suffix in (".json", ".jsonl"))
    return sources


def source_id(path: Path) -> str:
    try:
        return str(path.relative_to(RECORDINGS))
    except ValueError:
        return str(path.relative_to(FIXTURES))


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    """`doctor …` through the real entry point: (exit code, stdout, stderr)."""
    capsys.readouterr()
    code = main([str(arg) for arg in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err
