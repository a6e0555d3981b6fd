"""Generate the bundled demo history and its development benchmark (data/demo/).

    .venv/bin/python data/generate_demo.py [--seed 7] [--out data/demo]

Writes, in MemEye format (DESIGN.md "Input formats"):
  OUT/demo.json      character_profile, multi_session_dialogues, human-annotated QAs
  OUT/images/*.png   sleep-app and glucose-dashboard screenshots, photos
  OUT/truth.json     every recorded value with its round, and how it is shown

One person's three months (2026-01-12 .. 2026-04-12) with an assistant: sleep
screenshots, glucose dashboards, workouts told in words, a card-game play log
over several game nights, captioned photos, one-off life events and small talk
with distractor numbers. Every gold answer is computed from the generator's own
records.

Deterministic: all randomness comes from one random.Random(seed); images use
only Pillow's built-in font (ImageFont.load_default(size=...), Pillow >= 10.1)
and carry no timestamps, so the same seed gives the same bytes with the same
Pillow/zlib.
"""
from __future__ import annotations

import argparse
import io
import json
import math
import random
import shutil
import statistics
import sys
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

START = date(2026, 1, 12)
END = date(2026, 4, 12)
N_SESSIONS = 64
CARD_NIGHTS = 8
LAST_WEEK = (date(2026, 4, 6), END)  # "last week" = the last 7 days of the history

UNITS = {
    "sleep_duration": "h", "deep_sleep": "min", "resting_heart_rate": "bpm", "sleep_score": "points",
    "time_in_range": "%", "average_glucose": "mg/dL", "glucose_cv": "%",
    "activity": "", "distance_km": "km", "duration_min": "min", "pace_min_per_km": "min/km", "avg_heart_rate": "bpm",
    "my_card_colour": "", "my_card_value": "", "opponent": "", "opponent_card_colour": "", "opponent_card_value": "",
    "winner": "", "points": "points",
}


# ============================================================ helpers

def hm(hours: float) -> str:
    """7.2 -> '7h 12m'."""
    minutes = int(round(hours * 60))
    return f"{minutes // 60}h {minutes % 60:02d}m"


def mmss(minutes: float) -> str:
    """5.5 -> '5:30'."""
    secs = int(round(minutes * 60))
    return f"{secs // 60}:{secs % 60:02d}"


def nice_date(d: date) -> str:
    return f"{d.strftime('%B')} {d.day}"


def clamp(x: float, lo: float, hi: float) -> float:
    return max(lo, min(hi, x))


_FONTS: dict[int, ImageFont.FreeTypeFont] = {}


def font(size: int) -> ImageFont.FreeTypeFont:
    size = max(14, int(size))  # never below 14 px: the OCR has to read it
    if size not in _FONTS:
        _FONTS[size] = ImageFont.load_default(size=size)
    return _FONTS[size]


