"""One `doctor scan`: decide what changed, run the jobs on an engine, commit finished files in groups.

Deciding is cheap and happens here (stat, and 2 × 16 KB digests, per file);
reading and measuring is the jobs' work. Unchanged files cost nothing more; a
session that grew by appends is re-read by its job, which sends back only the
rows after the ones already stored when those still hold (the analysis needs the
whole file: a rewind or compaction can change what earlier records mean).

Finished files wait in a group that is committed when it holds GROUP_FILES files or
its oldest file has waited GROUP_SECONDS (checked as each file arrives), and at the
end. Ctrl-C, SIGTERM and SIGHUP are taken only while the scan waits for its workers
(`stopping`): the group of finished files is committed, the workers are stopped, and
the scan is marked interrupted.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from doctor.triage import archives, stopping
from doctor.triage.fingerprint import CHANGED, GROWN, NEW, UNCHANGED, Fingerprint, compare, fingerprint
from doctor.triage.inputs import LeftOut, file_key, folder_keys, shown
from doctor.triage.rows import ARCHIVE, GONE, NOT_SESSION, SKIPPED, FileJob, FileOutcome
from doctor.triage.store import FileWrite, Store, ctrl_c_as_interrupt

GROUP_FILES = 64  # at ~0.5 ms a file in a group (3.6 ms alone), more per group saves little
GROUP_SECONDS = 1.0  # what a hard kill may cost: about a second of the workers' output
GROUP_ROWS = 200_000  # result rows held before a commit whatever the count (memory stays bounded)
REPLAYED = "replayed"  # an unchanged file read again for the replay inputs it had none of (--replay)


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
    labels: dict = field(default_factory=dict)  # --label KEY=VALUE: recorded on the scan and every file given
    walked: frozenset = frozenset()  # folder keys of the folders walked whole (inputs.walked_folders)
    force: bool = False  # read every file again, changed or not
    replay: bool = False  # store the replay inputs; an unchanged file whose session has none is read again


@dataclass(frozen=True)
class _Planned:
    """What a job's file row will say besides its outcome."""

    fingerprint: Fingerprint | None
    archive_key: str | None
    folder_keys: str | None
    fresh: bool  # the database holds no row of it


@dataclass
class _Plan:
    jobs: list[FileJob] = field(default_factory=list)
    planned: dict[str, _Planned] = field(default_factory=dict)
    states: dict[str, str] = field(default_factory=dict)  # NEW / CHANGED / GROWN / members, counted at commit


class _Group:
    """Finished files not committed yet (a file that comes twice, as a tar member named twice, replaces
    its first outcome in the same group)."""

    def __init__(self, store: Store, scan_id: int, plan: _Plan, summary: ScanSummary):
        self.store, self.scan_id, self.plan, self.summary = store, scan_id, plan, summary
        self.files: dict[str, FileWrite] = {}
        self.rows = 0
        self.oldest = 0.0
        self.committed: set[str] = set()

    def add(self, outcome: FileOutcome) -> None:
        planned = self.plan.planned[outcome.key]
        if not self.files:
            self.oldest = time.monotonic()
        fresh = planned.fresh and outcome.key not in self.committed
        self.files[outcome.key] = FileWrite(outcome, planned.fingerprint, planned.archive_key, planned.folder_keys,
                                            fresh)
        self.rows += len(outcome.results)
        if (len(self.files) >= GROUP_FILES or self.rows >= GROUP_ROWS
                or time.monotonic() - self.oldest >= GROUP_SECONDS):
            self.commit()

    def commit(self) -> None:
        if not self.files:
            return
        writes = list(self.files.values())
        counts = self.summary.counts
        counts["results_written"] += self.store.write_group(writes, self.scan_id)
        for write in writes:
            outcome = write.outcome
            if outcome.key not in self.committed:
                counts[self.plan.states.get(outcome.key, NEW)] += 1
            self.committed.add(outcome.key)
            if outcome.status == SKIPPED:
                counts["skipped"] += 1
                self.summary.skipped[outcome.reason] += 1
            elif outcome.status == NOT_SESSION:
                counts["not_sessions"] += 1
        self.files.clear()
        self.rows = 0


def scan(store: Store, request: ScanRequest) -> ScanSummary:
    """Scan `request.files` into `store`. A stop signal ends it with `stopping.Stopped` (a
    KeyboardInterrupt) once the finished files are committed and the workers stopped."""
    summary = ScanSummary()
    engine = request.engine or _local_pool()
    # archive members stay unpacked until every job is done, and are removed however the scan ends
    with stopping.handled() as stops, ctrl_c_as_interrupt(), archives.Unpacked() as unpacked:
        scan_id = store.begin_scan(engine.name)
        store.record_labels(scan_id, request.labels, [file_key(path) for path in request.files])
        known = store.known_files()
        lacking = store.files_without_replay() if request.replay else frozenset()
        group = None
        try:
            plan = _plan(store, request, known, lacking, summary, scan_id, unpacked, engine.prepare)
            stops.check()
            group = _Group(store, scan_id, plan, summary)
            for outcome in stops.while_waiting(engine.run(plan.jobs)):
                group.add(outcome)
            group.commit()
            _mark_gone(store, request, known, summary, scan_id)
        except KeyboardInterrupt:
            summary.interrupted = True
            if group is not None:
                group.commit()  # every finished file is kept
            raise
        finally:
            store.finish_scan(scan_id, summary.counts, summary.interrupted)
    return summary


def _local_pool():
    from doctor.triage.engines import LocalPool

    return LocalPool()


