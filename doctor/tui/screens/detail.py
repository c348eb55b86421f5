"""One tool result: what it cost, which layer bounded it, where its full output went."""

from __future__ import annotations

from rich.console import Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from doctor.report.figures import ratio_text
from doctor.report.model import present_path
from doctor.tui import format as fmt
from doctor.tui.format import inert
from doctor.tui.widgets.footer import DoctorFooter

PREVIEW_LINES = 40


class ResultDetailScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="detail.back"),
        Binding("enter", "open_spill", "Open full output", id="detail.open"),
        Binding("f", "open_spill", "Open full output", id="detail.open_f", show=False),
    ]

    def __init__(self, result, report, links, provider) -> None:
        super().__init__()
        self.result = result
        self.report = report
        self.links = links
        self.provider = provider
        self.preview_text: str | None = None

    def compose(self) -> ComposeResult:
        result = self.result
        title = Text(f"Result #{result.ordinal} · ", style="bold")  # visible separators, one run (see _offender)
        title.append(fmt.plain(result.tool or "(no name)"))
        title.append(f" · turn {result.turn}")
        title.no_wrap = True
        title.overflow = "ellipsis"
        if result.oversized:
            title.append("  OVERSIZED", style="bold red")
        yield Static(title, id="title")
        with VerticalScroll(id="detail"):
            yield Static(self._metadata(), id="detail-meta", classes="panel")
            yield Static(self._spill(), id="detail-spill", classes="panel")
            yield Static(Text("Preview: reading…", style="dim"), id="detail-preview", classes="panel")
        yield DoctorFooter()

    def on_mount(self) -> None:
        self.query_one("#detail").focus()
        self.load_preview()

    def _metadata(self) -> Table:
        r = self.result
        table = Table.grid(padding=(0, 2))
        table.add_column(style="dim", no_wrap=True)
        table.add_column()
        ratio = r.budget_ratio
        terms = self.report.terms
        word = terms.limit_word
        if terms.own:
            sizes = [("sent to the model", f"{fmt.num(terms.size(r))} {terms.unit}  (≈ {fmt.num(terms.tokens(r))} "
                                           f"tokens, {terms.estimate})"),
                     ("Qwen's estimator", f"{fmt.num(r.chars)} chars  (for comparing agents)")]
        else:
            sizes = [("chars in context", f"{fmt.num(r.chars)}  (≈ {fmt.num(r.tokens)} tokens)")]
        allowance = self.report.rules.allowance if self.report.rules is not None else 0
        if r.budget.oversized_above is None:
            rule = "oversized above 2× + 500 chars"
        else:
            rule = f"oversized above the {word}" + (f" + {fmt.num(allowance)} {terms.unit} of header" if allowance else "")
        rows = [
            ("call id", fmt.plain(r.call_id or "–")),
            *sizes,
            ("output string", f"{fmt.num(r.raw_chars)} chars" + ("  (error)" if r.is_error else "")),
            (word, Text(f"{fmt.num(r.budget.chars)}  ") + fmt.plain(f"{r.budget.source}: {r.budget.detail}", "dim")),
            (f"ratio to {word}", "–" if ratio is None else f"{ratio_text(ratio)}  ({rule})"),
            ("oversized", Text("yes", style="bold red") if r.oversized else "no"),
            ("bounded by", "nothing (kept whole)" if r.sentinel == "none" else self.report.layer_term(r.sentinel)),
        ]
        stub = r.stub
        if stub is not None:
            if stub.sha256:
                rows.append(("declared sha256", fmt.plain(stub.sha256)))
            declared = [f"{fmt.num(v)} {unit}" for v, unit in ((stub.declared_chars, "chars"),
                        (stub.declared_lines, "lines"), (stub.declared_kb, "KB")) if v is not None]
            if declared:
                rows.append(("declared size", ", ".join(declared)))
            if stub.note:
                rows.append(("stub note", fmt.plain(stub.note)))
        for label, value in rows:
            table.add_row(label, value)
        return table

    def _spill(self):
        checks = self.links.checks_for(self.result)
        heading = Text("Full output", style="bold")
        if not checks:
            if self.result.stub is not None and self.result.stub.paths:
                heading.append("\n  the stub names ")
                heading.append(fmt.plain(present_path(self.result.stub.path, self.report.path_style)))
                heading.append(" but the spill audit has no entry for it", style="dim")
            else:
                heading.append("\n  not spilled: the whole output is in the history (preview below)", style="dim")
            return heading
        style = self.report.path_style
        # Labels say which path is which (they read "written" / "here"); paths break after a '/'.
        table = Table.grid(padding=(0, 2))
        table.add_column(no_wrap=True)
        table.add_column()
        for check in checks:
            resolution = check.resolution
            pointer = check.pointer
            table.add_row(Text("stub names", style="dim"),
                          fmt.PathText(present_path(pointer.written, style) if pointer.path else pointer.written))
            if resolution.exists:
                found = Group(fmt.PathText(present_path(str(resolution.found), style)),
                              *([Text("moved: not where the stub says", style="dim")] if resolution.remapped else []))
            else:
                found = Text("missing", style="bold red")
            table.add_row(Text("found at", style="dim"), found)
            if check.measure is not None:
                m = check.measure
                table.add_row(Text("file", style="dim"),
                              f"{fmt.size(m.size)}, {fmt.num(m.utf16_units)} chars, {fmt.num(m.lines)} lines")
            for finding in self.links.findings_for(check):
                colour = {"error": "red", "warning": "yellow"}.get(finding.severity, "dim")
                table.add_row(Text(finding.severity, style=colour), fmt.plain(f"{finding.kind}: {finding.message}"))
        parts = [heading, Padding(table, (0, 0, 0, 2))]
        if self.links.openable(self.result) is not None:
            parts.append(Text("  press enter to page through it", style="bold green"))
        return Group(*parts)

    @work(thread=True, exclusive=True, group="doctor-open", exit_on_error=False)
    def open_from_history(self) -> None:
        """Not spilled: the whole output is in the history. Page a private (0600) temporary copy."""
        import os
        import tempfile

        text = self.provider.full_text(self.result)
        if text is None:
            self.app.call_from_thread(self.notify, "The output could not be read from the session.",
                                      severity="warning")
            return
        descriptor, path = tempfile.mkstemp(prefix="doctor-result-", suffix=".txt")
        with os.fdopen(descriptor, "w", encoding="utf-8", errors="surrogatepass") as handle:
            handle.write(text)
        from doctor.tui.screens.pager import PagerScreen

        label = f"result #{self.result.ordinal} {self.result.tool} (in the history, not spilled)"
        self.app.call_from_thread(self.app.push_screen, PagerScreen(path, label=label, temporary=True))

    @work(thread=True, exclusive=True, group="doctor-preview", exit_on_error=False)
    def load_preview(self) -> None:
        preview = getattr(self.provider, "preview", None)
        text = preview(self.result) if callable(preview) else None
        if text is None:
            for check in self.links.checks_for(self.result):
                if check.pointer.preview_head:
                    text = check.pointer.preview_head
                    break
        self.app.call_from_thread(self._show_preview, text)

    def _show_preview(self, text: str | None) -> None:
        self.preview_text = text
        widget = self.query_one("#detail-preview", Static)
        if text is None:
            widget.update(Text("Preview: not available for this source.", style="dim"))
            return
        lines = text.splitlines()
        shown = [inert(line)[:400] for line in lines[:PREVIEW_LINES]]
        body = Text()  # the heading bold, not the output under it (a base style would cover both)
        body.append("Preview (first lines of what the model sees, shown as plain text)\n", style="bold")
        body.append("\n".join(shown))
        if len(lines) > PREVIEW_LINES:
            body.append(f"\n… {len(lines) - PREVIEW_LINES} more lines in the preview", style="dim")
        widget.update(body)

    def action_open_spill(self) -> None:
        check = self.links.openable(self.result)
        if check is None:
            if callable(getattr(self.provider, "full_text", None)):
                self.open_from_history()
            else:
                self.notify("No readable spill file for this result.", severity="warning")
            return
        from doctor.tui.screens.pager import PagerScreen

        label = present_path(str(check.resolution.found), self.report.path_style)
        self.app.push_screen(PagerScreen(str(check.resolution.real), label=label))
