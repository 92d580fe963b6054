"""What a force point keeps besides the values asked for: the cost rule.

- An expensive result (a contraction, a decomposition or another linalg
  call, an FFT, a sort: `KEPT_KINDS`, and every output of a multi-output
  primitive together) is kept, as a realized leaf, when something other than
  this force's graph still refers to it or to a lazy node computed from it:
  an array the user holds, another node. Recomputing it would cost more than
  holding it, and the reference says it may be needed again. `svd`'s U, S
  and Vh forced at two force points run one SVD.
- A reduction that reads at least REDUCTION_KEPT_RATIO points per point it
  writes (a mean over rows, a norm) is kept on the same terms: recomputing
  it reads its whole input again, and the fused work before it, while
  holding it costs a small part of that input's memory. `mn = mean(x)` that
  a check forces and the next expression reads again runs one pass over x.
- A cheap result is kept when the plan computes it into a buffer of its
  own anyway (a slice, a product or another step outside fusion reads it)
  and something else holds it: `y = y * c + d; float(y[0])` in a loop then
  computes each `y` once, and keeping costs no memory the user did not
  already hold through `y`'s graph.
- Other cheap elementwise work is not kept: it lives in a fused group's
  registers or blocks, recomputing it costs about what reading it back
  would, and holding every intermediate would hold memory NumPy frees. An
  intermediate that a second force point needs again (it was computed
  before and still is not realized) is kept the second time: without that,
  `float(r[i])` for every `i` of a lazy `r` recomputes all of `r` once per
  element.
- Nodes computed inside `retain_history()` are pinned instead: autodiff walks
  their history again (each call of a `vjp` function), so they are never
  turned into leaves.

Whether a candidate is held is known only at the force, from reference
counts. A cached plan computes every candidate into an output of its own;
a force that finds some of them held by nobody runs a variant built without
those (`schedule`; once per pattern of held candidates, cached with the plan), where
they are intermediates like any other: freed at their last use, or written
into by the step that reads them last. Where those would hold fewer than
VARIANT_MIN_BYTES, the force runs the plan itself and drops them instead.

`build_plan` asks the functions below for the candidates of a graph and
`keep_watch` for what a force checks to keep them; `held_candidates` answers,
at each force, which of them something outside the graph still holds.
"""

from math import prod

from ..graph.node import output_types, users_of
from ..graph.primitives import BOUND, ELEMENTWISE, KEPT_KINDS, MOVEMENT, REDUCE, STATE, UPDATE
from ..references import extra_references

# A reduction reading at least this many points per point it writes is kept
# as an expensive result is (see the module docstring): holding it costs at
# most an eighth of the memory that recomputing it reads.
REDUCTION_KEPT_RATIO = 8


# Candidates held by nobody get a variant of the plan that computes them as
# intermediates only when they hold at least this many bytes: building a
# variant costs as much as building a plan (about half a millisecond for a
# small graph, paid again at every new shape), more than a run saves by
# freeing or writing into a few small results. Larger ones get it: ten
# k-means steps held twenty 64 MB results without, and a step that writes
# into a dying product saves allocating its result.
VARIANT_MIN_BYTES = 1 << 16


def expensive_candidates(order, requested):
    """The expensive nodes of `order` (KEPT_KINDS) that a force may keep."""
    wanted = set(requested)
    return [n for n in order if n.buffer is None and n.op.kind in KEPT_KINDS and n not in wanted]


def materialized_candidates(order, requested, collected):
    """The cheap nodes of the rewritten `order`, also in the `collected` one,
    that the plan computes into a buffer of their own because a user outside
    fusion reads them (a slice, a product): a force may keep them."""
    wanted = set(requested)
    users = users_of(order)
    seen = set(collected)
    return [n for n in order
            if n.buffer is None and n in seen and n not in wanted and n.op.kind not in _NOT_MATERIALIZED
            and any(u.op.kind not in _FUSED_KINDS for u in users.get(n, ()))]


