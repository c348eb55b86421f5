"""`doctor.safety.roots` against what the real agents wrote: every spill file a recorded session points to is in
its agent's spill layout under roots derived from that recording's HOME (meta.json), every file the clients
left in their homes is classified (spill file, session file, neither) by where the agent put it, and the files
Qwen Code keeps beside its spill files are not spill files. `doctor.safety.reads` on the shapes that stalled
or fooled the old checks: FIFOs (never opened), symlinks anywhere on the way, folders everyone can write."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from doctor.commands.spill import _load
from doctor.safety.reads import Refused, open_beneath, open_regular, stat_beneath
from doctor.safety.roots import contained_file, locate, session_roots, spill_roots

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
RECORDED = sorted(path.parent for path in RECORDINGS.glob("*/*/meta.json"))


def _session_file(recording: Path) -> Path:
    if (recording / "session.jsonl").is_file():  # Qwen recordings keep the chat file at the top
        return recording / "session.jsonl"
    return min((path for path in (recording / "home").rglob("*.jsonl") if "subagents" not in path.parts),
               key=lambda path: len(path.parts))


@pytest.mark.parametrize("recording", RECORDED, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_spill_file_a_recorded_session_names_is_in_its_agents_layout(recording):
    meta = json.loads((recording / "meta.json").read_text())
    roots = spill_roots({"HOME": meta["home"]})
    loaded = _load(_session_file(recording))
    assert loaded is not None
    written = [pointer.path for pointer in loaded[1] if pointer.path]
    for path in written:
        located = locate(path, roots)
        assert located is not None and located.root.agent == loaded[0].agent, path
    if recording.parent.name == "codex":
        assert not written  # Codex writes no spill files: nothing to serve, nothing to name


@pytest.mark.parametrize("recording", [path for path in RECORDED if (path / "home").is_dir()],
                         ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_file_a_recorded_client_left_in_its_home_is_classified_by_where_the_agent_put_it(recording):
    """Spill files sit in `tool-results/` (Claude) or `tool-outputs/` (Gemini); sessions are the agent's
    `.jsonl` transcripts; `projects.json`, a subagent's `.meta.json`, `config.toml` are neither."""
    home = json.loads((recording / "meta.json").read_text())["home"]
    spills, sessions = spill_roots({"HOME": home}), session_roots({"HOME": home})
    for file in (recording / "home").rglob("*"):
        if not file.is_file():
            continue
        relative = file.relative_to(recording / "home")
        original = Path(home) / relative
        is_spill = "tool-results" in relative.parts or "tool-outputs" in relative.parts
        is_session = file.suffix in (".jsonl", ".json") and not is_spill and (
            "chats" in relative.parts or "sessions" in relative.parts or file.suffix == ".jsonl")
        assert (locate(original, spills) is not None) == is_spill, relative
        assert (locate(original, sessions) is not None) == is_session, relative


def test_qwens_own_files_beside_its_spill_files_are_not_spill_files(tmp_path):
    """Qwen Code 0.24.4 keeps `shell_history`, `checkpoints/` (Storage.getProjectTempDir in its bundle) and
    `logs.json` in the same `tmp/<sha256 of the project>/` folder as its spill files."""
    roots = spill_roots({"HOME": str(tmp_path)})
    temp = tmp_path / ".qwen" / "tmp" / hashlib.sha256(b"/p").hexdigest()
    for name in ("run_shell_command_3b7bd56ccfc1.output", "tool-results/call_af1410993e4548c8.txt",
                 "tool-results/call_af1410993e4548c8-1.txt", "background-shells/s-1/shell-bg_0123abcd.output"):
        assert locate(temp / name, roots) is not None, name
    for name in ("shell_history", "logs.json", "checkpoints/checkpoint-x.json", "chats/session.json",
                 "tool-results/../logs.json", "tool-results/.hidden.txt", "x_0123456789ab.output/../logs.json"):
        assert locate(f"{temp}/{name}", roots) is None, name
    assert locate(tmp_path / ".qwen" / "tmp" / "not-a-hash" / "run_shell_command_3b7bd56ccfc1.output", roots) is None


def test_roots_come_from_the_variables_the_agents_read_and_the_users_folders(tmp_path):
    env = {"HOME": "/nowhere", "QWEN_HOME": str(tmp_path / "q"), "QWEN_RUNTIME_DIR": str(tmp_path / "r"),
           "CLAUDE_CONFIG_DIR": str(tmp_path / "c"), "GEMINI_CLI_HOME": str(tmp_path / "g")}
    roots = spill_roots(env, [tmp_path / "copies"])
    assert [(root.agent, str(root.real)) for root in roots] == [
        ("qwen", f"{tmp_path}/r/tmp"), ("qwen", f"{tmp_path}/q/tmp"), ("claude", f"{tmp_path}/c/projects"),
        ("gemini", f"{tmp_path}/g/.gemini/tmp"), ("user", f"{tmp_path}/copies")]
    assert locate(tmp_path / "copies" / "any" / "name", roots).root.agent == "user"


def test_a_root_reached_through_a_symlink_is_resolved_once_and_served_under_both_names(tmp_path):
    """`~/.claude -> dotfiles/claude` (a dotfiles setup): the root is resolved when the roots are made."""
    (tmp_path / "dotfiles" / "claude").mkdir(parents=True)
    (tmp_path / ".claude").symlink_to(tmp_path / "dotfiles" / "claude")
    spill = tmp_path / "dotfiles/claude/projects/-p/8a822aee-57e2-4015-aec8-2461b2098594/tool-results/b1.txt"
    spill.parent.mkdir(parents=True)
    spill.write_text("x\n")
    roots = spill_roots({"HOME": str(tmp_path)})
    through_link = tmp_path / ".claude" / spill.relative_to(tmp_path / "dotfiles" / "claude")
    assert contained_file(through_link, roots) == spill
    assert contained_file(spill, roots) == spill


def _parts(path: Path) -> tuple[str, ...]:
    return path.parts[1:]


def test_the_safe_open_refuses_a_symlink_anywhere_on_the_way(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f.txt").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "g.txt").symlink_to("f.txt")
    os.close(open_beneath(_parts(tmp_path / "real" / "f.txt")))
    with pytest.raises(Refused, match="link is a symbolic link"):
        open_beneath(_parts(tmp_path / "link" / "f.txt"))
    with pytest.raises(Refused, match="^is a symbolic link"):
        stat_beneath(_parts(tmp_path / "real" / "g.txt"))


def test_the_safe_open_never_opens_a_fifo_and_refuses_folders_everyone_can_write(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(Refused, match="not a regular file"):
        open_beneath(_parts(tmp_path / "fifo"))  # opening it would block until a writer came
    with pytest.raises(Refused, match="not a regular file"):
        open_regular(tmp_path / "fifo")
    with pytest.raises(Refused, match="not a regular file"):
        open_regular("/dev/zero")
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "f.txt").write_text("x")
    shared.chmod(0o777)
    with pytest.raises(Refused, match="writable by every user"):
        open_beneath(_parts(shared / "f.txt"))
    shared.chmod(0o777 | stat.S_ISVTX)  # sticky, as /tmp: nobody can replace another user's entry
    os.close(open_beneath(_parts(shared / "f.txt")))
