"""Values in the words of a message.

>>> listed(["nb"]), listed(["nb", "lr"]), listed(["nb", "lr", "hat"])
('nb', 'nb and lr', 'nb, lr and hat')
>>> one_line("a learner:  no  " + chr(10) + " module", width=12)
'a learner...'
>>> one_line("no" + chr(10) + "module")
'no module'
"""

from __future__ import annotations

from collections.abc import Sequence


def listed(names: Sequence[str]) -> str:
    """Names in words, the last joined by "and" (one or more names)."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def one_line(text: str, width: int = 300) -> str:
    """``text`` on one line (runs of white space, line breaks included, as one space), cut to
    about ``width`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."
