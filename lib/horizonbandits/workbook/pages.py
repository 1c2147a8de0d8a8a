"""Rendered notebook pages that work offline.

nbconvert's pages load MathJax, require.js, the widget manager and mermaid from CDNs. Ours use the
template ``templates/offline.html.j2`` (the lab page without those scripts) and MathJax 2.7 from
the ``jupyter_server_mathjax`` package, copied once into ``<profile>/_static/mathjax/`` so a
profile folder is complete on its own (it can be zipped and opened anywhere). Pages live one
level down (``html/``, ``failed/``), hence the relative ``../_static``. Widget outputs (tqdm bars)
show their text form.

Each page is titled with the notebook's title, starts with a link back to ``../index.html``, shows
every code cell's input folded in a ``<details>`` (a button unfolds them all), and names no folder of
the machine: the absolute outputs root and workbook root that outputs print (the injected
``output_dir``, ``PosixPath('/.../outputs/default/figures/x.png')``, tracebacks) are rewritten
relative to the workbook (``outputs/default/figures/x.png``, ``lib/...``), see ``relative_paths``.
"""
from __future__ import annotations

import html
import re
import shutil
from functools import lru_cache
from pathlib import Path

TEMPLATES = Path(__file__).with_name("templates")
ASSETS = "_static"
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"  # a configuration the package ships
MATHJAX_URL = f"../{ASSETS}/mathjax/MathJax.js?config={MATHJAX_CONFIG}"


def mathjax_source() -> Path:
    """The MathJax files installed with ``jupyter_server_mathjax`` (a dependency of the workbook)."""
    import jupyter_server_mathjax

    return Path(jupyter_server_mathjax.__file__).resolve().parent / "static"


def install_assets(profile_dir: Path) -> Path:
    """Copy MathJax beside the pages of ``profile_dir`` unless this version is already there."""
    from importlib import metadata

    target = Path(profile_dir) / ASSETS / "mathjax"
    stamp = target / ".version"
    version = metadata.version("jupyter_server_mathjax")
    if stamp.is_file() and stamp.read_text() == version:
        return target
    staging = target.with_name(".mathjax.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        shutil.copytree(mathjax_source(), staging)
        (staging / ".version").write_text(version)
    except BaseException:  # a full disk: give back what the partial copy took
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target


def relative_paths(text: str, roots: dict[str, str]) -> str:
    """``text`` with each absolute folder of ``roots`` (longest first) replaced by its relative form
    (``""`` for a path relative to it: ``/root/lib/x.py`` reads ``lib/x.py``, ``/root`` alone ``.``), as
    written and HTML-escaped; a root matches only as a whole path (``/a/out`` is not in ``/a/outer``).
    Roots of fewer than two components (``/``, ``/tmp``) are left alone."""
    for root in sorted(roots, key=len, reverse=True):
        root = root.rstrip("/")
        if root.count("/") < 2:
            continue
        short = roots.get(root, roots.get(root + "/", ""))

        def swap(match, short=short):
            if match.group(1):  # a path inside the root
                return f"{short}/" if short else ""
            return short or "."

        for form in {root, html.escape(root, quote=True)}:
            text = re.sub(re.escape(form) + r"(?![\w.-])(/?)", swap, text)
    return text


def page_roots(nb, resources_dir: Path) -> dict[str, str]:
    """The machine's folders a page of ``nb`` must not show, with what replaces them: the outputs root
    (the parent of the profile folder that papermill's ``output_dir`` names) becomes ``outputs`` and the
    workbook root (the parent of ``notebooks/``, the kernels' working folder) becomes nothing, so a
    path inside it reads relative to it."""
    roots = {}
    output_dir = (nb.metadata.get("papermill", {}).get("parameters", {}) or {}).get("output_dir")
    if isinstance(output_dir, str) and output_dir.startswith("/"):
        roots[str(Path(output_dir).parent)] = "outputs"
    roots.setdefault(str(Path(resources_dir).resolve().parent), "")
    return roots


def render_notebook_html(ipynb: Path, resources_dir: Path) -> str:
    """The HTML of an executed notebook, images embedded, nothing loaded from the network: titled with
    the notebook's title, a link back to the index, code folded, no absolute folder of the run."""
    import nbformat

    from .locate import title_and_description

    ipynb = Path(ipynb)
    nb = nbformat.read(str(ipynb), as_version=4)
    nb.metadata["title"] = title_and_description(nb, ipynb.stem)[0]  # the <title> (nbconvert reads it)
    exporter = _page_exporter()(embed_images=True, template_name="lab", template_file="offline.html.j2",
                                extra_template_paths=[str(TEMPLATES)], mathjax_url=MATHJAX_URL)
    resources = {"metadata": {"path": str(resources_dir), "name": ipynb.stem}, "hb_notebook": ipynb.stem}
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    return relative_paths(body, page_roots(nb, resources_dir))


NO_ALT = "No description has been provided for this image"  # nbconvert's alternative text for an image without one
_IMG_WITHOUT_ALT = re.compile(r"<img(?![^>]*\balt=)")
_FOCUSABLE_DIV = re.compile(r'(<div class="[^"]*\b(?:jp-Cell-inputWrapper|jp-OutputArea-output)\b[^"]*")')


@lru_cache(maxsize=1)
def _page_exporter():
    """nbconvert's HTMLExporter whose last pass is two substitutions instead of a BeautifulSoup parse.

    After rendering, HTMLExporter parses the whole page with BeautifulSoup to give each image without one an
    alternative text and each cell's input wrapper and output a ``tabindex="0"``, then writes the page out
    again: 39 % of a page's time under cProfile (2026-12-08; with the template's code cells written without
    bleach, a page went from 0.66 to 0.24 CPU-s). The same two additions are made here on the rendered text
    (the template writes these elements, so their form is known: ``<img`` and ``<div class="...">``); the
    rest of the page is the template's output as it is.
    """
    from nbconvert import HTMLExporter
    from nbconvert.exporters.templateexporter import TemplateExporter
    from nbconvert.exporters.html import WidgetsDataTypeFilter
    from nbconvert.filters.highlight import Highlight2HTML

    class PageExporter(HTMLExporter):
        def from_notebook_node(self, nb, resources=None, **kw):
            # HTMLExporter.from_notebook_node's set-up (nbconvert 7), then the template, without the parse
            langinfo = nb.metadata.get("language_info", {})
            lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
            self.register_filter("highlight_code",
                                 self.filters.get("highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)))
            resources = self._init_resources(resources)
            self.register_filter("filter_data_type", WidgetsDataTypeFilter(
                notebook_metadata=self._nb_metadata, parent=self, resources=resources))
            body, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
            body = _IMG_WITHOUT_ALT.sub(f'<img alt="{NO_ALT}"', body)
            return _FOCUSABLE_DIV.sub(r'\1 tabindex="0"', body), resources

    return PageExporter
