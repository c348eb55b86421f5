"""`doctor statusline`: the one line Claude Code and Qwen Code show under the prompt after each turn.

The agent runs it after every turn on a transcript that only grows, so it resumes where the last
call stopped: `resume` keeps each agent's reader state (able to go on from a byte offset; Claude's
whole single pass, its long payloads cut to their measured heads; Qwen's first pass, the history
rebuilt along its chain and the measured results of that history), `cache` keeps one such state
per transcript in doctor's cache folder and says when it no longer matches the file, `update`
runs a call, and `line` turns the analysis into the figures `doctor memory --json` prints and the
line itself.
"""
