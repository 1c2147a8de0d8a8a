"""The offline pages of a run: the index's contents and ledger, the notebook pages (issue "A researcher's
first hour", item 4).

No kernel runs: a fake run of the fixture workbook writes each executed notebook by hand, as papermill
leaves it in the staging folder (the injected ``output_dir`` and outputs that print the staging folder),
with a figure and, for alpha_demo, claims recorded through ``claims.Ledger``; then the code of ``hb run``
takes over: the worker's ``finish_staged_notebook`` (which leaves the page to ``hb run``), then
``render_staged_page`` renders the pages as ``hb run`` does, ``adopt_outputs`` moves them into the profile
folder and ``write_reports`` writes ``claims.csv`` and ``index.html``.
"""
from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_output

from horizonbandits import claims
from horizonbandits import workbook as wbk
from horizonbandits.claims import rules
from horizonbandits.workbook.execute import finish_staged_notebook, render_staged_page
from horizonbandits.workbook.pages import relative_paths
from horizonbandits.workbook.report import LEDGER_CLIP

LONG_OURS = "a long account of our number " * 12  # longer than a ledger cell shows
STATUS = {"alpha_demo": "ok", "beta_range": "ok", "gamma_crash": "failed"}
FIGURE_SIZE = {"alpha_demo": (2000, 600), "beta_range": (800, 600), "gamma_crash": (800, 600)}


def png_header(width: int, height: int) -> bytes:
    """The first bytes of a PNG: enough for the index to read its size."""
    return (b"\x89PNG\r\n\x1a\n" + (13).to_bytes(4, "big") + b"IHDR" + width.to_bytes(4, "big")
            + height.to_bytes(4, "big") + b"\x08\x06\x00\x00\x00")


def fake_execution(wb: wbk.Workbook, task: wbk.Task) -> None:
    """The executed notebook and outputs papermill and the kernel would leave in the staging folder."""
    staged = str(task.staged_outputs)
    nb = nbformat.read(wb.notebook_path(task.name), as_version=4)
    nb.cells.insert(2, new_code_cell(f'# Parameters\noutput_dir = "{staged}"\n',
                                     metadata={"tags": ["injected-parameters"]}))
    nb.metadata["papermill"] = {"parameters": {"output_dir": staged}}
    figure = task.staged_outputs / "figures" / f"{task.name}_line.png"
    for count, cell in enumerate((c for c in nb.cells if c.cell_type == "code"), start=1):
        cell.execution_count = count
        cell.outputs = [new_output("execute_result", execution_count=count, data={"text/plain": f"PosixPath('{figure}')"}),
                        new_output("stream", name="stdout",
                                   text=f"saved in {staged}/tables; code in {wb.root}/lib/x.py; cache {wb.cache_dir}\n")]
    nbformat.write(nb, str(task.staged_notebook))
    figure.parent.mkdir(parents=True, exist_ok=True)
    figure.write_bytes(png_header(*FIGURE_SIZE[task.name]))
    if task.name == "alpha_demo":
        ledger = claims.Ledger("alpha_demo", task.staged_outputs)
        ledger.check("A-fixture-line-end", rules.exact(True), ours=LONG_OURS)
        ledger.not_testable("B-fixture-untestable", "the fixture has nothing to test")
        ledger.save()


@pytest.fixture(scope="module")
def run(tmp_path_factory, copy_workbook):
    """A fake ``hb run --profile smoke`` of the fixture workbook into a temporary outputs root:
    alpha_demo and beta_range succeed, gamma_crash fails."""
    base = tmp_path_factory.mktemp("pages")
    root = copy_workbook(base / "workbook")
    wb = wbk.Workbook(root, base / "out")
    profile_dir = wb.profile_dir("smoke")
    profile_dir.mkdir(parents=True)
    plans, results = [], []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HB_CATALOGUE", str(root / "catalogue.yaml"))
        for info in wb.notebooks():
            task = wbk.Task(info.name, str(info.path), str(wb.notebooks_dir), str(profile_dir), "smoke", {})
            task.staged_outputs.mkdir(parents=True)
            fake_execution(wb, task)
            result = wbk.Result(info.name, STATUS[info.name], 1.0, "2026-01-01T00:00:00+00:00")
            if result.status == "failed":
                # an error message naming a file of the run: the index must say it relative
                result.error = f"FileNotFoundError: no such file: '{profile_dir}/tables/gamma_crash_in.csv'"
                result.failed_cell = 3
            result = finish_staged_notebook(task, result, render_page=False)  # as hb run's worker does
            assert not task.staged_html.exists()  # the page is hb run's to render
            result = render_staged_page(task, result)
            assert result.html_error is None, result.html_error
            assert task.staged_html.is_file()
            results.append(wbk.adopt_outputs(task, result, records={}))
            plans.append(wbk.Plan(info.name, info.title, info.description, None, {}, {}))
        wbk.write_reports(wb, "smoke", plans, results, merge=False, git={"commit": "abc", "dirty": False},
                          packages={})
    return wb, profile_dir


