"""Counting pictures (core.planning.counted): "how many photos of X did I share" counts the evidence rounds
whose pictures show X, by their captions, OCR text and what was said with them."""
from __future__ import annotations

from core.planning.counted import count_pictures, counted_phrase
from core.planning.images import RoundImage


def test_the_counted_phrase_is_what_the_pictures_show():
    assert counted_phrase("How many mallow images did Maya share in total?", ("Maya",)) == ("mallow",)
    red = counted_phrase("How many pictures of red clothes were shared in the conversation?")
    assert len(red) == 2 and red[0] == "red"
    assert count_pictures(red, [_img("D1:1", "A red dress and other clothes on a rail")]).n == 1
    assert counted_phrase("How many of the photos I sent in early August 2024 are related to chocolate desserts?") \
        == ("chocolate", "dessert")
    # no picture noun after "how many": no picture is counted ...
    assert counted_phrase("How many eggs did I log?") is None
    # ... unless a person looked through the things counted: they were shown in pictures
    assert counted_phrase("How many cable-knit sweaters did Lin review in total?", ("Lin",)) == \
        ("cable-knit", "sweater")
    assert counted_phrase("How many coat options did Maya initially show?", ("Maya",)) == ("coat", "option")
    assert counted_phrase("How many times did I see the dentist?") is None  # occasions, not pictures
    assert counted_phrase("How many games did I play in May?") is None
    assert counted_phrase("What did the photo show?") is None


def _img(rid, caption, said="", iid=None):
    return RoundImage(rid, iid or f"{rid}:IMG", caption, "", said)


def test_pictures_showing_every_word_are_counted_once_per_round():
    imgs = [_img("D1:1", "Tall foxglove flowers in a garden"), _img("D1:2", "Pink foxglove flower close-up"),
            _img("D1:2", "Foxglove flowers again", iid="D1:2:IMG2"),  # a second image of one round: one count
            _img("D1:3", "A pink flower with crinkled petals", said="Here is the mallow I found"),
            _img("D2:1", "A bowl of soup")]
    pc = count_pictures(("foxglove", "flower"), imgs)
    assert pc.n == 2 and pc.rounds == ("D1:1", "D1:2")
    # what was said with the picture names it too
    assert count_pictures(("mallow",), imgs).rounds == ("D1:3",)
    # a word no picture shows says when or where ("outing"), and is left out; one that none shows at all: None
    assert count_pictures(("flower", "outing"), imgs).n == 3
    assert count_pictures(("cat",), imgs) is None
