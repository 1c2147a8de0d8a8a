"""What ``hb run`` writes about a run: ``manifest.json``, ``claims.csv`` and ``index.html``.

All three are rewritten after every notebook (atomically), so an interrupted run keeps what
finished. Entries of notebooks not run this time are kept from the previous manifest, as long as
the notebook still exists. Each entry says which run its figures and tables come from
(``outputs_from``): a failed run keeps the outputs of the last one that succeeded.
"""
from __future__ import annotations

import html
import json
import platform
import subprocess
import sys
from pathlib import Path

from ..outputs import atomic_write_text
from .base import now, one_line, readable
from .execute import Result, owner_of
from .locate import NotebookInfo, Workbook
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


def outputs_by_notebook(profile_dir: Path, names) -> dict[str | None, dict[str, list[str]]]:
    """Figures (PNG) and tables (CSV) of the profile folder grouped by owning notebook
    (``None`` for files no notebook name prefixes)."""
    groups: dict[str | None, dict[str, list[str]]] = {}
    for sub, pattern in (("figures", "*.png"), ("tables", "*.csv")):
        folder = profile_dir / sub
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob(pattern)):
            if path.name.startswith("."):
                continue
            owner = owner_of(path.stem, names)
            groups.setdefault(owner, {"figures": [], "tables": []})[sub].append(f"{sub}/{path.name}")
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
        }
        if res.status != "ok":  # the last good run's pages, which are still in place
            good_html = profile_dir / "html" / f"{plan.name}.html"
            entry["outputs_html"] = f"html/{plan.name}.html" if entry["outputs_from"] and good_html.exists() else None
        entries[plan.name] = entry
    groups = outputs_by_notebook(profile_dir, existing)
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


def _gallery(files: dict[str, list[str]]) -> str:
    parts = []
    if files.get("figures"):
        items = []
        for png in files["figures"]:
            pdf = png[:-4] + ".pdf"
            items.append(f'<figure><a href="{_e(png)}"><img src="{_e(png)}" alt="{_e(png)}" loading="lazy"></a>'
                         f'<figcaption>{_e(Path(png).stem)} (<a href="{_e(pdf)}">pdf</a>)</figcaption></figure>')
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


def _ledger_section(ledger, entries: dict) -> str:
    """The claims of every notebook run so far, with the verdict counts, each row linked to its
    notebook's page (the rendered notebook when there is one, else its section below)."""
    from .. import claims as claims_mod  # pandas: imported only when a report is written

    if ledger is None or not len(ledger):
        return ('<section id="claims"><h2>Claims</h2><p><em>No notebook run so far recorded a claim '
                "(claims.record).</em></p></section>")
    rows = []
    for row in ledger.to_dict("records"):
        entry = entries.get(row["notebook"], {})
        page = entry.get("html") if entry.get("status") == "ok" else entry.get("outputs_html")
        target = page or f"#{row['notebook']}"
        stale = ('<br><span class="stale">the last run failed; this row is from the run of '
                 f"{_run_label(entry.get('outputs_from'))}</span>") if entry.get("status") == "failed" else ""
        verdict = row["verdict"]
        rows.append(
            f"<tr><td><code>{_e(row['claim_id'])}</code></td><td>{_e(row['paper'])}</td><td>{_e(row['where'])}</td>"
            f"<td>{_e(row['statement'])}</td><td>{_e(row['paper_value'])}</td><td>{_e(row['ours'])}</td>"
            f'<td><span class="verdict {verdict.replace(" ", "-")}">{_e(verdict)}</span></td>'
            f"<td>{_e(row['depends_on'])}</td>"
            f'<td><a href="{_e(target)}">{_e(row["notebook"])}</a>{stale}</td></tr>')
    return (f'<section id="claims"><h2>Claims</h2><p class="counts">{_e(claims_mod.summary_line(ledger))}'
            f' &middot; <a href="claims.csv">claims.csv</a></p>'
            '<table class="ledger"><thead><tr><th>Claim</th><th>Paper</th><th>Where</th><th>Statement</th>'
            "<th>Paper</th><th>Ours</th><th>Verdict</th><th>Depends on</th><th>Notebook</th></tr></thead><tbody>"
            + "\n".join(rows) + "</tbody></table></section>")


