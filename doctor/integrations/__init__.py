"""doctor inside the agents people run: Claude Code, Gemini CLI, Qwen Code and Codex.

One module per agent says which files `doctor install <agent>` writes for a scope (`--user`: the
agent's home, `--project`: the project's dot-folder) and returns them as planned `Change`s
(`plans` holds what they share); `files` does the merging, backups and refusals,
`doctor.commands.install` prints and applies. This package's own namespace stays this small:
`doctor hook` and `doctor statusline`, which agents run after every tool call or turn, import
modules of it and so run this file each time.
"""

AGENTS = ("claude", "gemini", "qwen", "codex")
USER, PROJECT = "user", "project"
# What a user of each agent types to see doctor's summary of the session: Codex's interactive app
# rejects an unknown `/command` before any hook runs, so there it is doctor's skill, `$doctor-memory`.
TYPED = {"claude": "/doctor:memory", "gemini": "/doctor:memory", "qwen": "/doctor:memory", "codex": "$doctor-memory"}


def typed_command(agent: str | None) -> str:
    return TYPED.get(agent or "", "/doctor:memory")
