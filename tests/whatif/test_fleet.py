"""`doctor scan --whatif/--sweep/--recommend` against the exact per-session replay, on the real recordings.

The fleet answers through the CLI (`doctor scan --db DB PATHS`, then `doctor scan --db DB --sweep …` after
the session files are gone: the answer reads the database only); the exact side is `doctor whatif`'s own
replay of each session (replay.prepare, in process, with the same HOME the scan ran with). At a sampled
value every figure must be equal; between two sampled values the saved context must be within the
`estimateBound` the answer states, and the results cut within its range. The measured error is printed
(`-s`) and docs/formats.md ("Fleet replay") states it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.assemble import ReportOptions
from doctor.sources.registry import open_session
from doctor.whatif import replay
from tests.whatif import agent_recordings
from tests.whatif.recordings import VARIANTS as QWEN_VARIANTS
from tests.whatif.recordings import unpack

pytest.importorskip("duckdb")

THRESHOLD = "tools.truncateToolOutputThreshold"


def cli(*args, home: Path, scratch: Path) -> subprocess.CompletedProcess:
    """The real command line; HOME is where the agent's settings are read, doctor's own folders are scratch."""
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", **{name: str(scratch / name.lower()) for name in
                                                         ("XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")}}
    return subprocess.run([sys.executable, "-m", "doctor", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=600)


def scan(db: Path, paths, home: Path, scratch: Path) -> None:
    done = cli("scan", "--db", db, "--jobs", "1", "--replay", "-o", scratch / "report.txt", *paths, home=home,
               scratch=scratch)
    assert done.returncode in (0, 3), done.stderr


def fleet_sweep(db: Path, key: str, values, scratch: Path) -> dict:
    listed = ",".join(map(str, values))
    done = cli("scan", "--db", db, "--sweep", f"{key}={listed}", "--json", home=scratch, scratch=scratch)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def exact_figures(prepared: list, key: str, value) -> dict:
    """The per-session replays' figures summed, as the fleet sums them."""
    total = {"savedChars": 0, "savedCharsOverLaterTurns": 0, "resultsCut": 0, "resultsUnknown": 0, "results": 0}
    for one in prepared:
        whatif = one.replay({key: None if value == "default" else value})
        saved = whatif.saved()
        total["savedChars"] += sum(c["beforeChars"] - c["afterChars"] for c in whatif.changes())
        total["savedCharsOverLaterTurns"] += saved["charsOverLaterTurns"]
        total["resultsCut"] += saved["resultsCut"]
        total["resultsUnknown"] += saved["resultsUnknown"]
        total["results"] += len(whatif.changes())
    return total


def agent_total(point: dict, agent: str) -> dict:
    """The fleet's all-tools rows of one agent, summed over its versions."""
    rows = [row for row in point["groups"] if row["agent"] == agent and row["tool"] is None]
    assert rows, point
    return {"savedChars": sum(r["savedChars"] for r in rows),
            "savedCharsOverLaterTurns": sum(r["savedCharsOverLaterTurns"] for r in rows),
            "cut": (sum(r["resultsCut"]["atLeast"] for r in rows), sum(r["resultsCut"]["atMost"] for r in rows)),
            "resultsUnknown": sum(r["resultsUnknown"] for r in rows), "results": sum(r["results"] for r in rows),
            "bound": sum(r["estimateBound"] for r in rows),
            "boundOverLaterTurns": sum(r["estimateBoundOverLaterTurns"] for r in rows),
            "exact": all(r["exact"] or r["resultsUnknown"] for r in rows) and all(r["estimateBound"] == 0 for r in rows)}


def check(answer: dict, prepared: list, agent: str, key: str, values) -> list[str]:
    """Every point against the exact replay; returns the measured errors between sampled values."""
    errors = []
    assert [point["value"] for point in answer["sweep"]] == list(values)
    for point in answer["sweep"]:
        fleet, exact = agent_total(point, agent), exact_figures(prepared, key, point["value"])
        assert fleet["results"] == exact["results"]
        miss = abs(fleet["savedChars"] - exact["savedChars"])
        if not any(agent in note for note in point["notes"]):  # a sampled value: the exact replay, figure for figure
            assert fleet["bound"] == 0, point
            assert (fleet["savedChars"], fleet["savedCharsOverLaterTurns"], fleet["cut"], fleet["resultsUnknown"]) == (
                exact["savedChars"], exact["savedCharsOverLaterTurns"], (exact["resultsCut"],) * 2,
                exact["resultsUnknown"]), (point["value"], fleet, exact)
            continue
        assert miss <= fleet["bound"], (point["value"], fleet, exact)
        assert abs(fleet["savedCharsOverLaterTurns"] - exact["savedCharsOverLaterTurns"]) <= fleet["boundOverLaterTurns"]
        assert fleet["cut"][0] <= exact["resultsCut"] <= fleet["cut"][1], (point["value"], fleet, exact)
        errors.append(f"{agent} {key}={point['value']}: saved {fleet['savedChars']:,} vs exact {exact['savedChars']:,} "
                      f"(miss {miss:,}, stated bound {fleet['bound']:,})")
    return errors


