"""Reference pages rendered from the code (the CLI, the HTTP API, the settings), so they cannot
drift: the site's build hook (``scripts/docs_hooks.py``) and the tests that check the pages
list everything call the same functions."""
