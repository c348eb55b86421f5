"""`/doctor …` for Python agent hosts: `doctor.slash.handle(line, session)`.

The public name of the slash-command entry point; the grammar and its messages
live with the rest of the live family in `doctor.live.slash`.
"""

from doctor.live.slash import SlashResult, handle

__all__ = ["SlashResult", "handle"]
