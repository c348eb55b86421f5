"""One `doctor scan`: decide what changed, run the jobs on an engine, write each file as it finishes.

Deciding is cheap and happens here (stat, and 2 × 16 KB digests, per file);
reading and measuring is the jobs' work. Unchanged files cost nothing more; a
session that grew by appends is re-read by its job, which sends back only the
rows after the ones already stored when those still hold (the analysis needs the
whole file: a rewind or compaction can change what earlier records mean).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from doctor.triage import archives
from doctor.triage.fingerprint import CHANGED, GROWN, NEW, UNCHANGED, Fingerprint, compare, fingerprint
from doctor.triage.inputs import file_key, shown
from doctor.triage.rows import NOT_SESSION, SKIPPED, FileJob, FileOutcome
from doctor.triage.store import Store, ctrl_c_as_interrupt


@dataclass
class ScanSummary:
    """What this scan did, for the report's first lines and the scans table."""

    counts: Counter = field(default_factory=Counter)  # files seen / new / … / skipped, results_written
    skipped: Counter = field(default_factory=Counter)  # reason -> files skipped in this scan
    interrupted: bool = False


@dataclass(frozen=True)
class ScanRequest:
    files: list[Path]
    path_style: str = "short"
    options: object = None  # assemble.ReportOptions shared by every job
    engine: object = None  # an opened engine (engines.open_engine); None: the local pool on all cores
    labels: dict = field(default_factory=dict)  # --label KEY=VALUE: recorded on the scan and every file given


def scan(store: Store, request: ScanRequest) -> ScanSummary:
    summary = ScanSummary()
    engine = request.engine or _local_pool()
    with ctrl_c_as_interrupt():
        scan_id = store.begin_scan(engine.name)
        store.record_labels(scan_id, request.labels, [file_key(path) for path in request.files])
        known = store.known_files()
        try:
            jobs, prints, archive_of, fresh = _plan(store, request, known, summary, scan_id)
            for outcome in engine.run(jobs):
                is_fresh = outcome.key in fresh
                fresh.discard(outcome.key)  # a tar may hold one member name twice: the second replaces the first
                summary.counts["results_written"] += store.write(outcome, prints.get(outcome.key), scan_id,
                                                                 archive_of.get(outcome.key), fresh=is_fresh)
                if outcome.status == SKIPPED:
                    summary.counts["skipped"] += 1
                    summary.skipped[outcome.reason] += 1
                elif outcome.status == NOT_SESSION:
                    summary.counts["not_sessions"] += 1
        except KeyboardInterrupt:
            summary.interrupted = True
            raise
        finally:
            store.finish_scan(scan_id, summary.counts, summary.interrupted)
    return summary


def _local_pool():
    from doctor.triage.engines import LocalPool

    return LocalPool()


def _plan(store: Store, request: ScanRequest, known: dict, summary: ScanSummary, scan_id: int):
    """The jobs to run, each file's fingerprint, the archive each member belongs to, and the keys the
    database holds no row of (new files; members of an archive, whose old rows its write dropped)."""
    jobs: list[FileJob] = []
    prints: dict[str, Fingerprint] = {}
    archive_of: dict[str, str] = {}
    fresh: set[str] = set()
    style = request.path_style
    for path in request.files:
        key = file_key(path)
        summary.counts["seen"] += 1
        try:
            now = fingerprint(str(path))
        except OSError as exc:
            _skip_now(store, key, shown(path, style), f"cannot read: {exc.strerror or exc}", scan_id, summary)
            continue
        before = known.get(key, (None, None, None))[0]
        state = compare(str(path), now, before)
        if state == UNCHANGED:
            summary.counts["unchanged"] += 1
            continue
        if archives.is_archive(path):
            summary.counts[NEW if state == NEW else CHANGED] += 1
            try:
                names = archives.members(path)
            except (OSError, ValueError, EOFError) as exc:
                store.write_archive(key, shown(path, style), now, SKIPPED, str(exc), scan_id)
                summary.counts["skipped"] += 1
                summary.skipped[str(exc)] += 1
                continue
            store.write_archive(key, shown(path, style), now, "archive", f"{len(names)} members", scan_id)
            for name in names:
                member_key = file_key(path, name)
                fresh.add(member_key)
                archive_of[member_key] = key
                jobs.append(FileJob(member_key, str(path), shown(path, style, name), name, request.options))
            continue
        known_results, known_digest = store.stored_results(key) if state == GROWN else (0, None)
        summary.counts[state if state != GROWN or known_digest else CHANGED] += 1
        prints[key] = now
        if key not in known:
            fresh.add(key)
        jobs.append(FileJob(key, str(path), shown(path, style), None, request.options, known_results, known_digest,
                            size=now.size))
    return jobs, prints, archive_of, fresh


def _skip_now(store: Store, key: str, path_shown: str, reason: str, scan_id: int, summary: ScanSummary) -> None:
    store.write(FileOutcome(key, path_shown, SKIPPED, reason=reason), None, scan_id)
    summary.counts["skipped"] += 1
    summary.skipped[reason] += 1

