"""Fixtures shared by the unit tests."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest

from tests._state import state_unchanged


@pytest.fixture
def unchanged() -> Callable[..., AbstractContextManager[None]]:
    """``with unchanged(model, optimizer, path): call()`` fails if the call changed them.

    Meant for refused calls: ``with pytest.raises(ValueError), unchanged(model): ...``.
    See :mod:`tests._state` for what is compared.
    """
    return state_unchanged
