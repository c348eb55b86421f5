"""The footer with the main keys, made to fit: without the palette key when narrow.

At 80 columns `^p palette` pushed Quit and Help off the Tools and Results tabs; below
`NARROW` columns it gives its place to them (help, `?`, still names ctrl+p).
"""

from __future__ import annotations

from textual import events
from textual.widgets import Footer

NARROW = 100


class DoctorFooter(Footer):
    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < NARROW
        if narrow == self.show_command_palette:
            self.show_command_palette = not narrow
            self.call_after_refresh(self.recompose)
