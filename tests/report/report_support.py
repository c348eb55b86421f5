"""What the report tests share: every real session we have, and the CLI driven in-process.

Sources are found by pattern, so re-recorded scenarios are picked up without
editing the tests.
"""

from __future__ import annotations

import json
from pathlib import Path

from doctor.cli import main
from tests.public_fixtures import PUBLIC_FIXTURES

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = ROOT / "tests" / "recordings"
FIXTURES = PUBLIC_FIXTURES
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
    """Every session file: our recordings of each agent, the dumps, and the public fixtures copied into the repo."""
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


# A tool result crafted to be dangerous to print or paste: credentials, terminal
# escapes (colour, a window-title OSC, a clear screen), rich markup, HTML, a bidi override.
SECRETS = {
    "openai": "sk-proj-abcdefghijklmnopqrstuvwx0123456789",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "slack": "xoxb-123456789012-abcdefghijkl",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
    "password": "hunter2-correct-horse",
    "private key": "MIIEowIBAAKCAQEA7bq0privatekeybody",
}
PAYLOAD_MARKER = "PAYLOAD-MARKER-7f3a"
HOSTILE_PAYLOAD = (
    f"{PAYLOAD_MARKER} \x1b[31mred\x1b[0m \x1b]0;pwned title\x07 \x1b[2J [bold red]markup[/bold red] "
    f"<script>alert(1)</script> \u202eevil\u202c\n"
    f"OPENAI_API_KEY={SECRETS['openai']}\naws {SECRETS['aws']}\ntoken {SECRETS['github']}\nslack {SECRETS['slack']}\n"
    f"Authorization: Bearer {SECRETS['bearer']}\npassword={SECRETS['password']}\n"
    f"-----BEGIN RSA PRIVATE KEY-----\n{SECRETS['private key']}\n-----END RSA PRIVATE KEY-----\n"
)
HOSTILE_TOOL = "evil\x1b[31m<b>[bold]tool|x"


def hostile_session(directory: Path) -> Path:
    """A copy of a real Qwen recording whose first tool result (and its tool name) is HOSTILE_*."""
    source = RECORDINGS / "qwen" / "multi-turn" / "session.jsonl"
    records = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    result = next(r for r in records if r["type"] == "tool_result")
    response = result["message"]["parts"][0]["functionResponse"]
    call_id = response["id"]
    response["name"] = HOSTILE_TOOL
    response["response"] = {"output": HOSTILE_PAYLOAD + "x" * 30000}  # the largest result
    for record in records:
        for part in (record.get("message") or {}).get("parts") or []:
            call = part.get("functionCall")
            if call and call.get("id") == call_id:
                call["name"] = HOSTILE_TOOL
    target = directory / "hostile" / "session.jsonl"
    target.parent.mkdir(parents=True)
    target.write_text("".join(json.dumps(record) + "\n" for record in records))
    return target
