"""A small vault for the semantic tests: a few unrelated subjects, each in its own words.

The question "How do I make bread rise?" shares no word with the note that answers it
("Sourdough starter"), which is what vector search is for.
"""

from __future__ import annotations

from pathlib import Path

NOTES = {
    "Kitchen.md": "# Kitchen\n\nHub for cooking notes: [[Sourdough starter]], [[Knife care]], [[Orbit basics]].\n",
    "Sourdough starter.md": (
        "A living culture of wild yeast and lactobacilli leavens the loaf. Feed it flour and water"
        " daily; once it doubles after feeding, it is ready for baking.\n"
    ),
    "Knife care.md": "Hone the blade weekly and sharpen on a whetstone at a 15 degree angle. Never use the dishwasher.\n",
    "Orbit basics.md": (
        "Satellites stay aloft because their sideways velocity matches the curvature of Earth;"
        " low orbits circle the planet every ninety minutes. [[Telescope]]\n"
    ),
    "Telescope.md": "A reflector gathers starlight with a concave mirror; aperture sets how faint a galaxy you can see.\n",
    "Tomatoes.md": "Tomato plants want full sun, deep watering and a stake; pinch the suckers for larger fruit.\n",
}

BREAD_QUESTION = "How do I make bread rise?"


def write_vault(folder: Path, notes: dict[str, str] = NOTES) -> Path:
    """Write ``notes`` (file name -> text; this vault by default) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in notes.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder
