"""A generated triage corpus for bench_scan.py: thousands of sessions of every agent, grown from the real recordings.

Every template is a file the repository holds (tests/recordings and tests/fixtures/public:
Qwen Code, Claude Code, Codex, Gemini CLI JSONL and legacy JSON, API request dumps). A
generated session is its template repeated until it reaches a drawn size (log-uniform, so most
files are small and a few are large), each copy with its own ids: every value of an id key
(uuid, parentUuid, call_id, tool_use_id, message and Gemini ids…) gets a per-copy variant of the
same length, the session id a fresh per-file one, and a parent chain (Qwen, Claude) runs on from
one copy into the next. JSONL keeps its metadata lines once (Codex `session_meta`, Gemini's
metadata line and first `$set`); a JSON document (Gemini legacy, request dumps) grows its message
list. Beside them: `doctor memory --json --results` reports of the templates (pasted reports) and
a few corrupt files (binary, empty, a broken archive, JSON that is no session, a torn last line).

The corpus lives under /tmp and is never committed; `manifest.json` says what it holds.
"""

from __future__ import annotations

import json
import math
import random
import re
import shutil
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = ROOT / "tests" / "recordings"
FIXTURES = ROOT / "tests" / "fixtures" / "public"
GENERATOR = 1  # bump when the corpus changes shape: an older corpus is rebuilt

ID_KEYS = frozenset({"id", "uuid", "parentUuid", "call_id", "callId", "tool_use_id", "tool_call_id", "promptId",
                     "sourceToolAssistantUUID", "messageId", "leafUuid", "toolUseID", "parentToolUseID"})
MESSAGE_LISTS = ("messages", "contents", "input")  # a JSON document's list that grows
# share of the session files per agent (templates of that agent are drawn uniformly)
AGENT_SHARES = {"qwen": 0.30, "claude": 0.30, "codex": 0.15, "gemini": 0.18, "dump": 0.07}


def templates() -> dict[str, list[Path]]:
    """The real session files of each agent that the corpus is grown from."""
    found = {
        "qwen": sorted(RECORDINGS.glob("qwen/*/session.jsonl")),
        "claude": sorted(RECORDINGS.glob("claude/*/home/.claude/projects/*/*.jsonl"))
        + sorted(FIXTURES.glob("claude-code/*.jsonl")),
        "codex": sorted(RECORDINGS.glob("codex/*/home/.codex/sessions/*/*/*/rollout-*.jsonl"))
        + sorted(FIXTURES.glob("codex/*.jsonl")),
        "gemini": sorted(RECORDINGS.glob("gemini/*/home/.gemini/tmp/*/chats/*.jsonl"))
        + sorted(FIXTURES.glob("gemini-cli/*.json")),
        "dump": sorted(p for p in RECORDINGS.glob("dumps/*") if p.suffix in (".json", ".jsonl")
                       and p.name != "expected.json"),
    }
    return found


