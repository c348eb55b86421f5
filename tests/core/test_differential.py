"""Differential test against the live Qwen Code 0.24.4 bundle, run from Node.

Hypothesis generates histories (astral characters, lone surrogates, nested
parts, odd JSON values, floats, huge strings, missing fields, aliases, MCP
names); each is answered by Qwen's own `analyzeToolResultRetention` /
`estimatePartChars` and by doctor, and the two must agree exactly.
"""

import os

import pytest
from hypothesis import given, settings

from tests.conftest import REQUIRE_REFERENCE
from tests.reference.oracle import QwenOracle, doctor_answer, oracle_available, same_answer
from tests.reference.strategies import cases

UNAVAILABLE = oracle_available()
pytestmark = pytest.mark.node
if UNAVAILABLE and not REQUIRE_REFERENCE:
    pytestmark = [pytest.mark.node, pytest.mark.skip(reason=UNAVAILABLE)]


@pytest.fixture(scope="module")
def oracle():
    if UNAVAILABLE:
        pytest.fail(f"DOCTOR_REQUIRE_REFERENCE=1 but {UNAVAILABLE}")
    oracle = QwenOracle()
    yield oracle
    oracle.close()


# Each example costs ~50 ms (mostly generating big strings); CI raises the count.
EXAMPLES = int(os.environ.get("DOCTOR_DIFFERENTIAL_EXAMPLES", "400"))


def test_generated_histories_match_qwen(oracle):
    @settings(max_examples=EXAMPLES)
    @given(cases)
    def check(case):
        ours, qwen = doctor_answer(case), oracle.answer(case)
        assert same_answer(ours, qwen), (case, ours, qwen)

    check()
