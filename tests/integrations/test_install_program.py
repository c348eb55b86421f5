"""`doctor install` writes the absolute path of the doctor that ran it (issue 23, item 15).

An agent runs doctor's hooks, status line and command files in its own environment, which often lacks
the virtualenv's folder on PATH: with a bare `doctor` every hook then failed ("doctor: not found").
Here `doctor install` runs as a subprocess from the venv's console script with a PATH that has no
doctor on it, as a user who never activated the venv; every command it wrote then runs with that
same PATH, through a shell as the agents run them. An install made before (a bare `doctor`) is
brought up to the new form without a second entry, and uninstall takes out every form exactly.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from doctor.integrations import AGENTS
from tests.integrations.clients import DOCTOR_BIN

DOCTOR = DOCTOR_BIN / "doctor"
BARE_PATH = "/usr/bin:/bin"  # what an agent started outside the venv sees: no doctor on it


@pytest.fixture
def box(tmp_path) -> dict:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    assert shutil.which("doctor", path=BARE_PATH) is None
    return {"HOME": str(home), "PATH": BARE_PATH, "LANG": "C.UTF-8", "project": project}


def doctor(box: dict, *args: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in box.items() if key != "project"}
    return subprocess.run([str(DOCTOR), *args], cwd=box["project"], env=env, capture_output=True, text=True,
                          timeout=120)


def commands(home: Path) -> list[str]:
    """Every command doctor wrote into the agents' settings and command files under `home`."""
    found = []
    for path in home.rglob("*"):
        if path.suffix == ".json" and path.is_file() and ".doctor-backup-" not in path.name:
            found += [value for value in _strings(json.loads(path.read_text()), "command")]
        elif path.suffix in (".md", ".toml") and path.is_file() and path.parent.name == "doctor":
            found += re.findall(r"!\{(.+)\}\n", path.read_text())  # Qwen's and Gemini's shell line
    return found


def _strings(value, key):
    if isinstance(value, dict):
        for name, item in value.items():
            if name == key and isinstance(item, str):
                yield item
            else:
                yield from _strings(item, key)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, key)


@pytest.mark.parametrize("agent", AGENTS)
def test_every_command_install_writes_runs_without_doctor_on_path(agent, box):
    done = doctor(box, "install", agent)
    assert done.returncode == 0, done.stderr
    assert f"runs      {DOCTOR} (this doctor, by its full path" in done.stdout
    written = commands(Path(box["HOME"]))
    assert written and all(command.startswith(f"{DOCTOR} ") for command in written), written
    for command in written:
        shell = command.replace("{{args}}", "--top=1")  # as the agent fills the command file's line in
        ran = subprocess.run(["/bin/sh", "-c", shell], input="{}", cwd=box["project"], capture_output=True,
                             text=True, timeout=60, env={"HOME": box["HOME"], "PATH": BARE_PATH})
        assert "not found" not in ran.stderr and ran.returncode == 0, (shell, ran.stderr)


@pytest.mark.parametrize("agent", AGENTS)
def test_an_install_from_before_is_brought_up_and_uninstall_takes_out_every_form(agent, box):
    """A bare `doctor` (what earlier installs wrote) becomes this doctor's path, once; uninstall leaves the
    settings as they were before any install."""
    env_home = Path(box["HOME"])
    first = doctor(box, "install", agent)
    assert first.returncode == 0, first.stderr
    installed = sorted(commands(env_home))
    for path in env_home.rglob("*.json"):
        if ".doctor-backup-" not in path.name:
            path.write_text(path.read_text().replace(json.dumps(str(DOCTOR))[1:-1] + " ", "doctor "))
    assert all(command.startswith("doctor ") for command in commands(env_home) if "slash" not in command)

    again = doctor(box, "install", agent)
    assert again.returncode == 0, again.stderr
    assert sorted(commands(env_home)) == installed  # each old entry replaced, none left beside the new one

    assert doctor(box, "uninstall", agent).returncode == 0
    assert commands(env_home) == []
    assert not any("doctor" in path.read_text() for path in env_home.rglob("settings.json"))
    assert not any(path.name == "hooks.json" and "doctor" in path.read_text() for path in env_home.rglob("*.json"))
