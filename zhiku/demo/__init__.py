"""The bundled bilingual demo corpus and the ``zhiku demo`` run."""

from zhiku.demo.runner import CORPUS_DIR, QUESTIONS_FILE, load_questions, run_demo

__all__ = ["CORPUS_DIR", "QUESTIONS_FILE", "load_questions", "run_demo"]
