"""`doctor scan PATH… [--all]`: many sessions into a triage database, and the answers support needs.

Sessions of every agent, pasted `doctor memory --json` reports and tar/zip archives
of them go into an embedded DuckDB database (`--db`, default in doctor's data
directory); a re-scan reads only what changed. With no PATH it answers from the
database as it is. Needs the `[triage]` extra; this module imports it only when run.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from doctor import exitcodes
from doctor.commands.arguments import positive_int
from doctor.report.inert import inert_line
from doctor.report.model import PATH_STYLES

FORMATS = ("text", "json", "markdown", "html")
EXTRA_HINT = "doctor scan needs the triage extra: pip install 'doctor-memory[triage]'"


def default_db() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("doctor")) / "triage.duckdb"


def register(subparsers) -> None:
    from doctor.safety import archive_caps

    parser = subparsers.add_parser("scan", help="many sessions or reports into a triage database, and its answers",
                                   description=__doc__.splitlines()[0],
                                   epilog=f"Archives: {archive_caps.TEXT}. In folders only regular files are read: "
                                          "FIFOs, devices, sockets and links below a folder are listed as skipped.")
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="session files, folders, globs, pasted JSON reports, tar/zip archives")
    parser.add_argument("--all", dest="scan_all", action="store_true", help="every session of every agent on this machine")
    parser.add_argument("--db", type=Path, metavar="FILE", help=f"triage database (default: {default_db()})")
    parser.add_argument("--paths", dest="path_style", choices=PATH_STYLES, default="short", help="how the database stores paths (short)")
    parser.add_argument("--force", action="store_true", help="read every file again, changed or not")
    parser.add_argument("--prune", action="store_true",
                        help="delete the rows of files marked gone (deleted or renamed since they were scanned)")
    run = parser.add_argument_group("running")
    run.add_argument("--jobs", "-j", type=positive_int, metavar="N", help="worker processes (default: all cores)")
    run.add_argument("--engine", choices=("local", "dask"), default="local", help="local process pool or a Dask cluster")
    run.add_argument("--scheduler", metavar="ADDR", help="Dask scheduler address (with --engine dask)")
    out = parser.add_argument_group("answers")
    out.add_argument("--format", choices=FORMATS, default="text", help="report format (text)")
    out.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")
    out.add_argument("--output", "-o", type=Path, metavar="FILE", help="write the report to FILE (mode 0600)")
    out.add_argument("--top", type=positive_int, default=10, metavar="N", help="rows per ranking (10)")
    out.add_argument("--compare", metavar="FIELD=A,B",
                     help="what changed between two groups, e.g. agent_version=0.24.3,0.24.4 "
                          "(agent, agent_version, format, source, project_hash)")
    out.add_argument("--tui", action="store_true",
                     help="open the Fleet screen: sessions sortable and filterable, a tool's histogram, "
                          "enter opens a session (stored with --paths full)")
    out.add_argument("--skipped", action="store_true",
                     help="list every skipped file by name, and the files found in folders that are not sessions "
                          "(without it: the newest --top skipped)")
    out.add_argument("--query", metavar="SQL",
                     help="run one SELECT on the database and print its rows (read-only, no file or network "
                          "access; anything else is refused with exit 5)")
    out.add_argument("--parquet", type=Path, metavar="DIR", help="export the sessions and results tables as Parquet")
    chosen = parser.add_argument_group("which sessions (every answer, export, metric and the Fleet screen)")
    chosen.add_argument("--since", metavar="WHEN",
                        help="sessions started at or after WHEN (2026-03-01, 2026-03-01T14:30Z; no zone: UTC)")
    chosen.add_argument("--until", metavar="WHEN", help="sessions started before WHEN (a bare date keeps that day)")
    chosen.add_argument("--where", nargs="+", action="extend", metavar="FIELD=VALUE",
                        help="keep sessions whose FIELD is VALUE: agent, agent_version, tool, project (its hash or "
                             "folder), format, source, session; a field given twice keeps either value")
    chosen.add_argument("--label", dest="labels", nargs="+", action="extend", metavar="KEY=VALUE",
                        help="with PATH: record KEY=VALUE (a ticket, a customer) on this scan and every file it is "
                             "given; the answers keep the sessions carrying every label given")
    _register_whatif(parser)
    metrics = parser.add_argument_group("metrics")
    metrics.add_argument("--openmetrics", type=Path, metavar="FILE",
                         help="write the per-tool histograms as OpenMetrics text, ending # EOF (Prometheus and its "
                              "textfile collector read it)")
    metrics.add_argument("--otlp", metavar="URL",
                         help="export them as OpenTelemetry metrics over OTLP/HTTP (e.g. http://127.0.0.1:4318)")
    metrics.add_argument("--max-tools", type=positive_int, default=50, metavar="N",
                         help="tools named in metrics; the rest are tool=\"other\" (50)")
    parser.set_defaults(handler=run_scan)


def _register_whatif(parser) -> None:
    from doctor.whatif.fleet_command import register

    register(parser)


def _fail(message: str, code: int = exitcodes.USAGE_OR_INPUT) -> int:
    print(f"doctor scan: {message}", file=sys.stderr)
    return code


def run_scan(args) -> int:
    if args.engine == "dask" and not args.scheduler:
        return _fail("--engine dask needs --scheduler ADDR (e.g. tcp://127.0.0.1:8786)")
    try:
        from doctor.triage import compare, engines, filters, inputs, metrics, runner  # noqa: F401 (runner: DuckDB)
    except ModuleNotFoundError as exc:
        return _fail(f"{EXTRA_HINT} ({exc.name} is missing)")
    if (args.paths or args.scan_all) and importlib.util.find_spec("pyarrow") is None:
        return _fail(f"{EXTRA_HINT} (pyarrow is missing)")  # the store writes result rows as Arrow tables
    try:
        args.compare = compare.parse(args.compare) if args.compare else None
        args.filters = filters.parse(args.since, args.until, args.where, args.labels)
        empty: list[str] = []
        files = inputs.expand(args.paths, args.scan_all, empty=empty)
        if args.otlp:
            metrics.otlp_endpoint(args.otlp)  # a URL that cannot work is said before anything is scanned
    except (inputs.InputError, compare.CompareError, filters.FilterError, metrics.ExportError) as exc:
        return _fail(str(exc))
    args.walked = frozenset(inputs.walked_folders(args.paths))  # a folder now empty still marks its files gone
    db_path = args.db or default_db()
    empty = _new_empty_folders(db_path, empty)
    for folder in empty:  # said, never answered from the database as if the folder had been scanned
        print(f"doctor scan: {inert_line(folder)}: {inputs.EMPTY_FOLDER}", file=sys.stderr)
    if empty and not files and len(empty) == len(args.paths) and not args.scan_all:
        return exitcodes.USAGE_OR_INPUT
    args.empty_folders = empty
    scanning = bool(files) or bool(args.walked) or args.scan_all or args.prune
    try:
        engine = engines.open_engine(args.engine, workers=args.jobs, scheduler=args.scheduler) if scanning else None
    except engines.EngineError as exc:
        return _fail(str(exc))
    try:
        return _scan_and_answer(args, db_path, files, engine)
    finally:
        if engine is not None:
            engine.close()


def _scan_and_answer(args, db_path: Path, files: list, engine) -> int:
    from doctor.triage.store import ctrl_c_as_interrupt

    with ctrl_c_as_interrupt():
        return _open_scan_and_answer(args, db_path, files, engine)


def _open_scan_and_answer(args, db_path: Path, files: list, engine) -> int:
    """Scan (when there are files) on a writable connection closed before answering; the answers
    read the database on a read-only connection of their own (store.ANSWERING)."""
    from doctor.triage import runner
    from doctor.triage.store import Store, StoreError
    from doctor.whatif.fleet_command import replay_wanted

    summary, partial = None, False
    try:
        if (engine is not None and (files or args.walked)) or args.prune:
            store = Store(db_path)
            try:
                if engine is not None and (files or args.walked):
                    request = runner.ScanRequest(files, path_style=args.path_style, engine=engine, force=args.force,
                                                 walked=args.walked, labels=args.filters.labels,
                                                 replay=replay_wanted(args))
                    summary = runner.scan(store, request)
                    partial = _named_not_sessions(store, args.paths)
                if args.prune:
                    pruned = store.prune()
                    print(f"doctor scan: pruned {pruned:,} file{'s' if pruned != 1 else ''} marked gone",
                          file=sys.stderr)
            except KeyboardInterrupt as stop:
                print("doctor scan: interrupted; every file finished so far is committed", file=sys.stderr)
                return getattr(stop, "exit_code", exitcodes.INTERRUPTED)
            finally:
                store.close()
        store = Store(db_path, read_only=True)
    except StoreError as exc:
        return _store_failed(exc)
    partial = summary is not None and (summary.counts["skipped"] > 0 or bool(args.empty_folders) or partial)
    try:
        from doctor.triage.filters import apply
        from doctor.triage.schema import settle_counted

        apply(store.db, args.filters)
        settle_counted(store.db)
        if args.tui:
            from doctor.triage.fleet import load_fleet

            fleet = load_fleet(store)
        else:
            return _answer(store, args, summary, partial)
    finally:
        store.close()
    from doctor.triage.fleet import session_provider
    from doctor.tui import run_fleet_app

    run_fleet_app(fleet, session_provider)
    return exitcodes.PARTIAL_INPUT if partial else exitcodes.OK


def _new_empty_folders(db_path: Path, empty: list[str]) -> list[str]:
    """The empty folders the database holds no file of: a folder emptied since a scan is a re-scan (its
    files are marked gone), not a mistake to point out."""
    if not empty or not db_path.exists():
        return empty
    from doctor.triage.inputs import folder_key
    from doctor.triage.store import Store, StoreError

    try:
        store = Store(db_path, read_only=True)
    except StoreError:
        return empty
    try:
        return [folder for folder in empty if not store.db.execute(
            "SELECT count(*) FROM files WHERE contains(' ' || folder_keys || ' ', ?)",
            [f" {folder_key(Path(folder).expanduser().absolute())} "]).fetchone()[0]]
    finally:
        store.close()


def _named_not_sessions(store, paths: list[str]) -> bool:
    """Say which files named on the command line (not found in a folder) no reader recognised: the user
    asked for them, so that is part of the input skipped (exit 3), unlike an agent's settings in a folder."""
    from doctor.triage.inputs import file_key

    named = {file_key(Path(path).expanduser().absolute()): path for path in paths if Path(path).expanduser().is_file()}
    if not named:
        return False
    rows = store.db.execute("SELECT file_key, reason FROM files WHERE status = 'not-session' AND file_key IN "
                            "(SELECT unnest(?::VARCHAR[]))", [list(named)]).fetchall()
    for key, reason in rows:
        print(f"doctor scan: {inert_line(named[key])}: not a session or doctor report ({inert_line(reason)})",
              file=sys.stderr)
    return bool(rows)


