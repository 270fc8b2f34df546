"""Option types shared by the subcommands (argparse ``type=`` callables: a bad value is a usage
error naming the option, ``delaycv: error: evaluate: argument --seed: ...``)."""

from __future__ import annotations

import argparse

from delaycv.common.defaults import SEED_MAX


def seed(text: str) -> int:
    """A seed: an integer from 0 to 2**63 - 1 (the range every seed of delaycv takes)."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not 0 <= value <= SEED_MAX:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a seed (expected an integer from 0 to 2**63 - 1 = {SEED_MAX})"
        )
    return value
