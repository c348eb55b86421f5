"""Run cases through Qwen's own code (Node) and through doctor, in the same shape.

`QwenOracle` keeps one Node process alive (start-up costs ~1.5 s) and answers a
case per line. `doctor_answer` computes doctor's answer for the same case, so a
test only compares two dicts.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

from doctor.core.estimator import estimate_part_chars
from doctor.core.result_table import qwen_retention_totals
from doctor.core.retention import RetentionUnavailable

HERE = Path(__file__).parent
ORACLE_SCRIPT = HERE / "qwen_oracle.mjs"
BUNDLE_CHUNKS = Path("node_modules/@qwen-code/qwen-code/chunks")
# Where README's test command installs the reference (`npm install --prefix .reference …`).
REPO_REFERENCE = HERE.parents[1] / ".reference"


def chunks_dir() -> Path:
    """QWEN_CHUNKS if set, else the repo's .reference install, else /opt/qwen-ref."""
    if os.environ.get("QWEN_CHUNKS"):
        return Path(os.environ["QWEN_CHUNKS"])
    for prefix in (REPO_REFERENCE, Path("/opt/qwen-ref")):
        if (prefix / BUNDLE_CHUNKS).is_dir():
            return prefix / BUNDLE_CHUNKS
    return REPO_REFERENCE / BUNDLE_CHUNKS


def oracle_available() -> str | None:
    """None when the oracle can run, else why not."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not (chunks_dir() / "chunk-CK5HUN74.js").exists():
        return f"Qwen Code 0.24.4 bundle not found in {chunks_dir()} (set QWEN_CHUNKS)"
    return None


def encode_case(case: dict) -> str:
    """JSON that JS parses to the same values (lone surrogates survive as \\uXXXX escapes)."""
    return json.dumps(case, ensure_ascii=True, allow_nan=False)


class QwenOracle:
    def __init__(self) -> None:
        self._process = subprocess.Popen(
            ["node", str(ORACLE_SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "QWEN_CHUNKS": str(chunks_dir())},
            text=True,
            encoding="utf-8",
            errors="surrogatepass",
        )

    def answer(self, case: dict) -> dict:
        assert self._process.stdin and self._process.stdout
        self._process.stdin.write(encode_case(case) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError("the Qwen oracle exited")
        return json.loads(line)

    def close(self) -> None:
        if self._process.stdin:
            self._process.stdin.close()
        self._process.wait(timeout=10)


def _budget(value):
    return math.inf if value == "Infinity" else value


def doctor_answer(case: dict) -> dict:
    """doctor's answer to a case, shaped like the oracle's output."""
    threshold = case.get("thresholdChars")
    threshold = None if threshold is None else _budget(threshold)
    budgets = case.get("budgets")
    resolver = None
    if budgets is not None:
        resolver = lambda name: _budget(budgets[name]) if name in budgets else None  # noqa: E731
    estimate = case.get("imageTokenEstimate")
    answer: dict = {"id": case.get("id")}
    try:
        totals = qwen_retention_totals(
            case.get("history", []), threshold_chars=threshold, resolve_tool_budget=resolver, image_token_estimate=estimate
        )
        effective = 30000 if threshold is None else threshold
        answer["retention"] = {
            "toolResultCount": totals.tool_result_count,
            "totalChars": totals.total_chars,
            "largestResultChars": totals.largest_result_chars,
            "oversizedResultCount": totals.oversized_result_count,
            "oversizedThresholdChars": effective if math.isfinite(effective) else 0,
        }
    except RetentionUnavailable as exc:
        answer["retention"] = {"error": str(exc)}
    part_chars = []
    for part in case.get("parts", []):
        try:
            part_chars.append(estimate_part_chars(part, 1600 if estimate is None else estimate))
        except (TypeError, ValueError, AttributeError, RecursionError) as exc:
            part_chars.append({"error": str(exc)})
    answer["partChars"] = part_chars
    return answer


def same_answer(ours: dict, qwen: dict) -> bool:
    """Equal figures; errors need only agree that there was an error."""
    if ("error" in ours["retention"]) != ("error" in qwen["retention"]):
        return False
    if "error" not in ours["retention"] and ours["retention"] != qwen["retention"]:
        return False
    if len(ours["partChars"]) != len(qwen["partChars"]):
        return False
    for mine, theirs in zip(ours["partChars"], qwen["partChars"]):
        if isinstance(mine, dict) or isinstance(theirs, dict):
            if not (isinstance(mine, dict) and isinstance(theirs, dict)):
                return False
        elif mine != theirs:
            return False
    return True
