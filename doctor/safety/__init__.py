"""Containment in one place: how doctor opens what it did not create, and how it writes its own files.

`writes` is the one way doctor writes a file (a private temporary beside the target, renamed over it,
never through a planted link); the read side (safe opens beneath fixed roots, caps) lives beside it.
"""
