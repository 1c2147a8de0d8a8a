"""Sizes that cannot fit are refused from their estimate, before anything is allocated (issue 29, item 6)."""
from __future__ import annotations

import time

import numpy as np
import pytest

import horizonbandits.commit as C
import horizonbandits.rising as R
from horizonbandits.rising import RisingInstance
from horizonbandits import errors
from horizonbandits.rising.generators import concave_random
from horizonbandits.rising.llm import replay_means


GB = 1024**3


@pytest.fixture
def one_gigabyte(monkeypatch):
    """A machine with 1 GB of memory, so that a refusal needs only a few GB of estimate."""
    monkeypatch.setattr(errors, "machine_memory", lambda: GB)


def _bernoulli(N: int) -> C.CommitProblem:
    return C.CommitProblem.bernoulli([0.8, 0.77, 0.2, 0.2], [0.2, 0.2, 0.75, 0.55], N=N, T=2 * N)


@pytest.mark.parametrize("build, name", [
    (lambda: R.figure1(T_max=30_000_000), "T_max=30000000"),  # the trial's T_long: 10^9 on a 24 GB machine
    (lambda: R.ltf([0.1] * 1_000, [0.5] * 1_000, T_max=100_000), "a=array("),  # the trial's ltf with many arms
    (lambda: R.ltf_saturating([0.5] * 2, [10, 20], T_max=100_000_000), "b=array("),
    (lambda: R.ltf_random(np.random.default_rng(0), K=5_000, T_ref=100_000), "K=5000"),
    (lambda: concave_random(np.random.default_rng(0), K=5, H=100_000, T_max=10_000_000), "T_max=10000000"),
    (lambda: R.prop53(100_000_000, 0.25), "T=100000000"),
    (lambda: RisingInstance.from_callables([np.sqrt, np.log1p], T_max=50_000_000), "T_max=50000000"),
    (lambda: replay_means([0.1, 0.5], T_max=100_000_000), "T_max=100000000"),
    (lambda: C.simulate(_bernoulli(20_000_000), C.RAEC(), draws="table"), "N=20000000"),  # the trial's N
])
def test_what_cannot_fit_is_refused_in_one_line_without_allocating(one_gigabyte, build, name):
    start = time.process_time()
    with pytest.raises(ValueError) as err:
        build()
    assert time.process_time() - start < 2  # refused from the sizes: building even one table takes longer
    message = str(err.value)
    assert message.startswith(name) and " is not allowed: " in message and "\n" not in message
    assert message.endswith("more than this machine's 1.0 GB of memory") and "needs about " in message


def test_what_fits_is_built(one_gigabyte):
    assert R.figure1(T_max=1_000_000).T_max == 1_000_000  # about 90 MB
    assert C.simulate(_bernoulli(20_000_000), C.RAEC(), draws="batch").n_seeds == 1  # batches need no table


def test_the_real_machine_refuses_the_impossible():
    """Without the stand-in: 10^13 pull counts are 80 TB for one row, on any machine today."""
    with pytest.raises(ValueError, match=r"T_max=10000000000000 is not allowed: .* more than this machine's"):
        R.figure1(T_max=10**13)
    assert errors.machine_memory() > 0


@pytest.mark.parametrize("n, text", [(512, "512 bytes"), (3 * 1024**2, "3.0 MB"), (82 * GB, "82.0 GB"),
                                     (2.2 * 1024**4, "2.2 TB")])
def test_sizes_read_as_people_say_them(n, text):
    assert errors.bytes_text(n) == text
