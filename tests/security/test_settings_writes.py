"""`doctor install` / `doctor uninstall` against hostile and fragile settings files (issue 22 item 10).

Every case runs the installed `doctor` as a subprocess with HOME (so every agent's home) in a temporary
folder: a link planted at the name of the temporary file, a settings file that is a link (dotfiles) or
leads outside the project, read-only or another user's, a FIFO, backups that must never be
overwritten (install then uninstall within the same second), numbers and strings JSON.parse reads but
Python would write back differently (`1e400`, an escaped lone surrogate), a key given twice, and a
write cut short halfway through an install. On main each of these lost or corrupted something.
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import time
from pathlib import Path

import pytest

from tests.security.writes_support import NODE, node_parses, run_doctor, state, tree, victim

SETTINGS = {"claude": ".claude/settings.json", "gemini": ".gemini/settings.json", "qwen": ".qwen/settings.json",
            "codex": ".codex/hooks.json"}
HOOK = {"claude": "doctor hook claude", "gemini": "doctor hook gemini", "qwen": "doctor hook qwen",
        "codex": "doctor hook codex"}


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


def settings_of(home: Path, agent: str, text: str | bytes | None = None) -> Path:
    path = home / SETTINGS[agent]
    path.parent.mkdir(parents=True, exist_ok=True)
    if text is not None:
        path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def refused(done, path: Path, why: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "refused" in done.stderr and str(path) in done.stderr, done.stderr
    assert why in done.stderr, done.stderr


# --- links ------------------------------------------------------------------------------------------

def test_a_link_planted_at_the_temporary_name_receives_nothing(home, tmp_path, other_user):
    """Main wrote `.settings.json.doctor-<pid>` with O_CREAT|O_TRUNC: a link there sent the settings into
    its target (another user's file, made 0644 → the settings' mode) and became settings.json itself."""
    settings = settings_of(home, "claude", '{"model": "opus"}\n')
    target, before = victim(tmp_path / "elsewhere", other_user)
    planted = shlex.quote(str(settings.parent)) + '/.settings.json.doctor-$$'
    done = run_doctor(home, "install", "claude", shell_prefix=f"ln -s {shlex.quote(str(target))} {planted}")
    assert done.returncode == 0, done.stderr
    assert state(target) == before
    assert not settings.is_symlink() and json.loads(settings.read_text())["model"] == "opus"
    assert HOOK["claude"] in settings.read_text()


@pytest.mark.parametrize("agent", ["claude", "gemini"])
def test_a_settings_file_that_is_a_link_is_written_through_on_purpose(agent, home):
    """Dotfiles: settings.json links into the user's dotfiles repository. Main replaced the link with a
    regular file and never updated the file it led to. Now the change goes to that file (the link stays),
    install says so, and uninstall gives that file its bytes back."""
    dotfiles = home / "dotfiles" / f"{agent}.json"
    dotfiles.parent.mkdir()
    original = b'{\n  "model": "x"\n}\n'
    dotfiles.write_bytes(original)
    settings = settings_of(home, agent)
    settings.symlink_to(Path("..") / "dotfiles" / dotfiles.name)

    done = run_doctor(home, "install", agent)
    assert done.returncode == 0, done.stderr
    assert f"written through the symbolic link to {dotfiles}" in done.stdout
    assert settings.is_symlink() and HOOK[agent] in dotfiles.read_text()

    done = run_doctor(home, "uninstall", agent)
    assert done.returncode == 0, done.stderr
    assert settings.is_symlink() and dotfiles.read_bytes() == original


def test_a_project_settings_link_leading_outside_the_project_is_refused(home, tmp_path):
    """A repository can commit `.claude/settings.json -> ~/.claude/settings.json` (or any JSON file of the
    user's): `install --project` writes only inside the project."""
    project = tmp_path / "project"
    theirs = settings_of(home, "claude", '{"model": "opus"}\n')
    link = project / ".claude" / "settings.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(theirs)
    before = tree(tmp_path)
    done = run_doctor(home, "install", "claude", "--project", cwd=project)
    refused(done, link, "outside the project")
    assert tree(tmp_path) == before


def test_a_dangling_settings_link_is_refused(home):
    settings = settings_of(home, "qwen")
    settings.symlink_to(home / "gone.json")
    before = tree(home)
    refused(run_doctor(home, "install", "qwen"), settings, "which does not exist")
    assert tree(home) == before


# --- files doctor may not replace -----------------------------------------------------------------

def test_a_read_only_settings_file_is_refused(home):
    """Main renamed a new file over a 0444 settings.json (the folder is writable): the user's "do not
    touch" was lost with the bytes."""
    settings = settings_of(home, "qwen", '{"model": {"name": "x"}}\n')
    settings.chmod(0o444)
    before = tree(home)
    refused(run_doctor(home, "install", "qwen"), settings, "read-only (mode 0444)")
    assert tree(home) == before


def test_another_users_settings_file_is_refused(home, other_user):
    """Run as root with someone else's HOME (`sudo` keeping HOME): main replaced their settings with a
    root-owned file their agent could no longer read."""
    settings = settings_of(home, "claude", '{"model": "opus"}\n')
    other_user.own(settings)
    before = tree(home)
    refused(run_doctor(home, "install", "claude"), settings, f"belongs to another user ({other_user.name})")
    assert tree(home) == before


def test_a_fifo_at_the_settings_path_is_refused_without_waiting(home):
    """Main opened settings.json to read it: a FIFO there blocked install for ever."""
    settings = settings_of(home, "gemini")
    os.mkfifo(settings)
    before = tree(home)
    refused(run_doctor(home, "install", "gemini", timeout=30), settings, "not a regular file")
    assert tree(home) == before


# --- backups ----------------------------------------------------------------------------------------

def test_install_then_uninstall_in_the_same_second_keeps_the_original(home):
    """Backups were named to the second: an uninstall in the same second as the install overwrote the
    install's backup (the original) with the installed state. The install's backup is copied under every
    name the uninstall could pick in the next minute, so the two land in "the same second" whatever the
    machine's speed: none of those backups may change, and the original bytes come back."""
    original = b'{\n    "model": "opus",\n    "permissions": {"allow": ["Bash(git:*)"]}\n}\n'
    settings = settings_of(home, "claude", original)
    assert run_doctor(home, "install", "claude").returncode == 0
    [backup] = settings.parent.glob("settings.json.doctor-backup-*")
    assert backup.read_bytes() == original
    now = time.time()
    for second in range(60):
        stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now + second))
        taken = settings.with_name(f"settings.json.doctor-backup-{stamp}")
        if not taken.exists():
            taken.write_bytes(original)
    backups = {path: path.read_bytes() for path in settings.parent.glob("settings.json.doctor-backup-*")}

    done = run_doctor(home, "uninstall", "claude")
    assert done.returncode == 0, done.stderr
    assert {path: path.read_bytes() for path in backups} == backups  # none overwritten
    [new] = set(settings.parent.glob("settings.json.doctor-backup-*")) - set(backups)
    assert HOOK["claude"] in new.read_text()  # the installed state, under a name of its own
    assert settings.read_bytes() == original


