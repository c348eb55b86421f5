"""tracemalloc snapshots: Qwen's safety rules on disk, and `--compare` on real snapshots."""

import os
import pickle
import stat
import sys
import tracemalloc
from datetime import datetime, timedelta, timezone
from pathlib import Path

import msgspec
import pytest

from doctor.process.model import MemoryLimit
from doctor.process.snapshots import (
    SENSITIVE_DATA_WARNING,
    STARTED_TRACING_NOTE,
    SnapshotLoadError,
    SnapshotRefused,
    compare_snapshots,
    default_snapshot_directory,
    load_snapshot,
    snapshot_timestamp,
    write_tracemalloc_snapshot,
)

MIB = 1024 * 1024
GIB = 1024 * MIB
START = datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc)

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self):
        self.now = START

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def snapshot_dir(tmp_path):
    return tmp_path / "state" / "memory-snapshots"


def snapshots_in(directory):
    return sorted(path.name for path in directory.iterdir() if path.suffix == ".msgpack")


@posix_only
def test_snapshot_is_private_named_like_qwens_and_loadable(stage, clock, snapshot_dir, tracing_restored):
    result = write_tracemalloc_snapshot(directory=snapshot_dir, probes=stage(clock=clock))

    assert result.path.name == f"doctor-tracemalloc-{os.getpid()}-2025-01-02T03-04-05-678Z.msgpack"
    assert stat.S_IMODE(snapshot_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(result.path.stat().st_mode) == 0o600
    assert isinstance(load_snapshot(result.path), tracemalloc.Snapshot)
    assert result.to_dict()["warning"] == SENSITIVE_DATA_WARNING
    assert "file path" in SENSITIVE_DATA_WARNING


@posix_only
def test_snapshot_file_is_private_before_any_byte_is_written(stage, clock, snapshot_dir, monkeypatch, tracing_restored):
    modes_when_dumping = []
    real_fdopen = os.fdopen

    def watching_fdopen(descriptor, *args, **kwargs):
        modes_when_dumping.append(stat.S_IMODE(os.fstat(descriptor).st_mode))
        return real_fdopen(descriptor, *args, **kwargs)

    monkeypatch.setattr(os, "fdopen", watching_fdopen)
    write_tracemalloc_snapshot(directory=snapshot_dir, probes=stage(clock=clock))
    assert modes_when_dumping == [0o600]


@posix_only
def test_an_existing_open_directory_is_made_private(stage, clock, snapshot_dir, tracing_restored):
    snapshot_dir.mkdir(parents=True, mode=0o755)
    snapshot_dir.chmod(0o755)
    write_tracemalloc_snapshot(directory=snapshot_dir, probes=stage(clock=clock))
    assert stat.S_IMODE(snapshot_dir.stat().st_mode) == 0o700


def test_tracing_is_started_when_off_and_the_user_is_told(stage, clock, snapshot_dir, tracing_restored):
    if tracemalloc.is_tracing():
        tracemalloc.stop()
    result = write_tracemalloc_snapshot(directory=snapshot_dir, probes=stage(clock=clock))
    assert tracemalloc.is_tracing()
    assert result.started_tracing
    assert result.to_dict()["note"] == STARTED_TRACING_NOTE
    assert "only covers allocations made from now on" in STARTED_TRACING_NOTE

    clock.advance(61)
    again = write_tracemalloc_snapshot(directory=snapshot_dir, probes=stage(clock=clock))
    assert not again.started_tracing and again.note is None


def test_one_snapshot_per_minute_per_directory(stage, clock, snapshot_dir, tmp_path, tracing_restored):
    probes = stage(clock=clock)
    write_tracemalloc_snapshot(directory=snapshot_dir, probes=probes)

    clock.advance(20.5)
    with pytest.raises(SnapshotRefused) as refused:
        write_tracemalloc_snapshot(directory=snapshot_dir, probes=probes)
    assert str(refused.value) == (
        "Snapshot rate limit: wait 40s before writing another snapshot in this directory."
    )
    assert len(snapshots_in(snapshot_dir)) == 1

    write_tracemalloc_snapshot(directory=tmp_path / "elsewhere", probes=probes)  # other directory

    clock.advance(39.5)
    write_tracemalloc_snapshot(directory=snapshot_dir, probes=probes)
    assert len(snapshots_in(snapshot_dir)) == 2


def test_only_the_five_newest_snapshots_are_kept(stage, clock, snapshot_dir, tracing_restored):
    snapshot_dir.mkdir(parents=True)
    unrelated = snapshot_dir / "notes.txt"
    unrelated.write_text("keep me")
    old_names = []
    for age_days in range(6, 0, -1):  # six older snapshots, oldest first
        moment = START - timedelta(days=age_days)
        path = snapshot_dir / f"doctor-tracemalloc-1-{snapshot_timestamp(moment)}.msgpack"
        path.write_bytes(b"")
        os.utime(path, (moment.timestamp(), moment.timestamp()))
        old_names.append(path.name)

    clock.now = datetime.now(timezone.utc)  # the new file's mtime is now; keep the name in step
    result = write_tracemalloc_snapshot(directory=snapshot_dir, probes=stage(clock=clock))

    assert snapshots_in(snapshot_dir) == sorted([*old_names[-4:], result.path.name])
    assert unrelated.exists()


def test_refused_under_high_memory_pressure_and_nothing_written(stage, clock, snapshot_dir):
    cgroup = MemoryLimit(bytes=4 * GIB, source="cgroup v2")
    probes = stage(clock=clock, rss=lambda: int(3.48 * GIB), cgroup_limit=lambda: cgroup)
    with pytest.raises(SnapshotRefused, match=r"^Snapshot skipped: memory pressure is already high \(RSS is 87\.0% of the cgroup v2 limit\)"):
        write_tracemalloc_snapshot(directory=snapshot_dir, probes=probes)
    assert not snapshot_dir.exists()


def test_just_below_the_pressure_threshold_is_allowed(stage, clock, snapshot_dir, tracing_restored):
    cgroup = MemoryLimit(bytes=100 * MIB, source="cgroup v1")
    probes = stage(clock=clock, rss=lambda: 85 * MIB - 1, cgroup_limit=lambda: cgroup)
    assert write_tracemalloc_snapshot(directory=snapshot_dir, probes=probes).path.exists()


def test_refused_when_the_disk_would_be_left_with_less_than_512_mib(stage, clock, snapshot_dir, tracing_restored):
    probes = stage(clock=clock, free_disk=lambda directory: 512 * MIB)
    with pytest.raises(SnapshotRefused, match="^Insufficient free disk space for tracemalloc snapshot; skipping to avoid filling the disk.$"):
        write_tracemalloc_snapshot(directory=snapshot_dir, probes=probes)
    assert snapshots_in(snapshot_dir) == []


def test_a_refused_snapshot_does_not_start_tracing(stage, clock, snapshot_dir, tracing_restored):
    if tracemalloc.is_tracing():
        tracemalloc.stop()
    with pytest.raises(SnapshotRefused):
        write_tracemalloc_snapshot(directory=snapshot_dir, probes=stage(clock=clock, free_disk=lambda d: 0))
    assert not tracemalloc.is_tracing()


def test_refused_when_free_space_cannot_be_read(stage, clock, snapshot_dir, tracing_restored):
    def unreadable(directory):
        raise OSError("statvfs failed")

    with pytest.raises(SnapshotRefused, match="^Unable to check available disk space for tracemalloc snapshot: statvfs failed$"):
        write_tracemalloc_snapshot(directory=snapshot_dir, probes=stage(clock=clock, free_disk=unreadable))


def test_compare_finds_the_allocation_made_between_two_snapshots(stage, clock, snapshot_dir, tracing_restored):
    tracemalloc.start()
    probes = stage(clock=clock)
    before = write_tracemalloc_snapshot(directory=snapshot_dir, probes=probes).path
    clock.advance(60)
    ballast = [bytes(1024) for _ in range(2048)]  # noqa: F841 - the allocation to find
    after = write_tracemalloc_snapshot(directory=snapshot_dir, probes=probes).path

    differences = compare_snapshots(before, after, top=5)

    biggest = differences[0]
    assert biggest.location == f"{__file__}:{line_of('ballast = [bytes(1024)')}"
    assert biggest.size_delta >= 2048 * 1024
    assert biggest.count_delta >= 2048
    assert biggest.to_dict().keys() == {"location", "sizeDelta", "countDelta", "size", "count"}
    assert len(differences) <= 5
    assert [abs(d.size_delta) for d in differences] == sorted((abs(d.size_delta) for d in differences), reverse=True)


def test_a_pickle_is_refused_unread_and_never_run(tmp_path):
    """`--compare` reads files someone sent: a pickle (an older doctor's snapshot, or one built to
    run code) is not unpickled at all."""
    sentinel = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (Path.touch, (sentinel,))

    hostile = tmp_path / "doctor-tracemalloc-1-x.pickle"
    hostile.write_bytes(pickle.dumps(Payload()))
    with pytest.raises(SnapshotLoadError, match=r"doctor-tracemalloc-1-x\.pickle: not a readable tracemalloc snapshot "
                                                r"\(an older doctor's pickle, which doctor no longer reads"):
        compare_snapshots(hostile, hostile)
    assert not sentinel.exists()
    snapshot = tracemalloc.Snapshot((), 1)
    old = tmp_path / "old.pickle"
    snapshot.dump(str(old))  # what an older doctor wrote
    with pytest.raises(SnapshotLoadError, match="an older doctor's pickle"):
        load_snapshot(old)


def test_data_of_another_shape_is_refused_not_crashed(tmp_path):
    wrong = tmp_path / "wrong.msgpack"
    wrong.write_bytes(msgspec.msgpack.encode(["doctor tracemalloc snapshot", 1, 1, [[0, "big", [], None]]]))
    with pytest.raises(SnapshotLoadError, match=r"wrong\.msgpack: not a readable tracemalloc snapshot \(Expected `int`"):
        load_snapshot(wrong)
    other = tmp_path / "other.msgpack"
    other.write_bytes(msgspec.msgpack.encode(["something else", 1, 1, []]))
    with pytest.raises(SnapshotLoadError, match="not a tracemalloc snapshot doctor wrote"):
        load_snapshot(other)
    frameless = tmp_path / "frameless.msgpack"  # the right types, traces that cannot be grouped by line
    frameless.write_bytes(msgspec.msgpack.encode(["doctor tracemalloc snapshot", 1, 1, [[0, 64, [], 0]]]))
    with pytest.raises(SnapshotLoadError, match="snapshots cannot be compared"):
        compare_snapshots(frameless, frameless)


def test_a_written_snapshot_reads_back_as_the_one_taken(tmp_path, stage, clock, tracing_restored):
    tracemalloc.start(3)
    ballast = [bytes(512) for _ in range(100)]  # noqa: F841
    path = write_tracemalloc_snapshot(directory=tmp_path / "s", probes=stage(clock=clock)).path
    taken = tracemalloc.take_snapshot()
    read = load_snapshot(path)
    assert read.traceback_limit == taken.traceback_limit == 3
    assert path.read_bytes()[:1] != b"\x80"  # not a pickle
    line = line_of("ballast = [bytes(512)")
    mine = lambda snapshot: sorted(  # noqa: E731
        (trace.size, [(frame.filename, frame.lineno) for frame in trace.traceback], trace.traceback.total_nframe)
        for trace in snapshot.traces if trace.traceback[-1].lineno == line and trace.traceback[-1].filename == __file__)
    assert mine(read) and mine(read) == mine(taken)


def test_a_file_that_is_not_a_snapshot_names_itself(tmp_path):
    junk = tmp_path / "junk.msgpack"
    junk.write_text("hello")
    with pytest.raises(SnapshotLoadError, match="junk.msgpack: not a readable tracemalloc snapshot"):
        load_snapshot(junk)
    with pytest.raises(SnapshotLoadError, match="missing.msgpack"):
        load_snapshot(tmp_path / "missing.msgpack")


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="XDG layout is for Linux and the BSDs")
def test_default_directory_follows_xdg_state_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert default_snapshot_directory() == tmp_path / "doctor" / "memory-snapshots"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/ignored")
    assert default_snapshot_directory() == Path.home() / ".local" / "state" / "doctor" / "memory-snapshots"


def line_of(text):
    with open(__file__, encoding="utf-8") as source:
        for number, line in enumerate(source, start=1):
            if text in line and "line_of(" not in line:
                return number
    raise AssertionError(f"{text!r} not found")