class Contents(HTMLParser):
    """From the index: the ids of its elements, and per entry of nav#contents its links and counts."""

    def __init__(self):
        super().__init__()
        self.ids, self.entries, self.depth, self.current = set(), {}, 0, None
        self.order = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
            self.order.append(a["id"])
        if tag == "nav" and a.get("id") == "contents":
            self.depth = 1
        elif self.depth and tag == "li" and "data-notebook" in a:
            self.current = self.entries.setdefault(a["data-notebook"], {"links": {}, "counts": {}})
        elif self.current is not None and tag == "a":
            self.current["links"][a.get("class")] = a["href"]
        elif self.current is not None and tag == "span" and "data-n" in a:
            self.current["counts"][a["data-verdict"]] = int(a["data-n"])

    def handle_endtag(self, tag):
        if tag == "li":
            self.current = None
        elif tag == "nav":
            self.depth = 0


def parse_index(profile_dir: Path) -> tuple[str, Contents]:
    page = (profile_dir / "index.html").read_text(encoding="utf-8")
    parser = Contents()
    parser.feed(page)
    return page, parser


def test_contents_list_every_notebook_with_a_link_that_exists_and_the_ledgers_counts(run):
    wb, profile_dir = run
    page, contents = parse_index(profile_dir)
    assert sorted(contents.entries) == wb.names()
    assert contents.order.index("contents") < contents.order.index("claims")  # at the top, before the ledger
    ledger = pd.read_csv(profile_dir / "claims.csv", dtype=str)
    assert len(ledger) == 2  # the fake run's claims reached the ledger
    for name, entry in contents.entries.items():
        page_link = entry["links"]["page"]
        expected = f"html/{name}.html" if STATUS[name] == "ok" else f"failed/{name}.html"
        assert page_link == expected and (profile_dir / page_link).is_file(), (name, page_link)
        assert entry["links"]["section"] == f"#{name}" and name in contents.ids
        rows = ledger[ledger["notebook"] == name]
        assert entry["counts"] == {v: n for v, n in claims.counts(rows).items() if n}, name
    assert contents.entries["alpha_demo"]["counts"] == {"reproduced": 1, "not testable": 1}
    groups = page.split('<nav id="contents">')[1].split("</nav>")[0]
    assert "Paper A: " in groups and "(rising bandits)" in groups and "Other notebooks" in groups
    assert groups.index("Paper A") < groups.index('data-notebook="alpha_demo"') < groups.index("Other notebooks")


def test_ledger_cells_are_cut_with_the_whole_text_kept(run):
    _, profile_dir = run
    page, _ = parse_index(profile_dir)
    row = page.split('<tr data-verdict="reproduced">')[1].split("</tr>")[0]
    summary = re.search(r"<summary>(.*?)</summary>", row).group(1)
    assert summary.endswith("&hellip;") and len(html.unescape(summary)) <= LEDGER_CLIP["ours"]
    assert html.escape(LONG_OURS) in row  # the whole of it, folded
    assert "table-layout:fixed" in page and "overflow-wrap:anywhere" in page  # no sideways scroll


def test_figures_wide_ones_take_a_row_and_link_to_the_full_image(run):
    _, profile_dir = run
    page, _ = parse_index(profile_dir)
    for name, cls in (("alpha_demo", "wide"), ("beta_range", "half")):
        png = f"figures/{name}_line.png"
        assert f'<figure class="{cls}"><a href="{png}" title="open full size"><img src="{png}"' in page


def test_notebook_pages_have_a_title_a_link_back_and_folded_code(run):
    wb, profile_dir = run
    pages = sorted(profile_dir.glob("html/*.html")) + sorted(profile_dir.glob("failed/*.html"))
    assert sorted(p.stem for p in pages) == wb.names()
    assert (profile_dir / "index.html").is_file()
    for path in pages:
        text = path.read_text(encoding="utf-8")
        title = re.search(r"<title>(.*?)</title>", text, re.S).group(1).strip()
        assert title and html.unescape(title) == wb.info(path.stem).title, path
        assert f'href="../index.html#{path.stem}"' in text, path  # pages are one level below the index
        assert text.index('href="../index.html') < text.index('class="jp-Cell ')  # at the top
        executed = nbformat.read(str(profile_dir / ("notebooks" if path.parent.name == "html" else "failed")
                                     / f"{path.stem}.ipynb"), as_version=4)
        n_code = sum(c.cell_type == "code" for c in executed.cells)
        assert text.count('<details class="hb-code">') == n_code and "<details class=\"hb-code\" open" not in text
        assert 'id="hb-code-toggle"' in text
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), path  # nothing from the network


