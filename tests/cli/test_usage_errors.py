"""Usage errors name the command that was typed: its own usage line, one message, exit 2."""

from __future__ import annotations

import pytest

from doctor.cli import main


def _usage_error(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    assert exit_info.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("argv, usage", [
    (("memory", "--bogus", "x"), "usage: doctor memory "),
    (("sessions", "--bogus"), "usage: doctor sessions "),
    (("spill", "show", "f.txt", "--bogus"), "usage: doctor spill show "),
])
def test_unknown_option_shows_the_subcommands_usage(capsys, argv, usage):
    err = _usage_error(capsys, *argv)
    assert err.startswith(usage) and "unrecognized arguments: --bogus" in err
    assert "COMMAND ..." not in err  # not the top-level usage


@pytest.mark.parametrize("value", ["0", "-1", "x", "2.5"])
def test_top_must_be_a_positive_integer_whatever_the_mistake(capsys, value):
    err = _usage_error(capsys, "memory", "tests/tui/data/batch-budget/session.jsonl", f"--top={value}")
    assert err.splitlines()[-1] == f"doctor memory: error: argument --top: must be a positive integer, not {value!r}"


@pytest.mark.parametrize("argv, option, wanted", [
    (("sessions", "--limit=-1"), "--limit", "must be 0 or more, not '-1'"),
    (("sessions", "--limit=x"), "--limit", "must be 0 or more, not 'x'"),
    (("spill", "show", "f.txt", "--offset=-1"), "--offset", "must be 0 or more, not '-1'"),
    (("spill", "show", "f.txt", "--limit=0"), "--limit", "must be a positive integer, not '0'"),
    (("scan", "--top=0"), "--top", "must be a positive integer, not '0'"),
])
def test_every_count_option_refuses_bad_values_alike(capsys, argv, option, wanted):
    err = _usage_error(capsys, *argv)
    assert err.splitlines()[-1].endswith(f"error: argument {option}: {wanted}"), err
