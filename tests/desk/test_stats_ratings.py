"""Satisfaction in the desk's figures: the customers' ratings of resolutions (1 to 5), counted,
averaged and spread over 1..5, per agent who resolved, and the share of resolutions rated, on
every backend, for everything and for a window."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from chatbot.desk.service import DeskService
from tests.backends import Backend
from tests.desk.rating_helpers import rated_day
from tests.store.conftest import START, FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def desk(backend: Backend, clock: FakeClock) -> Iterator[DeskService]:
    service = backend.service(clock)
    rated_day(service, clock)
    yield service
    service.close()


def test_every_rating_and_the_share_of_resolutions_rated(desk: DeskService) -> None:
    ratings = desk.stats(threshold=0.7).ratings

    assert (ratings.count, ratings.average, ratings.distribution) == (4, 3.5, (0, 1, 1, 1, 1))
    assert (ratings.resolutions, ratings.resolutions_rated) == (5, 4)
    assert ratings.rated_share == pytest.approx(0.8)
    assert [(a.agent, a.count, a.average, a.distribution) for a in ratings.by_agent] == [
        ("ana", 2, 4.5, (0, 0, 0, 1, 1)),
        ("ben", 2, 2.5, (0, 1, 1, 0, 0)),
    ]


def test_a_window_counts_ratings_given_in_it_of_resolutions_in_it(desk: DeskService) -> None:
    # From 1,000 s: every rating was given in it, but ana's first resolution (582) was before
    # it: 4 ratings, and 3 of the window's 4 resolutions rated.
    ratings = desk.stats(since=START + timedelta(seconds=1000)).ratings
    assert (ratings.count, ratings.distribution) == (4, (0, 1, 1, 1, 1))
    assert (ratings.resolutions, ratings.resolutions_rated) == (4, 3)
    assert ratings.rated_share == pytest.approx(0.75)
    # From 2,300 s: ben's second resolution and its rating, and his unrated one.
    ratings = desk.stats(since=START + timedelta(seconds=2300)).ratings
    assert (ratings.count, ratings.average, ratings.distribution) == (1, 3.0, (0, 0, 1, 0, 0))
    assert (ratings.resolutions, ratings.resolutions_rated, ratings.rated_share) == (2, 1, 0.5)
    assert [(a.agent, a.count) for a in ratings.by_agent] == [("ben", 1)]


def test_no_rating_is_none_not_zero(desk: DeskService, clock: FakeClock) -> None:
    ratings = desk.stats(since=clock.now - timedelta(seconds=10)).ratings
    assert (ratings.count, ratings.average, ratings.distribution) == (0, None, (0,) * 5)
    assert (ratings.resolutions, ratings.rated_share, ratings.by_agent) == (0, None, ())


def test_the_json_has_the_ratings(desk: DeskService) -> None:
    shown = desk.stats(threshold=0.7).to_json()["ratings"]
    assert shown == {
        "count": 4,
        "average": 3.5,
        "distribution": [0, 1, 1, 1, 1],
        "resolutions": 5,
        "resolutions_rated": 4,
        "rated_share": 0.8,
        "by_agent": [
            {"agent": "ana", "count": 2, "average": 4.5, "distribution": [0, 0, 0, 1, 1]},
            {"agent": "ben", "count": 2, "average": 2.5, "distribution": [0, 1, 1, 0, 0]},
        ],
    }
