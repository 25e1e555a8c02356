"""The four-slot engine that Quadrat and Zudecken share: four upcards over a stock, groups of matching
upcards taken away and refilled from the stock. A game folder varies it (what matches, group sizes,
what wins) through ``SlotRules``; ``reference.py`` holds the same rules
in plain Python, the tests' oracle."""
