"""The HTML pages of the workflow report's tables (tests, bias, contrasts, rankings, runs): one
look, one head and one kind of table for every page. Standard library only.

Snakemake's report shows a page in a frame beside its menu, narrower than the window: a table wider
than the frame scrolls sideways in a box of its own, under its own heading (the page itself never
does), and its headers wrap to keep it narrow."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

#: The style every page shares; a page adds the rules of its own rows (``head(extra=...)``).
STYLE = """
body { font-family: system-ui, sans-serif; font-size: 13px; margin: 1em 1.5em; color: #222; }
h1 { font-size: 17px; } h2 { font-size: 14px; margin: 1.6em 0 0.4em; }
p { max-width: 60em; line-height: 1.4; }
div.table { overflow-x: auto; max-width: 100%; margin-bottom: 0.5em; }
table { border-collapse: collapse; }
th, td { padding: 3px 8px; border-bottom: 1px solid #ddd; white-space: nowrap; }
th { background: #f0f0f0; text-align: left; vertical-align: bottom; white-space: normal; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fafafa; }
""".strip()


def head(title: str, intro: str, extra: str = "") -> list[str]:
    """The first parts of a page: its head (the shared style and ``extra`` rules), its title as a
    heading and its introduction (HTML)."""
    style = f"{STYLE}\n{extra.strip()}" if extra.strip() else STYLE
    return [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>\n{style}\n</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>{intro}</p>",
    ]


def table(head: Sequence[str], rows: Sequence[str]) -> str:
    """A table of a page in its scrolling box: ``head`` the header cells' HTML (``<th>...</th>``),
    ``rows`` the rows' HTML (``<tr>...</tr>``)."""
    return (
        f'<div class="table"><table><thead><tr>{"".join(head)}</tr></thead><tbody>\n'
        + "\n".join(rows)
        + "\n</tbody></table></div>"
    )
