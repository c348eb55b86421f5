"""Session discovery over fake homes laid out like the agents' own, holding real recordings."""

import os
import shutil
from pathlib import Path

import pytest

from doctor.sources import discovery
from doctor.sources.discovery import find_sessions, newest_for_cwd, sanitize_cwd
from tests.public_fixtures import PUBLIC_FIXTURES

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
QWEN_CWD = "/tmp/qrec/errors/w"
CLAUDE_CWD = "/tmp/crec/claude/parallel-and-errors/w"
CODEX_CWD = "/tmp/crec/codex/parallel-and-errors/w"
GEMINI_CWD = "/tmp/crec/gemini/parallel-and-errors/w"


def _copy_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target, dirs_exist_ok=True)


@pytest.fixture
def home(tmp_path) -> Path:
    return four_agent_home(tmp_path)


def four_agent_home(tmp_path: Path) -> Path:
    """One HOME with a session of each agent; mtimes make Qwen oldest and Gemini newest."""
    home = tmp_path / "home"
    qwen = home / ".qwen/projects" / sanitize_cwd(QWEN_CWD) / "chats"
    qwen.mkdir(parents=True)
    shutil.copy(RECORDINGS / "qwen/errors/session.jsonl", qwen / "43e02ab6-3edd-4c4e-bf6b-17d56c1bf33e.jsonl")
    _copy_tree(RECORDINGS / "claude/parallel-and-errors/home/.claude", home / ".claude")
    _copy_tree(RECORDINGS / "codex/parallel-and-errors/home/.codex", home / ".codex")
    _copy_tree(RECORDINGS / "gemini/parallel-and-errors/home/.gemini", home / ".gemini")
    (home / ".gemini/tmp/w/chats/session-2026-12-02T11-37-007f5c93.jsonl.tmp-123").write_text("{}")
    for age, pattern in enumerate(["**/.gemini/**/*.jsonl", "**/.codex/**/*.jsonl", "**/.claude/**/*.jsonl",
                                   "**/.qwen/**/*.jsonl"]):
        for path in home.glob(pattern):
            os.utime(path, (1_800_000_000 - age * 60, 1_800_000_000 - age * 60))
    return home


def test_every_agent_newest_first(home):
    refs = find_sessions(env={"HOME": str(home)})
    assert [r.agent for r in refs] == ["gemini", "codex", "claude", "qwen"]
    assert [r.project for r in refs] == [GEMINI_CWD, CODEX_CWD, CLAUDE_CWD, QWEN_CWD]
    gemini, codex, _, qwen = refs
    assert gemini.id == "007f5c93-9db6-46c7-962f-3f26eaeb387c" and gemini.started == "2026-12-02T11:37:32Z"
    assert codex.id == "01a2368c-a67d-7452-88e9-5ddece68f35c" and codex.started == "2026-12-02T11:38:37Z"
    assert qwen.id == "43e02ab6-3edd-4c4e-bf6b-17d56c1bf33e"
    assert all(r.size == r.path.stat().st_size for r in refs)


def test_filters_by_agent_and_project(home):
    env = {"HOME": str(home)}
    assert [r.agent for r in find_sessions(agent="claude", env=env)] == ["claude"]
    assert [r.agent for r in find_sessions(project=CODEX_CWD, env=env)] == ["codex"]
    assert [r.agent for r in find_sessions(project=GEMINI_CWD, env=env)] == ["gemini"]
    assert find_sessions(project="/nowhere", env=env) == []


def test_newest_for_cwd(home):
    env = {"HOME": str(home)}
    assert newest_for_cwd(QWEN_CWD, env=env).agent == "qwen"
    assert newest_for_cwd(CLAUDE_CWD, env=env).path.suffix == ".jsonl"
    assert newest_for_cwd("/nowhere", env=env) is None


def test_homes_moved_by_environment(home, tmp_path):
    moved = tmp_path / "moved"
    shutil.move(home / ".qwen", moved / "qwen")
    shutil.move(home / ".claude", moved / "claude")
    shutil.move(home / ".codex", moved / "codex")
    (moved / "gemini").mkdir()
    shutil.move(home / ".gemini", moved / "gemini/.gemini")  # GEMINI_CLI_HOME replaces the home, not ~/.gemini
    env = {"HOME": str(tmp_path / "empty"), "QWEN_HOME": str(moved / "qwen"), "CLAUDE_CONFIG_DIR": str(moved / "claude"),
           "CODEX_HOME": str(moved / "codex"), "GEMINI_CLI_HOME": str(moved / "gemini")}
    assert sorted(r.agent for r in find_sessions(env=env)) == ["claude", "codex", "gemini", "qwen"]
    assert find_sessions(env={"HOME": str(tmp_path / "empty")}) == []


def test_legacy_gemini_hash_dir_is_found_for_its_project(tmp_path):
    project = "/work/some project"
    chats = tmp_path / ".gemini/tmp" / discovery.hashlib.sha256(project.encode()).hexdigest() / "chats"
    chats.mkdir(parents=True)
    shutil.copy(PUBLIC_FIXTURES / "gemini-cli" / "aim-session-2026-03-18T01-56-3afe7bdc.json",
                chats / "session-2026-03-18T01-56-3afe7bdc.json")
    (ref,) = find_sessions(project=project, env={"HOME": str(tmp_path)})
    assert (ref.agent, ref.id, ref.project) == ("gemini", "3afe7bdc", project)
    assert ref.started == "2026-03-18T01:56:54Z"  # its pretty-printed "startTime", not the name's minute


def test_sanitize_matches_the_agents_directory_names():
    assert sanitize_cwd("/tmp/crec/claude/parallel-and-errors/w") == "-tmp-crec-claude-parallel-and-errors-w"
    assert sanitize_cwd("/Users/me/.agents") == "-Users-me--agents"
