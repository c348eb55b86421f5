"""Python process diagnostics: RSS, gc, tracemalloc, pympler sizes and leak-risk rules.

The counterpart of the Node process-memory section of Qwen Code's `/doctor memory`, for
when doctor runs inside a Python agent host or on itself. Headless: nothing here imports
textual or rich.
"""

from doctor.process.collect import collect_process_diagnostics
from doctor.process.deep import DeepSizeTask, deep_size_async, measure_deep_size, summarize_types
from doctor.process.model import ProcessDiagnostics, SampleSeries
from doctor.process.probes import DEFAULT_PROBES, Probes
from doctor.process.sampling import take_samples
from doctor.process.snapshots import (
    SnapshotLoadError,
    SnapshotRefused,
    compare_snapshots,
    write_tracemalloc_snapshot,
)

__all__ = [
    "DEFAULT_PROBES",
    "DeepSizeTask",
    "ProcessDiagnostics",
    "Probes",
    "SampleSeries",
    "SnapshotLoadError",
    "SnapshotRefused",
    "collect_process_diagnostics",
    "compare_snapshots",
    "deep_size_async",
    "measure_deep_size",
    "summarize_types",
    "take_samples",
    "write_tracemalloc_snapshot",
]
