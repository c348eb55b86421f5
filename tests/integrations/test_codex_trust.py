"""`doctor install codex --trust`: the real Codex records the trust, and then runs doctor's hook.

Codex 0.171 skips a hook nobody trusted; `codex exec` says nothing about it. After `doctor install
codex --trust` (which asks Codex's own app server to record the trust), `codex exec` without
`--dangerously-bypass-hook-trust` runs the hook: `/doctor:memory` reaches the scripted model as
doctor's summary. Without `--trust` the same run gets no summary, so the test can tell. The
user's config.toml keeps its comment and keys (a backup beside it), only doctor's hooks are trusted
(a hook of the user's own in the same hooks.json stays as it was), a second install changes
nothing, and a config.toml that does not parse, or no `codex` to ask, is refused before anything
is written.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from tests.conftest import REQUIRE_REFERENCE
from tests.integrations.clients import CODEX, CODEX_BIN, DOCTOR_BIN, Sandbox
from tests.integrations.test_slash_real_clients import _chars, _codex_config, _sent

EXEC = ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
needs_codex = pytest.mark.skipif(bool(CODEX.missing()) and not REQUIRE_REFERENCE, reason=CODEX.missing() or "")


def _with_codex(box: Sandbox, binary: Path = CODEX_BIN) -> dict:
    """PATH for `doctor install` with `codex` on it, as a user who has Codex installed has."""
    folder = box.root / "bin"
    folder.mkdir(exist_ok=True)
    if not (folder / "codex").exists():
        (folder / "codex").symlink_to(binary)
    return {"PATH": f"{folder}:{box.env()['PATH']}"}


def _config(box: Sandbox) -> Path:
    path = box.home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# the user's own settings\nmodel_reasoning_effort = \"low\"\n" + _codex_config())
    return path


def _summary_typed(box: Sandbox):
    first = CODEX.run(box, [*EXEC, "go"], [[{"name": "exec_command", "args": {"cmd": "seq 1 30000"}}], "All done."])
    assert first.returncode == 0, first.stderr
    [transcript] = (box.home / ".codex" / "sessions").rglob("rollout-*.jsonl")
    expected = json.loads(box.doctor("memory", str(transcript), "--json").stdout)
    typed = CODEX.run(box, [*EXEC, "resume", "--last", "/doctor:memory"], ["Here is the summary."])
    assert typed.returncode == 0, typed.stderr
    return typed.text_with("doctor memory — codex session"), expected


@needs_codex
@pytest.mark.slow
@pytest.mark.ci
def test_codex_exec_runs_doctors_hook_once_install_trusted_it(tmp_path):
    box = Sandbox(tmp_path / "trusted")
    config = _config(box)
    before = tomllib.loads(config.read_text())
    done = box.doctor("install", "codex", "--trust", env=_with_codex(box))
    assert "trusted   " in done.stdout and "doctor's hook (PostToolUse, UserPromptSubmit)" in done.stdout, done.stdout
    text = config.read_text()
    assert text.startswith("# the user's own settings\n")
    after = tomllib.loads(text)
    assert {key: value for key, value in after.items() if key != "hooks"} == before
    assert [p.name for p in config.parent.glob("config.toml.doctor-backup-*")] and "type /hooks" not in done.stdout

    summary, expected = _summary_typed(box)  # no --dangerously-bypass-hook-trust
    assert summary is not None and _chars(summary) == _sent(expected)

    again = box.doctor("install", "codex", "--trust", env=_with_codex(box))
    assert "already trusted, nothing changed" in again.stdout and config.read_text() == text

    # The same without --trust: Codex skips the hook, the model gets no summary.
    untrusted = Sandbox(tmp_path / "untrusted")
    _config(untrusted)
    untrusted.doctor("install", "codex")
    assert _summary_typed(untrusted)[0] is None


@needs_codex
@pytest.mark.slow
def test_only_doctors_hooks_are_trusted(tmp_path):
    box = Sandbox(tmp_path)
    config = _config(box)
    hooks = box.home / ".codex" / "hooks.json"
    hooks.write_text(json.dumps({"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "my-own-hook"}]}]}}))
    box.doctor("install", "codex", "--tell-model", "--trust", env=_with_codex(box))
    installed = json.loads(hooks.read_text())["hooks"]
    expected = {f"{hooks}:{event}:{group}:0"
                for event, name in (("post_tool_use", "PostToolUse"), ("user_prompt_submit", "UserPromptSubmit"))
                for group, entry in enumerate(installed[name])
                if entry["hooks"][0]["command"] == f"{DOCTOR_BIN / 'doctor'} hook codex --tell-model"}
    assert len(expected) == 2
    assert set(tomllib.loads(config.read_text())["hooks"]["state"]) == expected


@needs_codex
@pytest.mark.slow
def test_a_project_codex_does_not_trust_gets_nothing_installed(tmp_path):
    """Codex loads a project's hooks.json only once the user trusted the folder, so it cannot list (nor
    trust) doctor's hook there: install says so, exit 2, and the hooks.json it wrote is taken back."""
    box = Sandbox(tmp_path)
    config = _config(box)
    before = config.read_text()
    done = box.doctor("install", "codex", "--project", "--trust", check=False, env=_with_codex(box))
    assert done.returncode == 2 and "a project's hooks load only once Codex trusts the folder" in done.stderr
    assert "nothing was installed (what was written was put back)" in done.stderr and "created" not in done.stdout
    assert not (box.project / ".codex").exists()
    assert config.read_text() == before and not list(config.parent.glob("*.doctor-backup-*"))
    assert not (config.parent / "hooks.json").exists()  # (Codex's own files, made by its app server, stay)