# --- what the agents read, written back exactly -----------------------------------------------------

# JSON.parse reads all of it; Python's json would write `1e400` back as `Infinity` (which JSON.parse
# rejects: the agent would not start), the lone surrogate raw (not UTF-8: exit 4 after the backup and the
# command file were written), and only the second "A".
AWKWARD = ('{\n'
           '    "model": "opus",\n'
           '    "limits": [1e400, -1e400, 1.0, 1E5, 12345678901234567890123, -0],\n'
           '    "greeting": "caf\\u00e9 \\ud83d\\ude00",\n'
           '    "lone": "\\ud800",\n'
           '    "env": {"A": "1", "A": "2"}\n'
           '}\n')


@pytest.mark.parametrize("agent", list(SETTINGS))
def test_settings_come_back_byte_for_byte_and_install_keeps_every_token(agent, home):
    settings = settings_of(home, agent, AWKWARD)
    done = run_doctor(home, "install", agent)
    assert done.returncode == 0, done.stderr
    installed = settings.read_text()
    for line in AWKWARD.splitlines()[1:-1]:
        assert line.rstrip(",") in installed
    assert "Infinity" not in installed and HOOK[agent] in installed
    if NODE:
        assert node_parses(settings)

    done = run_doctor(home, "uninstall", agent)
    assert done.returncode == 0, done.stderr
    assert settings.read_bytes() == AWKWARD.encode()
    assert "restored" in done.stdout
    assert sorted(p.name for p in settings.parent.iterdir() if ".doctor-backup-" not in p.name) == [settings.name]