@pytest.fixture(scope="module")
def qwen_fleet(tmp_path_factory):
    """The qwen-whatif recordings scanned into one database, then the session files removed."""
    scratch = tmp_path_factory.mktemp("fleet")
    home = scratch / "home"
    home.mkdir()
    copies = scratch / "sessions"
    paths = [unpack(variant, copies) for variant in QWEN_VARIANTS]
    options = ReportOptions(env={"HOME": str(home)})
    prepared = [replay.prepare(open_session(path), options) for path in paths]
    db = scratch / "fleet.duckdb"
    scan(db, paths, home, scratch)
    shutil.rmtree(copies)  # the fleet answers from the database alone
    return db, prepared, scratch


@pytest.mark.ci
def test_qwen_threshold_fleet_equals_the_exact_replay_at_sampled_values_and_is_within_its_bound_between(qwen_fleet, capsys):
    db, prepared, scratch = qwen_fleet
    values = [5000, 10000, 15000, 40000, 75000, 300000, "default", -1]
    errors = check(fleet_sweep(db, THRESHOLD, values, scratch), prepared, "qwen", THRESHOLD, values)
    assert len(errors) == 4  # 15,000, 40,000, 75,000 and 300,000 lie between sampled values
    with capsys.disabled():
        print("\n" + "\n".join(errors))


def test_qwen_lines_and_batch_budget_fleet_against_the_exact_replay(qwen_fleet):
    db, prepared, scratch = qwen_fleet
    for key, values in (("tools.truncateToolOutputLines", [200, 300, "default"]),
                        ("tools.toolOutputBatchBudget", [60000, 100000, "default"])):
        check(fleet_sweep(db, key, values, scratch), prepared, "qwen", key, values)


def test_whatif_one_value_per_agent_version_and_tool(qwen_fleet):
    db, prepared, scratch = qwen_fleet
    done = cli("scan", "--db", db, "--whatif", f"{THRESHOLD}=10000", "--json", home=scratch, scratch=scratch)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["coverage"] == {"sessions": 7, "replayed": 7, "notReplayed": []}
    (point,) = answer["whatif"]
    tools = {row["tool"]: row for row in point["groups"] if row["tool"] is not None}
    exact = {}
    for one in prepared:
        for change in one.replay({THRESHOLD: 10000}).changes():
            exact[change["tool"]] = exact.get(change["tool"], 0) + change["beforeChars"] - change["afterChars"]
    assert {tool: row["savedChars"] for tool, row in tools.items()} == exact
    assert sum(row["savedChars"] for row in tools.values()) == point["groups"][0]["savedChars"]
    text = cli("scan", "--db", db, "--whatif", f"{THRESHOLD}=10000", home=scratch, scratch=scratch)
    assert "run_shell_command" in text.stdout and "7 of 7 sessions" in text.stdout
    total = point["groups"][0]
    for fmt, needle in (("markdown", "| qwen | 0.24.4 | all tools |"), ("html", "<td>all tools</td>")):
        done = cli("scan", "--db", db, "--sweep", f"{THRESHOLD}=10000,15000", "--format", fmt, home=scratch,
                   scratch=scratch)
        assert done.returncode == 0 and needle in done.stdout, done.stdout[:2000]
        assert f"{total['savedTokensPerLaterTurn']:,}" in done.stdout


