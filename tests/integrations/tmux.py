"""A real client in a real terminal: a private tmux server, keys sent to its pane, the screen read back.

Status lines only exist in the clients' interactive UI, so the tests that check them start the
client in a detached tmux session (its own socket under the test's folder, so no other tmux is
touched), type into it with `send-keys`, and poll `capture-pane` until the expected text shows.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

TMUX = shutil.which("tmux")


class Pane:
    def __init__(self, root: Path, width: int = 200, height: int = 50):
        self.socket = root / "tmux.sock"
        self.width, self.height = width, height

    def _tmux(self, *args: str) -> str:
        return subprocess.run([TMUX, "-S", str(self.socket), *args], capture_output=True, text=True,
                              check=True, timeout=30).stdout

    def start(self, command: list[str], cwd: Path, env: dict) -> None:
        """Run `command` with exactly `env` (nothing inherited) in a new detached session."""
        line = shlex.join(["env", "-i", *(f"{key}={value}" for key, value in env.items()), *command])
        self._tmux("new-session", "-d", "-s", "client", "-x", str(self.width), "-y", str(self.height),
                   "-c", str(cwd), line + "; sleep 600")

    def type(self, text: str, enter: bool = True) -> None:
        self._tmux("send-keys", "-t", "client", "-l", text)
        time.sleep(0.3)
        if enter:
            self._tmux("send-keys", "-t", "client", "Enter")

    def keys(self, *names: str) -> None:
        """Press keys by tmux's names (`Down`, `Enter`, `q`), one after the other."""
        self._tmux("send-keys", "-t", "client", *names)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "client")

    def wait_for(self, pattern: str, timeout: float = 120) -> re.Match:
        """The first match of `pattern` on the screen; fails with the last screen after `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            match = re.search(pattern, screen, re.MULTILINE)
            if match:
                return match
            if time.monotonic() > deadline:
                raise AssertionError(f"{pattern!r} did not appear within {timeout}s; the screen:\n{screen}")
            time.sleep(0.5)

    def close(self) -> None:
        subprocess.run([TMUX, "-S", str(self.socket), "kill-server"], capture_output=True, timeout=30)
