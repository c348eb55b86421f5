"""The byte and time formatters must print what Qwen's JavaScript prints, digit for digit."""

import json
import random
import shutil
import subprocess
from datetime import datetime, timedelta, timezone

import pytest

from doctor.process.format import (
    format_byte_delta,
    format_bytes,
    format_cpu_seconds,
    format_iso_timestamp,
    format_mib,
    format_percent,
    format_uptime,
    to_fixed,
)

# Printed by node from Qwen 0.24.4's formatMemoryUsage.
FORMAT_MEMORY_USAGE_VECTORS = [
    (0, "0.0 KB"),
    (51, "0.0 KB"),
    (52, "0.1 KB"),
    (1000, "1.0 KB"),
    (1024, "1.0 KB"),
    (1280, "1.3 KB"),  # exact tie: JS rounds up, Python's format would say 1.2
    (2048, "2.0 KB"),
    (4096, "4.0 KB"),
    (1048575, "1.0 MB"),  # the unit switch looks at the rounded value
    (1048576, "1.0 MB"),
    (123456789, "117.7 MB"),
    (1073741823, "1.00 GB"),
    (1610612736, "1.50 GB"),
    (1099511627776, "1024.00 GB"),
    (-5, "-0.0 KB"),
    (-2048, "-2.0 KB"),
]


@pytest.mark.parametrize(("byte_count", "expected"), FORMAT_MEMORY_USAGE_VECTORS)
def test_format_bytes_matches_qwen(byte_count, expected):
    assert format_bytes(byte_count) == expected


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (0.05, 1, "0.1"),  # the double is slightly above the tie
        (0.15, 1, "0.1"),  # the double is slightly below the tie
        (0.25, 1, "0.3"),  # exact tie rounds up
        (0.125, 2, "0.13"),
        (-0.125, 2, "-0.13"),  # ties go away from zero
        (-0.01, 1, "-0.0"),
        (-0.0, 1, "0.0"),
        (2.675, 2, "2.67"),
        (60, 1, "60.0"),
    ],
)
def test_to_fixed_rounds_the_exact_binary_value_half_up(value, digits, expected):
    assert to_fixed(value, digits) == expected


def test_time_and_ratio_formatters_follow_qwen_vectors():
    assert format_cpu_seconds(10e-6) == "0.00s"
    assert format_uptime(60) == "60.0"
    assert format_percent(0.8755) == "87.5%"  # 87.54999… in binary, as in JS
    assert format_percent(None) == "unavailable"


def test_unreadable_values_print_as_unavailable():
    assert format_bytes(None) == "unavailable"
    assert format_mib(None) == "unavailable"
    assert format_byte_delta(None) == "unavailable"


def test_deltas_keep_their_sign_and_pick_the_unit_from_the_magnitude():
    assert format_byte_delta(64 * 1024 * 1024) == "+64.0 MB"
    assert format_byte_delta(-1280) == "-1.3 KB"
    assert format_byte_delta(0) == "+0.0 KB"


def test_format_mib_is_qwens_sample_formatter():
    assert format_mib(5 * 1024 * 1024 + 512 * 1024) == "5.5 MiB"


def test_iso_timestamp_is_javascripts_to_iso_string():
    moment = datetime(2025, 1, 2, 5, 4, 5, 678999, tzinfo=timezone(timedelta(hours=2)))
    assert format_iso_timestamp(moment) == "2025-01-02T03:04:05.678Z"


@pytest.mark.node
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_format_bytes_agrees_with_node_on_random_sizes():
    rng = random.Random(4)
    sizes = [rng.randrange(0, 1 << rng.randrange(1, 42)) for _ in range(400)]
    script = (
        "const r=(v,d)=>Number(v.toFixed(d));"
        "const f=(b)=>r(b/1024,1)<1024?`${(b/1024).toFixed(1)} KB`:"
        "r(b/1048576,1)<1024?`${(b/1048576).toFixed(1)} MB`:`${(b/1073741824).toFixed(2)} GB`;"
        f"console.log(JSON.stringify({json.dumps(sizes)}.map(f)))"
    )
    expected = json.loads(subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True).stdout)
    assert [format_bytes(size) for size in sizes] == expected
