"""What the console shows for zhiku's identifiers: a readable label and a one-line explanation
for every setting, choice and status, so no page shows ``hybrid_search`` or ``un_archive``.

The text here is English; :mod:`zhiku.console.labels_zh` translates it. An identifier not listed
(a plugin's own cleaner, say) is shown with its underscores as spaces, capitalised.
"""

from __future__ import annotations

from typing import NamedTuple


class Label(NamedTuple):
    text: str
    hint: str = ""


LABELS: dict[str, Label] = {
    # search methods
    "hybrid_search": Label(
        "Hybrid search", "Semantic, full-text and keyword search together, their hits fused into one list."
    ),
    "semantic_search": Label(
        "Semantic search", "Finds passages close in meaning to the query, by their vectors."
    ),
    "full_text_search": Label(
        "Full-text search", "Finds passages containing the query's words, ranked by BM25."
    ),
    "keyword_search": Label("Keyword search", "Matches the keywords extracted from each segment."),
    # channels of a hybrid search
    "semantic": Label("Semantic"),
    "full_text": Label("Full text"),
    "keyword": Label("Keywords"),
    # fusion modes
    "adaptive": Label(
        "Adaptive weights", "Weights each channel per query by how clearly its best hits stand out."
    ),
    "weighted_score": Label(
        "Weighted scores", "Adds the channels' normalised scores with the weights below."
    ),
    "rrf": Label("Reciprocal rank fusion", "Combines the channels by their ranks, not their scores."),
    "reranking_model": Label(
        "Rerank model", "A rerank model scores the channels' hits again (name it below)."
    ),
    "none": Label("No fusion", "Each hit keeps its best channel's score."),
    # index processors (doc_form)
    "paragraph": Label("General (paragraphs)", "Each chunk becomes one segment, searched as it is."),
    "hierarchical_model": Label(
        "Parent-child", "Small child chunks are searched; a hit returns their larger parent segment."
    ),
    "qa_model": Label("Q&A", "A language model writes question and answer pairs; questions are searched."),
    "summary": Label(
        "Summary index",
        "Paragraphs, and a summary of each written by a language model and searched beside it "
        "(needs a chat model).",
    ),
    # parent-child: what a parent is, and how it is cut into children
    "parent_mode": Label(
        "Parent chunk", "What a hit returns as context: a paragraph-sized chunk or the whole document."
    ),
    "parent:paragraph": Label(
        "Paragraph", "Parents are cut by the splitter above, up to the maximum chunk length."
    ),
    "parent:full-doc": Label(
        "Full document", "Each document is one parent (up to 10,000 tokens); best for short documents."
    ),
    "child_max_tokens": Label(
        "Child chunk length (tokens)",
        "Each parent is cut into children of at most this length; children are searched.",
    ),
    "child_separator": Label(
        "Child separator",
        "Where a parent is cut into children; \\n is a line break. Empty: automatically, at "
        "paragraphs, lines and sentences.",
    ),
    # splitters
    "recursive": Label(
        "Automatic", "Cuts at paragraphs, then lines, sentences and words, up to the maximum length."
    ),
    "fixed_separator": Label("Custom separator", "Cuts at the separator you give, then by length."),
    # cleaners
    "default": Label("Basic clean-up", "Normalises line breaks and drops invisible characters."),
    "clean_bullets": Label("Remove bullets", "Drops bullet symbols such as ● at the start of a line."),
    "clean_dashes": Label("Remove dashes", "Turns every dash into a space (dates too)."),
    "clean_extra_whitespace": Label(
        "Collapse whitespace", "Runs of spaces become one space; lines are trimmed."
    ),
    "clean_ligatures": Label("Expand ligatures", "Writes ligatures such as ﬁ as plain letters."),
    "clean_ordered_bullets": Label(
        "Remove list numbers", "Drops numbers such as 1.1 at the start of a line."
    ),
    "clean_trailing_punctuation": Label(
        "Remove trailing punctuation", "Drops . , : ; at line ends (not Chinese punctuation)."
    ),
    "group_broken_paragraphs": Label("Join broken lines", "Joins hard-wrapped lines back into paragraphs."),
    "remove_extra_spaces": Label(
        "Remove extra spaces", "Collapses spaces and tabs; drops spaces at line ends."
    ),
    "remove_urls_emails": Label(
        "Remove URLs and e-mails", "Drops web and e-mail addresses; a link keeps its text."
    ),
    "replace_unicode_quotes": Label("Repair quotes", "Repairs quote marks garbled by a wrong text encoding."),
    # settings
    "top_k": Label("Top K", "How many hits a search returns at most."),
    "recall_k": Label("Candidates per channel", "How many candidates each channel finds before fusion."),
    "score_threshold": Label(
        "Score threshold",
        "Minimum relevance, from 0 to 1 (the estimated probability a passage is relevant); "
        "hits below it are not returned. Empty: no threshold.",
    ),
    "reorder": Label(
        "Reorder (odd/even)", "Puts the best hits at both ends of the list, where models read best."
    ),
    "hybrid_methods": Label("Hybrid channels", "Which searches a hybrid search runs."),
    "fusion": Label("Fusion", "How the channels' hits become one list."),
    "rerank_model": Label("Rerank model", "The model used when fusion is by rerank model."),
    "weights": Label("Weights", "Each channel's share, from 0 to 1, for weighted and adaptive fusion."),
    "search_method": Label("Search method", "How a query finds passages."),
    "max_tokens": Label("Maximum chunk length (tokens)", "A chunk is cut before it grows longer than this."),
    "chunk_overlap": Label(
        "Overlap (tokens)", "Text repeated at the start of the next chunk, to keep context."
    ),
    "separator": Label("Separator", "Where the custom splitter cuts; \\n is a line break."),
    "doc_form": Label("Index mode", "How chunks become searchable segments."),
    "index_method": Label(
        "Index method", "How chunks become searchable segments (can be changed in Settings)."
    ),
    "splitter": Label("Splitter", "How a document is cut into chunks."),
    "cleaners": Label("Cleaners", "Clean-ups applied to the text before it is cut."),
    # document statuses
    "waiting": Label("Waiting", "In the queue."),
    "parsing": Label("Parsing", "Reading the file's text."),
    "cleaning": Label("Cleaning", "Cleaning the text."),
    "splitting": Label("Splitting", "Cutting the text into chunks."),
    "indexing": Label("Indexing", "Embedding and indexing the segments."),
    "completed": Label("Available", "Indexed and searchable."),
    "completed_with_errors": Label("Partly available", "Searchable, but some chunks could not be indexed."),
    "error": Label("Failed", "Could not be indexed; see the reason."),
    "paused": Label("Paused", "Indexing was paused."),
    # document actions
    "enable": Label("Enable"),
    "disable": Label("Disable"),
    "archive": Label("Archive"),
    "un_archive": Label("Unarchive"),
    "retry": Label("Retry"),
    "delete": Label("Delete"),
    # metadata field types and built-in fields
    "string": Label("Text"),
    "number": Label("Number"),
    "time": Label("Time"),
    "document_name": Label("Document name"),
    "source": Label("Source"),
    "upload_date": Label("Upload date"),
    "last_update_date": Label("Last update date"),
    # filter operators
    "contains": Label("contains"),
    "not contains": Label("does not contain"),
    "start with": Label("starts with"),
    "end with": Label("ends with"),
    "is": Label("is"),
    "is not": Label("is not"),
    "empty": Label("is empty"),
    "not empty": Label("is not empty"),
    "in": Label("is one of"),
    "not in": Label("is none of"),
    "=": Label("="),
    "≠": Label("≠"),
    ">": Label(">"),
    "<": Label("<"),
    "≥": Label("≥"),
    "≤": Label("≤"),
    "before": Label("before"),
    "after": Label("after"),
}


def label_of(identifier: str) -> Label:
    """The identifier's label and explanation, in English."""
    known = LABELS.get(identifier)
    if known is not None:
        return known
    return Label(identifier.replace("_", " ").strip().capitalize() or identifier)
