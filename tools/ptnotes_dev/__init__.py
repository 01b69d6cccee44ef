"""The ptnotes project's own machinery, in one importable home.

Not part of the ``ptnotes`` library that readers import: these are the tools that build,
check and measure the project. One module per job:

==================================  ==========================================================
:mod:`ptnotes_dev.settings`         the ``[tool.ptnotes]`` table of ``pyproject.toml``
:mod:`ptnotes_dev.doctesting`       how the examples of pages and docstrings run (Sybil)
:mod:`ptnotes_dev.pytest_plugin`    the pytest options and hooks of the doctest runs
:mod:`ptnotes_dev.cuda_check`       fail fast when the CUDA session has no CUDA device
:mod:`ptnotes_dev.i18n`             the zh_CN catalogs: completeness, glossary, sync
:mod:`ptnotes_dev.site`             files generated from the settings (switcher, root page)
:mod:`ptnotes_dev.inventory`        the committed intersphinx inventories
:mod:`ptnotes_dev.bench`            the measuring harness behind ``nox -s bench``; the goals
:mod:`ptnotes_dev.measure`          torch's time and memory measured the bench page's way
:mod:`ptnotes_dev.matrix`           every example on every torch release (``nox -s matrix``)
:mod:`ptnotes_dev.sphinx`           the Sphinx extensions, one per job
==================================  ==========================================================
"""
