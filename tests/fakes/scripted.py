"""What every scripted model server shares: the script, the request log, the loopback HTTP plumbing.

A real agent client is pointed at one of these servers instead of its provider. Each request of the
client's main loop (one that offers the agent's tools) receives the next scripted step: a batch of tool
calls, which the client then really runs, or a final text. Side requests (titles, routing, summaries)
get a short answer and do not advance the script. So the client records a real session on disk, with
real tool outputs, and the test knows exactly what the "model" asked for.

Every request body is appended to `<LOG>.bodies` as `<path>\\t<body>` so that a test can check what
reached the model; `<LOG>` gets one JSON summary line per request.

Script format: {"steps": [[{"name": TOOL, "args": {...}}, ...], {"text": T, "calls": [...]}, "final text"]}
("input" is accepted for "args"; "namespace" names a Responses API tool namespace; a call's "id", when
given, is the call id the client gets, so that recordings of one script are comparable call by call).
"sideFail": [SUBSTRING, ...] answers a side request whose body contains one of them with HTTP 400 (a
summarizer that fails, so the client falls back to the raw text). The string "{{SPILL}}" inside a step is replaced by the last spill
path the client mentioned in its request, so a step can page into the file the client just wrote.
A step {"quote": [FROM, THROUGH]} answers, as a model that shows a text "as it is" would, with the
request's last text that holds FROM, from there to the end of the first line after it that holds
THROUGH (without THROUGH: to the first empty line; "(nothing to quote)" when FROM is nowhere).
Each protocol module defines how to tell the main loop apart, how to find spill paths, and how to
answer; `serve(protocol)` runs it: `python <protocol module> PORT SCRIPT.json [LOG]`.
"""

import json
import re
import sys
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


@dataclass
class Step:
    """One scripted answer: optional text, then tool calls (none: a final answer)."""

    text: str | None
    calls: list[dict] = field(default_factory=list)

    @classmethod
    def parse(cls, raw) -> "Step":
        if isinstance(raw, str):
            return cls(raw)
        if isinstance(raw, dict):
            return cls(raw.get("text"), [_call(c) for c in raw.get("calls", [])])
        return cls(None, [_call(c) for c in raw])


def _call(raw: dict) -> dict:
    """A call's name and arguments, the tool namespace it belongs to when it has one (Codex puts an MCP
    server's tools in a `mcp__<server>` namespace of the Responses API), and the call id the script fixes."""
    call = {"name": raw["name"], "args": raw.get("args", raw.get("input", {}))}
    if raw.get("namespace"):
        call["namespace"] = raw["namespace"]
    if "id" in raw:
        call["id"] = raw["id"]
    return call


def new_id(prefix: str, digits: int = 24) -> str:
    return prefix + uuid.uuid4().hex[:digits]


@dataclass
class Protocol:
    """How one provider API looks to the server."""

    is_main_loop: Callable[[str, dict], bool]  # (path, body) -> does this request advance the script?
    spill_pattern: str | None  # regex whose group 1 is a spill path the client announced
    answer: Callable[["Handler", str, dict, Step, bytes], None]  # writes the HTTP response
    side_text: str = "ok"
    get_answer: dict = field(default_factory=dict)  # body of every GET


class Script:
    """The steps and where the conversation is; one per server, shared by its handler threads."""

    def __init__(self, steps: list, side_fail: list[str] | None = None):
        self._steps = steps
        self.side_fail = [needle.encode() for needle in side_fail or ()]
        self._next = 0
        self._lock = threading.Lock()

    def take(self) -> tuple[int, object]:
        with self._lock:
            index = self._next
            self._next += 1
        return index, self._steps[index] if index < len(self._steps) else "Done."


class Handler(BaseHTTPRequestHandler):
    """Logs each request, picks the step and lets the protocol answer."""

    protocol_version = "HTTP/1.1"
    protocol: Protocol
    script: Script
    log_path: str

    def log_message(self, *args):  # keep the client's terminal quiet
        pass

    def send_json(self, obj, code: int = 200) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_events(self) -> None:
        """Begin a server-sent-events answer; the connection closes when it ends."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def send_event(self, data, event: str | None = None, end: str = "\n\n") -> None:
        head = f"event: {event}\n" if event else ""
        self.wfile.write(f"{head}data: {json.dumps(data) if not isinstance(data, str) else data}{end}".encode())

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self):
        self._log({"method": "GET", "path": self.path})
        self.send_json(self.protocol.get_answer)

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}"
        with open(self.log_path + ".bodies", "ab") as bodies:
            bodies.write(self.path.encode() + b"\t" + raw + b"\n")
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        main = self.protocol.is_main_loop(self.path, body)
        if not main and any(needle in raw for needle in self.script.side_fail):
            self._log({"method": "POST", "path": self.path, "main": False, "bytes": len(raw), "failed": True})
            self.send_json({"error": {"message": "scripted side-request failure", "type": "invalid_request_error"}}, 400)
            return
        index, step = self.script.take() if main else (None, self.protocol.side_text)
        self._log({"method": "POST", "path": self.path, "main": main, "bytes": len(raw), "step": index})
        if isinstance(step, dict) and "quote" in step:
            step = quoted(body, *step["quote"])
        self.protocol.answer(self, self.path, body, Step.parse(self._with_spill(step, raw)), raw)
        self.wfile.flush()

    def _with_spill(self, step, raw: bytes):
        if isinstance(step, str) or not self.protocol.spill_pattern:
            return step
        spills = re.findall(self.protocol.spill_pattern, raw.decode("utf-8", "replace"))
        if not spills:
            return step
        return json.loads(json.dumps(step).replace("{{SPILL}}", spills[-1].rstrip(".")))

    def _log(self, entry: dict) -> None:
        with open(self.log_path, "a") as log:
            log.write(json.dumps(entry) + "\n")


def quoted(body, start: str, through: str) -> str:
    """The last string in `body` holding `start`, from there to the end of the line holding `through` (or the
    first empty line)."""
    texts = [text for text in _strings(body) if start in text]
    if not texts:
        return "(nothing to quote)"
    text = texts[-1][texts[-1].index(start):]
    end = text.find(through)
    if end < 0:
        return text.split("\n\n", 1)[0].rstrip()
    line_end = text.find("\n", end)
    return text if line_end < 0 else text[:line_end]


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def serve(protocol: Protocol, argv: list[str] | None = None) -> None:
    """`PORT SCRIPT.json [LOG]`: answer on 127.0.0.1:PORT until killed."""
    args = sys.argv[1:] if argv is None else argv
    port, script_path = int(args[0]), args[1]
    log_path = args[2] if len(args) > 2 else f"/tmp/scripted-model-{port}.log"
    with open(script_path) as f:
        script = json.load(f)
    handler = type("BoundHandler", (Handler,), {"protocol": protocol, "script": Script(script["steps"], script.get("sideFail")),
                                                "log_path": log_path})
    ThreadingHTTPServer(("127.0.0.1", port), handler).serve_forever()
