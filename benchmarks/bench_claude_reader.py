"""Claude reader speed and memory on a 100 MB session, beside the bare msgspec baseline.

The session is synthesised from the real big-outputs recording (Claude Code
2.1.332): its records are repeated with fresh uuids, message ids and tool_use
ids until the file reaches the target size, so the shapes (prompt snapshots,
30 KB toolUseResult copies, persisted stubs, api-request copies) are the
client's own. Tool outputs (tool_result contents and the toolUseResult copies'
stdout, stderr and file content) are replaced by shell-like text of the same
length (`realistic_text` of bench_qwen_reader: newlines, tabs, quotes,
backslashes, ANSI colours, some accented, CJK and astral characters);
persisted-output stubs are kept as the client wrote them. Written compactly
with ensure_ascii=False, as Node's JSON.stringify does.

Measured by benchmarks/reader_bench.py (interleaved fresh subprocesses, medians).
Usage: python benchmarks/bench_claude_reader.py [--mb 100] [--repeat 7] [--keep PATH] [--pure]
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_qwen_reader import _Texts  # noqa: E402  the same realistic text for every agent's benchmark
from reader_bench import ROOT, bench_main  # noqa: E402

SOURCE = next((ROOT / "tests/recordings/claude/big-outputs/home/.claude/projects").glob("*/*.jsonl"))
ID_KEYS = ("uuid", "parentUuid", "sourceToolAssistantUUID", "promptId")
STUB = "<persisted-output>"
OUTPUT_FIELDS = ("stdout", "stderr", "content")


def _text(value: object, texts: _Texts) -> object:
    if isinstance(value, str) and len(value) > 64 and not value.startswith(STUB):
        return texts.take(len(value))
    return value


def realistic(record: dict, texts: _Texts) -> dict:
    """The record with its tool outputs replaced by realistic text of the same lengths."""
    message = record.get("message")
    if record.get("type") == "user" and isinstance(message, dict) and isinstance(message.get("content"), list):
        blocks = []
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                if isinstance(content, list):
                    content = [dict(item, text=_text(item["text"], texts)) if isinstance(item, dict) and "text" in item else item
                               for item in content]
                block = dict(block, content=_text(content, texts))
            blocks.append(block)
        record = dict(record, message=dict(message, content=blocks))
    result = record.get("toolUseResult")
    if isinstance(result, dict):
        result = {key: _text(value, texts) if key in OUTPUT_FIELDS else value for key, value in result.items()}
        if isinstance(result.get("file"), dict):
            result["file"] = {key: _text(value, texts) if key == "content" else value for key, value in result["file"].items()}
        record = dict(record, toolUseResult=result)
    return record


def _ids(records: list[dict]) -> list[str]:
    ids: set[str] = set()
    for record in records:
        ids.update(record[key] for key in ID_KEYS if isinstance(record.get(key), str))
        message = record.get("message")
        if isinstance(message, dict):
            if isinstance(message.get("id"), str):
                ids.add(message["id"])
            for block in message.get("content") if isinstance(message.get("content"), list) else ():
                if isinstance(block, dict):
                    ids.update(block[key] for key in ("id", "tool_use_id") if isinstance(block.get(key), str))
    return sorted(ids, key=len, reverse=True)


def copies() -> Iterator[str]:
    """Endless copies of the recording as text: realistic outputs, fresh ids in each copy."""
    records = [json.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines()]
    ids = _ids(records)
    texts = _Texts()
    for number in itertools.count():
        lines = [json.dumps(realistic(record, texts), ensure_ascii=False, separators=(",", ":")) for record in records]
        chunk = "\n".join(lines) + "\n"
        for original in ids:
            chunk = chunk.replace(original, f"{original[:-6]}{number:06d}")
        yield chunk


def synthesise(target: Path, megabytes: int, chunks: Iterator[str] | None = None) -> int:
    """Repeat the recording's records, realistic outputs, new ids, until `target` holds `megabytes` MB.
    `chunks`: go on with these copies (bench_statusline appends the next one as one more turn)."""
    chunks = chunks or copies()
    written = count = 0
    with open(target, "w", encoding="utf-8") as handle:
        while written < megabytes * 1_000_000:
            chunk = next(chunks)
            handle.write(chunk)
            written += len(chunk.encode())
            count += 1
    return count


if __name__ == "__main__":
    bench_main(__doc__.splitlines()[0], synthesise, SOURCE, "synthetic-session.jsonl")
