"""Process memory: figures from the report (live mode), tracemalloc top sites and a snapshot on demand."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual import work
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from doctor.tui import format as fmt

HINT = ("Process memory is measured inside a live host (/doctor memory) or with `doctor memory --self`.\n"
        "Keys here: p measure doctor's own process now · t tracemalloc top sites · S write a tracemalloc snapshot")


class ProcessPane(VerticalScroll):
    """Shows `report.process`; actions run on worker threads and post their results back."""

    BINDINGS = [
        Binding("p", "measure", "Measure now", id="process.measure"),
        Binding("t", "top_sites", "Top sites", id="process.top"),
        Binding("S", "snapshot", "Snapshot", id="process.snapshot"),
    ]
    can_focus = True

    def compose(self):
        yield Static(HINT, id="process-hint", classes="dim")
        yield Static(id="process-figures", classes="panel")
        yield Static(id="process-sites", classes="panel")

    def show(self, report) -> None:
        self.show_process(report.process)

    def show_process(self, process) -> None:
        figures = self.query_one("#process-figures", Static)
        if process is None:
            figures.update(Text("No process diagnostics in this report.", style="dim"))
            return
        table = Table.grid(padding=(0, 2))
        table.add_column(style="dim")
        table.add_column(justify="right")
        rows = [
            ("pid", str(process.pid)),
            ("python", f"{process.python_implementation} {process.python_version}"),
            ("RSS", fmt.size(process.rss)),
            ("peak RSS", fmt.size(getattr(process.peak_rss, "bytes", None))),
            ("memory limit", fmt.size(getattr(process.memory_limit, "bytes", None))),
            ("open fds", fmt.num(process.open_file_descriptors)),
            ("threads", fmt.num(process.threads)),
            ("gc tracked objects", fmt.num(process.gc.tracked_objects)),
            ("gc garbage", fmt.num(process.gc.garbage)),
            ("tracemalloc", "tracing" if process.tracemalloc.tracing else "off"),
        ]
        for label, value in rows:
            table.add_row(label, value)
        for risk in process.analysis.risks:
            table.add_row(Text("risk", style="red"), Text(risk.message))
        table.add_row("verdict", Text(process.analysis.recommendation))
        figures.update(table)
        if process.tracemalloc.top_sites:
            self._show_sites(process.tracemalloc)

    def _show_sites(self, state) -> None:
        sites = self.query_one("#process-sites", Static)
        if not state.tracing:
            sites.update(Text("tracemalloc is not tracing: it only sees allocations made after it starts "
                              "(PYTHONTRACEMALLOC=1, or a snapshot starts it).", style="dim"))
            return
        table = Table(title="tracemalloc top sites", title_justify="left", box=None)
        table.add_column("size", justify="right")
        table.add_column("blocks", justify="right")
        table.add_column("where")
        for site in state.top_sites:
            table.add_row(fmt.size(site.bytes), fmt.num(site.count), fmt.plain(site.location))
        sites.update(table)

    @work(thread=True, exclusive=True, group="doctor-process", exit_on_error=False)
    def action_measure(self) -> None:
        from doctor.process import collect_process_diagnostics

        process = collect_process_diagnostics()
        self.app.call_from_thread(self.show_process, process)

    @work(thread=True, exclusive=True, group="doctor-process", exit_on_error=False)
    def action_top_sites(self) -> None:
        from doctor.process.runtime import read_tracemalloc_state

        state = read_tracemalloc_state()
        self.app.call_from_thread(self._show_sites, state)

    @work(thread=True, exclusive=True, group="doctor-process", exit_on_error=False)
    def action_snapshot(self) -> None:
        from doctor.process import SnapshotRefused, write_tracemalloc_snapshot

        try:
            result = write_tracemalloc_snapshot()
        except SnapshotRefused as exc:
            self.app.call_from_thread(self.app.notify, f"Snapshot refused: {exc}", severity="warning")
            return
        self.app.call_from_thread(self.app.notify, f"Snapshot written: {result.path}\n{result.warning}", timeout=8)
