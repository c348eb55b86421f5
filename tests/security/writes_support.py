"""What the tests of the files doctor writes share: doctor as a subprocess in a throwaway HOME, and a victim.

Every attack goes through the seam a user or attacker meets: the installed `doctor` command, run with
HOME (and so every agent's home) pointed at a temporary folder. `PYTHONPATH` is passed on, so the
same tests can be run once against another checkout of doctor (how they were seen failing on main).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

DOCTOR = Path(sys.executable).parent / "doctor"
NODE = shutil.which("node")
CLAUDE_SESSION = next((Path(__file__).parents[1] / "recordings" / "claude" / "subagent").rglob("*-*-*-*.jsonl"))
LEFT_OUT = ("CLAUDE_CONFIG_DIR", "QWEN_HOME", "CODEX_HOME", "GEMINI_CLI_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME",
            "DOCTOR_CONFIG")  # every home follows HOME


def run_doctor(home: Path, *args: str, cwd: Path | None = None, shell_prefix: str | None = None, timeout: float = 60,
               preexec_fn=None) -> subprocess.CompletedProcess:
    """`doctor ARGS` with HOME at `home` (no agent home variable leaks in from the caller). `shell_prefix`:
    shell commands run first in the same process, which then becomes doctor (`exec`: the same pid)."""
    env = {key: value for key, value in os.environ.items() if key not in LEFT_OUT}
    env.update(HOME=str(home), LANG="C.UTF-8", TERM="dumb")
    command = [str(DOCTOR), *args]
    if shell_prefix is not None:
        command = ["/bin/sh", "-c", f'{shell_prefix}; exec "$0" "$@"', *command]
    return subprocess.run(command, cwd=cwd or home, env=env, capture_output=True, text=True, timeout=timeout,
                          preexec_fn=preexec_fn)


def tree(root: Path) -> dict[str, tuple]:
    """Every entry under `root`: a file's bytes and mode, a link's target, a folder."""
    entries = {}
    for path in sorted(root.rglob("*")):
        status = path.lstat()
        if path.is_symlink():
            entries[str(path.relative_to(root))] = ("link", os.readlink(path))
        elif path.is_dir():
            entries[str(path.relative_to(root))] = ("folder", status.st_mode & 0o777)
        elif stat.S_ISREG(status.st_mode):
            entries[str(path.relative_to(root))] = ("file", path.read_bytes(), status.st_mode & 0o777, status.st_uid)
        else:  # a FIFO is never opened: that would wait for a writer
            entries[str(path.relative_to(root))] = ("other", stat.S_IFMT(status.st_mode), status.st_ino)
    return entries


def victim(folder: Path, owner=None, text: str = "someone else's file\n") -> tuple[Path, tuple]:
    """A file an attacker would like doctor to overwrite (another user's when `owner`), and its state."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "victim.txt"
    path.write_text(text)
    path.chmod(0o644)
    if owner is not None:
        owner.own(path)
    return path, state(path)


def state(path: Path) -> tuple:
    status = path.lstat()
    return path.read_bytes(), status.st_mode & 0o7777, status.st_uid, status.st_ino


def node_parses(path: Path) -> bool:
    """Whether Node's JSON.parse (what Claude Code and the plain-JSON readers run) accepts the file."""
    done = subprocess.run([NODE, "-e", "JSON.parse(require('fs').readFileSync(process.argv[1], 'utf-8'))", str(path)],
                          capture_output=True, text=True, timeout=60)
    return done.returncode == 0
