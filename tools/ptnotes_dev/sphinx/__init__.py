"""The Sphinx extensions of the ptnotes site, one per job.

==========================================  ====================================================
``ptnotes_dev.sphinx.switcher``             the language switcher (pydata theme's version switcher)
``ptnotes_dev.sphinx.torch_names``          torch objects named by their defining module resolve
``ptnotes_dev.sphinx.zh_search``            Chinese search: glossary terms, Sphinx 9.0's stemmer
``ptnotes_dev.sphinx.claims``               the claims ledger and errata (``docs/claims/*.toml``)
``ptnotes_dev.sphinx.interview``            the interview index (each page's "In an interview")
``ptnotes_dev.sphinx.bench_tables``         the measured numbers (``docs/_data/bench.json``)
``ptnotes_dev.sphinx.matrix``               release-matrix stamps, compatibility page, ledger dates
``ptnotes_dev.sphinx.gallery_titles``       gallery thumbnail titles keep their inline code
==========================================  ====================================================

Each registers its settings with ``app.add_config_value``; ``docs/conf.py`` sets them from the
project's settings (:mod:`ptnotes_dev.settings`).
"""
