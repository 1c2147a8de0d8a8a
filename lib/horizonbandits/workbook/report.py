"""What ``hb run`` writes about a run: ``manifest.json``, ``claims.csv`` and ``index.html``.

All three are rewritten after every notebook (atomically), so an interrupted run keeps what
finished. Entries of notebooks not run this time are kept from the previous manifest, as long as
the notebook still exists. Each entry says which run its figures and tables come from
(``outputs_from``): a failed run keeps the outputs of the last one that succeeded. Each entry's
``outputs`` lists the files that run wrote: they are the notebook's (``execute.adopt_outputs``).
"""
from __future__ import annotations

import html
import json
import platform
import subprocess
from pathlib import Path

from ..outputs import atomic_write_together
from .base import now, one_line
from .execute import Result, owner_of
from .locate import NotebookInfo, Workbook
from .pages import relative_paths
from .params import Plan

# Versions recorded in the manifest.
MANIFEST_PACKAGES = ("horizonbandits", "numpy", "scipy", "numba", "pandas", "matplotlib", "seaborn",
                     "papermill", "cvxpy", "dask")
CSS_FILE = Path(__file__).with_name("index.css")


def git_state(root: Path) -> dict:
    """Commit hash and whether the working tree differs from it (None outside a git repository)."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)

    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return {"commit": None, "dirty": None}
        status = git("status", "--porcelain")
        dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
        return {"commit": head.stdout.strip(), "dirty": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def package_versions() -> dict:
    from importlib import metadata

    versions = {}
    for name in MANIFEST_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def read_manifest(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def recorded_outputs(manifest: dict | None, exact: bool = True) -> dict[str, list[str]]:
    """Notebook -> the files its last successful run wrote (the entries' ``outputs``). With ``exact=False``
    an entry written before ``outputs`` existed lends its ``figures`` and ``tables`` (grouped then by
    file-name prefix), so the index still shows them under their notebook; such a guess never decides
    what a run deletes (``exact=True``, what ``hb run`` passes to ``adopt_outputs``)."""
    records: dict[str, list[str]] = {}
    entries = (manifest or {}).get("notebooks", {})
    for name, entry in entries.items() if isinstance(entries, dict) else ():
        if not isinstance(entry, dict):
            continue
        files = entry.get("outputs")
        if files is None and not exact:
            files = [*entry.get("figures", []), *entry.get("tables", [])]
        if isinstance(files, list):
            records[name] = [f for f in files if isinstance(f, str)]
    return records


def outputs_by_notebook(profile_dir: Path, records: dict[str, list[str]]) -> dict[str | None, dict[str, list[str]]]:
    """Figures (PNG) and tables (CSV) of the profile folder grouped by the notebook whose record holds them
    (``None`` for files no notebook's last run wrote)."""
    groups: dict[str | None, dict[str, list[str]]] = {}
    for sub, pattern in (("figures", "*.png"), ("tables", "*.csv")):
        folder = profile_dir / sub
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob(pattern)):
            if path.name.startswith("."):
                continue
            rel = f"{sub}/{path.name}"
            groups.setdefault(owner_of(rel, records), {"figures": [], "tables": []})[sub].append(rel)
    return groups


def _outputs_from(res: Result, previous: dict | None, git: dict) -> dict | None:
    """The run the notebook's figures and tables now come from: this one when it succeeded, else
    the one the previous entry names (the last success), else None (no successful run yet)."""
    if res.status == "ok":
        return {"started": res.started, "git_commit": git.get("commit"), "git_dirty": git.get("dirty")}
    if not previous:
        return None
    if "outputs_from" in previous:
        return previous["outputs_from"]
    if previous.get("status") == "ok":  # a manifest written before outputs_from existed
        return {"started": previous.get("started"), "git_commit": previous.get("git_commit"),
                "git_dirty": previous.get("git_dirty")}
    return None


def build_manifest(wb: Workbook, profile: str, plans: list[Plan], results: list[Result],
                   merge: bool, argv: list[str] | None = None, git: dict | None = None,
                   packages: dict | None = None, cluster: str | None = None) -> dict:
    """The manifest of this run; with ``merge`` the entries of notebooks not run this time are
    kept from the previous manifest (when those notebooks still exist)."""
    profile_dir = wb.profile_dir(profile)
    git = git_state(wb.root) if git is None else git
    entries: dict[str, dict] = {}
    existing = set(wb.names())
    previous = read_manifest(profile_dir / "manifest.json")
    before = previous.get("notebooks", {}) if previous and previous.get("profile") == profile else {}
    if merge:
        entries.update({name: entry for name, entry in before.items() if name in existing})
    by_name = {r.name: r for r in results}
    for plan in plans:
        res = by_name.get(plan.name)
        if res is None:
            continue
        entry = {
            "title": plan.title,
            "description": plan.description,
            "status": res.status,
            "wall_time_s": res.wall_time_s,
            "started": res.started,
            "git_commit": git["commit"],
            "git_dirty": git["dirty"],
            "params_file": plan.params_file,
            "overrides": plan.overrides,
            "parameters": dict(plan.parameters, output_dir=str(profile_dir)),
            "executed": res.executed,
            "html": res.html,
            "error": res.error,
            "failed_cell": res.failed_cell,
            "outputs_from": _outputs_from(res, before.get(plan.name), git),
            "outputs": res.outputs if res.status == "ok" else (before.get(plan.name) or {}).get("outputs"),
        }
        if res.status != "ok":  # the last good run's pages, which are still in place
            good_html = profile_dir / "html" / f"{plan.name}.html"
            entry["outputs_html"] = f"html/{plan.name}.html" if entry["outputs_from"] and good_html.exists() else None
        entries[plan.name] = entry
    groups = outputs_by_notebook(profile_dir, recorded_outputs({"notebooks": entries}, exact=False))
    for name, entry in entries.items():
        entry["figures"] = groups.get(name, {}).get("figures", [])
        entry["tables"] = groups.get(name, {}).get("tables", [])
    return {
        "profile": profile,
        "generated": now(),
        "command": argv,
        "cluster": cluster,
        "git": git,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": package_versions() if packages is None else packages,
        "notebooks": {name: entries[name] for name in sorted(entries)},
    }


# --------------------------------------------------------------------------- index.html


def _e(text) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def _status_badge(status: str | None) -> str:
    cls = {"ok": "ok", "failed": "failed"}.get(status or "", "notrun")
    return f'<span class="status {cls}">{_e(status or "not run")}</span>'


def _png_size(path: Path) -> tuple[int, int] | None:
    """Width and height of a PNG from its header (no imaging library needed)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(24)
    except OSError:
        return None
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


# A figure takes a whole row of the gallery when it is wide (several panels side by side) or large
# (several panels in a grid: at half a row its text would be shrunk below about 0.6 of its size).
WIDE_ASPECT = 1.8
WIDE_PIXELS = 1000


def _gallery(files: dict[str, list[str]], profile_dir: Path | None = None) -> str:
    """Figures at a readable size (a multi-panel figure, wide or large, takes the whole row, others
    half of it, so at most two per row; a click opens the full image) and links to the tables."""
    parts = []
    if files.get("figures"):
        items = []
        for png in files["figures"]:
            pdf = png[:-4] + ".pdf"  # written only in the paper profile or when $HB_FIGURE_FORMATS asks for it
            pdf_link = f' (<a href="{_e(pdf)}">pdf</a>)' if profile_dir is not None and (profile_dir / pdf).is_file() else ""
            size = _png_size(profile_dir / png) if profile_dir is not None else None
            wide = size is not None and (size[0] > WIDE_ASPECT * size[1] or size[0] > WIDE_PIXELS)
            items.append(f'<figure class="{"wide" if wide else "half"}"><a href="{_e(png)}" title="open full size">'
                         f'<img src="{_e(png)}" alt="{_e(Path(png).stem)}" loading="lazy"></a>'
                         f"<figcaption>{_e(Path(png).stem)}{pdf_link}</figcaption></figure>")
        parts.append('<div class="gallery">' + "".join(items) + "</div>")
    if files.get("tables"):
        links = ", ".join(f'<a href="{_e(csv)}">{_e(Path(csv).name)}</a>' for csv in files["tables"])
        parts.append(f"<p>Tables: {links}</p>")
    return "\n".join(parts) if parts else "<p><em>No figures or tables.</em></p>"


def _run_label(run: dict | None) -> str:
    if not run:
        return ""
    commit = run.get("git_commit")
    label = _e(run.get("started") or "an earlier run")
    if commit:
        label += f", commit {_e(commit[:10])}{'+' if run.get('git_dirty') else ''}"
    return label


def _verdict_badge(verdict: str) -> str:
    return f'<span class="verdict {verdict.replace(" ", "-")}">{_e(verdict)}</span>'


def _counts_labels(frame) -> str:
    from .. import claims as claims_mod

    return " ".join(f'<span class="count {v.replace(" ", "-")}" data-verdict="{_e(v)}" data-n="{n}">{n} {_e(v)}</span>'
                    for v, n in claims_mod.counts(frame).items() if n)


def _clip(text, limit: int) -> str:
    """``text`` escaped, cut to about ``limit`` characters with the whole of it in the title attribute
    (shown on hover) when longer: keeps a ledger cell to a few lines."""
    text = "" if text is None else str(text)
    if len(text) <= limit:
        return _e(text)
    return f'<span class="clip" title="{_e(text)}">{_e(text[:limit - 3].rstrip())}&hellip;</span>'


def _notebook_papers(ledger, names, catalogue_path=None) -> dict[str, str]:
    """The paper each notebook checks (from its ledger rows, else the catalogue), '' for none."""
    from .. import claims as claims_mod

    papers: dict[str, str] = {}
    if ledger is not None and len(ledger):
        for nb, sub in ledger.groupby("notebook"):
            papers[nb] = sub["paper"].mode().iloc[0]
    try:
        catalogue = claims_mod.catalogue.load(catalogue_path)
    except (OSError, ValueError):
        catalogue = {}
    for entry in catalogue.values():
        papers.setdefault(entry.notebook, entry.paper)
    return {n: papers.get(n, "") for n in names}


# The longest text a ledger cell shows before it is cut (the whole in a title attribute, or for
# 'ours' in the row's <details>): at most four lines of its column at 1,280 px.
LEDGER_CLIP = {"statement": 100, "paper_value": 40, "ours": 120, "where": 32}


def _ledger_section(ledger, entries: dict, problems=()) -> str:
    """The claims ledger: per paper and kind the verdict counts as labels, buttons that filter the
    rows by verdict (plain JavaScript, nothing from the network), then one table per kind with our
    number short and its detail (interval, rule, readings, settings) folded in a <details>."""
    from .. import claims as claims_mod

    warn = "".join(f'<p class="stale">{_e(p)}</p>' for p in problems)
    if ledger is None or not len(ledger):
        return ('<section id="claims"><h2>Claims</h2>' + warn + '<p><em>No notebook run so far recorded a claim '
                "(claims.Ledger).</em></p></section>")
    tally = claims_mod.tally(ledger)
    tally_rows = "".join(
        f"<tr><td>{_e(r['paper'])}</td><td>{_e(r['kind'])}</td><td>{r['claims']}</td>"
        f"<td>{_counts_labels(ledger[(ledger['paper'] == r['paper']) & (ledger['kind'] == r['kind'])])}</td></tr>"
        for r in tally.to_dict("records"))
    verdicts = [v for v in claims_mod.LEDGER_VERDICTS if (ledger["verdict"] == v).any()]
    buttons = "".join(f'<button type="button" data-verdict="{_e(v)}">{_e(v)}</button>' for v in verdicts)
    tables = []
    for kind in claims_mod.KINDS:
        sub = ledger[ledger["kind"] == kind]
        if not len(sub):
            continue
        rows = []
        for row in sub.to_dict("records"):
            entry = entries.get(row["notebook"], {})
            page = entry.get("html") if entry.get("status") == "ok" else entry.get("outputs_html")
            target = page or f"#{row['notebook']}"
            stale = ('<br><span class="stale">the last run failed; this row is from the run of '
                     f"{_run_label(entry.get('outputs_from'))}</span>") if entry.get("status") == "failed" else ""
            detail = [(label, row.get(col, "")) for label, col in (
                ("Over", "n"), ("Interval", "interval"), ("Rule", "rule"), ("To decide", "to_decide"),
                ("Readings", "readings"), ("Depends on", "depends_on"), ("Settings", "settings"))]
            details = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in detail if v)
            ours = _e(row["ours"])
            limit = LEDGER_CLIP["ours"]
            short = ours if len(row["ours"]) <= limit else _e(row["ours"][:limit - 3].rstrip()) + "&hellip;"
            ours_cell = (f'<details title="{ours}"><summary>{short}</summary>{"" if short == ours else f"<p>{ours}</p>"}'
                         f"<dl>{details}</dl></details>" if details or short != ours else ours)
            rows.append(
                f'<tr data-verdict="{_e(row["verdict"])}"><td><code>{_e(row["claim_id"])}</code><br>'
                f'<span class="where">{_e(row["paper"])}, {_clip(row["where"], LEDGER_CLIP["where"])}</span></td>'
                f"<td>{_clip(row['statement'], LEDGER_CLIP['statement'])}</td>"
                f"<td>{_clip(row['paper_value'], LEDGER_CLIP['paper_value'])}</td><td>{ours_cell}</td>"
                f"<td>{_verdict_badge(row['verdict'])}</td>"
                f'<td><a href="{_e(target)}">{_e(row["notebook"])}</a>{stale}</td></tr>')
        tables.append(
            f'<h3 id="kind-{kind}">{_e(claims_mod.KIND_TITLES[kind])} ({len(sub)})</h3>'
            '<table class="ledger"><colgroup><col class="c-id"><col class="c-st"><col class="c-pv"><col class="c-ours">'
            '<col class="c-v"><col class="c-nb"></colgroup><thead><tr><th>Claim</th><th>Statement</th>'
            "<th>Paper's value</th><th>Ours</th><th>Verdict</th><th>Notebook</th></tr></thead><tbody>"
            + "\n".join(rows) + "</tbody></table>")
    tallies = claims_mod.paper_tallies(ledger)
    headline = " &middot; ".join(f"paper {_e(p)}: {_e(t)}" for p, t in tallies.items())
    return (f'<section id="claims"><h2>Claims</h2>{warn}<p class="counts">Tests of the papers\' claims (only these '
            f"count as reproductions): {headline} &middot; <a href=\"claims.csv\">claims.csv</a> &middot; "
            '<a href="readings.csv">readings.csv</a></p>'
            '<table class="tally"><thead><tr><th>Paper</th><th>Kind</th><th>Claims</th><th>Verdicts</th></tr></thead>'
            f"<tbody>{tally_rows}</tbody></table>"
            f'<p class="filter">Show: <button type="button" data-verdict="" class="on">all</button>{buttons}</p>'
            + "\n".join(tables) + "</section>" + _FILTER_SCRIPT)


# Filter the ledger's rows by verdict: a few lines, inline, no library.
_FILTER_SCRIPT = """<script>
document.querySelectorAll('p.filter button').forEach(function (b) {
  b.addEventListener('click', function () {
    var v = b.getAttribute('data-verdict');
    document.querySelectorAll('p.filter button').forEach(function (o) { o.classList.toggle('on', o === b); });
    document.querySelectorAll('table.ledger tbody tr').forEach(function (r) {
      r.hidden = v !== '' && r.getAttribute('data-verdict') !== v;
    });
  });
});
</script>"""


# What each paper is about, for the contents' headings (claims.PAPERS names the papers).
PAPER_SUBJECTS = {"A": "rising bandits", "B": "commitment"}


def _page_of(entry: dict) -> str | None:
    """The rendered page to open for a notebook: this run's, else (a failed run) the last good run's."""
    return entry.get("html") if entry.get("status") == "ok" else entry.get("outputs_html") or entry.get("html")


def _contents(infos: list[NotebookInfo], entries: dict, ledger, papers: dict[str, str]) -> str:
    """The notebooks grouped by paper, each with a link to its rendered page (its title), to its
    section below (its name), its status and the verdicts of its claims."""
    from .. import claims as claims_mod

    groups = []
    for paper, title in [*claims_mod.PAPERS.items(), ("", "other notebooks")]:
        items = []
        for info in infos:
            if papers.get(info.name, "") != paper:
                continue
            entry = entries.get(info.name, {})
            rows = ledger[ledger["notebook"] == info.name] if ledger is not None and len(ledger) else None
            if rows is not None and len(rows):
                labels = _counts_labels(rows)
            else:
                labels = '<span class="meta">no claims</span>' if entry.get("status") else ""
            page = _page_of(entry)
            nb_title = _e(entry.get("title") or info.title)
            head = (f'<a class="page" href="{_e(page)}">{nb_title}</a>' if page
                    else f'<span class="page">{nb_title}</span>')
            items.append(f'<li data-notebook="{_e(info.name)}">{head} '
                         f'<a class="section" href="#{_e(info.name)}" title="figures, tables and parameters">'
                         f"<code>{_e(info.name)}</code></a> {_status_badge(entry.get('status'))} "
                         f'<span class="claims">{labels}</span></li>')
        if items:
            subject = PAPER_SUBJECTS.get(paper, "")
            title = f"{title} ({subject})" if subject and subject not in title else title
            head = f"Paper {_e(paper)}: {_e(title)}" if paper else "Other notebooks"
            groups.append(f"<h3>{head}</h3><ul class=\"contents\">{''.join(items)}</ul>")
    return '<nav id="contents"><h2>Notebooks</h2>' + "".join(groups) + "</nav>"


def render_index(wb: Workbook, manifest: dict, infos: list[NotebookInfo], ledger=None, problems=()) -> str:
    """A self-contained page (inline CSS and script, relative links, nothing from the network): the
    notebooks grouped by paper, the claims ledger, then every notebook of the workbook: title,
    description, status, wall time, its rendered HTML and its figures and tables, with the run they
    come from."""
    profile = manifest["profile"]
    profile_dir = wb.profile_dir(profile)
    entries = manifest.get("notebooks", {})
    groups = outputs_by_notebook(profile_dir, recorded_outputs(manifest, exact=False))
    git = manifest.get("git", {})
    commit = git.get("commit") or "unknown"
    dirty = {True: " (with uncommitted changes)", False: "", None: ""}[git.get("dirty")]
    counts = {s: sum(1 for e in entries.values() if e.get("status") == s) for s in ("ok", "failed")}
    papers = _notebook_papers(ledger, [i.name for i in infos], wb.catalogue_file)

    sections = []
    for info in infos:
        entry = entries.get(info.name, {})
        title = entry.get("title") or info.title
        description = info.problem or info.description
        wall = f"{entry['wall_time_s']:.1f} s" if entry.get("wall_time_s") is not None else ""
        rendered = (f'<a href="{_e(entry["html"])}">rendered notebook</a>' if entry.get("html") else "")
        links = []
        if entry.get("html"):
            links.append(rendered)
        if entry.get("executed"):
            links.append(f'<a href="{_e(entry["executed"])}">executed .ipynb</a>')
        error = (f"<pre>{_e(entry['error'])}</pre>" if entry.get("error") else "")
        # output_dir is the machine's absolute path of this folder: the page says nothing by showing it
        shown = {k: v for k, v in entry.get("parameters", {}).items() if k != "output_dir"}
        params = json.dumps(shown, indent=1, sort_keys=True, default=str)
        run_info = f" &middot; run {_e(entry['started'])}" if entry.get("started") else ""
        if entry.get("git_commit"):
            run_info += f", commit {_e(entry['git_commit'][:10])}{'+' if entry.get('git_dirty') else ''}"
        origin = ""
        if entry.get("status") == "failed":
            if entry.get("outputs_from"):
                page = (f' (<a href="{_e(entry["outputs_html"])}">its rendered notebook</a>)'
                        if entry.get("outputs_html") else "")
                origin = (f'<p class="stale">This run failed; the figures and tables below are from the run of '
                          f"{_run_label(entry['outputs_from'])}, the last that succeeded{page}.</p>")
            else:
                origin = '<p class="stale">No run of this notebook has succeeded in this profile yet.</p>'
        sections.append(
            f'<section class="nb" id="{_e(info.name)}"><h2>{_e(title)}</h2>'
            f"<p>{_e(description)}</p>"
            f'<p class="meta"><code>{_e(info.name)}</code> &middot; {_status_badge(entry.get("status"))}'
            f"{' &middot; ' + wall if wall else ''}{run_info}"
            f"{' &middot; ' + ' &middot; '.join(links) if links else ''} &middot; <a href=\"#top\">top</a></p>"
            f"{error}{origin}"
            f"<details><summary>Parameters</summary><pre>{_e(params)}</pre></details>"
            f"{_gallery(groups.get(info.name, {}), profile_dir)}</section>")
    if None in groups:
        sections.append('<section class="nb" id="other-files"><h2>Other figures and tables</h2>'
                        "<p>Files whose name starts with no notebook's name.</p>"
                        f"{_gallery(groups[None], profile_dir)}</section>")
    versions = ", ".join(f"{k} {v}" for k, v in manifest.get("packages", {}).items() if v)
    cluster = f" &middot; cluster <code>{_e(manifest['cluster'])}</code>" if manifest.get("cluster") else ""
    css = CSS_FILE.read_text(encoding="utf-8")
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>horizonbandits: {_e(profile)} profile</title><style>
{css}</style></head>
<body id="top">
<h1>horizonbandits workbook: <code>{_e(profile)}</code> profile</h1>
<p class="meta">Generated {_e(manifest.get("generated"))} &middot; commit <code>{_e(commit)}</code>{_e(dirty)}
&middot; {counts['ok']} ok, {counts['failed']} failed, {len(infos) - counts['ok'] - counts['failed']} not run{cluster}
&middot; <a href="manifest.json">manifest.json</a> &middot; <a href="#claims">claims</a></p>
{_contents(infos, entries, ledger, papers)}
{_ledger_section(ledger, entries, problems)}
{chr(10).join(sections)}
<p class="meta">Python {_e(manifest.get("python"))} &middot; {_e(versions)}</p>
</body></html>
"""
    # an error message may name the machine's folders: say them relative (outputs/<profile>/..., lib/...)
    return relative_paths(page, {str(wb.outputs_root): "outputs", str(wb.root): ""})


def write_reports(wb: Workbook, profile: str, plans: list[Plan], results: list[Result], merge: bool,
                  argv: list[str] | None = None, git: dict | None = None, packages: dict | None = None,
                  cluster: str | None = None) -> tuple[Path, Path, list[str]]:
    """Write ``manifest.json``, ``claims.csv`` and ``readings.csv`` (the claims of the notebooks the
    manifest lists) and ``index.html``; returns the paths of the manifest and the index, and the
    problems found in the notebooks' claims (one line each: damaged files, ids the catalogue does not
    know, ids recorded twice or by two notebooks).

    They change together (``outputs.atomic_write_together``): the manifest and the index are
    written to temporary files, then the ledger, then both are renamed. On a full disk the
    ``OSError`` propagates with every report as it was: a manifest saying "failed" beside an index
    saying "ok" cannot happen."""
    profile_dir = wb.profile_dir(profile)
    manifest = build_manifest(wb, profile, plans, results, merge, argv, git=git, packages=packages,
                              cluster=cluster)
    infos = wb.notebooks()
    from .. import claims as claims_mod

    notebooks = set(manifest["notebooks"])
    try:
        merged = claims_mod.merge(profile_dir, profile, notebooks=notebooks, catalogue_path=wb.catalogue_file)
        ledger, problems = merged.claims, merged.problems
    except ValueError as exc:  # an unreadable catalogue must not cost the manifest and the index
        merged, ledger, problems = None, None, [f"claims.csv not written: {one_line(exc)}"]
    manifest_path, index_path = profile_dir / "manifest.json", profile_dir / "index.html"
    texts = {manifest_path: json.dumps(manifest, indent=2, default=str) + "\n",
             index_path: render_index(wb, manifest, infos, ledger, problems)}

    def write_ledger():
        if merged is not None:
            claims_mod.write_merged(profile_dir, merged)

    atomic_write_together(texts, before_commit=write_ledger)
    return manifest_path, index_path, problems
