"""Text analysis shared by ingest and query: jieba tokenizing, the search cut, stemming, keywords."""
