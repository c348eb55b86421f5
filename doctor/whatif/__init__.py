"""What if the budgets were different? Replay a session's tool results under other limits, exactly.

`doctor whatif [PATH] --set KEY=VALUE` answers: had this session run with other limits, what would
each result have put into the model's context, how many tokens would every later turn have saved, how
many results would have been cut. It never guesses: a result whose raw output the recording does not
keep is marked unknown, with the reason, and the totals say by how much they could be off.

The interface every agent module follows (`doctor/whatif/<agent>.py`, one per agent, named after
doctor's agent name: `qwen`, `claude`, `gemini`, `codex`):

    AGENT: str                      doctor's agent name (`LoadedSession.agent`)
    CLIENT, VERSION: str            the client and version whose arithmetic the module copies
    KEYS: tuple[SettingKey, ...]    the limits a user may `--set`, under the agent's OWN names (settings
                                    keys, environment variables, config keys), each with its default and
                                    where the client reads it (model.SettingKey)
    def session_settings(session, options) -> SessionSettings
        The settings the session ran with, as `doctor memory` reads them today (`doctor/core/settings.py`,
        `doctor/core/budgets.py`, `doctor/core/agent_rules/`): only the keys that are SET, with their values
        as the client would read them (absent = "not set", which is not always the same as the default:
        Qwen's shell budget is 30,000 until `tools.truncateToolOutputThreshold` is set at all).
    def replay_inputs(session, sites, spill) -> list[ReplayInput]
        One ReplayInput per result site (replay.ResultSite: the tool results of the Contents `doctor
        memory` measures, in its order, so ordinals and call ids match `retention.results[]`; with the
        text the model got, the call's arguments and the batch of parallel calls it belongs to): the raw
        output the layers start from and WHERE it came from (the session itself, a spill file, Codex's
        `aggregated_output`), or no text and WHY it is unknown. `spill` (spill.SpillReader) opens the
        spill files the session names, contained and capped; the module never opens a path itself.
    def replay(inputs, settings) -> list[Outcome]
        The agent's layers, in the agent's order, with its arithmetic, as pure functions of (raw output,
        settings): one Outcome per input, same order. Layers that span results (Qwen's batch budget
        across parallel calls) see the whole list. An input whose raw output does not determine the
        answer under `settings` gives an unknown Outcome (text None) with the reason and, when the
        agent's limits bound it, the range the size must fall in.
    def after_options(settings, session, options) -> ReportOptions
        How `doctor memory` would judge the session had it run under `settings` (the `after` report's
        budgets, e.g. Qwen's oversized threshold follows the replayed threshold).
    def after_ui_history(ui_history, inputs, outcomes) -> list | None     (optional)
        The UI history (the session's items, read once) as it would have been, where the agent's UI
        shows what the model got (Qwen's shell errors); None or absent: the session's own.

`settings` is a plain mapping of key -> value for the keys that are set (model.SessionSettings.values
with `--set` applied: `KEY=default` removes the key, "as if it were not set"). The framework
(`replay.what_if`) does the rest the same way for every agent: it builds `before` (the session as
`doctor memory --json --results` reports it), substitutes each known Outcome's text into the history,
measures that as `after` with `after_options`, and derives `changes` and `saved` (result.WhatIf).

To add an agent: write `doctor/whatif/<agent>.py`, add its name to `replay.AGENTS`, document its
layers with their sources in docs/formats.md ("Replay rules"), and prove them on recordings made
by the real client under several settings (tests/whatif/).

Data flows one way, as everywhere in doctor: session -> replay inputs -> layers -> outcomes ->
after history -> analysis -> report model -> renderer. Nothing here formats text or imports rich.

For a fleet (`doctor scan --whatif`, later) the ReplayInput is the row to store: it holds no path
that must be reopened, and an agent's `replay` needs nothing but the inputs and the settings.
"""
