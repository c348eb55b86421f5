"""A small but real Python agent host with `/doctor memory` wired in.

    python examples/agent_host/host.py [--script script.json] [--workdir DIR]

Type a prompt to run one agent turn (the scripted model calls real tools), or a
slash command: /help, /history, /doctor memory [--json] [--sample] [--snapshot],
/quit. On a terminal, plain `/doctor memory` opens the doctor TUI over the live
history; `q` returns to this prompt.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parents[1]))  # run from a checkout without installing doctor

from model import ScriptedModel
from tools import SHELL_BUDGET, ToolBox

import doctor
import doctor.slash


class Host:
    """The agent loop and the REPL's command dispatch."""

    def __init__(self, model: ScriptedModel, toolbox: ToolBox, *, out=sys.stdout, interactive: bool = False):
        self.model = model
        self.toolbox = toolbox
        self.out = out
        self.interactive = interactive
        self.history: list[dict] = []
        self.doctor = doctor.attach(self.history, tools={"run_shell_command": SHELL_BUDGET},
                                    spill_roots=[toolbox.spill_dir])
        self.running = True
        self.commands: dict[str, Callable[[str], None]] = {
            "/help": self.help,
            "/history": self.show_history,
            "/doctor": self.doctor_command,
            "/quit": self.quit,
        }

    def dispatch(self, line: str) -> None:
        """One line typed at the prompt: a slash command or a prompt for the model."""
        line = line.strip()
        if not line:
            return
        if line.startswith("/"):
            command = self.commands.get(line.split()[0])
            if command is None:
                self.say(f"Unknown command {line.split()[0]}; /help lists them.", "error")
            else:
                command(line)
            return
        self.run_turn(line)

    def doctor_command(self, line: str) -> None:
        result = doctor.slash.handle(line, self.doctor, interactive=self.interactive)
        self.say(result.text, result.kind)

    def run_turn(self, prompt: str) -> None:
        self.history.append({"role": "user", "parts": [{"text": prompt}]})
        while True:
            reply = self.model.respond(self.history)
            self.history.append(reply)
            calls = [part["functionCall"] for part in reply["parts"] if "functionCall" in part]
            if not calls:
                self.say(reply["parts"][0]["text"])
                return
            self.history.append({"role": "user", "parts": [self._call(call) for call in calls]})

    def _call(self, call: dict) -> dict:
        text, is_error = self.toolbox.run(call["name"], call["args"], call["id"])
        self.say(f"  ⚙ {call['name']} → {len(text):,} chars", "info")
        response = {"error": text} if is_error else {"output": text}
        return {"functionResponse": {"id": call["id"], "name": call["name"], "response": response}}

    def help(self, _line: str) -> None:
        self.say("Commands: /help, /history, /doctor memory [--json] [--sample] [--snapshot], /quit. "
                 "Anything else is a prompt for the model.")

    def show_history(self, _line: str) -> None:
        self.say(f"{len(self.history)} Contents in the history.")

    def quit(self, _line: str) -> None:
        self.running = False

    def say(self, text: str, kind: str = "info") -> None:
        prefix = {"warning": "[warning] ", "error": "[error] "}.get(kind, "")
        print(prefix + text, file=self.out, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", type=Path, default=HERE / "script.json")
    parser.add_argument("--workdir", type=Path, help="where the tools run (default: a new temporary directory)")
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="agent-host-"))
    toolbox = ToolBox(workdir=workdir, spill_dir=workdir / ".spill")
    host = Host(ScriptedModel.from_file(args.script), toolbox, interactive=sys.stdin.isatty() and sys.stdout.isatty())
    host.say(f"agent host in {workdir} — /help for commands")
    while host.running:
        try:
            line = input("> ")
        except EOFError:
            break
        host.dispatch(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
