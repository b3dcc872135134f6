"""The parameter form is built from the chosen methods' declarations (AppTest)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from conftest import APP


def _form(methods, defaults=None):
    def script(methods, defaults):
        import streamlit as st

        from kgqa_core.methods.base import method_spec
        from kgqa_ui.params_form import parameter_form

        st.session_state["out"] = parameter_form([method_spec(m) for m in methods], defaults=defaults,
                                                 keys={"beam_size": "ask_beam"})

    return AppTest.from_function(script, args=(methods, defaults), default_timeout=60).run()


def _keys(at, kind):
    return {w.key for w in at.get(kind)}


def test_only_the_chosen_methods_parameters_are_offered():
    at = _form(["reads"])
    assert not at.exception
    keys = _keys(at, "number_input")
    assert "ask_param_max_search_steps" in keys and "ask_param_permutations" in keys
    assert "ask_beam" not in keys and "ask_param_hops" not in keys  # READS reads neither
    assert set(at.session_state["out"]) == {"reads"}


def test_alike_parameters_are_shown_once_and_different_ones_per_method():
    at = _form(["dog", "cot", "direct"], defaults={"beam_size": 2})
    assert not at.exception
    budget = [w for w in at.number_input if w.key == "ask_param_max_prompt_triplets"]
    assert len(budget) == 1 and "Used by dog, cot, direct" in budget[0].help
    assert "Graph triplets placed in the prompt" in budget[0].help  # help text from the declaration
    tokens = sorted(w.key for w in at.number_input if w.key.startswith("ask_param_max_new_tokens"))
    assert tokens == ["ask_param_max_new_tokens::direct", "ask_param_max_new_tokens::dog+cot"]
    out = at.session_state["out"]
    assert out["dog"]["beam_size"] == 2 and "beam_size" not in out["cot"]  # the page's override
    assert out["dog"]["max_new_tokens"] == 256 and out["direct"]["max_new_tokens"] == 64
    at.number_input(key="ask_param_max_prompt_triplets").set_value(40).run()
    out = at.session_state["out"]
    assert {out[m]["max_prompt_triplets"] for m in ("dog", "cot", "direct")} == {40}


def test_switches_choices_and_lists_get_their_own_widgets():
    at = _form(["lpkg", "rok"])
    assert not at.exception
    assert {"ask_param_fallback_plan", "ask_param_use_embedder"} <= _keys(at, "checkbox")
    assert {"ask_param_relevance", "ask_param_sibling_rule"} <= _keys(at, "selectbox")
    assert "ask_param_patterns" in _keys(at, "multiselect")
    at.checkbox(key="ask_param_fallback_plan").uncheck().run()
    at.selectbox(key="ask_param_relevance").set_value("lexical").run()
    out = at.session_state["out"]["lpkg"]
    assert out["fallback_plan"] is False and out["relevance"] == "lexical"
    assert at.session_state["out"]["rok"]["hops"] == 2


def test_the_ask_page_offers_what_the_chosen_methods_read(runs_dir):
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page("pages/ask.py")
    at.run()
    at.selectbox(key="ask_example").set_value(0).run()
    at.multiselect(key="ask_methods").set_value(["reads"]).run()
    assert not at.exception
    keys = _keys(at, "number_input")
    assert "ask_beam" not in keys and "ask_hops" not in keys and "ask_param_max_search_steps" in keys
    at.multiselect(key="ask_methods").set_value(["dog", "rok"]).run()
    keys = _keys(at, "number_input")
    assert {"ask_beam", "ask_steps", "ask_hops", "ask_budget"} <= keys


def test_a_number_declared_without_bounds_gets_an_open_widget_not_an_error(monkeypatch):
    """A method's float or int parameter may declare no min/max (a user's own method, a new switch): the form
    leaves that side open instead of failing the page (it once raised float(None) for the whole Ask page)."""
    def script():
        import dataclasses

        import streamlit as st

        from kgqa_core.methods.base import MethodSpec, method_spec
        from kgqa_core.parameters import MethodParams, param
        from kgqa_ui.params_form import parameter_form

        @dataclasses.dataclass(frozen=True)
        class Open(MethodParams):
            weight: float = param(0.5, "A weight with no bounds declared.")
            count: int = param(3, "A count with no bounds declared.")

        dog = method_spec("dog")
        spec = MethodSpec("open", dog.run, Open, "a method whose numbers declare no bounds")
        st.session_state["out"] = parameter_form([spec], defaults=None, keys={})

    at = AppTest.from_function(script, default_timeout=60).run()
    assert not at.exception and not at.error
    assert at.session_state["out"]["open"] == {"weight": 0.5, "count": 3}
    at.number_input(key="ask_param_weight").set_value(7.25).run()
    assert at.session_state["out"]["open"]["weight"] == 7.25
