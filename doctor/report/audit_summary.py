"""The spill audit as reports show it: findings grouped into the categories `--check` fails on, paths presented.

`AuditReport.to_json()` names files by their full paths, which is right for
`doctor spill verify` on one's own machine but not for a report pasted into a
ticket: `presented_audit_json` rewrites every path (and the paths quoted inside
finding messages) in the style the user chose with `--paths`.
"""

from __future__ import annotations

from doctor.report.paths import present_path
from doctor.spill import audit

# Finding kinds behind each category, in the order reports list them.
AUDIT_CATEGORIES = {
    "missing": (audit.MISSING, audit.NOT_PERSISTED, audit.UNREADABLE, audit.NOT_REGULAR),
    "integrity": (audit.DIGEST_MISMATCH, audit.SIZE_MISMATCH, audit.PREVIEW_MISMATCH),
    "privacy": (audit.PERMISSIONS, audit.OUTSIDE_ROOT),
    "budget": (audit.OVER_FILE_CAP, audit.OVER_SESSION_BUDGET),
}


def problem_kinds(report: audit.AuditReport) -> dict[str, int]:
    """Counts of findings that are problems (notes left out), by kind."""
    counts: dict[str, int] = {}
    for finding in report.findings:
        if finding.severity != audit.INFO:
            counts[finding.kind] = counts.get(finding.kind, 0) + 1
    return counts


def category_counts(report: audit.AuditReport) -> dict[str, int]:
    """Problem findings per category (zeros included, so a clean audit says so)."""
    kinds = problem_kinds(report)
    return {category: sum(kinds.get(kind, 0) for kind in members) for category, members in AUDIT_CATEGORIES.items()}


def presented_audit_json(data: dict, style: str) -> dict:
    """A copy of `AuditReport.to_json()` with each path shown in `style` (short, full or hash)."""
    if style == "full":
        return data
    known: set[str] = set()

    def show(path: str | None) -> str | None:
        if path:
            known.add(path)
        return present_path(path, style)

    pointers = []
    for pointer in data["pointers"]:
        resolution = pointer["resolution"]
        pointers.append({
            **pointer,
            "path": show(pointer["path"]),
            "resolution": {**resolution, "found": show(resolution["found"]), "realPath": show(resolution["realPath"])},
        })
    orphans = [show(path) for path in data["orphans"]]
    session_path = show(data["sessionPath"])
    findings = [{**finding, "path": show(finding["path"])} for finding in data["findings"]]
    for finding in findings:
        finding["message"] = _paths_replaced(finding["message"], known, style)
    return {**data, "sessionPath": session_path, "pointers": pointers, "findings": findings, "orphans": orphans}


def _paths_replaced(message: str, paths: set[str], style: str) -> str:
    """Finding messages quote paths ("resolves to /…"): show those in the chosen style too."""
    for path in sorted(paths, key=len, reverse=True):
        if path in message:
            message = message.replace(path, present_path(path, style))
    return message
