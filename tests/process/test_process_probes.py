"""OS readers: cgroup limits on a fake cgroupfs, smaps_rollup parsing, descriptor counts."""

import os
import subprocess
import sys

import pytest

from doctor.process.limits import effective_limit, read_cgroup_memory_limit
from doctor.process.model import MemoryLimit, PhysicalMemory
from doctor.process.probes import count_open_fds, parse_smaps_rollup, read_smaps_rollup

GIB = 1024**3
V1_UNLIMITED = "9223372036854771712"


def cgroupfs(tmp_path, membership, files):
    """A fake `/sys/fs/cgroup` tree and `/proc/self/cgroup` file."""
    root = tmp_path / "cgroup"
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content + "\n")
    proc = tmp_path / "proc-self-cgroup"
    proc.write_text(membership)
    return root, proc


def test_cgroup_v2_limit_is_the_tightest_on_the_path_to_the_root(tmp_path):
    root, proc = cgroupfs(
        tmp_path,
        "0::/user.slice/agent.scope\n",
        {
            "memory.max": "max",
            "user.slice/memory.max": str(3 * GIB),
            "user.slice/agent.scope/memory.max": str(4 * GIB),  # a parent's limit still binds
        },
    )
    assert read_cgroup_memory_limit(root, proc) == MemoryLimit(bytes=3 * GIB, source="cgroup v2")


def test_cgroup_v2_without_any_limit_is_none(tmp_path):
    root, proc = cgroupfs(tmp_path, "0::/\n", {"memory.max": "max"})
    assert read_cgroup_memory_limit(root, proc) is None


def test_cgroup_v1_limit_skips_the_unlimited_sentinel_and_missing_directories(tmp_path):
    # The shape of this very sandbox: hybrid v1 with a namespaced path that may not be mounted.
    root, proc = cgroupfs(
        tmp_path,
        "4:memory:/process_api/c3950efa\n1:cpu:/\n0::/\n",
        {
            "memory/memory.limit_in_bytes": V1_UNLIMITED,
            "memory/process_api/memory.limit_in_bytes": str(2 * GIB),
        },
    )
    assert read_cgroup_memory_limit(root, proc) == MemoryLimit(bytes=2 * GIB, source="cgroup v1")


def test_no_cgroup_file_means_no_cgroup_limit(tmp_path):
    assert read_cgroup_memory_limit(tmp_path, tmp_path / "absent") is None


def test_effective_limit_is_the_smaller_of_cgroup_and_physical():
    physical = PhysicalMemory(total=16 * GIB, available=4 * GIB)
    cgroup = MemoryLimit(bytes=2 * GIB, source="cgroup v2")
    assert effective_limit(cgroup, physical) == cgroup
    huge = MemoryLimit(bytes=64 * GIB, source="cgroup v2")
    assert effective_limit(huge, physical) == MemoryLimit(bytes=16 * GIB, source="physical memory")
    assert effective_limit(None, None) is None


def test_smaps_rollup_rss_line_is_collapsed_and_converted():
    text = "55d96d44d000-7ffededca000 ---p 00000000 00:00 0    [rollup]\nRss:                1600 kB\nPss:    262 kB\n"
    rollup = parse_smaps_rollup(text)
    assert (rollup.line, rollup.bytes) == ("Rss: 1600 kB", 1600 * 1024)


def test_smaps_rollup_without_rss_is_a_parse_error_with_80_chars():
    text = "Pss: 1 kB\n" + "x" * 200
    rollup = parse_smaps_rollup(text)
    assert rollup.line == f"parse error: {text[:80]}"
    assert rollup.bytes is None


def test_missing_smaps_rollup_is_unavailable(tmp_path):
    assert read_smaps_rollup(tmp_path / "absent") is None


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs procfs")
def test_open_descriptor_count_sees_a_new_descriptor():
    before = count_open_fds()
    read_end, write_end = os.pipe()
    try:
        assert count_open_fds() == before + 2
    finally:
        os.close(read_end)
        os.close(write_end)


def test_process_package_imports_neither_textual_nor_rich():
    code = (
        "import sys, doctor.process, doctor.process.collect, doctor.process.snapshots, "
        "doctor.process.sampling, doctor.process.format, doctor.process.risks\n"
        "leaked = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(leaked))"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == ""
