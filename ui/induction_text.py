"""The Schema induction page's words: why each candidate pattern has its status, with the numbers behind it.

Plain functions over the plain data the page reads (timeline rows, induction events, the attribute stream),
no Streamlit. The rules are core/induction.py's (module docstring, rules 2, 3, 3b and 3c):

* below support: supp(C) < θ_s.
* below all-confidence: supp(C) >= θ_s, C is novel, but supp(C) / max_{a∈C} supp({a}) < θ_a.
* admitted: C is a schema. It became one either by discovery (support and all-confidence passed *then*) or by
  evolution of a smaller schema (extension-confidence passed, all-confidence of C is not required). A schema is
  never withdrawn, so its all-confidence may later drop below θ_a.
* extension pending: C ⊋ schema A with supp(C) >= θ_s, not taken as A's extension because ext-conf(C|A) < θ_e,
  or the added attributes Δ = C \\ A are not specific to it (supp(C) / max_{x∈Δ} supp({x}) < θ_a, rule 3b), or
  taking it would swallow (part of) another schema.
* subsumed: C lies inside a schema, shares more than half of its attributes with one, or is a fragment of one.

Single-attribute supports are exact counts over the stream (induction always counts lone attributes), so the
numbers these sentences quote are the ones the rules compared.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

Pattern = tuple[str, ...]


def schema_name(schema_id: int | None, tables: Mapping[int, str | None]) -> str:
    """How a schema is named to people: its analytic table's name, else 'schema N'; '' for no schema."""
    if schema_id is None:
        return ""
    return tables.get(int(schema_id)) or f"schema {int(schema_id)}"


def schemas_at(events: Iterable[Mapping], round_order: int) -> dict[int, Pattern]:
    """schema id -> its attributes after round `round_order`, replayed from the discovered/evolved events."""
    out: dict[int, Pattern] = {}
    for e in sorted((e for e in events if e["kind"] in ("discovered", "evolved")), key=lambda e: e["round_order"]):
        if e["round_order"] > round_order:
            break
        out[int(e["schema_id"])] = tuple(sorted(e["pattern"]))
    return out


def single_supports(stream: Iterable[tuple[int, Iterable[str]]], round_order: int) -> dict[str, int]:
    """attribute -> the number of rounds up to `round_order` (included) that observed it."""
    counts: dict[str, int] = {}
    for order, attrs in stream:
        if order <= round_order:
            for a in set(attrs):
                counts[a] = counts.get(a, 0) + 1
    return counts


def _num(x: float) -> str:
    return f"{x:.2f}"


def _attrs(names: Iterable[str]) -> str:
    return ", ".join(f"`{a}`" for a in sorted(names))


def _most_seen(pattern: Iterable[str], singles: Mapping[str, int]) -> tuple[str, int]:
    """The attribute of `pattern` seen in most rounds (the all-confidence denominator), ties by name."""
    a = min(pattern, key=lambda x: (-singles.get(x, 0), x))
    return a, singles.get(a, 0)


def _made(events: Sequence[Mapping], schema_id: int, pattern: Pattern, upto: int) -> Mapping | None:
    """The last discovered/evolved event at or before `upto` that gave schema `schema_id` the attributes `pattern`."""
    found = None
    for e in events:
        if (e["kind"] in ("discovered", "evolved") and e.get("schema_id") == schema_id and e["round_order"] <= upto
                and tuple(sorted(e["pattern"])) == pattern):
            found = e
    return found


