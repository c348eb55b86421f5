"""Widgets of the doctor TUI; each renders part of a MemoryReport and nothing else."""
