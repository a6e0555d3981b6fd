"""About a hundred questions per generated history, over its random streams, with gold from the truth.

The 16 query types of the demo benchmark (average, sum, count, max, min, argmax, argmin, latest,
first, date_range, filtered, trend, progressive, single_fact, visual, refusal), each in several
wordings; answer kinds and formats as the engine's scorer reads them (number with a unit and an
absolute `tolerance`, ISO date, up/down, yes/no, text, "Not mentioned").
"""
from __future__ import annotations

import random
from collections import defaultdict
from datetime import date

from .bank import BY_NAME, Field

MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December"]
ADDITIVE = {"ml", "L", "g", "kg", "min", "h", "USD", "EUR", "GBP", "km", "kWh", "m3", "days", ""}
PLAN = {"average": 8, "sum": 7, "count": 8, "max": 7, "min": 7, "argmax": 5, "argmin": 5, "latest": 6,
        "first": 6, "date_range": 8, "filtered": 7, "trend": 6, "progressive": 5, "single_fact": 8,
        "visual": 4, "refusal": 6}


def _phrase(f: Field) -> str:
    w = f.labels[0]
    return w if any(c.isupper() for c in w[1:]) else w.lower()


def _fmt(v: float, f: Field, agg: bool, decimals: int | None = None) -> str:
    d = decimals if decimals is not None else max(f.decimals, 2 if agg else f.decimals)
    s = f"{v:.{d}f}"
    if f.unit == "%":
        return s + "%"
    return f"{s} {f.unit}".strip()


def _tol(v: float, f: Field, kind: str) -> float:
    """Absolute tolerance of a gold number: its rounding, and never less than the gap between the
    value a picture showed in another unit (4.82 h = 289.2 min) and the gold printed at the
    field's decimals (289 min)."""
    if kind in ("count",):
        return 0.0
    return max(_rounding(v, f, kind), round(abs(v - round(v, f.decimals)), 6))


def _rounding(v: float, f: Field, kind: str) -> float:
    if kind in ("average", "date_range", "filtered"):
        return round(max(abs(v) * 0.01, 0.5 * 10 ** -f.decimals), 6)
    if kind == "sum":
        return round(max(abs(v) * 0.005, 0.5 * 10 ** -f.decimals), 6)
    return round(0.5 * 10 ** -f.decimals, 6) if f.decimals else 0.0


