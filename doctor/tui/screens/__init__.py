"""The screens: MemoryScreen (pushable into any Textual host), result detail, pager, help."""

from doctor.tui.screens.memory import MemoryScreen

__all__ = ["MemoryScreen"]
