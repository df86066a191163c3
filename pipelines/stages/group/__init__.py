"""Stages that group candidates by pivot: GroupByPivot, ContestCandidates, RegroupByPivot."""
