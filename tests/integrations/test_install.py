"""`doctor install` / `doctor uninstall` through the command line, into a throwaway HOME and project.

What a user's settings must survive: a second install (nothing changes, no backup), unrelated keys
(kept, in order), an uninstall (doctor's entries gone, the rest kept), a file that does not parse
or a file of the user's own at doctor's path (refused, exit 2, byte-for-byte untouched), and
`--dry-run` (a diff, nothing written).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from doctor import cli
from doctor.integrations import AGENTS
from doctor.integrations.program import doctor_program

PROGRAM = doctor_program()  # what install writes: this doctor's absolute path (the venv's console script)


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    for name in ("CLAUDE_CONFIG_DIR", "QWEN_HOME", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return home


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("scope", ["--user", "--project"])
def test_install_twice_changes_nothing_the_second_time(agent, scope, home, capsys):
    assert cli.main(["install", agent, scope]) == 0
    first = capsys.readouterr().out
    assert "created" in first
    after_first = snapshot(home.parent)
    assert cli.main(["install", agent, scope]) == 0
    assert "nothing changed" in capsys.readouterr().out
    assert snapshot(home.parent) == after_first


@pytest.mark.parametrize("agent", AGENTS)
def test_uninstall_removes_everything_install_wrote(agent, home, capsys):
    before = snapshot(home.parent)
    cli.main(["install", agent])
    assert snapshot(home.parent) != before
    assert cli.main(["uninstall", agent]) == 0
    assert "removed" in capsys.readouterr().out
    assert {name for name in snapshot(home.parent) if ".doctor-backup-" not in name} == set(before)


def test_qwen_settings_keep_unrelated_keys_through_install_and_uninstall(home, capsys):
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir()
    original = {"model": {"name": "qwen3-coder"}, "permissions": {"allow": ["run_shell_command(git)"],
                                                                  "deny": ["run_shell_command(rm)"]},
                "tools": {"truncateToolOutputThreshold": 10000}}
    settings.write_text(json.dumps(original, indent=4))
    os.chmod(settings, 0o600)

    assert cli.main(["install", "qwen"]) == 0
    installed = json.loads(settings.read_text())
    assert installed["permissions"]["allow"] == ["run_shell_command(git)", f"run_shell_command({PROGRAM} slash qwen --args=*)"]
    assert {key: value for key, value in installed.items() if key not in ("permissions", "hooks", "ui")} == {
        key: value for key, value in original.items() if key != "permissions"}
    assert list(installed) == [*original, "hooks", "ui"]  # order kept, doctor's tables last
    assert installed["hooks"]["PostToolUse"][0]["hooks"][0]["command"] == f"{PROGRAM} hook qwen"
    assert installed["ui"] == {"statusLine": {"type": "command", "command": f"{PROGRAM} statusline qwen"}}
    [backup] = settings.parent.glob("settings.json.doctor-backup-*")
    assert json.loads(backup.read_text()) == original
    assert backup.stat().st_mode & 0o777 == 0o600 == settings.stat().st_mode & 0o777
    assert "backup: settings.json.doctor-backup-" in capsys.readouterr().out

    assert cli.main(["uninstall", "qwen"]) == 0
    assert json.loads(settings.read_text()) == original


def test_the_backup_is_the_settings_file_byte_for_byte(home, capsys):
    """A settings file written with CRLF line endings (an editor on Windows, a synced folder) and a
    non-ASCII value: the backup install makes holds exactly its bytes, not a re-encoded copy."""
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = '{\r\n  "model": "opus",\r\n  "env": {"GREETING": "grüß dich \u2014 ✓"}\r\n}\r\n'.encode("utf-8")
    settings.write_bytes(original)

    assert cli.main(["install", "claude"]) == 0

    [backup] = settings.parent.glob("settings.json.doctor-backup-*")
    assert backup.read_bytes() == original
    installed = settings.read_bytes()
    assert json.loads(installed)["env"] == {"GREETING": "grüß dich \u2014 ✓"}
    assert installed.count(b"\n") == installed.count(b"\r\n") > original.count(b"\n")  # its line endings kept


# A comment is valid in Qwen's settings (tests/integrations/test_jsonc.py); a trailing comma or an escape JSON.parse
# refuses is not.
@pytest.mark.parametrize("broken", ["{ \"permissions\": {", "// a comment\n{},", '{"a": "\\q"}', "[1, 2]",
                                    "{\"permissions\": 3}"])
def test_a_settings_file_that_does_not_parse_is_refused_untouched(broken, home, capsys):
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(broken)
    before = snapshot(home.parent)

    assert cli.main(["install", "qwen"]) == 2

    error = capsys.readouterr().err
    assert error.count("\n") == 1 and str(settings) in error and "refused" in error
    assert snapshot(home.parent) == before


def test_a_command_file_of_the_users_own_is_refused(home, capsys):
    mine = home / ".claude" / "commands" / "doctor" / "memory.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("my own doctor command\n")
    assert cli.main(["install", "claude"]) == 2
    assert "not written by doctor" in capsys.readouterr().err
    assert cli.main(["uninstall", "claude"]) == 0
    assert mine.read_text() == "my own doctor command\n"


def test_dry_run_shows_the_diff_and_writes_nothing(home, capsys):
    (home / ".codex").mkdir()
    hooks = home / ".codex" / "hooks.json"
    hooks.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}}))
    before = snapshot(home.parent)
    assert cli.main(["install", "codex", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"+++ {hooks}" in out and "UserPromptSubmit" in out
    assert "nothing written" in out
    assert snapshot(home.parent) == before


def test_codex_hooks_keep_the_users_own_hooks(home):
    (home / ".codex").mkdir()
    hooks = home / ".codex" / "hooks.json"
    theirs = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}],
                        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "scan-secrets"}]}]}}
    hooks.write_text(json.dumps(theirs))
    assert cli.main(["install", "codex"]) == 0
    installed = json.loads(hooks.read_text())
    assert installed["hooks"]["Stop"] == theirs["hooks"]["Stop"]
    assert installed["hooks"]["UserPromptSubmit"][0] == theirs["hooks"]["UserPromptSubmit"][0]
    assert len(installed["hooks"]["UserPromptSubmit"]) == 2
    assert cli.main(["uninstall", "codex"]) == 0
    assert json.loads(hooks.read_text()) == theirs


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under `root`: an uninstall must leave no folder of doctor's."""
    return {str(path.relative_to(root)): None if path.is_dir() else path.read_bytes() for path in sorted(root.rglob("*"))
            if ".doctor-backup-" not in path.name}


