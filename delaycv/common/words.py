"""Values in the words of a message.

>>> listed(["nb"]), listed(["nb", "lr"]), listed(["nb", "lr", "hat"])
('nb', 'nb and lr', 'nb, lr and hat')
"""

from __future__ import annotations

from collections.abc import Sequence


def listed(names: Sequence[str]) -> str:
    """Names in words, the last joined by "and" (one or more names)."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
