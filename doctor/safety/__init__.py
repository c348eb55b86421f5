"""Containment in one place: how doctor opens what it did not create, and how it writes its own files.

`roots` names the fixed folders each agent writes spilled outputs and sessions under (resolved
once, never derived from a path a caller passes) and decides whether a path is one of the
agent's own files there; `reads` opens such a file without following a symlink below `/`, only
if it is a regular file, in folders only the user (or root) can write; `writes` is the one way
doctor writes a file (a private temporary beside the target, renamed over it, never through a
planted link).
"""
