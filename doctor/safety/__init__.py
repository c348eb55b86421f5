"""Containment: the one place every edge that faces a model or a stranger opens files through.

`roots` names the fixed folders each agent writes spilled outputs and sessions under (resolved
once, never derived from a path a caller passes) and decides whether a path is one of the
agent's own files there; `reads` opens such a file without following a symlink below `/`, only
if it is a regular file, in folders only the user (or root) can write.
"""
