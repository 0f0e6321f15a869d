"""Typed errors. Each carries what a user needs to act on it (file, reason, name)."""

from __future__ import annotations


class ZhikuError(Exception):
    """Base of every error zhiku raises on purpose."""

    code = "zhiku_error"


class ConfigError(ZhikuError):
    """A setting is missing or invalid."""

    code = "invalid_config"


class NotFound(ZhikuError):
    """A dataset, document or segment does not exist."""

    code = "not_found"


class AlreadyExists(ZhikuError):
    """A dataset name (or another unique key) is already taken."""

    code = "already_exists"


class InvalidInput(ZhikuError):
    """A caller passed a value outside what is accepted."""

    code = "invalid_input"


class UnsupportedFileType(ZhikuError):
    """No extractor handles this file (by suffix nor by content)."""

    code = "unsupported_file_type"

    def __init__(self, source: str, detail: str = "") -> None:
        self.source = source
        self.detail = detail
        msg = f"unsupported file type: {source}"
        super().__init__(f"{msg} ({detail})" if detail else msg)


class ExtractionError(ZhikuError):
    """A file has a supported type but cannot be read: corrupt, encrypted, empty, undecodable."""

    code = "extraction_error"

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"cannot extract {source}: {reason}")


class ModelUnavailable(ZhikuError):
    """A model (embedding, tokenizer, rerank) is not installed locally or its endpoint failed.

    zhiku never downloads models at run time; this error says what to install instead.
    """

    code = "model_unavailable"


class StoreError(ZhikuError):
    """A vector, full-text or keyword store failed or is locked by another process."""

    code = "store_error"


class StoreBusy(StoreError):
    """The data directory's embedded stores belong to another process (a running ``zhiku serve``).

    Raised before any store file is touched, so the owner's stores stay intact.
    """

    code = "store_busy"


class Cancelled(ZhikuError):
    """A piece of work was stopped: its document was paused or deleted, or it ran out of time."""

    code = "cancelled"


class TimeLimitExceeded(Cancelled):
    """A document's indexing ran past its time limit (setting ``document_time_limit``)."""

    code = "time_limit"