def _plan(store: Store, request: ScanRequest, known: dict, lacking: frozenset, summary: ScanSummary, scan_id: int,
          unpacked: archives.Unpacked, prepare_engine: Callable[[], None]) -> _Plan:
    """The jobs to run and, per file, what its `files` row will say; unchanged files are counted here
    (and their stored paths re-shown when --paths changed), archives' own rows written and their
    members unpacked into `unpacked`. `lacking`: the files (archives, for their members) whose sessions
    have no replay inputs, read again when the scan stores them. `prepare_engine` is called once two
    files are to be read, so the workers start while the rest is planned."""
    plan = _Plan()
    style = request.path_style
    restyled: list[tuple[str, str]] = []
    for path in request.files:
        if len(plan.jobs) >= 2:
            prepare_engine()
        summary.counts["seen"] += 1
        if isinstance(path, LeftOut):
            _skip_now(store, path.path, path.reason, style, known, summary, scan_id)
            continue
        key = file_key(path)
        folders = folder_keys(path)
        try:
            now = fingerprint(str(path))
        except OSError as exc:
            _skip_now(store, path, f"cannot read: {exc.strerror or exc}", style, known, summary, scan_id)
            continue
        before = known.get(key)
        path_shown = shown(path, style)
        state = compare(str(path), now, before.fingerprint if before else None)
        if state == UNCHANGED and before.shown != path_shown and archives.is_archive(path):
            state = CHANGED  # its members' stored paths start with the archive's: read them again
        if request.force and state != NEW:
            state = CHANGED
        if state == UNCHANGED and key in lacking:
            state = REPLAYED  # read whole again, for the replay inputs it has none of
        if state == UNCHANGED:
            summary.counts["unchanged"] += 1
            if before.shown != path_shown:
                restyled.append((key, path_shown))
            continue
        if archives.is_archive(path):
            _plan_archive(store, request, plan, path, key, now, state, folders, summary, scan_id, unpacked)
            continue
        known_results, known_digest = store.stored_results(key) if state == GROWN else (0, None)
        plan.states[key] = state if state != GROWN or known_digest else CHANGED
        plan.planned[key] = _Planned(now, None, folders, fresh=before is None)
        plan.jobs.append(FileJob(key, str(path), path_shown, None, request.options, known_results, known_digest,
                                 size=now.size, replay=request.replay))
    store.restyle(restyled)
    return plan


def _skip_now(store: Store, path: Path, reason: str, style: str, known: dict, summary: ScanSummary,
              scan_id: int) -> None:
    """A file the scan does not read (not a regular file, unreadable): its row says why, at once."""
    key = file_key(path)
    store.write_group([FileWrite(FileOutcome(key, shown(path, style), SKIPPED, reason=reason),
                                 folder_keys=folder_keys(path), fresh=key not in known)], scan_id)
    summary.counts["skipped"] += 1
    summary.skipped[reason] += 1


def _plan_archive(store: Store, request: ScanRequest, plan: _Plan, path: Path, key: str, now: Fingerprint,
                  state: str, folders: str, summary: ScanSummary, scan_id: int, unpacked: archives.Unpacked) -> None:
    """Unpack the archive once: a job per member kept, a skipped row (with the archive's key) per member
    left out, written at once."""
    style = request.path_style
    summary.counts[state if state in (NEW, REPLAYED) else CHANGED] += 1
    try:
        unpacking = archives.unpack(path, unpacked)
    except (OSError, ValueError) as exc:
        reason = str(exc) if isinstance(exc, ValueError) else f"cannot read: {exc.strerror or exc}"
        store.write_archive(key, shown(path, style), now, SKIPPED, reason, scan_id, folders)
        summary.counts["skipped"] += 1
        summary.skipped[reason] += 1
        return
    store.write_archive(key, shown(path, style), now, ARCHIVE, unpacking.describe(), scan_id, folders)
    left_out: set[str] = set()  # a tar may hold a name twice: a row written here is replaced, not inserted
    for member in unpacking.members:
        member_key = file_key(path, member.name)
        member_shown = shown(path, style, member.name)
        planned = plan.planned.get(member_key)
        if member.path is None:
            outcome = FileOutcome(member_key, member_shown, SKIPPED, reason=member.reason)
            store.write_group([FileWrite(outcome, archive_key=key,
                                         fresh=member_key not in left_out and planned is None)], scan_id)
            left_out.add(member_key)
            if planned is not None:
                plan.planned[member_key] = _Planned(None, key, None, fresh=False)
            summary.counts["skipped"] += 1
            summary.skipped[member.reason] += 1
            continue
        plan.states[member_key] = "members"  # the archive itself is counted new or changed, not its members
        # the archive's write dropped its old members: fresh unless this scan already wrote the name
        fresh = member_key not in left_out and planned is None
        plan.planned[member_key] = _Planned(None, key, None, fresh=fresh)
        plan.jobs.append(FileJob(member_key, str(member.path), member_shown, member.name, request.options,
                                 size=member.size, replay=request.replay))


def _mark_gone(store: Store, request: ScanRequest, known: dict, summary: ScanSummary, scan_id: int) -> None:
    """Files earlier scans saw under a folder this scan walked whole, and this scan did not see."""
    if not request.walked:
        return
    seen = {file_key(path) for path in request.files}  # a LeftOut is keyed by its path (LeftOut.__fspath__)
    gone = [key for key, before in known.items()
            if key not in seen and before.status != GONE and before.archive_key is None and before.folder_keys
            and not request.walked.isdisjoint(before.folder_keys.split())]
    summary.counts["gone"] += store.mark_gone(gone, scan_id)
