"""Gemini CLI reader speed and memory on a 100 MB session, beside the bare msgspec baseline.

The session is synthesised from the real big-outputs recording (Gemini CLI
0.61.0, JSON Lines): its message records are repeated with fresh message and
call ids until the file reaches the target size (the metadata line once;
`$set` records that replace every message only in the first copy, so the later
copies add up as a long session does). Tool outputs (`toolCalls[].resultDisplay`,
`toolCalls[].result` and the user messages' functionResponse outputs) are
replaced by shell-like text of the same length (`realistic_text` of
bench_qwen_reader). `--format json` writes the legacy single document instead
(`{metadata…, messages: [the final messages]}`, pretty-printed as the CLI wrote
it); its baseline is one msgspec decode of the whole file.

Measured by benchmarks/reader_bench.py (interleaved fresh subprocesses, medians).
Usage: python benchmarks/bench_gemini_reader.py [--mb 100] [--repeat 7] [--format jsonl|json] [--keep PATH] [--pure]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_qwen_reader import _Texts  # noqa: E402  the same realistic text for every agent's benchmark
from reader_bench import ROOT, compare, tree_mode  # noqa: E402

SOURCE = next((ROOT / "tests/recordings/gemini/big-outputs/home/.gemini/tmp").glob("*/chats/session-*.jsonl"))
OUTPUT_KEYS = frozenset({"resultDisplay", "output"})
_IDS = re.compile(r'"id":"([^"]{16,})"')


def realistic(value: object, texts: _Texts, key: str | None = None) -> object:
    """`value` with its tool outputs (strings longer than 64 under OUTPUT_KEYS) replaced."""
    if isinstance(value, str):
        return texts.take(len(value)) if key in OUTPUT_KEYS and len(value) > 64 else value
    if isinstance(value, list):
        return [realistic(item, texts, key) for item in value]
    if isinstance(value, dict):
        return {k: realistic(v, texts, k) for k, v in value.items()}
    return value


def synthesise(target: Path, megabytes: int, fmt: str) -> int:
    records = [json.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines()]
    metadata, body = records[0], records[1:]
    ids = sorted({m.group(1) for m in _IDS.finditer(SOURCE.read_text(encoding="utf-8"))}, key=len, reverse=True)
    texts = _Texts()
    written = copies = 0
    lines = [json.dumps(metadata, separators=(",", ":"))]
    while written < megabytes * 1_000_000:
        kept = [r for r in body if copies == 0 or not (isinstance(r.get("$set"), dict) and "messages" in r["$set"])]
        chunk = "\n".join(json.dumps(realistic(r, texts), ensure_ascii=False, separators=(",", ":")) for r in kept)
        for original in ids:
            chunk = chunk.replace(original, f"{original[:-6]}{copies:06d}")
        lines.append(chunk)
        written += len(chunk.encode())
        copies += 1
    if fmt == "jsonl":
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return copies
    from doctor.sources.gemini import ConversationState  # the final messages, as the reader replays them

    state = ConversationState()
    for line in "\n".join(lines).splitlines():
        state.apply(json.loads(line))
    document = {**state.metadata, "messages": list(state.messages.values())}
    target.write_text(json.dumps(document, ensure_ascii=False, indent=2), encoding="utf-8")
    return copies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--format", choices=("jsonl", "json"), default="jsonl")
    parser.add_argument("--keep", type=Path, help="write the session there (reused if it exists)")
    parser.add_argument("--pure", action="store_true", help="also run the reader with DOCTOR_PURE_PYTHON=1")
    parser.add_argument("--baseline-tree", type=Path, help="also run the reader of this checkout (e.g. main's)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-gemini-") as scratch:
        path = args.keep or Path(scratch) / f"session-2026-12-02T11-36-synthetic.{args.format}"
        if not path.exists():
            print(f"{synthesise(path, args.mb, args.format)} copies of {SOURCE.name} written to {path}", file=sys.stderr)
        modes = {"reader": {}, **({"reader (DOCTOR_PURE_PYTHON=1)": {"DOCTOR_PURE_PYTHON": "1"}} if args.pure else {}),
                 **tree_mode(args.baseline_tree)}
        print(compare(path, args.repeat, modes))


if __name__ == "__main__":
    main()
