"""An evaluate job (the workflow's stage, which the command runs too) runs a throwaway learner on
the stream's first instances before any work: a learner that cannot run on the stream fails at
once, with what to do, and leaves no run directory (found on a study of card transactions, whose
scaled logistic regression failed on a merchant's name at its first label, 961 instances in)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from delaycv.common.errors import ConfigError
from delaycv.data.stream import Stream
from delaycv.data.stream_file import write_stream
from delaycv.protocol.settings import make_settings
from delaycv.stages.evaluate import evaluate

SCALED_LR = {
    "pipeline": [
        {"class": "river.preprocessing.StandardScaler"},
        {"class": "river.linear_model.LogisticRegression"},
    ]
}


@pytest.fixture
def shop(tmp_path):
    """600 card payments over 100 days, a merchant (text) among their features."""
    n = 600
    rng = np.random.default_rng(2)
    features = pd.DataFrame(
        {
            "amount": rng.lognormal(3, 1, n),
            "merchant": pd.Categorical(rng.choice(["fuel", "travel", "online"], n)),
        }
    )
    stream = Stream(
        time=1_700_000_000 + np.sort(rng.integers(0, 100 * 86400, n)),
        label=(rng.random(n) < 0.2).astype(np.int8),
        label_time=None,
        features=features,
    )
    path = tmp_path / "shop.parquet"
    write_stream(stream, path)
    return path


def test_a_learner_that_cannot_read_the_stream_fails_before_any_work(shop, tmp_path):
    # a policy whose first label comes 30 days in: the loop would meet the text only then
    settings = make_settings(
        learner=SCALED_LR, policy={"preset": "delay", "window": "30d"}, validation={"folds": 2}
    )
    out = tmp_path / "run"
    with pytest.raises(ConfigError) as info:
        evaluate(shop, settings, out, progress=False)
    text = str(info.value)
    assert "StandardScaler|LogisticRegression fails on the first instances of the stream" in text
    assert "a categorical feature's values are text" in text
    assert not out.exists() and not list(tmp_path.glob("run*"))
    # a learner that reads text runs, and the probe leaves its tables as they were
    tree = make_settings(learner="tree.HoeffdingTreeClassifier", validation={"folds": 2})
    run = evaluate(shop, tree, out, progress=False)
    assert (out / "folds.parquet").is_file() and run.rows > 0
