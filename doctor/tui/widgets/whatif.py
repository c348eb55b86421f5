"""The memory screen's What-if tab: type a budget, see the figures and the largest results under it.

`KEY=VALUE` in the agent's own words (Qwen Code: `tools.truncateToolOutputThreshold=10000`; `KEY=default`
unsets it; several separated by spaces). The replay (doctor.whatif) runs on a worker thread: the session
is read once, on the first replay, and each later budget costs only the agent's layers and one measure.
The pane shows Qwen's figures before and after, what the budget saves per later turn, how many results
are unknown, and the largest results after the change with their size before.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from doctor.core.jsvalues import js_len
from doctor.report.figures import figure
from doctor.report.inert import inert_line

LARGEST = 10


class WhatIfReady(Message):
    def __init__(self, whatif=None, error: str | None = None) -> None:
        super().__init__()
        self.whatif = whatif
        self.error = error


class WhatIfPane(Vertical):
    """Input, figures, largest results. `source()` gives (session, options) or None."""

    def __init__(self, source, **kwargs) -> None:
        super().__init__(**kwargs)
        self._source = source
        self._prepared = None
        self.whatif = None

    def compose(self) -> ComposeResult:
        yield Input(placeholder="a budget to try: KEY=VALUE (e.g. tools.truncateToolOutputThreshold=10000), enter",
                    id="whatif-set")
        yield Static(Text("Type a limit under the agent's own name and press enter: every figure below is "
                          "replayed exactly (doctor whatif).", style="dim"), id="whatif-figures")
        yield DataTable(id="whatif-largest", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for key, label in (("ordinal", "#"), ("tool", "tool"), ("before", "before"), ("after", "after"),
                           ("layer", "layer after")):
            table.add_column(label, key=key)

    @on(Input.Submitted, "#whatif-set")
    def _submitted(self, event: Input.Submitted) -> None:
        pairs = event.value.split()
        self.query_one("#whatif-figures", Static).update(Text("replaying…", style="dim"))
        self.replay(pairs)

    @work(thread=True, exclusive=True, group="doctor-whatif", exit_on_error=False)
    def replay(self, pairs: list[str]) -> None:
        from doctor.whatif.keys import SettingError, parse_sets
        from doctor.whatif.replay import UnsupportedAgent, agent_module, prepare

        source = self._source()
        if source is None:
            self.post_message(WhatIfReady(error="What-if replays a session read from a file; this report has none."))
            return
        session, options = source
        try:
            module = agent_module(session.agent)
            overrides = parse_sets(pairs, module.KEYS, f"{module.CLIENT} {module.VERSION}")
            if self._prepared is None:
                self._prepared = prepare(session, options)
            whatif = self._prepared.replay(overrides)
        except (SettingError, UnsupportedAgent) as exc:
            self.post_message(WhatIfReady(error=str(exc)))
            return
        except Exception as exc:  # shown in the pane; the screen stays usable
            self.post_message(WhatIfReady(error=f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(WhatIfReady(whatif))

    def on_what_if_ready(self, message: WhatIfReady) -> None:
        figures = self.query_one("#whatif-figures", Static)
        if message.error is not None:
            figures.update(Text(inert_line(message.error), style="bold red"))
            return
        self.whatif = message.whatif
        figures.update(figures_text(message.whatif))
        self.show_largest(message.whatif)

    def show_largest(self, whatif) -> None:
        table = self.query_one(DataTable)
        table.clear()
        analysis = whatif.after.retention
        if analysis is None:
            return
        outcomes = {site.ordinal: (site, outcome) for site, outcome in zip(whatif.sites, whatif.outcomes)}
        for row in analysis.largest(LARGEST):
            site, outcome = outcomes[row.ordinal]
            after = figure(row.raw_chars) if outcome.known else Text("unknown", style="yellow")
            table.add_row(str(row.ordinal), inert_line(row.tool), figure(js_len(site.recorded)), after,
                          inert_line(outcome.layer), key=str(row.ordinal))


def figures_text(whatif) -> Text:
    before, after = whatif.before.qwen_stats, whatif.after.qwen_stats
    saved = whatif.saved()
    text = Text()
    changed = ", ".join(f"{key} = {'not set' if value is None else figure(value)}" for key, value in whatif.overrides.items())
    text.append(f"Replayed with {changed or 'the session’s own settings'}\n", style="bold")
    if before is not None and after is not None:
        for label, a, b in (("Tool results in history", before.tool_result_count, after.tool_result_count),
                            ("Total retained chars", before.total_chars, after.total_chars),
                            ("Largest result chars", before.largest_result_chars, after.largest_result_chars),
                            ("Oversized results", before.oversized_result_count, after.oversized_result_count)):
            text.append(f"  {label:<24}{figure(a):>12} → {figure(b):<12}\n")
    verb = "saves" if saved["chars"] >= 0 else "costs"
    text.append(f"  {verb} {figure(abs(saved['chars']))} chars (~{figure(abs(saved['tokensPerLaterTurn']))} tokens) "
                f"every later turn · results cut {figure(saved['resultsCutBefore'])} → {figure(saved['resultsCut'])}")
    if not saved["exact"]:
        off = saved["couldBeOffBy"]["chars"]
        text.append(f"\n  {saved['resultsUnknown']} result(s) unknown: a bound, off by "
                    f"{'an unknown amount' if off is None else 'at most ' + figure(off) + ' chars'}", style="yellow")
    return text
