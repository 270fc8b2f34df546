"""Speed of delaycv.stats.learner_tests.run_tests, against per-test scipy.stats.permutation_test in the same run,
and the rejection rate of the permutation test under H0 with random sign flips.

Issue 5: all pairwise tests of 10 learners x 50 checkpoints x 10 folds, R = 5,000, in under 30 s.

    .venv/bin/python benchmarks/bench_compare.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from delaycv.stats.learner_tests import run_tests  # noqa: E402
from delaycv.stats.permutation import sign_flip_pvalues  # noqa: E402
from tests.support.fold_tables import fold_table  # noqa: E402


def scipy_one(a, b, resamples, seed):
    return stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.abs(np.mean(x - y, axis=axis)),
        permutation_type="samples",
        vectorized=True,
        n_resamples=resamples,
        alternative="greater",
        rng=np.random.default_rng(seed),
    ).pvalue


def speed(seeds: tuple[int, ...]) -> None:
    learners = {f"learner{i}": 0.005 * i for i in range(10)}
    table = fold_table(
        learners=learners, policies={"hitl_7d_90d": 0.03}, seeds=seeds, folds=10, checkpoints=50
    )
    start = time.perf_counter()
    out = run_tests(table, metrics=["accuracy"], references=["true"], resamples=5000, seed=1)
    vectorised = time.perf_counter() - start
    n_tests = len(out)
    # baseline: scipy per test, on a sample of the same tests, extrapolated
    sample = out.sample(40, random_state=0)
    t = (
        table[table.reference == "true"]
        .set_index(["learner", "checkpoint", "seed", "fold"])["accuracy"]
        .sort_index()
    )
    start = time.perf_counter()
    agree = 0
    for row in sample.itertuples():
        a = t.loc[(row.learner_a, row.checkpoint)].sort_index().to_numpy()
        b = t.loc[(row.learner_b, row.checkpoint)].sort_index().to_numpy()
        p = scipy_one(a, b, 5000, 0)
        agree += abs(p - row.p_value) <= (0 if row.exact else 0.02)
    per_test = (time.perf_counter() - start) / len(sample)
    print(
        f"seeds={len(seeds)} pairs/test={10 * len(seeds)} ({'exact' if out.exact.all() else 'R=5000'}): "
        f"{n_tests} tests (incl. Holm, CI, Cliff, Wilcoxon, sign) in {vectorised:.2f} s "
        f"[target < 30 s]; scipy per test {per_test * 1e3:.1f} ms -> {per_test * n_tests:.1f} s "
        f"extrapolated; speed-up x{per_test * n_tests / vectorised:.0f}; "
        f"p agrees with scipy on {agree}/{len(sample)} sampled tests"
    )


def size_under_h0(comparisons: int = 2000, n: int = 20, resamples: int = 5000) -> None:
    rng = np.random.default_rng(99)
    d = rng.standard_t(3, size=(comparisons, n)) * 0.02  # symmetric about 0, heavy tails
    start = time.perf_counter()
    p, _, exact = sign_flip_pvalues(d, resamples=resamples, seed=7)
    took = time.perf_counter() - start
    rate = float(np.mean(p <= 0.05))
    se = np.sqrt(0.05 * 0.95 / comparisons)
    print(
        f"H0 ({comparisons} comparisons, n={n}, exact={bool(exact.all())}, R={resamples}): rejection "
        f"rate at 0.05 = {rate:.4f} (+-{2 * se:.4f} at 2 s.e.; required [0.03, 0.07]) in {took:.2f} s"
    )


if __name__ == "__main__":
    speed((1,))
    speed((1, 2))
    size_under_h0()
    size_under_h0(n=10)
