"""The stages of the mining graph, one module each (module, composite and label share a name).

A room per kind, in the graph's order: ``read/`` (ReadBitext; its readers are
``pipelines/formats/``, a floor below), ``filter/`` (Prefilter, CoherenceFilter, PostFilter),
``group/`` (GroupByPivot, ContestCandidates, RegroupByPivot), ``score/`` (EncodeTexts,
ScorePairs), ``cut/`` (CalibrateThreshold, MarginScore, ThresholdFilter), ``pair/`` (MakePairs)
and ``write/`` (WriteDataset). A kind's rules sit in its ``rules/``.
"""
