"""The domain bank: domains -> candidate record streams -> fields with label variants and units.

Written for variety, independently of the engine's vocabulary. Each numeric field has a
canonical id (only for truth), 3-5 base label words (full word, abbreviation, initials,
another word with the same meaning; the renderer adds ALL CAPS, trailing '.'/':' and
'(unit)' styles), a canonical unit with alternative spellings, optionally a convertible
unit, a value range and precision, and the share of records carrying it.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Alt:
    """A convertible unit: display = canonical * factor."""
    unit: str
    factor: float
    spellings: tuple[str, ...]
    decimals: int


@dataclass(frozen=True)
class Field:
    qid: str
    labels: tuple[str, ...]
    unit: str = ""                     # canonical unit ("" for counts / scores / text)
    spellings: tuple[str, ...] = ()
    lo: float = 0
    hi: float = 0
    decimals: int = 0
    p: float = 1.0                     # share of records with this field
    alt: Alt | None = None
    choices: tuple[str, ...] = ()      # text field when non-empty

    @property
    def is_text(self) -> bool:
        return bool(self.choices)


@dataclass(frozen=True)
class Stream:
    name: str
    noun: str            # one record: "watering"
    plural: str          # "waterings"
    did: str             # past-tense phrase for "how many times did I ...": "water a plant"
    devices: tuple[str, ...]   # app / device / shop titles printed on images
    intros: tuple[str, ...]    # openers of text records
    fields: tuple[Field, ...]
    picture: str = "screen"    # screen | receipt | display


@dataclass(frozen=True)
class Domain:
    name: str
    persona: str
    streams: tuple[Stream, ...]
    oneoffs: tuple[tuple[str, str, str, float, float], ...] = ()  # (template with {v}, label, unit, lo, hi)
    photos: tuple[str, ...] = ()   # captions of photos with no record
    refusals: tuple[str, ...] = ()  # things that never occur (for refusal questions)


def N(qid, labels, unit="", spellings=(), lo=0, hi=10, decimals=0, p=1.0, alt=None):
    sp = tuple(spellings) or ((unit,) if unit else ())
    return Field(qid, tuple(labels), unit, sp, lo, hi, decimals, p, alt)


def T(qid, labels, choices, p=1.0):
    return Field(qid, tuple(labels), choices=tuple(choices), p=p)


ML_L = Alt("L", 0.001, ("L", "l", "ltr"), 2)
G_KG = Alt("kg", 0.001, ("kg", "KG", "kgs"), 2)
MIN_H = Alt("h", 1 / 60, ("h", "hr", "hrs"), 2)
L_ML = Alt("ml", 1000.0, ("ml", "mL"), 0)
KG_G = Alt("g", 1000.0, ("g", "gr"), 0)
H_MIN = Alt("min", 60.0, ("min", "mins"), 0)

ML = ("ml", "mL", "ML", "millilitres")
G = ("g", "gr", "grams")
MINS = ("min", "mins", "minutes", "m")
PCT = ("%", "percent", "pct")
DEGC = ("°C", "C", "degC", "deg C")
USD = ("USD", "$", "dollars")
EUR = ("EUR", "€", "euros")
KM = ("km", "KM", "kilometres")
L = ("L", "l", "litres", "ltr")
KG = ("kg", "KG", "kilos")

DOMAINS: tuple[Domain, ...] = (
    Domain(
        "plants", "keeps about thirty houseplants in a city flat and logs their care",
        (
            Stream("watering", "watering", "waterings", "water the plants", ("PlantPal", "Leafy Log", "GreenThumb"),
                   ("Watered today:", "Plant care —", "Just finished watering."),
                   (N("water_ml", ["Water", "H2O", "Watered", "Irrigation"], "ml", ML, 120, 900, 0, alt=ML_L),
                    T("plant", ["Plant", "Specimen", "Pot"], ["Monstera", "Pothos", "Calathea", "Fiddle leaf fig", "Snake plant", "Peace lily"]),
                    N("soil_moisture_pct", ["Soil moisture", "Moist.", "Moisture", "SM"], "%", PCT, 12, 68, 0, p=0.7))),
            Stream("light", "light reading", "light readings", "measure the light", ("LuxMeter Pro", "Photon"),
                   ("Light meter by the window:", "Checked the light."),
                   (N("illuminance_lux", ["Illuminance", "Light", "Lux level", "Illum."], "lux", ("lux", "lx", "LUX"), 800, 22000, 0),
                    N("daylight_h", ["Daylight", "Light hours", "Sun time", "DL"], "h", ("h", "hrs", "hours"), 6, 14, 1, alt=H_MIN),
                    N("leaf_temp_c", ["Leaf temperature", "Leaf temp", "LT", "Leaf T"], "°C", DEGC, 17, 29, 1, p=0.6))),
            Stream("fertilizing", "feeding", "feedings", "fertilize", ("Grow Journal", "FeedTrack"),
                   ("Fed the plants.", "Fertilizer day:"),
                   (N("fertilizer_ml", ["Fertilizer", "Fert.", "Nutrient dose", "Feed"], "ml", ML, 2, 20, 0),
                    N("dilution_l", ["Dilution water", "Diluted in", "Mix volume", "Dil."], "L", L, 1, 5, 1, alt=L_ML),
                    N("npk_ratio_n", ["Nitrogen", "N value", "N"], "%", PCT, 2, 12, 0, p=0.6))),
            Stream("growth", "growth check", "growth checks", "measure a plant", ("PlantPal", "Tape & Notes"),
                   ("Measured the plants.", "Growth check:"),
                   (N("height_cm", ["Height", "Ht.", "Tallness", "H"], "cm", ("cm", "CM", "centimetres"), 20, 160, 1),
                    N("leaf_count", ["Leaves", "Leaf count", "New leaves", "LC"], "", (), 3, 40, 0),
                    T("plant", ["Plant", "Specimen"], ["Monstera", "Pothos", "Calathea", "Fiddle leaf fig", "Snake plant"], p=0.8))),
            Stream("humidity", "humidity reading", "humidity readings", "check the humidity", ("HygroMate", "AirSense"),
                   ("Humidifier check:", "Room air:"),
                   (N("humidity_pct", ["Humidity", "RH", "Rel. humidity", "Hum."], "%", PCT, 35, 78, 0),
                    N("room_temp_c", ["Room temperature", "Temp", "Temp.", "Air temp"], "°C", DEGC, 18, 27, 1),
                    N("mist_min", ["Misting", "Mist time", "Humidifier run"], "min", MINS, 10, 120, 0, p=0.6))),
        ),
        (("Paid {v} for a new terracotta pot.", "pot price", "USD", 12, 40),
         ("The plant shop delivery fee was {v}.", "delivery fee", "USD", 5, 15)),
        ("A sunny windowsill with three small succulents in white pots.", "A hanging pothos trailing down a bookshelf.",
         "A bag of orchid bark and a trowel on the balcony floor."),
        ("orchid bloom count", "cactus graft", "bonsai wiring"),
    ),
    Domain(
        "invoices", "runs a one-person graphic design studio and tracks invoices and costs",
        (
            Stream("invoice", "invoice", "invoices", "send an invoice", ("Ledgerly", "QuickBill", "Studio Books"),
                   ("Sent an invoice.", "Billing update:"),
                   (N("invoice_amount_usd", ["Amount", "Amt", "Invoice total", "Total due"], "USD", USD, 180, 4200, 2),
                    T("client", ["Client", "Customer", "Bill to"], ["Harbor Cafe", "Nordlys AS", "Pine & Co", "Vega Studio", "Quill Books"]),
                    N("billed_hours", ["Hours", "Hrs", "Billable hours", "Time billed"], "h", ("h", "hrs", "hours"), 2, 40, 1, p=0.8))),
            Stream("expense", "expense", "expenses", "log an expense", ("Office Depot", "PaperPlus", "Corner Supply"),
                   ("Business expense:", "Bought supplies."),
                   (N("expense_usd", ["Total", "TOTAL", "Sum", "Amount paid"], "USD", USD, 8, 350, 2),
                    N("tax_usd", ["Tax", "VAT", "Sales tax"], "USD", USD, 0.5, 30, 2, p=0.8),
                    N("items_count", ["Items", "Qty", "No. of items", "Pieces"], "", (), 1, 9, 0, p=0.6)),
                   picture="receipt"),
            Stream("payment", "payment", "payments", "get paid", ("BankNow", "Ledgerly"),
                   ("Payment came in:", "Got paid!"),
                   (N("payment_usd", ["Received", "Payment", "Credit", "Incoming"], "USD", USD, 150, 4000, 2),
                    N("days_late", ["Days late", "Delay", "Overdue days", "Late by"], "days", ("days", "d"), 0, 30, 0, p=0.7),
                    N("fee_usd", ["Fee", "Bank fee", "Charge"], "USD", USD, 0.5, 12, 2, p=0.6))),
            Stream("mileage", "business trip", "business trips", "drive for work", ("MileIQ", "TripLog"),
                   ("Drove to a client.", "Mileage:"),
                   (N("trip_km", ["Distance", "Dist.", "Mileage", "Km driven"], "km", KM, 4, 160, 1),
                    N("parking_usd", ["Parking", "Park fee", "Parking cost"], "USD", USD, 2, 25, 2, p=0.6),
                    N("drive_min", ["Drive time", "Duration", "Time on road"], "min", MINS, 8, 150, 0, p=0.8, alt=MIN_H))),
            Stream("timesheet", "timesheet", "timesheets", "fill a timesheet", ("Toggl-ish", "ClockWise"),
                   ("Timesheet for today:", "Worked on projects."),
                   (N("work_h", ["Worked", "Work time", "Logged hours", "WT"], "h", ("h", "hrs", "hours"), 1, 10, 1, alt=H_MIN),
                    N("projects_count", ["Projects", "Proj.", "Jobs"], "", (), 1, 5, 0),
                    N("breaks_min", ["Breaks", "Break time", "Pause"], "min", MINS, 10, 90, 0, p=0.6))),
        ),
        (("The accountant charged {v} for the annual filing.", "accountant fee", "USD", 300, 600),
         ("Renewed the domain for {v}.", "domain renewal", "USD", 10, 30)),
        ("A desk with two monitors and a drawing tablet.", "Business cards fanned out on a table.",
         "A coffee cup next to a stack of printed proofs."),
        ("payroll taxes", "warehouse rent", "employee bonuses"),
    ),
    Domain(
        "chess", "plays online and club chess and studies openings",
        (
            Stream("games", "game", "games", "play a game", ("LiChessly", "ChessHub", "Club scoresheet"),
                   ("Played a game.", "Game report:"),
                   (T("opponent", ["Opponent", "Opp.", "Vs", "Rival"], ["Ilya", "Bronwen", "Tomasz", "Keiko", "Dev", "Aurelie"]),
                    T("result", ["Result", "Res.", "Outcome"], ["win", "loss", "draw"]),
                    N("moves", ["Moves", "Move count", "Mv", "Length"], "", (), 18, 90, 0),
                    N("rating", ["Rating", "Elo", "Rtg", "My rating"], "", (), 1380, 1620, 0, p=0.8))),
            Stream("puzzles", "puzzle session", "puzzle sessions", "do puzzles", ("PuzzleRush", "Tactics Trainer"),
                   ("Puzzle session:", "Did some tactics."),
                   (N("puzzles_solved", ["Solved", "Puzzles", "Correct", "Hits"], "", (), 4, 40, 0),
                    N("puzzle_rating", ["Puzzle rating", "Tactics rating", "PR", "Score"], "", (), 1500, 2100, 0),
                    N("puzzle_min", ["Time", "Duration", "Minutes spent"], "min", MINS, 5, 60, 0, p=0.7))),
            Stream("openings", "study session", "study sessions", "study openings", ("OpeningTree", "Repertoire Lab"),
                   ("Opening study:", "Worked on my repertoire."),
                   (T("opening", ["Opening", "Line", "Variation"], ["Caro-Kann", "London System", "Najdorf", "Catalan", "King's Indian"]),
                    N("lines_reviewed", ["Lines", "Lines reviewed", "Variations", "Reps"], "", (), 3, 30, 0),
                    N("study_min", ["Study time", "Time", "Session"], "min", MINS, 10, 90, 0, alt=MIN_H))),
            Stream("blitz", "blitz session", "blitz sessions", "play blitz", ("BlitzBoard", "LiChessly"),
                   ("Blitz tonight:", "Some blitz."),
                   (N("blitz_games", ["Games", "Games played", "GP"], "", (), 3, 25, 0),
                    N("blitz_wins", ["Wins", "W", "Won"], "", (), 0, 12, 0),
                    N("blitz_rating", ["Blitz rating", "Blitz", "B-rating"], "", (), 1250, 1550, 0, p=0.8))),
        ),
        (("The club membership was {v} this year.", "membership fee", "EUR", 40, 90),
         ("Bought a new chess clock for {v}.", "clock price", "EUR", 25, 60)),
        ("A wooden chess set mid-game on a cafe table.", "A trophy shelf with a small bronze knight."),
        ("go tournament", "checkers rating", "bridge partner"),
    ),
    Domain(
        "aquarium", "keeps a planted freshwater tank and a shrimp tank",
        (
            Stream("water_test", "water test", "water tests", "test the water", ("AquaTest Kit", "TankLab", "Reef Strip"),
                   ("Tested the tank water:", "Water test results —"),
                   (N("ph", ["pH", "PH", "Acidity", "pH value"], "", (), 6.2, 7.8, 1),
                    N("ammonia_ppm", ["Ammonia", "NH3", "NH3/NH4", "Amm."], "ppm", ("ppm", "mg/L", "PPM"), 0, 1, 2),
                    N("nitrate_ppm", ["Nitrate", "NO3", "Nitr."], "ppm", ("ppm", "mg/L", "PPM"), 2, 40, 0),
                    N("tank_temp_c", ["Temperature", "Temp", "Temp.", "Water temp"], "°C", DEGC, 22, 28, 1, p=0.7))),
            Stream("water_change", "water change", "water changes", "change the water", ("TankLog", "Aquarist Diary"),
                   ("Did a water change.", "Water change:"),
                   (N("changed_l", ["Volume changed", "Changed", "Vol.", "Removed"], "L", L, 5, 40, 1, alt=L_ML),
                    N("change_pct", ["Share changed", "Change %", "Portion", "Pct"], "%", PCT, 10, 50, 0),
                    N("conditioner_ml", ["Conditioner", "Dechlor", "Cond."], "ml", ML, 2, 15, 0, p=0.7))),
            Stream("feeding", "feeding", "feedings", "feed the fish", ("FishFeeder", "TankLog"),
                   ("Fed the fish.", "Feeding:"),
                   (N("food_g", ["Food", "Flakes", "Feed amount", "Fd"], "g", G, 1, 12, 1),
                    T("food_type", ["Food type", "Type", "Kind"], ["flakes", "bloodworms", "pellets", "brine shrimp"]),
                    N("fish_seen", ["Fish counted", "Count", "Seen"], "", (), 8, 24, 0, p=0.6))),
            Stream("light_cycle", "light cycle", "light cycles", "run the lights", ("LumiTank", "LED Controller"),
                   ("Light schedule:", "Tank lights:"),
                   (N("photoperiod_h", ["Photoperiod", "Light on", "Lights", "Period"], "h", ("h", "hrs", "hours"), 6, 10, 1),
                    N("intensity_pct", ["Intensity", "Power", "Brightness", "Int."], "%", PCT, 30, 100, 0),
                    N("co2_bps", ["CO2", "CO2 rate", "Bubbles"], "bps", ("bps", "bubbles/s"), 1, 4, 1, p=0.6))),
        ),
        (("The new canister filter cost {v}.", "filter price", "USD", 80, 160),
         ("Paid {v} for a bag of aquasoil.", "soil price", "USD", 20, 45)),
        ("Neon tetras swimming over green carpet plants.", "A cherry shrimp on a piece of driftwood."),
        ("coral growth", "saltwater salinity", "turtle basking"),
    ),
    Domain(
        "fuel", "drives an old estate car and keeps a careful log of fuel and upkeep",
        (
            Stream("fillup", "fill-up", "fill-ups", "fill up the car", ("Shell Station", "Q8 Easy", "Circle Fuel"),
                   ("Filled up the tank.", "Fuel stop:"),
                   (N("fuel_l", ["Volume", "Litres", "Vol.", "Fuel"], "L", L, 22, 58, 2),
                    N("price_per_l", ["Price/L", "Unit price", "Price per litre", "PPL"], "EUR/L", ("EUR/L", "€/L", "/L"), 1.55, 1.95, 3),
                    N("fuel_cost_eur", ["Total", "TOTAL", "Amount", "To pay"], "EUR", EUR, 35, 110, 2),
                    N("odometer_km", ["Odometer", "Odo", "Mileage", "ODO"], "km", KM, 84000, 99000, 0, p=0.7)),
                   picture="receipt"),
            Stream("trip", "drive", "drives", "drive somewhere", ("CarPlay Trip", "Trip computer"),
                   ("Drove today.", "Trip:"),
                   (N("trip_distance_km", ["Distance", "Dist.", "Trip", "Km"], "km", KM, 6, 240, 1),
                    N("consumption_l100", ["Consumption", "Avg cons.", "Economy", "L/100"], "L/100km", ("L/100km", "l/100 km"), 4.8, 8.9, 1),
                    N("avg_speed_kmh", ["Avg speed", "Speed", "Mean speed", "Ø speed"], "km/h", ("km/h", "kph", "kmh"), 28, 105, 0, p=0.7),
                    N("trip_min", ["Drive time", "Time", "Duration"], "min", MINS, 10, 190, 0, p=0.7, alt=MIN_H)),
                   picture="display"),
            Stream("tyres", "tyre check", "tyre checks", "check the tyres", ("AirPump 3000", "Tyre gauge"),
                   ("Checked the tyres.", "Tyre pressure:"),
                   (N("front_bar", ["Front", "Front tyres", "FL/FR", "Fr."], "bar", ("bar", "BAR"), 2.1, 2.6, 1),
                    N("rear_bar", ["Rear", "Rear tyres", "RL/RR", "Rr."], "bar", ("bar", "BAR"), 2.0, 2.8, 1),
                    N("tread_mm", ["Tread", "Tread depth", "Depth"], "mm", ("mm", "MM"), 3, 8, 1, p=0.6))),
            Stream("wash", "car wash", "car washes", "wash the car", ("SpeedWash", "Bubble Bay"),
                   ("Car wash:", "Washed the car."),
                   (N("wash_eur", ["Price", "Cost", "Paid", "Amount"], "EUR", EUR, 6, 22, 2),
                    N("wash_min", ["Duration", "Time", "Wash time"], "min", MINS, 5, 40, 0),
                    T("program", ["Program", "Prog.", "Wash type"], ["basic", "premium", "wax", "underbody"], p=0.8)),
                   picture="receipt"),
        ),
        (("The annual inspection cost {v}.", "inspection fee", "EUR", 60, 120),
         ("Paid {v} for a new set of wipers.", "wiper price", "EUR", 18, 40)),
        ("A muddy estate car parked by a forest road.", "A dashboard with a coffee cup in the holder."),
        ("electric charging", "motorbike service", "boat fuel"),
    ),
    Domain(
        "baking", "bakes bread and cakes at home and sells some at a market stall",
        (
            Stream("bake", "bake", "bakes", "bake something", ("BakeBook", "Oven Diary", "Crumb Log"),
                   ("Baked today:", "Out of the oven:"),
                   (T("item", ["Item", "Bake", "Product", "Recipe"], ["sourdough", "rye loaf", "focaccia", "brioche", "banana bread", "scones"]),
                    N("flour_g", ["Flour", "Fl.", "Flour weight", "FLR"], "g", G, 250, 1200, 0, alt=G_KG),
                    N("oven_c", ["Oven", "Oven temp", "Temp", "Bake temp"], "°C", DEGC, 160, 250, 0),
                    N("bake_min", ["Bake time", "Time", "Duration", "Baked for"], "min", MINS, 18, 70, 0, p=0.8))),
            Stream("starter", "starter feed", "starter feeds", "feed the starter", ("Levain Tracker", "Jar Cam"),
                   ("Fed the starter.", "Starter update:"),
                   (N("rise_pct", ["Rise", "Growth", "Rise %", "Up"], "%", PCT, 40, 220, 0),
                    N("starter_temp_c", ["Temperature", "Temp", "Temp.", "Jar temp"], "°C", DEGC, 19, 28, 1),
                    N("peak_h", ["Time to peak", "Peak", "Peak after"], "h", ("h", "hrs", "hours"), 3, 12, 1, p=0.7))),
            Stream("market", "market day", "market days", "sell at the market", ("Stall Till", "SquarePay"),
                   ("Market stall report:", "Sold at the market."),
                   (N("loaves_sold", ["Sold", "Items sold", "Units", "Qty sold"], "", (), 8, 60, 0),
                    N("revenue_eur", ["Revenue", "Takings", "Sales", "Total"], "EUR", EUR, 40, 420, 2),
                    N("leftover", ["Left over", "Unsold", "Remaining"], "", (), 0, 12, 0, p=0.7)),
                   picture="receipt"),
            Stream("proof", "proof check", "proof checks", "proof the dough", ("ProofBox", "Dough Cam"),
                   ("Proofing:", "Dough check:"),
                   (N("proof_min", ["Proof time", "Proof", "Rest", "Bulk"], "min", MINS, 45, 300, 0, alt=MIN_H),
                    N("dough_temp_c", ["Dough temp", "Dough T", "Temp"], "°C", DEGC, 22, 28, 1),
                    N("hydration_pct", ["Hydration", "Hydr.", "Water %"], "%", PCT, 60, 85, 0, p=0.7))),
        ),
        (("The new proofing basket cost {v}.", "basket price", "EUR", 15, 35),
         ("Stall rent for the season is {v}.", "stall rent", "EUR", 150, 300)),
        ("A loaf of bread cooling on a wire rack.", "Flour dust on a wooden worktop with a rolling pin."),
        ("wedding cake order", "gluten-free croissant", "chocolate tempering"),
    ),
    Domain(
        "beekeeping", "keeps four beehives on an allotment",
        (
            Stream("inspection", "hive inspection", "hive inspections", "inspect a hive", ("HiveTracks", "BeeNote", "Apiary Log"),
                   ("Hive inspection:", "Opened a hive today."),
                   (T("hive", ["Hive", "Colony", "Box"], ["Hive A", "Hive B", "Hive C", "Hive D"]),
                    N("brood_frames", ["Brood frames", "Brood", "BF", "Frames of brood"], "", (), 2, 10, 0),
                    N("hive_weight_kg", ["Weight", "Hive weight", "Wt.", "Mass"], "kg", KG, 18, 62, 1, alt=KG_G),
                    N("temper", ["Temper", "Calmness", "Mood score"], "", (), 1, 5, 0, p=0.6))),
            Stream("harvest", "honey harvest", "honey harvests", "harvest honey", ("Extractor Log", "HoneyScale"),
                   ("Harvested honey.", "Extraction day:"),
                   (N("honey_kg", ["Honey", "Yield", "Harvest", "Net"], "kg", KG, 2, 22, 2, alt=KG_G),
                    N("frames_extracted", ["Frames", "Frames extracted", "Fr."], "", (), 4, 20, 0),
                    N("moisture_pct", ["Moisture", "Water content", "H2O %"], "%", PCT, 16, 20, 1, p=0.7))),
            Stream("syrup", "syrup feed", "syrup feeds", "feed syrup", ("FeederNotes", "BeeNote"),
                   ("Fed syrup.", "Feeding the bees:"),
                   (N("syrup_l", ["Syrup", "Sugar syrup", "Feed", "Volume"], "L", L, 1, 6, 1, alt=L_ML),
                    N("sugar_kg", ["Sugar", "Sugar used", "Sucrose"], "kg", KG, 1, 5, 1),
                    T("hive", ["Hive", "Colony"], ["Hive A", "Hive B", "Hive C", "Hive D"], p=0.8))),
            Stream("mites", "mite count", "mite counts", "count mites", ("VarroaCheck", "Sticky Board"),
                   ("Mite count:", "Varroa check —"),
                   (N("mites", ["Mites", "Varroa", "Mite count", "VM"], "", (), 0, 60, 0),
                    N("board_days", ["Days on board", "Board days", "Period"], "days", ("days", "d"), 1, 7, 0),
                    N("mite_rate", ["Mites/day", "Daily drop", "Rate"], "", (), 0, 9, 1, p=0.6))),
        ),
        (("The new bee suit cost {v}.", "suit price", "GBP", 60, 120),
         ("Paid {v} for a replacement queen.", "queen price", "GBP", 30, 55)),
        ("Bees on a frame of capped honey.", "Four hives in a row beside a hedge."),
        ("queen marking colour", "wax candle sales", "pollen trap weight"),
    ),
    Domain(
        "meters", "reads the household utility meters and watches the solar panels",
        (
            Stream("electricity", "electricity reading", "electricity readings", "read the electricity meter", ("Smart Meter", "PowerView"),
                   ("Electricity meter:", "Read the power meter."),
                   (N("kwh_used", ["Usage", "Consumption", "Used", "Cons."], "kWh", ("kWh", "KWH", "kwh"), 6, 32, 1),
                    N("meter_kwh", ["Meter", "Reading", "Register", "Rdg"], "kWh", ("kWh", "KWH"), 41000, 43000, 0),
                    N("peak_kw", ["Peak", "Peak load", "Max demand"], "kW", ("kW", "KW"), 2, 9, 1, p=0.7)),
                   picture="display"),
            Stream("water", "water reading", "water readings", "read the water meter", ("AquaMeter", "Water Utility"),
                   ("Water meter:", "Checked the water meter."),
                   (N("water_used_l", ["Water used", "Usage", "Consumption", "Used"], "L", L, 90, 520, 0, alt=Alt("m3", 0.001, ("m3", "m³"), 3)),
                    N("water_meter_m3", ["Meter", "Reading", "Index"], "m3", ("m3", "m³"), 300, 420, 2),
                    N("flow_lpm", ["Max flow", "Flow", "Peak flow"], "L/min", ("L/min", "l/min"), 4, 18, 1, p=0.6)),
                   picture="display"),
            Stream("solar", "solar report", "solar reports", "check the solar panels", ("SunPower App", "Inverter"),
                   ("Solar today:", "The panels produced"),
                   (N("solar_kwh", ["Produced", "Yield", "Generation", "Gen."], "kWh", ("kWh", "KWH"), 1, 28, 1),
                    N("solar_peak_kw", ["Peak power", "Peak", "Max"], "kW", ("kW", "KW"), 0.6, 5.8, 2),
                    N("exported_kwh", ["Exported", "Feed-in", "To grid"], "kWh", ("kWh", "KWH"), 0, 15, 1, p=0.7))),
            Stream("gas", "gas reading", "gas readings", "read the gas meter", ("GasMeter", "Heat Hub"),
                   ("Gas meter:", "Boiler check:"),
                   (N("gas_m3", ["Gas used", "Usage", "Consumption"], "m3", ("m3", "m³"), 0.5, 9, 2),
                    N("boiler_c", ["Flow temp", "Boiler", "Boiler temp"], "°C", DEGC, 45, 72, 0),
                    N("heating_h", ["Heating", "Heating time", "Burner hours"], "h", ("h", "hrs", "hours"), 1, 14, 1, p=0.7))),
        ),
        (("The plumber's call-out was {v}.", "plumber fee", "EUR", 90, 160),
         ("Paid {v} for the smart thermostat.", "thermostat price", "EUR", 120, 220)),
        ("Solar panels on a red tile roof under a blue sky.", "A utility cupboard with pipes and a meter."),
        ("wind turbine output", "heat pump COP", "pool heater"),
    ),
    Domain(
        "birds", "counts birds in the garden and on a local lake",
        (
            Stream("garden_count", "garden count", "garden counts", "count garden birds", ("BirdCount", "eBird-ish", "Feeder Cam"),
                   ("Garden bird count:", "Counted the birds."),
                   (N("species", ["Species", "Spp.", "Kinds", "Species seen"], "", (), 3, 19, 0),
                    N("individuals", ["Individuals", "Birds", "Total birds", "Ind."], "", (), 8, 80, 0),
                    N("count_min", ["Duration", "Time", "Count time", "Watched"], "min", MINS, 10, 60, 0, p=0.8))),
            Stream("lake_count", "lake survey", "lake surveys", "survey the lake", ("WaterfowlCount", "Lake Survey"),
                   ("Lake survey:", "Waterbirds on the lake."),
                   (N("ducks", ["Ducks", "Mallards", "Dabblers"], "", (), 5, 70, 0),
                    N("geese", ["Geese", "Greylag", "Gs."], "", (), 0, 40, 0),
                    N("lake_temp_c", ["Air temp", "Temp", "Temperature"], "°C", DEGC, -4, 18, 1, p=0.7))),
            Stream("feeder", "feeder refill", "feeder refills", "refill the feeder", ("FeedTrack", "Feeder Scale"),
                   ("Refilled the feeder.", "Feeder:"),
                   (N("seed_g", ["Seed", "Seeds", "Mix", "Fill"], "g", G, 200, 1500, 0, alt=G_KG),
                    T("seed_type", ["Seed type", "Mix type", "Food"], ["sunflower hearts", "nyjer", "peanuts", "fat balls"]),
                    N("days_since", ["Days since last", "Interval", "Gap"], "days", ("days", "d"), 1, 6, 0, p=0.6))),
            Stream("nestbox", "nest box check", "nest box checks", "check the nest boxes", ("NestWatch", "BoxCam"),
                   ("Nest box check:", "Peeked into the boxes."),
                   (N("eggs", ["Eggs", "Clutch", "Egg count"], "", (), 0, 9, 0),
                    N("chicks", ["Chicks", "Young", "Nestlings"], "", (), 0, 8, 0),
                    T("box", ["Box", "Nest box", "Site"], ["north box", "oak box", "shed box"], p=0.8))),
        ),
        (("Binocular repair cost {v}.", "repair price", "GBP", 30, 80),
         ("Paid {v} for the bird club membership.", "club fee", "GBP", 15, 30)),
        ("A robin on a snowy fence post.", "A heron standing in the reeds at dawn."),
        ("owl pellet contents", "butterfly transect", "bat detector"),
    ),
    Domain(
        "printing3d", "runs a 3D printer for hobby parts and small orders",
        (
            Stream("print_job", "print job", "print jobs", "print something", ("PrusaLink", "OctoPrint", "Bambu Handy"),
                   ("Print finished:", "Another print done."),
                   (N("filament_g", ["Filament", "Filament used", "Fil.", "Material"], "g", G, 8, 320, 1, alt=G_KG),
                    N("print_min", ["Print time", "Time", "Duration", "Elapsed"], "min", MINS, 20, 900, 0, alt=MIN_H),
                    N("layer_mm", ["Layer height", "Layer", "LH"], "mm", ("mm", "MM"), 0.1, 0.3, 2, p=0.7),
                    T("material", ["Material", "Type", "Filament type"], ["PLA", "PETG", "ABS", "TPU"], p=0.8))),
            Stream("resin", "resin print", "resin prints", "print in resin", ("ChituBox", "Resin Log"),
                   ("Resin print:", "Resin job done."),
                   (N("resin_ml", ["Resin", "Resin used", "Volume"], "ml", ML, 5, 120, 0, alt=ML_L),
                    N("resin_layers", ["Layers", "Layer count", "Slices"], "", (), 400, 3000, 0),
                    N("exposure_s", ["Exposure", "Exp. time", "Cure"], "s", ("s", "sec", "seconds"), 1.5, 3.5, 1, p=0.7))),
            Stream("orders", "order", "orders", "ship an order", ("Etsy Seller", "ShopBoard"),
                   ("Shipped an order.", "Order out:"),
                   (N("order_eur", ["Order total", "Total", "Amount", "Sale"], "EUR", EUR, 9, 140, 2),
                    N("parts", ["Parts", "Pieces", "Qty", "Units"], "", (), 1, 12, 0),
                    N("shipping_eur", ["Shipping", "Postage", "Ship."], "EUR", EUR, 2, 12, 2, p=0.7)),
                   picture="receipt"),
            Stream("maintenance", "printer check", "printer checks", "service the printer", ("PrusaLink", "Printer Notes"),
                   ("Printer maintenance:", "Serviced the printer."),
                   (N("nozzle_c", ["Nozzle", "Nozzle temp", "Hotend"], "°C", DEGC, 190, 260, 0),
                    N("bed_c", ["Bed", "Bed temp", "Plate"], "°C", DEGC, 50, 100, 0),
                    N("print_hours_total", ["Total hours", "Print hours", "Uptime"], "h", ("h", "hrs", "hours"), 200, 900, 0, p=0.7))),
        ),
        (("Bought a hardened steel nozzle for {v}.", "nozzle price", "EUR", 20, 45),
         ("The new PEI sheet cost {v}.", "sheet price", "EUR", 25, 50)),
        ("A benchy boat figure on a print bed.", "A shelf of colourful filament spools."),
        ("laser engraving", "CNC milling", "injection moulding"),
    ),
    Domain(
        "brewing", "brews beer at home in twenty-litre batches",
        (
            Stream("brew_day", "brew day", "brew days", "brew a batch", ("BrewFather", "Brew Notes", "Mash Log"),
                   ("Brew day!", "Brewed a batch:"),
                   (T("style", ["Style", "Beer", "Recipe"], ["pale ale", "stout", "saison", "IPA", "lager"]),
                    N("og", ["OG", "Original gravity", "Start gravity", "O.G."], "", (), 1.038, 1.072, 3),
                    N("batch_l", ["Batch size", "Volume", "Batch", "Vol."], "L", L, 10, 23, 1, alt=L_ML),
                    N("mash_c", ["Mash temp", "Mash", "Strike"], "°C", DEGC, 63, 69, 1, p=0.7))),
            Stream("ferment", "fermentation check", "fermentation checks", "check fermentation", ("iSpindel", "Tilt", "Hydrometer"),
                   ("Fermentation check:", "Checked the fermenter."),
                   (N("gravity", ["Gravity", "SG", "Specific gravity", "Grav."], "", (), 1.006, 1.030, 3),
                    N("ferment_c", ["Temperature", "Temp", "Temp.", "Ferm temp"], "°C", DEGC, 16, 22, 1),
                    N("abv_pct", ["ABV", "Alcohol", "Est. ABV"], "%", PCT, 2, 7, 1, p=0.6))),
            Stream("bottling", "bottling", "bottlings", "bottle a batch", ("Bottle Log", "BrewFather"),
                   ("Bottled today.", "Bottling:"),
                   (N("bottles", ["Bottles", "Btl.", "Bottle count"], "", (), 18, 60, 0),
                    N("priming_g", ["Priming sugar", "Sugar", "Priming"], "g", G, 60, 160, 0),
                    N("bottle_l", ["Volume bottled", "Bottled", "Volume"], "L", L, 8, 22, 1, p=0.7))),
            Stream("hops", "hop purchase", "hop purchases", "buy hops", ("HopShop", "Malt Miller"),
                   ("Bought hops.", "Hop order:"),
                   (N("hops_g", ["Hops", "Weight", "Net wt."], "g", G, 50, 500, 0, alt=G_KG),
                    N("hops_eur", ["Total", "Price", "Paid"], "EUR", EUR, 6, 45, 2),
                    N("alpha_pct", ["Alpha acid", "AA", "Alpha"], "%", PCT, 4, 15, 1, p=0.7)),
                   picture="receipt"),
        ),
        (("The new fermenter cost {v}.", "fermenter price", "EUR", 40, 90),
         ("Paid {v} for a grain mill.", "mill price", "EUR", 80, 150)),
        ("A glass of amber beer on a garden table.", "A steaming brew kettle in a garage."),
        ("cider pressing", "wine barrel", "kombucha SCOBY"),
    ),
    Domain(
        "language", "studies Portuguese and Japanese in the evenings",
        (
            Stream("vocab", "vocabulary session", "vocabulary sessions", "review vocabulary", ("Anki-ish", "WordDeck", "Kotoba"),
                   ("Vocab review:", "Flashcards done."),
                   (N("cards_reviewed", ["Cards", "Reviews", "Cards reviewed", "Rev."], "", (), 20, 300, 0),
                    N("new_words", ["New words", "New", "New cards"], "", (), 0, 25, 0),
                    N("recall_pct", ["Recall", "Accuracy", "Correct %", "Acc."], "%", PCT, 70, 98, 0, p=0.8),
                    N("vocab_min", ["Time", "Study time", "Duration"], "min", MINS, 5, 60, 0, p=0.7))),
            Stream("listening", "listening session", "listening sessions", "listen to podcasts", ("PodLingo", "Listen Log"),
                   ("Listening practice:", "Podcast time."),
                   (N("listen_min", ["Listening", "Listened", "Minutes", "Audio time"], "min", MINS, 10, 120, 0, alt=MIN_H),
                    N("episodes", ["Episodes", "Eps.", "Tracks"], "", (), 1, 5, 0),
                    T("language", ["Language", "Lang.", "Target"], ["Portuguese", "Japanese"], p=0.8))),
            Stream("lessons", "lesson", "lessons", "do a lesson", ("Duolingo-ish", "LingoStreak"),
                   ("Did my lessons.", "Lesson streak:"),
                   (N("xp", ["XP", "Points", "Experience", "Pts"], "", (), 30, 400, 0),
                    N("lessons_done", ["Lessons", "Lessons done", "Units"], "", (), 1, 9, 0),
                    N("streak_days", ["Streak", "Day streak", "Streak length"], "days", ("days", "d"), 5, 120, 0, p=0.8))),
            Stream("writing", "writing exercise", "writing exercises", "write an essay", ("Write&Fix", "Tutor Notes"),
                   ("Writing practice:", "Wrote a short text."),
                   (N("words_written", ["Words", "Word count", "Length"], "", (), 60, 600, 0),
                    N("corrections", ["Corrections", "Errors", "Mistakes", "Fixes"], "", (), 0, 30, 0),
                    N("writing_min", ["Time", "Writing time", "Duration"], "min", MINS, 10, 75, 0, p=0.7))),
            Stream("tutor", "tutor session", "tutor sessions", "meet my tutor", ("iTalki-ish", "Tutor Calendar"),
                   ("Tutor session:", "Class with my tutor."),
                   (N("tutor_min", ["Duration", "Length", "Class time"], "min", MINS, 30, 90, 0),
                    N("tutor_usd", ["Price", "Cost", "Fee", "Paid"], "USD", USD, 12, 40, 2),
                    T("tutor", ["Tutor", "Teacher", "With"], ["Beatriz", "Haruka", "Joao"], p=0.8))),
        ),
        (("The textbook cost {v}.", "book price", "USD", 20, 45),
         ("Paid {v} for the language exam registration.", "exam fee", "USD", 90, 160)),
        ("A notebook with hiragana practice and a pencil.", "A cafe in Lisbon with blue tiles."),
        ("Korean grammar test", "sign language course", "Latin translation"),
    ),
)

BY_NAME = {d.name: d for d in DOMAINS}
