"""Reports for the TUI tests, built the way `doctor memory` builds them, with time and settings fixed."""

from __future__ import annotations

import shutil
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from doctor.assemble import ReportOptions, report_for_session
from doctor.sources.registry import open_session
from doctor.spill.audit import audit_spill
from doctor.spill.pointers import pointers_for
from doctor.spill.resolve import SpillLocator

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"  # frozen copies of two Qwen 0.24.4 recordings
FIXED_NOW = datetime(2026, 1, 15, 12, 0, tzinfo=timezone.utc)
OPTIONS = ReportOptions(use_default_settings_files=False, env={})


def relative_session(name: str) -> Path:
    """The session path relative to the repository root (tests chdir there): stable "short" paths."""
    return (DATA / name / "session.jsonl").relative_to(ROOT)


def build(path: Path):
    """(report, session) for a session file, audit dated FIXED_NOW, no user settings."""
    session = open_session(path)
    report = report_for_session(session, OPTIONS)
    locator = SpillLocator(session.path, spill_roots=[], session_roots=session.spill_roots)
    audit = audit_spill(session, pointers_for(session, report.retention), locator, now=FIXED_NOW)
    return replace(report, spill=audit), session


def copy_recording(name: str, target: Path) -> Path:
    """A writable copy of a recording with its spill files (for follow tests)."""
    destination = target / name
    shutil.copytree(DATA / name, destination)
    return destination / "session.jsonl"
