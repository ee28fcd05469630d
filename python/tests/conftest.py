import os

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data")


def data(rel):
    return os.path.join(DATA, rel)


@pytest.fixture(scope="session")
def densenet():
    import vinfer
    return vinfer.Model("densenet121", threads=1, tune_cache="")