def png_bytes(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


# ============================================================ records and rounds

@dataclass
class Record:
    stream: str
    day: date
    values: dict
    display: dict  # quantity -> the string shown (dialogue and/or screenshot)
    where: dict = field(default_factory=dict)  # quantity -> text | image | both
    round: str = ""
    extra: dict = field(default_factory=dict)


@dataclass
class Item:
    kind: str  # sleep, glucose, workout, card_intro, card, event, photo, talk
    payload: object
    order_hint: int = 5


@dataclass
class RoundOut:
    user: str
    assistant: str
    images: list = field(default_factory=list)  # (png bytes, caption)
    record: Record | None = None
    tag: str | None = None  # event / photo key


# ============================================================ screenshot rendering

THEMES = {
    "light": {"bg": (246, 247, 250), "card": (255, 255, 255), "fg": (20, 24, 33), "muted": (80, 88, 104),
              "line": (214, 218, 226), "accent": (70, 110, 230)},
    "dark": {"bg": (16, 18, 26), "card": (34, 38, 52), "fg": (245, 246, 250), "muted": (190, 196, 210),
             "line": (60, 66, 84), "accent": (120, 160, 255)},
}


def render_dashboard(rng: random.Random, title: str, subtitle: str, fields: list[tuple[str, str]],
                     layout: str, theme: str, width: int, chart: str) -> Image.Image:
    """A phone-style app screen: title, date, label/value fields in one of three layouts, a chart."""
    t = THEMES[theme]
    s = width / 360.0
    pad = int(22 * s)
    label_px, value_px = int(17 * s), int(30 * s)
    # Height depends on the layout; computed first so the canvas fits.
    if layout == "above":
        body_h = len(fields) * int(88 * s)
    elif layout == "row":
        body_h = len(fields) * int(54 * s)
    else:
        body_h = ((len(fields) + 1) // 2) * int(104 * s)
    chart_h = int(120 * s)
    height = pad + int(70 * s) + body_h + chart_h + 2 * pad
    img = Image.new("RGB", (width, height), t["bg"])
    d = ImageDraw.Draw(img)
    d.text((pad, pad), title, font=font(26 * s), fill=t["fg"])
    d.text((pad, pad + int(36 * s)), subtitle, font=font(16 * s), fill=t["muted"])
    y = pad + int(70 * s)
    if layout == "above":
        for label, value in fields:
            d.text((pad, y), label, font=font(label_px), fill=t["muted"])
            # A clear gap between label and value: rapidocr misreads a value whose box touches the label's.
            d.text((pad, y + int(30 * s)), value, font=font(value_px), fill=t["fg"])
            y += int(88 * s)
    elif layout == "row":
        for label, value in fields:
            d.line((pad, y, width - pad, y), fill=t["line"], width=max(1, int(s)))
            f = font(22 * s)
            d.text((pad, y + int(14 * s)), label, font=font(18 * s), fill=t["muted"])
            w = d.textlength(value, font=f)
            d.text((width - pad - w, y + int(12 * s)), value, font=f, fill=t["fg"])
            y += int(54 * s)
    else:  # cards, two per row
        cw = (width - 3 * pad) // 2
        ch = int(92 * s)
        for i, (label, value) in enumerate(fields):
            cx = pad + (i % 2) * (cw + pad)
            cy = y + (i // 2) * int(104 * s)
            d.rounded_rectangle((cx, cy, cx + cw, cy + ch), radius=int(12 * s), fill=t["card"], outline=t["line"])
            d.text((cx + int(12 * s), cy + int(10 * s)), label, font=font(15 * s), fill=t["muted"])
            vf = font(26 * s)
            while d.textlength(value, font=vf) > cw - int(20 * s) and vf.size > 16:
                vf = font(vf.size - 2)
            d.text((cx + int(12 * s), cy + int(44 * s)), value, font=vf, fill=t["fg"])
        y += ((len(fields) + 1) // 2) * int(104 * s)
    # Decorative chart: no numbers except the glucose target band labels.
    top = y + int(10 * s)
    left, right, bottom = pad, width - pad, top + chart_h - int(20 * s)
    d.rectangle((left, top, right, bottom), outline=t["line"])
    if chart == "stages":
        x = left + 2
        colours = [(70, 60, 160), (110, 100, 220), (160, 150, 240), (230, 140, 90)]
        while x < right - 2:
            w = rng.randint(int(6 * s), int(22 * s))
            level = rng.randint(0, 3)
            h = (bottom - top - 8) * (level + 1) // 4
            d.rectangle((x, bottom - h, min(x + w, right - 2), bottom - 2), fill=colours[level])
            x += w
    else:
        band_top = top + (bottom - top) * 30 // 100
        band_bot = top + (bottom - top) * 75 // 100
        d.rectangle((left + 1, band_top, right - 1, band_bot), fill=t["line"])
        small = font(14)
        d.text((right - int(34 * s), band_top - 16), "180", font=small, fill=t["muted"])
        d.text((right - int(30 * s), band_bot + 1), "70", font=small, fill=t["muted"])
        pts = []
        yv = (band_top + band_bot) / 2
        for i in range(40):
            xv = left + 4 + i * (right - left - 8) / 39
            yv = clamp(yv + rng.uniform(-10, 10) * s, top + 4, bottom - 4)
            pts.append((xv, yv))
        d.line(pts, fill=t["accent"], width=max(2, int(2 * s)))
    return img


# ============================================================ photos (caption-only content)

def render_photo(rng: random.Random, scene: str, palette: list[tuple[int, int, int]], width: int) -> Image.Image:
    """A simple picture of shapes and colours standing in for a photo (the caption carries the content)."""
    h = width * 3 // 4
    img = Image.new("RGB", (width, h), palette[0])
    d = ImageDraw.Draw(img)
    if scene == "meal":
        d.rectangle((0, h * 2 // 3, width, h), fill=palette[1])
        cx, cy, r = width // 2, h // 2, min(width, h) // 3
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=(250, 250, 245), outline=(200, 200, 200))
        for i, col in enumerate(palette[2:]):
            for _ in range(5 + 2 * i):
                a = rng.uniform(0, 2 * math.pi)
                rr = rng.uniform(0, r * 0.6)
                x, y = cx + rr * math.cos(a), cy + rr * math.sin(a)
                b = rng.randint(r // 10, r // 5)
                d.ellipse((x - b, y - b, x + b, y + b), fill=col)
    elif scene == "landscape":
        horizon = h * rng.randint(45, 60) // 100
        for i in range(6):  # sky bands
            c = tuple(int(palette[0][k] + (palette[1][k] - palette[0][k]) * i / 5) for k in range(3))
            d.rectangle((0, horizon * i // 6, width, horizon * (i + 1) // 6), fill=c)
        sx = rng.randint(width // 6, width * 5 // 6)
        d.ellipse((sx - 18, horizon // 4 - 18, sx + 18, horizon // 4 + 18), fill=(255, 220, 120))
        x = -40
        while x < width:
            w = rng.randint(width // 4, width // 2)
            peak = horizon - rng.randint(h // 8, h // 3)
            d.polygon([(x, horizon), (x + w // 2, peak), (x + w, horizon)], fill=palette[2])
            d.polygon([(x + w * 2 // 5, peak + (horizon - peak) // 4), (x + w // 2, peak),
                       (x + w * 3 // 5, peak + (horizon - peak) // 4)], fill=(250, 250, 250))
            x += w * 2 // 3
        d.rectangle((0, horizon, width, h), fill=palette[3])
        d.ellipse((width // 5, horizon + 10, width * 4 // 5, h - 10), fill=palette[4] if len(palette) > 4 else palette[1])
    else:  # object on a surface
        d.rectangle((0, h * 3 // 5, width, h), fill=palette[1])
        cx, cy = width // 2, h // 2
        for i, col in enumerate(palette[2:]):
            w = rng.randint(width // 8, width // 4)
            hh = rng.randint(h // 8, h // 3)
            x = cx + (i - 1) * width // 5
            if i % 2:
                d.ellipse((x - w // 2, cy - hh // 2, x + w // 2, cy + hh // 2), fill=col)
            else:
                d.rounded_rectangle((x - w // 2, cy - hh // 2, x + w // 2, cy + hh // 2), radius=8, fill=col)
    return img


# ============================================================ content pools

PHOTOS = [
    # key, scene, palette, user line (no details), caption (the details), question, answer
    ("thai", "meal", [(120, 80, 50), (90, 60, 40), (90, 160, 60), (250, 250, 240), (230, 200, 80)],
     "Lunch today, so good.", "A bowl of green curry with tofu and jasmine rice on a wooden table at Lotus Thai.",
     ["What did I eat at the Thai place?", "Which dish did I have at Lotus Thai?"], "green curry with tofu"),
    ("market", "object", [(210, 225, 240), (150, 120, 90), (200, 50, 40), (120, 60, 140), (220, 90, 40)],
     "Look what I found this morning!", "A wicker basket of heirloom tomatoes and purple carrots at the Saturday farmers market.",
     ["Which vegetables did I photograph at the farmers market?", "What was in the basket from the farmers market?"],
     "heirloom tomatoes and purple carrots"),
    ("hike", "landscape", [(120, 170, 230), (200, 220, 245), (90, 100, 120), (60, 110, 60), (70, 130, 180)],
     "Worth the climb.", "View of Silver Lake from the Pine Ridge trail, with snow on the peaks behind it.",
     ["Which lake did I see from the Pine Ridge trail?", "What was the name of the lake on my hike?"], "Silver Lake"),
    ("ramen", "meal", [(40, 40, 45), (70, 50, 40), (200, 120, 50), (250, 230, 150), (60, 140, 60)],
     "Dinner was exactly what I needed.", "A bowl of spicy miso ramen with a soft-boiled egg at Kumo Ramen.",
     ["What kind of ramen did I have at Kumo Ramen?", "Which ramen did I order at Kumo?"], "spicy miso ramen"),
    ("cat", "object", [(230, 220, 200), (80, 140, 90), (230, 140, 50), (240, 170, 80)],
     "Guess who fell asleep on me.", "Sam's orange tabby cat, Biscuit, sleeping on a green blanket.",
     ["What is the name of Sam's cat?", "What's Sam's cat called?"], "Biscuit"),
    ("books", "object", [(240, 235, 225), (140, 100, 70), (40, 80, 150), (200, 60, 60), (60, 150, 120)],
     "Couldn't resist the used section.", "A stack of three used paperbacks from Powell's: a mystery, a cookbook and a travel guide to Portugal.",
     ["Which country was the travel guide I bought about?", "The travel guide in my bookshop haul was for which country?"], "Portugal"),
    ("cake", "meal", [(250, 240, 230), (220, 200, 180), (250, 230, 110), (220, 60, 90)],
     "Party time for Leo!", "A lemon cake with raspberry frosting and candles for Leo's birthday.",
     ["What flavour was Leo's birthday cake?", "What kind of cake did Leo have for his birthday?"], "lemon"),
    ("mug", "object", [(220, 230, 235), (120, 90, 70), (240, 200, 40), (200, 100, 40)],
     "New favourite thing on my desk.", "A yellow ceramic mug with a fox painted on it.",
     ["What animal is painted on my new mug?", "Which animal is on the yellow mug I showed you?"], "a fox"),
    ("pasta", "object", [(245, 235, 215), (150, 110, 70), (240, 220, 150), (230, 210, 140)],
     "Cooking class tonight!", "Handmade tagliatelle drying on a wooden rack at the Casa Nonna cooking class.",
     ["What pasta did we make at the cooking class?", "Which kind of pasta did I make at Casa Nonna?"], "tagliatelle"),
    ("shoes", "object", [(235, 235, 235), (160, 160, 165), (130, 130, 135), (240, 120, 30)],
     "Treated myself.", "New running shoes, grey with bright orange laces, still in the box.",
     ["What colour are the laces on my new running shoes?", "My new running shoes have laces of which colour?"], "orange"),
    ("beach", "landscape", [(250, 170, 120), (250, 210, 160), (70, 70, 80), (220, 200, 160), (60, 100, 150)],
     "Weekend escape.", "Sunset over Cannon Beach with Haystack Rock in the water.",
     ["Which beach did I watch the sunset at?", "Where was the sunset photo I sent taken?"], "Cannon Beach"),
]

WORKOUT_PHOTO_CAPTIONS = [
    "The river path just after sunrise, frost on the grass.",
    "Muddy trail shoes on the doormat after the run.",
    "The bridge at the halfway point of my usual loop.",
    "Empty park path in the morning fog.",
    "Road bike leaning against a fence by the lake road.",
    "Hills in the distance from the top of the climb.",
]

REFUSALS = [
    ("What was my blood pressure reading in March?", "blood pressure"),
    ("What did I order at the sushi restaurant?", "sushi"),
    ("How much did I pay for my new running shoes?", "shoe price"),
    ("What is my sister's husband's name?", "sister's husband"),
    ("How far did I swim in February?", "swimming"),
    ("What did my cardiologist recommend?", "cardiologist"),
    ("What was my body weight at the start of January?", "body weight"),
    ("What's the name of my dog?", "dog"),
]

TALK_TEMPLATES = [
    ("I have {n} meetings tomorrow, can you remind me to prep the slides tonight?",
     "Sure. {N} meetings is a lot; I'll remind you this evening."),
    ("Remind me to call my mom at {h} pm.", "Will do, a reminder at {h} pm."),
    ("Call me at {h} if you think of a better name for the project.", "I can't call, but I'll keep it in mind."),
    ("The recipe needs {n} cups of flour and says bake at 350 degrees. Is that Fahrenheit?",
     "Yes, 350°F is about 175°C."),
    ("My phone battery is at {p}%, so keep it short: what's a good podcast about history?",
     "Try 'The Rest Is History'."),
    ("It's {n} degrees outside. Gloves or no gloves?", "Gloves. Your hands will thank you."),
    ("Is {bpm} bpm too high for an easy run for someone my age?",
     "It can be; easy runs are usually well below threshold. A talk test helps."),
    ("My train leaves at 7:{mm} tomorrow, platform {n}.", "Noted: 7:{mm}, platform {n}."),
    ("We have {k} open tickets at work before the release.", "That's a busy week. Want help prioritising?"),
    ("The workshop is in room {room}.", "Got it, room {room}."),
    ("Any book suggestion for a long flight?", "'Project Hail Mary' is a fun one."),
    ("What's a quick vegetarian dinner idea?", "A chickpea curry takes about twenty minutes."),
    ("How do I get rid of a squeaky door hinge?", "A little oil or petroleum jelly on the pin usually does it."),
    ("My neighbour's parcel came to me by mistake, apartment {room}.", "Nice of you to keep it safe."),
    ("Can you suggest a stretch for tight hamstrings?", "Try a standing forward fold, held for 30 seconds."),
    ("It's {p}% humidity today, no wonder my hair is a mess.", "Humid days are like that."),
    ("Top {n} tips for staying focused?", "Single-tasking, short breaks and putting the phone away."),
    ("Ordered groceries, delivery between {h} and {h2}.", "Hope it arrives on time."),
    ("What's the difference between baking soda and baking powder?",
     "Baking powder already contains an acid; baking soda needs one."),
    ("I keep forgetting to water the plants.", "A weekly reminder might help."),
    ("Parking here costs {n} dollars an hour, ridiculous.", "City parking adds up fast."),
    ("My sister's flight lands at {h}:{mm} pm, gate {k}.", "I'll remind you an hour before."),
    ("Need {n} chairs for Saturday's dinner, we only have four.", "Maybe borrow a couple from a neighbour?"),
    ("The dentist's office number ends in {room}, I'll call them Monday.", "Noted, Monday."),
    ("Our team retro is at {h} today, any icebreaker ideas?", "Ask everyone for one small win of the week."),
    ("Watched {n} episodes of that baking show last night. Oops.", "Happens to the best of us."),
    ("Is it OK to run two days in a row?", "Yes, if one of them is easy."),
    ("What's a good gift for a {k}-year-old who likes drawing?", "A set of brush pens and a sketchbook."),
    ("The heating bill was {k} percent higher than last month.", "Cold snaps will do that."),
    ("Any tips for falling asleep faster?", "A regular bedtime and no screens in the last half hour."),
]

EVENTS = {
    # key: (user, assistant, facts)
    "manager": ("Met my new manager today, Marco. He seems very organised.",
                "That's a good start. What's he like so far?", {"manager": "Marco"}),
    "dentist": ("Dentist appointment this morning. Dr. Okafor told me to cut back on coffee after 2 pm and switch to a softer toothbrush.",
                "Sensible advice. Cutting afternoon coffee may help your sleep too.",
                {"dentist": "Dr. Okafor", "advice": "cut back on coffee after 2 pm"}),
    "physio": ("Saw my physio Ana about my calf. She recommended calf raises every day and easier runs for two weeks.",
               "Good plan. Do you want reminders for the calf raises?", {"physio": "Ana", "exercise": "calf raises"}),
    "race": ("I signed up for the Riverside 10K! It's on April 5.",
             "Exciting! That gives you a good block of training.", {"race": "Riverside 10K", "race_date": "2026-04-05"}),
    "bike": ("I finally bought a road bike today: a blue Canyon Endurace from Cycle Hub. Paid 1,450 dollars.",
             "Congratulations! That should be great for cross-training.",
             {"shop": "Cycle Hub", "bike_colour": "blue", "price": 1450}),
    "concert": ("Saw the Midnight Owls at the Crystal Ballroom last night. Still buzzing!",
                "Sounds like a great night. How was the sound?", {"band": "the Midnight Owls", "venue": "Crystal Ballroom"}),
    "plant": ("Bought a fiddle-leaf fig for the living room. I named it Fernando.",
              "Fernando is a great name. They like bright, indirect light.", {"plant": "Fernando"}),
    "coffee": ("Had coffee with Priya at Heart Coffee this morning, she's moving to Denver.",
               "That's big news. Will you visit her there?", {"friend": "Priya", "friend_city": "Denver"}),
    "boston": ("Back home after the weekend in Boston visiting my sister Lena.",
               "Welcome back! How is Lena doing?", {"sister": "Lena", "city": "Boston"}),
    "headphones": ("Bought noise-cancelling headphones for the office, 199 dollars on sale.",
                   "Nice, that's a good price for those.", {"headphones_price": 199}),
}


# ============================================================ the generator

class DemoBuilder:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.seed = seed
        self.days = [START + timedelta(days=i) for i in range(int((END - START).days) + 1)]
        self.records: list[Record] = []
        self.events: dict[str, dict] = {}
        self.photos: dict[str, dict] = {}

    # ---------------------------------------------------------- schedule
    def schedule(self) -> list[tuple[date, list[Item]]]:
        rng = self.rng
        inner = self.days[1:-1]
        session_days = sorted(rng.sample(inner, N_SESSIONS - 2) + [START, END])
        # Game nights spread over the three months: one per stretch of the calendar.
        chunks = [session_days[i * len(session_days) // CARD_NIGHTS:(i + 1) * len(session_days) // CARD_NIGHTS]
                  for i in range(CARD_NIGHTS)]
        card_days = [rng.choice(c[1:] if len(c) > 1 else c) for c in chunks]
        plan: dict[date, list[Item]] = {d: [] for d in session_days}
        has: dict[date, set] = {d: set() for d in session_days}
        for d in session_days:
            card = d in card_days
            if rng.random() < (0.3 if card else 0.55):
                has[d].add("sleep")
            if not card and rng.random() < 0.45:
                has[d].add("glucose")
            if not card and rng.random() < 0.5:
                has[d].add("workout")

        used_event_days: set = set()

        def pick(lo: date, hi: date, need: str | None, avoid: str | None = None) -> date:
            cands = [d for d in session_days if lo <= d <= hi and d not in card_days and d not in used_event_days]
            good = [d for d in cands if (need is None or need in has[d]) and (avoid is None or avoid not in has[d])]
            d = rng.choice(good or cands)
            if need:
                has[d].add(need)
            if avoid:
                has[d].discard(avoid)
            used_event_days.add(d)
            return d

        anchors = {
            "manager": pick(date(2026, 1, 14), date(2026, 1, 28), "glucose"),
            "dentist": pick(date(2026, 1, 26), date(2026, 2, 10), "glucose"),
            "physio": pick(date(2026, 1, 20), date(2026, 2, 6), None),
            "race": pick(date(2026, 2, 2), date(2026, 2, 12), None, avoid="workout"),
            "bike": pick(date(2026, 2, 14), date(2026, 2, 27), "sleep", avoid="workout"),
            "concert": pick(date(2026, 3, 2), date(2026, 3, 14), "sleep"),
            "plant": pick(date(2026, 3, 1), date(2026, 3, 31), None),
            "coffee": pick(date(2026, 3, 16), date(2026, 3, 28), "workout"),
            "boston": pick(date(2026, 3, 22), date(2026, 4, 3), "sleep"),
            "headphones": pick(date(2026, 4, 1), date(2026, 4, 11), None),
        }
        self.anchor_days = anchors
        # A run on the coffee day (the progressive question asks for its heart rate).
        self.force_run = {anchors["coffee"]}

        bike_day = anchors["bike"]
        for d in session_days:
            t = (d - START).days / (END - START).days
            items = plan[d]
            if "sleep" in has[d]:
                items.append(Item("sleep", self.sleep_record(d, t), 0))
            if "glucose" in has[d]:
                items.append(Item("glucose", self.glucose_record(d, t), 3))
            if "workout" in has[d]:
                ride = d > bike_day and d not in self.force_run and rng.random() < 0.45
                items.append(Item("workout", self.workout_record(d, t, ride), 2))
        for key, d in anchors.items():
            plan[d].append(Item("event", key, 1))

        # Card nights: an opening round, then 3-6 played rounds.
        opponents = ["Sam", "Leo", "Sam", "Sam", "Leo", "Sam", "Leo", "Sam"]
        for n, d in enumerate(card_days):
            opp = opponents[n]
            plan[d].append(Item("card_intro", (opp, n), 6))
            for k in range(1, rng.randint(3, 6) + 1):
                plan[d].append(Item("card", self.card_record(d, opp, k), 7 + k))

        # Captioned photos on free days (not card nights).
        photo_days = [d for d in session_days if d not in card_days]
        for i, ph in enumerate(PHOTOS):
            lo = len(photo_days) * i // len(PHOTOS)
            hi = len(photo_days) * (i + 1) // len(PHOTOS)
            d = rng.choice(photo_days[lo:hi])
            plan[d].append(Item("photo", ph, 4))

        out = []
        for d in session_days:
            items = sorted(plan[d], key=lambda it: it.order_hint)
            want = max(3, len(items) + rng.choice([0, 1, 1, 2, 2, 3]))
            want = min(want, 8)
            while len(items) < want:
                items.insert(rng.randint(0, len(items)), Item("talk", None))
            assert 3 <= len(items) <= 8, (d, len(items))
            out.append((d, items))
        return out

    # ---------------------------------------------------------- record values
    def sleep_record(self, d: date, t: float) -> Record:
        rng = self.rng
        minutes = int(clamp(round(rng.gauss(415 + 20 * t, 36)), 320, 545))
        if rng.random() < 0.35:
            minutes -= minutes % 6  # representable as a one-decimal number of hours
        deep = int(clamp(round(rng.gauss(78 + 10 * t, 14)), 40, 128))
        rhr = int(clamp(round(62 - 6 * t + rng.gauss(0, 1.4)), 50, 70))
        score = int(clamp(round(48 + (minutes - 320) / 225 * 32 + (deep - 40) / 88 * 14 + rng.gauss(0, 3)), 50, 98))
        hours = minutes / 60
        dur_disp = f"{hours:.1f} h" if minutes % 6 == 0 and rng.random() < 0.6 else hm(hours)
        deep_disp = f"{deep} min" if rng.random() < 0.5 else hm(deep / 60)
        return Record("sleep", d, {"sleep_duration": round(hours, 4), "deep_sleep": deep, "resting_heart_rate": rhr,
                                   "sleep_score": score},
                      {"sleep_duration": dur_disp, "deep_sleep": deep_disp, "resting_heart_rate": f"{rhr} bpm",
                       "sleep_score": str(score)})

    def glucose_record(self, d: date, t: float) -> Record:
        rng = self.rng
        tir = int(clamp(round(64 + 16 * t + rng.gauss(0, 4)), 45, 96))
        avg = int(clamp(round(142 - 18 * t + rng.gauss(0, 5)), 100, 170))
        cv = round(clamp(rng.gauss(33 - 4 * t, 2.2), 22, 42), 1)
        return Record("glucose", d, {"time_in_range": tir, "average_glucose": avg, "glucose_cv": cv},
                      {"time_in_range": f"{tir}%", "average_glucose": f"{avg} mg/dL", "glucose_cv": f"{cv}%"})

    def workout_record(self, d: date, t: float, ride: bool) -> Record:
        rng = self.rng
        if ride:
            dist = round(clamp(rng.gauss(30, 8), 14, 58), 1)
            dur = int(round(dist / rng.uniform(23, 28) * 60))
            hr = int(round(rng.gauss(132, 5)))
            return Record("workout", d, {"activity": "ride", "distance_km": dist, "duration_min": dur, "avg_heart_rate": hr},
                          {"activity": "ride", "distance_km": f"{dist}", "duration_min": f"{dur}", "avg_heart_rate": f"{hr}"})
        dist = round(clamp(rng.gauss(7.6, 2.1), 3.5, 14.5), 1)
        pace_s = rng.gauss(348 - 20 * t, 14)
        dur = int(round(dist * pace_s / 60))
        pace = round(round(dur * 60 / dist) / 60, 4)  # the pace as stated, to the second
        hr = int(round(rng.gauss(151 - 5 * t + (4 if pace_s < 330 else 0), 4)))
        return Record("workout", d, {"activity": "run", "distance_km": dist, "duration_min": dur,
                                     "pace_min_per_km": pace, "avg_heart_rate": hr},
                      {"activity": "run", "distance_km": f"{dist}", "duration_min": f"{dur}",
                       "pace_min_per_km": mmss(pace), "avg_heart_rate": f"{hr}"})

    def card_record(self, d: date, opp: str, k: int) -> Record:
        rng = self.rng
        colours = ["red", "blue", "green", "yellow"]
        while True:
            c1, c2 = rng.choice(colours), rng.choice(colours)
            v1, v2 = rng.randint(1, 9), rng.randint(1, 9)
            if v1 != v2:
                break
        winner = "me" if v1 > v2 else opp
        pts = v1 + v2 + (5 if c1 == c2 else 0)  # house rule: same colour adds a 5-point bonus
        return Record("card", d, {"my_card_colour": c1, "my_card_value": v1, "opponent": opp,
                                  "opponent_card_colour": c2, "opponent_card_value": v2, "winner": winner, "points": pts},
                      {"my_card_value": str(v1), "opponent_card_value": str(v2), "points": str(pts),
                       "my_card_colour": c1, "opponent_card_colour": c2, "opponent": opp,
                       "winner": "I" if winner == "me" else opp}, extra={"round_no": k})

    # ---------------------------------------------------------- rendering rounds
    def screenshot(self, rec: Record) -> Image.Image:
        rng = self.rng
        layout = rng.choice(["above", "row", "cards"])
        theme = rng.choice(["light", "dark"])
        width = rng.choice([360, 400, 440, 480])
        sub = rec.day.strftime("%a, %d %b").replace(" 0", " ")
        if rec.stream == "sleep":
            labels = {"sleep_duration": rng.choice(["Time asleep", "Total sleep", "Sleep time"]),
                      "deep_sleep": "Deep sleep", "resting_heart_rate": rng.choice(["Resting HR", "Resting heart rate"]),
                      "sleep_score": "Sleep score"}
            title = rng.choice(["Sleep", "Last night", "Sleep summary"])
            chart = "stages"
        else:
            labels = {"time_in_range": "Time in range", "average_glucose": rng.choice(["Average glucose", "Avg glucose"]),
                      "glucose_cv": rng.choice(["Glucose variability (CV)", "Variability (CV)"])}
            title = rng.choice(["Daily Glucose", "Glucose today", "Glucose dashboard"])
            chart = "glucose"
        fields = [(labels[q], rec.display[q]) for q in labels]
        img = render_dashboard(rng, title, sub, fields, layout, theme, width, chart)
        rec.extra["render"] = {"layout": layout, "theme": theme, "width": width}
        return img

    def render_sleep(self, rec: Record) -> RoundOut:
        rng = self.rng
        disp = rec.display
        mode = rng.choices(["image", "both", "text"], [0.55, 0.28, 0.17])[0]
        if mode == "text":
            rec.where = {q: "text" for q in rec.values}
            user = rng.choice([
                f"Sleep last night: {disp['sleep_duration']}, deep sleep {disp['deep_sleep']}, resting heart rate {disp['resting_heart_rate']}, sleep score {disp['sleep_score']}.",
                f"Slept {disp['sleep_duration']} (deep {disp['deep_sleep']}). Resting HR was {disp['resting_heart_rate']} and the app gave me a sleep score of {disp['sleep_score']}.",
                f"No screenshot today, the app is slow. Total sleep {disp['sleep_duration']}, deep sleep {disp['deep_sleep']}, score {disp['sleep_score']}, resting heart rate {disp['resting_heart_rate']}.",
            ])
            return RoundOut(user, rng.choice(["Logged last night's sleep.", "Thanks, saved.", "Got it."]), [], rec)
        img = self.screenshot(rec)
        caption = rng.choice([
            "Screenshot of the sleep tracking app's nightly summary.",
            "A phone screenshot of last night's sleep summary with a sleep-stage chart.",
            f"{'Dark' if rec.extra['render']['theme'] == 'dark' else 'Light'}-mode screenshot of the sleep app summary.",
        ])
        if mode == "image":
            rec.where = {q: "image" for q in rec.values}
            user = rng.choice(["Here's this morning's sleep summary.", "Sleep app screenshot from last night.",
                               "Can you keep this one? I didn't feel rested.", "Logging my sleep again."])
        else:
            said = rng.sample(list(rec.values), rng.randint(1, 2))
            rec.where = {q: ("both" if q in said else "image") for q in rec.values}
            phrases = {"sleep_duration": f"I got {disp['sleep_duration']} of sleep",
                       "deep_sleep": f"deep sleep was {disp['deep_sleep']}",
                       "resting_heart_rate": f"my resting heart rate was {disp['resting_heart_rate']}",
                       "sleep_score": f"the sleep score was {disp['sleep_score']}"}
            user = "According to the app " + " and ".join(phrases[q] for q in rec.values if q in said) + "."
        return RoundOut(user, rng.choice(["Saved last night's sleep summary.", "Thanks, I've stored it.",
                                          "Got it, added to your sleep log."]), [(png_bytes(img), caption)], rec)

    def render_glucose(self, rec: Record) -> RoundOut:
        rng = self.rng
        disp = rec.display
        mode = rng.choices(["image", "both", "text"], [0.55, 0.28, 0.17])[0]
        if mode == "text":
            rec.where = {q: "text" for q in rec.values}
            user = rng.choice([
                f"Glucose dashboard today: time in range {disp['time_in_range']}, average glucose {disp['average_glucose']}, variability (CV) {disp['glucose_cv']}.",
                f"CGM numbers for today: {disp['time_in_range']} time in range, average {disp['average_glucose']}, glucose CV {disp['glucose_cv']}.",
            ])
            return RoundOut(user, rng.choice(["Recorded today's glucose numbers.", "Thanks, noted."]), [], rec)
        img = self.screenshot(rec)
        caption = rng.choice(["Screenshot of the daily glucose dashboard with a line chart and the target range band.",
                              "A CGM app dashboard for the day, showing the glucose curve.",
                              "Daily glucose dashboard screenshot."])
        if mode == "image":
            rec.where = {q: "image" for q in rec.values}
            user = rng.choice(["Today's glucose dashboard.", "Here's the CGM summary for today.",
                               "Dashboard from today, the afternoon was bumpy."])
        else:
            said = rng.sample(list(rec.values), rng.randint(1, 2))
            rec.where = {q: ("both" if q in said else "image") for q in rec.values}
            phrases = {"time_in_range": f"time in range was {disp['time_in_range']}",
                       "average_glucose": f"my average glucose was {disp['average_glucose']}",
                       "glucose_cv": f"variability came out at {disp['glucose_cv']}"}
            user = "Today's dashboard: " + " and ".join(phrases[q] for q in rec.values if q in said) + "."
        return RoundOut(user, rng.choice(["Saved today's glucose dashboard.", "Thanks, stored with the others."]),
                        [(png_bytes(img), caption)], rec)

    def render_workout(self, rec: Record) -> RoundOut:
        rng = self.rng
        v, s = rec.values, rec.display
        rec.where = {q: "text" for q in rec.values}
        d, dur, hr = s["distance_km"], s["duration_min"], s["avg_heart_rate"]
        if v["activity"] == "run":
            p = s["pace_min_per_km"]
            user = rng.choice([
                f"Morning run: {d} km in {dur} minutes, average heart rate {hr} bpm, pace {p} per km.",
                f"Just got back from a {d} km run. Took me {dur} min at {p}/km, HR averaged {hr}.",
                f"Quick log: run, {d} km, {dur} minutes, avg HR {hr} bpm, {p} min/km.",
                f"Did a {d} kilometre run along the river today: {dur} minutes total ({p} per km), heart rate around {hr} on average.",
                f"Today's run: {p} per km over {d} km, {dur} min. Average heart rate was {hr} bpm.",
            ])
        else:
            user = rng.choice([
                f"Bike ride today: {d} km in {dur} minutes, heart rate averaged {hr} bpm.",
                f"Ride log: {d} km, {dur} minutes, avg heart rate {hr}.",
                f"Took the road bike out for a {d} km ride. {dur} min, average HR {hr} bpm.",
            ])
        assistant = rng.choice(["Nice work, logged.", "Great effort! Saved to your training log.",
                                "Logged. How did your legs feel?", "Solid session, recorded."])
        images = []
        if rng.random() < 0.25:
            cap = rng.choice(WORKOUT_PHOTO_CAPTIONS)
            pal = [(150, 190, 230), (210, 225, 240), (90, 110, 100), (80, 120, 70), (90, 140, 170)]
            images.append((png_bytes(render_photo(rng, "landscape", pal, rng.choice([320, 360, 400]))), cap))
        return RoundOut(user, assistant, images, rec)

    def render_card(self, rec: Record) -> RoundOut:
        rng = self.rng
        v, k, opp = rec.values, rec.extra["round_no"], rec.values["opponent"]
        c1, v1, c2, v2, pts = v["my_card_colour"], v["my_card_value"], v["opponent_card_colour"], v["opponent_card_value"], v["points"]
        rec.where = {q: "text" for q in rec.values}
        won = "I won" if v["winner"] == "me" else f"{opp} won"
        user = rng.choice([
            f"Round {k}: I played a {c1} {v1}, {opp} played {c2} {v2}; {won} {pts} points.",
            f"Round {k}: my {c1} {v1} against {opp}'s {c2} {v2}. {won}, {pts} points.",
            f"Round {k}: {opp} put down a {c2} {v2} and I answered with a {c1} {v1}. {won} {pts} points.",
        ])
        return RoundOut(user, rng.choice(["Logged.", "Noted.", "Got it.", "Recorded that round."]), [], rec)

    def render_talk(self) -> RoundOut:
        rng = self.rng
        u, a = rng.choice(TALK_TEMPLATES)
        n = rng.randint(2, 6)
        vals = {"n": n, "N": ["Two", "Three", "Four", "Five", "Six"][n - 2], "h": rng.randint(3, 6), "h2": 0,
                "p": rng.randint(12, 88), "bpm": rng.choice([145, 150, 155, 160]), "mm": f"{rng.randint(0, 5) * 10 + 5:02d}",
                "k": rng.randint(9, 31), "room": rng.randint(101, 480)}
        vals["h2"] = vals["h"] + 2
        return RoundOut(u.format(**vals), a.format(**vals))

    # ---------------------------------------------------------- build
    def build(self) -> tuple[dict, dict, dict[str, bytes]]:
        rng = self.rng
        plan = self.schedule()
        sessions = []
        images: dict[str, bytes] = {}
        rounds_meta: dict[str, dict] = {}
        for si, (d, items) in enumerate(plan, start=1):
            sid = f"S{si}"
            kinds = [it.kind for it in items]
            if "card_intro" in kinds:
                hour, minute = rng.randint(19, 20), rng.randint(0, 45)
            elif "sleep" in kinds:
                hour, minute = rng.randint(7, 9), rng.randint(0, 50)
            else:
                hour, minute = rng.randint(10, 20), rng.randint(0, 50)
            t = datetime(d.year, d.month, d.day, hour, minute, rng.randint(0, 59))
            dialogues = []
            for k, it in enumerate(items, start=1):
                rid = f"{sid}:R{k}"
                if it.kind == "sleep":
                    ro = self.render_sleep(it.payload)
                elif it.kind == "glucose":
                    ro = self.render_glucose(it.payload)
                elif it.kind == "workout":
                    ro = self.render_workout(it.payload)
                elif it.kind == "card":
                    ro = self.render_card(it.payload)
                elif it.kind == "card_intro":
                    opp, n = it.payload
                    ro = RoundOut(rng.choice([f"Game night with {opp}! I'll log each round of cards here.",
                                              f"Cards with {opp} tonight. Keep score for me, I'll tell you every round."]),
                                  "Ready when you are. Tell me each round.", tag=f"cards_{n}")
                elif it.kind == "event":
                    u, a, facts = EVENTS[it.payload]
                    ro = RoundOut(u, a, tag=it.payload)
                    self.events[it.payload] = {"round": rid, "date": d.isoformat(), **facts}
                elif it.kind == "photo":
                    key, scene, pal, u, cap, _qs, ans = it.payload
                    img = render_photo(rng, scene, pal, rng.choice([320, 360, 400, 440]))
                    ro = RoundOut(u, rng.choice(["Looks lovely!", "Love it.", "That looks great.", "Nice!"]),
                                  [(png_bytes(img), cap)], tag=key)
                    self.photos[key] = {"round": rid, "date": d.isoformat(), "caption": cap, "answer": ans}
                else:
                    ro = self.render_talk()
                if ro.record is not None:
                    ro.record.round = rid
                    self.records.append(ro.record)
                entry = {"round": rid, "time": t.isoformat(), "user": ro.user, "assistant": ro.assistant}
                if ro.images:
                    entry["image_id"], entry["input_image"], entry["image_caption"] = [], [], []
                    for i, (data, cap) in enumerate(ro.images, start=1):
                        rel = f"images/{sid}_R{k}_{i}.png"
                        images[rel] = data
                        entry["image_id"].append(f"{rid}:I{i}")
                        entry["input_image"].append(rel)
                        entry["image_caption"].append(cap)
                dialogues.append(entry)
                rounds_meta[rid] = {"session_id": sid, "date": d.isoformat(), "time": t.isoformat(),
                                    "kind": it.kind, "images": list(entry.get("input_image", []))}
                t += timedelta(minutes=rng.randint(2, 9), seconds=rng.randint(0, 59))
            sessions.append({"session_id": sid, "date": d.isoformat(), "dialogues": dialogues})
        self.rounds_meta = rounds_meta
        qas = QABuilder(self).build()
        demo = {
            "character_profile": {
                "name": "Maya Chen",
                "persona_summary": "Maya is a 34-year-old product designer in Portland who tracks her sleep and glucose, "
                                   "runs (and, from February, rides a road bike), and plays a weekly card game with friends.",
                "traits": ["curious", "data-minded", "sociable", "a little forgetful"],
                "conversation_style": "Casual and short. Shares screenshots, logs workouts in words, chats about daily life.",
            },
            "multi_session_dialogues": sessions,
            "human-annotated QAs": qas,
        }
        observations = []
        for rec in self.records:
            for q, val in rec.values.items():
                observations.append({"round": rec.round, "quantity": q, "value": val, "unit": UNITS[q],
                                     "where": rec.where[q], "stream": rec.stream, "display": rec.display.get(q, str(val))})
        streams: dict[str, list[str]] = {}
        for rec in self.records:
            streams.setdefault(rec.stream, []).append(rec.round)
        truth = {
            "seed": self.seed,
            "period": {"start": START.isoformat(), "end": END.isoformat(),
                       "last_week": [LAST_WEEK[0].isoformat(), LAST_WEEK[1].isoformat()]},
            "observations": observations,
            "streams": streams,
            "rounds": rounds_meta,
            "events": self.events,
            "photos": self.photos,
            "renders": {rec.round: rec.extra["render"] for rec in self.records if "render" in rec.extra},
        }
        return demo, truth, images


# ============================================================ questions

Q = {  # quantity -> (noun phrase, unit word for answers, tolerance for aggregates, tolerance for recorded values)
    "sleep_duration": ("sleep duration", "h", 0.05, 0.02),
    "deep_sleep": ("deep sleep", "min", 1.0, 0.0),
    "resting_heart_rate": ("resting heart rate", "bpm", 0.5, 0.0),
    "sleep_score": ("sleep score", "", 0.5, 0.0),
    "time_in_range": ("time in range", "%", 0.5, 0.0),
    "average_glucose": ("average glucose", "mg/dL", 0.5, 0.0),
    "glucose_cv": ("glucose variability (CV)", "%", 0.1, 0.05),
    "distance_km": ("distance", "km", 0.1, 0.05),
    "duration_min": ("duration", "min", 1.0, 0.0),
    "pace_min_per_km": ("pace", "min/km", 0.05, 0.01),
    "avg_heart_rate": ("average heart rate", "bpm", 0.5, 0.0),
    "points": ("points", "points", 0.5, 0.0),
}


def fmt_number(quantity: str, value: float, aggregated: bool) -> str:
    unit = Q[quantity][1]
    if quantity == "sleep_duration":
        return f"{value:.2f} h" if aggregated else hm(value)
    if quantity == "pace_min_per_km":
        return f"{mmss(value)} min/km"
    if aggregated == "int":
        text = str(int(round(value)))
    elif aggregated:
        text = f"{value:.1f}"
    else:
        text = f"{value:g}"
    return f"{text}{unit}" if unit == "%" else (f"{text} {unit}" if unit else text)


RANGES = {
    "jan": (date(2026, 1, 12), date(2026, 1, 31), ["in January", "during January", "over January"]),
    "feb": (date(2026, 2, 1), date(2026, 2, 28), ["in February", "during February", "across February"]),
    "mar": (date(2026, 3, 1), date(2026, 3, 31), ["in March", "during March", "over the month of March"]),
    "apr": (date(2026, 4, 1), date(2026, 4, 12), ["in April", "so far in April", "since April 1"]),
    "feb_1_14": (date(2026, 2, 1), date(2026, 2, 14), ["in the first two weeks of February", "between February 1 and February 14"]),
    "last_week": (LAST_WEEK[0], LAST_WEEK[1], ["last week", "over the last week", "in the past 7 days"]),
    "mar_h2": (date(2026, 3, 16), date(2026, 3, 31), ["in the second half of March", "from March 16 to the end of March"]),
    "feb10_24": (date(2026, 2, 10), date(2026, 2, 24), ["between February 10 and February 24"]),
}


class QABuilder:
    """Builds the QA list from the generator's records; every gold answer is computed, never typed."""

    def __init__(self, b: DemoBuilder):
        self.b = b
        self.rng = random.Random(b.seed * 1000 + 17)  # own stream: QA phrasing never shifts the history
        self.qas: list[dict] = []

    # ---------------------------------------------------------- record access
    def recs(self, stream: str, rng_key: str | None = None, where: list | None = None) -> list[Record]:
        out = [r for r in self.b.records if r.stream == stream]
        if rng_key:
            lo, hi, _ = RANGES[rng_key]
            out = [r for r in out if lo <= r.day <= hi]
        for q, op, val in where or []:
            out = [r for r in out if q in r.values and _cmp(r.values[q], op, val)]
        return sorted(out, key=lambda r: _rorder(r.round))

    def add(self, qtype: str, question: str, answer: str, kind: str, clue: list[str], spec: dict,
            depends: list[Record] | None = None, dep_q: list[str] | None = None, tol: float | None = None,
            extra_dep: list[tuple[str, str]] | None = None) -> None:
        clue = sorted(dict.fromkeys(clue), key=_rorder)
        sessions = sorted(dict.fromkeys(c.split(":")[0] for c in clue), key=lambda s: int(s[1:]))
        deps = []
        for r in depends or []:
            for q in dep_q or []:
                if q in r.values:
                    deps.append([r.round, q])
        deps += [list(x) for x in extra_dep or []]
        n = len(self.qas) + 1
        qa = {"question": question, "answer": answer, "session_id": sessions, "clue": clue,
              "query_type": qtype, "sample_id": f"DEMO_q{n:03d}", "answer_kind": kind}
        if kind == "number":
            qa["tolerance"] = tol if tol is not None else 0.0
        qa["meta"] = {"spec": spec, "depends_on": deps}
        self.qas.append(qa)

    def pick(self, options: list[str]) -> str:
        return self.rng.choice(options)

    # ---------------------------------------------------------- analytic families
    def aggregate(self, qtype: str, op: str, stream: str, q: str, rk: str | None, templates: list[str],
                  where: list | None = None, wtext: str = "") -> bool:
        rs = self.recs(stream, rk, where)
        if len(rs) < 2:
            return False
        vals = [r.values[q] for r in rs]
        if op == "avg":
            v = statistics.fmean(vals)
        elif op == "sum":
            v = sum(vals)
        elif op == "count":
            v = len(rs)
        else:
            raise ValueError(op)
        rphrase = self.pick(RANGES[rk][2]) if rk else ""
        text = self.pick(templates).format(range=rphrase, where=wtext).replace("  ", " ").strip()
        text = text[0].upper() + text[1:]
        spec = {"op": op, "stream": stream, "quantity": q, "range": _range_spec(rk), "where": where or []}
        if op == "count":
            ans, tol = str(v), 0.0
            dep_rs = self.recs(stream, rk)
        else:
            ints = op == "sum" and all(isinstance(x, int) for x in vals)
            ans = fmt_number(q, v, "int" if ints else True)
            tol = 0.0 if ints else Q[q][2] * (2 if op == "sum" else 1)
            dep_rs = rs
        dq = [q] + [w[0] for w in where or [] if w[0] != q]
        self.add(qtype, text, ans, "number", [r.round for r in rs], spec, dep_rs, dq, tol)
        return True

    def extreme(self, qtype: str, op: str, stream: str, q: str, rk: str | None, templates: list[str],
                where: list | None = None, as_date: bool = False) -> bool:
        rs = self.recs(stream, rk, where)
        if len(rs) < 2:
            return False
        f = max if op in ("max", "argmax") else min
        best = f(r.values[q] for r in rs)
        hits = [r for r in rs if r.values[q] == best]
        if as_date and len({h.day for h in hits}) != 1:
            return False
        rphrase = self.pick(RANGES[rk][2]) if rk else ""
        text = self.pick(templates).format(range=rphrase).replace("  ", " ").strip()
        text = text[0].upper() + text[1:]
        spec = {"op": op, "stream": stream, "quantity": q, "range": _range_spec(rk), "where": where or []}
        dq = [q] + [w[0] for w in where or [] if w[0] != q]
        if as_date:
            self.add(qtype, text, hits[0].day.isoformat(), "date", [hits[0].round], spec, rs, dq)
        else:
            self.add(qtype, text, fmt_number(q, best, False), "number", [h.round for h in hits], spec, rs, dq, Q[q][3])
        return True

    def endpoint(self, which: str, stream: str, q: str, templates: list[str], where: list | None = None) -> bool:
        rs = self.recs(stream, None, where)
        r = rs[-1] if which == "latest" else rs[0]
        spec = {"op": which, "stream": stream, "quantity": q, "range": None, "where": where or []}
        self.add(which, self.pick(templates), fmt_number(q, r.values[q], False), "number", [r.round], spec, [r], [q], Q[q][3])
        return True

    def trend(self, stream: str, q: str, templates: list[str], months: tuple[str, str] | None = None) -> bool:
        if months:
            a = self.recs(stream, months[0])
            c = self.recs(stream, months[1])
            if len(a) < 2 or len(c) < 2:
                return False
            va, vc = statistics.fmean(r.values[q] for r in a), statistics.fmean(r.values[q] for r in c)
            if abs(va - vc) < 1e-9:
                return False
            words = ("up", "down") if "up or down" in templates[0] else ("higher", "lower")
            ans = words[0] if vc > va else words[1]
            spec = {"op": "trend_avg", "stream": stream, "quantity": q, "range": _range_spec(months[0]),
                    "range2": _range_spec(months[1]), "where": []}
            self.add("trend", self.pick(templates), ans, "updown", [r.round for r in a + c], spec, a + c, [q])
            return True
        rs = self.recs(stream)
        first, last = rs[0], rs[-1]
        if first.values[q] == last.values[q]:
            return False
        ans = "up" if last.values[q] > first.values[q] else "down"
        spec = {"op": "trend_first_last", "stream": stream, "quantity": q, "range": None, "where": []}
        self.add("trend", self.pick(templates), ans, "updown", [first.round, last.round], spec, [first, last], [q])
        return True

    def lookup(self, stream: str, q: str, rec: Record, templates: list[str], qtype: str = "single_fact",
               anchor: str | None = None) -> None:
        dstr = nice_date(rec.day)
        text = self.pick(templates).format(date=dstr)
        clue = [rec.round]
        spec = {"op": "lookup", "stream": stream, "quantity": q, "date": rec.day.isoformat(), "where": []}
        if anchor:
            clue.append(self.b.events[anchor]["round"])
            spec["anchor"] = anchor
            if stream == "workout":
                spec["where"] = [["activity", "=", rec.values["activity"]]]
        self.add(qtype, text, fmt_number(q, rec.values[q], False), "number", clue, spec, [rec], [q], Q[q][3])

    # ---------------------------------------------------------- all questions
    def build(self) -> list[dict]:
        rng = self.rng
        A = self.aggregate
        run = [["activity", "=", "run"]]
        ride = [["activity", "=", "ride"]]
        # average
        A("average", "avg", "sleep", "sleep_duration", None, ["What is my average sleep duration across all the nights I logged?",
          "On average, how long did I sleep per night?", "How many hours did I sleep on average?"])
        A("average", "avg", "sleep", "resting_heart_rate", None, ["What was my average resting heart rate over the whole period?",
          "Across all my sleep logs, what's the mean resting heart rate?"])
        A("average", "avg", "sleep", "sleep_score", None, ["What's my average sleep score?", "On average, what sleep score did the app give me?"])
        A("average", "avg", "glucose", "time_in_range", None, ["What is my average time in range across all dashboards?",
          "On average, what percentage of time was my glucose in range?"])
        A("average", "avg", "glucose", "average_glucose", None, ["Averaged over all my dashboards, what was my average glucose?"])
        A("average", "avg", "workout", "distance_km", None, ["How long were my runs on average?", "What's my average run distance?"], run)
        A("average", "avg", "workout", "avg_heart_rate", None, ["What was my average heart rate on rides, on average?",
          "Across my bike rides, what was the mean of the average heart rates?"], ride)
        A("average", "avg", "card", "points", None, ["How many points were won per round on average across all game nights?"])
        A("average", "avg", "sleep", "deep_sleep", None, ["How much deep sleep did I get per night on average?"])
        A("average", "avg", "glucose", "glucose_cv", None, ["What is my average glucose variability (CV)?"])
        # sum
        A("sum", "sum", "workout", "distance_km", None, ["How many kilometres did I run in total?", "What's my total running distance?"], run)
        A("sum", "sum", "workout", "distance_km", None, ["How far did I ride in total on the road bike?"], ride)
        A("sum", "sum", "workout", "duration_min", None, ["How many minutes did I spend working out in total?",
          "What's the total duration of all my workouts, in minutes?"])
        A("sum", "sum", "card", "points", None, ["How many points did Sam win in total across all our game nights?"], [["winner", "=", "Sam"]])
        A("sum", "sum", "card", "points", None, ["How many points did I win in total in the card games?",
          "What's my total points haul from all the card rounds I won?"], [["winner", "=", "me"]])
        A("sum", "sum", "card", "points", None, ["How many points did Leo win altogether?"], [["winner", "=", "Leo"]])
        A("sum", "sum", "workout", "duration_min", None, ["How many minutes did I spend riding in total?"], ride)
        # count
        A("count", "count", "sleep", "sleep_duration", None, ["How many nights did I sleep less than 7 hours?",
          "On how many nights was my sleep under 7 hours?"], [["sleep_duration", "<", 7.0]])
        A("count", "count", "workout", "distance_km", None, ["How many runs did I log?", "How many times did I go running?"], run)
        A("count", "count", "workout", "distance_km", None, ["How many runs were longer than 8 km?",
          "How many of my runs went beyond 8 kilometres?"], run + [["distance_km", ">", 8.0]])
        A("count", "count", "glucose", "time_in_range", None, ["How many days was my time in range below 70%?"],
          [["time_in_range", "<", 70]])
        A("count", "count", "card", "points", None, ["How many card rounds did I win?", "In how many rounds of cards did I come out on top?"],
          [["winner", "=", "me"]])
        A("count", "count", "card", "points", None, ["How many rounds did I win against Leo?"], [["winner", "=", "me"], ["opponent", "=", "Leo"]])
        A("count", "count", "sleep", "sleep_score", None, ["How many nights did I get a sleep score of 78 or more?"],
          [["sleep_score", ">=", 78]])
        A("count", "count", "workout", "distance_km", None, ["How many bike rides did I do?"], ride)
        # max / min (recorded values)
        E = self.extreme
        E("max", "max", "workout", "distance_km", None, ["What was my longest run?", "How long was my longest run, in km?"], run)
        E("max", "max", "sleep", "sleep_duration", None, ["What was the longest I slept in one night?"])
        E("max", "max", "glucose", "average_glucose", None, ["What was my highest daily average glucose?"])
        E("max", "max", "card", "points", None, ["What's the most points anyone won in a single round of cards?"])
        E("max", "max", "sleep", "sleep_score", "mar", ["What was my best sleep score {range}?"])
        E("max", "max", "workout", "avg_heart_rate", None, ["What was the highest average heart rate I had on a run?"], run)
        E("min", "min", "sleep", "resting_heart_rate", None, ["What's the lowest resting heart rate I recorded?"])
        E("min", "min", "workout", "pace_min_per_km", None, ["What was my fastest running pace?", "What's the quickest pace I ran at?"], run)
        E("min", "min", "glucose", "time_in_range", None, ["What was my lowest time in range?"])
        E("min", "min", "sleep", "deep_sleep", "feb", ["What was the least deep sleep I got {range}?"])
        E("min", "min", "sleep", "sleep_duration", None, ["What was my shortest night of sleep?"])
        E("min", "min", "glucose", "glucose_cv", None, ["What was my lowest glucose variability (CV)?"])
        # yes/no over extremes
        self.yes_no_extreme("max", "sleep", "sleep_duration", 8.0, ">", "Did I ever sleep more than 8 hours in a night?")
        self.yes_no_extreme("min", "glucose", "time_in_range", 55, "<", "Did my time in range ever drop below 55%?")
        self.yes_no_extreme("max", "workout", "distance_km", 15.0, ">", "Did I ever run more than 15 km?", run)
        self.yes_no_extreme("min", "sleep", "resting_heart_rate", 56, "<", "Did my resting heart rate ever go below 56 bpm?")
        # argmax / argmin (which date)
        E("argmax", "argmax", "sleep", "sleep_duration", None, ["On which day did I sleep the longest?",
          "When did I get my longest night of sleep?"], as_date=True)
        E("argmax", "argmax", "workout", "distance_km", None, ["On what date did I do my longest run?"], run, as_date=True)
        E("argmin", "argmin", "glucose", "time_in_range", None, ["Which day had my worst time in range?"], as_date=True)
        E("argmax", "argmax", "glucose", "glucose_cv", "mar", ["When {range} was my glucose variability highest?"], as_date=True)
        E("argmin", "argmin", "sleep", "sleep_score", None, ["Which night got my lowest sleep score?"], as_date=True)
        E("argmax", "argmax", "card", "points", None, ["On which game night did I win a round worth the most points?"],
          [["winner", "=", "me"]], as_date=True)
        E("argmin", "argmin", "workout", "pace_min_per_km", "mar", ["On which day {range} did I run my fastest pace?"], run, as_date=True)
        E("argmax", "argmax", "workout", "distance_km", None, ["When was my longest bike ride?"], ride, as_date=True)
        # latest / first
        P = self.endpoint
        P("latest", "sleep", "sleep_score", ["What was my most recent sleep score?", "What's the latest sleep score I logged?"])
        P("latest", "glucose", "average_glucose", ["What was my average glucose on the latest dashboard?"])
        P("first", "sleep", "resting_heart_rate", ["What was the first resting heart rate I recorded?"])
        P("first", "glucose", "time_in_range", ["What was my time in range on my first dashboard?"])
        P("latest", "workout", "distance_km", ["How far was my most recent run?"], run)
        P("first", "workout", "distance_km", ["How far did I go on the first run I logged?"], run)
        self.card_date_endpoint("latest", "Leo", "When did I last play cards with Leo?")
        self.card_date_endpoint("first", "Sam", "When was my first game night with Sam?")
        # date-range aggregates
        A("date_range", "avg", "sleep", "sleep_duration", "mar", ["How much did I sleep on average {range}?",
          "What was my average sleep duration {range}?"])
        A("date_range", "avg", "sleep", "resting_heart_rate", "last_week", ["What was my average resting heart rate {range}?"])
        A("date_range", "avg", "glucose", "time_in_range", "feb", ["What was my average time in range {range}?"])
        A("date_range", "avg", "glucose", "average_glucose", "feb_1_14", ["What was my mean glucose {range}?"])
        A("date_range", "sum", "workout", "distance_km", "mar", ["How many kilometres did I run {range}?"], run)
        A("date_range", "count", "workout", "distance_km", "feb", ["How many workouts did I log {range}?"])
        A("date_range", "avg", "sleep", "sleep_score", "jan", ["What was my average sleep score {range}?"])
        A("date_range", "sum", "workout", "duration_min", "mar_h2", ["How many minutes did I train {range}?"])
        A("date_range", "avg", "sleep", "deep_sleep", "apr", ["How much deep sleep did I average {range}?"])
        A("date_range", "count", "sleep", "sleep_duration", "feb10_24", ["How many sleep logs do I have {range}?"])
        A("date_range", "avg", "glucose", "glucose_cv", "last_week", ["What was my average glucose CV {range}?"])
        # filtered aggregates
        A("filtered", "avg", "workout", "avg_heart_rate", None, ["What was my average heart rate on runs longer than 8 km?",
          "On runs over 8 km, what was my heart rate on average?"], run + [["distance_km", ">", 8.0]])
        A("filtered", "avg", "workout", "avg_heart_rate", None, ["What was my average heart rate on runs shorter than 6 km?"],
          run + [["distance_km", "<", 6.0]])
        A("filtered", "avg", "sleep", "sleep_score", None, ["What was my average sleep score on nights when I slept over 7.5 hours?"],
          [["sleep_duration", ">", 7.5]])
        A("filtered", "avg", "sleep", "deep_sleep", None, ["On nights with a resting heart rate of 60 bpm or more, how much deep sleep did I average?"],
          [["resting_heart_rate", ">=", 60]])
        A("filtered", "sum", "card", "points", None, ["How many points did I win in rounds where I played a red card?"],
          [["winner", "=", "me"], ["my_card_colour", "=", "red"]])
        A("filtered", "avg", "glucose", "average_glucose", None, ["What was my average glucose on days with time in range of at least 75%?"],
          [["time_in_range", ">=", 75]])
        A("filtered", "avg", "workout", "distance_km", None, ["How long were my runs on average when my pace was under 5:30 per km?"],
          run + [["pace_min_per_km", "<", 5.5]])
        A("filtered", "sum", "workout", "distance_km", None, ["How many kilometres did I ride on rides where my heart rate averaged over 130 bpm?"],
          ride + [["avg_heart_rate", ">", 130]])
        # trend
        T = self.trend
        T("sleep", "resting_heart_rate", ["Did my resting heart rate go up or down from my first sleep log to my last?",
          "Between my first and my most recent sleep screenshot, did my resting heart rate rise or fall?"])
        T("glucose", "time_in_range", ["Has my time in range gone up or down since the first dashboard?"])
        T("glucose", "average_glucose", ["From the first dashboard to the latest, did my average glucose increase or decrease?"])
        T("sleep", "sleep_duration", ["Was my average sleep duration higher or lower in March than in January?"], ("jan", "mar"))
        T("sleep", "resting_heart_rate", ["Compared with January, was my average resting heart rate higher or lower in March?"], ("jan", "mar"))
        T("glucose", "glucose_cv", ["Was my glucose variability higher or lower in March compared with February?"], ("feb", "mar"))
        T("sleep", "sleep_score", ["Did my average sleep score go up or down from February to March?"], ("feb", "mar"))
        T("workout", "avg_heart_rate", ["Did my average workout heart rate go up or down between January and March?"], ("jan", "mar"))
        # card specials
        self.card_mode_colour()
        self.card_night_winner()
        # progressive
        self.progressive()
        # single facts
        self.single_facts()
        # caption-only visual retrieval
        for key, _scene, _pal, _u, _cap, qs, ans in PHOTOS:
            ph = self.b.photos[key]
            self.add("visual", self.pick(qs), ans, "text", [ph["round"]], {"op": "caption", "photo": key})
        # refusals
        for q, topic in REFUSALS:
            self.add("refusal", q, "Not mentioned", "refusal", [], {"op": "refusal", "topic": topic})
        return self.qas

    def yes_no_extreme(self, op: str, stream: str, q: str, thr: float, cmp: str, question: str, where: list | None = None) -> None:
        rs = self.recs(stream, None, where)
        hits = [r for r in rs if _cmp(r.values[q], cmp, thr)]
        spec = {"op": "exists", "stream": stream, "quantity": q, "range": None, "where": (where or []) + [[q, cmp, thr]]}
        clue = [r.round for r in hits] if hits else []
        self.add(op, question, "yes" if hits else "no", "yesno", clue, spec, rs, [q])

    def card_date_endpoint(self, which: str, opp: str, question: str) -> None:
        rs = self.recs("card", None, [["opponent", "=", opp]])
        r = rs[-1] if which == "latest" else rs[0]
        spec = {"op": which + "_date", "stream": "card", "quantity": "opponent", "range": None, "where": [["opponent", "=", opp]]}
        self.add(which, question, r.day.isoformat(), "date", [r.round], spec, rs, ["opponent"])

    def card_mode_colour(self) -> None:
        rs = self.recs("card")
        counts: dict[str, int] = {}
        for r in rs:
            counts[r.values["my_card_colour"]] = counts.get(r.values["my_card_colour"], 0) + 1
        top = max(counts.values())
        best = [c for c in counts if counts[c] == top]
        if len(best) != 1:
            return
        spec = {"op": "mode", "stream": "card", "quantity": "my_card_colour", "range": None, "where": []}
        self.add("max", self.pick(["Which colour did I play most often in the card games?",
                                   "What card colour did I play the most?"]), best[0], "text",
                 [r.round for r in rs if r.values["my_card_colour"] == best[0]], spec, rs, ["my_card_colour"])

    def card_night_winner(self) -> None:
        nights = sorted({r.day for r in self.recs("card")})
        done = 0
        for d in nights[1::3]:
            rs = [r for r in self.recs("card") if r.day == d]
            tot: dict[str, int] = {}
            for r in rs:
                tot[r.values["winner"]] = tot.get(r.values["winner"], 0) + r.values["points"]
            ranked = sorted(tot.items(), key=lambda kv: -kv[1])
            if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
                continue
            opp = rs[0].values["opponent"]
            spec = {"op": "group_winner", "stream": "card", "quantity": "points", "date": d.isoformat(), "where": []}
            q = self.pick([f"Did I win more points than {opp} on the game night of {nice_date(d)}?",
                           f"On {nice_date(d)}, did I score more points at cards than {opp}?"])
            self.add("sum", q, "yes" if ranked[0][0] == "me" else "no", "yesno", [r.round for r in rs], spec, rs,
                     ["points", "winner"])
            done += 1
            if done == 2:
                break

    def progressive(self) -> None:
        ev = self.b.events

        def rec_on(stream: str, day: str, where: list | None = None) -> Record:
            rs = [r for r in self.recs(stream, None, where) if r.day.isoformat() == day]
            assert len(rs) == 1, (stream, day, len(rs))
            return rs[0]

        self.lookup("sleep", "resting_heart_rate", rec_on("sleep", ev["bike"]["date"]),
                    ["What was my resting heart rate on the day I bought the bike?",
                     "On the day I got my road bike, what was my resting heart rate?"], "progressive", "bike")
        self.lookup("glucose", "time_in_range", rec_on("glucose", ev["dentist"]["date"]),
                    ["What was my time in range on the day of my dentist appointment?"], "progressive", "dentist")
        self.lookup("sleep", "sleep_score", rec_on("sleep", ev["concert"]["date"]),
                    ["What sleep score did I get the night of the Midnight Owls concert?"], "progressive", "concert")
        self.lookup("workout", "avg_heart_rate", rec_on("workout", ev["coffee"]["date"]),
                    ["What was my average heart rate on my run the day I had coffee with Priya?"], "progressive", "coffee")
        self.lookup("sleep", "deep_sleep", rec_on("sleep", ev["boston"]["date"]),
                    ["How much deep sleep did I get on the day I got back from Boston?"], "progressive", "boston")
        self.lookup("glucose", "average_glucose", rec_on("glucose", ev["manager"]["date"]),
                    ["What was my average glucose on the day I met my new manager?"], "progressive", "manager")
        # first ride after the bike purchase
        bike_day = date.fromisoformat(ev["bike"]["date"])
        rides = [r for r in self.recs("workout", None, [["activity", "=", "ride"]]) if r.day > bike_day]
        r = rides[0]
        spec = {"op": "first_after", "stream": "workout", "quantity": "distance_km", "anchor": "bike",
                "where": [["activity", "=", "ride"]]}
        self.add("progressive", "How far did I ride on my first ride after buying the road bike?",
                 fmt_number("distance_km", r.values["distance_km"], False), "number",
                 [ev["bike"]["round"], r.round], spec, [r], ["distance_km"], Q["distance_km"][3])
        # runs after the race sign-up
        race_day = date.fromisoformat(ev["race"]["date"])
        runs = [r for r in self.recs("workout", None, [["activity", "=", "run"]]) if r.day > race_day]
        spec = {"op": "count_after", "stream": "workout", "quantity": "distance_km", "anchor": "race",
                "where": [["activity", "=", "run"]]}
        self.add("progressive", "How many runs did I log after signing up for the Riverside 10K?", str(len(runs)), "number",
                 [ev["race"]["round"]] + [r.round for r in runs], spec,
                 self.recs("workout", None, [["activity", "=", "run"]]), ["activity"], 0.0)

    def single_facts(self) -> None:
        ev = self.b.events
        facts = [
            ("bike", "How much did I pay for the road bike?", "1450 USD", "number", 0.0),
            ("bike", "Where did I buy my road bike?", ev["bike"]["shop"], "text", None),
            ("bike", "What colour is my road bike?", ev["bike"]["bike_colour"], "text", None),
            ("dentist", "What did my dentist advise me to do about coffee?", ev["dentist"]["advice"], "text", None),
            ("dentist", "What's my dentist's name?", ev["dentist"]["dentist"], "text", None),
            ("boston", "Which city does my sister live in?", ev["boston"]["city"], "text", None),
            ("manager", "What's the name of my new manager?", ev["manager"]["manager"], "text", None),
            ("physio", "What exercise did my physio recommend for my calf?", ev["physio"]["exercise"], "text", None),
            ("plant", "What did I name my fiddle-leaf fig?", ev["plant"]["plant"], "text", None),
            ("race", "When is the Riverside 10K?", ev["race"]["race_date"], "date", None),
            ("headphones", "How much were the noise-cancelling headphones?", "199 USD", "number", 0.0),
            ("coffee", "Where is Priya moving to?", ev["coffee"]["friend_city"], "text", None),
        ]
        for key, q, ans, kind, tol in facts:
            spec = {"op": "event_fact", "event": key}
            self.add("single_fact", q, ans, kind, [ev[key]["round"]], spec, tol=tol)
        # record lookups: prefer image-only records so the screenshot must be read
        for stream, q, tmpl in [
            ("sleep", "sleep_score", ["What was my sleep score on {date}?", "What sleep score did I get on {date}?"]),
            ("glucose", "average_glucose", ["What was my average glucose on {date}?"]),
            ("sleep", "sleep_duration", ["How long did I sleep on the night logged on {date}?"]),
            ("glucose", "time_in_range", ["What was my time in range on {date}?"]),
            ("workout", "distance_km", ["How far did I run on {date}?"]),
        ]:
            rs = self.recs(stream, None, [["activity", "=", "run"]] if stream == "workout" else None)
            imgs = [r for r in rs if r.where.get(q) == "image"] or rs
            rec = imgs[self.rng.randrange(len(imgs))]
            self.lookup(stream, q, rec, tmpl)


def _cmp(a, op: str, b) -> bool:
    return {"=": a == b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]


def _rorder(rid: str) -> tuple[int, int]:
    s, r = rid.split(":")[:2]
    return int(s[1:]), int(r[1:])


def _range_spec(rk: str | None) -> list[str] | None:
    if not rk:
        return None
    lo, hi, _ = RANGES[rk]
    return [lo.isoformat(), hi.isoformat()]


# ============================================================ writing

def generate(out: Path, seed: int = 7) -> dict:
    """Write demo.json, truth.json and images/ into `out` (replacing its images/); return counts."""
    demo, truth, images = DemoBuilder(seed).build()
    out.mkdir(parents=True, exist_ok=True)
    img_dir = out / "images"
    if img_dir.exists():
        shutil.rmtree(img_dir)
    img_dir.mkdir()
    for rel, data in sorted(images.items()):
        (out / rel).write_bytes(data)
    (out / "demo.json").write_text(json.dumps(demo, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "truth.json").write_text(json.dumps(truth, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    sessions = demo["multi_session_dialogues"]
    qas = demo["human-annotated QAs"]
    by_type: dict[str, int] = {}
    for qa in qas:
        by_type[qa["query_type"]] = by_type.get(qa["query_type"], 0) + 1
    return {"sessions": len(sessions), "rounds": sum(len(s["dialogues"]) for s in sessions), "images": len(images),
            "image_bytes": sum(len(b) for b in images.values()), "qas": len(qas), "by_type": by_type}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "demo")
    args = ap.parse_args(argv)
    stats = generate(args.out, args.seed)
    print(json.dumps(stats, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
