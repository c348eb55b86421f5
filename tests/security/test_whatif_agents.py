"""Hostile sessions fed to the Claude Code, Gemini CLI and Codex replays (`doctor whatif`).

A session names the files its raw outputs are in; those names are the attacker's. The replay opens them
only through `doctor.whatif.spill.SpillReader` (fixed roots, no symlink, regular files, capped): a stub
that points elsewhere makes that one result unknown, with the reason, and the rest is replayed. Facts
read beside the history (Codex's `aggregated_output`) are capped at what the client itself writes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from doctor.assemble import ReportOptions
from doctor.sources.registry import open_session
from doctor.whatif import replay
from tests.whatif.agent_recordings import recording


def copy_of(agent: str, variant: str, tmp_path: Path) -> tuple[Path, Path]:
    source = recording(agent, variant)
    folder = tmp_path / variant
    shutil.copytree(source.folder, folder, symlinks=True)
    return folder, folder / source.session_file.relative_to(source.folder)


def rewrite(session: Path, old: str, new: str) -> None:
    text = session.read_text(encoding="utf-8")
    assert old in text
    session.write_text(text.replace(old, new), encoding="utf-8")


def replayed(folder: Path, session: Path, overrides: dict):
    prep = replay.prepare(open_session(session), ReportOptions(env={"HOME": str(folder / "home")}))
    return prep, prep.replay(overrides)


def test_a_claude_stub_naming_a_file_outside_the_session_is_not_read(tmp_path):
    folder, session = copy_of("claude", "default", tmp_path)
    (spill,) = [p for p in session.with_suffix("").joinpath("tool-results").iterdir() if p.stat().st_size == 45_900]
    secret = tmp_path / "secret.txt"
    secret.write_text("row 00001 " + "S" * 45_890)
    rewrite(session, str(spill).replace(str(folder), "/tmp/crec/claude/whatif"), str(secret))
    prep, answer = replayed(folder, session, {"bashOutputMaxChars": 128_000})
    changes = {c["callId"]: c for c in answer.changes()}
    hit = changes["toolu_000000000000000000000003"]
    assert not hit["known"] and "outside" in hit["why"]
    assert sum(c["known"] for c in changes.values()) == len(changes) - 1
    assert "S" * 100 not in json.dumps(answer.to_dict())


def test_a_symlink_planted_in_tool_results_is_refused(tmp_path):
    folder, session = copy_of("claude", "default", tmp_path)
    (spill,) = [p for p in session.with_suffix("").joinpath("tool-results").iterdir() if p.stat().st_size == 102_000]
    target = tmp_path / "elsewhere.txt"
    target.write_text("E" * 102_000)
    spill.unlink()
    os.symlink(target, spill)
    _, answer = replayed(folder, session, {"bashOutputMaxChars": 128_000})
    change = next(c for c in answer.changes() if c["callId"] == "toolu_000000000000000000000004")
    assert not change["known"] and change["why"]


def test_a_gemini_notice_naming_a_file_outside_is_not_read(tmp_path):
    folder, session = copy_of("gemini", "default", tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("<untrusted_context>\nOutput: " + "S" * 60_000)
    named = session.read_text(encoding="utf-8").split("For full output see: ", 1)[1].split("\\n", 1)[0]
    rewrite(session, named, str(secret))
    _, answer = replayed(folder, session, {"tools.truncateToolOutputThreshold": 150_000})
    (hit,) = [c for c in answer.changes() if c["callId"] == "run_shell_command__call_000003"]
    assert not hit["known"] and "outside" in hit["why"]
    assert "S" * 100 not in json.dumps(answer.to_dict())


def test_a_codex_aggregated_output_longer_than_codex_writes_is_not_kept(tmp_path):
    folder, session = copy_of("codex", "default", tmp_path)
    lines = session.read_text(encoding="utf-8").splitlines()
    for at, line in enumerate(lines):
        record = json.loads(line)
        item = (record.get("payload") or {}).get("item") or {}
        if item.get("id") == "call_000000000000000000000004" and item.get("type") == "CommandExecution":
            item["aggregated_output"] = "row 00001 " + "z" * 3_000_000  # what no Codex writes
            lines[at] = json.dumps(record)
    session.write_text("\n".join(lines) + "\n", encoding="utf-8")
    prep, answer = replayed(folder, session, {"tool_output_token_limit": 50_000})
    assert "aggregated_output" not in prep.inputs[3].raw.source
    assert not answer.changes()[3]["known"]


def test_hostile_settings_values_are_read_as_the_client_reads_them(tmp_path):
    folder, session = copy_of("claude", "bash-50000", tmp_path)
    settings = folder / "home" / ".claude" / "settings.json"
    for value, expected in ((True, None), ("50000", None), (1e308, None), (-5, None), (7_000, 7_000)):
        settings.write_text(json.dumps({"bashOutputMaxChars": value, "env": {"BASH_MAX_OUTPUT_LENGTH": "\x1b[31m9"}}))
        prep, _ = replayed(folder, session, {})
        assert prep.base.values.get("bashOutputMaxChars") == expected
        assert prep.base.values.get("BASH_MAX_OUTPUT_LENGTH") is None


def test_whatif_on_a_settings_file_that_does_not_parse_says_so_in_one_line(tmp_path):
    folder, session = copy_of("claude", "default", tmp_path)
    (folder / "home" / ".claude" / "settings.json").write_text("{not json")
    done = subprocess.run([sys.executable, "-m", "doctor", "whatif", str(session), "--set", "bashOutputMaxChars=1"],
                          capture_output=True, text=True, env={"HOME": str(folder / "home"), "PATH": "/usr/bin:/bin"},
                          timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "settings.json" in done.stderr
