"""Rendered notebook pages that work offline.

nbconvert's pages load MathJax, require.js, the widget manager and mermaid from CDNs. Ours use the
template ``templates/offline.html.j2`` (the lab page without those scripts) and MathJax 2.7 from
the ``jupyter_server_mathjax`` package, copied once into ``<profile>/_static/mathjax/`` so a
profile folder is complete on its own (it can be zipped and opened anywhere). Pages live one
level down (``html/``, ``failed/``), hence the relative ``../_static``. Widget outputs (tqdm bars)
show their text form.
"""
from __future__ import annotations

import shutil
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


def render_notebook_html(ipynb: Path, resources_dir: Path) -> str:
    """The HTML of an executed notebook, images embedded, nothing loaded from the network."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(ipynb), as_version=4)
    exporter = HTMLExporter(embed_images=True, template_name="lab", template_file="offline.html.j2",
                            extra_template_paths=[str(TEMPLATES)], mathjax_url=MATHJAX_URL)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"path": str(resources_dir)}})
    return body
