"""Sums of tokens over a changing set of results, by position: Gemini's masking replay asks them per request.

Gemini CLI's output masking walks the history from the newest result back before every request, summing
estimated tokens until they pass a threshold. Replaying that walk per request costs requests × results;
a Fenwick tree answers "the sum up to here" and "the newest position whose suffix sum passes the
threshold" in log(results) steps, with results added (scanned) and removed (masked) as the replay goes.
Token counts are whole numbers, so the sums are exact and compare with the threshold as the walk's did.
"""

from __future__ import annotations


class TokenSums:
    """Non-negative whole counts at positions 0..size-1 (all 0 at first)."""

    def __init__(self, size: int):
        self._tree = [0] * (size + 1)
        self._total = 0
        self._top = 1 << size.bit_length()  # the largest power of two the descent starts from

    def add(self, position: int, amount: int) -> None:
        self._total += amount
        index = position + 1
        while index < len(self._tree):
            self._tree[index] += amount
            index += index & -index

    def up_to(self, position: int) -> int:
        """The sum over positions 0..position (every one, for a position past the last)."""
        index, found = min(position + 1, len(self._tree) - 1), 0
        while index > 0:
            found += self._tree[index]
            index -= index & -index
        return found

    def last_over(self, threshold: float) -> int | None:
        """The largest position whose suffix sum (it and every later one) is more than `threshold`: where a
        walk from the newest back first passes it. None when the whole sum does not; past the last position
        (size) when even an empty suffix does (a negative threshold: the walk passes it at the newest one)."""
        if not self._total > threshold:
            return None
        position, before = 0, 0  # before: the sum over positions < position
        step = self._top
        while step:
            ahead = position + step
            if ahead < len(self._tree) and self._total - (before + self._tree[ahead]) > threshold:
                position, before = ahead, before + self._tree[ahead]
            step >>= 1
        return position
