"""Quality measured: retrieval metrics, answer scores, conversations, calibration, routing."""
