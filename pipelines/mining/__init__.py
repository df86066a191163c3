"""The mining graph: composites of stages that ``paramine mine`` and refresh both apply.

``ReadAndPrefilter`` (shards in, clean aligned pairs out), ``MineGroups``
(group by pivot, score, cut, check, regroup) and ``PairGroups`` (pairs inside
each group, then the post-filter) each declare the stages whose books they
keep; ``MineParaphrases`` is the three in a row, and a job's stage list is
theirs, in order, with a job's own between them.
"""