def _became_schema(e: Mapping, thresholds: Mapping) -> str:
    """How the event `e` made its pattern a schema, with the numbers the rule compared."""
    ts, ta, te = thresholds["theta_s"], thresholds["theta_a"], thresholds["theta_e"]
    n = dict(e.get("numbers") or {})
    supp = int(n.get("supp", 0))
    if e["kind"] == "discovered":
        return (f"discovered at round {e['round_order']}: support {supp} ≥ θ_s {ts} and all-confidence "
                f"{_num(n.get('all_conf', 0.0))} ≥ θ_a {_num(ta)} ({supp} of the {int(n.get('max_attr_supp', 0))} "
                "rounds of its most frequent attribute)")
    added = sorted(set(e["pattern"]) - set(e.get("previous") or ()))
    text = f"grew at round {e['round_order']} from {_attrs(e.get('previous') or ())} by adding {_attrs(added)}: "
    if "owned" in n:
        rounds = f"the rounds with {_attrs(added)}"
        if n.get("explained") or n.get("alone"):
            # a field another table already holds: its rounds that table's records explain are set aside; a field
            # in nearly every record of the schema: the rounds that report it alone are, too
            why = " and".join(w for w in (
                " that another table's records do not explain" if n.get("explained") else "",
                " that report more than it alone" if n.get("alone") else "") if w)
            left = int(n.get("x_supp", 0) - n.get("explained", 0) - n.get("alone", 0))
            rounds = f"the {left} rounds with {_attrs(added)}{why} (of {int(n.get('x_supp', 0))})"
        return text + (f"an optional field: {n['owned']:.0%} of the schema's attributes were there in at least "
                       f"θ_a {_num(ta)} of {rounds} (≥ half needed), and {supp} ≥ θ_s {ts} rounds had both")
    text += (f"support {supp} ≥ θ_s {ts} and extension-confidence {_num(n.get('ext_conf', 0.0))} ≥ θ_e {_num(te)} "
             f"({supp} of the schema's {int(n.get('schema_supp', 0))} rounds)")
    if "delta_conf" in n:
        text += f", the added attributes' all-confidence {_num(n['delta_conf'])} ≥ θ_a {_num(ta)}"
    return text


def _swallowed(pattern: Pattern, own: int | None, schemas: Mapping[int, Pattern], params: Mapping,
               rounds: Sequence[Iterable[str]] = ()) -> tuple[int, str] | None:
    """(schema id, how) of another schema the pattern would swallow as schema `own`'s extension (rule 3);
    rounds: the attribute sets of the rounds so far (whether the pattern came with a schema's other fields)."""
    c = set(pattern)
    for sid, attrs in sorted(schemas.items()):
        if sid == own:
            continue
        b = set(attrs)
        if c >= b:
            return sid, "it contains all of"
        if c <= b:
            return sid, "it lies inside"
        mine = c & b
        if params.get("optional_fields", True):  # attributes a third schema holds too say nothing
            mine -= {x for o, attrs in schemas.items() if o != sid for x in attrs}
        seen_with = any(c | {x} <= set(a) for a in rounds for x in b - c)
        if params.get("block_overlaps", True) and 2 * len(mine) > len(c) and (2 * len(mine) > len(b) or seen_with):
            return sid, f"{len(mine)} of its {len(c)} attributes belong to"
    return None