def test_no_page_names_the_machines_folders(run):
    wb, profile_dir = run
    pages = sorted(profile_dir.glob("*.html")) + sorted(profile_dir.glob("*/*.html"))
    assert len(pages) == 1 + len(wb.names())
    for path in pages:
        text = path.read_text(encoding="utf-8")
        for folder in (wb.outputs_root, wb.root):
            assert str(folder) not in text and html.escape(str(folder)) not in text, (path, folder)
    alpha = (profile_dir / "html" / "alpha_demo.html").read_text(encoding="utf-8")
    assert "PosixPath('outputs/smoke/figures/alpha_demo_line.png')" in html.unescape(alpha)  # quotes escaped or not
    assert "code in lib/x.py" in alpha and "cache outputs/cache" in alpha
    index = (profile_dir / "index.html").read_text(encoding="utf-8")
    assert "no such file: &#x27;outputs/smoke/tables/gamma_crash_in.csv&#x27;" in index


def test_relative_paths_rewrites_whole_paths_only():
    roots = {"/data/run/out": "outputs", "/home/me/wb": ""}
    assert relative_paths("PosixPath('/data/run/out/default/figures/a.png')", roots) == \
        "PosixPath('outputs/default/figures/a.png')"
    assert relative_paths('"/data/run/out" and /data/run/out/', roots) == '"outputs" and outputs/'
    assert relative_paths("/data/run/outer/x /data/run/out.bak", roots) == "/data/run/outer/x /data/run/out.bak"
    assert relative_paths("File /home/me/wb/lib/a.py, in /home/me/wb", roots) == "File lib/a.py, in ."
    assert relative_paths("/tmp/x", {"/tmp": "outputs"}) == "/tmp/x"  # too short a root to be sure of


REFERENCE_TEMPLATE = """{%- extends 'offline.html.j2' -%}
{% block input %}
<div class="jp-CodeMirrorEditor jp-Editor jp-InputArea-editor" data-type="inline">
     <div class="cm-editor cm-s-jupyter">
{{ cell.source | highlight_code(metadata=cell.metadata) | clean_html }}
     </div>
</div>
{%- endblock input %}
"""
TINY_PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def _page_tree(text: str):
    """A page as a browser reads it: each element's name and attributes, in order, and the text."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(text, features="html.parser")
    return ([(e.name, sorted((k, " ".join(v) if isinstance(v, list) else v) for k, v in e.attrs.items()))
             for e in soup.find_all(True)], soup.get_text())


def test_a_page_reads_as_nbconverts_own_page(tmp_path):
    """render_notebook_html skips two passes of nbconvert's (bleach over each code cell's pygments markup, and
    BeautifulSoup over the page for alt texts and tabindex): the page has the same elements, attributes and text
    as nbconvert's HTMLExporter gives with lab's own code-cell block."""
    from nbconvert import HTMLExporter

    from horizonbandits.workbook.pages import MATHJAX_URL, TEMPLATES, page_roots, render_notebook_html

    table = pd.DataFrame({"policy": ["CURE-UCB", "<R-ed & co>"], "regret": [1.5, 2.25]})
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# A title\n\nMath $x < y$ & text, an image ![](data:image/png;base64,"
                                      + TINY_PNG + ") and `code <b>`."),
        new_code_cell('x = [i for i in range(3) if i < 2 and "a" != \'b\']  # <not a tag> & co\nx',
                      execution_count=1, outputs=[
                          new_output("execute_result", execution_count=1, data={"text/plain": "[0, 1]"}),
                          new_output("stream", name="stdout", text="printed <tag> & more\n"),
                          new_output("display_data", data={"image/png": TINY_PNG, "text/plain": "<Figure>"}),
                          new_output("display_data", data={"text/html": table.to_html(), "text/plain": str(table)})]),
        new_code_cell("def f():\n    return 1", execution_count=2),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                 "language_info": {"name": "python", "pygments_lexer": "ipython3"}})
    ipynb = tmp_path / "notebooks" / "demo.ipynb"
    ipynb.parent.mkdir()
    nbformat.write(nb, str(ipynb))
    (tmp_path / "ref").mkdir()
    (tmp_path / "ref" / "ref.html.j2").write_text(REFERENCE_TEMPLATE)
    ours = render_notebook_html(ipynb, ipynb.parent)
    again = nbformat.read(str(ipynb), as_version=4)
    again.metadata["title"] = "A title"  # as render_notebook_html titles it: the first heading
    theirs, _ = HTMLExporter(embed_images=True, template_name="lab", template_file="ref.html.j2",
                             extra_template_paths=[str(tmp_path / "ref"), str(TEMPLATES)],
                             mathjax_url=MATHJAX_URL).from_notebook_node(
        again, resources={"metadata": {"path": str(ipynb.parent), "name": "demo"}, "hb_notebook": "demo"})
    theirs = relative_paths(theirs, page_roots(nb, ipynb.parent))
    assert _page_tree(ours) == _page_tree(theirs)
    for added in ('tabindex="0"', 'alt="No description has been provided for this image"'):
        assert ours.count(added) == theirs.count(added) > 0
