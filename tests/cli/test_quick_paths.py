"""What the commands agents run after every turn load: only what their path needs (start-up is their cost).

`doctor statusline claude|qwen` (index warm, one more turn) and `doctor memory --json` on a small
Qwen session run in a fresh interpreter through the real entry point, which then lists the modules it
imported; the UI libraries, the triage database, the optional extras, the other agents' readers and
the report model (for the status line) must not be among them. The plain forms agents call
(`doctor statusline claude`, `doctor hook codex --tell-model`) are read without argparse, into the
same arguments argparse gives.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from doctor import cli

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = next((ROOT / "tests/recordings/claude/big-outputs/home/.claude/projects").glob("*/*.jsonl"))
QWEN = ROOT / "tests/recordings/qwen/multi-turn/session.jsonl"
SMALL = ROOT / "tests/recordings/qwen/oversized-alarm/session.jsonl"
# Never on these paths: UI, database, extras, process diagnostics.
HEAVY = ("textual", "rich", "duckdb", "dask", "mcp", "pympler", "psutil", "doctor.tui", "doctor.triage", "doctor.live",
         "doctor.process", "tomllib")
RUN_AND_LIST = (
    "import sys, runpy\n"
    "sys.argv = ['doctor', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('doctor', run_name='__main__')\n"
    "except SystemExit:\n"
    "    pass\n"
    "sys.stderr.write('\\n'.join(sorted(sys.modules)))\n"
)


def _imported(tmp_path: Path, *argv: str, stdin: bytes = b"") -> tuple[str, set[str]]:
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("DOCTOR_CONFIG", None)
    done = subprocess.run([sys.executable, "-c", RUN_AND_LIST, *argv], input=stdin, capture_output=True, env=env,
                          cwd=tmp_path, timeout=120)
    return done.stdout.decode(), set(done.stderr.decode().splitlines())


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == name or m.startswith(name + ".") for name in names))


@pytest.mark.parametrize("agent, recording, others", [
    ("claude", CLAUDE, ("doctor.sources.qwen", "doctor.sources.codex", "doctor.sources.gemini")),
    ("qwen", QWEN, ("doctor.sources.claude", "doctor.sources.codex", "doctor.sources.gemini", "doctor.sources.dumps")),
])
def test_the_status_line_loads_only_its_path(tmp_path, agent, recording, others):
    transcript = tmp_path / "session.jsonl"
    lines = recording.read_bytes().splitlines(keepends=True)
    transcript.write_bytes(b"".join(lines[:-1]))
    payload = json.dumps({"session_id": "s", "transcript_path": str(transcript), "cwd": str(tmp_path)}).encode()
    _imported(tmp_path, "statusline", agent, stdin=payload)  # builds the index
    with open(transcript, "ab") as handle:
        handle.write(lines[-1])
    out, modules = _imported(tmp_path, "statusline", agent, stdin=payload)
    assert out.startswith("doctor: ") and " tool result" in out, out
    assert "doctor.sources.claude.file" in modules if agent == "claude" else "doctor.sources.qwen.history" in modules
    unwanted = HEAVY + others + ("argparse", "doctor.report.model", "doctor.spill", "doctor.integrations.plans")
    assert _loaded(modules, unwanted) == []


def test_memory_json_on_a_qwen_session_loads_only_its_path(tmp_path):
    out, modules = _imported(tmp_path, "memory", "--json", str(SMALL))
    assert json.loads(out)["toolResultRetention"]["toolResultCount"] > 0
    assert "doctor.spill.audit" in modules  # the JSON report audits the spill files
    others = ("doctor.sources.claude", "doctor.sources.codex", "doctor.sources.gemini", "doctor.sources.dumps")
    assert _loaded(modules, HEAVY + others) == []


@pytest.mark.parametrize("argv", [
    *(["statusline", agent] for agent in ("claude", "qwen")),
    *(["hook", agent, *flag] for agent in ("claude", "gemini", "qwen", "codex") for flag in ([], ["--tell-model"])),
])
def test_the_plain_forms_read_as_argparse_reads_them(argv):
    plain = cli._plain_args(argv)
    parsed, unknown = cli.build_parser(cli._modules_for(argv)).parse_known_args(argv)
    assert plain is not None and unknown == []
    assert vars(plain) == {key: value for key, value in vars(parsed).items() if key != "debug"}


@pytest.mark.parametrize("argv", [["statusline"], ["statusline", "gemini"], ["statusline", "claude", "x"],
                                  ["statusline", "--help"], ["hook", "claude", "--tell"], ["hook"],
                                  ["hook", "--tell-model", "claude"], ["memory", "claude"]])
def test_other_forms_go_through_argparse(argv):
    assert cli._plain_args(argv) is None


def test_a_usage_error_in_a_per_turn_command_is_still_argparse_s(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["statusline", "gemini"])
    assert exit_info.value.code == 2 and "usage: doctor statusline" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("doctor") is None, reason="the console script is not installed")
def test_the_console_script_runs_the_plain_form(tmp_path):
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(["doctor", "statusline", "claude"], input=b"{}", capture_output=True, env=env, timeout=60)
    assert done.returncode == 0 and done.stdout.decode().startswith("doctor: ")


def test_whatif_json_loads_neither_the_spill_audit_nor_other_agents_replays(tmp_path):
    """`doctor whatif --json` builds two reports without a spill audit: their advice must not import it (thread
    pools, digests), and a Qwen session's replay needs no other agent's layers."""
    out, modules = _imported(tmp_path, "whatif", "--json", "--set", "tools.truncateToolOutputThreshold=10000", str(SMALL))
    assert json.loads(out)["after"]["toolResultRetention"]["toolResultCount"] > 0
    assert "doctor.whatif.qwen_layers" in modules
    others = ("doctor.whatif.claude", "doctor.whatif.codex", "doctor.whatif.gemini", "doctor.sources.claude")
    assert _loaded(modules, HEAVY + others + ("doctor.spill.audit", "doctor.spill.digest")) == []


def test_fleet_sweep_json_loads_neither_the_layouts_nor_unsampled_agents(tmp_path):
    """`doctor scan --db DB --sweep … --json` answers from the database: the human formats' layout and the replay
    modules of agents the scan did not sample that key for stay unloaded."""
    from tests.whatif.recordings import unpack

    session = unpack("default", tmp_path / "recordings")
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    db = tmp_path / "db.duckdb"
    scanned = subprocess.run([sys.executable, "-m", "doctor", "scan", "--db", str(db), "--jobs", "1", "--replay",
                              "-o", str(tmp_path / "report.txt"), str(session)], capture_output=True, env=env,
                             timeout=300)
    assert scanned.returncode == 0, scanned.stderr
    out, modules = _imported(tmp_path, "scan", "--db", str(db), "--sweep", "tools.truncateToolOutputThreshold=5000,10000",
                             "--json")
    assert [point["value"] for point in json.loads(out)["sweep"]] == [5000, 10000]
    assert "doctor.whatif.fleet" in modules
    assert _loaded(modules, ("doctor.whatif.fleet_layout", "doctor.whatif.claude", "doctor.whatif.codex")) == []
