"""Evaluation: datasets, metrics, the READS error taxonomy and the batch runner.

Import from the module that defines a name: `dataset` (the JSON Lines
question format), `metrics` (answer matching, per-question metrics, bootstrap
summaries), `taxonomy` (READS error classes), `runner` (the resumable batch
run) and `cli` (the ``eval`` command).
"""
