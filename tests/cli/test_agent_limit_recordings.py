"""Through the CLI, on sessions the real clients recorded where their own limits acted.

tests/recordings/{claude/limits, claude/raised-limits, gemini/raised-limit, codex/raised-limit} were made by
Claude Code 2.1.332, Gemini CLI 0.61.0 and Codex 0.171.0 against the repo's scripted model servers (record.py
of each client). Their expected.json comes from tests/recordings/limit_figures.py, which reads the client's
own markers and the request bodies the model server received (received.json), never doctor's reader. The
settings file each client read is part of the recording, so doctor is pointed at the same file through HOME.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.core.agent_rules import codex

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
QWEN_ONLY_SETTINGS = ("toolOutputBatchBudget", "truncateToolOutputLines", "shellBudget")
# limit_figures.py's layer (the client's own marker) -> doctor's generic layer for that result
DOCTOR_LAYER = {"persisted-output": "persistence gate", "mcp-saved": "persistence gate",
                "truncated": "in-tool truncation", "whole": "none", "read-truncated": "none", "read-refused": "none"}


def scenario(name: str):
    folder = RECORDINGS / name
    (session,) = [p for p in (folder / "home").rglob("*.jsonl")]
    return folder, session, json.loads((folder / "expected.json").read_text())


def doctor(session: Path, *args: str, home: Path) -> str:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-m", "doctor", "memory", str(session), "--top", "50", *args],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode in (0, 3), result.stderr
    return result.stdout


def report(session: Path, home: Path) -> dict:
    return json.loads(doctor(session, "--json", home=home))


def rule(data: dict, label: str) -> dict:
    return next(row for row in data["rules"]["tools"] if row["tools"] == label)


def by_call(data: dict) -> dict:
    return {row["callId"]: row for row in data["retention"]["largest"]}


def assert_layers_match_the_recording(data: dict, expected: dict) -> None:
    """Each result's layer is the one the client's own marker names, in that agent's words in the text report."""
    rows = by_call(data)
    for result in expected["results"]:
        call = result["id"].split("__", 1)[-1] if result["id"] not in rows else result["id"]
        row = rows.get(result["id"]) or next(r for c, r in rows.items() if c.endswith(call))
        assert row["rawChars"] == result["chars"] == result["receivedChars"], result["id"]
        assert row["layer"] == DOCTOR_LAYER[result["layer"]], (result["id"], row["layer"], result["layer"])


def assert_no_qwen_setting(session: Path, home: Path, also: tuple[str, ...] = ()) -> None:
    for fmt in ("text", "markdown", "html"):
        out = doctor(session, "--format", fmt, home=home)
        for name in QWEN_ONLY_SETTINGS + also:
            assert name not in out, (fmt, name)


def test_claude_limits_mcp_saved_read_cut_and_refused_bash_persisted(tmp_path):
    _, session, expected = scenario("claude/limits")
    assert expected["settingsFile"] is None  # Claude's built-in defaults only
    got = {r["tool"] + ":" + r["layer"] for r in expected["results"]}
    assert got == {"mcp__big__big_text:mcp-saved", "Read:read-truncated", "Read:read-refused", "Bash:persisted-output"}
    data = report(session, tmp_path)
    assert data["rules"]["yardstick"] == "claude" and data["rules"]["files"] == []
    mcp = rule(data, "MCP tools (mcp__*)")
    assert (mcp["value"], mcp["unit"], mcp["chars"], mcp["source"]) == (25_000, "tokens", 50_000, "default")
    read = rule(data, "Read")
    assert (read["value"], read["unit"], read["chars"], read["source"]) == (25_000, "tokens", 100_000, "default")
    assert_layers_match_the_recording(data, expected)
    # Claude counted the Read at 38,770 tokens (count_tokens) over its 25,000 cap and cut it: what reached
    # the model is within Claude's limit, so nothing is oversized.
    cut = next(r for r in expected["results"] if r["layer"] == "read-truncated")
    assert (cut["countedTokens"], cut["capTokens"]) == (38_770, 25_000) and cut["receivedChars"] < read["chars"]
    assert data["toolResultRetention"]["oversizedResultCount"] == 0
    text = doctor(session, "--no-tui", home=tmp_path)
    assert "persisted to tool-results/" in text
    assert_no_qwen_setting(session, tmp_path, ("truncateToolOutputThreshold",))


