"""`doctor.slash.handle`: Qwen's `/doctor memory` grammar, messages and kinds for Python hosts."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import doctor
import doctor.slash
from doctor.live import slash  # the implementation, whose collaborators the tests replace
from doctor.process.model import Risk
from doctor.sources.registry import open_session

RECORDING = Path(__file__).resolve().parent / "recordings" / "qwen" / "oversized-alarm" / "session.jsonl"
USAGE = "/doctor memory [--json] [--sample] [--snapshot]"


@pytest.fixture(scope="module")
def session():
    return doctor.attach(list(open_session(RECORDING).history()))


@pytest.mark.parametrize(
    ("line", "unknown"),
    [
        ("/doctor memory --bogus", "--bogus"),
        ("/doctor memory --json extra --JSON", "extra, --JSON"),
        ("/doctor   memory\t--sample  -x   y", "-x, y"),
        ("/doctor memory json", "json"),
    ],
)
def test_unknown_arguments_get_qwens_message(session, line, unknown):
    result = slash.handle(line, session)
    assert result == slash.SlashResult(f"Unknown argument(s): {unknown}. Usage: {USAGE}", "error")


def test_json_is_the_cli_report_with_the_host_process(session):
    result = slash.handle("/doctor memory --json", session)
    data = json.loads(result.text)
    expected = session.report().to_dict()
    assert data["toolResultRetention"] == expected["toolResultRetention"]
    assert data["retention"] == expected["retention"]
    assert data["process"]["pid"] == __import__("os").getpid()
    assert data["toolResultRetention"]["oversizedResultCount"] == 2
    assert result.kind == "info"


def test_text_starts_with_qwens_retention_lines(session):
    result = slash.handle("/doctor memory", session)
    assert "Tool result retention\n  Tool results in history: 3\n" in result.text
    assert "Oversized results (above tool budget): 2" in result.text


def test_process_risks_make_a_warning(session, monkeypatch):
    from doctor.process import collect as collect_module

    def risky(**kwargs):
        real = collect_module.collect_process_diagnostics(**kwargs)
        analysis = type(real.analysis)((Risk("fd-leak", "too many files"),), "1 potential leak indicator(s) found.")
        return __import__("dataclasses").replace(real, analysis=analysis)

    monkeypatch.setattr(slash, "collect_process_diagnostics", risky)
    assert slash.handle("/doctor memory", session).kind == "warning"
    assert slash.handle("/doctor memory --json", session).kind == "warning"


def test_sample_takes_the_long_text_path_even_with_json(session, monkeypatch):
    calls = []
    monkeypatch.setattr(slash, "take_samples", lambda: calls.append(1))
    result = slash.handle("/doctor memory --json --sample", session)
    assert calls == [1]
    assert result.kind == "info" and result.text.startswith("doctor memory")  # text, as in Qwen


def test_snapshot_written_or_refused(session, monkeypatch, tmp_path):
    from doctor.process import SnapshotRefused
    from doctor.process.snapshots import SnapshotResult

    monkeypatch.setattr(slash, "write_tracemalloc_snapshot", lambda: SnapshotResult(tmp_path / "s.msgpack", False))
    written = slash.handle("/doctor memory --snapshot", session)
    assert written.kind == "info" and f"Heap snapshot written: {tmp_path / 's.msgpack'}" in written.text

    def refuse():
        raise SnapshotRefused("memory pressure is high")

    monkeypatch.setattr(slash, "write_tracemalloc_snapshot", refuse)
    refused = slash.handle("/doctor memory --snapshot", session)
    assert refused.kind == "error" and refused.text.endswith("Heap snapshot failed: memory pressure is high")


def test_other_lines(session):
    assert slash.handle("/doctor", session) == slash.SlashResult(f"Usage: {USAGE}", "info")
    assert slash.handle("/doctor cpu-profile", session).kind == "error"
    assert slash.handle("/help", session).kind == "error"


def test_interactive_host_gets_the_tui_and_its_terminal_back(session, monkeypatch):
    """The real DoctorApp runs (headless) over the live provider until `q`."""
    from doctor.tui.app import DoctorApp

    seen = []

    def run_headless(self, *args, **kwargs):
        async def drive():
            async with self.run_test(size=(120, 40)) as pilot:
                for _ in range(50):
                    await pilot.pause(0.05)
                    if getattr(self.screen, "report", None) is not None:
                        break
                seen.append(self.screen.report)
                await pilot.press("q")

        asyncio.run(drive())

    monkeypatch.setattr(DoctorApp, "run", run_headless)
    result = slash.handle("/doctor memory", session, interactive=True)
    assert seen and seen[0].qwen_stats.tool_result_count == 3
    assert result == slash.SlashResult(
        "doctor memory closed: 3 tool results, 173,973 chars retained (≈43,494 tokens), largest 90,200, 2 oversized"
    )


def test_textual_host_gets_the_screen_pushed_and_refreshed(session, monkeypatch):
    from textual.app import App

    from doctor.live.provider import LiveSessionProvider
    from doctor.tui.screens import MemoryScreen

    monkeypatch.setitem(LiveSessionProvider.__init__.__kwdefaults__, "refresh_interval", 0.1)

    async def drive() -> MemoryScreen:
        app = App()
        async with app.run_test(size=(120, 40)) as pilot:
            assert slash.handle("/doctor memory", session, interactive=True, app=app).kind == "info"
            for _ in range(100):
                await pilot.pause(0.05)
                if isinstance(app.screen, MemoryScreen) and app.screen.refreshes:
                    break
            return app.screen

    screen = asyncio.run(drive())
    assert isinstance(screen, MemoryScreen)
    assert screen.report.qwen_stats.tool_result_count == 3
    assert screen.refreshes >= 1


def test_public_entry_point_is_the_live_implementation():
    assert doctor.slash.handle is slash.handle and doctor.slash.SlashResult is slash.SlashResult
