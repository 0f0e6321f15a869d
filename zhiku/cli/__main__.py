"""``python -m zhiku.cli``: the ``zhiku`` command."""

from zhiku.cli import main

main()
