"""The ``hb`` command: list, run and copy the workbook's notebooks, and fetch data.

    hb list                                   notebooks and their one-line descriptions
    hb run --profile smoke [--only NAME ...]  execute notebooks into outputs/<profile>/
    hb claims [--profile P]                   the papers' claims checked by the last runs
    hb new NAME --from NOTEBOOK               start a notebook from an existing one
    hb cache verify [--sample N]              recompute a sample of the result cache and compare
    hb warmup                                 compile every numba kernel into the cache (make install runs it)
    hb data fetch-imdb [--dest DIR]           download the IMDB learning curves

User mistakes (unknown profile or notebook, bad parameter files, bad names, an unwritable outputs
folder) print one line ``hb: error: ...`` and exit with status 2; a failed notebook makes ``hb run``
exit with status 1; Ctrl-C stops it with status 130.
"""
from __future__ import annotations

import argparse
import inspect
import os
import sys
from pathlib import Path

from . import timing
from . import workbook as wbk
from .outputs import requested_figure_formats

EXIT_FAILED = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line (no usage block)."""

    def error(self, message):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="hb",
        description="Run the horizonbandits workbook: notebooks/*.ipynb executed with papermill, "
                    "parameters from params/<profile>/<name>.yaml, results in outputs/<profile>/.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  hb list\n"
               "  hb run --profile smoke                  # every notebook, tiny sizes\n"
               "  hb run --profile default --only horizon_dependence optimal_policy --jobs 2\n"
               "  hb new my_family --from new_instance_family\n"
               "  hb run --profile smoke --only my_family\n\n"
               "Results: outputs/<profile>/index.html (open it in a browser) and manifest.json.\n"
               "Exit status: 0 ok, 1 a notebook failed, 2 a usage or parameter-file mistake (nothing run), "
               "130 interrupted.",
    )
    parser.add_argument("--root", metavar="DIR",
                        help="workbook folder holding notebooks/ and params/ (default: $HB_ROOT, else the "
                             "nearest such folder above the current one, else this repository)")
    parser.add_argument("--outputs", metavar="DIR",
                        help="where the profile folders are written (default: $HB_OUTPUTS, else ROOT/outputs)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    sub.add_parser("list", help="list the notebooks with their one-line descriptions",
                   description="List every notebooks/*.ipynb with the first line of its description.")

    run = sub.add_parser(
        "run", help="execute notebooks with papermill into outputs/<profile>/",
        description="Check every params/<profile>/<name>.yaml against its notebook's parameters cell, "
                    "then execute the notebooks with papermill into outputs/<profile>/ (executed "
                    "notebooks, html/, figures/, tables/, manifest.json, index.html). Exit status 1 if "
                    "a notebook failed, 2 if nothing ran because of a user mistake.")
    run.add_argument("--profile", default="default", choices=wbk.PROFILES,
                     help="parameter set: smoke (seconds, for tests), default (minutes), paper (full "
                          "scale); default: %(default)s")
    run.add_argument("--only", nargs="+", action="extend", metavar="NAME",
                     help="run only these notebooks (see hb list); the index keeps the others' last results")
    run.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                     help="notebooks executed in parallel processes (default 1; results are identical)")
    run.add_argument("--check", action="store_true",
                     help="only validate the parameter files and show what would run")
    run.add_argument("--cluster", metavar="ADDRESS", default=None,
                     help="send the notebooks' grids to the dask scheduler at ADDRESS (e.g. tcp://host:8786); "
                          f"the kernels see it as ${wbk.CLUSTER_ENV} (default: ${wbk.CLUSTER_ENV} if set)")

    claims = sub.add_parser(
        "claims", help="print the papers' claims checked by the notebooks run so far",
        description="Print outputs/<profile>/claims.csv: every claim the notebooks run in that profile "
                    "recorded, grouped by paper and kind (test, illustration, formula, ours), with our number "
                    "and the verdict; the papers' tallies count the test claims only. With --diff OTHER, print "
                    "what changed from OTHER (a profile name or a claims.csv of another run or commit): "
                    "claims added or removed, verdicts, kinds and numbers that moved. Exit status 2 if a "
                    "ledger is missing or unreadable.")
    claims.add_argument("--profile", default="default", choices=wbk.PROFILES,
                        help="which run's claims (default: %(default)s)")
    claims.add_argument("--diff", metavar="OTHER",
                        help="compare with OTHER: a profile name (its claims.csv) or the path of a claims.csv; "
                             "changes are listed from OTHER to --profile")

    new = sub.add_parser(
        "new", help="copy a notebook under a new name, with its parameter files",
        description="Copy notebooks/NOTEBOOK.ipynb to notebooks/NAME.ipynb (outputs stripped, title "
                    "replaced, figure-name prefixes renamed) and params/*/NOTEBOOK.yaml to NAME.yaml. "
                    "Never overwrites.")
    new.add_argument("name", metavar="NAME", help="new notebook name: lowercase letters, digits, underscores")
    new.add_argument("--from", dest="source", required=True, metavar="NOTEBOOK", help="notebook to copy")
    new.add_argument("--title", help="title of the new notebook (default: from NAME)")

    cache = sub.add_parser("cache", help="check the grids' result cache",
                           description="The result cache (outputs/cache, or $HB_CACHE_DIR) is trusted input: its "
                                       "digest catches damage, not deliberate edits.")
    cache_sub = cache.add_subparsers(dest="cache_command", metavar="ACTION")
    verify = cache_sub.add_parser(
        "verify", help="recompute a sample of the cache's entries and compare",
        description="Run the profile's notebooks into a scratch folder against the cache, each grid "
                    "recomputing --sample of the entries it reads; report every entry that differs. Nothing "
                    "is written to the cache or to outputs/<profile>/. Exit status 0 when all are equal, 1 when "
                    "one differs, a notebook failed or nothing was read.")
    verify.add_argument("--profile", default="default", choices=wbk.PROFILES,
                        help="whose notebooks (and so whose entries) to verify (default: %(default)s)")
    verify.add_argument("--sample", type=int, default=5, metavar="N",
                        help="entries recomputed per grid call (default: %(default)s)")
    verify.add_argument("--only", nargs="+", action="extend", metavar="NAME", help="only these notebooks")
    verify.add_argument("--cache", metavar="DIR",
                        help="the cache folder (default: $HB_CACHE_DIR, else the outputs' cache/)")

    sub.add_parser("warmup", help="compile every numba kernel into the cache, once per source version",
                   description="Run every registered policy (rising, commitment, portfolio) once on a tiny instance, "
                               "so that its numba kernels are compiled into the cache "
                               "(~/.cache/horizonbandits/numba/<source digest>, or $NUMBA_CACHE_DIR). The first "
                               "grid of a notebook then starts at once; a second warmup loads them from the cache. "
                               "Prints one line per model and the total time.")

    data = sub.add_parser("data", help="fetch the data sets some notebooks use",
                          description="Download data sets that are not part of the repository.")
    data_sub = data.add_subparsers(dest="data_command", metavar="DATASET")
    imdb = data_sub.add_parser("fetch-imdb", help="download the IMDB learning curves",
                               description="Download the IMDB learning curves used by the real-data "
                                           "notebooks (needs network access).")
    imdb.add_argument("--dest", metavar="DIR", help="target folder (default: chosen by horizonbandits.rising.imdb)")
    return parser


def _cmd_list(wb: wbk.Workbook, args) -> int:
    infos = wb.notebooks()
    if not infos:
        print(f"no notebooks in {wb.notebooks_dir}")
        return 0
    width = max(len(i.name) for i in infos)
    for info in infos:
        if info.problem:  # listed, and said once on stderr, so the other notebooks stay usable
            print(f"{info.name:<{width}}  (cannot be read)")
            print(f"hb: warning: {info.problem}", file=sys.stderr)
        else:
            print(f"{info.name:<{width}}  {info.description or '(no description)'}")
    return 0


def _cluster_address(args) -> str | None:
    address = args.cluster if args.cluster is not None else os.environ.get(wbk.CLUSTER_ENV) or None
    if address is not None and (not address.strip() or any(c.isspace() for c in address)):
        raise wbk.WorkbookError(f"--cluster={address!r} is not allowed: expected a scheduler address such as "
                                "tcp://127.0.0.1:8786")
    return address


def _cmd_run(wb: wbk.Workbook, args, argv) -> int:
    if args.jobs < 1:
        raise wbk.WorkbookError(f"--jobs={args.jobs} is not allowed: expected an integer >= 1")
    cluster = _cluster_address(args)
    try:  # the kernels read it when they save a figure; a bad value is said once here, before any runs
        requested_figure_formats()
    except ValueError as exc:
        raise wbk.WorkbookError(str(exc)) from None
    if args.check:
        plans = wbk.plan_run(wb, args.profile, wb.select(args.only))
        for plan in plans:
            if plan.problem:
                print(f"{plan.name}: cannot run: {plan.problem}")
                continue
            source = plan.params_file or "no parameter file (defaults)"
            print(f"{plan.name}: {source}; overrides {plan.overrides}")
        env = wbk.kernel_environment(wb, cluster)
        workers = wbk.check_scheduler(cluster) if cluster else None
        print(f"kernels get {wbk.CACHE_ENV}={env[wbk.CACHE_ENV]}"
              + (f" and {wbk.CLUSTER_ENV}={cluster} (grids run on that dask cluster, {workers} worker(s) now)"
                 if cluster else " (grids run on this machine)"))
        print(f"{args.profile}: {len(plans)} notebook(s) valid")
        return 0
    return wbk.run(wb, args.profile, only=args.only, jobs=args.jobs, argv=["hb", *argv], cluster=cluster)


def _ledger_path(wb: wbk.Workbook, name: str) -> Path:
    if name in wbk.PROFILES:
        path = wb.profile_dir(name) / "claims.csv"
        if not path.is_file():
            raise wbk.WorkbookError(f"no claims for the {name} profile: {wb.rel(path)} does not exist; "
                                    f"run hb run --profile {name} first")
        return path
    path = Path(name).expanduser()
    if not path.is_file():
        raise wbk.WorkbookError(f"--diff {name!r} is neither a profile ({', '.join(wbk.PROFILES)}) nor a claims.csv file")
    return path


def _read_ledger(wb: wbk.Workbook, path: Path, strict: bool = True):
    from . import claims

    try:
        return claims.read_table(path, strict=strict)
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise wbk.WorkbookError(f"{wb.rel(path)}: {' '.join(str(exc).split())}") from None


def _cmd_claims(wb: wbk.Workbook, args) -> int:
    from . import claims

    path = _ledger_path(wb, args.profile)
    table = _read_ledger(wb, path)
    if args.diff is not None:
        other = _ledger_path(wb, args.diff)
        changes = claims.diff(_read_ledger(wb, other, strict=False), table)
        label = args.diff if args.diff in wbk.PROFILES else wb.rel(other)
        print(_diff_text(changes, label, args.profile))
        return 0
    print(_claims_text(table))
    for paper, line in claims.paper_tallies(table).items():
        print(f"{args.profile}: paper {paper} tests: {line}")
    print(f"{args.profile}: {len(table)} claim(s) in all: {claims.summary_line(table)}")
    return 0


def _plain(text) -> str:
    """Text safe for a terminal: control characters (escape codes among them) shown as '?'."""
    return "".join(c if c.isprintable() else "?" for c in str(text))


def _claims_text(table) -> str:
    """The ledger as text: one line per claim (id, verdict, where, ours), grouped by paper and kind."""
    from .claims import KIND_TITLES, KINDS

    if not len(table):
        return "(no notebook run so far recorded a claim)"
    width = max(len(_plain(c)) for c in table["claim_id"])
    verdict_width = max(len(v) for v in table["verdict"])
    lines = []
    for paper, rows in table.groupby("paper", sort=True):
        for kind in KINDS:
            sub = rows[rows["kind"] == kind]
            if not len(sub):
                continue
            lines.append(f"paper {paper}: {KIND_TITLES[kind]}")
            for row in sub.to_dict("records"):
                extra = f" | interval {row['interval']}" if row["interval"] else ""
                lines.append(_plain(f"  {row['claim_id']:<{width}}  {row['verdict']:<{verdict_width}}  {row['where']}: "
                                    f"{row['statement']} | paper: {row['paper_value']} | ours: {row['ours']}{extra} "
                                    f"[{row['notebook']}]"))
    return "\n".join(lines)


def _diff_text(changes, old_name: str, new_name: str) -> str:
    if not len(changes):
        return f"no claim changed from {old_name} to {new_name}"
    lines = [f"{len(set(changes['claim_id']))} claim(s) changed from {old_name} to {new_name}:"]
    for cid, rows in changes.groupby("claim_id", sort=False):
        lines.append(_plain(f"  {cid}"))
        for row in rows.to_dict("records"):
            lines.append(_plain(f"    {row['change']}: {row['old'] or '-'} -> {row['new'] or '-'}"))
    return "\n".join(lines)


def _cmd_new(wb: wbk.Workbook, args) -> int:
    written = wbk.new_notebook(wb, args.name, args.source, title=args.title)
    for path in written:
        print(f"created {wb.rel(path)}")
    print(f"'{args.name}' is registered: hb list shows it; run it with hb run --profile smoke --only {args.name}")
    return 0


def _cmd_fetch_imdb(wb: wbk.Workbook, args) -> int:
    try:
        from .rising.imdb import fetch_imdb
    except ImportError as exc:
        raise wbk.WorkbookError(f"the IMDB loader is not available ({exc})") from None
    first = next(iter(inspect.signature(fetch_imdb).parameters.values()), None)
    try:
        if args.dest is None and first is not None and first.default is not inspect.Parameter.empty:
            result = fetch_imdb()
        else:
            dest = args.dest or os.environ.get("HB_DATA_DIR") or str(wb.root.parent / "shared" / "data")
            result = fetch_imdb(Path(dest).expanduser())
    except (OSError, ValueError) as exc:  # no network, unwritable folder, bad download
        raise wbk.WorkbookError(f"fetch-imdb failed: {type(exc).__name__}: {' '.join(str(exc).split())}") from None
    if result is not None:
        print(f"IMDB learning curves in {result}")
    return 0


def _cmd_warmup(args) -> int:
    import time

    from .workbook.warmup import warm_up
    start = time.perf_counter()
    reports = warm_up(echo=lambda line: print(line, flush=True))
    compiled = sum(r.compiled for r in reports)
    print(f"warmup: {time.perf_counter() - start:.1f} s in all, {compiled} kernel(s) compiled"
          + ("" if compiled else " (all were in the cache)"))
    return 0


def main(argv: list[str] | None = None) -> int:
    timing.begin("hb start")
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    if args.command == "data" and args.data_command is None:
        parser.error("hb data needs a data set, e.g. hb data fetch-imdb")
    if args.command == "cache" and args.cache_command is None:
        parser.error("hb cache needs an action, e.g. hb cache verify")
    try:
        if args.command == "warmup":  # needs the package only, not a workbook
            return _cmd_warmup(args)
        wb = wbk.Workbook.locate(args.root, args.outputs)
        if args.command == "list":
            return _cmd_list(wb, args)
        if args.command == "run":
            return _cmd_run(wb, args, argv)
        if args.command == "new":
            return _cmd_new(wb, args)
        if args.command == "claims":
            return _cmd_claims(wb, args)
        if args.command == "cache":
            return wbk.verify_cache(wb, args.profile, sample=args.sample, only=wb.select(args.only),
                                    cache_dir=args.cache)
        return _cmd_fetch_imdb(wb, args)
    except wbk.ValidationError as exc:
        for problem in exc.problems:  # one line each; nothing has run
            print(f"hb: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    except wbk.WorkbookError as exc:
        print(f"hb: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("hb: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