@pytest.mark.parametrize("scope", ["--user", "--project"])
@pytest.mark.parametrize("theirs", [False, True], ids=["no-skills-yet", "beside-their-skills"])
def test_codex_skill_is_installed_and_uninstalled_exactly(scope, theirs, home, capsys):
    """Codex's interactive app rejects `/doctor:memory`; `$doctor-memory` is doctor's skill, in the skills folder
    beside hooks.json. Uninstall takes out its file, the file that keeps it from being picked unasked, and the
    folders they needed, and nothing of the user's (their own skill, Codex's bundled `.system` skills)."""
    base = home / ".codex" if scope == "--user" else home.parent / "project" / ".codex"
    base.mkdir()  # Codex's folder is there (hooks.json's, as before)
    if theirs:
        for mine in ("my-skill/SKILL.md", ".system/imagegen/SKILL.md"):
            (base / "skills" / mine).parent.mkdir(parents=True)
            (base / "skills" / mine).write_text("---\nname: mine\ndescription: mine\n---\nmine\n")
    before = _tree(home.parent)

    assert cli.main(["install", "codex", scope]) == 0

    said = capsys.readouterr().out
    skill = base / "skills" / "doctor-memory"
    assert f"created   {skill / 'SKILL.md'}" in said and "type $doctor-memory in Codex" in said
    text = (skill / "SKILL.md").read_text()
    assert text.startswith("---\n") and "\nname: doctor-memory\n" in text and "Show that text to the user as it is" in text
    assert "allow_implicit_invocation: false" in (skill / "agents" / "openai.yaml").read_text()
    assert cli.main(["uninstall", "codex", scope]) == 0
    assert _tree(home.parent) == before


@pytest.mark.parametrize("first, second", [("--user", "--project"), ("--project", "--user")])
def test_codex_is_installed_in_one_scope_only(first, second, home, capsys):
    """Codex runs the user's hooks.json and a trusted project's both: doctor's hook in each would answer every
    prompt and tool call twice. The second scope is refused (exit 2, one line naming the first), nothing written."""
    assert cli.main(["install", "codex", first]) == 0
    before = snapshot(home.parent)
    capsys.readouterr()
    assert cli.main(["install", "codex", second, "--tell-model"]) == 2
    err = capsys.readouterr().err
    installed = home / ".codex" / "hooks.json" if first == "--user" else home.parent / "project" / ".codex" / "hooks.json"
    assert err.count("\n") == 1 and f"refused: {installed}: already runs doctor's hook" in err
    assert f"doctor uninstall codex {first}` first" in err
    assert snapshot(home.parent) == before
    assert cli.main(["uninstall", "codex", first]) == 0 and cli.main(["install", "codex", second]) == 0