def reduction_candidates(order, requested, collected, groups):
    """The reductions of the rewritten `order`, also in the `collected` one,
    that read at least REDUCTION_KEPT_RATIO points per point they write and
    that the plan computes into a buffer of their own anyway (a group's root
    or a step of their own; a row reduction inside a group is not one): a
    force may keep them."""
    wanted = set(requested)
    seen = set(collected)
    inside = {m for g in groups for m in g.members[:-1]}
    return [n for n in order
            if n.op.kind == REDUCE and n.buffer is None and n in seen and n not in wanted and n not in inside
            and shrinks_enough(n)]


def shrinks_enough(reduction):
    """Whether the reduction node reads REDUCTION_KEPT_RATIO points or more
    per point it writes: worth keeping (the one fact about a plan's keeping
    that its extents decide, so an extent-free key holds it)."""
    return prod(reduction.inputs[0].shape) >= REDUCTION_KEPT_RATIO * prod(reduction.shape)


def keep_watch(order, requested, candidates):
    """What a force checks to keep `candidates`, (node, through) pairs in
    the order of their output slots: (candidates, watch), or ().

    A candidate is then (position in `order`, the collect order; through): an
    expensive one is kept when it or a lazy node computed from it is held
    (`through`), a materialized one only when held itself. `watch` holds
    (position, references from the graph, positions of its watched users)
    for every candidate and every node computed from an expensive one up to
    the requested ones or the next expensive ones, users first. At a force,
    a watched node with more references than the graph's is held by
    something else. Positions and counts follow from the graph's structure,
    which the plan key fixes.
    """
    if not candidates:
        return ()
    expensive = [n for n, through in candidates if through]
    # The watch stops at requested nodes (realized by this force) and at other
    # expensive ones (held through their own users, they are kept themselves,
    # so what lies below them is not needed again).
    stops = set(requested) | set(expensive)
    position = {n: i for i, n in enumerate(order)}
    users = users_of(order)
    watched = {n for n, _ in candidates}
    through = set()
    stack = list(expensive)
    while stack:
        for user in users.get(stack.pop(), ()):
            if user not in stops and user not in through:
                through.add(user)
                watched.add(user)
                stack.append(user)
    watch = tuple((position[n], len(users.get(n, ())), tuple(position[u] for u in users.get(n, ()) if u in through))
                  for n in sorted(watched, key=position.get, reverse=True))
    return tuple((position[n], through) for n, through in candidates), watch


# Users that a producer may fuse with, and updates (which may write into
# their input when nothing else holds it): any other user makes the producer
# a buffer of its own.
_FUSED_KINDS = (ELEMENTWISE, REDUCE, UPDATE)
# Views (no buffer of their own), and leaves a computation binds.
_NOT_MATERIALIZED = (MOVEMENT, BOUND, STATE)


def held_candidates(order, keep):
    """For each candidate of `keep`, whether something outside the graph
    refers to it (an expensive one: directly or through a lazy node computed
    from it): the force keeps those."""
    candidates, watch = keep
    held, through_users = {}, {}
    for position, refs, users in watch:
        h = held[position] = extra_references(order, position) > refs
        if not h:
            for u in users:   # no any() or zip below: each costs more than its loop here (CPython 3.11)
                if through_users[u]:
                    h = True
                    break
        through_users[position] = h
    return tuple([(through_users if through else held)[p] for p, through in candidates])


def worth_a_variant(candidates, held):
    """Whether the `candidates` (nodes) that `held` says nobody holds would
    hold VARIANT_MIN_BYTES or more to the end of a run."""
    nbytes = sum(prod(shape) * dtype.itemsize for node, h in zip(candidates, held) if not h
                 for shape, dtype in output_types(node.shape, node.dtype))
    return nbytes >= VARIANT_MIN_BYTES
