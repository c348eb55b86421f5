"""Command palette: every action of the current screen, by its binding description."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from doctor.tui.screens.help import described_bindings

EXTRA = (
    ("Toggle light / dark theme", "app.toggle_theme", "switch between the light and dark themes"),
    ("Help", "app.help", "what each screen shows and every key"),
    ("Quit", "app.quit", "leave doctor (the terminal is restored)"),
)


class DoctorCommands(Provider):
    """Hits for each active binding of the screen the palette was opened over, plus app actions."""

    def _commands(self):
        screen = self.screen
        for binding, node in described_bindings(screen):
            if binding.action.startswith("app."):
                run = partial(screen.app.run_action, binding.action[4:])
            else:
                run = partial(node.run_action, binding.action)
            yield binding.description, run, f"key: {screen.app.get_key_display(binding)}   id: {binding.id or '-'}"
        for title, action, help_text in EXTRA:
            yield title, partial(screen.app.run_action, action[4:]), help_text

    async def discover(self) -> Hits:
        for title, run, help_text in self._commands():
            yield DiscoveryHit(title, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, run, help_text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), run, help=help_text)
