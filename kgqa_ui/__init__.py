"""kgqa_ui: rendering helpers for the Streamlit workbench.

Everything here turns `kgqa_core.trace.schema.Trace` objects (and the graph
they ran on) into HTML, plotly figures and tables.  Nothing here calls a
model but the jobs (``run_job``, ``eval_job``, started by ``running``): the UI
replays what a trace recorded.  The pure modules (``scene``, ``vis_html``,
``charts``, ``text_view``, ``run_store``, ``trace_tables``, ``eta``,
``counterfactual``, ``session_store``, ``eval_view``, ``eval_charts``,
``run_job``, ``eval_job``) do not import Streamlit, so they are unit-tested
without an app; the Streamlit glue lives in ``panels``, ``state``,
``persist`` and ``running``.  What is particular to a method (step names,
graph layers, score legends, panels) is in its view under ``views/``, chosen
by step-kind prefix.
"""
