"""The ReAct router: a text protocol for models without tool calling.

The model is shown the datasets as actions and answers with a JSON blob
``{"action": "<dataset id>", "action_input": "<question>"}`` (a bare ``Action: <id>`` line is
accepted too); ids and dataset names both count.
"""

from __future__ import annotations

import json
import re

from zhiku.providers.llm import ChatModel
from zhiku.retrieval.routers.llm_common import describe, match_dataset, route_with_llm
from zhiku.retrieval.types import DatasetProfile, RouteDecision, Router

PROMPT = """Pick the one knowledge base that can best answer the question.

Knowledge bases (action name: description):
{actions}

Reply in this format and nothing else:
Thought: why this knowledge base fits
Action:
```json
{{"action": "<action name>", "action_input": "<the question>"}}
```

Question: {query}"""

_JSON_BLOB = re.compile(r"\{[^{}]*\"action\"[^{}]*\}", re.S)
_ACTION_LINE = re.compile(r"^\s*Action\s*[:：]\s*(\S.*?)\s*$", re.M | re.I)


def parse_action(text: str) -> str | None:
    """The action the model named: from the first JSON blob with ``action``, else an
    ``Action: name`` line; None when there is neither."""
    for blob in _JSON_BLOB.findall(text):
        try:
            action = json.loads(blob).get("action")
        except (json.JSONDecodeError, AttributeError):
            continue
        if isinstance(action, str) and action.strip():
            return action
    for line in _ACTION_LINE.findall(text):
        if line.strip() and not line.strip().startswith("```"):
            return line
    return None


class ReactRouter:
    """For models that only write text (small local models, older endpoints)."""

    name = "react"

    def __init__(self, chat: ChatModel, fallback: Router) -> None:
        self._chat = chat
        self._fallback = fallback

    def choose(self, query: str, profiles: list[DatasetProfile]) -> RouteDecision:
        def ask() -> DatasetProfile | None:
            actions = "\n".join(f"- {profile.id}: {describe(profile)}" for profile in profiles)
            answer = self._chat.complete(PROMPT.format(actions=actions, query=query))
            action = parse_action(answer)
            return match_dataset(action, profiles) if action is not None else None

        return route_with_llm(self.name, query, profiles, ask, self._fallback)
