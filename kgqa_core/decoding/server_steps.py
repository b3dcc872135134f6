"""DoG's free text and triplet steps over a model server, with few requests and exact scores.

In process, DoG reads the model's full next-token distribution at every
token.  A server returns text and a few log-probs per position, so the two
kinds of step are re-planned around requests, and then handed back to the
same decoders (`greedy_triplet`, `TripletBeamSearch`) so that the chain, the
beam and the step trace are computed by the same code:

Free text: one greedy request that stops on ``<`` (the opener); the returned
text is replayed token by token through the in-process stop rules (answer
line, runaway example, loop), so the text kept is exactly where the
in-process decoder would have stopped; what the server wrote past it is
dropped.  A server cannot apply those rules itself, so a request asks for at
most ``FREE_CHUNK`` tokens and a stretch longer than that continues in a
next request only when no rule has fired: the final answer line no longer
makes the server write to the end of the token budget.

Triplet step, one of two strategies (recorded in the trace, step extra
``server_strategy``):

* ``score`` (servers with token-id prompts, several per request, and aligned
  prompt log-probs: vLLM): every candidate reading of G_q is scored in ONE
  batched request; the log-probs of all trie tokens (and the top-1 token at
  each position) are then known, and the greedy or beam search over the trie
  runs locally on them.
* ``walk`` (servers with generated log-probs and a grammar: llama.cpp's
  servers): ONE request decodes the triplet greedily under a grammar of the
  readings and returns each chosen token's log-prob and the unconstrained
  top tokens.  Where the server takes token-id terminals (llama.cpp's
  ``<[id]>``, capability ``token_grammar``) the grammar IS the trie, so the
  server's choice at each node is the argmax over that node's children, as
  in process, and one request settles the triplet.  A text grammar (older
  servers) accepts any tokenisation of a reading, the trie only the
  canonical one: where the returned tokens leave the trie, that node is
  settled by one request restricted to its children, and a new grammar
  request continues from the child chosen (two requests per divergence).

Scores are always the model's unconstrained, full-vocabulary log-probs (Eq.
3): llama.cpp applies a bias or a grammar in its sampler after the log-probs
are taken, and the batched ``score`` request constrains nothing.  A log-prob
renormalised over the allowed tokens is never used as a score.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from ..models.interface import BackendCapabilityError
from ..models.server_caps import token_terminal
from ..models.server_model import FORCE_BIAS, gbnf_literal, token_id_of, token_matches
from .beam import TripletBeamSearch, TripletHypothesis, TripletSearchResult, candidate_scores, greedy_triplet
from .constraint import TripletGuide
from .free_text import FreeText, default_stop, drop_run, is_looping
from .prompt import answer_written

OPENER = "<"
FREE_CHUNK = 48  # free-text tokens per request (most stretches between triplets are shorter)
MAX_WALKS = 8  # grammar requests for one triplet (text grammars only; past this, nodes are fetched one by one)


class RemoteDecoding:
    """The server paths of `decode_free_text` and `TripletBeamSearch.search` for one `ServerBackend`."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.strategy_used: dict[str, int] = {}
        self.triplet_requests: list[int] = []  # requests per triplet step

    # ------------------------------------------------------------ free text
    def free_text(self, state: Any, max_tokens: int, detector: Any, allow_open: bool = True,
                  stop: Any = default_stop, detect_loops: bool = True) -> FreeText:
        model = self.model
        before = model.counter.forward_passes
        # a chain at its triplet limit stops where it would open one, as in process ("limit")
        opening = detector is not None
        fields: dict[str, Any] = {"stop": [OPENER]} if opening else {}
        # in chunks: the server cannot apply the stop rules (answer line, runaway example, loop), so a
        # stretch is asked for FREE_CHUNK tokens at a time and the next chunk only when no rule has fired
        text, remaining, checked = "", max_tokens, 0
        while True:
            chunk = min(remaining, FREE_CHUNK)
            choice = model.complete(list(state.ids) + (model.encode(text) if text else []), "free text",
                                    max_tokens=chunk, **fields)
            piece = str(choice.get("text", ""))
            text += piece
            remaining -= int((choice.get("_usage") or {}).get("completion_tokens") or len(model.encode(piece)))
            if choice.get("finish_reason") != "length" or remaining <= 0 or not piece or \
                    self._rule_fires(text, stop, detect_loops, checked):
                break
            checked = max(0, len(text) - len(piece) - 8)  # the text before this chunk passed (its tail may re-tokenise)
        opened = opening and choice.get("finish_reason") == "stop" and self._opened(choice, piece)
        if opened:
            ids_all = model.encode(text + OPENER)
            opener_id = ids_all[-1]
            body = ids_all[:-1]
            opener = model.token_text(opener_id)
            if not detector.is_opening(opener_id) or not opener.endswith(OPENER):
                body, opener_id, opener = model.encode(text), None, OPENER
        else:
            body = model.encode(text)
        # replay the in-process stop rules over the returned tokens
        hit = self._first_rule(body, stop, detect_loops)
        if hit is not None:
            k, part, cut = hit
            if cut is not None:
                model.step(state, body[: k - 1], generated=True)
                return self._done(FreeText(part[:cut], body[:k], "stop"), before)
            model.step(state, body[:k], generated=True)
            return self._done(drop_run(model, state, FreeText(part, body[:k], "repeat"), in_process=False), before)
        visible = model.decode(body)
        if opened and answer_written(visible):  # as in process: the answer line ends where a triplet would open
            model.step(state, body, generated=True)
            return self._done(FreeText(visible, body, "stop"), before)
        if opened and not allow_open:
            model.step(state, body, generated=True)
            return self._done(FreeText(visible, body, "limit"), before)
        if opened:
            opener_ids = [opener_id] if opener_id is not None else model.encode(opener)
            model.step(state, body + opener_ids, generated=True)
            return self._done(FreeText(visible + opener[:-1], body + opener_ids, "open", opener, opener_ids), before)
        model.step(state, body, generated=True)
        reason = "length" if choice.get("finish_reason") == "length" else "eos"
        return self._done(FreeText(visible, body, reason), before)

    def _rule_fires(self, text: str, stop: Any, detect_loops: bool, checked: int = 0) -> bool:
        """Would the in-process decoder have stopped within `text` (answer line, runaway, loop)?

        Prefixes no longer than `checked` characters were read after an earlier chunk and are skipped.
        """
        return self._first_rule(self.model.encode(text), stop, detect_loops, checked) is not None

    def _first_rule(self, ids: list[int], stop: Any, detect_loops: bool,
                    checked: int = 0) -> tuple[int, str, int | None] | None:
        """The first k where the stop rule (cut) or the loop rule (cut None) fires on ``decode(ids[:k])``.

        The in-process decoder checks the rules after every token; replaying
        that with ``decode(ids[:k])`` for every k is quadratic in the reply.
        The prefixes come from `prefix_texts` (linear), and a hit is confirmed
        against an exact decode; a tokenizer whose prefixes do not add up
        (never seen) falls back to exact decoding for this reply.
        """
        model = self.model
        for k, part in prefix_texts(model, ids):
            if len(part) <= checked:
                continue
            cut = stop(part)
            if cut is not None or (detect_loops and is_looping(part)):
                exact = model.decode(ids[:k])
                if exact != part:
                    return self._first_rule_exact(ids, stop, detect_loops, checked)
                return k, part, cut
        if ids and part != model.decode(ids):
            return self._first_rule_exact(ids, stop, detect_loops, checked)
        return None

    def _first_rule_exact(self, ids: list[int], stop: Any, detect_loops: bool,
                          checked: int) -> tuple[int, str, int | None] | None:
        for k in range(1, len(ids) + 1):
            part = self.model.decode(ids[:k])
            if len(part) <= checked:
                continue
            cut = stop(part)
            if cut is not None or (detect_loops and is_looping(part)):
                return k, part, cut
        return None

    def _opened(self, choice: dict[str, Any], text: str) -> bool:
        """Did the stop string ``<`` end the text (rather than EOS)?

        vLLM says so (``stop_reason``).  llama-cpp-python does not; its count
        of generated tokens includes the token holding ``<``, so the count
        tells the two apart, except when the opener carries text before its
        ``<`` (`` <``) *and* the model would have ended right after that
        space -- read as an opening (documented in docs/model-server.md).
        """
        if "stop_reason" in choice:
            return choice.get("stop_reason") == OPENER
        n_gen = int((choice.get("_usage") or {}).get("completion_tokens") or 0)
        if not n_gen:
            return True
        return n_gen >= len(self.model.encode(text + OPENER))

    def _done(self, result: FreeText, before: int) -> FreeText:
        result.forward_passes = self.model.counter.forward_passes - before
        return result

    # --------------------------------------------------------- triplet step
    def triplet_search(self, state: Any, guide: TripletGuide, width: int, closes_text: bool = False) -> TripletSearchResult:
        model = self.model
        strategy = model.caps.triplet_strategy
        if not strategy:
            model.caps.needs("triplet", "DoG's triplet step")
        if width > 1 and strategy != "score":
            raise BackendCapabilityError(
                f"DoG with beam_size {width} over this server needs batched prompt log-probs (vLLM); "
                "use beam_size 1 here"
            )
        before = model.counter.forward_passes
        guide.allowed(guide.trie.ROOT)  # an empty trie fails here, as in process
        oracle = TrieOracle(model, guide, list(state.ids), strategy)
        if strategy == "score":
            oracle.score_all()
        else:
            oracle.walk_grammar()
        cursor = oracle.root()
        if width == 1:
            hyp = greedy_triplet(oracle, cursor, guide, closes_text)
            # ``closes_text``: as in process, the state holds the item up to its last token read, that one not fed
            fed = hyp.token_ids[:max(0, len(hyp.positions) - 1)] if closes_text else hyp.token_ids
            model.step(state, fed, generated=True)
            hyp.state = state
            hyps = [hyp]
        else:
            hyps = TripletBeamSearch(oracle, width).beam_search(cursor, guide)
        n = model.counter.forward_passes - before
        self.strategy_used[strategy] = self.strategy_used.get(strategy, 0) + 1
        self.triplet_requests.append(n)
        return TripletSearchResult(hyps, candidate_scores(guide, hyps), n, strategy)


