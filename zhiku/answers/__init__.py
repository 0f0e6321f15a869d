"""The answer loop: question understanding, retrieval, numbered sources, cited answers, agent mode, memory."""
