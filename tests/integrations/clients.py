"""Drive the real agent clients against the repo's scripted model servers, in a throwaway HOME.

Each `Client` knows its binary, its scripted server (tests/fakes) and the environment that points
it there (as tests/recordings/*/record.py do). `Sandbox` makes HOME and a project folder, puts
this interpreter's `doctor` first on PATH (what the installed command files run), and runs
`doctor install` the way a user would. `run()` starts the server on a free port, runs the client
once and returns what it printed and every request body the server received, so a test can
check what reached the model.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAKES = ROOT / "tests" / "fakes"
CLIENTS = ROOT / ".clients" / "node_modules"
QWEN_CLI = Path(os.environ.get("QWEN_CLI") or ROOT / ".reference/node_modules/@qwen-code/qwen-code/cli-entry.js")
CLAUDE_BIN = Path(os.environ.get("CLAUDE_BIN") or CLIENTS / "@anthropic-ai/claude-code-linux-x64/claude")
GEMINI_JS = Path(os.environ.get("GEMINI_JS") or CLIENTS / "@google/gemini-cli/bundle/gemini.js")
CODEX_BIN = Path(os.environ.get("CODEX_BIN")
                 or CLIENTS / "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
DOCTOR_BIN = Path(sys.executable).parent


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    bodies: list[str]  # raw request bodies, in order

    def text_with(self, needle: str) -> str | None:
        """The first string inside any request body that contains `needle` (JSON escapes undone)."""
        for raw in self.bodies:
            try:
                body = json.loads(raw)
            except ValueError:
                continue
            for text in _strings(body):
                if needle in text:
                    return text
        return None


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@dataclass
class Sandbox:
    """A throwaway HOME and project folder for one client."""

    root: Path
    home: Path = field(init=False)
    project: Path = field(init=False)

    def __post_init__(self):
        self.home = self.root / "home"
        self.project = self.root / "project"
        self.home.mkdir(parents=True)
        self.project.mkdir(parents=True)

    def env(self, **extra) -> dict:
        return {"PATH": f"{DOCTOR_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}", "HOME": str(self.home),
                "TERM": "dumb", "LANG": "C.UTF-8", **extra}

    def claude_used_before(self) -> None:
        """What a user who has run Claude Code before has: onboarding done, this folder trusted, the key approved
        (without it the interactive client stops at its first-run screens)."""
        (self.home / ".claude").mkdir(exist_ok=True)
        (self.home / ".claude" / ".claude.json").write_text(json.dumps({
            "hasCompletedOnboarding": True, "theme": "dark", "numStartups": 5,
            "customApiKeyResponses": {"approved": ["sk-fake"], "rejected": []},
            "projects": {str(self.project): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}}}))

    def doctor(self, *args: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
        done = subprocess.run([str(DOCTOR_BIN / "doctor"), *args], cwd=self.project, env={**self.env(), **(env or {})},
                              capture_output=True, text=True, timeout=120)
        if check and done.returncode != 0:
            raise AssertionError(f"doctor {' '.join(args)} exited {done.returncode}: {done.stderr}")
        return done


@dataclass(frozen=True)
class Client:
    name: str
    fake: str
    binary: Path

    def missing(self) -> str | None:
        if self.binary.suffix == ".js" and shutil.which("node") is None:
            return "node is not installed"
        if not self.binary.is_file():
            return f"{self.name} not found at {self.binary} (npm install --prefix .clients …)"
        return None

    def command(self, port: int, args: list[str]) -> list[str]:
        if self.name == "qwen":
            return ["node", str(self.binary), *args, "--auth-type", "openai", "--openai-base-url",
                    f"http://127.0.0.1:{port}/v1", "--openai-api-key", "sk-fake", "-m", "fake-model"]
        if self.name == "gemini":
            return ["node", str(self.binary), *args]
        if self.name == "codex":  # config.toml names provider `fake`; its port changes every run
            return [str(self.binary), "-c", f'model_providers.fake.base_url="http://127.0.0.1:{port}/v1"', *args]
        return [str(self.binary), *args]

    def environment(self, box: Sandbox, port: int) -> dict:
        if self.name == "claude":
            return box.env(CLAUDE_CONFIG_DIR=str(box.home / ".claude"), ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}",
                           ANTHROPIC_API_KEY="sk-fake", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                           DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
                           IS_SANDBOX="1")
        if self.name == "gemini":
            return box.env(GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{port}", GEMINI_API_KEY="fake",
                           GEMINI_CLI_TRUST_WORKSPACE="true", NO_BROWSER="1", CI="")
        if self.name == "codex":
            return box.env(CODEX_HOME=str(box.home / ".codex"), FAKE_API_KEY="sk-fake", RUST_LOG="error")
        return box.env()

    def run(self, box: Sandbox, args: list[str], steps: list, timeout: float = 240, env: dict | None = None) -> Outcome:
        with self.server(box, steps) as (port, log):
            done = subprocess.run(self.command(port, args), cwd=box.project, env={**self.environment(box, port), **(env or {})},
                                  capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        return Outcome(done.returncode, done.stdout, done.stderr, bodies(log))

    @contextmanager
    def server(self, box: Sandbox, steps: list) -> Iterator[tuple[int, Path]]:
        """This client's scripted model server on a free port, for the `with` block: (port, log path)."""
        log = box.root / f"fake-{time.monotonic_ns()}.log"
        script = log.with_suffix(".json")
        script.write_text(json.dumps({"steps": steps}))
        port = _free_port()
        server = subprocess.Popen([sys.executable, str(FAKES / self.fake), str(port), str(script), str(log)])
        try:
            _wait_for_port(port)
            yield port, log
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(10)


def bodies(log: Path) -> list[str]:
    """Every request body a scripted server logged, in order."""
    bodies_file = Path(f"{log}.bodies")
    raw = bodies_file.read_text(encoding="utf-8", errors="replace") if bodies_file.exists() else ""
    return [line.split("\t", 1)[1] for line in raw.splitlines() if "\t" in line]


QWEN = Client("qwen", "openai_chat.py", QWEN_CLI)
CLAUDE = Client("claude", "anthropic.py", CLAUDE_BIN)
GEMINI = Client("gemini", "gemini.py", GEMINI_JS)
CODEX = Client("codex", "openai_responses.py", CODEX_BIN)

GEMINI_SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
                   "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "enableAutoUpdate": False,
                               "enableAutoUpdateNotification": False},
                   "telemetry": {"enabled": False}, "privacy": {"usageStatisticsEnabled": False}}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"the scripted model server did not listen on {port}")
