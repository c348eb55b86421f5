"""The share of the model's context window the tool results hold, in words (`doctor.core.context_window`)."""

from __future__ import annotations

from doctor.core.context_window import ContextWindow
from doctor.report.figures import figure


def percent(share: float) -> str:
    """`2.6%`; `<0.1%` for a share that would print as 0.0%."""
    return "<0.1%" if 0 < share < 0.0005 else f"{share:.1%}"


def share_sentence(window: ContextWindow, tokens: float) -> str:
    """`Tool results hold 2.6% of the model's 258,400-token context window (told by …).`"""
    return (f"Tool results hold {percent(window.share(tokens))} of the model's {figure(window.tokens)}-token "
            f"context window ({window.told_by}).")
