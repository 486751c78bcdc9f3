"""People rate a run's outputs in the browser (`memegauge rate`), and the report compares them with the
run's LLM judges ("People vs judges").

items.py    the seeded, stratified, blinded sample a rater sees
records.py  `HumanRating`, one per rater and item, stored as given
server.py   the page and its JSON API on the local server of `view`
votes.py    page ratings plus the CSV imports, as one list of `HumanRating`
stats.py    the agreement coefficients (pure, seeded)
section.py  the report section's figures (its HTML: `memegauge.report.html.people_blocks`)
"""
