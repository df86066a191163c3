"""The stages of the mining graph, one module each (module, composite and label share a name).

Grouped by kind: ``filter/`` (Prefilter, CoherenceFilter, PostFilter), ``group/`` (GroupByPivot,
ContestCandidates, RegroupByPivot), ``score/`` (EncodeTexts, ScorePairs), ``cut/``
(CalibrateThreshold, MarginScore, ThresholdFilter); ReadBitext, MakePairs and WriteDataset, one
of their kind each, sit here.
"""
