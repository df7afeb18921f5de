"""Shared fixtures of the opgraph Python tests: a seeded RNG per test (fresh random inputs)."""
import os

import numpy as np
import pytest


@pytest.fixture
def rng(request):
    # A different seed per test and per run unless OPGRAPH_TEST_SEED pins it; printed on failure.
    seed = int(os.environ.get("OPGRAPH_TEST_SEED", np.random.SeedSequence().entropy % (2**31)))
    request.node.user_properties.append(("seed", seed))
    print(f"seed={seed}")
    return np.random.default_rng(seed)
