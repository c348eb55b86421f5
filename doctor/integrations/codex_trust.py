"""`doctor install codex --trust`: Codex itself records the user's trust in doctor's hook, and in nothing else.

Codex (0.171) runs a new or changed command hook only once the user trusted it (`/hooks` in its TUI;
`codex exec` skips an untrusted hook without a word). It keeps that trust in the user's config.toml,
`[hooks.state."<hooks.json>:<event>:<group>:<handler>"] trusted_hash = "sha256:…"`, a hash of the
hook's definition that Codex computes and does not publish as a contract (openai/codex#21615). So
doctor does not compute it: it does what the TUI's "Trust" does, through Codex's own app server
(`codex app-server`, JSON-RPC on stdio, its protocol described by `codex app-server
generate-json-schema`). `hooks/list` gives each hook its key, its current hash and its trust status;
`config/batchWrite` stores a trusted hash with Codex's own config writer, which keeps comments and
every other key. Only the hooks doctor installed are trusted: command `<doctor> hook codex` (or its
`--tell-model` form), from the hooks.json doctor wrote, not managed. Around the write, as for every
settings file doctor changes: a config.toml that does not parse is refused before anything is
written, it is backed up first, and afterwards it must hold every key it held before (else the
backup goes back and install says so).
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import threading
from pathlib import Path

from doctor import __version__
from doctor.integrations.files import Refused, back_up, read_settings, restore
from doctor.integrations.plans import Location, is_hook_command
from doctor.sources.discovery import CODEX, agent_homes

TIMEOUT_SECONDS = 60  # for the whole conversation with the app server


class TrustFailed(Exception):
    """Codex could not be asked, or did not record the trust; nothing of doctor's is trusted."""


class CodexTrust:
    """Trust for doctor's hooks in one install location; `check` before writing anything, `apply` after."""

    def __init__(self, location: Location):
        home = agent_homes(location.env)[CODEX]
        self.hooks_file = location.base(home, ".codex") / "hooks.json"
        self.config = home / "config.toml"  # where Codex keeps every hook's trust, a project's too
        self.location = location
        self.binary = shutil.which("codex", path=location.env.get("PATH"))

    def check(self) -> None:
        """Refuse now, before the install writes anything: no Codex to ask, or a config.toml that does not parse."""
        if self.binary is None:
            raise TrustFailed("`codex` is not on PATH; trust doctor's hook with /hooks in Codex instead")
        _parsed(self.config, read_settings(self.config)[0])

    def apply(self) -> str:
        """Trust doctor's hooks; the line install prints."""
        before, found = read_settings(self.config)
        parsed = _parsed(self.config, before)
        with _AppServer(self.binary, self.location) as server:
            ours = self._doctors_hooks(server)
            untrusted = {hook["key"]: hook["currentHash"] for hook in ours if hook["trustStatus"] != "trusted"}
            events = ", ".join(sorted(_event_name(hook) for hook in ours))
            if not untrusted:
                return f"trusted   {self.config}: doctor's hook ({events}) already trusted, nothing changed"
            backup = back_up(self.config, found) if before is not None else None
            server.call("config/batchWrite", {"edits": [{
                "keyPath": "hooks.state", "mergeStrategy": "upsert",
                "value": {key: {"trusted_hash": digest} for key, digest in untrusted.items()}}]})
            after = read_settings(self.config)[0]
            written = _parsed(self.config, after)
            if _without(written, untrusted) != _without(parsed, untrusted) or _fields_lost(parsed, written, untrusted):
                if before is not None:
                    restore(self.config, before)
                raise TrustFailed(f"{self.config}: Codex's write changed other keys; put back as it was")
            still = [hook["key"] for hook in self._doctors_hooks(server) if hook["trustStatus"] != "trusted"]
            if still:
                raise TrustFailed(f"Codex still lists {', '.join(still)} as not trusted")
        return f"trusted   {self.config}: doctor's hook ({events})" + (f" (backup: {backup.name})" if backup else "")

    def _doctors_hooks(self, server: _AppServer) -> list[dict]:
        listed = server.call("hooks/list", {"cwds": [str(self.location.project)]})
        hooks = [hook for entry in listed.get("data") or () for hook in entry.get("hooks") or ()
                 if isinstance(hook, dict) and hook.get("handlerType") == "command" and is_hook_command(hook.get("command"), "codex")
                 and hook.get("sourcePath") == str(self.hooks_file) and not hook.get("isManaged")
                 and isinstance(hook.get("key"), str) and isinstance(hook.get("currentHash"), str)]
        if not hooks:
            raise TrustFailed(f"Codex does not list doctor's hook from {self.hooks_file}"
                              + (" (a project's hooks load only once Codex trusts the folder)"
                                 if self.hooks_file.parent.parent == self.location.project else ""))
        return hooks