class QuestionMaker:
    def __init__(self, rng: random.Random, doc: dict, truth: dict):
        self.rng = rng
        self.truth = truth
        self.domain = BY_NAME[truth["domain"]]
        self.streams = {s.name: s for s in self.domain.streams if s.name in truth["streams"]}
        self.order = {r: i for i, r in enumerate(truth["rounds"])}
        self.date = {r: date.fromisoformat(m["date"]) for r, m in truth["rounds"].items()}
        # stream -> [(round, {qid: value})] in history order
        recs: dict[str, dict[str, dict]] = defaultdict(dict)
        for o in truth["observations"]:
            recs[o["stream"]].setdefault(o["round"], {})[o["quantity"]] = o["value"]
        self.recs = {s: sorted(v.items(), key=lambda kv: self.order[kv[0]]) for s, v in recs.items()}
        self.out: list[dict] = []
        self.seen: set[str] = set()

    # ------------------------------------------------------------ helpers
    def fields(self, stream: str, numeric=True, min_values=3):
        s = self.streams[stream]
        out = []
        for f in s.fields:
            if f.is_text == numeric:
                continue
            n = sum(1 for _, v in self.recs.get(stream, ()) if f.qid in v)
            if n >= min_values:
                out.append(f)
        return out

    def pick(self, numeric=True, min_values=3, pred=None):
        cands = [(s, f) for s in self.streams for f in self.fields(s, numeric, min_values) if not pred or pred(s, f)]
        return self.rng.choice(cands) if cands else (None, None)

    def values(self, stream: str, f: Field, where=None):
        return [(r, v[f.qid]) for r, v in self.recs[stream] if f.qid in v and (where is None or where(r, v))]

    def add(self, qtype: str, question: str, answer, kind: str, clue: list[str], spec: dict, tol=None) -> bool:
        if question in self.seen:
            return False
        self.seen.add(question)
        q = {"question": question, "answer": answer, "clue": sorted(set(clue), key=lambda r: self.order[r]),
             "query_type": qtype, "answer_kind": kind, "sample_id": f"GEN{self.truth['seed']}_q{len(self.out) + 1:03d}",
             "meta": {"spec": spec}}
        if kind == "number":
            q["tolerance"] = tol if tol is not None else 0.0
        self.out.append(q)
        return True

    def month_of(self, stream: str, f: Field, need=2):
        months = defaultdict(list)
        for r, v in self.values(stream, f):
            d = self.date[r]
            months[(d.year, d.month)].append((r, v))
        ok = [m for m, xs in months.items() if len(xs) >= need]
        if not ok:
            return None, []
        m = self.rng.choice(sorted(ok))
        return m, months[m]

    # ------------------------------------------------------------ types
    def aggregate(self, qtype: str) -> bool:
        rng = self.rng
        if qtype == "sum":
            s, f = self.pick(pred=lambda s, f: f.unit in ADDITIVE)
        else:
            s, f = self.pick()
        if not s:
            return False
        st, ph = self.streams[s], _phrase(f)
        vals = self.values(s, f)
        xs = [v for _, v in vals]
        if qtype == "average":
            gold = sum(xs) / len(xs)
            t = rng.choice([f"What was my average {ph}?", f"On average, what {ph} did my {st.plural} show?",
                            f"Mean {ph} across all my {st.plural}?", f"Averaged over every {st.noun}, what was the {ph}?"])
        elif qtype == "sum":
            gold = sum(xs)
            if not f.unit:
                t = rng.choice([f"How many {ph.lower()} did I log in total over all my {st.plural}?",
                                f"Adding up every {st.noun}, how many {ph.lower()} were there?"])
            else:
                t = rng.choice([f"What's the total {ph} over all my {st.plural}?",
                                f"How much {ph} did I log in total?", f"Sum of {ph} across every {st.noun}?"])
        elif qtype in ("max", "min"):
            gold = max(xs) if qtype == "max" else min(xs)
            if qtype == "max":
                t = rng.choice([f"What was my highest {ph}?", f"What's the largest {ph} I ever logged?",
                                f"Maximum {ph} over all my {st.plural}?"])
            else:
                t = rng.choice([f"What was my lowest {ph}?", f"What's the smallest {ph} I logged?",
                                f"Minimum {ph} across my {st.plural}?"])
            clue = [r for r, v in vals if v == gold]
            return self.add(qtype, t, _fmt(gold, f, False), "number", clue,
                            {"op": qtype, "stream": s, "quantity": f.qid}, _tol(gold, f, qtype))
        else:
            return False
        dec = f.decimals if qtype == "sum" else None
        return self.add(qtype, t, _fmt(gold, f, True, dec), "number", [r for r, _ in vals],
                        {"op": "avg" if qtype == "average" else qtype, "stream": s, "quantity": f.qid}, _tol(gold, f, qtype))

    def count(self) -> bool:
        rng = self.rng
        s = rng.choice(sorted(self.streams))
        st = self.streams[s]
        recs = self.recs.get(s, [])
        if not recs:
            return False
        if rng.random() < 0.5:
            t = rng.choice([f"How many {st.plural} did I log?", f"How many times did I {st.did}?",
                            f"Number of {st.plural} in my history?", f"How many {st.plural} are there in total?"])
            return self.add("count", t, str(len(recs)), "number", [r for r, _ in recs],
                            {"op": "count", "stream": s, "where": []}, 0.0)
        fs = self.fields(s, min_values=4)
        if not fs:
            return False
        f = rng.choice(fs)
        xs = sorted(v for _, v in self.values(s, f))
        thr = xs[len(xs) // 2]
        thr = round(thr, f.decimals)
        above = rng.random() < 0.5
        hit = [r for r, v in self.values(s, f) if (v > thr if above else v < thr)]
        if not hit:
            return False
        unit = f" {f.unit}" if f.unit and f.unit != "%" else ("%" if f.unit == "%" else "")
        word = rng.choice(["above", "over", "more than"]) if above else rng.choice(["below", "under", "less than"])
        t = rng.choice([f"How many {st.plural} had a {_phrase(f)} {word} {thr}{unit}?",
                        f"On how many {st.plural} was the {_phrase(f)} {word} {thr}{unit}?"])
        return self.add("count", t, str(len(hit)), "number", hit,
                        {"op": "count", "stream": s, "where": [[f.qid, ">" if above else "<", thr]]}, 0.0)

    def arg(self, qtype: str) -> bool:
        rng = self.rng
        s, f = self.pick()
        if not s:
            return False
        vals = self.values(s, f)
        best = max(v for _, v in vals) if qtype == "argmax" else min(v for _, v in vals)
        rs = [r for r, v in vals if v == best]
        if len({self.date[r] for r in rs}) != 1:
            return False
        ph, st = _phrase(f), self.streams[s]
        if qtype == "argmax":
            t = rng.choice([f"On what date was my {ph} highest?", f"When did I log my highest {ph}?",
                            f"Which day had the most {ph}?"])
        else:
            t = rng.choice([f"On what date was my {ph} lowest?", f"When did I log my lowest {ph}?",
                            f"Which {st.noun} had the least {ph}? Give the date."])
        return self.add(qtype, t, self.date[rs[0]].isoformat(), "date", rs, {"op": qtype, "stream": s, "quantity": f.qid})

    def endpoint(self, qtype: str) -> bool:
        rng = self.rng
        s, f = self.pick(min_values=2)
        if not s:
            return False
        vals = self.values(s, f)
        r, v = vals[-1] if qtype == "latest" else vals[0]
        ph, st = _phrase(f), self.streams[s]
        if qtype == "latest":
            t = rng.choice([f"What was my most recent {ph}?", f"What {ph} did my last {st.noun} show?",
                            f"Latest {ph} I logged?"])
        else:
            t = rng.choice([f"What was the first {ph} I recorded?", f"What {ph} did my earliest {st.noun} show?",
                            f"First {ph} in my {st.plural}?"])
        return self.add(qtype, t, _fmt(v, f, False), "number", [r], {"op": qtype, "stream": s, "quantity": f.qid},
                        _tol(v, f, qtype))

    def date_range(self) -> bool:
        rng = self.rng
        s, f = self.pick()
        if not s:
            return False
        m, xs = self.month_of(s, f)
        if not m:
            return False
        month = MONTH_NAMES[m[1] - 1]
        gold = sum(v for _, v in xs) / len(xs)
        ph, st = _phrase(f), self.streams[s]
        t = rng.choice([f"What was my average {ph} in {month} {m[0]}?", f"On average, what {ph} did I log during {month} {m[0]}?",
                        f"Mean {ph} for {month} {m[0]}?", f"Across my {st.plural} in {month} {m[0]}, what was the average {ph}?"])
        last = 31 if m[1] == 12 else (date(m[0], m[1] + 1, 1) - date(m[0], m[1], 1)).days
        return self.add("date_range", t, _fmt(gold, f, True), "number", [r for r, _ in xs],
                        {"op": "avg", "stream": s, "quantity": f.qid,
                         "range": [date(m[0], m[1], 1).isoformat(), date(m[0], m[1], last).isoformat()]},
                        _tol(gold, f, "date_range"))

    def filtered(self) -> bool:
        rng = self.rng
        s = rng.choice(sorted(self.streams))
        nums = self.fields(s, min_values=4)
        texts = self.fields(s, numeric=False, min_values=3)
        if not nums:
            return False
        f = rng.choice(nums)
        st = self.streams[s]
        if texts and rng.random() < 0.6:
            g = rng.choice(texts)
            val = rng.choice(sorted({v[g.qid] for _, v in self.recs[s] if g.qid in v}))
            xs = self.values(s, f, where=lambda r, v: v.get(g.qid) == val)
            if not xs:
                return False
            gold = sum(v for _, v in xs) / len(xs)
            t = rng.choice([f"What was my average {_phrase(f)} for {val}?",
                            f"On {st.plural} where the {_phrase(g)} was {val}, what was the mean {_phrase(f)}?"])
            where = [[g.qid, "=", val]]
        else:
            others = [x for x in nums if x.qid != f.qid]
            if not others:
                return False
            g = rng.choice(others)
            gs = sorted(v for _, v in self.values(s, g))
            thr = round(gs[len(gs) // 2], g.decimals)
            xs = self.values(s, f, where=lambda r, v: g.qid in v and v[g.qid] > thr)
            if not xs:
                return False
            gold = sum(v for _, v in xs) / len(xs)
            unit = "%" if g.unit == "%" else (f" {g.unit}" if g.unit else "")
            t = rng.choice([f"What was my average {_phrase(f)} on {st.plural} with {_phrase(g)} above {thr}{unit}?",
                            f"When the {_phrase(g)} was over {thr}{unit}, what was my mean {_phrase(f)}?"])
            where = [[g.qid, ">", thr]]
        return self.add("filtered", t, _fmt(gold, f, True), "number", [r for r, _ in xs],
                        {"op": "avg", "stream": s, "quantity": f.qid, "where": where}, _tol(gold, f, "filtered"))

    def trend(self) -> bool:
        rng = self.rng
        s, f = self.pick(min_values=2)
        if not s:
            return False
        vals = self.values(s, f)
        a, b = vals[0], vals[-1]
        if a[1] == b[1]:
            return False
        ph, st = _phrase(f), self.streams[s]
        t = rng.choice([f"Did my {ph} go up or down from my first {st.noun} to my last?",
                        f"From the first {st.noun} to the latest, did the {ph} increase or decrease?",
                        f"Has my {ph} risen or fallen since the first {st.noun}?"])
        return self.add("trend", t, "up" if b[1] > a[1] else "down", "updown", [a[0], b[0]],
                        {"op": "trend_first_last", "stream": s, "quantity": f.qid})

    def anchors(self):
        """(round, date, phrase) of one-offs and photos that could anchor 'on the day I ...'."""
        out = []
        for r, m in self.truth["rounds"].items():
            if m["kind"] == "oneoff":
                out.append((r, self.date[r], f"told you about the {m['label']}"))
            elif m.get("event"):
                out.append((r, self.date[r], m["event"]))
            elif m["kind"] == "photo":
                cap = m["caption"].rstrip(".")
                cap = cap[0].lower() + cap[1:]
                out.append((r, self.date[r], f"shared the photo of {cap}"))
        return out

    def progressive(self) -> bool:
        rng = self.rng
        anchors = self.anchors()
        rng.shuffle(anchors)
        phrases = defaultdict(int)
        for _, _, p in anchors:
            phrases[p] += 1
        used = self.__dict__.setdefault("used_anchors", set())
        for r0, d0, phrase in anchors:
            if phrases[phrase] != 1 or r0 in used:
                continue
            for s in rng.sample(sorted(self.streams), len(self.streams)):
                same = [(r, v) for r, v in self.recs.get(s, ()) if self.date[r] == d0]
                if len(same) != 1:
                    continue
                r, v = same[0]
                fs = [f for f in self.streams[s].fields if not f.is_text and f.qid in v]
                if not fs:
                    continue
                f = rng.choice(fs)
                t = rng.choice([f"On the day I {phrase}, what was my {_phrase(f)}?",
                                f"What {_phrase(f)} did I log on the day I {phrase}?"])
                if self.add("progressive", t, _fmt(v[f.qid], f, False), "number", [r0, r],
                            {"op": "lookup", "stream": s, "quantity": f.qid, "date": d0.isoformat(), "anchor": r0},
                            _tol(v[f.qid], f, "latest")):
                    used.add(r0)
                    return True
        return False

    def single_fact(self) -> bool:
        rng = self.rng
        kinds = ["oneoff", "date_lookup", "text"]
        k = rng.choice(kinds)
        if k == "oneoff":
            offs = [(r, m) for r, m in self.truth["rounds"].items() if m["kind"] == "oneoff"]
            labels = defaultdict(list)
            for r, m in offs:
                labels[m["label"]].append((r, m))
            once = [xs[0] for xs in labels.values() if len(xs) == 1]
            if not once:
                return False
            r, m = rng.choice(once)
            t = rng.choice([f"How much was the {m['label']}?", f"What did the {m['label']} come to?"])
            return self.add("single_fact", t, f"{m['value']} {m['unit']}", "number", [r],
                            {"op": "event_fact", "label": m["label"]}, 0.01)
        s = rng.choice(sorted(self.streams))
        byday = defaultdict(list)
        for r, v in self.recs.get(s, ()):
            byday[self.date[r]].append((r, v))
        days = [d for d, xs in byday.items() if len(xs) == 1]
        if not days:
            return False
        d = rng.choice(sorted(days))
        r, v = byday[d][0]
        nice = f"{MONTH_NAMES[d.month - 1]} {d.day}, {d.year}"
        st = self.streams[s]
        fs = [f for f in st.fields if f.qid in v and (f.is_text == (k == "text"))]
        if not fs:
            return False
        f = rng.choice(fs)
        if f.is_text:
            t = rng.choice([f"Which {_phrase(f).lower()} did my {st.noun} on {nice} have?",
                            f"What was the {_phrase(f).lower()} in my {st.noun} of {nice}?"])
            return self.add("single_fact", t, v[f.qid], "text", [r], {"op": "lookup", "stream": s, "quantity": f.qid,
                                                                     "date": d.isoformat()})
        t = rng.choice([f"What was my {_phrase(f)} on {nice}?", f"What {_phrase(f)} did I log on {nice}?"])
        return self.add("single_fact", t, _fmt(v[f.qid], f, False), "number", [r],
                        {"op": "lookup", "stream": s, "quantity": f.qid, "date": d.isoformat()}, _tol(v[f.qid], f, "latest"))

    def visual(self) -> bool:
        rng = self.rng
        photos = [(r, m) for r, m in self.truth["rounds"].items() if m["kind"] == "photo"]
        byday = defaultdict(list)
        for r, m in photos:
            byday[self.date[r]].append((r, m))
        days = [d for d, xs in byday.items() if len(xs) == 1]
        if not days:
            return False
        d = rng.choice(sorted(days))
        r, m = byday[d][0]
        nice = f"{MONTH_NAMES[d.month - 1]} {d.day}, {d.year}"
        t = rng.choice([f"What did the photo I shared on {nice} show?", f"Describe the picture I sent on {nice}.",
                        f"What was in my photo from {nice}?"])
        return self.add("visual", t, m["caption"].rstrip("."), "text", [r], {"op": "caption", "date": d.isoformat()})

    def refusal(self) -> bool:
        rng = self.rng
        things = list(self.truth.get("refusals", [])) or ["blood pressure"]
        thing = rng.choice(things)
        month = MONTH_NAMES[date.fromisoformat(self.truth["period"]["start"]).month - 1]
        t = rng.choice([f"What was my {thing} in {month}?", f"How many times did I log my {thing}?",
                        f"What was my average {thing}?", f"When did I last mention my {thing}?"])
        return self.add("refusal", t, "Not mentioned", "refusal", [], {"op": "refusal", "topic": thing})

    def build(self) -> list[dict]:
        makers = {
            "average": lambda: self.aggregate("average"), "sum": lambda: self.aggregate("sum"),
            "count": self.count, "max": lambda: self.aggregate("max"), "min": lambda: self.aggregate("min"),
            "argmax": lambda: self.arg("argmax"), "argmin": lambda: self.arg("argmin"),
            "latest": lambda: self.endpoint("latest"), "first": lambda: self.endpoint("first"),
            "date_range": self.date_range, "filtered": self.filtered, "trend": self.trend,
            "progressive": self.progressive, "single_fact": self.single_fact, "visual": self.visual,
            "refusal": self.refusal,
        }
        for qtype, n in PLAN.items():
            made, tries = 0, 0
            while made < n and tries < n * 12:
                tries += 1
                made += bool(makers[qtype]())
        return self.out


def make_questions(rng: random.Random, doc: dict, truth: dict) -> list[dict]:
    return QuestionMaker(rng, doc, truth).build()
