"""The example agent host: `/doctor memory` through the host's own command dispatch and REPL."""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

HOST_DIR = Path(__file__).resolve().parents[2] / "examples" / "agent_host"


@pytest.fixture(scope="module")
def host_module():
    sys.path.insert(0, str(HOST_DIR))
    try:
        import host

        yield host
    finally:
        sys.path.remove(str(HOST_DIR))


@pytest.fixture
def host(host_module, tmp_path):
    from model import ScriptedModel
    from tools import ToolBox

    out = io.StringIO()
    toolbox = ToolBox(workdir=tmp_path, spill_dir=tmp_path / ".spill")
    return host_module.Host(ScriptedModel.from_file(HOST_DIR / "script.json"), toolbox, out=out)


def _json_after(out: io.StringIO, mark: int) -> dict:
    return json.loads(out.getvalue()[mark:])


def test_doctor_memory_through_the_hosts_dispatch(host, tmp_path):
    host.dispatch("/doctor memory --json")
    empty = _json_after(host.out, 0)
    assert empty["toolResultRetention"]["toolResultCount"] == 0

    host.dispatch("list the numbers and look at the table")
    mark = len(host.out.getvalue())
    host.dispatch("/doctor memory --json")
    report = _json_after(host.out, mark)
    stats = report["toolResultRetention"]
    assert stats["toolResultCount"] == 4 and stats["oversizedResultCount"] == 0
    layers = report["retention"]["layers"]
    assert layers["in-tool truncation"] == 1 and layers["persistence gate"] == 1
    assert report["process"]["pid"] == os.getpid()
    assert report["process"]["history"]["entries"] == len(host.history)

    spilled = sorted((tmp_path / ".spill").rglob("*.*"))
    assert {p.suffix for p in spilled} == {".output", ".txt"}
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in spilled)


def test_the_spill_files_pass_doctors_audit(host, tmp_path):
    """The stub's sha256 and the .output pointer resolve: doctor's own spill audit finds them intact."""
    from doctor.sources.base import LoadedSession
    from doctor.spill.audit import audit_spill
    from doctor.spill.pointers import pointers_for
    from doctor.spill.resolve import SpillLocator

    host.dispatch("go")
    report = host.doctor.report()
    session = LoadedSession(agent="python-host", path=None, history=lambda: iter(host.history))
    pointers = pointers_for(session, report.retention)
    audit = audit_spill(session, pointers, SpillLocator(None, session_roots=[tmp_path / ".spill"])).to_json()
    assert audit["ok"] and audit["findings"] == [] and audit["totals"]["resolved"] == len(pointers) == 2
    assert {check["file"]["mode"] for check in audit["pointers"]} == {"0600"}
    persisted = next(check for check in audit["pointers"] if check["kind"] == "qwen-persisted")
    assert persisted["sha256"] == persisted["file"]["sha256"]


def test_unknown_arguments_and_commands(host):
    host.dispatch("/doctor memory --verbose")
    host.dispatch("/nope")
    lines = host.out.getvalue().splitlines()
    assert lines[0] == "[error] Unknown argument(s): --verbose. Usage: /doctor memory [--json] [--sample] [--snapshot]"
    assert lines[1].startswith("[error] Unknown command /nope")


