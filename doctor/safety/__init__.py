"""Containment in one place: what doctor opens, reads and writes where a stranger may have put things."""
