"""Memory a finished piece of work freed goes back to the system.

A large parse leaves the process's heap full of freed blocks between the few objects that
outlive it; glibc keeps such pages mapped, so the resident size stays at its peak long after the
document is indexed. :func:`release_memory` collects cycles and asks glibc to return every free
page (``malloc_trim``); elsewhere it only collects.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from functools import cache
from typing import Any


def release_memory() -> None:
    """Collect garbage, then return free heap pages to the system where the C library can."""
    gc.collect()
    trim = malloc_trim()
    if trim is not None:
        trim(0)


@cache
def malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or None (another C library, or none found)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
