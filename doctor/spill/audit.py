"""Check every spill pointer of a session against the file it names, without touching either.

For each pointer: does the file exist (and if not, the likely why), may it be opened
(containment, symlinks, regular file), is it private (Qwen writes 0600), does it match
what the stub declared (sha256, bytes, KB, chars, lines, the preview of its head), does
it respect Qwen's 50 MiB per-file and 500 MiB per-session limits; then which files in
the spill directories no pointer names. Files are only stat-ed and read; a file that
resolves outside its roots is never opened unless the caller passes `allow_outside`.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from doctor.sources.base import LoadedSession
from doctor.spill.digest import HEAD_BYTES, DigestCache, Digester, FileMeasure, Progress
from doctor.spill.errors import SpillFileError
from doctor.spill.pointers import QWEN_BATCH, SpillPointer
from doctor.spill.resolve import Resolution, SpillLocator

QWEN_FILE_CAP_BYTES = 50 * 1024 * 1024
QWEN_SESSION_BUDGET_BYTES = 500 * 1024 * 1024
QWEN_CLEANUP_SECONDS = 24 * 3600
# What one audit reads to hash: a file above MEASURE_FILE_CAP, or any file once MEASURE_AUDIT_CAP has been read,
# is sized but not read. The agents write far less (Qwen persists at most 50 MiB a result and 500 MiB a
# session); a stranger's folder may hold a sparse file of any size, which would take the audit hours.
MEASURE_FILE_CAP = 1 << 30
MEASURE_AUDIT_CAP = 4 << 30
# Files Qwen 0.24.4 keeps in the project temp dir beside its spills, never spill files: the
# Logger's prompt log (LOG_FILE_NAME "logs.json") and `/chat save` checkpoints
# (`checkpoint-${tag}.json`), and the shell's `shell_history`.
QWEN_OWN_FILES = re.compile(r"logs\.json|checkpoint-.*\.json|shell_history")

ERROR = "error"
WARNING = "warning"
INFO = "info"  # reported, but not a reason to fail `doctor spill verify`

MISSING = "missing"
NOT_PERSISTED = "not-persisted"
OUTSIDE_ROOT = "outside-root"
SYMLINK = "symlink"
NOT_REGULAR = "not-regular-file"
UNREADABLE = "unreadable"
DIGEST_MISMATCH = "digest-mismatch"
SIZE_MISMATCH = "size-mismatch"
PREVIEW_MISMATCH = "preview-mismatch"
PERMISSIONS = "permissions"
OVER_FILE_CAP = "over-file-cap"
OVER_SESSION_BUDGET = "over-session-budget"
NOT_MEASURED = "not-measured"
ORPHAN = "orphan"

FINDING_KINDS = (
    MISSING, NOT_PERSISTED, OUTSIDE_ROOT, SYMLINK, NOT_REGULAR, UNREADABLE, DIGEST_MISMATCH, SIZE_MISMATCH,
    PREVIEW_MISMATCH, PERMISSIONS, OVER_FILE_CAP, OVER_SESSION_BUDGET, NOT_MEASURED, ORPHAN,
)


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    severity: str
    pointer: SpillPointer | None
    message: str
    path: str | None = None

    def to_json(self) -> dict:
        pointer = self.pointer
        return {
            "kind": self.kind,
            "severity": self.severity,
            "path": self.path or (pointer.written if pointer else None),
            "pointerKind": pointer.kind if pointer else None,
            "callId": pointer.call_id if pointer else None,
            "ordinal": pointer.ordinal if pointer else None,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class FileCheck:
    """One pointer, where it resolved, and what the file holds (None when not measured); its size when sized."""

    resolution: Resolution
    measure: FileMeasure | None
    mode: int | None
    size: int | None = None

    @property
    def pointer(self) -> SpillPointer:
        return self.resolution.pointer

    def to_json(self) -> dict:
        measure = self.measure
        return {
            **self.pointer.to_json(),
            "resolution": self.resolution.to_json(),
            "file": None if measure is None else {
                "bytes": measure.size,
                "sha256": measure.sha256,
                "chars": measure.utf16_units,
                "lines": measure.lines,
                "mode": None if self.mode is None else f"{self.mode:04o}",
            },
        }


@dataclass(frozen=True)
class AuditReport:
    agent: str
    session_path: str | None
    checks: tuple[FileCheck, ...]
    findings: tuple[Finding, ...]
    orphans: tuple[str, ...]
    total_bytes: int

    @property
    def ok(self) -> bool:
        """No finding beyond notes: what `doctor spill verify` exits 0 on."""
        return all(finding.severity == INFO for finding in self.findings)

    def summary(self) -> dict[str, int]:
        """Counts by finding kind, in FINDING_KINDS order."""
        counts = Counter(finding.kind for finding in self.findings)
        return {kind: counts[kind] for kind in FINDING_KINDS if counts[kind]}

    def summary_line(self) -> str:
        resolved = sum(check.resolution.exists for check in self.checks)
        remapped = sum(check.resolution.remapped for check in self.checks)
        counts = ", ".join(f"{count} {kind}" for kind, count in self.summary().items()) or "no findings"
        return (f"{len(self.checks)} pointers, {resolved} resolved ({remapped} remapped), "
                f"{_mib(self.total_bytes)} spilled: {counts}")

    def to_json(self) -> dict:
        return {
            "agent": self.agent,
            "sessionPath": self.session_path,
            "ok": self.ok,
            "totals": {
                "pointers": len(self.checks),
                "resolved": sum(check.resolution.exists for check in self.checks),
                "remapped": sum(check.resolution.remapped for check in self.checks),
                "bytes": self.total_bytes,
                "orphans": len(self.orphans),
            },
            "summary": self.summary(),
            "pointers": [check.to_json() for check in self.checks],
            "findings": [finding.to_json() for finding in self.findings],
            "orphans": list(self.orphans),
        }


def audit_spill(
    session: LoadedSession,
    pointers: Sequence[SpillPointer],
    locator: SpillLocator,
    *,
    allow_outside: bool = False,
    now: datetime | None = None,
    progress: Progress | None = None,
    cache: DigestCache | None = None,
) -> AuditReport:
    """Resolve, inspect and measure every pointer; measuring runs on the digest worker thread."""
    findings: list[Finding] = []
    pending = []
    left = MEASURE_AUDIT_CAP
    session_age = functools.cache(lambda: _session_age_seconds(session, now))  # one age for all missing files
    with Digester(cache, progress) as digester:
        for pointer in pointers:
            resolution = locator.resolve(pointer)
            mode, size = _inspect(session_age, resolution, allow_outside, findings)
            future = None
            if size is not None and size > min(MEASURE_FILE_CAP, left):
                findings.append(Finding(NOT_MEASURED, WARNING, pointer, _why_not_measured(size, left)))
            elif size is not None:
                left -= size
                future = digester.submit(resolution.real, MEASURE_FILE_CAP)
            pending.append((resolution, mode, size, future))
        checks = tuple(_measured(resolution, mode, size, future, findings) for resolution, mode, size, future in pending)
    total = _spilled_bytes(checks)
    if _is_qwen(session.agent) and total > QWEN_SESSION_BUDGET_BYTES:
        findings.append(Finding(OVER_SESSION_BUDGET, WARNING, None,
                                f"spill files total {_mib(total)}, over Qwen's 500 MiB per-session budget"))
    orphans = _orphans(checks, locator, session.agent)
    findings += [Finding(ORPHAN, INFO, None, "no result points to this file", path) for path in orphans]
    if cache is not None:
        cache.save()
    return AuditReport(session.agent, str(session.path) if session.path else None, checks, tuple(findings),
                       orphans, total)


def _why_not_measured(size: int, left: int) -> str:
    if size > MEASURE_FILE_CAP:
        return f"{_mib(size)}: over the {_mib(MEASURE_FILE_CAP)} doctor reads of one spill file; sized, not hashed"
    return f"{_mib(size)}: this audit already read {_mib(MEASURE_AUDIT_CAP - left)} of its {_mib(MEASURE_AUDIT_CAP)}; sized, not hashed"


def _inspect(session_age, resolution: Resolution, allow_outside: bool, findings: list) -> tuple[int | None, int | None]:
    """Findings that need no reading; returns (permission bits, the file's size when it may be opened, else None)."""
    pointer = resolution.pointer
    if pointer.path is None and pointer.artifact_name is None:
        findings.append(Finding(NOT_PERSISTED, ERROR, pointer, _why_not_persisted(pointer)))
        return None, None
    if not resolution.exists:
        findings.append(Finding(MISSING, ERROR, pointer, _why_missing(resolution, session_age)))
        return None, None
    if not resolution.inside:
        opened = "opened because --allow-outside was given" if allow_outside else "not opened"
        findings.append(Finding(OUTSIDE_ROOT, ERROR, pointer,
                                f"resolves to {resolution.real}, outside the agent's spill roots ({opened})"))
        if not allow_outside:
            return None, None
    elif resolution.is_symlink:
        findings.append(Finding(SYMLINK, INFO, pointer, f"is a symlink to {resolution.real} (inside the spill root)"))
    try:
        info = os.stat(resolution.real)
    except OSError as exc:
        findings.append(Finding(UNREADABLE, ERROR, pointer, f"cannot stat {resolution.real}: {exc.strerror or exc}"))
        return None, None
    if not stat.S_ISREG(info.st_mode):
        findings.append(Finding(NOT_REGULAR, ERROR, pointer, f"{resolution.real} is not a regular file; not opened"))
        return None, None
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        qwen = _is_qwen(pointer.agent)
        findings.append(Finding(PERMISSIONS, WARNING if qwen else INFO, pointer,
                                f"mode {mode:04o} lets other users read this tool output"
                                + (" (Qwen writes spill files 0600)" if qwen else "")))
    if _is_qwen(pointer.agent) and info.st_size > QWEN_FILE_CAP_BYTES:
        findings.append(Finding(OVER_FILE_CAP, WARNING, pointer,
                                f"{_mib(info.st_size)} is over Qwen's 50 MiB per-file cap"))
    return mode, info.st_size


def _measured(resolution: Resolution, mode, size, future, findings: list) -> FileCheck:
    if future is None:
        return FileCheck(resolution, None, mode, size)
    pointer = resolution.pointer
    try:
        measure = future.result()
    except (SpillFileError, OSError) as exc:
        findings.append(Finding(UNREADABLE, ERROR, pointer, str(exc)))
        return FileCheck(resolution, None, mode, size)
    findings.extend(_declared_mismatches(pointer, measure))
    return FileCheck(resolution, measure, mode, measure.size)


def _declared_mismatches(pointer: SpillPointer, measure: FileMeasure) -> list[Finding]:
    """Compare what the stub (or toolUseResult) declared with what the file holds."""
    found = []
    if pointer.sha256 and pointer.sha256 != measure.sha256:
        found.append(Finding(DIGEST_MISMATCH, ERROR, pointer,
                             f"sha256 is {measure.sha256[:16]}…, the stub says {pointer.sha256[:16]}…: the file changed"))
    declared = (
        ("bytes", pointer.declared_bytes, measure.size),
        ("KB", pointer.declared_kb, _js_round(measure.size / 1024)),
        ("chars", pointer.declared_chars, measure.utf16_units),
        ("lines", pointer.declared_lines, measure.lines),
    )
    for unit, said, actual in declared:
        if said is not None and said != actual:
            found.append(Finding(SIZE_MISMATCH, ERROR, pointer, f"the session declares {said} {unit}, the file has {actual}"))
    if pointer.preview_head is not None and not _preview_matches(measure, pointer.preview_head):
        found.append(Finding(PREVIEW_MISMATCH, ERROR, pointer, "the stub's preview is not the head of the file"))
    return found


def _why_not_persisted(pointer: SpillPointer) -> str:
    if pointer.note:
        return f"never written: the stub says {pointer.note}"
    if pointer.kind == QWEN_BATCH:
        return "never written: the batch budget cut this result but persisted no artifact (skipped or failed)"
    return "never written: the stub names no file"


def _why_missing(resolution: Resolution, session_age) -> str:
    """Why a pointed file is not here; `session_age()` gives the session's age in seconds (or None)."""
    pointer = resolution.pointer
    where = f"not found as written nor under {resolution.searched} candidate places"
    age = session_age() if _is_qwen(pointer.agent) else None
    if age is not None and age > QWEN_CLEANUP_SECONDS:
        return f"{where}; likely cleaned up: Qwen removes spill files after 24 hours and the session is {age / 86400:.1f} days old"
    if pointer.anchor:
        return f"{where}; set AUTOBOT_TOOL_OUTPUT_SPILL_ROOT or pass --spill-root to AutoBot's spill directory"
    return f"{where}; the dump was probably copied without its spill files (pass --spill-root DIR)"


def _session_age_seconds(session: LoadedSession, now: datetime | None) -> float | None:
    """Seconds since the session started (its file's mtime when the reader found no date)."""
    now = now or datetime.now(timezone.utc)
    started = None
    if session.started:
        try:
            started = datetime.fromisoformat(session.started.replace("Z", "+00:00"))
        except ValueError:
            started = None
    if started is None and session.path is not None:
        try:
            started = datetime.fromtimestamp(os.stat(session.path).st_mtime, timezone.utc)
        except OSError:
            return None
    if started is None:
        return None
    if started.tzinfo is None:
        started = started.replace(tzinfo=timezone.utc)
    return (now - started).total_seconds()


def _spilled_bytes(checks: Sequence[FileCheck]) -> int:
    sizes = {str(check.resolution.real): check.size for check in checks if check.size is not None}
    return sum(sizes.values())


def _orphans(checks: Sequence[FileCheck], locator: SpillLocator, agent: str) -> tuple[str, ...]:
    """Regular files in the spill directories (where pointed files live, and the reader's roots) nobody names.

    The agent's own bookkeeping files there (Qwen's logs.json…) are not spill files. An entry that is a
    regular file (not a symlink) is named by its directory's real path and its name: its real path.
    """
    named = {str(check.resolution.real) for check in checks if check.resolution.real is not None}
    directories = {check.resolution.found.parent for check in checks
                   if check.resolution.exists and check.resolution.inside}
    directories.update(root for root in locator.session_roots if root.is_dir())
    orphans = []
    for directory in sorted(directories):
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        real_directory = os.path.realpath(directory)
        for entry in entries:
            if _is_qwen(agent) and QWEN_OWN_FILES.fullmatch(entry.name):
                continue
            if entry.is_file(follow_symlinks=False) and os.path.join(real_directory, entry.name) not in named:
                orphans.append(entry.path)
    return tuple(sorted(orphans))


def _is_qwen(agent: str) -> bool:
    return "qwen" in agent.lower()


def _js_round(value: float) -> int:
    """JavaScript's Math.round: halves go up."""
    return int(value + 0.5)


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def _preview_matches(measure: FileMeasure, preview: str) -> bool:
    """The stub's preview is the file's head; one longer than the head doctor reads (Gemini's is 20 % of
    its threshold: 40,000 chars once a user raises it to 200,000) is compared as far as that head goes."""
    head = measure.head
    return head.startswith(preview) or (measure.size > HEAD_BYTES and len(preview) > len(head)
                                        and preview.startswith(head))
