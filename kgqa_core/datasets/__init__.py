"""Benchmark builders that write the evaluation JSONL format (see kgqa_core.eval.dataset)."""
