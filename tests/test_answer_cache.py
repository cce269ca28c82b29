"""The language server's kept answers (workspace/answers.py): a matrix is computed once per
generation, also when two ask for it at the same time (the Agent Matrix panel and the conflict
squiggles' computation run on worker threads)."""

from __future__ import annotations

import threading

import pytest

from memlens.protocol.matrix import MatrixResult
from memlens.workspace.answers import AnswerCache


def _matrix(folder: str) -> MatrixResult:
    return MatrixResult(folder=folder, home="/home/u", agents=[], rows=[], diagnostics=[])


def test_two_asking_at_once_compute_once() -> None:
    cache = AnswerCache()
    started, release = threading.Event(), threading.Event()
    calls: list[str] = []

    def slow() -> MatrixResult:
        calls.append("computed")
        started.set()
        release.wait(10)
        return _matrix("/w")

    answers: list[MatrixResult] = []
    first = threading.Thread(target=lambda: answers.append(cache.matrix("/w", None, 1, slow)))
    first.start()
    assert started.wait(10)
    second = threading.Thread(target=lambda: answers.append(cache.matrix("/w", None, 1, slow)))
    second.start()
    second.join(0.2)
    assert second.is_alive()  # waiting for the first computation, not computing beside it
    release.set()
    first.join(10)
    second.join(10)
    assert calls == ["computed"] and cache.computed == 1
    assert len(answers) == 2 and answers[0] is answers[1]


def test_a_waiter_computes_when_the_computation_it_waited_for_failed() -> None:
    cache = AnswerCache()
    started, release = threading.Event(), threading.Event()

    def failing() -> MatrixResult:
        started.set()
        release.wait(10)
        raise OSError("the folder vanished")

    errors: list[BaseException] = []

    def ask_failing() -> None:
        try:
            cache.matrix("/w", None, 1, failing)
        except OSError as error:
            errors.append(error)

    first = threading.Thread(target=ask_failing)
    first.start()
    assert started.wait(10)
    answers: list[MatrixResult] = []
    second = threading.Thread(target=lambda: answers.append(
        cache.matrix("/w", None, 1, lambda: _matrix("/w"))))
    second.start()
    release.set()
    first.join(10)
    second.join(10)
    assert len(errors) == 1 and answers == [_matrix("/w")]
    assert cache.matrix("/w", None, 1, lambda: pytest.fail("kept")) == _matrix("/w")


def test_another_generation_or_agent_set_is_its_own_answer() -> None:
    cache = AnswerCache()
    one = cache.matrix("/w", None, 1, lambda: _matrix("/w"))
    assert cache.matrix("/w", ["claude"], 1, lambda: _matrix("/w")) is not one
    assert cache.matrix("/w", None, 2, lambda: _matrix("/w")) is not one
    assert cache.computed == 3
