"""The public facade: KnowledgeBase, Dataset, Pipeline."""

from zhiku.knowledge_base.dataset import Dataset
from zhiku.knowledge_base.indexing.pipeline import Pipeline, PipelineSpec
from zhiku.knowledge_base.knowledge_base import KnowledgeBase
from zhiku.knowledge_base.records import DocumentInfo

__all__ = ["Dataset", "DocumentInfo", "KnowledgeBase", "Pipeline", "PipelineSpec"]