def test_codex_installed_from_the_home_folder_is_one_file(home, monkeypatch):
    """Run from the home folder, the project's .codex is the user's own: installing again is no second scope."""
    monkeypatch.chdir(home)
    assert cli.main(["install", "codex"]) == 0
    assert cli.main(["install", "codex"]) == 0


def test_tell_model_is_chosen_at_install_and_switches_cleanly(home):
    settings = home / ".claude" / "settings.json"
    cli.main(["install", "claude"])
    cli.main(["install", "claude", "--tell-model"])
    groups = json.loads(settings.read_text())["hooks"]["PostToolUse"]
    assert [group["hooks"][0]["command"] for group in groups] == [f"{PROGRAM} hook claude --tell-model"]
    cli.main(["uninstall", "claude"])
    assert not settings.exists()


@pytest.mark.parametrize("agent, keys", [("claude", ("statusLine",)), ("qwen", ("ui", "statusLine"))])
@pytest.mark.parametrize("theirs", [{"type": "command", "command": "~/bin/my-status"},
                                    {"type": "preset", "items": ["model"]}, None])
def test_a_status_line_of_the_users_own_is_kept(agent, keys, theirs, home, capsys):
    """Install never replaces the user's status line (Qwen's `null` is "off", a choice too): it says so."""
    folder = home / f".{agent}"
    folder.mkdir()
    settings = folder / "settings.json"
    original = {"theme": "dark"}
    holder = original
    for key in keys[:-1]:
        holder = holder.setdefault(key, {"other": 1})
    holder[keys[-1]] = theirs
    settings.write_text(json.dumps(original))

    assert cli.main(["install", agent]) == 0
    out = capsys.readouterr().out
    assert f"kept your own {'.'.join(keys)} setting" in out and f"doctor statusline {agent}" in out
    installed = json.loads(settings.read_text())
    value = installed
    for key in keys:
        value = value[key]
    assert value == theirs and installed["theme"] == "dark"
    assert cli.main(["uninstall", agent]) == 0
    assert json.loads(settings.read_text()) == original


@pytest.mark.parametrize("agent, keys", [("claude", ("statusLine",)), ("qwen", ("ui", "statusLine"))])
def test_install_sets_the_status_line_and_uninstall_removes_it(agent, keys, home, capsys):
    assert cli.main(["install", agent]) == 0
    value = json.loads((home / f".{agent}" / "settings.json").read_text())
    for key in keys:
        value = value[key]
    assert value == {"type": "command", "command": f"{PROGRAM} statusline {agent}"}
    assert "kept your own" not in capsys.readouterr().out


def test_qwen_install_says_it_replaces_qwens_default_status_line(home, capsys):
    """Unset `ui.statusLine` is Qwen's built-in default preset (its settings schema says so): install says
    doctor's line replaces it, and how to keep Qwen's."""
    assert cli.main(["install", "qwen"]) == 0
    out = capsys.readouterr().out
    assert "replaces Qwen's built-in default one" in out and "doctor install qwen --no-statusline" in out
    assert cli.main(["install", "qwen"]) == 0  # already there: nothing replaced this time, nothing said
    assert "replaces Qwen's" not in capsys.readouterr().out


@pytest.mark.parametrize("agent, keys", [("claude", ("statusLine",)), ("qwen", ("ui", "statusLine"))])
def test_no_statusline_leaves_the_agents_own_and_takes_doctors_out(agent, keys, home, capsys):
    settings = home / f".{agent}" / "settings.json"
    assert cli.main(["install", agent, "--no-statusline"]) == 0
    installed = json.loads(settings.read_text())
    assert keys[0] not in installed or keys[-1] not in installed[keys[0]]
    assert "replaces Qwen's" not in capsys.readouterr().out
    assert "PostToolUse" in installed["hooks"]  # the rest is installed as usual
    assert cli.main(["install", agent]) == 0
    assert cli.main(["install", agent, "--no-statusline"]) == 0  # an earlier install's line comes out
    assert json.loads(settings.read_text()) == installed
