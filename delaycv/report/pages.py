"""The HTML pages of the workflow report's tables (tests, bias, contrasts, rankings, runs): one
look and one head for every page. Standard library only."""

from __future__ import annotations

from html import escape

#: The style every page shares; a page adds the rules of its own rows (``head(extra=...)``).
STYLE = """
body { font-family: system-ui, sans-serif; font-size: 13px; margin: 1em 1.5em; color: #222; }
h1 { font-size: 17px; } h2 { font-size: 14px; margin: 1.6em 0 0.4em; }
p { max-width: 60em; line-height: 1.4; }
table { border-collapse: collapse; margin-bottom: 0.5em; }
th, td { padding: 3px 8px; border-bottom: 1px solid #ddd; white-space: nowrap; }
th { background: #f0f0f0; text-align: left; position: sticky; top: 0; }
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
