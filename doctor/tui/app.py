"""DoctorApp: hosts MemoryScreen, adds themes, help, the command palette and user keymaps."""

from __future__ import annotations

import os

from textual.app import App
from textual.binding import Binding

from doctor.tui.commands import DoctorCommands
from doctor.tui.keymap import load_keymap
from doctor.tui.provider import ReportProvider
from doctor.tui.screens.help import HelpScreen, active_keys
from doctor.tui.screens.memory import MemoryScreen

DARK = "textual-dark"
LIGHT = "textual-light"


class DoctorApp(App[None]):
    CSS_PATH = "doctor.tcss"
    TITLE = "doctor memory"
    COMMANDS = App.COMMANDS | {DoctorCommands}
    BINDINGS = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("question_mark,f1", "help", "Help", id="app.help"),
        Binding("ctrl+t", "toggle_theme", "Theme", id="app.theme", show=False),
    ]

    def __init__(self, provider: ReportProvider | None = None, *, theme: str | None = None,
                 keymap: dict | None = None, screen=None) -> None:
        """`screen`: start on this screen instead of the memory screen of `provider` (the scan's Fleet)."""
        super().__init__()
        self.provider = provider
        self.first_screen = screen
        chosen = theme or os.environ.get("DOCTOR_THEME", "dark")
        self.theme = {"dark": DARK, "light": LIGHT}.get(chosen, chosen if chosen in self.available_themes else DARK)
        self._user_keymap = load_keymap() if keymap is None else keymap

    def on_mount(self) -> None:
        if self._user_keymap:
            self.set_keymap(self._user_keymap)
        if self.first_screen is not None:
            self.title = "doctor scan"
            self.push_screen(self.first_screen)
        else:
            self.push_screen(MemoryScreen(self.provider, freeze_gc=True))

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT if self.theme == DARK else DARK

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        head = getattr(self.screen, "help_intro", None)  # a screen that is not the memory screen says what it is
        self.push_screen(HelpScreen(active_keys(self.screen), head() if head else None))
