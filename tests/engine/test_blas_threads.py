"""Row blocks run with one BLAS thread and one torch thread, and give the threads back."""

import pytest

from attention_explorer.engine.blas_threads import one_blas_thread


def test_torch_runs_one_thread_inside_and_gets_its_threads_back():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with one_blas_thread():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with pytest.raises(ValueError), one_blas_thread():
            raise ValueError("a failing pass")
        assert torch.get_num_threads() == 2  # restored after an error too
    finally:
        torch.set_num_threads(before)


def test_blas_runs_one_thread_inside():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    with one_blas_thread():
        blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
        assert blas and all(i["num_threads"] == 1 for i in blas)
