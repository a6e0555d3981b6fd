"""Assembly of one randomized history: streams, records, distractors, sessions, truth.

Everything comes from one random.Random(seed). The history is returned as the MemEye
document, the PNGs by relative path, and the truth; `write` puts them on disk.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field as dfield
from datetime import date, datetime, timedelta
from pathlib import Path

from .bank import BY_NAME, DOMAINS, Domain, Field, Stream
from .render import LAYOUTS, render_photo, render_record

NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                "eleven", "twelve"]
NAMES = ["Alex", "Rosa", "Tariq", "Mei", "Jonas", "Priya", "Lukas", "Amara", "Hugo", "Sofia", "Kenji", "Nadia"]
PEOPLE = ["sister", "brother", "neighbour", "colleague", "cousin", "friend Ola", "boss"]
CHAT = [
    "I have {n} meetings tomorrow, wish me luck.",
    "Can you remind me to call {name} at {h}?",
    "My {who} turns {age} next week!",
    "{name}'s new number is 555-{ph}.",
    "Flight booked for {mon} {day} at {h}:{mm}.",
    "Bus {bus} was late again this morning.",
    "It's {deg} degrees out and drizzling.",
    "Read {pages} pages of my novel last night.",
    "Only {n} days until the holidays.",
    "The meeting moved to room {room}.",
    "I slept badly, the neighbours had a party until {h}.",
    "What's a good name for a cat?",
    "Feeling a bit tired today.",
    "Any idea what to cook tonight?",
    "Watched a great documentary about glaciers.",
    "Finally cleaned out the garage.",
    "Remind me to water the balcony herbs, please.",
    "My {who} is visiting on the {day}th.",
    "The dentist appointment is at {h}:{mm} on Friday.",
    "Can you suggest a podcast for the commute?",
    "Rainy weekend ahead, I think.",
    "I keep forgetting where I put my keys.",
    "My {who} recommended a new bakery downtown.",
    "Thinking about repainting the hallway.",
    "The train was packed today.",
    "What's a quick lunch idea?",
    "I should call my grandmother this weekend.",
    "Work was hectic but fine.",
    "Do you know any good board games for two?",
    "Started a new book, a mystery novel.",
]
IDENT_TEXT = [
    "Order #{o} finally arrived.",
    "The parcel tracking ref is {r}.",
    "Invoice No. {y}-{i} from the landlord came in.",
    "My ticket number for the helpdesk is {o}.",
]
REPLIES = ["Noted.", "Got it, logged.", "Thanks for the update!", "Sounds good.", "Nice, keep it up.",
           "Okay, saved.", "Good to know.", "Thanks, I'll remember that."]
CHAT_REPLIES = ["Good luck!", "Sure thing.", "Ha, nice.", "That sounds fun.", "Oh no.", "Fair enough.",
                "How about a stir-fry?", "Let me know how it goes."]
GENERIC_ONEOFFS = [
    ("The vet bill came to {v}.", "vet bill", "USD", 80, 260),
    ("Paid {v} for concert tickets.", "ticket price", "USD", 40, 120),
    ("My haircut cost {v} today.", "haircut price", "USD", 20, 60),
]
EVENTS = [  # one-time happenings with no number (anchors of "on the day I ..." questions)
    ("Got my new glasses today!", "got my new glasses"),
    ("Went to my cousin's wedding today, lovely day.", "went to my cousin's wedding"),
    ("I passed my driving theory test!", "passed my driving theory test"),
    ("We adopted a kitten today.", "adopted a kitten"),
    ("Had my first pottery class this evening.", "had my first pottery class"),
    ("The new sofa was finally delivered.", "got the new sofa delivered"),
    ("Saw the northern lights tonight!", "saw the northern lights"),
    ("Ran into an old school friend downtown.", "ran into an old school friend"),
    ("Signed up for a choir today.", "signed up for a choir"),
    ("Our street had a power cut all afternoon.", "had the power cut"),
]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


@dataclass
class Channel:
    """How one device (or the user's words) prints a stream: label per field, units, style."""
    kind: str                 # "image" | "text"
    title: str = ""
    labels: dict = dfield(default_factory=dict)    # qid -> label as printed
    units: dict = dfield(default_factory=dict)     # qid -> (alt or None, spelling, space)
    unit_in_label: bool = False
    layout: str = "left"
    theme: str = "light"
    width: int = 420


@dataclass
class Plan:
    stream: Stream
    modality: str              # photo | text | mixed
    policy: str                # one | two | text_other
    n: int                     # records
    n_img: int                 # of them as images
    image_channels: list = dfield(default_factory=list)
    text_channel: Channel | None = None
    text_style: str = "lines"


def _style_label(rng: random.Random, word: str, style: dict) -> str:
    s = word
    if style["case"] == "upper":
        s = s.upper()
    elif style["case"] == "lower":
        s = s.lower()
    if style["suffix"] and not s.endswith((".", ":")):
        s += style["suffix"]
    return s


def _num(v: float, decimals: int) -> str:
    return f"{v:.{decimals}f}"


def _with_unit(num: str, spelling: str, space: bool) -> str:
    if not spelling:
        return num
    if spelling in ("$", "€", "£"):
        return f"{spelling}{num}" if not space else f"{spelling} {num}"
    if spelling in ("%",):
        return num + spelling
    if len(spelling) > 3 and spelling.isalpha():  # "percent", "minutes": always spaced
        return f"{num} {spelling}"
    return f"{num} {spelling}" if space else f"{num}{spelling}"


class Generator:
    def __init__(self, seed: int, domain: str | None = None, rounds: int | None = None,
                 images: int | None = None, sessions: int | None = None):
        self.seed = seed
        self.rng = rng = random.Random(seed)
        self.domain: Domain = BY_NAME[domain] if domain else rng.choice(DOMAINS)
        self.R = rounds or rng.randint(200, 280)
        self.I = images if images is not None else rng.randint(30, 45)
        self.n_sessions = sessions or max(2, min(self.R, round(self.R / rng.uniform(3.7, 4.3))))
        self.chat_uses: dict[str, int] = {}
        self.ident_uses = 0
        self.start = date(2025, 1, 6) + timedelta(days=rng.randint(0, 420))

    # ------------------------------------------------------------------ plans
    def _channel(self, stream: Stream, kind: str, avoid: Channel | None = None) -> Channel:
        rng = self.rng
        ch = Channel(kind)
        style = {"case": rng.choice(["as", "as", "upper", "lower"]) if kind == "image" else "as",
                 "suffix": rng.choice(["", "", ":", "."]) if kind == "image" else ""}
        if kind == "image":
            devs = [d for d in stream.devices if not avoid or d != avoid.title] or list(stream.devices)
            ch.title = rng.choice(devs)
            ch.layout = "receipt" if stream.picture == "receipt" and rng.random() < 0.8 else rng.choice(LAYOUTS)
            ch.theme = "light" if ch.layout == "receipt" else rng.choice(["light", "dark"])
            ch.width = rng.randrange(360, 601, 20)
            ch.unit_in_label = ch.layout != "receipt" and rng.random() < 0.25
        for f in stream.fields:
            options = list(f.labels)
            if avoid is not None and len(options) > 1:
                prev = avoid.labels.get(f.qid, "")
                options = [o for o in options if o.lower().rstrip(".:") != prev.lower().rstrip(".:")] or options
            word = rng.choice(options)
            if kind == "text":
                word = word.rstrip(":")
                if word.endswith(".") and rng.random() < 0.7:
                    word = word[:-1]
            ch.labels[f.qid] = _style_label(rng, word, style) if kind == "image" else word
            if not f.is_text:
                alt = f.alt if f.alt is not None and rng.random() < 0.35 else None
                spellings = alt.spellings if alt else f.spellings
                if kind == "image" and rng.random() < 0.8:
                    spellings = spellings[:2]
                sp = rng.choice(spellings) if spellings else ""
                if kind == "text" and sp in ("$", "€"):
                    sp = rng.choice([sp, f.spellings[0]])
                ch.units[f.qid] = (alt, sp, rng.random() < 0.75)
        return ch

    def _plans(self) -> list[Plan]:
        rng = self.rng
        k = min(len(self.domain.streams), rng.randint(4, 5))
        streams = rng.sample(list(self.domain.streams), k)
        target = round(self.R * rng.uniform(0.46, 0.56))
        w = [rng.uniform(0.7, 1.3) for _ in streams]
        ns = [max(5, round(target * x / sum(w))) for x in w]
        mods = [rng.choice(["photo", "text", "mixed", "mixed"]) for _ in streams]
        budget = max(0, self.I - max(1 if self.I else 0, round(self.I * 0.12)))
        if budget and all(m == "text" for m in mods):
            mods[0] = "mixed"
        if not budget:
            mods = ["text"] * len(mods)
        wt = {"photo": 1.0, "mixed": 0.5, "text": 0.0}
        demand = sum(n * wt[m] for n, m in zip(ns, mods))
        scale = budget / demand if demand else 0
        plans = []
        for s, n, m in zip(streams, ns, mods):
            b = round(n * wt[m] * scale)
            if m == "photo":
                if b < 5:
                    m = "mixed"
                    n = max(n, b + 3)
                else:
                    n = b
            if m == "mixed":
                b = min(b, n - max(2, n // 4))
                if b <= 0:
                    m, b = "text", 0
            plans.append(Plan(s, m, rng.choice(["one", "two", "text_other"]), n, b if m != "text" else 0))
        # never more image records than the image budget
        while sum(p.n_img for p in plans) > max(0, self.I - 1):
            p = max(plans, key=lambda p: p.n_img)
            p.n_img -= 1
            if p.modality == "photo":
                p.n -= 1
        for p in plans:
            if p.modality != "text":
                a = self._channel(p.stream, "image")
                p.image_channels = [a]
                if p.policy == "two":
                    p.image_channels.append(self._channel(p.stream, "image", avoid=a))
            base = p.image_channels[0] if p.image_channels else None
            if p.policy == "text_other" and base:
                p.text_channel = self._channel(p.stream, "text", avoid=base)
            else:
                p.text_channel = self._channel(p.stream, "text")
                if base:  # same words as the (first) device prints
                    for q, lab in base.labels.items():
                        lab = lab.rstrip(".:")
                        p.text_channel.labels[q] = lab.capitalize() if lab.isupper() and len(lab) > 4 else lab
            p.text_style = rng.choice(["lines", "sentence", "logline", "mixed"])
        return plans

    # ------------------------------------------------------------------ records
    def _values(self, stream: Stream) -> dict:
        rng = self.rng
        out = {}
        for i, f in enumerate(stream.fields):
            if i >= 2 and rng.random() > f.p:
                continue
            if i < 2 and f.p < 1 and rng.random() > max(f.p, 0.85):
                continue
            if f.is_text:
                out[f.qid] = rng.choice(f.choices)
            else:
                out[f.qid] = round(rng.uniform(f.lo, f.hi), f.decimals)
        if not any(not f.is_text and f.qid in out for f in stream.fields):
            f = next(f for f in stream.fields if not f.is_text)
            out[f.qid] = round(rng.uniform(f.lo, f.hi), f.decimals)
        return out

    def _display(self, f: Field, v: float, ch: Channel, in_label: bool) -> tuple[str, float]:
        """(value string as printed, canonical value)."""
        alt, sp, space = ch.units.get(f.qid, (None, "", True))
        if alt is not None:
            shown = round(v * alt.factor, alt.decimals)
            num = _num(shown, alt.decimals)
            canon = round(shown / alt.factor, 6)
        else:
            num = _num(v, f.decimals)
            canon = v
        return (num if in_label else _with_unit(num, sp, space)), canon

    def _unit_word(self, f: Field, ch: Channel) -> str:
        alt, sp, _ = ch.units.get(f.qid, (None, "", True))
        return sp

    def record_image(self, p: Plan, vals: dict, rid: str, ch: Channel, day: date) -> tuple[bytes, list, list, list]:
        rng = self.rng
        rows, obs = [], []
        for f in p.stream.fields:
            if f.qid not in vals:
                continue
            lab = ch.labels[f.qid]
            if f.is_text:
                disp, canon = vals[f.qid], vals[f.qid]
            else:
                in_label = ch.unit_in_label and bool(self._unit_word(f, ch)) and self._unit_word(f, ch) not in ("$", "€")
                disp, canon = self._display(f, vals[f.qid], ch, in_label)
                if in_label:
                    lab = f"{lab.rstrip(':.')} ({self._unit_word(f, ch)})"
            rows.append((lab, disp))
            obs.append({"round": rid, "stream": p.stream.name, "quantity": f.qid, "value": canon,
                        "unit": f.unit if not f.is_text else "", "where": "image", "label": lab, "display": disp})
        extras, idents = [], []
        if ch.layout == "receipt" or rng.random() < 0.4:
            kind = rng.randrange(3)
            if kind == 0:
                e = f"Order #{rng.randint(10_000_000, 99_999_999)}"
            elif kind == 1:
                e = f"Invoice No. {day.year}-{rng.randint(1, 9999):04d}"
            else:
                e = f"Ref {rng.randint(10_000_000, 99_999_999)}"
            extras.append(e)
            idents.append({"round": rid, "text": e})
        if rng.random() < 0.6:
            extras.append(rng.choice([f"{day.day} {MONTHS[day.month - 1]} {day.year}", day.isoformat(),
                                      f"{rng.randint(6, 22):02d}:{rng.randint(0, 59):02d}"]))
        if ch.layout != "receipt" and rng.random() < 0.5:
            extras.insert(0, rng.choice(["Today", "Summary", "Latest", "Details"]))
        png, drawn = render_record(rng, ch.title, rows, extras, ch.layout, ch.theme, ch.width)
        return png, drawn, obs, idents

    def record_text(self, p: Plan, vals: dict, rid: str, k: int) -> tuple[str, list]:
        rng = self.rng
        ch = p.text_channel
        style = p.text_style if p.text_style != "mixed" else rng.choice(["lines", "sentence", "logline"])
        parts, obs = [], []
        fields = [f for f in p.stream.fields if f.qid in vals]
        for f in fields:
            lab = ch.labels[f.qid]
            low = lab if any(c.isupper() for c in lab[1:]) else lab.lower()
            if f.is_text:
                disp = vals[f.qid]
                canon = disp
                form = "bare" if style == "logline" else rng.choice(["colon", "lv", "was"])
                text = {"bare": disp, "colon": f"{lab}: {disp}", "lv": f"{low} {disp}", "was": f"the {low} was {disp}"}[form]
                printed = "" if form == "bare" else (lab if form == "colon" else low)
            else:
                disp, canon = self._display(f, vals[f.qid], ch, False)
                if not f.unit and float(canon).is_integer() and 0 <= canon <= 12 and rng.random() < 0.35:
                    disp = NUMBER_WORDS[int(canon)]
                if f.unit == "min" and ch.units[f.qid][0] is None and canon >= 60 and rng.random() < 0.25:
                    disp = f"{int(canon) // 60} h {int(canon) % 60} min" if canon % 60 else f"{int(canon) // 60} h"
                if style == "lines":
                    form = rng.choice(["colon", "colon", "lv"])
                elif style == "logline":
                    form = "vl"
                else:
                    form = rng.choice(["vl", "my", "came", "at", "colon", "logged", "measured"])
                text = {"colon": f"{lab}: {disp}", "lv": f"{low} {disp}", "vl": f"{disp} {low}",
                        "my": f"my {low} was {disp}", "came": f"{low} came in at {disp}",
                        "at": f"{low} at {disp}", "logged": f"logged {disp} of {low}",
                        "measured": f"measured the {low} at {disp}"}[form]
                printed = lab if form == "colon" else low
            parts.append(text)
            obs.append({"round": rid, "stream": p.stream.name, "quantity": f.qid, "value": canon,
                        "unit": f.unit if not f.is_text else "", "where": "text", "label": printed, "display": disp})
        if style == "lines":
            body = rng.choice([", ", "; ", "\n"]).join(parts)
            user = f"{rng.choice(p.stream.intros)} {body}".strip()
        elif style == "logline":
            user = f"Day {k} — " + ", ".join(parts)
        else:
            body = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
            first = obs[0]["label"]
            if first and body.startswith(first):
                obs[0]["label"] = first[0].upper() + first[1:]
            user = f"{rng.choice(p.stream.intros)} {body[0].upper() + body[1:] if body else body}."
        return user, obs

    # ------------------------------------------------------------------ assembly
    def build(self) -> tuple[dict, dict, dict[str, bytes]]:
        rng = self.rng
        plans = self._plans()
        items: list[tuple[str, object]] = []
        for p in plans:
            kinds = ["image"] * p.n_img + ["text"] * (p.n - p.n_img)
            rng.shuffle(kinds)
            items += [("record", (p, kd, i)) for i, kd in enumerate(kinds)]
        n_img_rec = sum(p.n_img for p in plans)
        n_photos = max(0, self.I - n_img_rec)
        items += [("photo", None)] * n_photos
        pool = list(self.domain.oneoffs) + GENERIC_ONEOFFS
        n_oneoff = max(1, round(self.R * rng.uniform(0.03, 0.05)))
        uses: dict[int, int] = {}
        for _ in range(n_oneoff):
            j = rng.randrange(len(pool))
            if uses.get(j, 0) >= 2:
                continue
            uses[j] = uses.get(j, 0) + 1
            items.append(("oneoff", pool[j]))
        n_talk = self.R - len(items)
        if n_talk < 0:  # too many records for the round count: drop text records
            text_recs = [i for i, it in enumerate(items) if it[0] == "record" and it[1][1] == "text"]
            drop = set(rng.sample(text_recs, min(len(text_recs), -n_talk)))
            items = [it for i, it in enumerate(items) if i not in drop]
            n_talk = max(0, self.R - len(items))
        items += [("talk", None)] * n_talk
        rng.shuffle(items)
        items = items[: self.R] if len(items) > self.R else items
        # most one-offs and photos sit next to a record, so "on the day I ..." questions have an anchor
        recs = [j for j, it in enumerate(items) if it[0] == "record"]
        for i, it in enumerate(list(items)):
            if it[0] in ("oneoff", "photo") and recs and rng.random() < 0.7:
                j = rng.choice(recs) + 1
                if j < len(items) and items[j][0] == "talk":
                    items[i], items[j] = items[j], items[i]
        events = rng.sample(EVENTS, min(len(EVENTS), max(2, round(self.R / 60))))
        for ev in events:
            for _ in range(20):
                j = rng.choice(recs) + 1 if recs else rng.randrange(len(items))
                if j < len(items) and items[j][0] == "talk" and items[j][1] is None:
                    items[j] = ("talk", ev)
                    break

        # sessions
        S = min(self.n_sessions, len(items))
        sizes = [1] * S
        for _ in range(len(items) - S):
            sizes[rng.randrange(S)] += 1
        doc_sessions, truth_obs, idents, rounds_meta, renders = [], [], [], {}, {}
        streams: dict[str, list[str]] = {p.stream.name: [] for p in plans}
        images: dict[str, bytes] = {}
        day = self.start
        pos = 0
        counters = {p.stream.name: 0 for p in plans}
        for si in range(S):
            day += timedelta(days=rng.choice([1, 1, 1, 2, 2, 3]) if si else 0)
            t = datetime(day.year, day.month, day.day, rng.randint(7, 20), rng.randint(0, 59), rng.randint(0, 59))
            sid = f"S{si + 1}"
            dialogues = []
            for ri in range(sizes[si]):
                kind, payload = items[pos]
                pos += 1
                rid = f"{sid}:R{ri + 1}"
                t += timedelta(minutes=rng.randint(2, 14), seconds=rng.randint(0, 59))
                d = {"round": rid, "time": t.isoformat(timespec="seconds")}
                meta = {"kind": kind, "date": day.isoformat()}
                if kind == "record":
                    p, kd, _ = payload
                    counters[p.stream.name] += 1
                    vals = self._values(p.stream)
                    streams[p.stream.name].append(rid)
                    meta["stream"] = p.stream.name
                    meta["where"] = kd
                    if kd == "image":
                        ch = rng.choice(p.image_channels)
                        png, drawn, obs, ids = self.record_image(p, vals, rid, ch, day)
                        rel = f"images/{sid}_R{ri + 1}_1.png"
                        images[rel] = png
                        d["user"] = rng.choice([f"Here's today's {p.stream.noun} from {ch.title}.",
                                                f"Screenshot of my {p.stream.noun}.", f"{ch.title} says this:",
                                                "Logging this one.", f"Latest {p.stream.noun}, see picture."])
                        d["assistant"] = rng.choice(REPLIES)
                        d["image_id"] = [f"{rid}:I1"]
                        d["input_image"] = [rel]
                        d["image_caption"] = [rng.choice([f"A {'receipt' if ch.layout == 'receipt' else 'screenshot'} from {ch.title}.",
                                                          f"Photo of the {ch.title} {'display' if p.stream.picture == 'display' else 'screen'}.",
                                                          f"{ch.title} {p.stream.noun} summary."])]
                        renders[rid] = {"layout": ch.layout, "theme": ch.theme, "width": ch.width,
                                        "device": ch.title, "lines": drawn}
                        idents += ids
                    else:
                        d["user"], obs = self.record_text(p, vals, rid, counters[p.stream.name] + rng.randint(0, 3))
                        d["assistant"] = rng.choice(REPLIES)
                    truth_obs += obs
                elif kind == "photo":
                    rel = f"images/{sid}_R{ri + 1}_1.png"
                    w = rng.randrange(360, 601, 20)
                    images[rel] = render_photo(rng, w)
                    cap = rng.choice(self.domain.photos)
                    d["user"] = rng.choice(["Look at this!", "Took a picture today.", "Sharing a photo.", "Isn't this nice?"])
                    d["assistant"] = rng.choice(["Lovely picture.", "Very nice!", "What a view."])
                    d["image_id"] = [f"{rid}:I1"]
                    d["input_image"] = [rel]
                    d["image_caption"] = [cap]
                    meta["caption"] = cap
                elif kind == "oneoff":
                    tmpl, label, unit, lo, hi = payload
                    v = round(rng.uniform(lo, hi), 2 if hi < 100 else 0)
                    vs = _num(v, 2 if hi < 100 else 0)
                    shown = f"{vs} {unit}" if rng.random() < 0.5 else ({"USD": "$", "EUR": "€", "GBP": "£"}.get(unit, "") + vs)
                    d["user"] = tmpl.format(v=shown)
                    d["assistant"] = rng.choice(REPLIES)
                    meta.update({"label": label, "value": v, "unit": unit})
                elif payload is not None:  # a one-time event (talk without a number)
                    d["user"] = payload[0]
                    d["assistant"] = rng.choice(CHAT_REPLIES)
                    meta["event"] = payload[1]
                else:
                    d["user"], ident = self._talk(day)
                    if ident:
                        idents.append({"round": rid, "text": ident})
                    d["assistant"] = rng.choice(CHAT_REPLIES)
                rounds_meta[rid] = meta
                dialogues.append(d)
            doc_sessions.append({"session_id": sid, "date": day.isoformat(), "dialogues": dialogues})

        fields = {}
        for p in plans:
            used = {}
            for o in truth_obs:
                if o["stream"] == p.stream.name:
                    used.setdefault(o["quantity"], set()).add(o["label"])
            fields[p.stream.name] = [{"quantity": f.qid, "unit": f.unit, "text": f.is_text,
                                      "labels": sorted(used.get(f.qid, ()))}
                                     for f in p.stream.fields if f.qid in used]
        doc = {
            "character_profile": {"name": rng.choice(NAMES), "persona_summary": f"Someone who {self.domain.persona}.",
                                  "generator": "bench/histgen", "seed": self.seed},
            "multi_session_dialogues": doc_sessions,
            "human-annotated QAs": [],
        }
        truth = {
            "domain": self.domain.name, "seed": self.seed,
            "period": {"start": doc_sessions[0]["date"], "end": doc_sessions[-1]["date"]},
            "observations": truth_obs,
            "streams": streams,
            "rounds": rounds_meta,
            "fields": fields,
            "identifiers": idents,
            "plans": {p.stream.name: {"modality": p.modality, "policy": p.policy, "records": len(streams[p.stream.name]),
                                      "images": sum(1 for r in streams[p.stream.name] if rounds_meta[r]["where"] == "image"),
                                      "noun": p.stream.noun, "plural": p.stream.plural, "did": p.stream.did,
                                      "devices": [c.title for c in p.image_channels], "text_style": p.text_style}
                      for p in plans},
            "renders": renders,
            "refusals": list(self.domain.refusals),
        }
        return doc, truth, images

    def _talk(self, day: date) -> tuple[str, str | None]:
        rng = self.rng
        if rng.random() < 0.15 and self.ident_uses < 6:
            self.ident_uses += 1
            tmpl = rng.choice(IDENT_TEXT)
            o, r, i = rng.randint(10_000_000, 99_999_999), rng.randint(10_000_000, 99_999_999), rng.randint(1, 9999)
            text = tmpl.format(o=o, r=r, y=day.year, i=f"{i:04d}")
            ident = {0: f"Order #{o}", 1: str(r), 2: f"Invoice No. {day.year}-{i:04d}", 3: str(o)}[IDENT_TEXT.index(tmpl)]
            return text, ident
        fresh = [c for c in CHAT if self.chat_uses.get(c, 0) < (2 if "{" in c else 99)]
        tmpl = rng.choice(fresh)
        self.chat_uses[tmpl] = self.chat_uses.get(tmpl, 0) + 1
        return tmpl.format(n=rng.randint(2, 6), name=rng.choice(NAMES), h=rng.randint(1, 11), who=rng.choice(PEOPLE),
                           age=rng.choice([30, 40, 50, 8, 12]), ph=f"{rng.randint(100, 9999):04d}",
                           mon=rng.choice(MONTHS), day=rng.randint(2, 28), mm=f"{rng.randint(0, 59):02d}",
                           bus=rng.randint(5, 99), deg=rng.randint(-3, 28), pages=rng.randint(10, 80),
                           room=rng.randint(101, 420)), None


def write(out: Path, doc: dict, truth: dict, images: dict[str, bytes], name: str = "history.json") -> Path:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for rel, data in images.items():
        p = out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    path = out / name
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    (out / "truth.json").write_text(json.dumps(truth, indent=1, ensure_ascii=False), encoding="utf-8")
    return path