def test_repl_on_stdin(tmp_path):
    """The host as a user runs it: lines on stdin, answers on stdout."""
    lines = "go\n/doctor memory\n/doctor memory --oops\n/quit\nnever read\n"
    done = subprocess.run(
        [sys.executable, str(HOST_DIR / "host.py"), "--workdir", str(tmp_path)],
        input=lines, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Tool result retention\n  Tool results in history: 4\n" in out
    assert "Memory Diagnostics" in out
    assert "[error] Unknown argument(s): --oops." in out
    assert "never read" not in out


def test_repl_report_audits_the_hosts_spill_files(tmp_path):
    """`/doctor memory` typed at the host's prompt audits the files its tools spilled (issue 15 item 4)."""
    done = subprocess.run(
        [sys.executable, str(HOST_DIR / "host.py"), "--workdir", str(tmp_path)],
        input="go\n/doctor memory --json\n/quit\n", capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    body = done.stdout[done.stdout.index("{"):done.stdout.rindex("}") + 1]
    audit = json.loads(body)["spill"]
    spilled = sorted(p.name for p in (tmp_path / ".spill").rglob("*.*"))
    assert audit["ok"] and audit["findings"] == [] and audit["orphans"] == []
    assert audit["totals"]["pointers"] == audit["totals"]["resolved"] == len(spilled) == 2
    assert sorted(Path(check["resolution"]["found"]).name for check in audit["pointers"]) == spilled
    assert {check["file"]["mode"] for check in audit["pointers"]} == {"0600"}


def test_tui_pages_a_spilled_output_of_the_live_host(host, tmp_path):
    """The host's `/doctor memory` TUI: 3, Down, Enter, Enter pages the file the shell result spilled."""
    import asyncio

    from doctor.live.provider import LiveSessionProvider
    from doctor.tui.app import DoctorApp
    from doctor.tui.screens.detail import ResultDetailScreen
    from doctor.tui.screens.pager import PagerScreen
    from doctor.tui.widgets.pager_view import PagerView
    from doctor.tui.widgets.tables import ResultsTable
    from tests.tui.test_journeys import loaded, text_of, wait_for

    host.dispatch("go")
    spilled = next((tmp_path / ".spill").glob("run_shell_command_*.output"))

    async def journey():
        app = DoctorApp(LiveSessionProvider(host.doctor, process=False), keymap={})
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await loaded(pilot)
            assert "not audited" not in text_of(screen.query_one("#spill-status"))
            assert "2 resolved" in text_of(screen.query_one("#spill-status"))
            await pilot.press("3")
            table = screen.query_one(ResultsTable)
            await pilot.press("down")
            chosen = screen.report.retention.results[int(table.selected_key())]
            assert chosen.tool == "run_shell_command" and chosen.sentinel == "in-tool truncation"
            await pilot.press("enter")
            assert isinstance(app.screen, ResultDetailScreen)
            assert "press enter to page through it" in text_of(app.screen.query_one("#detail-spill"))
            await pilot.press("enter")
            pager = app.screen
            assert isinstance(pager, PagerScreen) and pager.path == str(spilled)
            view = pager.query_one(PagerView)
            await wait_for(pilot, lambda: not pager.indexing and view.line_text(0) is not None)
            lines = spilled.read_text().splitlines()
            assert view.line_count == len(lines) > 200_000  # all of `seq 1 200000`, not the stub's head and tail
            assert (view.line_text(2), view.line_text(3)) == ("Output: 1", "2")

    asyncio.run(journey())


def test_tui_pages_an_unspilled_output_of_the_live_host(host):
    """A result kept whole in the history pages from the host's own objects (enter on any result)."""
    import asyncio

    from doctor.live.provider import LiveSessionProvider
    from doctor.tui.app import DoctorApp
    from doctor.tui.screens.pager import PagerScreen
    from doctor.tui.widgets.pager_view import PagerView
    from tests.tui.test_journeys import loaded, wait_for

    host.dispatch("go")

    async def journey():
        app = DoctorApp(LiveSessionProvider(host.doctor, process=False), keymap={})
        async with app.run_test(size=(100, 30)) as pilot:
            await loaded(pilot)
            await pilot.press("b", "enter")  # the biggest: read_file, not spilled
            await wait_for(pilot, lambda: isinstance(app.screen, PagerScreen))
            view = app.screen.query_one(PagerView)
            await wait_for(pilot, lambda: view.line_text(0) is not None)
            assert view.line_text(0) == "row 1 of a wide table with padding text"

    asyncio.run(journey())


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="drives the host on a terminal through tmux")
def test_repl_on_a_terminal_opens_the_tui_and_pages_a_spilled_file(tmp_path):
    """The journey of issue 15 item 4, keys typed into the real host on a real terminal (tmux).

    The pane gets exactly this environment (a private tmux server, `env -i`): a test process can
    hold LINES=24 / COLUMNS=80 in its C environment, which Textual would take over the pane's size."""
    from tests.integrations.tmux import Pane

    pane = Pane(tmp_path, width=100, height=30)
    (tmp_path / "work").mkdir()
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", str(tmp_path)),
                   "TERM": "xterm-256color", "LANG": "C.UTF-8"}
    try:
        pane.start([sys.executable, str(HOST_DIR / "host.py"), "--workdir", str(tmp_path / "work")], tmp_path,
                   environment)
        pane.wait_for("agent host in", timeout=30)
        pane.type("go")
        pane.type("/doctor memory")
        pane.wait_for("Spilled outputs", timeout=30)
        pane.keys("3")
        pane.wait_for("of 4 results", timeout=30)
        pane.keys("Down", "Enter")
        pane.wait_for("press enter to page through it", timeout=30)
        pane.keys("Enter")
        pane.wait_for("line 1/200,004 ", timeout=30)  # counted once the pager has indexed the whole file
        assert "Command: seq 1 200000" in pane.screen()
        pane.keys("q")
        pane.wait_for("doctor memory closed", timeout=30)
        pane.type("/quit")
    finally:
        pane.close()
