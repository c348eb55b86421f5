"""Typed messages that workers post to the screens (post_message is thread-safe)."""

from __future__ import annotations

from textual.message import Message


class LoadProgress(Message):
    def __init__(self, fraction: float | None, text: str) -> None:
        super().__init__()
        self.fraction = fraction
        self.text = text

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, LoadProgress)


class ReportReady(Message):
    """A first report (`refreshed=False`) or a newer one from `provider.refresh()`.

    `view` is the report prepared for the screen on the worker (`doctor.tui.view.prepare`);
    the report itself is `view.report`. `partial`: the loader is still working on it (its
    spill audit); the full report follows.
    """

    def __init__(self, view, refreshed: bool = False, partial: bool = False) -> None:
        super().__init__()
        self.view = view
        self.refreshed = refreshed
        self.partial = partial


class LoadFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error

