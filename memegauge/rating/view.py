"""The "People vs judges" section as report blocks (HTML): one note saying what is compared, then
tables whose cells read "value [low, high]" with n beside them."""

from __future__ import annotations

from typing import Any

from memegauge.report.html import Block, Cell, count, table, text

TITLE = "People vs judges"


def ci_cell(figure: dict[str, Any] | None, percent: bool = False, with_n: bool = False) -> Cell:
    """{value, ci95, n} as "0.62 [0.41, 0.80]" (or percentages), with "n=…" where columns differ in n."""
    value = (figure or {}).get("value")
    if value is None:
        return Cell("–", None)
    shown = (lambda v: f"{100 * v:.1f}%") if percent else (lambda v: f"{v:.3f}")
    ci = figure.get("ci95")
    return Cell(shown(value) + (f" [{shown(ci[0])}, {shown(ci[1])}]" if ci else "") +
                (f" n={figure['n']}" if with_n else ""), value)


def n_of(figure: dict[str, Any] | None) -> Cell:
    return count((figure or {}).get("n"))


def people_blocks(section: dict[str, Any] | None) -> list[Block]:
    if not section:
        return []
    raters = section["raters"]
    blocks = [Block("note", TITLE, text=(
        f"{len(raters)} rater(s): " + ", ".join(f"{name} ({r['rated']} votes, {r['origin']})"
                                               for name, r in raters.items()) +
        ". Each figure is the value on all items with its 95% bootstrap interval (1,000 resamples of the "
        "items, seeded) and n, the items behind it. People rate a run with: memegauge rate RUN."))]
    if "scores" in section:
        blocks += _scores(section["scores"])
    if "labels" in section:
        blocks += _labels(section["labels"])
    if "pairs" in section:
        blocks += _pairs(section["pairs"])
    if "answers" in section:
        blocks += _answers(section["answers"])
    return blocks


def _between(title: str, between: dict[str, Any] | None, figures: dict[str, str]) -> list[Block]:
    if not between:
        return []
    rows = [[text(label), ci_cell(between.get(key)), n_of(between.get(key))] for key, label in figures.items()]
    return [Block("table", f"{title}: {', '.join(between['raters'])} among themselves",
                  table=table(["coefficient", "value [95% CI]", "n items"], rows))]


def _scores(scores: dict[str, Any]) -> list[Block]:
    rows = [[text(rater), count(r["n"]), text(_fmt(r["human_avg_score"])), text(_fmt(r["agent_avg_score"])),
             text(_pct(r["human_failure_rate"])), text(_pct(r["agent_failure_rate"])),
             ci_cell(r["score_icc"]), ci_cell(r["fr_icc"])] for rater, r in scores["vs_scorer"].items()]
    return [Block("table", "AdamMeme scores: each person vs the Scorer (Table 3; ICC(2,1), FR at score < "
                           f"{scores['threshold']:g})",
                  table=table(["rater", "n", "human avg", "Scorer avg", "human FR", "Scorer FR",
                               "ICC score [95% CI]", "ICC FR [95% CI]"], rows)),
            *_between("AdamMeme scores", scores.get("between_raters"),
                      {"icc": "ICC(2,1) (items every person scored)",
                       "krippendorff_alpha_interval": "Krippendorff's α, interval"})]


def _labels(labels: dict[str, Any]) -> list[Block]:
    rows = [[text(rater), ci_cell(r["accuracy"], percent=True), ci_cell(r["kappa"]), n_of(r["accuracy"])]
            for rater, r in labels["vs_miners"].items()]
    return [Block("table", "AdamMeme categories: each person vs the Miners' majority vote (Table 8)",
                  table=table(["rater", "accuracy (same set) [95% CI]", "Cohen's κ per decision [95% CI]",
                               "n memes"], rows)),
            *_between("AdamMeme categories", labels.get("between_raters"),
                      {"mean_pairwise_kappa": "mean pairwise Cohen's κ (the paper's Agreement)",
                       "krippendorff_alpha_nominal": "Krippendorff's α, nominal"})]


def _pairs(pairs: dict[str, Any]) -> list[Block]:
    judges = list(dict.fromkeys(j for r in pairs["vs_judges"].values() for j in r))
    rows = [[text(rater), *[ci_cell(r[j], percent=True, with_n=True) for j in judges]]
            for rater, r in pairs["vs_judges"].items()]
    dims = list(dict.fromkeys(d for r in pairs["vs_joint_by_dimension"].values() for d in r))
    dim_rows = [[text(rater), *[ci_cell(r[d], percent=True) for d in dims]]
                for rater, r in pairs["vs_joint_by_dimension"].items()]
    return [Block("table", "MemeArena: accuracy of each judge against each person's overall vote "
                           "(App. C, Table 5; A / B / tie; a judge does not judge its own battles)",
                  table=table(["rater", *judges], rows)),
            Block("table", "MemeArena: agreement with the joint vote per dimension",
                  table=table(["rater", *dims], dim_rows)),
            *_between("MemeArena votes", pairs.get("between_raters"),
                      {"fleiss_kappa": "Fleiss' κ (battles every person voted on)",
                       "mean_pairwise_kappa": "mean pairwise Cohen's κ",
                       "krippendorff_alpha_nominal": "Krippendorff's α, nominal"})]


def _answers(answers: dict[str, Any]) -> list[Block]:
    rows = []
    for rater, by_type in answers["human_accuracy"].items():
        model = answers["model_on_same_questions"].get(rater, {})
        rows += [[text(rater), text(t), ci_cell(f, percent=True), text(_pct(model.get(t))), n_of(f)]
                 for t, f in by_type.items() if t != "macro"]
        rows.append([text(rater), text("macro"), text(_pct(by_type.get("macro"))), text("–"), text("")])
    return [Block("table", "MemeQA: human accuracy per question type (the Hum row of Tables 2–3)",
                  table=table(["rater", "type", "human accuracy [95% CI]", "model, same questions", "n"], rows)),
            *_between("MemeQA answers", answers.get("between_raters"), {"fleiss_kappa": "Fleiss' κ"})]


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"
