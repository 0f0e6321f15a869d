"""The chat playground: answers streamed from the signed-in key's datasets, with the query that
was searched and the cited segments, one click away; the key's conversations beside them. In
agent mode (with a chat model) each search the model makes is shown as it happens.

The stream is the API's own ``/chat-messages`` event stream (Dify's events), so the playground
shows exactly what an application built on the API gets.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from flask import render_template, request
from flask.typing import ResponseReturnValue

from zhiku.answers.types import Answer
from zhiku.api.auth import principal
from zhiku.api.context import context
from zhiku.api.views.chat import answer_datasets, dify_events, event_stream
from zhiku.console import forms
from zhiku.console.blueprint import console
from zhiku.console.citations import cited_parts

#: Conversations listed beside the playground, and messages shown of one.
CONVERSATIONS_SHOWN = 30
MESSAGES_SHOWN = 40
#: The conversations' ``user`` for the console (apps name their own users).
CONSOLE_USER = "console"


@console.route("/chat")
def chat() -> ResponseReturnValue:
    ctx = context()
    store = ctx.kb.conversations
    owner = principal().key_id
    conversation_id = forms.text(request.args, "conversation", max_chars=64) or None
    messages = (
        store.messages(conversation_id, user=CONSOLE_USER, owner=owner, limit=MESSAGES_SHOWN)
        if conversation_id
        else []
    )
    allowed = principal().datasets
    ids, _ = ctx.catalog.dataset_ids(offset=0, limit=100, within=allowed)
    return render_template(
        "chat.html",
        conversations=store.recent(user=CONSOLE_USER, owner=owner, limit=CONVERSATIONS_SHOWN),
        conversation_id=conversation_id or "",
        messages=messages,
        datasets=ctx.catalog.datasets(ids),
        cited_parts=cited_parts,
        agent_available=ctx.kb.settings.llm_base_url is not None,
    )


@console.route("/chat/messages", methods=["POST"])
def send_message() -> ResponseReturnValue:
    """A question from the playground's script, answered as a server-sent event stream."""
    form = request.form
    question = forms.query(form)
    names = form.getlist("datasets")
    if len(names) > 100 or any(len(name) > 64 for name in names):
        raise forms.FormError("datasets", "at most 100 dataset ids")
    conversation_id = forms.text(form, "conversation_id", max_chars=64) or None
    task_id, message_id, created = str(uuid.uuid4()), str(uuid.uuid4()), int(time.time())
    options: dict[str, Any] = {
        "datasets": answer_datasets(names or None),
        "conversation_id": conversation_id,
        "user": CONSOLE_USER,
        "owner": principal().key_id,
        "message_id": message_id,
    }
    if form.get("mode") == "agent":
        options["config"] = {"mode": "agent"}
    events = context().kb.ask(question, stream=True, **options)
    assert not isinstance(events, Answer)
    return event_stream(dify_events(events, task_id, message_id, created))
