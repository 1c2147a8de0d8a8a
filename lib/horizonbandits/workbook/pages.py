"""Rendering executed notebooks to HTML pages."""
from __future__ import annotations

from pathlib import Path


def render_notebook_html(ipynb: Path, resources_dir: Path) -> str:
    """The HTML of an executed notebook, images embedded."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(ipynb), as_version=4)
    exporter = HTMLExporter(embed_images=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"path": str(resources_dir)}})
    return body
