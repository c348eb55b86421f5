"""Help: what the screens are, and every key of the screen it was opened from."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

INTRO = "doctor memory shows what a coding-agent session keeps in its history."
# (screen, what it shows and its keys): a grid, so a wrapped line stays in its column at 80x24.
SCREENS = (
    ("Overview (1)", "Qwen's retention numbers, the oversized alarm, where the context grew."),
    ("Tools (2)", "retained chars per tool; enter shows that tool's results."),
    ("Results (3)", "every tool result; enter opens one; / filters; o oversized only."),
    ("", "In both tables s / r sort and reverse (↓/↑ in the header), home / end first / last row."),
    ("Detail", "a result's budget, the layer that bounded it, its spill file; enter pages it."),
    ("Pager", "/ search, n / N next / previous, g go to line, f follow, end bottom; "
              "←/→ page along a long line of any length, g 1:5000 goes to a char."),
)
OUTRO = """q quits from any screen; escape goes back.

Keys can be remapped by binding id: DOCTOR_KEYMAP="{example}"
or a JSON object {{id: keys}} in ~/.config/doctor/keymap.json. ctrl+p lists every action."""


def intro(first: str = INTRO, screens_shown=SCREENS, example: str = "pager.search=ctrl+f,memory.biggest=B") -> Group:
    """The help's head: what the screens are (a screen may give its own: `HELP_INTRO`, `HELP_SCREENS`)."""
    screens = Table.grid(padding=(0, 2))
    screens.add_column(no_wrap=True)
    screens.add_column()
    for name, text in screens_shown:
        screens.add_row(name, text)
    return Group(Text(first + "\n"), screens, Text("\n" + OUTRO.format(example=example)))


def key_table(bindings: list[tuple[str, str, str]]) -> Table:
    table = Table(box=None, padding=(0, 2), show_header=True, header_style="bold")
    table.add_column("key", no_wrap=True)
    table.add_column("action")
    table.add_column("id", style="dim")
    for key, description, binding_id in bindings:
        table.add_row(Text(key), Text(description), Text(binding_id))
    return table


def described_bindings(screen):
    """(binding, node) for the described bindings active on `screen` (focused widget, screen, app), once each.

    What the help screen lists and the command palette offers.
    """
    chosen: dict[tuple, tuple] = {}
    for active in screen.active_bindings.values():
        binding = active.binding
        marker = (binding.action, active.node)
        if not binding.description:
            continue
        if marker not in chosen or (binding.id and not chosen[marker][0].id):
            chosen[marker] = (binding, active.node)  # doctor's own binding (`q`) over Textual's (`ctrl+q`)
    yield from chosen.values()


def active_keys(screen) -> list[tuple[str, str, str]]:
    """(key, description, id) for the bindings active on `screen`."""
    return [(screen.app.get_key_display(binding), binding.description, binding.id or "")
            for binding, _ in described_bindings(screen)]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,f1", "app.pop_screen", "Close", id="help.close")]

    def __init__(self, rows: list[tuple[str, str, str]], head: Group | None = None) -> None:
        super().__init__()
        self.rows = rows
        self.head = head

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(self.head or intro())
            yield Static(key_table(self.rows))
