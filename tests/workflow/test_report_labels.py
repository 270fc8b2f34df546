"""The report's labels of every figure format (workflow/rules/common.smk): each format a study may
ask for (delaycv.common.choices.FIGURE_FORMATS) has a label, else a figure of that format ends
the report's build with a KeyError."""

from __future__ import annotations

import ast
import re

from delaycv.common.choices import FIGURE_FORMATS
from tests.support.workflow_copy import REPO


def _format_labels() -> dict[str, str]:
    text = (REPO / "workflow" / "rules" / "common.smk").read_text()
    found = re.search(r"^FORMAT_LABELS = (\{.*?^\})", text, flags=re.M | re.S)
    assert found, "common.smk has no FORMAT_LABELS"
    return ast.literal_eval(found.group(1))


def test_every_figure_format_has_a_report_label():
    labels = _format_labels()
    assert set(FIGURE_FORMATS) <= set(labels)
    assert labels["svg"] == "SVG"


def test_the_report_s_toggle_starts_on_the_png():
    """Snakemake's toggle starts on the value that sorts first: the PNG's label."""
    labels = _format_labels()
    figures = sorted(labels[f] for f in FIGURE_FORMATS)
    assert figures[0] == labels["png"]
