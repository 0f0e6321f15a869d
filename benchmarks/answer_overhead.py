"""What the answer loop adds on top of retrieval, model calls excluded (target: ≤ 20 ms p50).

    python benchmarks/answer_overhead.py                 # the bundled demo corpus, 10 rounds
    python benchmarks/answer_overhead.py --rounds 30 --json answers.json

Offline, in process, on the bundled demo corpus embedded with the default model, in a temporary
data directory (under ``--home`` when given) removed at the end. Every question is asked of the
same knowledge base in each configuration, and each ask's overhead is its own total less its own
retrieval, so both come from the same call:

- ``retrieve``: ``kb.retrieve`` alone, the baseline;
- ``extractive``: ``kb.ask`` with the offline answerer (query plan, retrieval, source assembly,
  the extractive answer), nothing stored;
- ``extractive + memory``: the same, storing the turn in a new conversation;
- ``extractive + intents``: three intents classified by the offline embedding router;
- ``llm, non-model work``: what the chat-model path does besides the model: the prompt (sources
  and history) and finishing a written answer's citations (normalise, drop unknown, repair).

The questions repeat over rounds, so after the first their embeddings come from the embedding
cache, as a repeated question's would: the figures are the loop's own work.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmark this checkout

from zhiku.answers.citations import finish  # noqa: E402
from zhiku.answers.generation import answer_messages  # noqa: E402
from zhiku.answers.memory import Turn  # noqa: E402
from zhiku.answers.types import Answer  # noqa: E402
from zhiku.demo import load_questions  # noqa: E402
from zhiku.demo.runner import build_demo_dataset  # noqa: E402
from zhiku.knowledge_base import KnowledgeBase  # noqa: E402
from zhiku.text.language import language_of  # noqa: E402

TARGET_MS = 20.0
WARMUP = 3
INTENTS = [
    {"name": "products", "description": "teas, prices, products and stock"},
    {"name": "policies", "description": "returns, shipping, opening hours and store policies"},
    {"name": "chit-chat", "description": "greetings and small talk", "action": "refuse"},
]
BASE = {"answerer": "extractive", "condense": False}


def percentiles(values_ms: list[float]) -> dict[str, float]:
    p50, p95 = np.percentile(np.asarray(values_ms), [50, 95])
    return {"p50": round(float(p50), 3), "p95": round(float(p95), 3), "n": len(values_ms)}


def time_calls(questions: list[str], call: Callable[[str], object]) -> list[float]:
    for question in questions[:WARMUP]:
        call(question)
    out = []
    for question in questions:
        started = time.perf_counter()
        call(question)
        out.append((time.perf_counter() - started) * 1000.0)
    return out


def ask_overheads(
    kb: KnowledgeBase, questions: list[str], config: dict[str, Any], remember: bool
) -> list[float]:
    """Each ask's total less its own retrieval (ms)."""

    def ask(question: str) -> Answer:
        answer = kb.ask(question, config=config, remember=remember)
        assert isinstance(answer, Answer)
        return answer

    for question in questions[:WARMUP]:
        ask(question)
    out = []
    for question in questions:
        timings = ask(question).timings_ms
        out.append(timings["total"] - timings.get("retrieve", 0.0))
    return out


def llm_non_model(kb: KnowledgeBase, questions: list[str]) -> list[float]:
    """Prompt building and citation finishing around a written answer (ms); the model's own time
    is not in it by construction."""
    history = [Turn("上一个问题是什么？", "上一个回答，引用了资料[1]。")] * 3
    prepared = []
    for question in questions:
        answer = kb.ask(question, config=BASE, remember=False)
        assert isinstance(answer, Answer)
        sources = answer.sources
        written = "".join(f"{s.text[:60]}【{s.number}】。" for s in sources[:3]) + "以上内容[9]仅供参考。"
        prepared.append((question, sources, written))
    out = []
    for question, sources, written in prepared:
        started = time.perf_counter()
        answer_messages(question, sources, history, language_of(question))
        finish(written, sources)
        out.append((time.perf_counter() - started) * 1000.0)
    return out


def run(home: Path | None, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir=home) as tmp, KnowledgeBase.open(Path(tmp) / "kb") as kb:
        dataset = build_demo_dataset(kb)
        questions = [q["question"] for q in load_questions()] * rounds
        retrieve = time_calls(questions, lambda q: kb.retrieve(q, datasets=[dataset.id]))
        series = {
            "extractive": ask_overheads(kb, questions, BASE, remember=False),
            "extractive + memory": ask_overheads(kb, questions, BASE, remember=True),
            "extractive + intents": ask_overheads(
                kb, questions, {**BASE, "intents": INTENTS}, remember=False
            ),
            "llm, non-model work": llm_non_model(kb, questions),
        }
        return {
            "questions": len(questions),
            "embedding_model": dataset.embedding_model,
            "retrieve_ms": percentiles(retrieve),
            "overhead_ms": {name: percentiles(values) for name, values in series.items()},
            "target_p50_ms": TARGET_MS,
        }


def report_lines(result: dict[str, Any]) -> list[str]:
    retrieve = result["retrieve_ms"]
    lines = [
        f"Answer loop overhead beyond retrieval, model calls excluded ({result['questions']} asks each, "
        f"embedding model {result['embedding_model']})",
        f"  {'retrieve alone (baseline)':28} p50 {retrieve['p50']:8.2f} ms   p95 {retrieve['p95']:8.2f} ms",
    ]
    for name, figures in result["overhead_ms"].items():
        verdict = "ok" if figures["p50"] <= result["target_p50_ms"] else "OVER TARGET"
        lines.append(
            f"  {name:28} p50 {figures['p50']:8.2f} ms   p95 {figures['p95']:8.2f} ms   "
            f"{figures['p50'] / retrieve['p50']:5.2f}× retrieval   {verdict}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=10, help="Times each demo question is asked.")
    parser.add_argument("--home", type=Path, default=None, help="Directory for the temporary data.")
    parser.add_argument("--json", type=Path, default=None, help="Also write the results to this file.")
    args = parser.parse_args()
    result = run(args.home, max(1, args.rounds))
    for line in report_lines(result):
        print(line)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
