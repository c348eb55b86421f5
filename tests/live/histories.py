"""Live histories for the attach tests, made of Contents real Qwen Code runs recorded.

Each call returns fresh objects (nothing shared with another history), so a test
can tell the host's objects from anything doctor might have made.
"""

from __future__ import annotations

import copy
from pathlib import Path

from doctor.sources.registry import open_session

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings" / "qwen"
# Big outputs in the three storage widths CPython uses: ASCII, BMP, astral.
FILLERS = ("line of plain ASCII output\n", "ligne accentuée — ünïcödé\n", "emoji 🙂 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 lines\n")


def recorded_contents() -> list[dict]:
    """Every Content of every recorded Qwen session, to take `fresh` copies of."""
    contents = []
    for path in sorted(RECORDINGS.glob("*/session.jsonl")):
        contents.extend(open_session(path).history())
    assert contents, f"no Qwen recordings under {RECORDINGS}"
    return contents


def fresh(content: dict) -> dict:
    return copy.deepcopy(content)


def with_big_outputs(content: dict, serial: int, output_chars: int) -> dict:
    """`content` whose tool outputs are replaced by distinct strings of about `output_chars`."""
    for part in content.get("parts") or ():
        response = (part.get("functionResponse") or {}).get("response") if isinstance(part, dict) else None
        if isinstance(response, dict) and isinstance(response.get("output"), str):
            filler = FILLERS[serial % len(FILLERS)]
            response["output"] = f"result {serial}\n" + filler * (output_chars // len(filler))
    return content


def has_tool_result(content: dict) -> bool:
    return any(isinstance(part, dict) and "functionResponse" in part for part in content.get("parts") or ())