def render_index(wb: Workbook, manifest: dict, infos: list[NotebookInfo], ledger=None) -> str:
    """A self-contained page (inline CSS, relative links, nothing from the network): the claims
    ledger, then every notebook of the workbook: title, description, status, wall time, its
    rendered HTML and its figures and tables, with the run they come from."""
    profile = manifest["profile"]
    profile_dir = wb.profile_dir(profile)
    entries = manifest.get("notebooks", {})
    names = [i.name for i in infos]
    groups = outputs_by_notebook(profile_dir, names)
    git = manifest.get("git", {})
    commit = git.get("commit") or "unknown"
    dirty = {True: " (with uncommitted changes)", False: "", None: ""}[git.get("dirty")]
    counts = {s: sum(1 for e in entries.values() if e.get("status") == s) for s in ("ok", "failed")}

    rows, sections = [], []
    for info in infos:
        entry = entries.get(info.name, {})
        title = entry.get("title") or info.title
        description = info.problem or info.description
        wall = f"{entry['wall_time_s']:.1f} s" if entry.get("wall_time_s") is not None else ""
        rendered = (f'<a href="{_e(entry["html"])}">rendered notebook</a>' if entry.get("html") else "")
        rows.append(f'<tr><td><a href="#{_e(info.name)}">{_e(title)}</a></td><td><code>{_e(info.name)}</code></td>'
                    f"<td>{_status_badge(entry.get('status'))}</td><td>{wall}</td><td>{rendered}</td></tr>")
        links = []
        if entry.get("html"):
            links.append(rendered)
        if entry.get("executed"):
            links.append(f'<a href="{_e(entry["executed"])}">executed .ipynb</a>')
        error = (f"<pre>{_e(entry['error'])}</pre>" if entry.get("error") else "")
        params = json.dumps(entry.get("parameters", {}), indent=1, sort_keys=True, default=str)
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
            f"{' &middot; ' + ' &middot; '.join(links) if links else ''}</p>{error}{origin}"
            f"<details><summary>Parameters</summary><pre>{_e(params)}</pre></details>"
            f"{_gallery(groups.get(info.name, {}))}</section>")
    if None in groups:
        sections.append('<section class="nb" id="other-files"><h2>Other figures and tables</h2>'
                        "<p>Files whose name starts with no notebook's name.</p>"
                        f"{_gallery(groups[None])}</section>")
    versions = ", ".join(f"{k} {v}" for k, v in manifest.get("packages", {}).items() if v)
    cluster = f" &middot; cluster <code>{_e(manifest['cluster'])}</code>" if manifest.get("cluster") else ""
    css = CSS_FILE.read_text(encoding="utf-8")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>horizonbandits: {_e(profile)} profile</title><style>
{css}</style></head>
<body>
<h1>horizonbandits workbook: <code>{_e(profile)}</code> profile</h1>
<p class="meta">Generated {_e(manifest.get("generated"))} &middot; commit <code>{_e(commit)}</code>{_e(dirty)}
&middot; {counts['ok']} ok, {counts['failed']} failed, {len(infos) - counts['ok'] - counts['failed']} not run{cluster}
&middot; <a href="manifest.json">manifest.json</a></p>
{_ledger_section(ledger, entries)}
<h2>Notebooks</h2>
<table class="summary"><thead><tr><th>Notebook</th><th>Name</th><th>Status</th><th>Wall time</th><th></th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table>
{chr(10).join(sections)}
<p class="meta">Python {_e(manifest.get("python"))} &middot; {_e(versions)}</p>
</body></html>
"""


def write_reports(wb: Workbook, profile: str, plans: list[Plan], results: list[Result], merge: bool,
                  argv: list[str] | None = None, git: dict | None = None, packages: dict | None = None,
                  cluster: str | None = None) -> tuple[Path, Path]:
    """Write ``manifest.json``, ``claims.csv`` (the claims of the notebooks the manifest lists) and
    ``index.html``; returns the paths of the manifest and the index."""
    profile_dir = wb.profile_dir(profile)
    manifest = build_manifest(wb, profile, plans, results, merge, argv, git=git, packages=packages,
                              cluster=cluster)
    infos = wb.notebooks()
    manifest_path = readable(atomic_write_text(profile_dir / "manifest.json",
                                               json.dumps(manifest, indent=2, default=str) + "\n"))
    from .. import claims as claims_mod

    try:
        ledger = claims_mod.write_ledger(profile_dir, profile, notebooks=set(manifest["notebooks"]))
    except Exception as exc:  # a damaged claims/<name>.csv must not cost the manifest and the index
        print(f"hb: warning: claims.csv not written: {one_line(exc)}", file=sys.stderr)
        ledger = None
    index_path = readable(atomic_write_text(profile_dir / "index.html",
                                            render_index(wb, manifest, infos, ledger)))
    return manifest_path, index_path
