"""Every budget names its real source, and no sentence contradicts another (issue 23 item 6).

A team's `[budgets]` in doctor's config file (or a `--tool-budget` flag) is doctor's own budget: the
reports (JSON, text, Markdown, HTML) and the after-tool hook's alarm name that file and key (or the
flag), never credit it to the agent nor to a flag that was not passed, list it under "Budgets in
force" beside the agent's limit it replaces, and the advice does not blame a raised or disabled agent
limit for results only doctor's stricter budget calls oversized. Run as subprocesses on sessions the
real clients recorded (HOME at the recording's home, so the agent's own settings are the ones it read).
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integrations.hook_payloads import payloads, session_file

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
QWEN_HOOKS = RECORDINGS / "qwen" / "hook-payloads"
# agent: (recording, tool, doctor's budget that trips, the agent's own name)
CASES = {
    "claude": ("claude/big-outputs", "Read", 1000, "Claude Code"),
    "gemini": ("gemini/big-outputs", "read_file", 1000, "Gemini CLI"),
    "codex": ("codex/big-outputs", "exec_command", 1000, "Codex CLI"),
    "qwen": ("qwen/hook-payloads", "run_shell_command", 20000, "Qwen Code"),
}


def _run(env: dict, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "doctor", *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def _setup(tmp_path: Path, agent: str, config: str | None) -> tuple[dict, Path, Path]:
    """(env, session file, config path): HOME is the recording's (a fresh one holding Qwen's settings for Qwen)."""
    folder = RECORDINGS / CASES[agent][0]
    if agent == "qwen":
        home = tmp_path / "home"
        (home / ".qwen").mkdir(parents=True)
        settings = json.loads((folder / "settings.json").read_text())
        settings.pop("hooks")
        (home / ".qwen" / "settings.json").write_text(json.dumps(settings))
        session = folder / "session.jsonl"
    else:
        home, session = folder / "home", session_file(folder)
    path = tmp_path / "config.toml"
    if config is not None:
        path.write_text(config)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "DOCTOR_CONFIG": str(path), "LANG": "C.UTF-8"}
    return env, session, path


@pytest.mark.parametrize("agent", sorted(CASES))
def test_a_config_budget_is_named_by_its_file_and_key_in_every_report(tmp_path, agent):
    _, tool, budget, client = CASES[agent]
    env, session, config = _setup(tmp_path, agent, f"[budgets]\n{tool} = {budget}\n")
    origin = f"[budgets] {tool} in {config}"
    data = json.loads(_run(env, "memory", str(session), "--json").stdout)
    [row] = [row for row in data["retention"]["perTool"] if row["tool"] == tool]
    assert row["budget"]["source"] == "override" and row["budget"]["detail"] == origin and row["oversized"]
    origins = (data["rules"] if agent != "qwen" else data["settings"])["overrideOrigins"]
    assert origins == {tool: origin}
    advice = " ".join(item["message"] for item in data["advice"])
    assert f"doctor's own budget ({origin}) is stricter than {client}'s limits, which let those results through" in advice
    assert "a raised or disabled limit" not in advice and "no truncation layer bounded it" not in advice
    assert "--tool-budget" not in json.dumps(data)  # no flag was passed
    for face in ("text", "markdown", "html"):
        out = _plain(face, _run(env, "memory", str(session), "--format", face).stdout)
        assert origin in out and "--tool-budget" not in out, face
        assert f"{client}'s {budget:,}" not in out, face  # doctor's budget is never credited to the agent
        if agent != "qwen":  # the Budgets-in-force table lists it beside the agent's limit it replaces
            assert f"{origin}: doctor's own budget, in place of" in re.sub(r"\s+", " ", out), face


def _plain(face: str, out: str) -> str:
    """The report's words: Markdown's backslash escapes and HTML's entities undone."""
    if face == "markdown":
        return re.sub(r"\\(.)", r"\1", out)
    return html.unescape(out) if face == "html" else out


@pytest.mark.parametrize("agent", ["claude", "qwen"])
def test_a_flag_budget_is_named_as_the_flag(tmp_path, agent):
    _, tool, budget, client = CASES[agent]
    env, session, _ = _setup(tmp_path, agent, None)
    data = json.loads(_run(env, "memory", str(session), "--json", "--tool-budget", f"{tool}={budget}").stdout)
    [row] = [row for row in data["retention"]["perTool"] if row["tool"] == tool]
    assert row["budget"]["detail"] == f"--tool-budget {tool}"
    assert "[budgets]" not in json.dumps(data)


def _hook_payload(agent: str) -> dict:
    """A payload the real client handed its hook for a result doctor's budget calls oversized."""
    tool = CASES[agent][1]
    if agent == "qwen":
        lines = (QWEN_HOOKS / "hook-payloads.jsonl").read_text(encoding="utf-8").splitlines()
        return max((json.loads(line) for line in lines if f'"tool_name": "{tool}"' in line or f'"tool_name":"{tool}"' in line),
                   key=lambda p: len(p["tool_response"]["llmContent"]))
    hook_name = {"exec_command": "Bash"}.get(tool, tool)
    landed = [item.payload for item in payloads(agent, RECORDINGS / CASES[agent][0])
              if item.payload["tool_name"] == hook_name and not item.masked_later]
    return max(landed, key=lambda p: len(json.dumps(p["tool_response"])))


@pytest.mark.parametrize("agent", sorted(CASES))
def test_the_alarm_names_doctors_budget_and_its_file(tmp_path, agent):
    _, tool, budget, client = CASES[agent]
    env, _, config = _setup(tmp_path, agent, f"[budgets]\n{tool} = {budget}\n")
    done = _run(env, "hook", agent, "--tell-model", stdin=json.dumps(_hook_payload(agent)))
    assert done.returncode == 0 and done.stdout, done.stderr
    answer = json.loads(done.stdout)
    said = answer["systemMessage"] + " " + answer["hookSpecificOutput"]["additionalContext"]
    unit = "byte" if agent == "codex" else "char"
    origin = f"[budgets] {tool} in {config}"
    if agent == "qwen":
        assert f"over 2× its {budget:,}-{unit} budget + 500 (doctor's own: {origin})" in said
    else:
        assert f"over doctor's {budget:,}-{unit} budget" in said and f"({origin})" in said
    assert f"{client}'s {budget:,}" not in said and "--tool-budget" not in said