def test_a_config_that_does_not_parse_is_refused_before_anything_is_written(tmp_path):
    box = Sandbox(tmp_path)
    config = box.home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("model = \n[broken\n")
    done = box.doctor("install", "codex", "--trust", check=False, env=_with_codex(box, Path("/bin/true")))
    assert done.returncode == 2 and "refused" in done.stderr and "config.toml: not valid TOML" in done.stderr
    assert sorted(p.name for p in config.parent.iterdir()) == ["config.toml"] and config.read_text() == "model = \n[broken\n"


def test_no_codex_to_ask_is_refused_before_anything_is_written(tmp_path):
    box = Sandbox(tmp_path)
    done = box.doctor("install", "codex", "--trust", check=False, env={"PATH": str(DOCTOR_BIN)})
    assert done.returncode == 2 and "`codex` is not on PATH" in done.stderr
    assert not (box.home / ".codex").exists()


def test_trust_is_for_codex_only(tmp_path):
    box = Sandbox(tmp_path)
    done = box.doctor("install", "claude", "--trust", check=False)
    assert done.returncode == 2 and "--trust is for Codex" in done.stderr
    assert not (box.home / ".claude").exists()


def test_a_codex_that_ends_without_answering_leaves_nothing_behind(tmp_path, monkeypatch, capsys):
    """A `codex` whose app server ends at once (here /bin/true): install says so (exit 2), the config is as
    it was, and neither the server nor its watchdog timer is left behind (a timer still waiting held
    `doctor` open for its whole minute at exit)."""
    import threading

    from doctor import cli

    box = Sandbox(tmp_path)
    config = box.home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('model = "x"\n')
    for name in ("CODEX_HOME", "DOCTOR_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(box.home))
    monkeypatch.setenv("PATH", _with_codex(box, Path("/bin/true"))["PATH"])
    monkeypatch.chdir(box.project)
    assert cli.main(["install", "codex", "--trust"]) == 2
    assert "could not trust doctor's hook: codex app-server " in capsys.readouterr().err  # ended, or not reading
    assert sorted(p.name for p in config.parent.iterdir()) == ["config.toml"]  # the hooks.json written: taken back
    assert config.read_text() == 'model = "x"\n'
    assert [thread for thread in threading.enumerate() if isinstance(thread, threading.Timer)] == []


# A `codex app-server` whose config writer replaces a hook's trust entry instead of merging into it (Codex
# 0.171 merges): it answers hooks/list with doctor's hook and, on config/batchWrite, drops the entry's
# other fields. Only the messages and fields `codex_trust` reads, as the real server sends them.
REPLACING_SERVER = '''#!{python}
import json, os, sys
codex = os.path.join(os.environ["HOME"], ".codex")
hooks = os.path.join(codex, "hooks.json")
trusted = False
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    result = {{}}
    if message["method"] == "hooks/list":
        result = {{"data": [{{"hooks": [{{
            "key": hooks + ":post_tool_use:0:0", "handlerType": "command", "command": "doctor hook codex",
            "sourcePath": hooks, "isManaged": False, "currentHash": "sha256:new", "eventName": "postToolUse",
            "trustStatus": "trusted" if trusted else "untrusted"}}]}}]}}
    elif message["method"] == "config/batchWrite":
        path = os.path.join(codex, "config.toml")
        with open(path) as handle:
            text = handle.read()
        with open(path, "w") as handle:
            handle.write(text.replace("enabled = false\\n", "").replace("sha256:old", "sha256:new"))
        trusted = True
    print(json.dumps({{"id": message["id"], "result": result}}), flush=True)
'''


def test_a_field_of_doctors_trust_entry_the_write_dropped_is_put_back(tmp_path):
    """The user disabled doctor's hook in its trust entry (`enabled = false`) beside a stale hash: a
    write that keeps every other key but drops that field is undone and install says so."""
    import sys

    box = Sandbox(tmp_path)
    server = box.root / "codex-server"
    server.write_text(REPLACING_SERVER.format(python=sys.executable))
    server.chmod(0o755)
    config = box.home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    original = (f'model = "x"\n\n[hooks.state."{box.home}/.codex/hooks.json:post_tool_use:0:0"]\n'
                'enabled = false\ntrusted_hash = "sha256:old"\n')
    config.write_text(original)
    done = box.doctor("install", "codex", "--trust", check=False, env=_with_codex(box, server))
    assert done.returncode == 2 and "Codex's write changed other keys; put back as it was" in done.stderr, done.stderr
    assert config.read_text() == original
    assert [p.read_text() for p in config.parent.glob("config.toml.doctor-backup-*")] == [original]
