"""The write path: pipelines, ingestion, the write protocol over the three stores, segment edits."""
