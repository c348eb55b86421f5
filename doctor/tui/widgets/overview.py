"""The overview: Qwen's retention lines, the alarm, input problems, where the context grew, the audit."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Static

from doctor.tui.overview_panels import OverviewView


class Overview(VerticalScroll):
    """A scrollable column of panels; `apply(view)` replaces their content in place."""

    def compose(self):
        yield Static(id="alarm")
        yield Static(id="input-problems", classes="panel")
        yield Static(id="offender", classes="panel")
        yield Static(id="qwen", classes="panel")
        yield Static(id="turns", classes="panel")
        yield Static(id="channels", classes="panel")
        yield Static(id="spill-status", classes="panel")
        yield Static(id="rules", classes="panel")
        yield Static(id="process-summary", classes="panel")

    def apply(self, view: OverviewView) -> None:
        """Put prepared panels on screen (`overview_view` runs on the loader's worker)."""
        alarm = self.query_one("#alarm", Static)
        alarm.update(view.alarm)
        alarm.set_classes(view.alarm_class)
        issues = self.query_one("#input-problems", Static)
        issues.display = view.issues is not None
        if view.issues is not None:
            issues.update(view.issues)
        self.query_one("#offender", Static).update(view.offender)
        self.query_one("#qwen", Static).update(view.qwen)
        self.query_one("#turns", Static).update(view.turns)
        self.query_one("#channels", Static).update(view.channels)
        self.query_one("#spill-status", Static).update(view.spill)
        self.query_one("#rules", Static).update(view.rules)
        process = self.query_one("#process-summary", Static)
        process.display = view.process is not None
        if view.process is not None:
            process.update(view.process)
