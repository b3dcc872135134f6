"""The registry of step views, keyed by step-kind prefix (``dog.``, ``cot.``, ``reads.``, ...).

Each module in this package defines ``VIEWS``, a list of `StepView`s; the
package finds them itself, so adding a method adds one view module here and
touches no shared renderer.

Dispatch: the view registered for the trace's ``method`` first, when it
accepts the step's kind (this is how old CoT/Direct traces with ``dog.*``
kinds reach the CoT/Direct views); then the view owning the kind's longest
prefix; then `GenericView`, which draws the common fields and shows the
extras as JSON.
"""

from __future__ import annotations

import importlib
import pkgutil

from kgqa_core.trace.schema import Step, Trace

from .base import GenericView, StepView

GENERIC = GenericView()
_BY_METHOD: dict[str, StepView] = {}
_BY_PREFIX: dict[str, StepView] = {}


def register(view: StepView) -> StepView:
    """Add a view; a later view with the same method or prefix replaces the earlier one."""
    if view.method:
        _BY_METHOD[view.method.lower()] = view
    for prefix in view.prefixes:
        _BY_PREFIX[prefix] = view
    return view


def _discover() -> None:
    for info in pkgutil.iter_modules(__path__):
        if info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for view in getattr(module, "VIEWS", []):
            register(view)


def view_for_kind(kind: str, method: str = "") -> StepView:
    kind = str(kind or "")
    own = _BY_METHOD.get(str(method or "").lower())
    if own is not None and own.accepts(kind):
        return own
    for prefix in sorted(_BY_PREFIX, key=len, reverse=True):
        if kind.startswith(prefix):
            return _BY_PREFIX[prefix]
    return GENERIC


def view_for_step(trace: Trace, step: Step | None) -> StepView:
    """The view of one step; ``step=None`` (the final result) gets the trace's method view."""
    if step is None:
        return view_for_trace(trace)
    return view_for_kind(step.kind, trace.method)


def view_for_trace(trace: Trace) -> StepView:
    own = _BY_METHOD.get(str(trace.method or "").lower())
    if own is not None:
        return own
    kinds = [s.kind for s in trace.steps]
    for kind in kinds:
        view = view_for_kind(kind)
        if view is not GENERIC and view.method:  # a method's view, not the question's reading (`reading.plan`)
            return view
    return GENERIC


def registered() -> dict[str, StepView]:
    """Prefix -> view (for the docs and the tests)."""
    return dict(_BY_PREFIX)


_discover()

__all__ = ["GENERIC", "GenericView", "StepView", "register", "registered", "view_for_kind", "view_for_step",
           "view_for_trace"]
