"""People rate a run's outputs in the browser (`memegauge rate`), and the report compares them with the
run's LLM judges ("People vs judges").

part.py     `RatingPart`: a method's side (`Method.rating`: its items, imports, figures and tables),
            in the method's folder (``<method>/rating.py``); the rest of this kit names no method
items.py    the seeded, stratified, blinded sample a rater sees
records.py  `HumanRating`, one per rater and item, stored as given
server.py   the page and its JSON API on the local server of `view`
votes.py    page ratings plus the method's CSV imports, as one list of `HumanRating`
stats.py    the agreement coefficients (pure, seeded)
section.py  the report section's frame and the helpers of its figures
view.py     the section's HTML blocks (the note, then the method's tables)
"""