def _ids(value, found: set[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ID_KEYS and isinstance(item, str) and len(item) >= 8:
                found.add(item)
            _ids(item, found)
    elif isinstance(value, list):
        for item in value:
            _ids(item, found)


class Pieces:
    """A text cut around its id occurrences, so a renamed copy is one join (no regex per copy)."""

    def __init__(self, text: str, ids: list[str]):
        self.parts: list[str] = []
        self.slots: list[int] = []  # index into ids of each gap between parts
        if not ids:
            self.parts = [text]
            return
        pattern = re.compile("|".join(map(re.escape, sorted(ids, key=len, reverse=True))))
        index = {value: i for i, value in enumerate(ids)}
        at = 0
        for match in pattern.finditer(text):
            self.parts.append(text[at:match.start()])
            self.slots.append(index[match.group()])
            at = match.end()
        self.parts.append(text[at:])

    def render(self, names: list[str]) -> str:
        out = [self.parts[0]]
        for slot, part in zip(self.slots, self.parts[1:]):
            out.append(names[slot])
            out.append(part)
        return "".join(out)


def _variant(value: str, copy: int) -> str:
    """Same length, different per copy (copy 0 keeps the original)."""
    if copy == 0:
        return value
    tag = f"{copy:x}"
    return value[: len(value) - len(tag) - 1] + "z" + tag if len(value) > len(tag) + 4 else value + tag


@dataclass
class Template:
    agent: str
    path: Path
    session_id: str | None
    head: str  # written once (JSONL metadata lines; a document's text before its list)
    body: Pieces  # repeated, renamed per copy
    tail: str  # written once after the copies (a document's text after its list)
    separator: str  # between copies
    ids: list[str]
    chain: tuple[str, str] | None  # (first parentUuid null marker, last uuid) when copies are chained

    @property
    def copy_bytes(self) -> int:
        return len(self.body.render(self.ids).encode())

    def write(self, target: Path, size: int, session_id: str) -> int:
        """Copies of the body until `target` holds at least `size` bytes (one at least); returns the bytes."""
        target.parent.mkdir(parents=True, exist_ok=True)
        copies = max(1, math.ceil((size - len(self.head) - len(self.tail)) / max(self.copy_bytes, 1)))
        rename = self.session_id
        with open(target, "w", encoding="utf-8", newline="") as out:
            out.write(self._fresh(self.head, rename, session_id))
            previous_last = None
            for copy in range(copies):
                names = [_variant(value, copy) for value in self.ids]
                text = self.body.render(names)
                if self.chain and previous_last is not None:
                    text = text.replace(self.chain[0], f'"parentUuid":"{previous_last}"', 1)
                if self.chain:
                    previous_last = names[self.ids.index(self.chain[1])]
                if copy:
                    out.write(self.separator)
                out.write(self._fresh(text, rename, session_id))
            out.write(self._fresh(self.tail, rename, session_id))
        return target.stat().st_size

    @staticmethod
    def _fresh(text: str, old: str | None, new: str) -> str:
        return text.replace(old, new) if old else text


def load_template(agent: str, path: Path) -> Template:
    from doctor.sources.registry import open_session

    session_id = open_session(path).session_id
    text = path.read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if isinstance(document, dict):
        return _document_template(agent, path, session_id, document)
    lines = text.splitlines(keepends=True)
    records = [json.loads(line) for line in lines]
    keep = 0
    if agent == "codex" and records and records[0].get("type") == "session_meta":
        keep = 1
    elif agent == "gemini":
        keep = next((i + 1 for i, r in enumerate(records) if isinstance(r.get("$set"), dict)
                     and "messages" in r["$set"]), 1)
    found: set[str] = set()
    for record in records[keep:]:
        _ids(record, found)
    found.discard(session_id)
    ids = sorted(found)
    body = "".join(lines[keep:])
    if not body.endswith("\n"):
        body += "\n"
    chain = None
    body_records = records[keep:]
    if body_records and "parentUuid" in body_records[0] and body_records[0]["parentUuid"] is None:
        last = next((r["uuid"] for r in reversed(body_records) if isinstance(r.get("uuid"), str)), None)
        marker = '"parentUuid":null'
        if last in found and marker in body:
            chain = (marker, last)
    return Template(agent, path, session_id, "".join(lines[:keep]), Pieces(body, ids), "", "", ids, chain)


def _document_template(agent: str, path: Path, session_id: str | None, document: dict) -> Template:
    key = next(k for k in MESSAGE_LISTS if isinstance(document.get(k), list))
    items = document[key]
    indent = 2 if agent == "gemini" else None  # the CLI pretty-prints its ConversationRecord
    shell = json.dumps({**document, key: ["\0BODY\0"]}, indent=indent, ensure_ascii=False)
    head, tail = shell.split('"\\u0000BODY\\u0000"')
    separator = ",\n" if indent else ", "
    found: set[str] = set()
    _ids(items, found)
    found.discard(session_id)
    ids = sorted(found)
    body = separator.join(json.dumps(item, indent=indent, ensure_ascii=False) for item in items)
    return Template(agent, path, session_id, head, Pieces(body, ids), tail, separator, ids, None)


def _suffix(template: Template) -> str:
    return template.path.name if template.agent == "qwen" else template.path.name.replace(
        template.session_id or "\0", "S")


def _write_reports(folder: Path, sources: list[Path], copies: int) -> list[dict]:
    """`doctor memory --json --results` of each template, as a user would paste it."""
    from doctor.cli import main

    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for n, source in enumerate(sources):
        first = folder / f"report-{n:03d}-0.json"
        code = main(["memory", str(source), "--json", "--results", "-o", str(first)])
        if code not in (0, 3) or not first.exists():
            continue
        for copy in range(1, copies):
            shutil.copy(first, folder / f"report-{n:03d}-{copy}.json")
        entries += [{"kind": "report", "path": str(folder / f"report-{n:03d}-{c}.json"),
                     "bytes": first.stat().st_size} for c in range(copies)]
    return entries


def _write_corrupt(folder: Path, qwen: Path) -> list[dict]:
    folder.mkdir(parents=True, exist_ok=True)
    cases = {
        "binary.jsonl": bytes(range(256)) * 64,
        "empty.json": b"",
        "not-a-session.json": b'{"hello": "world", "items": [1, 2, 3]}\n',
        "broken.tar.gz": b"\x1f\x8b\x08\x00 truncated gzip header",
        "broken.zip": b"PK\x03\x04 not really a zip",
        "meta.json": (RECORDINGS / "qwen" / "unicode" / "meta.json").read_bytes(),
    }
    data = qwen.read_bytes()
    cases["torn.jsonl"] = data[: len(data) // 2 + 17]  # a session whose last line was cut mid-write
    cases["bad-utf8.jsonl"] = data[: len(data) // 3] + b'{"type":"user","message":"\xff\xfe"}\n' + data[len(data) // 3:]
    entries = []
    for name, content in cases.items():
        (folder / name).write_bytes(content)
        entries.append({"kind": "corrupt", "path": str(folder / name), "bytes": len(content)})
    return entries


def build(root: Path, sessions: int, total_bytes: int, seed: int = 14, report_copies: int = 5) -> dict:
    """Write the corpus under `root` (removed first) and return its manifest."""
    if root.exists():
        shutil.rmtree(root)
    corpus = root / "corpus"
    rng = random.Random(seed)
    loaded = {agent: [load_template(agent, path) for path in paths] for agent, paths in templates().items()}
    agents = list(AGENT_SHARES)
    picks = rng.choices(agents, weights=[AGENT_SHARES[a] for a in agents], k=sessions)
    low, high = math.log(8_000), math.log(8_000_000)
    sizes = [math.exp(rng.uniform(low, high)) for _ in range(sessions)]
    scale = max(1.0, total_bytes * 1.03 / sum(sizes))  # a few percent over: copies are whole
    entries = []
    for n, (agent, size) in enumerate(zip(picks, sizes)):
        template = rng.choice(loaded[agent])
        target = corpus / agent / f"{n // 100:02d}" / f"{n:05d}-{_suffix(template)}"
        written = template.write(target, int(size * scale), str(uuid.UUID(int=rng.getrandbits(128))))
        entries.append({"kind": "session", "agent": agent, "template": str(template.path.relative_to(ROOT)),
                        "path": str(target), "bytes": written})
    report_sources = [paths[0] for paths in templates().values()] + templates()["qwen"][1:8]
    entries += _write_reports(corpus / "reports", report_sources, report_copies)
    entries += _write_corrupt(corpus / "corrupt", templates()["qwen"][0])
    manifest = {"generator": GENERATOR, "seed": seed, "sessions": sessions, "files": entries,
                "bytes": sum(e["bytes"] for e in entries)}
    (root / "manifest.json").write_text(json.dumps(manifest))
    return manifest


def existing(root: Path, sessions: int, total_bytes: int) -> dict | None:
    """The manifest of a corpus already built with these settings, if its files are all there."""
    try:
        manifest = json.loads((root / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    if manifest.get("generator") != GENERATOR or manifest.get("sessions") != sessions:
        return None
    if manifest["bytes"] < total_bytes or not all(Path(e["path"]).exists() for e in manifest["files"]):
        return None
    return manifest


if __name__ == "__main__":
    built = build(Path(sys.argv[1]), int(sys.argv[2]), int(float(sys.argv[3])))
    print(len(built["files"]), built["bytes"])