def _store_failed(exc) -> int:
    from doctor.triage.store import Refused

    return _fail(str(exc), exitcodes.REFUSED if isinstance(exc, Refused) else exitcodes.USAGE_OR_INPUT)


def _answer(store, args, summary, partial: bool) -> int:
    from doctor.triage import answers

    if args.parquet:
        try:
            answers.export_parquet(store, args.parquet, args.filters)
        except OSError as exc:
            return _fail(f"{exc.filename or args.parquet}: {exc.strerror or exc}")
    code = _metrics(store, args)
    if code:
        return code
    if args.whatif or args.sweep or args.recommend:
        from doctor.whatif.fleet_command import answer_text

        text, failure = answer_text(store, args)
        if failure:
            return _fail(failure)
    elif args.query:
        try:
            text = answers.query_text(store, args.query, args.format, args.filters)
        except answers.QueryRefused as exc:
            return _fail(f"--query refused: {exc}", exitcodes.REFUSED)
        except answers.QueryError as exc:
            return _fail(f"--query: {exc}")
    else:
        text = answers.render(answers.collect(store, summary, top=args.top, compare=args.compare,
                                              filters=args.filters, all_skipped=args.skipped), args.format)
    from doctor.commands.output import emit

    failed = emit(text, args.output)
    if failed:
        return _fail(failed)
    return exitcodes.PARTIAL_INPUT if partial else exitcodes.OK


def _metrics(store, args) -> int:
    if not (args.openmetrics or args.otlp):
        return exitcodes.OK
    from doctor.triage import metrics

    aggregate = metrics.aggregate(store, args.max_tools)
    if args.openmetrics:
        try:
            metrics.write_textfile(args.openmetrics, metrics.openmetrics_text(aggregate))
        except OSError as exc:
            return _fail(f"{args.openmetrics}: {exc.strerror or exc}")
    if args.otlp:
        try:
            metrics.export_otlp(aggregate, args.otlp)
        except metrics.ExportError as exc:
            return _fail(str(exc))
    return exitcodes.OK
