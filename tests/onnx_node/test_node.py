"""ONNX's node tests of opsets 7-23 on vinfer: each passes within the test's
tolerance, or is refused with an UnsupportedError whose line refused.txt
holds. A new pass, a new refusal, a wrong answer or an error fails."""
import pytest

import node_cases

CASES = node_cases.cases()
REFUSED = node_cases.read_refused()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node(case):
    got = node_cases.run_case(case)
    want = ("refused", REFUSED[case.name]) if case.name in REFUSED else "pass"
    assert got == want


def test_refusals_are_cases():
    names = {c.name for c in CASES}
    assert set(REFUSED) <= names, sorted(set(REFUSED) - names)[:5]


def test_backend_test_runs_vinfer():
    """onnx.backend.test.BackendTest itself, on a few operators."""
    import unittest

    import onnx.backend.test
    import vinfer.backend
    bt = onnx.backend.test.BackendTest(vinfer.backend, __name__)
    for pattern in (r"^test_relu_cpu$", r"^test_add_bcast_cpu$", r"^test_concat_2d_axis_0_cpu$"):
        bt.include(pattern)
    suite = unittest.TestSuite()
    for case in bt.test_cases.values():
        suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(case))
    result = unittest.TextTestRunner(verbosity=0).run(suite)
    assert result.testsRun >= 3 and not result.failures and not result.errors, (result.failures, result.errors)
