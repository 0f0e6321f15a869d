"""Which relevance calibration a dataset's searches use: the home's, the package's, or none.

``zhiku calibrate --save`` writes a calibration to ``<home>/calibrations/<model>.json`` under the
name of the exact model it was fitted with (:func:`home_calibration_path`: a ``transformers``
directory's name carries a digest of its weights); a file named after the registry name
(``minilm.json``) serves every dataset of that model. Both are read before the package's, so a
home can refit a shipped model too. With none of them, the model gets :func:`lexical_only`.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from zhiku.core.errors import ConfigError
from zhiku.retrieval.relevance import Calibration, file_stem, lexical_only, shipped_calibration

logger = logging.getLogger(__name__)

#: The folder of a home that holds its calibrations.
HOME_FOLDER = "calibrations"


def home_calibration_path(home: Path, model: str) -> Path:
    """Where a home keeps the calibration of ``model`` (an embedding model's name)."""
    return home / HOME_FOLDER / f"{file_stem(model)}.json"


def read_calibration(path: Path) -> Calibration:
    """The calibration in ``path``; ConfigError naming the file when it is unreadable or not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the relevance calibration: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: not a relevance calibration: expected a JSON object")
    return Calibration.from_json(data, str(path))


def calibration_for(embedding_model: str, home: Path | None, model_name: str | None = None) -> Calibration:
    """The calibration of a dataset's embedding model: the home's for ``model_name`` (the model's
    exact name, e.g. ``transformers/bge-small-zh@1a2b3c4d``), the home's for ``embedding_model``
    (the registry name), the package's, else the lexical-only one (logged as a warning)."""
    names = [name for name in (model_name, embedding_model) if name]
    if home is not None:
        for name in names:
            path = home_calibration_path(home, name)
            if path.is_file():
                return read_calibration(path)
    shipped = shipped_calibration(embedding_model)
    if shipped is not None:
        return shipped
    logger.warning(
        "no relevance calibration for embedding model %r: hits are scored by their lexical evidence "
        "only, and the default score threshold refuses no off-topic question; fit one with "
        "`zhiku calibrate --save`",
        model_name or embedding_model,
    )
    return lexical_only(embedding_model, model_name)