def _event_name(hook: dict) -> str:
    """`userPromptSubmit` -> `UserPromptSubmit`, as hooks.json names the event."""
    name = str(hook.get("eventName") or "")
    return name[:1].upper() + name[1:]


def _parsed(path: Path, text: str | None) -> dict:
    import tomllib

    try:
        return tomllib.loads(text) if text is not None else {}
    except tomllib.TOMLDecodeError as exc:
        raise Refused(path, f"not valid TOML ({exc}); fix it or move it away first") from None


def _trust_entries(config: dict) -> dict:
    """`hooks.state` of a parsed config.toml: each hook's trust entry by key ({} when there is none)."""
    hooks = config.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return state if isinstance(state, dict) else {}


def _fields_lost(before: dict, after: dict, keys: dict) -> list[str]:
    """The fields besides `trusted_hash` that these hooks' trust entries held before (a user's
    `enabled = false`, say) and no longer hold as they were: `_without` leaves the entries out whole."""
    old, new = _trust_entries(before), _trust_entries(after)
    return [f"{key}.{name}" for key in keys if isinstance(old.get(key), dict) for name, value in old[key].items()
            if name != "trusted_hash" and (not isinstance(new.get(key), dict) or new[key].get(name, _ABSENT) != value)]


_ABSENT = object()


def _without(config: dict, keys: dict) -> dict:
    """`config` without these trust entries (and the tables they alone made), to compare the rest."""
    rest = copy.deepcopy(config)
    hooks = rest.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    if isinstance(state, dict):
        for key in keys:
            state.pop(key, None)
        if not state:
            del hooks["state"]
        if not hooks:
            del rest["hooks"]
    return rest


class _AppServer:
    """`codex app-server` on stdio for the length of a `with`: JSON-RPC requests one at a time."""

    def __init__(self, binary: str, location: Location):
        try:
            self.process = subprocess.Popen([binary, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, env=dict(location.env), cwd=location.project,
                                            text=True, encoding="utf-8")
        except OSError as exc:
            raise TrustFailed(f"could not start {binary} app-server: {exc.strerror or exc}") from None
        # A daemon: a timer still waiting must not hold the process open at exit.
        self.watchdog = threading.Timer(TIMEOUT_SECONDS, self.process.kill)
        self.watchdog.daemon = True
        self.next_id = 0

    def __enter__(self) -> _AppServer:
        self.watchdog.start()
        try:
            self.call("initialize", {"clientInfo": {"name": "doctor", "title": "doctor install", "version": __version__}})
            self._send({"method": "initialized"})
        except BaseException:
            self.__exit__()  # `with` does not call it when entering fails
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.watchdog.cancel()
        self.watchdog.join()  # cancel only wakes the timer's thread; wait until it has ended
        try:
            self.process.stdin.close()
            self.process.wait(10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()

    def call(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self._send({"id": self.next_id, "method": method, "params": params})
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise TrustFailed(f"codex app-server ended before answering {method}")
            try:
                message = json.loads(line)
            except ValueError:
                continue  # not a protocol line
            if not isinstance(message, dict) or message.get("id") != self.next_id:
                continue  # a notification (config warnings, status), or another answer
            if "error" in message:
                error = message["error"] if isinstance(message["error"], dict) else {}
                raise TrustFailed(f"codex app-server refused {method}: {error.get('message') or message['error']}")
            result = message.get("result")
            return result if isinstance(result, dict) else {}

    def _send(self, message: dict) -> None:
        try:
            self.process.stdin.write(json.dumps(message) + "\n")
            self.process.stdin.flush()
        except OSError as exc:
            raise TrustFailed(f"codex app-server is not reading: {exc.strerror or exc}") from None
