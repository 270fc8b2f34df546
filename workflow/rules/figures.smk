# Stage 5: figures (learning curves with the significance strip, bias of realistic evaluation,
# final distributions, pairwise effect sizes, sensitivity to the waiting time, difference to the
# reference policy). Each figure enters
# the report on its own, with the caption of its kind (figures.rst branches on {figure}), twice:
# its PNG (drawn to be read at the report's width) and its PDF (which the report shows in a viewer
# that zooms: the way to enlarge a figure inside the report).
rule figures:
    input:
        unpack(figure_inputs),
    output:
        figures=report(
            directory(FIGURES_DIR),
            patterns=[FIGURE_PATTERN],
            caption="../report/figures.rst",
            category="Figures",
            subcategory="{dataset}",
            labels=figure_labels,
        ),
    log:
        f"{STUDY_LOGS}/figures/{{dataset}}.log",
    conda:
        "../../envs/plots.yaml"
    # the metrics' figures drawn in two processes (the same files): the job that ends a study of
    # one dataset takes about half the time on two cores
    threads: 2
    resources:
        mem_mb=by_attempt(4000),
        runtime=by_attempt(30),
    params:
        settings=FIGURE_SETTINGS,
        # the policies' specs: the sensitivity figure's windows (names are only labels)
        policies=POLICY_SPECS,
        code=CODE["figures"],
        # for the captions
        metric=list(FIGURES.metrics),
        reference=FIGURES.reference,
        alpha=FIGURES.alpha,
    script:
        "../../scripts/figures.py"