def explain(row: Mapping, *, thresholds: Mapping, events: Sequence[Mapping],
            stream: Sequence[tuple[int, Iterable[str]]], tables: Mapping[int, str | None],
            params: Mapping | None = None) -> str:
    """One plain sentence saying why `row` (a timeline row: round_order, pattern, support, all_conf, ext_conf,
    schema_id, status) has its status, with the numbers and thresholds that decided it at the row's round.

    thresholds: theta_s, theta_a, theta_e the statistics were computed with; params: the induction flags
    (block_overlaps, delta_all_conf; the defaults when missing); tables: schema id -> table name.
    Raises ValueError naming the status when it is not one of core.induction.STATUSES.
    """
    params = params or {}
    ts, ta, te = thresholds["theta_s"], thresholds["theta_a"], thresholds["theta_e"]
    r, status = int(row["round_order"]), row["status"]
    pattern = tuple(sorted(row["pattern"]))
    n, ac, ext = int(row["support"]), row.get("all_conf"), row.get("ext_conf")
    sid = row.get("schema_id")
    singles = single_supports(stream, r)
    schemas = schemas_at(events, r)
    name = schema_name(sid, tables)
    at = f" (as of round {r})"
    if status == "below_support":
        return f"support {n} < θ_s {ts}: seen together in {n} round(s), {ts - n} more needed{at}"
    if status == "below_all_conf":
        if len(pattern) < int(params.get("min_schema_attrs", 2)):
            return f"a single attribute never becomes a schema on its own{at}"
        a, m = _most_seen(pattern, singles)
        if ac and n / ac < m - 0.5:
            # discovery sets aside the rounds other tables' records explain (core.induction.discovery_conf)
            return (f"support {n} ≥ θ_s {ts} but all-confidence {_num(ac)} < θ_a {_num(ta)}: the attributes were "
                    f"seen in up to {round(n / ac)} rounds besides other tables' records, together in only {n}{at}")
        return (f"support {n} ≥ θ_s {ts} but all-confidence {_num(ac or 0.0)} < θ_a {_num(ta)}: `{a}` was seen in "
                f"{m} rounds, together with the rest in only {n}{at}")
    if status in ("admitted", "evolved"):
        made = _made(events, sid, pattern, r) if sid is not None else None
        text = f"{name}, " + (_became_schema(made, thresholds) if made else "a schema")
        if ac is not None and ac < ta:
            a, m = _most_seen(pattern, singles)
            why = ("all-confidence is not a condition for an extension" if made and made["kind"] == "evolved"
                   else "a schema is never withdrawn")
            text += (f". Its all-confidence is {_num(ac)} < θ_a {_num(ta)} now (`{a}` was seen in {m} rounds, the "
                     f"whole pattern in {n}), yet it stays: {why}")
        return text + at
    if status == "subsumed":
        b = set(schemas.get(int(sid), ())) if sid is not None else set()
        c = set(pattern)
        if b and c <= b:
            return f"inside {name} ({len(c)} of its {len(b)} attributes): only the largest pattern becomes a table{at}"
        optional = bool(params.get("optional_fields", True))
        held = [x for attrs in schemas.values() for x in attrs]
        shared = {x for x in c if optional and held.count(x) > 1}
        mine = (c & b) - {x for o, attrs in schemas.items() if o != int(sid) for x in attrs} if optional else c & b
        seen_with = any(c | {x} <= set(a) for o, a in stream if o <= r for x in b - c)
        if b and 2 * len(mine) > len(c) and (2 * len(mine) > len(b) or seen_with):
            return (f"{len(mine)} of its {len(c)} attributes belong to {name}: a new schema would mostly copy "
                    f"it{at}")
        if optional and b and c & b and not c <= b:
            rounds = [set(a) for o, a in stream if o <= r and c <= set(a)]
            if rounds:
                x, k = max(((x, sum(x in a for a in rounds)) for x in b - c), key=lambda t: (t[1], t[0]))
                if k >= ta * len(rounds):
                    return (f"mostly {name}'s records with something beside: `{x}`, a field of {name}, is in {k} "
                            f"of its {len(rounds)} rounds (at least θ_a {_num(ta)}){at}")
        if shared and len(c - shared) < int(params.get("min_schema_attrs", 2)):
            return (f"{_attrs(shared)} {'is' if len(shared) == 1 else 'are'} printed in the records of several "
                    f"tables already ({name} among them); {_attrs(c - shared) or 'nothing else'} alone does not "
                    f"make a stream of its own{at}")
        return (f"a fragment of {name}: the rounds that have it usually have {name}'s other attributes too "
                f"(on average in at least θ_a {_num(ta)} of them){at}")
    if status == "extension_pending":
        base = set(schemas.get(int(sid), ())) if sid is not None else set()
        head = f"a larger {name} ({_attrs(set(pattern) - base)} added), not taken: support {n} ≥ θ_s {ts}"
        if ext is None:
            return head + at
        sa = round(n / ext) if ext else 0
        if ext < te:
            return (head + f" but extension-confidence {_num(ext)} < θ_e {_num(te)} (in {n} of {name}'s {sa} "
                    f"rounds){at}")
        head += f" and extension-confidence {_num(ext)} ≥ θ_e {_num(te)}"
        delta = set(pattern) - base
        if params.get("delta_all_conf", True) and delta:
            x, m = _most_seen(delta, singles)
            if m and n / m < ta:
                return (head + f", but the added attributes are not specific to it: `{x}` was seen in {m} rounds, "
                        f"with {name} in only {n} (all-confidence of the addition {_num(n / m)} < θ_a {_num(ta)}){at}")
        other = _swallowed(pattern, sid, schemas, params, [a for o, a in stream if o <= r])
        if other is not None:
            osid, how = other
            return head + f", but {how} {schema_name(osid, tables)}: a schema does not swallow another one{at}"
        return head + (f", but it would take in a fragment of another schema (its other attributes usually come "
                       f"with it){at}")
    raise ValueError(f"timeline row of round {r}: unknown status {status!r}")
