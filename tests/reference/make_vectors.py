"""Freeze Qwen Code 0.24.4's own answers into vectors.jsonl.gz.

Run where Node and the 0.24.4 bundle are installed (see .ci/run):
    python -m tests.reference.make_vectors [COUNT]
Cases come from the Hypothesis strategies (derandomized, so the file is
reproducible for a given strategies.py) plus the published upstream vectors.
Each line holds the case and Qwen's answer; tests replay them without Node.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from tests.reference.oracle import QwenOracle, encode_case, oracle_available
from tests.reference.published import published_cases
from tests.reference.strategies import cases

VECTORS = Path(__file__).with_name("vectors.jsonl.gz")


def generated_cases(count: int) -> list[dict]:
    collected: list[dict] = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(cases)
    def collect(case):
        collected.append(case)

    collect()
    return collected


def main(count: int = 3000) -> None:
    reason = oracle_available()
    if reason:
        sys.exit(f"cannot make vectors: {reason}")
    oracle = QwenOracle()
    all_cases = published_cases() + generated_cases(count)
    with gzip.open(VECTORS, "wt", encoding="utf-8") as out:
        for number, case in enumerate(all_cases):
            case = {**case, "id": number}
            out.write(json.dumps({"case": json.loads(encode_case(case)), "qwen": oracle.answer(case)}, ensure_ascii=True) + "\n")
    oracle.close()
    print(f"wrote {len(all_cases)} vectors to {VECTORS}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3000)
