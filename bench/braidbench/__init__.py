"""braidbench: the braidsort benchmark driver.

Each workload compares braidsort with PostgreSQL's own sort in the same run,
on the same data, in a throwaway cluster; results are kept as JSON with the
machine described, summarized as markdown, and plotted.
"""
