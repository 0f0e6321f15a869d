"""``zhiku ask`` and ``zhiku chat``: cited answers in the terminal; ``zhiku mcp``: search for agents;
``zhiku eval-answers``: answer quality on an evaluation set."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from zhiku.answers.types import Answer, AnswerEvent
from zhiku.cli.common import foreign_options, foreign_sets, open_knowledge_base, progress_bar, user_errors
from zhiku.cli.output import json_option, notice, one_line, print_json

answerer_option = click.option(
    "--answerer",
    default="auto",
    help="llm, extractive or an installed answerer (see `zhiku plugins`); auto: the chat model "
    "when ZHIKU_LLM_* is set, else the offline extractive answerer.",
)
datasets_option = click.option(
    "--dataset", "dataset_names", multiple=True, help="Dataset to answer from (repeatable; default: all)."
)
#: Typed alone at the chat prompt (any case), these end the chat instead of being asked.
EXIT_WORDS = frozenset({"/exit", "/quit", "exit", "quit"})


@click.command()
@click.argument("question")
@datasets_option
@answerer_option
@click.option("--conversation", "conversation_id", default=None, help="Continue this conversation.")
@click.option("--hyde", is_flag=True, help="Drive semantic search with a hypothetical answer (chat model).")
@click.option(
    "--hypotheses",
    type=click.IntRange(1, 5),
    default=1,
    show_default=True,
    help="With --hyde: hypothetical passages, each searched (one chat call each).",
)
@click.option(
    "--agent", is_flag=True, help="Agent mode: the chat model searches as it sees fit (each search shown)."
)
@click.option(
    "--max-steps", type=click.IntRange(1, 10), default=4, show_default=True, help="Agent mode: most searches."
)
@json_option
@click.pass_context
def ask(
    ctx: click.Context,
    question: str,
    dataset_names: tuple[str, ...],
    answerer: str,
    conversation_id: str | None,
    hyde: bool,
    hypotheses: int,
    agent: bool,
    max_steps: int,
    as_json: bool,
) -> None:
    """Answer a question from the knowledge base, citing numbered sources."""
    config: dict[str, Any] = {"answerer": answerer, "hyde": hyde, "hyde_hypotheses": hypotheses}
    if agent:
        config.update(mode="agent", max_steps=max_steps)
    with open_knowledge_base(ctx) as kb:
        with user_errors(ctx):
            events = kb.ask(
                question,
                datasets=list(dataset_names) or None,
                conversation_id=conversation_id,
                stream=True,
                config=config,
            )
        assert not isinstance(events, Answer)
        answer = _show(events, stream_text=not as_json)
    if as_json:
        print_json(answer.to_dict())


@click.command()
@datasets_option
@answerer_option
@click.pass_context
def chat(ctx: click.Context, dataset_names: tuple[str, ...], answerer: str) -> None:
    """Talk with the knowledge base; follow-up questions remember the conversation. /exit, /quit,
    exit, quit or Ctrl-D ends."""
    with open_knowledge_base(ctx) as kb:
        conversation_id: str | None = None
        while True:
            try:
                question = click.prompt("?", prompt_suffix=" ", default="", show_default=False).strip()
            except (EOFError, click.Abort):
                click.echo()
                break
            if not question:
                continue
            if question.lower() in EXIT_WORDS:
                break
            with user_errors(ctx):
                events = kb.ask(
                    question,
                    datasets=list(dataset_names) or None,
                    conversation_id=conversation_id,
                    stream=True,
                    config={"answerer": answerer},
                )
                assert not isinstance(events, Answer)
                answer = _show(events, stream_text=True)
            conversation_id = answer.conversation_id


def _show(events: Iterator[AnswerEvent], *, stream_text: bool) -> Answer:
    """Print the answer as it comes (when ``stream_text``; its markers checked against the
    sources, as the HTTP streams do), then its numbered sources."""
    from zhiku.answers.citations import checked_events

    answer: Answer | None = None
    for event in checked_events(events):
        if event.kind == "plan" and stream_text and event.plan is not None:
            plan = event.plan
            if plan.search_query != plan.question:
                click.echo(click.style(f"(searched: {one_line(plan.search_query)})", dim=True))
            for note in plan.notes:
                click.echo(click.style(f"({note})", dim=True))
        elif event.kind == "step" and stream_text and event.step is not None:
            step = event.step
            read = " ".join(f"[{n}]" for n in step.found) or "nothing"
            outcome = f"error: {step.error}" if step.error else f"read {read}"
            click.echo(click.style(f"(search {step.number}: {one_line(step.query)} -> {outcome})", dim=True))
        elif event.kind == "delta" and stream_text:
            click.echo(event.delta, nl=False)
        elif event.answer is not None:
            answer = event.answer
    assert answer is not None  # the answer loop always ends with its answer
    if stream_text:
        click.echo()
        if answer.answerer == "extractive" and not answer.no_answer:
            click.echo(click.style("(extractive answer: sentences quoted from the sources)", dim=True))
        cited = answer.cited_sources
        if cited:
            click.echo("Sources:")
        for source in cited:
            click.echo(f"  [{source.number}] {source.label()}  relevance {source.score:.3f}")
            click.echo(f"      {one_line(source.text, 120)}")
    return answer


@click.command("eval-answers")
@click.argument("setdir", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--answerer", default="extractive", help="extractive, llm or an installed answerer.")
@click.option("--embedding-model", default=None)
@click.option("--limit-queries", type=int, default=None, help="Only the first N queries with gold answers.")
@click.option(
    "--conversations",
    "conversations",
    is_flag=True,
    help="Instead of SETDIR: the bundled two- and three-turn conversations over the demo corpus.",
)
@foreign_options
@json_option
@click.pass_context
def eval_answers(
    ctx: click.Context,
    setdir: Path | None,
    answerer: str,
    embedding_model: str | None,
    limit_queries: int | None,
    conversations: bool,
    foreign_dirs: tuple[Path, ...],
    foreign_questions: int,
    as_json: bool,
) -> None:
    """Score answers on a SQuAD-style set: answer contains a gold answer, citation precision/recall,
    and the share of other sets' questions (which it cannot answer) answered "not found". With
    --conversations instead of SETDIR, each turn of the bundled conversations."""
    if conversations == (setdir is not None):
        raise click.UsageError("give either SETDIR or --conversations")
    if setdir is None:
        _eval_conversations(ctx, answerer, as_json)
        return
    from zhiku.evaluation.answers import evaluate_answers
    from zhiku.evaluation.calibration import foreign_questions as draw_foreign
    from zhiku.evaluation.runner import ingest
    from zhiku.evaluation.sets import load_eval_set

    eval_set = load_eval_set(setdir, None)
    foreign = draw_foreign(eval_set, foreign_sets(setdir, foreign_dirs, foreign_questions), foreign_questions)
    with open_knowledge_base(ctx) as kb, progress_bar(f"answers {eval_set.name}") as progress:
        dataset, _ = ingest(
            kb, eval_set, "passage", embedding_model=embedding_model, on_progress=progress, on_notice=notice
        )
        config: dict[str, Any] = {"answerer": answerer, "condense": False}

        def ask_one(question: str) -> Answer:
            answer = kb.ask(question, datasets=[dataset.id], config=config, remember=False)
            assert isinstance(answer, Answer)
            return answer

        report = evaluate_answers(
            eval_set, ask_one, answerer=answerer, limit=limit_queries, on_progress=progress, foreign=foreign
        )
    result = report.to_json()
    if as_json:
        print_json(result, indent=None)
        return
    click.echo(f"{result['set']}: {result['queries']} questions, {result['answerer']} answerer")
    keys = (
        "answer_contains",
        "answer_recall",
        "citation_precision",
        "citation_recall",
        "answered",
        "foreign_not_found",
    )
    for key in (*keys, "ms_per_query"):
        if key in result:
            click.echo(f"  {key:20} {result[key]}")


def _eval_conversations(ctx: click.Context, answerer: str, as_json: bool) -> None:
    """Each turn of the bundled conversations, asked in a conversation of its own on the demo
    dataset (built when missing or incomplete, as ``zhiku demo`` builds it)."""
    from zhiku.demo.runner import demo_dataset
    from zhiku.evaluation.conversations import evaluate_conversations, load_conversations

    conversations = load_conversations()
    with open_knowledge_base(ctx) as kb, progress_bar("conversations") as progress:
        dataset = demo_dataset(kb)

        def ask_turn(question: str, conversation_id: str | None) -> Answer:
            config = {"answerer": answerer}
            answer = kb.ask(question, datasets=[dataset.id], conversation_id=conversation_id, config=config)
            assert isinstance(answer, Answer)
            return answer

        report = evaluate_conversations(conversations, ask_turn, answerer=answerer, on_progress=progress)
        for conversation_id in report.conversation_ids:
            kb.conversations.delete(conversation_id)
    result = report.to_json()
    if as_json:
        print_json(result, indent=None)
        return
    click.echo(
        f"conversations: {result['conversations']} conversations, {result['turns']} turns, "
        f"{result['answerer']} answerer"
    )
    for key, value in result.items():
        if key.startswith(("answer_contains", "citation", "new_topic", "ms_")):
            click.echo(f"  {key:28} {value}")
    for failure in result["failures"]:
        click.echo(
            f"  missed {failure['conversation']} turn {failure['turn']} ({failure['kind']}): "
            f"{one_line(failure['question'], 60)} | searched: {one_line(failure['searched'], 80)}"
        )


@click.command()
@click.option("--transport", type=click.Choice(["stdio", "streamable-http"]), default="stdio")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=8765, show_default=True)
@click.pass_context
def mcp(ctx: click.Context, transport: str, host: str, port: int) -> None:
    """Serve knowledge search (kb_search, list_datasets) to MCP clients."""
    from zhiku.agent_tools.mcp_server import run_mcp

    with user_errors(ctx):
        run_mcp(ctx.obj["home"], transport, host=host, port=port)  # type: ignore[arg-type]
