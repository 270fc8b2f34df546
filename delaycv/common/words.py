"""Values in the words of a message.

>>> listed(["nb"]), listed(["nb", "lr"]), listed(["nb", "lr", "hat"])
('nb', 'nb and lr', 'nb, lr and hat')
>>> one_line("a learner:  no  " + chr(10) + " module", width=12)
'a learner...'
>>> one_line("no" + chr(10) + "module")
'no module'
>>> did_you_mean("polices", ["policies", "seeds"]), did_you_mean("x", ["policies"])
(' (did you mean policies?)', '')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def listed(names: Sequence[str]) -> str:
    """Names in words, the last joined by "and" (one or more names)."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def one_line(text: str, width: int = 300) -> str:
    """``text`` on one line (runs of white space, line breaks included, as one space), cut to
    about ``width`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean X?)`` with the choice closest to a misspelt ``word`` (difflib's ratio of
    at least 0.6), or ``""`` when none is close."""
    import difflib  # (an error's path)

    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def describe_time(seconds: float) -> str:
    """A Unix time as a reader reads it, its fraction of a second dropped.

    >>> describe_time(1546300800.7)
    '2019-01-01 00:00:00 UTC (Unix 1546300800)'
    >>> describe_time(-1)
    '1969-12-31 23:59:59 UTC (Unix -1)'
    """
    import datetime

    whole = int(seconds)
    date = datetime.datetime.fromtimestamp(whole, datetime.UTC)
    return f"{date:%Y-%m-%d %H:%M:%S} UTC (Unix {whole})"