@dataclass
class _Node:
    """What is known at one trie node: exact log-probs of some tokens, the unconstrained top token."""

    logprobs: dict[int, float] = field(default_factory=dict)
    top_id: int | None = None  # the unconstrained argmax (None: a token outside the vocabulary we can name)
    top_lp: float | None = None
    floor: float | None = None  # every token not listed is at most this (the smallest top-K log-prob)
    complete: bool = False  # enough for the decoders: the greedy choice and the top token are known


class _Cursor:
    """A position in the trie, as a `Sequence` the decoders can extend and fork."""

    __slots__ = ("node", "path", "logits")

    def __init__(self, node: int, path: list[int], logits: torch.Tensor) -> None:
        self.node, self.path, self.logits = node, path, logits

    @property
    def ids(self) -> list[int]:
        return self.path

    def fork(self) -> "_Cursor":
        return _Cursor(self.node, list(self.path), self.logits)


class TrieOracle:
    """A stand-in model for `greedy_triplet` / `TripletBeamSearch` whose rows come from server log-probs.

    A row is a full-vocabulary log-prob vector: the known tokens at their
    exact values, the tokens not known spread over the remaining mass (so a
    log-softmax leaves the known values unchanged), and children whose value
    the server did not list at their upper bound (below the chosen child).
    A node the bulk request did not settle is fetched with one request.
    """

    def __init__(self, model: Any, guide: TripletGuide, prefix: list[int], strategy: str) -> None:
        self.model, self.guide, self.trie = model, guide, guide.trie
        self.prefix, self.strategy = prefix, strategy
        self.counter, self.lock = model.counter, model.lock
        self.nodes: dict[int, _Node] = {}
        self.vocab = model.vocab_size
        self.paths: dict[int, list[int]] = {self.trie.ROOT: []}
        self._index_paths()

    # the parts of the model interface the decoders use
    def token_text(self, token_id: int) -> str:
        return self.model.token_text(token_id)

    def fork(self, cursor: _Cursor) -> _Cursor:
        return cursor.fork()

    def release(self, cursor: _Cursor) -> None:
        pass

    def extend(self, cursor: _Cursor, new_ids: list[int]) -> torch.Tensor:
        rows = []
        for tok in new_ids:
            nxt = self.trie.advance(cursor.node, tok)
            if nxt is None:
                raise ValueError(f"token {tok} leaves the trie")
            cursor.node = nxt
            cursor.path.append(tok)
            rows.append(self.row(nxt))
        out = torch.stack(rows) if rows else torch.empty(0, self.vocab)
        if rows:
            cursor.logits = rows[-1]
        return out

    def extend_many(self, cursors: list[_Cursor], new_ids: list[list[int]]) -> list[torch.Tensor]:
        return [self.extend(c, ids) for c, ids in zip(cursors, new_ids)]

    def root(self) -> _Cursor:
        return _Cursor(self.trie.ROOT, [], self.row(self.trie.ROOT))

    # ------------------------------------------------------------- rows
    def _index_paths(self) -> None:
        stack = [self.trie.ROOT]
        while stack:
            n = stack.pop()
            for tok, child in self.trie.children[n].items():
                self.paths[child] = self.paths[n] + [tok]
                stack.append(child)

    def row(self, node: int) -> torch.Tensor:
        """The log-prob row at `node` (fetched if needed); leaves need none (nothing is chosen there)."""
        if self.trie.is_leaf(node):
            return torch.full((self.vocab,), -math.log(self.vocab))
        info = self.nodes.get(node)
        if info is None or not info.complete:
            info = self.fetch(node)
        return self._tensor(node, info)

    def _tensor(self, node: int, info: _Node) -> torch.Tensor:
        known = dict(info.logprobs)
        if info.top_id is not None and info.top_lp is not None:
            known.setdefault(info.top_id, info.top_lp)
        children = list(self.trie.children[node].keys())
        best_child = max((known[c] for c in children if c in known), default=None)
        missing = [c for c in children if c not in known]
        if missing:
            cap = min(v for v in (info.floor, best_child) if v is not None) if (info.floor is not None or best_child is not None) else -30.0
            for i, c in enumerate(missing):  # upper bounds, strictly below the chosen child, in a stable order
                known[c] = cap - 1e-3 * (1 + i / max(len(missing), 1))
        mass = sum(math.exp(v) for v in known.values())
        rest = max(1.0 - mass, 1e-12)
        n_rest = max(self.vocab - len(known), 1)
        row = torch.full((self.vocab,), math.log(rest / n_rest), dtype=torch.float32)
        if info.top_id is None and info.top_lp is not None:
            # the unconstrained top token could not be named: stand it in at a token outside the trie,
            # so "would the model leave the trie here?" is answered as the server's top token says
            spare = next(i for i in range(self.vocab) if i not in known)
            known[spare] = info.top_lp
        idx = torch.tensor(list(known.keys()), dtype=torch.long)
        row[idx] = torch.tensor(list(known.values()), dtype=torch.float32)
        return row

    # ------------------------------------------------------- bulk request
    def score_all(self) -> None:
        """One batched request: every reading's tokens after the prefix, with prompt log-probs and the top-1."""
        model = self.model
        readings = list(self.trie.sequences.items())
        extra = {"return_tokens_as_token_ids": True} if model.caps.kind == "vllm" else {}
        choices = model.complete_batch([self.prefix + list(seq) for _, seq in readings], "DoG triplet candidates",
                                       max_tokens=1, echo=True, logprobs=1, **extra)
        for (_, seq), ch in zip(readings, choices):
            lp = ch.get("logprobs") or {}
            values = lp.get("token_logprobs") or []
            tops = lp.get("top_logprobs") or []
            n = len(seq)
            vals = values[-(n + 1):-1]
            top_rows = tops[-(n + 1):]  # the top token after each prefix of the reading (the last: after it)
            if len(vals) != n or any(v is None for v in vals):
                raise model_error(model, "returned no prompt log-probs for the triplet candidates")
            node = self.trie.ROOT
            for j, tok in enumerate(seq):
                info = self.nodes.setdefault(node, _Node())
                info.logprobs[int(tok)] = float(vals[j])
                self._top(info, top_rows[j] if j < len(top_rows) else None)
                info.complete = True
                node = self.trie.advance(node, tok)
            end = self.nodes.setdefault(node, _Node())
            self._top(end, top_rows[n] if n < len(top_rows) else None)
            end.complete = True

    def _top(self, info: _Node, top: Any) -> None:
        if not isinstance(top, dict) or not top:
            return
        text, lp = max(top.items(), key=lambda kv: kv[1])
        if info.top_lp is None or lp > info.top_lp:
            info.top_id, info.top_lp = token_id_of(self.model, text), float(lp)
        info.floor = min(float(v) for v in top.values()) if info.floor is None else min(info.floor, *map(float, top.values()))
        for t, v in top.items():
            tid = token_id_of(self.model, t)
            if tid is not None:
                info.logprobs.setdefault(tid, float(v))

    def walk_grammar(self) -> None:
        """The greedy triplet in (usually) one request, walked down the trie.

        With token-id terminals (``token_grammar``) the grammar is the trie
        itself, so the server's greedy choice at every node is the in-process
        one (the argmax over the node's children) and one request settles the
        whole triplet.  With a text grammar only, the server may take another
        tokenisation of a reading; where its tokens leave the trie the node
        is settled by one `fetch`, and a new grammar request continues from
        the child it chose (two requests per divergence, never one per token).
        """
        model = self.model
        if not model.caps.grammar and not model.caps.token_grammar:
            return  # every node is fetched on its own
        node: int | None = self.trie.ROOT
        for _ in range(MAX_WALKS):
            node = self._walk_from(node)
            if node is None:
                return
            info = self.fetch(node)  # the node where the server's tokens left the trie
            children = self.trie.children[node]
            if self.trie.is_end(node) and info.top_id not in children:
                return  # the triplet ends here (the model would leave the trie)
            best = max((t for t in children if t in info.logprobs), key=lambda t: info.logprobs[t])
            node = children[best]
            if self.trie.is_leaf(node):
                return

    def _walk_from(self, start: int) -> int | None:
        """One grammar request from `start`; returns the node where its tokens left the trie, or None."""
        model = self.model
        depth = max(len(s) for s in self.trie.sequences.values()) - len(self.paths[start])
        fields: dict[str, Any] = {"grammar": self._grammar(start), "max_tokens": depth + 4,
                                  "logprobs": max(1, min(model.caps.top_logprobs, 20))}
        if model.caps.logit_bias and not model.caps.token_grammar:
            vocab_ids = {t for n in self._nodes_under(start) for t in self.trie.children[n]}
            fields["logit_bias"] = {str(t): FORCE_BIAS for t in vocab_ids}
        choice = model.complete(self.prefix + self.paths[start], "DoG triplet (grammar)", **fields)
        lp = choice.get("logprobs") or {}
        tokens, values, tops = lp.get("tokens") or [], lp.get("token_logprobs") or [], lp.get("top_logprobs") or []
        node = start
        for j, text in enumerate(tokens):
            children = self.trie.children[node]
            tok = next((c for c in children if token_matches(model, text, c)), None)
            if tok is None or j >= len(values) or values[j] is None:
                return node  # left the canonical trie here
            info = self.nodes.get(node) or _Node()
            info.logprobs[tok] = float(values[j])
            self._top(info, tops[j] if j < len(tops) else None)
            # the grammar's choice is the greedy one unless the unconstrained top token is a child passed over
            if info.top_id in children and info.top_id != tok:
                return node
            info.complete = True
            self.nodes[node] = info
            node = children[tok]
            if self.trie.is_leaf(node):
                return None
        if tokens and self.trie.is_end(node) and choice.get("finish_reason") == "stop" and node not in self.nodes:
            # the grammar let the server end here: it preferred the end of text to every child, so the
            # model's top token is no child and the in-process decoder ends here too (llama.cpp lists no
            # log-prob for the end token: it stands in as the top token, for that decision only)
            eos = min(model.eos_ids) if model.eos_ids else None
            self.nodes[node] = _Node(top_id=eos, top_lp=0.0, complete=True)
            return None
        return node

    def _grammar(self, start: int) -> str:
        """A GBNF grammar of the readings below `start`: token-id terminals where the server takes them."""
        if self.model.caps.token_grammar:
            return "root ::= " + token_trie_grammar(self.trie, start)
        head = self.model.decode(self.paths[start])
        texts = sorted({full[len(head):] for full in (self.model.decode(list(self.trie.sequences[t]))
                                                      for t in self.trie.triplets_under(start))
                        if full.startswith(head) and len(full) > len(head)})
        return "root ::= " + " | ".join(gbnf_literal(t) for t in texts)

    def _nodes_under(self, start: int) -> list[int]:
        out, stack = [], [start]
        while stack:
            n = stack.pop()
            out.append(n)
            stack.extend(self.trie.children[n].values())
        return out

    def fetch(self, node: int) -> _Node:
        """One request at `node`: the best child (by the bias) and the unconstrained top tokens."""
        model = self.model
        model.caps.needs("triplet", "DoG's triplet step")
        children = list(self.trie.children[node].keys())
        k = max(1, min(model.caps.top_logprobs, 20))
        constraint = ({"grammar": "root ::= " + " | ".join(token_terminal(c) for c in children)}
                      if model.caps.token_grammar else model.only_tokens_fields(children))
        choice = model.complete(self.prefix + self.paths[node], "DoG triplet (node)", **constraint,
                                max_tokens=1, logprobs=k)
        lp = choice.get("logprobs") or {}
        tokens, values, tops = lp.get("tokens") or [], lp.get("token_logprobs") or [], lp.get("top_logprobs") or []
        if not tokens or not values or values[0] is None:
            raise model_error(model, "returned no log-probs (was logprobs stripped?)")
        tok = next((c for c in children if token_matches(model, tokens[0], c)), None)
        if tok is None:
            raise model_error(model, f"chose {tokens[0]!r}, which is not one of the allowed tokens")
        info = self.nodes.get(node) or _Node()
        info.logprobs[tok] = float(values[0])
        self._top(info, tops[0] if tops else None)
        info.complete = True
        self.nodes[node] = info
        return info