def test_claude_raised_limits_let_the_read_and_the_bash_output_through(tmp_path):
    folder, session, expected = scenario("claude/raised-limits")
    settings = folder / "home" / ".claude" / "settings.json"
    assert expected["settingsFile"] == "home/.claude/settings.json"
    whole = {r["tool"]: r["receivedChars"] for r in expected["results"] if r["layer"] == "whole"}
    assert whole["Read"] > 100_000 and whole["Bash"] > 30_000  # beyond Claude's defaults, yet sent whole
    data = report(session, folder / "home")
    assert data["rules"]["files"] == ["~/.claude/settings.json"]  # HOME is the recording's home
    bash, read, mcp = rule(data, "Bash"), rule(data, "Read"), rule(data, "MCP tools (mcp__*)")
    assert (bash["value"], bash["unit"], bash["source"]) == (128_000, "chars", "settings")
    assert bash["detail"] == f"bashOutputMaxChars in {settings}"
    assert (read["value"], read["unit"], read["chars"], read["source"]) == (60_000, "tokens", 240_000, "settings")
    assert read["detail"] == f"env.CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS in {settings}"
    # MAX_MCP_OUTPUT_TOKENS=60000 let the 152,513-char MCP result past the token check, and Claude's
    # persistence gate (50,000 chars for MCP tools) persisted it: the recording shows the stub.
    assert (mcp["value"], mcp["chars"], mcp["source"]) == (60_000, 50_000, "settings")
    assert next(r for r in expected["results"] if r["tool"].startswith("mcp__"))["layer"] == "persisted-output"
    assert_layers_match_the_recording(data, expected)
    assert data["toolResultRetention"]["oversizedResultCount"] == 0
    # Without the user's settings file the same results break Claude's default limits.
    default = report(session, tmp_path)
    assert sorted(row["tool"] for row in default["retention"]["oversized"]) == ["Bash", "Read"]
    assert_no_qwen_setting(session, folder / "home", ("truncateToolOutputThreshold",))


def test_gemini_raised_threshold_lets_a_shell_output_through_and_still_cuts_a_bigger_one(tmp_path):
    folder, session, expected = scenario("gemini/raised-limit")
    settings = folder / "home" / ".gemini" / "settings.json"
    assert json.loads(expected["settingsText"])["tools"]["truncateToolOutputThreshold"] == 200_000
    whole, cut = expected["results"]
    assert whole["layer"] == "whole" and whole["receivedChars"] > 40_000
    assert cut["layer"] == "truncated" and (cut["headChars"], cut["tailChars"]) == (40_000, 160_000)
    data = report(session, folder / "home")
    shell = rule(data, "run_shell_command")
    assert (shell["value"], shell["unit"], shell["source"]) == (200_000, "chars", "settings")
    assert shell["detail"] == f"tools.truncateToolOutputThreshold in {settings}"
    assert_layers_match_the_recording(data, expected)
    assert data["toolResultRetention"]["oversizedResultCount"] == 0
    # The 40,000-char head of the cut output is longer than doctor's 32 KiB file head: still no mismatch.
    assert [f["kind"] for f in data["spill"]["findings"] if f["severity"] != "info"] == []
    assert "truncated to tool-outputs/" in doctor(session, "--no-tui", home=folder / "home")
    default = report(session, tmp_path)
    assert [row["rawChars"] for row in default["retention"]["oversized"]] == [whole["chars"]]  # default 40,000
    assert_no_qwen_setting(session, folder / "home")


def test_codex_raised_token_limit_lets_an_exec_output_through(tmp_path):
    folder, session, expected = scenario("codex/raised-limit")
    config = folder / "home" / ".codex" / "config.toml"
    assert "tool_output_token_limit = 50000" in expected["settingsText"]
    whole, cut = expected["results"]
    assert whole["layer"] == "whole" and whole["receivedChars"] > 10_000
    assert cut["layer"] == "truncated" and cut["receivedChars"] <= 200_000 + 1_000  # 50,000 tokens x 4 bytes
    data = report(session, folder / "home")
    (every,) = data["rules"]["tools"]
    assert (every["value"], every["unit"], every["source"]) == (200_000, "bytes", "settings")
    assert every["detail"].startswith(f"tool_output_token_limit in {config} × 4 bytes")
    assert_layers_match_the_recording(data, expected)
    assert data["rules"]["layers"]["in-tool truncation"] == "truncated to the truncation policy"
    assert data["toolResultRetention"]["oversizedResultCount"] == 0
    default = report(session, tmp_path)  # Codex's own default for this model: 10,000 bytes
    assert len(default["retention"]["oversized"]) == 2
    assert_no_qwen_setting(session, folder / "home", ("truncateToolOutputThreshold",))


