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
from doctor.triage.inputs import LeftOut, file_key, shown
from doctor.triage.rows import SKIPPED, FileJob, FileOutcome
from doctor.triage.store import Store, ctrl_c_as_interrupt


@dataclass
class ScanSummary:
    """What this scan did, for the report's first lines and the scans table."""

    counts: Counter = field(default_factory=Counter)  # files seen / new / … / skipped, results_written
    skipped: Counter = field(default_factory=Counter)  # reason -> files skipped in this scan
    interrupted: bool = False


@dataclass(frozen=True)
class ScanRequest:
    files: list  # Paths to scan, and inputs.LeftOut entries to record as skipped
    path_style: str = "short"
    options: object = None  # assemble.ReportOptions shared by every job
    engine: object = None  # an opened engine (engines.open_engine); None: the local pool on all cores


def scan(store: Store, request: ScanRequest) -> ScanSummary:
    summary = ScanSummary()
    engine = request.engine or _local_pool()
    with ctrl_c_as_interrupt(), archives.Unpacked() as unpacked:  # members live until every job is done
        scan_id = store.begin_scan(engine.name)
        known = store.known_files()
        try:
            jobs, prints, archive_of, fresh = _plan(store, request, known, summary, scan_id, unpacked)
            for outcome in engine.run(jobs):
                is_fresh = outcome.key in fresh
                fresh.discard(outcome.key)  # a tar may hold one member name twice: the second replaces the first
                summary.counts["results_written"] += store.write(outcome, prints.get(outcome.key), scan_id,
                                                                 archive_of.get(outcome.key), fresh=is_fresh)
                if outcome.status == SKIPPED:
                    summary.counts["skipped"] += 1
                    summary.skipped[outcome.reason] += 1
        except KeyboardInterrupt:
            summary.interrupted = True
            raise
        finally:
            store.finish_scan(scan_id, summary.counts, summary.interrupted)
    return summary


def _local_pool():
    from doctor.triage.engines import LocalPool

    return LocalPool()


def _plan(store: Store, request: ScanRequest, known: dict, summary: ScanSummary, scan_id: int,
          unpacked: archives.Unpacked):
    """The jobs to run, each file's fingerprint, the archive each member belongs to, and the keys the
    database holds no row of (new files; members of an archive, whose old rows its write dropped)."""
    jobs: list[FileJob] = []
    prints: dict[str, Fingerprint] = {}
    archive_of: dict[str, str] = {}
    fresh: set[str] = set()
    style = request.path_style
    for path in request.files:
        summary.counts["seen"] += 1
        if isinstance(path, LeftOut):
            _skip_now(store, file_key(path.path), shown(path.path, style), path.reason, scan_id, summary)
            continue
        key = file_key(path)
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
            _plan_archive(store, path, key, now, style, scan_id, summary, unpacked, request.options, jobs,
                          archive_of, fresh)
            continue
        known_results, known_digest = store.stored_results(key) if state == GROWN else (0, None)
        summary.counts[state if state != GROWN or known_digest else CHANGED] += 1
        prints[key] = now
        if key not in known:
            fresh.add(key)
        jobs.append(FileJob(key, str(path), shown(path, style), None, request.options, known_results, known_digest,
                            size=now.size))
    return jobs, prints, archive_of, fresh


def _plan_archive(store: Store, path: Path, key: str, now: Fingerprint, style: str, scan_id: int,
                  summary: ScanSummary, unpacked: archives.Unpacked, options, jobs: list, archive_of: dict,
                  fresh: set) -> None:
    """Unpack the archive once: a job per member kept, a skipped row per member left out."""
    try:
        unpacking = archives.unpack(path, unpacked)
    except (OSError, ValueError) as exc:
        reason = str(exc) if isinstance(exc, ValueError) else f"cannot read: {exc.strerror or exc}"
        store.write_archive(key, shown(path, style), now, SKIPPED, reason, scan_id)
        summary.counts["skipped"] += 1
        summary.skipped[reason] += 1
        return
    store.write_archive(key, shown(path, style), now, "archive", unpacking.describe(), scan_id)
    written = set()  # a tar may hold a name twice: a row written here is replaced, not inserted again
    for member in unpacking.members:
        member_key = file_key(path, member.name)
        member_shown = shown(path, style, member.name)
        if member.path is None:
            _skip_now(store, member_key, member_shown, member.reason, scan_id, summary, archive_key=key)
            written.add(member_key)
            fresh.discard(member_key)
            continue
        if member_key not in written:
            fresh.add(member_key)
        archive_of[member_key] = key
        jobs.append(FileJob(member_key, str(member.path), member_shown, member.name, options, size=member.size))


def _skip_now(store: Store, key: str, path_shown: str, reason: str, scan_id: int, summary: ScanSummary,
              archive_key: str | None = None) -> None:
    store.write(FileOutcome(key, path_shown, SKIPPED, reason=reason), None, scan_id, archive_key)
    summary.counts["skipped"] += 1
    summary.skipped[reason] += 1
