"""Benchmark reports: JSON, Markdown tables and PNG charts (matplotlib, the ``bench`` extra)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ripplegraph.agent.eval.conversations import CATEGORIES

LOCOMO_COLUMNS = (
    ("multi-hop", "All@30"),
    ("multi-hop", "R@10"),
    ("temporal", "R@10"),
    ("open-domain", "R@10"),
    ("single-hop", "R@10"),
    ("overall", "R@10"),
    ("overall", "All@30"),
)


def write_json(results: dict[str, Any], path: Path) -> None:
    """Results as indented JSON (parents created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _cell(scores: dict[str, Any], category: str, metric: str) -> str:
    value = scores.get(category, {}).get(metric)
    return "–" if value is None else f"{value:.3f}"


def locomo_markdown(results: dict[str, Any]) -> str:
    """Systems × (category, metric) with latency and context size."""
    header = [
        "system",
        *[f"{cat} {metric}" for cat, metric in LOCOMO_COLUMNS],
        "p50 ms",
        "p95 ms",
        "tokens@30",
    ]
    lines = [_row(header), _row(["---"] * len(header))]
    for name, scores in results["systems"].items():
        cells = [name, *[_cell(scores, cat, metric) for cat, metric in LOCOMO_COLUMNS]]
        cells += [
            f"{scores['latency_ms']['p50']:.1f}",
            f"{scores['latency_ms']['p95']:.1f}",
            f"{scores['context_tokens']['@30']:.0f}",
        ]
        lines.append(_row(cells))
    graded = [n for n, scores in results["systems"].items() if "Judge" in scores["overall"]]
    if graded:
        buckets = ["overall", *CATEGORIES.values()]
        lines += ["", _row(["system", *[f"{b} Judge / F1" for b in buckets]])]
        lines.append(_row(["---"] * (len(buckets) + 1)))
        for name in graded:
            scores = results["systems"][name]
            lines.append(
                _row(
                    [
                        name,
                        *[
                            f"{scores[b]['Judge']:.3f} / {scores[b]['F1']:.3f}"
                            if b in scores
                            else "-"
                            for b in buckets
                        ],
                    ]
                )
            )
    lines += ["", *sets_markdown(results), *conversations_markdown(results)]
    data = results["data"]
    lines.append("")
    lines.append(
        f"{data['questions']} questions (categories {', '.join(CATEGORIES.values())}) over "
        f"{data['conversations']} conversations, {data['turns']} turns; "
        f"{data['dropped_evidence_ids']} evidence ids matched no turn and were dropped, "
        f"{data['questions_without_gold']} questions were left without gold and skipped."
    )
    exact = results.get("exact_terms")
    if exact:
        lines += [
            "",
            f"Exact terms among 400 look-alike memories: the one holding a code first for "
            f"{exact['first_for_the_code']} of {exact['codes']} codes searched alone, in the top 3 "
            f"for {exact['top_3_inside_a_question']} of {exact['codes']} questions naming one.",
        ]
    analysis = results.get("analysis") or {}
    if analysis:
        lines.append("")
        lines.append(
            f"Misses of `{analysis['system']}` on multi-hop: {analysis['missed_at_30']} of "
            f"{analysis['multi_hop_gold_turns']} gold turns not in its top 30; distance from "
            "what it retrieved over the typed edges: "
            + ", ".join(
                f"{k}: {v}" for k, v in analysis["missed_by_distance_from_retrieved"].items()
            )
            + "; found instead by: "
            + ", ".join(f"{k} {v}" for k, v in analysis["missed_but_found_by"].items())
            + "."
        )
        lines += ["", _row(["step that passed the gold turn over", "missed turns"])]
        lines.append(_row(["---", "---"]))
        lines += [_row([step, str(n)]) for step, n in analysis.get("passed_over_by", {}).items()]
        paths = list(analysis.get("missed_by_path", {}).items())[:6]
        if paths:
            lines.append("")
            lines.append(
                "Shortest typed paths from the kept evidence to the missed turns: "
                + ", ".join(f"{path} {n}" for path, n in paths)
                + " (each missed turn, with its question, is in the JSON's `analysis.misses`)."
            )
    return "\n".join(lines)


PER_CONVERSATION = (("multi-hop", "All@30"), ("single-hop", "R@10"), ("temporal", "R@10"))
"""What each conversation's table shows: where recollection must help, and must not hurt."""


def sets_markdown(results: dict[str, Any]) -> list[str]:
    """Per kind of conversation (LoCoMo's, REALTALK's), the main table's columns per system.

    Shown when the run held more than one kind: a change must serve each, not their sum.
    """
    kinds = sorted(set(results.get("sets", {}).values()))
    if len(kinds) < 2:
        return []
    lines: list[str] = []
    header = ["system", *[f"{cat} {metric}" for cat, metric in LOCOMO_COLUMNS]]
    for kind in kinds:
        conversations = sum(1 for k in results["sets"].values() if k == kind)
        lines += [f"{kind} ({conversations} conversations):", ""]
        lines += [_row(header), _row(["---"] * len(header))]
        for name, scores in results["systems"].items():
            of_kind = scores.get("sets", {}).get(kind, {})
            lines.append(_row([name, *[_cell(of_kind, c, m) for c, m in LOCOMO_COLUMNS]]))
        lines.append("")
    return lines


def conversations_markdown(results: dict[str, Any]) -> list[str]:
    """Per conversation, each system's multi-hop All@30, single-hop and temporal R@10.

    One table per measure, a column per system.  A line under them counts the conversations
    where the full graph is ahead of its first hop on multi-hop All@30 (a change counts when
    it helps on most of them).
    """
    systems = results["systems"]
    first: dict[str, Any] = next(iter(systems.values()), {})
    names = list(first.get("conversations", {}))
    if not names:
        return []
    lines: list[str] = []
    for category, metric in PER_CONVERSATION:
        lines += [_row([f"{category} {metric}", *systems]), _row(["---"] * (len(systems) + 1))]
        for conversation in names:
            cells = [conversation]
            for scores in systems.values():
                found = scores["conversations"].get(conversation, {}).get(category, {})
                cells.append(f"{found[metric]:.3f}" if metric in found else "-")
            lines.append(_row(cells))
        lines.append("")
    if {"first_hop", "ripplegraph"} <= systems.keys():

        def multi_hop(name: str, conversation: str) -> float:
            found = systems[name]["conversations"][conversation].get("multi-hop", {})
            return float(found.get("All@30", 0.0))

        ahead = sum(multi_hop("ripplegraph", c) > multi_hop("first_hop", c) for c in names)
        lines.append(
            f"ripplegraph ahead of first_hop on multi-hop All@30 in {ahead} of {len(names)} "
            "conversations."
        )
    return lines


def folds_markdown(results: dict[str, Any]) -> str:
    """Each variant per conversation against the full graph, then the leave-one-out folds."""
    systems, counts = results["systems"], results["questions"]
    names = list(counts)
    guards = [key for key in next(iter(systems.values())) if key.endswith("R@10")]
    lines = [
        _row([results["metric"], *names, "total", "helps / hurts vs full", "counts", *guards,
              "p50 ms"]),
        _row(["---"] * (len(names) + 5 + len(guards))),
    ]  # fmt: skip
    for name, scores in systems.items():
        verdict = scores.get("against_full")
        lines.append(
            _row([
                name,
                *(f"{scores['conversations'][c]:.3f}" for c in names),
                f"{scores['total']:.3f}",
                f"{verdict['helps']} / {verdict['hurts']}" if verdict else "-",
                ("yes" if verdict["counts"] else "no") if verdict else "-",
                *(f"{scores[g]:.3f}" for g in guards),
                f"{scores['latency_p50_ms']:.1f}",
            ])
        )  # fmt: skip
    lines += ["", _row(["held out", "chosen on the others", "its score there", "first_hop there"])]
    lines.append(_row(["---"] * 4))
    for fold in results["folds"]:
        held = fold["held_out"]
        lines.append(
            _row([held, fold["chosen"], f"{fold['score']:.3f}",
                  f"{systems['first_hop']['conversations'][held]:.3f}"])
        )  # fmt: skip
    lines.append("")
    estimates = {"all": results["leave_one_out"], **results.get("leave_one_out_by_set", {})}
    for kind, loo in estimates.items():
        lines.append(
            f"Leave-one-out {results['metric']}{'' if kind == 'all' else f' on {kind}'}: "
            f"{loo['total']:.3f} against "
            f"first_hop's {loo['first_hop']:.3f} ({100 * (loo['total'] - loo['first_hop']):+.1f}"
            f" points); ahead of first_hop on {loo['ahead_of_first_hop']} of "
            f"{loo['conversations']} held-out conversations"
            + (
                f"; question by question {loo['wins']} found only by the choice, "
                f"{loo['losses']} only by first_hop."
                if "wins" in loo
                else "."
            )
        )
    lines.append(
        "A variant counts against the full graph when it helps on four of every five "
        "conversations and on the total."
    )
    return "\n".join(lines)


def folds_chart(results: dict[str, Any], path: Path) -> None:
    """The metric per conversation, a group per variant."""
    series = {
        name: {**scores["conversations"], "total": scores["total"]}
        for name, scores in results["systems"].items()
    }
    bar_chart(f"LoCoMo {results['metric']} per conversation", series, path)


def ranker_markdown(results: dict[str, Any]) -> str:
    """Per kind: each system's multi-hop All@30, lead, wins and guards; then per conversation."""
    metric = results["metric"]
    settings = results.get("settings", "full")
    lines = (
        [
            f"Recall with `{settings}`: every pool, the hand-ranked run and each fold's ranker "
            "are made with the setting changed; the first hop is the shipped one.",
            "",
        ]
        if settings != "full"
        else []
    )
    for kind, group in results["kinds"].items():
        first, many = group["systems"]["first_hop"], group["conversations"]
        guards = [c for c in ("single-hop", "temporal", "open-domain") if c in first]
        lines += [
            f"**{kind}** ({many} conversation{'s' * (many != 1)})",
            "",
            _row([
                "system", metric, "lead over first_hop", "ahead of first_hop",
                "wins / losses", *(f"{g} R@10" for g in guards),
            ]),
            _row(["---"] * (5 + len(guards))),
        ]  # fmt: skip
        for name, row in group["systems"].items():
            lead = 100 * (row["total"] - row["first_hop"])
            lines.append(
                _row([
                    name,
                    f"{row['total']:.3f}",
                    "-" if name == "first_hop" else f"{lead:+.1f}",
                    "-" if name == "first_hop"
                    else f"{row['ahead_of_first_hop']} of {row['conversations']}",
                    f"{row['wins']} / {row['losses']}" if "wins" in row else "-",
                    *(f"{row[g]['R@10']:.3f}" for g in guards),
                ])
            )  # fmt: skip
        lines.append("")
    names = list(next(iter(results["conversations"].values())))
    lines += [_row([metric, *names]), _row(["---"] * (len(names) + 1))]
    for conversation, row in results["conversations"].items():
        lines.append(_row([conversation, *(f"{row[n]:.3f}" for n in names)]))
    match = results["simulation_matches_graph"]
    trained_on = (
        "every conversation of the other kinds (no model saw a sample of its kind)"
        if results.get("leave_out") == "kind"
        else "the others"
    )
    lines += [
        "",
        f"`learned (left out)` is the recall graph run on each conversation with the ranker "
        f"trained on {trained_on}; the captured pools reordered by the same rankers give the "
        f"same top {30} for {match['questions']} of {match['of']} questions. "
        f"`learned (in sample)` is the shipped ranker, trained on every conversation.",
        "",
        "Features by how far they move the shipped ranker's score: "
        + ", ".join(f"{f} {v:.2f}" for f, v in list(results["shipped"]["importance"].items())[:10]),
    ]
    if walk := results.get("walk"):
        moves = list(results["shipped"].get("walk_importance", {}).items())[:8]
        lines += [
            "",
            f"The walk's choice is learned too: in {walk['folds_learned']} of {walk['folds']} "
            f"folds a walk model trained on the other {results.get('leave_out', 'conversation')}"
            "s' walks chose what each round "
            "keeps, and the pools that fold's ranker learned from were gathered with it (a fold "
            "whose walks held nothing to learn from walks by hand; `hand_ranked` walks by hand)."
            + (
                " Features by how far they move the shipped walk model's score: "
                + ", ".join(f"{f} {v:.2f}" for f, v in moves)
                if walk["shipped_learned"]
                else " No walk model could be trained on every conversation."
            ),
        ]
    return "\n".join(lines)


def ranker_chart(results: dict[str, Any], path: Path) -> None:
    """Multi-hop All@30 per kind of conversation, a group per system."""
    series: dict[str, dict[str, float]] = {}
    for kind, group in results["kinds"].items():
        for name, row in group["systems"].items():
            series.setdefault(name, {})[kind] = row["total"]
    bar_chart(f"Left-out {results['metric']} by kind", series, path)


def prefeval_markdown(results: dict[str, Any]) -> str:
    """Systems × (form, N) Hit@5, Hit@10 in parentheses."""
    buckets = list(next(iter(results["systems"].values())))
    lines = [_row(["system", *buckets]), _row(["---"] * (len(buckets) + 1))]
    for name, scores in results["systems"].items():
        cells = [f"{scores[b]['Hit@5']:.3f} ({scores[b]['Hit@10']:.3f})" for b in buckets]
        lines.append(_row([name, *cells]))
    records = results["data"]["records"]
    lines.append("")
    lines.append(
        "Hit@5 (Hit@10); records per form: "
        + ", ".join(f"{form} {n}" for form, n in records.items())
        + f"; peak resident memory of a worker: {results.get('peak_rss_mb_per_worker', 0):.0f} MB"
    )
    return "\n".join(lines)


IMLOGIC_METRICS = ("R@5", "R@10", "R@20", "R@30", "above_distractor")


def imlogic_markdown(results: dict[str, Any]) -> str:
    """Systems × memory_l recall and ranking above the distractor; R@10 per category."""
    header = ["system", *IMLOGIC_METRICS, "p50 ms"]
    lines = [_row(header), _row(["---"] * len(header))]
    for name, scores in results["systems"].items():
        cells = [name, *[_cell(scores, "overall", metric) for metric in IMLOGIC_METRICS]]
        lines.append(_row([*cells, f"{scores['latency_ms']['p50']:.1f}"]))
    groups = sorted({b for s in results["systems"].values() for b in s if b not in _NOT_BUCKETS})
    lines += ["", _row(["R@10", *groups]), _row(["---"] * (len(groups) + 1))]
    for name, scores in results["systems"].items():
        lines.append(_row([name, *[_cell(scores, group, "R@10") for group in groups]]))
    answered = {n: s["answers"] for n, s in results["systems"].items() if "answers" in s}
    if answered:
        kinds = list(next(iter(answered.values())))
        lines += ["", _row(["system", "accuracy", *kinds]), _row(["---"] * (len(kinds) + 2))]
        for name, picks in answered.items():
            accuracy = _cell(results["systems"][name], "overall", "accuracy")
            lines.append(_row([name, accuracy, *[str(picks[k]) for k in kinds]]))
    data = results["data"]
    lines.append("")
    lines.append(
        f"{data['questions']} questions over {data['users']} users, {data['memories']} "
        "memories (every distinct memory_s and memory_l of a user, one namespace per user). "
        "R@k: memory_l in the top k; above_distractor: memory_l ranked above memory_s."
    )
    return "\n".join(lines)


_NOT_BUCKETS = frozenset({"overall", "latency_ms", "answers"})


def scale_markdown(results: dict[str, Any]) -> str:
    """One namespace's timings per size beside the floor, and the ingest split."""
    header = ["units", "recall p50 ms", "recall p95 ms", "floor p50 ms", "recall / floor",
              "write→recall p50 ms", "write p50 ms", "forget p50 ms", "RSS MB",
              "slowest node"]  # fmt: skip
    lines = [_row(header), _row(["---"] * len(header))]
    for size in results["sizes"].values():
        nodes = size["per_node_p50_ms"]
        slowest = max(nodes, key=lambda n: nodes[n]) if nodes else "-"
        lines.append(
            _row(
                [
                    str(size["units"]),
                    f"{size['recall_p50_ms']:.1f}",
                    f"{size['recall_p95_ms']:.1f}",
                    f"{size['floor_p50_ms']:.1f}",
                    f"{size['ratio_to_floor']}×",
                    f"{size['write_then_recall_p50_ms']:.1f}",
                    f"{size['write_p50_ms']:.1f}",
                    f"{size['forget_ms']['p50']:.1f}" if "forget_ms" in size else "–",
                    f"{size['rss_mb']:.0f}",
                    f"{slowest} ({nodes[slowest]:.1f})" if nodes else "-",
                ]
            )
        )
    lines += ["", *_node_table(results["sizes"].values())]
    lines += ["", *_collector_lines(results["sizes"].values())]
    ingest = results["ingest"]
    lines += [
        "",
        f"Ingest: {ingest['units']} units in {ingest['seconds']} s ({ingest['units_per_s']} "
        f"units/s): embedding {ingest['embed_s']} s ({ingest['embed_share']:.0%}), storage "
        f"{ingest['store_s']} s, linking {ingest['link_s']} s, the rest {ingest['other_s']} s. "
        f"Plain sentence-transformers `encode` of the same texts: "
        f"{ingest['reference_embed_units_per_s']} units/s.",
    ]
    browsed = [(s["units"], s["browser"]) for s in results["sizes"].values() if "browser" in s]
    if browsed:
        lines += [
            "",
            _row(
                [
                    "units",
                    "browser first page ms (fresh app)",
                    "first page p50 ms",
                    "after an add p50 ms",
                    "after a forget p50 ms",
                    "standing facts page 2 p50 ms",
                    "ask p50 ms",
                    "largest page KB",
                ]
            ),
            _row(["---"] * 8),
        ]
        for units, b in browsed:
            lines.append(
                _row(
                    [
                        str(units),
                        f"{b['first_page_cold_ms']:.1f}",
                        f"{b['first_page_ms']['p50']:.1f}",
                        f"{b['after_add_ms']['p50']:.1f}",
                        f"{b['after_forget_ms']['p50']:.1f}",
                        f"{b['standing_page_ms']['p50']:.1f}",
                        f"{b['ask_ms']['p50']:.1f}",
                        f"{b['largest_page_kb']:.0f}",
                    ]
                )
            )
        lines.append("")
    if "rss_mb_per_10k_units" in results:
        lines.append(f"Resident memory grows {results['rss_mb_per_10k_units']} MB per 10k units.")
    if "bytes_per_memory" in results:
        lines.append(
            f"That is {results['bytes_per_memory']} bytes a memory, "
            f"{results['bytes_per_memory_beyond_vector']} beyond its vector's "
            f"{results['vector_bytes']}."
        )
    lines.append(
        "Floor = embed the question and take Chroma's top 10, plus BM25's top 10, in the same "
        "namespace; write→recall = the recall right after remembering one new turn."
    )
    if "postgresql" in results:
        lines += [
            "",
            "The same run with the relational side (units, cues, edges, roots) on PostgreSQL, "
            "vectors embedded as above:",
            "",
            scale_markdown(results["postgresql"]),
        ]
    return "\n".join(lines)


def _collector_lines(sizes: Iterable[dict[str, Any]]) -> list[str]:
    """What CPython's garbage collector took during each size's timed recalls (``GcClock``)."""
    lines = []
    for size in sizes:
        collected = size.get("garbage_collection")
        if collected is None:
            continue
        lines.append(
            f"Garbage collection during the {collected['recalls']} timed recalls at "
            f"{size['units']} units: the young generations {collected['young_ms_per_recall']} ms "
            f"a recall; the oldest {collected['oldest_collections']} times, "
            f"{collected['oldest_ms_per_recall']} ms a recall spread over them; the longest "
            f"pause {collected['longest_pause_ms']} ms; {collected['tracked_objects']:,} "
            f"objects tracked. Recall mean {size['recall_mean_ms']} ms."
        )
    return lines


def _node_table(sizes: Iterable[dict[str, Any]]) -> list[str]:
    """Where a recall's time goes at each size: the first hop, the other nodes, the stepping.

    Each cell is a median over the questions (a node that ran twice in one recall counts the
    two runs together); the other nodes' cell adds their medians up.  LangGraph alone is the
    same recalls replayed (``scale.time_stepping``): the stepping with no node work.
    """
    header = ["units", "first_hop_recall ms", "first hop / floor", "the other nodes ms",
              "between nodes ms", "LangGraph alone ms", "node by node"]  # fmt: skip
    lines = [_row(header), _row(["---"] * len(header))]
    for size in sizes:
        nodes = dict(size["per_node_p50_ms"])
        first = nodes.pop("first_hop_recall", 0.0)
        floor = size["floor_p50_ms"]
        lines.append(
            _row(
                [
                    str(size["units"]),
                    f"{first:.1f}",
                    f"{first / floor:.2f}×" if floor else "–",
                    f"{sum(nodes.values()):.1f}",
                    f"{size['between_nodes_p50_ms']:.1f}"
                    if "between_nodes_p50_ms" in size
                    else "–",
                    _stepping(size.get("stepping")),
                    ", ".join(f"{node} {ms:.1f}" for node, ms in nodes.items()),
                ]
            )
        )
    return lines


def _stepping(stepping: dict[str, Any] | None) -> str:
    """The replayed recall's time and its steps (``scale.time_stepping``), or a dash."""
    if not stepping:
        return "–"
    return (
        f"{stepping['replayed_p50_ms']:.1f} ({stepping['steps_per_recall']} steps, "
        f"{stepping['ms_per_step']:.2f} a step)"
    )


def cli_markdown(results: dict[str, Any]) -> str:
    """Each verb's cold wall clock beside its goal, and the same work warm."""
    header = ["verb", "cold p50 s", "cold min s", "goal s", "met", "warm p50 ms"]
    lines = [_row(header), _row(["---"] * len(header))]
    for verb, cold in results["cold"].items():
        warm = results["warm"].get(verb)
        lines.append(
            _row(
                [
                    f"`{verb}`",
                    f"{cold['p50_s']:.2f}",
                    f"{cold['min_s']:.2f}",
                    f"{cold['goal_s']:.1f}",
                    "yes" if cold["met"] else "no",
                    f"{warm['p50_s'] * 1000:.0f}" if warm else "-",
                ]
            )
        )
    lines += [
        "",
        f"`{results['command']}`, {results['repeats']} runs of each verb: cold is a new "
        "process per run (start-up, imports, store, model); warm is the Python API's same call "
        "in a process that has made it once.",
    ]
    return "\n".join(lines)


def cli_chart(results: dict[str, Any], path: Path) -> None:
    """Cold p50 against the goal, per verb."""
    series = {
        verb: {"cold p50 s": cold["p50_s"], "goal s": cold["goal_s"]}
        for verb, cold in results["cold"].items()
    }
    bar_chart("The command line, cold", series, path, ylabel="seconds")


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise RuntimeError(
            "charts need matplotlib: pip install 'ripplegraph[bench]' (or --no-charts)"
        ) from error
    return plt


def bar_chart(
    title: str, series: dict[str, dict[str, float]], path: Path, ylabel: str = "score"
) -> None:
    """Grouped bars: one group per system, one bar per metric."""
    plt = _pyplot()
    systems = list(series)
    metrics = list(next(iter(series.values())))
    width = 0.8 / max(1, len(metrics))
    figure, axis = plt.subplots(figsize=(max(6, len(systems) * 1.1), 4))
    for index, metric in enumerate(metrics):
        axis.bar(
            [i + index * width for i in range(len(systems))],
            [series[s][metric] for s in systems],
            width,
            label=metric,
        )
    axis.set_xticks([i + width * (len(metrics) - 1) / 2 for i in range(len(systems))])
    axis.set_xticklabels(systems, rotation=30, ha="right")
    axis.set_ylabel(ylabel)
    axis.set_title(title)
    axis.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def locomo_chart(results: dict[str, Any], path: Path) -> None:
    """Multi-hop All@30, single-hop R@10 and overall R@10 per system."""
    series = {
        name: {
            "multi-hop All@30": s.get("multi-hop", {}).get("All@30", 0.0),
            "single-hop R@10": s.get("single-hop", {}).get("R@10", 0.0),
            "overall R@10": s["overall"]["R@10"],
        }
        for name, s in results["systems"].items()
    }
    bar_chart("LoCoMo dev evidence recall", series, path)


def imlogic_chart(results: dict[str, Any], path: Path) -> None:
    """memory_l R@10, R@30 and above_distractor per system."""
    series = {
        name: {metric: s["overall"][metric] for metric in ("R@10", "R@30", "above_distractor")}
        for name, s in results["systems"].items()
    }
    bar_chart("IMLogic memory_l recall", series, path)


def prefeval_chart(results: dict[str, Any], path: Path) -> None:
    """Hit@5 per system for every (form, N)."""
    series = {
        name: {bucket: v["Hit@5"] for bucket, v in s.items()}
        for name, s in results["systems"].items()
    }
    bar_chart("PrefEval dev Hit@5", series, path, ylabel="Hit@5")


def scale_chart(results: dict[str, Any], path: Path) -> None:
    """Recall, write→recall and the floor against the namespace's size."""
    plt = _pyplot()
    sizes = list(results["sizes"].values())
    units = [s["units"] for s in sizes]
    figure, axis = plt.subplots(figsize=(6, 4))
    for key, label in (
        ("recall_p50_ms", "recall p50"),
        ("recall_p95_ms", "recall p95"),
        ("write_then_recall_p50_ms", "write→recall p50"),
        ("floor_p50_ms", "floor p50"),
    ):
        axis.plot(units, [s[key] for s in sizes], marker="o", label=label)
    axis.set_xscale("log")
    axis.set_xlabel("units in one namespace")
    axis.set_ylabel("ms")
    axis.set_title("Recall latency as one memory grows")
    axis.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