def test_codex_default_policy_cuts_are_named_in_codex_terms(tmp_path):
    """codex/big-outputs: Codex cut two outputs to its 10,000-byte policy (its expected.json: truncatedInPlace 2)."""
    session = next((RECORDINGS / "codex" / "big-outputs" / "home").rglob("rollout-*.jsonl"))
    expected = json.loads((RECORDINGS / "codex" / "big-outputs" / "expected.json").read_text())
    data = report(session, tmp_path)
    assert data["retention"]["layers"]["in-tool truncation"] == expected["total"]["truncatedInPlace"] == 2
    assert doctor(session, "--no-tui", home=tmp_path).count("truncated to the truncation policy") >= 2


@pytest.mark.slow
@pytest.mark.parametrize("client,name", [("claude", "limits"), ("claude", "raised-limits"),
                                         ("gemini", "raised-limit"), ("codex", "raised-limit")])
def test_re_recording_gives_the_same_layers(tmp_path, client, name):
    """Re-record with the real client into a scratch copy: the client still bounds each result the same way."""
    clients = RECORDINGS.parents[1] / ".clients" / "node_modules"
    if not clients.is_dir():
        pytest.skip(".clients is not installed (see README)")
    work = tmp_path / "rec"
    (work / client).mkdir(parents=True)
    for item in ("recording_kit.py", "limit_figures.py"):
        (work / item).write_bytes((RECORDINGS / item).read_bytes())
    for item in (RECORDINGS / client).glob("*.py"):
        (work / client / item.name).write_bytes(item.read_bytes())
    env = {"PATH": "/usr/bin:/bin:" + str(Path(sys.executable).parent), "DOCTOR_REPO": str(RECORDINGS.parents[1]),
           "CREC_ROOT": str(tmp_path / "scratch"), "HOME": str(tmp_path)}
    subprocess.run([sys.executable, str(work / client / "record.py"), name], env=env, check=True, timeout=600)
    fresh = subprocess.run([sys.executable, str(work / "limit_figures.py"), str(work / client / name)],
                           capture_output=True, text=True, check=True).stdout
    _, _, expected = scenario(f"{client}/{name}")
    assert [(r["tool"], r["layer"]) for r in json.loads(fresh)["results"]] == \
        [(r["tool"], r["layer"]) for r in expected["results"]]


def codex_kept_bytes(folder: Path) -> list[int]:
    """UTF-8 bytes Codex kept of each output it cut: the text after its warning lines, without the middle marker."""
    (rollout,) = (folder / "home" / ".codex" / "sessions").rglob("rollout-*.jsonl")
    kept = []
    for line in rollout.read_text().splitlines():
        payload = json.loads(line).get("payload") or {}
        output = payload.get("output")
        if payload.get("type") == "function_call_output" and "\nWarning: truncated output (" in output[:1024]:
            body = output.split("\nOutput:\n", 1)[1]
            body = body[body.index("\n\n") + 2:]
            kept.append(len(re.sub(r"…\d+ (?:chars|tokens) truncated…", "", body, count=1).encode()))
    return kept


def test_codex_fallback_bytes_policy_is_what_the_binary_applied():
    """The 10,000-byte fallback for a model outside the catalog, and tool_output_token_limit × 4 bytes under a
    bytes policy, come from Codex's source, not its binary (the Rust constants are not readable there): the real
    0.171.0 client's cuts, recorded with the non-catalog fake-model, keep exactly those many bytes."""
    assert codex_kept_bytes(RECORDINGS / "codex" / "big-outputs") == [codex.FALLBACK_BYTE_LIMIT] * 2
    assert codex_kept_bytes(RECORDINGS / "codex" / "raised-limit") == [50_000 * codex.BYTES_PER_TOKEN]
