"""Codex reader speed and memory on a 100 MB rollout, beside the bare msgspec baseline.

The rollout is synthesised from the real big-outputs recording (Codex 0.171.0):
its lines are repeated, call ids made fresh per copy, until the file reaches the
target size, so the shapes (session_meta with the instructions, item_completed
CommandExecution copies, function_call_output, token counts) are the client's
own. Command outputs (item_completed `aggregated_output`, the output after the
`Output:` header of function_call_output) are replaced by shell-like text of the
same length (`realistic_text` of bench_qwen_reader). Written compactly with
ensure_ascii=False (serde_json's form).

Measured by benchmarks/reader_bench.py (interleaved fresh subprocesses, medians).
Usage: python benchmarks/bench_codex_reader.py [--mb 100] [--repeat 7] [--keep PATH] [--pure]
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_qwen_reader import _Texts  # noqa: E402  the same realistic text for every agent's benchmark
from reader_bench import ROOT, bench_main  # noqa: E402

SOURCE = next((ROOT / "tests/recordings/codex/big-outputs/home/.codex/sessions").glob("*/*/*/rollout-*.jsonl"))
HEADER_END = "Output:\n"
_CALL_ID = re.compile(r"call_[0-9a-f]{24}")


def realistic(record: dict, texts: _Texts) -> dict:
    """The line with its command outputs replaced by realistic text of the same lengths."""
    payload = record.get("payload")
    if not isinstance(payload, dict):
        return record
    item = payload.get("item")
    if payload.get("type") == "item_completed" and isinstance(item, dict) and len(item.get("aggregated_output") or "") > 64:
        payload = dict(payload, item=dict(item, aggregated_output=texts.take(len(item["aggregated_output"]))))
    output = payload.get("output")
    if payload.get("type") == "function_call_output" and isinstance(output, str) and HEADER_END in output:
        head, _, body = output.partition(HEADER_END)
        payload = dict(payload, output=head + HEADER_END + texts.take(len(body)))
    return dict(record, payload=payload)


def synthesise(target: Path, megabytes: int) -> int:
    records = [json.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines()]
    texts = _Texts()
    written = copies = 0
    with open(target, "w", encoding="utf-8") as handle:
        while written < megabytes * 1_000_000:
            lines = [json.dumps(realistic(record, texts), ensure_ascii=False, separators=(",", ":")) for record in records]
            if copies:  # the first copy keeps its session_meta first; later ones are more turns
                lines = [line for line in lines if '"type":"session_meta"' not in line[:80]]
            chunk = _CALL_ID.sub(lambda m: m.group(0)[:-6] + f"{copies:06d}", "\n".join(lines) + "\n")
            handle.write(chunk)
            written += len(chunk.encode())
            copies += 1
    return copies


if __name__ == "__main__":
    bench_main(__doc__.splitlines()[0], synthesise, SOURCE, "rollout-2026-12-02T11-38-22-synthetic.jsonl")
