"""Watch a real Qwen Code 0.24.4 run with `doctor memory --follow` while it writes its recording.

The client runs against `tests/fakes/openai_chat.py` (a scripted model on
loopback) and executes real shell commands that take a moment each, so the
recording grows over several seconds. As soon as the recording appears,
`doctor memory --follow` starts with no PATH in the client's work directory
(so it finds the newest session there by itself), twice: in JSON-lines mode (checked) and
in text mode (for people). When the client is done the followers are stopped
with Ctrl-C, and Qwen's own `--resume <id> -p "/doctor memory --json"` gives
the expected numbers.

    python examples/follow_real_qwen.py [--out examples/follow_real_qwen.out.txt]

Needs node, the Qwen Code 0.24.4 bundle (QWEN_CLI) and the scripted model
(FAKE_LLM, default tests/fakes/openai_chat.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QWEN_CLI = Path(os.environ.get("QWEN_CLI") or ROOT / ".reference" / "node_modules" / "@qwen-code" / "qwen-code" / "cli-entry.js")
FAKE_LLM = Path(os.environ.get("FAKE_LLM") or ROOT / "tests" / "fakes" / "openai_chat.py")
RETENTION_KEYS = ("toolResultCount", "totalChars", "largestResultChars", "oversizedResultCount")


def sh(command: str) -> dict:
    return {"name": "run_shell_command", "args": {"command": command, "description": "step"}}


SCRIPT = {"steps": [
    [sh("sleep 1; seq 1 3000")],
    [sh("sleep 1; seq 1 200000")],  # above the shell budget: truncated in the tool, spilled to .output
    [sh("sleep 1; python3 -c \"print('é' * 20000)\"")],
    [sh("sleep 1; ls -la /"), sh("sleep 1; seq 1 5000")],
    [sh("sleep 1; echo done")],
    "All done.",
]}


def missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not QWEN_CLI.is_file():
        return f"Qwen Code bundle not found at {QWEN_CLI} (set QWEN_CLI)"
    if not FAKE_LLM.is_file():
        return f"scripted model server not found at {FAKE_LLM} (set FAKE_LLM)"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _qwen(args: list[str], *, cwd: Path, env: dict, port: int) -> list[str]:
    return ["node", str(QWEN_CLI), *args, "--auth-type", "openai", "--openai-base-url", f"http://127.0.0.1:{port}/v1",
            "--openai-api-key", "sk-fake", "-m", "fake-model", "--yolo"]


def _wait_for_recording(home: Path, client: subprocess.Popen, timeout: float = 60) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = sorted((home / ".qwen" / "projects").glob("*/chats/*.jsonl"))
        if found and found[0].stat().st_size > 0:
            return found[0]
        if client.poll() is not None:
            raise RuntimeError(f"the client exited ({client.returncode}) before recording anything")
        time.sleep(0.05)
    raise RuntimeError("no recording appeared")


def run(scratch: Path) -> dict:
    """Record while following; return what the followers printed and Qwen's own answer."""
    home, work = scratch / "home", scratch / "w"
    work.mkdir(parents=True)
    home.mkdir()
    (scratch / "script.json").write_text(json.dumps(SCRIPT))
    port = _free_port()
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    env.pop("QWEN_HOME", None)
    model = subprocess.Popen([sys.executable, str(FAKE_LLM), str(port), str(scratch / "script.json"),
                              str(scratch / "llm.log")])
    followers = []
    try:
        time.sleep(0.5)
        started = time.monotonic()
        client = subprocess.Popen(_qwen(["-p", "go", "--chat-recording"], cwd=work, env=env, port=port),
                                  cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        recording = _wait_for_recording(home, client)
        for mode in (["--json"], ["--no-tui"]):
            out = open(scratch / f"follow{mode[0]}.out", "w")
            followers.append((mode[0], out, subprocess.Popen(
                [sys.executable, "-m", "doctor", "memory", "--follow", *mode],
                cwd=work, env=env, stdout=out, stderr=subprocess.PIPE, text=True)))
        client_output = client.communicate(timeout=300)[0].decode(errors="replace")
        client_seconds = time.monotonic() - started
        time.sleep(2.0)  # a few polls after the last write
    finally:
        for _, out, follower in followers:
            follower.send_signal(signal.SIGINT)
            follower.wait(timeout=30)
            out.close()
    try:
        answer = subprocess.run(
            _qwen(["--resume", recording.stem, "-p", "/doctor memory --json"], cwd=work, env=env, port=port),
            cwd=work, env=env, capture_output=True, text=True, timeout=300, check=False)
    finally:
        model.terminate()
        model.wait()
    qwen = json.loads(answer.stdout[answer.stdout.index("{"):])["toolResultRetention"]
    json_lines = (scratch / "follow--json.out").read_text().splitlines()
    return {
        "recording": recording,
        "client_seconds": client_seconds,
        "client_output": client_output,
        "followed": [json.loads(line) for line in json_lines],
        "text_lines": (scratch / "follow--no-tui.out").read_text().splitlines(),
        "qwen": qwen,
    }


def check(result: dict) -> list[str]:
    """What the run proves, as lines; raises AssertionError when it does not hold."""
    followed = result["followed"]
    counts = [report["toolResultRetention"]["toolResultCount"] for report in followed]
    last = {key: followed[-1]["toolResultRetention"][key] for key in RETENTION_KEYS}
    qwen = {key: result["qwen"][key] for key in RETENTION_KEYS}
    assert len(followed) >= 3, f"only {len(followed)} updates while Qwen wrote the file"
    assert counts == sorted(counts) and counts[-1] > counts[0], counts
    assert last == qwen, (last, qwen)
    assert len(result["text_lines"]) >= 3 and "tool results" in result["text_lines"][-1]
    return [
        f"Qwen Code 0.24.4 ran for {result['client_seconds']:.1f} s writing {result['recording'].name}",
        f"doctor memory --follow --json printed {len(followed)} updates; tool results seen: {counts}",
        f"last followed counters: {last}",
        f"Qwen's own /doctor memory --json (--resume): {qwen}",
        "doctor memory --follow --no-tui printed:",
        *(f"  {line}" for line in result["text_lines"]),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="also write the evidence to this file")
    args = parser.parse_args()
    if (why := missing()) is not None:
        print(f"skipped: {why}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="follow-qwen-") as scratch:
        lines = check(run(Path(scratch)))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
