"""ptnotes: reference implementations of PyTorch fundamentals, each verified by doctests.

Every public name is documented with runnable examples in the API reference; the
pages of the ptnotes site import from here so that code lives in one place.
"""

from ptnotes.convert import to_numpy

__all__ = ["to_numpy"]
__version__ = "0.1.0"
