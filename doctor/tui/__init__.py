"""The Textual face of doctor: `run_memory_app` for the CLI, `MemoryScreen` for Textual hosts.

Importing this package does not import textual; the app modules load on first use.
"""

from __future__ import annotations


def run_memory_app(report=None, *, load=None, provider=None, session=None, options=None, theme=None) -> None:
    """Run the TUI until the user quits; the terminal is restored when it returns.

    Give one of: `provider` (see doctor.tui.provider), `load(progress) -> MemoryReport`
    (run on a worker thread, with a progress bar), or a finished `report`.
    """
    from doctor.tui.app import DoctorApp
    from doctor.tui.provider import CallableProvider, StaticProvider

    if provider is None:
        if load is not None:
            provider = CallableProvider(load, session=session, options=options)
        elif report is not None:
            provider = StaticProvider(report, session=session, options=options)
        else:
            raise TypeError("run_memory_app needs a report, a load callable or a provider")
    DoctorApp(provider, theme=theme).run()


def run_fleet_app(data, open_session=None, *, theme=None) -> None:
    """The Fleet screen over a triage database's sessions (`doctor scan --tui`)."""
    from doctor.tui.app import DoctorApp
    from doctor.tui.screens.fleet import FleetScreen

    DoctorApp(theme=theme, screen=FleetScreen(data, open_session)).run()


__all__ = ["run_fleet_app", "run_memory_app"]
