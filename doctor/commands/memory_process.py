"""The process-memory side of `doctor memory`: --self, --sample, --snapshot, --deep, --compare.

For a recording on disk the process is doctor's own; inside a host (`doctor.attach`)
the same collectors read the host process.
"""

from __future__ import annotations

import sys
from pathlib import Path

from doctor import exitcodes
from doctor.process import (
    SnapshotLoadError,
    SnapshotRefused,
    collect_process_diagnostics,
    compare_snapshots,
    take_samples,
    write_tracemalloc_snapshot,
)
from doctor.process.format import format_byte_delta


def collect_for_command(args, session=None):
    """Process diagnostics as the flags ask; a snapshot's path and warning go to stderr.

    With --deep, the session's history is loaded into memory once and sized with
    pympler: what the history would weigh held live by a Python host.
    """
    samples = take_samples() if args.sample else None
    if args.snapshot:
        try:
            result = write_tracemalloc_snapshot()
        except SnapshotRefused as exc:
            print(f"doctor memory: snapshot refused: {exc}", file=sys.stderr)
        else:
            print(f"Heap snapshot written: {result.path}", file=sys.stderr)
            if result.note:
                print(result.note, file=sys.stderr)
            print(result.warning, file=sys.stderr)
    history = list(session.history()) if args.deep and session is not None else None
    return collect_process_diagnostics(history=history, deep=args.deep, samples=samples,
                                       top_types=10 if args.deep else 0)


def compare_snapshots_command(older: Path, newer: Path, top: int = 20) -> int:
    """`doctor memory --compare A B`: where allocations grew between two snapshots."""
    try:
        diffs = compare_snapshots(older, newer, top=top)
    except SnapshotLoadError as exc:
        print(f"doctor memory: {exc}", file=sys.stderr)
        return exitcodes.USAGE_OR_INPUT
    print(f"Top {len(diffs)} allocation changes from {older} to {newer}")
    for diff in diffs:
        print(f"  {format_byte_delta(diff.size_delta):>12}  {diff.count_delta:+8d} blocks  {diff.location}")
    return exitcodes.OK
