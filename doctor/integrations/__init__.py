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