def test_a_key_given_twice_where_doctor_edits_is_refused_in_plain_json_too(home):
    """Claude's settings are plain JSON: main parsed them with json.loads, which keeps the last `hooks`,
    and wrote the file back without the first."""
    text = '{\n  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]},\n  "hooks": {}\n}\n'
    settings = settings_of(home, "claude", text)
    before = tree(home)
    refused(run_doctor(home, "install", "claude"), settings, 'a key given twice ("hooks")')
    assert tree(home) == before


# --- all or nothing ---------------------------------------------------------------------------------

@pytest.mark.parametrize("agent", ["claude", "gemini", "qwen"])
def test_a_write_that_fails_halfway_leaves_every_file_as_it_was(agent, home):
    """The file size limit (RLIMIT_FSIZE) lets the backup and the command files through and stops the
    settings write: main left the backup, the command file (and Gemini's policy) behind, half installed."""
    settings = settings_of(home, agent, json.dumps({"ui": {"theme": "x" * 9000}}, indent=2) + "\n")
    limit = settings.stat().st_size + 40

    def small_files_only():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    before = tree(home)
    done = run_doctor(home, "install", agent, preexec_fn=small_files_only)
    assert tree(home) == before
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert str(settings) in done.stderr and "nothing changed" in done.stderr, done.stderr


def test_uninstall_removes_the_folders_install_made_and_keeps_the_users(home):
    assert run_doctor(home, "install", "gemini").returncode == 0
    assert run_doctor(home, "uninstall", "gemini").returncode == 0
    left = sorted(p.name for p in (home / ".gemini").iterdir())
    assert [name for name in left if ".doctor-backup-" not in name] == []  # commands/, policies/, settings.json

    mine = home / ".qwen" / "commands" / "mine.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("my own command\n")
    assert run_doctor(home, "install", "qwen").returncode == 0
    assert run_doctor(home, "uninstall", "qwen").returncode == 0
    assert sorted(str(p.relative_to(home)) for p in home.joinpath(".qwen").rglob("*") if ".doctor-backup-" not in p.name) \
        == [".qwen/commands", ".qwen/commands/mine.md"]


# --- the agent reads what install wrote -----------------------------------------------------------------

@pytest.mark.slow
def test_claude_code_reads_the_settings_install_edited_in_place(tmp_path):
    """The real Claude Code 2.1.332 on a settings file doctor edited as text (4-space layout, an escape, a key
    given twice): the hook doctor added runs (its alarm shows), and the environment Claude exports is the
    user's as JSON.parse reads it (the last "A")."""
    from tests.integrations.clients import CLAUDE, Sandbox

    if CLAUDE.missing():
        pytest.skip(CLAUDE.missing())
    box = Sandbox(tmp_path)
    settings = box.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n    "env": {"GREETING": "caf\\u00e9", "A": "1", "A": "2"},\n    "cleanupPeriodDays": 30\n}\n')
    box.doctor("install", "claude")
    assert '"env": {"GREETING": "caf\\u00e9", "A": "1", "A": "2"},' in settings.read_text()
    config = box.home / ".config" / "doctor" / "config.toml"  # a team's budget the Read below goes over
    config.parent.mkdir(parents=True)
    config.write_text("[budgets]\nRead = 20000\n")
    notes = box.project / "notes.txt"
    notes.write_text("".join(f"note {i:04d} {'n' * 40}\n" for i in range(600)))  # 30,600 chars
    ran = CLAUDE.run(box, ["-p", "go", "--dangerously-skip-permissions", "--tools", "Bash,Read",
                           "--output-format", "stream-json", "--verbose"],
                     [[{"name": "Bash", "input": {"command": "printf 'A=%s %s' \"$A\" \"$GREETING\"",
                                                  "description": "env"}}],
                      [{"name": "Read", "input": {"file_path": str(notes)}}], "All done."])
    assert ran.returncode == 0, ran.stderr
    assert ran.text_with("A=2 café") is not None, ran.bodies[-1][:2000]
    shown = [json.loads(line).get("content", "") for line in ran.stdout.splitlines() if '"informational"' in line]
    assert any("doctor: Read returned " in text for text in shown), shown
