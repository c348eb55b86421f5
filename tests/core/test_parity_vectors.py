"""doctor equals Qwen Code 0.24.4 on frozen vectors produced by Qwen's own code.

vectors.jsonl.gz holds ~3,000 cases (generated histories plus the upstream test
vectors) with the answers of the 0.24.4 bundle's `analyzeToolResultRetention`
and `estimatePartChars`; this test needs no Node.
"""

import gzip
import json
from functools import cache
from pathlib import Path

import pytest

from tests.reference.oracle import doctor_answer, same_answer
from tests.reference.published import published

VECTORS = Path(__file__).parents[1] / "reference" / "vectors.jsonl.gz"


@cache
def load_vectors() -> list[dict]:
    with gzip.open(VECTORS, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_every_frozen_vector_matches_qwen():
    vectors = load_vectors()
    assert len(vectors) > 3000
    mismatches = [v["case"]["id"] for v in vectors if not same_answer(doctor_answer(v["case"]), v["qwen"])]
    assert mismatches == []


def test_vectors_cover_the_rules_that_matter():
    """The frozen set exercises oversized results, errors, floats and astral text."""
    answers = [v["qwen"]["retention"] for v in load_vectors()]
    assert sum("error" in a for a in answers) > 50
    assert sum(a.get("oversizedResultCount", 0) > 0 for a in answers) > 20
    assert sum(a.get("toolResultCount", 0) > 0 for a in answers) > 1000


@pytest.mark.parametrize("name,case,expected", published(), ids=[p[0] for p in published()])
def test_published_upstream_vectors(name, case, expected):
    """The figures the upstream tests assert, from doctor and from the frozen Qwen answer."""
    ours = doctor_answer(case)
    index = [p[0] for p in published()].index(name)
    qwen = load_vectors()[index]["qwen"]  # make_vectors writes the published cases first
    for answer in (ours, qwen):
        for key, value in expected.items():
            actual = answer["partChars"] if key == "partChars" else answer["retention"][key]
            assert actual == value, (key, answer)
