"""Collect the examples of the pages (docs/), docstrings (src/) and README as tests.

The plugin and the mechanism live in the project's machinery package, ``ptnotes_dev``
(tools/); `nox -s doctest` and `nox -s doctest_cuda` run them (see docs/dev/layout.md).
"""

pytest_plugins = ("ptnotes_dev.pytest_plugin",)
