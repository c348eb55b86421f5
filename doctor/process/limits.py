"""How much memory this process may use before it is killed: cgroup limits and physical RAM.

Inside a container psutil reports the host's RAM, while the OOM killer enforces the cgroup
limit. The effective limit is the smaller of the two, and memory-pressure risks are judged
against it.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import psutil

from doctor.process.model import MemoryLimit, PhysicalMemory

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_SELF_CGROUP = Path("/proc/self/cgroup")

# cgroup v1 writes "no limit" as the largest page-aligned 63-bit number (9223372036854771712);
# anything this large is treated as unlimited.
CGROUP_V1_UNLIMITED_FROM = 2**62


def read_cgroup_memory_limit(
    root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_SELF_CGROUP
) -> MemoryLimit | None:
    """The tightest memory limit on this process's cgroup or any ancestor, or `None`.

    cgroup v2 (`memory.max`) is tried first, then v1 (`memory.limit_in_bytes`). A limit set on
    a parent applies to its children, so every directory from the process's cgroup up to the
    mount root is read and the smallest limit wins. Directories that do not exist (a namespaced
    path inside a container) are skipped.
    """
    try:
        membership = proc_cgroup.read_text(encoding="utf-8")
    except OSError:
        return None
    v2_path, v1_path = _cgroup_paths(membership)
    if v2_path is not None:
        limit = _tightest_limit(root, v2_path, "memory.max")
        if limit is not None:
            return MemoryLimit(bytes=limit, source="cgroup v2")
    if v1_path is not None:
        limit = _tightest_limit(root / "memory", v1_path, "memory.limit_in_bytes")
        if limit is not None:
            return MemoryLimit(bytes=limit, source="cgroup v1")
    return None


def _cgroup_paths(membership: str) -> tuple[str | None, str | None]:
    """The unified (v2) and the v1 memory-controller paths from `/proc/self/cgroup`."""
    v2_path = v1_path = None
    for line in membership.splitlines():
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hierarchy == "0" and controllers == "":
            v2_path = path
        elif "memory" in controllers.split(","):
            v1_path = path
    return v2_path, v1_path


def _tightest_limit(base: Path, cgroup_path: str, file_name: str) -> int | None:
    limits = []
    directory = PurePosixPath(cgroup_path)
    for ancestor in (directory, *directory.parents):
        value = _read_limit(base / str(ancestor).lstrip("/") / file_name)
        if value is not None:
            limits.append(value)
    return min(limits) if limits else None


def _read_limit(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.isdigit():
        return None  # "max" in v2: no limit at this level
    value = int(text)
    return value if value < CGROUP_V1_UNLIMITED_FROM else None


def read_physical_memory() -> PhysicalMemory | None:
    """Total and available RAM of the machine, or `None` if psutil cannot tell."""
    try:
        memory = psutil.virtual_memory()
    except (OSError, RuntimeError):
        return None
    return PhysicalMemory(total=memory.total, available=memory.available)


def effective_limit(
    cgroup_limit: MemoryLimit | None, physical: PhysicalMemory | None
) -> MemoryLimit | None:
    """The smaller of the cgroup limit and physical RAM: the one the process hits first."""
    candidates = [cgroup_limit] if cgroup_limit is not None else []
    if physical is not None:
        candidates.append(MemoryLimit(bytes=physical.total, source="physical memory"))
    return min(candidates, key=lambda limit: limit.bytes, default=None)
