"""Through the CLI: each agent's session is judged by that agent's own limits, named in its terms."""

import json
import subprocess
import sys
from pathlib import Path

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
CLAUDE = next((RECORDINGS / "claude" / "big-outputs" / "home").rglob("298108a5-*.jsonl"))
GEMINI = next((RECORDINGS / "gemini" / "big-outputs" / "home").rglob("session-*.jsonl"))
CODEX = next((RECORDINGS / "codex" / "big-outputs" / "home").rglob("rollout-*.jsonl"))


def doctor(*args, home):
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-m", "doctor", "memory", *map(str, args)], capture_output=True,
                            text=True, env=env, timeout=120)
    assert result.returncode in (0, 3), result.stderr
    return result.stdout


def test_claude_report_names_claude_limits_and_no_qwen_setting(tmp_path):
    data = json.loads(doctor(CLAUDE, "--json", home=tmp_path))
    assert data["rules"]["yardstick"] == "claude" and data["rules"]["clientVersion"] == "2.1.332"
    assert data["settings"] is None
    bash = next(row for row in data["retention"]["perTool"] if row["tool"] == "Bash")
    assert bash["budget"] == {"chars": 30_000, "source": "default",
                              "detail": "built-in default of Claude Code 2.1.332: Bash inline limit"}
    # The two big Bash outputs were persisted by Claude (expected.json: persistedCount 2): not oversized.
    expected = json.loads((CLAUDE.parents[3].parent / "expected.json").read_text())
    assert expected["total"]["persistedCount"] == 2 and bash["layers"]["persistence gate"] == 2
    assert data["toolResultRetention"]["oversizedResultCount"] == 0
    for fmt in ("text", "markdown", "html"):
        out = doctor(CLAUDE, "--format", fmt, home=tmp_path)
        assert "truncateToolOutputThreshold" not in out and "Claude Code 2.1.332" in out


def test_budgets_qwen_applies_qwens_yardstick_and_says_so(tmp_path):
    data = json.loads(doctor(CLAUDE, "--json", "--budgets", "qwen", home=tmp_path))
    assert data["rules"] == {"yardstick": "qwen", "forced": True, "client": "Qwen Code", "clientVersion": "0.24.4"}
    assert data["settings"]["truncateToolOutputThreshold"] == 25_000
    assert "judged by Qwen Code's budgets (--budgets qwen)" in doctor(CLAUDE, "--no-tui", "--budgets", "qwen", home=tmp_path)


def test_gemini_read_file_beyond_the_threshold_is_oversized_and_a_raised_threshold_lets_it_through(tmp_path):
    expected = json.loads((GEMINI.parents[5] / "expected.json").read_text())
    (largest,) = expected["files"].values()
    assert largest["largestChars"] > 40_000  # a whole read_file result, which Gemini CLI 0.61 never truncates
    data = json.loads(doctor(GEMINI, "--json", home=tmp_path))
    assert [row["tool"] for row in data["retention"]["oversized"]] == ["read_file"]
    assert data["rules"]["yardstick"] == "gemini"
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"tools": {"truncateToolOutputThreshold": 200_000}}))
    data = json.loads(doctor(GEMINI, "--json", home=tmp_path))
    assert data["retention"]["oversized"] == []
    shell = next(row for row in data["retention"]["perTool"] if row["tool"] == "run_shell_command")
    assert shell["budget"]["source"] == "settings" and str(settings) in shell["budget"]["detail"]


def test_codex_policy_follows_the_recorded_model(tmp_path):
    data = json.loads(doctor(CODEX, "--json", home=tmp_path))
    (row,) = data["retention"]["perTool"]
    assert row["budget"]["chars"] == 10_000 and "model fake-model" in row["budget"]["detail"]
    assert row["oversized"] == 0  # Codex cut both big outputs to its 10,000-byte policy