def token_trie_grammar(trie: Any, start: int) -> str:
    """The trie below `start` as one GBNF expression of token-id terminals (exactly its canonical readings).

    Forced runs are sequences, branches alternatives, and a node where a
    reading ends but longer ones continue is optional; built iteratively
    (a trie of thousands of nodes, no recursion limit).
    """
    out: dict[int, str] = {}
    order, stack = [], [start]
    while stack:
        n = stack.pop()
        order.append(n)
        stack.extend(trie.children[n].values())
    for n in reversed(order):  # children before parents
        alts = [token_terminal(t) + (" " + out[c] if out[c] else "") for t, c in trie.children[n].items()]
        if not alts:
            out[n] = ""
        elif len(alts) == 1 and not trie.is_end(n):
            out[n] = alts[0]
        else:
            out[n] = "(" + " | ".join(alts) + ")" + ("?" if trie.is_end(n) else "")
        for c in trie.children[n].values():
            out.pop(c, None)
    return out[start] or '""'


PREFIX_CONTEXT = 4  # tokens decoded before the anchor, so a tokenizer's word-start rules see the same context
ANCHOR_EVERY = 16  # tokens between anchors: each step decodes at most this many plus the context


def prefix_texts(model: Any, ids: list[int]) -> Any:
    """``(k, model.decode(ids[:k]))`` for k = 1..len(ids), with O(len(ids)) tokens decoded in all.

    The text up to an anchor is kept; each prefix is that text plus what
    the tokens after the anchor add, read as the difference between two
    decodes that start a few tokens before the anchor (so word-initial
    spaces and byte-level characters come out as in one decode).  The
    anchor moves only where the text does not end in a half-written
    character (U+FFFD).  Callers confirm what they act on with an exact
    decode (`RemoteDecoding._first_rule`).
    """
    anchor, anchor_text = 0, ""
    base_start, base_text = 0, ""
    for k in range(1, len(ids) + 1):
        piece = model.decode(ids[base_start:k])
        if piece.startswith(base_text):
            text = anchor_text + piece[len(base_text):]
        else:  # the decodes do not line up here: decode this prefix whole and anchor at it
            text = model.decode(ids[:k])
            anchor = k - ANCHOR_EVERY  # forces a new anchor below
        yield k, text
        if k - anchor >= ANCHOR_EVERY and not text.endswith("\ufffd"):
            anchor, anchor_text = k, text
            base_start = max(0, k - PREFIX_CONTEXT)
            base_text = model.decode(ids[base_start:k])


def model_error(model: Any, what: str) -> Exception:
    from ..models.server_http import ServerError

    return ServerError(f"the model server at {model.url} {what}")


def remote_decoding(model: Any) -> "RemoteDecoding | None":
    """The request-level decoder of a model server (made once per model), or None for in-process models."""
    if not getattr(model, "wants_remote_decoding", False):
        return None
    rd = getattr(model, "_remote", None)
    if rd is None:
        rd = model._remote = RemoteDecoding(model)
    return rd