def test_recommend_per_tool_with_the_share_of_sessions_helped(qwen_fleet):
    db, prepared, scratch = qwen_fleet
    done = cli("scan", "--db", db, "--recommend", "--keep", "0.5", "--json", home=scratch, scratch=scratch)
    assert done.returncode == 0, done.stderr
    rows = {row["tool"]: row for row in json.loads(done.stdout)["recommend"]["tools"]}
    shell = rows["run_shell_command"]
    needs = sorted(need for one in prepared for item in one.inputs if item.tool == "run_shell_command"
                   for need in [one.module.budget_for(item)] if need is not None)
    assert shell["sized"] == len(needs) and shell["budget"] == needs[-(-len(needs) // 2) - 1][0]
    assert 0 <= shell["helpedSessions"] <= shell["sessions"] == 7
    assert rows["grep_search"]["budget"] is None and "fixes" in rows["grep_search"]["note"]


def test_refusals_are_one_line_with_exit_2(qwen_fleet):
    db, _, scratch = qwen_fleet
    for args, words in ((["--whatif", "nosuchKey=1"], "no agent doctor replays has a limit"),
                        (["--whatif", f"{THRESHOLD}=500"], "below it"),
                        (["--whatif", f"{THRESHOLD}=lots"], "not a number"),
                        (["--whatif", "contextManagement.tools.outputMasking.protectionThresholdTokens=1000"],
                         "acts across a whole session")):
        done = cli("scan", "--db", db, *args, home=scratch, scratch=scratch)
        assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1


AGENT_CASES = {
    "claude": ("bashOutputMaxChars", [10000, 20000, 60000, "default"]),
    "gemini": (THRESHOLD, [10000, 60000, 150000, "default"]),
    "codex": ("tool_output_token_limit", [1000, 12000, 2500, "default"]),
}


@pytest.mark.slow
@pytest.mark.parametrize("agent", sorted(AGENT_CASES))
def test_other_agents_fleet_against_the_exact_replay(agent, tmp_path, capsys):
    key, values = AGENT_CASES[agent]
    db = tmp_path / "fleet.duckdb"
    prepared = []
    for variant in agent_recordings.VARIANTS[agent]:
        rec = agent_recordings.recording(agent, variant)
        scan(db, [rec.session_file], rec.folder / "home", tmp_path)
        prepared.append(replay.prepare(rec.open(), rec.options))
    errors = check(fleet_sweep(db, key, values, tmp_path), prepared, agent, key, values)
    with capsys.disabled():
        print("\n" + "\n".join(errors))


def test_sessions_without_a_replay_are_counted_with_the_reason(tmp_path):
    """A request dump (no agent doctor replays) is in the database but left out of the answer, and says why."""
    dump = Path(__file__).resolve().parents[1] / "recordings" / "dumps" / "anthropic.request.json"
    db = tmp_path / "fleet.duckdb"
    scan(db, [dump], tmp_path, tmp_path)
    done = cli("scan", "--db", db, "--whatif", f"{THRESHOLD}=10000", "--json", home=tmp_path, scratch=tmp_path)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["coverage"]["replayed"] == 0 and answer["coverage"]["sessions"] == 1
    (left_out,) = answer["coverage"]["notReplayed"]
    assert left_out["sessions"] == 1 and "no replay for" in left_out["reason"]
    assert answer["whatif"][0]["groups"] == []


def test_a_rescan_replaces_a_sessions_replay_rows(tmp_path):
    """`--force` reads the session again: its replay rows are rewritten, never doubled, and the answer is the same."""
    import duckdb

    session = unpack("default", tmp_path / "sessions")
    db = tmp_path / "fleet.duckdb"

    def counts() -> tuple:
        with duckdb.connect(str(db), read_only=True) as connection:
            return tuple(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                         for table in ("replay_sessions", "replay_keys", "replay_results", "replay_samples"))

    def answer() -> dict:
        done = cli("scan", "--db", db, "--whatif", f"{THRESHOLD}=10000", "--json", home=tmp_path, scratch=tmp_path)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["whatif"]

    scan(db, [session], tmp_path, tmp_path)
    first, before = counts(), answer()
    assert first[0] == 1 and first[2] == 21 and first[3] > 0
    done = cli("scan", "--db", db, "--jobs", "1", "--force", "--replay", "-o", tmp_path / "again.txt", session,
               home=tmp_path, scratch=tmp_path)
    assert done.returncode in (0, 3), done.stderr
    assert counts() == first and answer() == before


def test_a_scan_stores_replay_inputs_only_when_asked_and_reads_again_what_lacks_them(tmp_path):
    """A plain scan replays nothing (a triage scan stays at the reader's cost); the answer says why the session is
    left out and what to do. `--replay` then reads that unchanged file again, and only it; `--whatif` with PATH
    stores them in the same scan and answers from them."""
    import duckdb

    session = unpack("default", tmp_path / "sessions")
    db = tmp_path / "fleet.duckdb"

    def stored() -> int:
        with duckdb.connect(str(db), read_only=True) as connection:
            return connection.execute("SELECT count(*) FROM replay_results").fetchone()[0]

    done = cli("scan", "--db", db, "--jobs", "1", "-o", tmp_path / "plain.txt", session, home=tmp_path,
               scratch=tmp_path)
    assert done.returncode in (0, 3), done.stderr
    assert stored() == 0
    done = cli("scan", "--db", db, "--whatif", f"{THRESHOLD}=10000", "--json", home=tmp_path, scratch=tmp_path)
    coverage = json.loads(done.stdout)["coverage"]
    assert coverage["replayed"] == 0 and "scan again with --replay" in coverage["notReplayed"][0]["reason"]

    def replay_scan() -> dict:
        done = cli("scan", "--db", db, "--jobs", "1", "--replay", "--json", session, home=tmp_path, scratch=tmp_path)
        assert done.returncode in (0, 3), done.stderr
        return json.loads(done.stdout)["scan"]

    counted = replay_scan()
    assert (counted["unchanged"], counted["replayed"], counted["changed"]) == (0, 1, 0)
    assert stored() == 21
    counted = replay_scan()
    assert (counted["unchanged"], counted["replayed"]) == (1, 0)  # stored once, not read again

    fresh = tmp_path / "fresh.duckdb"
    done = cli("scan", "--db", fresh, "--jobs", "1", "--whatif", f"{THRESHOLD}=10000", "--json", session,
               home=tmp_path, scratch=tmp_path)
    assert done.returncode in (0, 3), done.stderr
    assert json.loads(done.stdout)["coverage"]["replayed"] == 1
